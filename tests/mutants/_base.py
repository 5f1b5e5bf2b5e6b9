"""What every mutant shares: the reference's surface (IMPL-1), of which a mutant changes one part.

A mutant is one module, ``tests/mutants/<name>.py``, run as ``--impl tests.mutants.<name>``. It sets ``BREAKS``, the
clauses it breaks (``tests/suite/test_conformance_mutants.py`` reads it without importing the module, since a mutant may
change the reference in the process that imports it), sets ``__getattr__ = reference_for(globals())`` and defines
only what it changes: every other name of the surface is then the reference's (PEP 562). A module-level
``cache_compile`` or ``readable_cache`` takes the reference's place in ``inference``.
"""

import types
from collections.abc import Callable
from typing import Any

import torchair_ref

_SURFACE = ("CompilerConfig", "get_npu_backend", "dynamo_export", "logger", "__conformance__")
_INFERENCE = ("cache_compile", "readable_cache")


def reference_for(own: dict[str, Any]) -> Callable[[str], Any]:
    """IMPL-1: the module ``__getattr__`` of the mutant whose globals are ``own``: the reference's surface for what
    the mutant does not define, ``inference`` built from the mutant's own ``cache_compile``/``readable_cache``."""

    def __getattr__(name: str) -> Any:
        if name == "inference":
            # Built once, on first use (after the module has run), so the suite always sees the same namespace.
            own["inference"] = types.SimpleNamespace(
                **{attr: own.get(attr, getattr(torchair_ref.inference, attr)) for attr in _INFERENCE})
            return own["inference"]
        if name in _SURFACE:
            return getattr(torchair_ref, name)
        raise AttributeError(f"module {own['__name__']!r} has no attribute {name!r}")

    return __getattr__
