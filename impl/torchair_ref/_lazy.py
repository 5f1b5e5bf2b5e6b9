"""Public names resolved on first use (PEP 562), so that importing a package imports nothing heavy.

Used by the package surfaces: `import torchair_ref.config` or `torchair_ref.export.inspect` then stays free of
torch, and a warm start pays only for what it calls.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def surface(
    package: str, names: dict[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: `names` maps a public name to the module defining it."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(names[name])
        value = module if module.__name__ == f"{package}.{name}" else getattr(module, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
