"""The reference's version (IMPL-2), in the bottom layer so that any module can read it without importing the
package's face (`torchair_ref/__init__.py`, the top layer; tests/test_layers.py)."""

__version__ = "0.1.0"
