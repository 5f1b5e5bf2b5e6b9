"""CompilerConfig: option groups, strict validation, value equality and the options string (SPEC CF-1..CF-3).

Every option is declared once in ``_OPTIONS`` (dotted path, default, allowed values, scope); the groups
(``config.debug``, ``config.export.experimental``, ...) are derived from the paths. All groups of one config write
into a single flat table keyed by the dotted path, which is what equality, ``repr`` and ``as_dict`` read.

Scopes (CF-3): ``global`` options are session-level (they would be set once on the GE session upstream),
``local`` options are graph-level (they apply to the graph being compiled). Whole option groups that do not change
compilation (``_NON_COMPILE_GROUPS``: the ``export`` group) are absent from ``as_dict`` and from the options string.
The rule is by group, never by name: an option whose name merely contains "export" (GE's ``ge.exportCompileStat``)
changes compilation and belongs in it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Literal

__all__ = ["CompilerConfig", "changes_compilation", "options_string"]

_BOOL = (False, True)


@dataclass(frozen=True)
class _Option:
    path: str
    default: object
    allowed: tuple[object, ...]
    scope: Literal["local", "global"]


_OPTIONS: dict[str, _Option] = {
    o.path: o
    for o in (
        _Option("mode", "max-autotune", ("max-autotune", "reduce-overhead"), "local"),
        _Option("debug.run_eagerly", False, _BOOL, "local"),
        _Option("ge_config.enable_single_stream", False, _BOOL, "global"),
        _Option("experimental_config.frozen_parameter", False, _BOOL, "global"),
        _Option("export.experimental.auto_atc_config_generated", False, _BOOL, "local"),
        _Option("export.experimental.enable_record_nn_module_stack", False, _BOOL, "local"),
    )
}

# CF-3: option groups that do not change compilation, so stay out of as_dict and the options string.
_NON_COMPILE_GROUPS = ("export",)


def changes_compilation(path: str) -> bool:
    """CF-3: False for an option in one of ``_NON_COMPILE_GROUPS`` (matched by whole group, not by substring)."""
    groups = path.split(".")[:-1]
    return not any(groups[: len(g.split("."))] == g.split(".") for g in _NON_COMPILE_GROUPS)


def _child_groups(prefix: str) -> list[str]:
    """Names of the groups directly under ``prefix`` ("" or "a.b."), in declaration order."""
    names: dict[str, None] = {}
    for path in _OPTIONS:
        if path.startswith(prefix):
            rest = path[len(prefix):].split(".")
            if len(rest) > 1:
                names[rest[0]] = None
    return list(names)


def _check(option: _Option, value: object) -> object:
    """CF-1: return ``value`` if it is one of the option's allowed values, else raise ``ValueError``."""
    # Matching on the exact type keeps bools strict: 1 == True and 0 == False must not pass.
    if any(type(value) is type(a) and value == a for a in option.allowed):
        return value
    allowed = ", ".join(repr(a) for a in option.allowed)
    raise ValueError(f"invalid value {value!r} for option {option.path!r}; allowed values: {allowed}")


class _Group:
    """CF-1: one level of option paths (the root config or a group such as ``debug``)."""

    # set through __dict__ in __init__ (this class's __setattr__ takes options only); declared for the type checker
    _prefix: str
    _values: dict[str, object]
    _groups: dict[str, _Group]

    def __init__(self, prefix: str, values: dict[str, object]) -> None:
        self.__dict__["_prefix"] = prefix
        self.__dict__["_values"] = values
        self.__dict__["_groups"] = {name: _Group(f"{prefix}{name}.", values) for name in _child_groups(prefix)}

    def _unknown(self, name: str) -> AttributeError:
        known = ", ".join(p for p in _OPTIONS if p.startswith(self._prefix))
        where = f" under {self._prefix[:-1]!r}" if self._prefix else ""
        return AttributeError(f"unknown option {self._prefix + name!r}; known options{where}: {known}")

    def __getattr__(self, name: str) -> object:
        # Private names are looked up by copy/pickle on half-built instances: never treat them as options.
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._groups:
            return self._groups[name]
        if self._prefix + name in _OPTIONS:
            return self._values[self._prefix + name]
        raise self._unknown(name)

    def __setattr__(self, name: str, value: object) -> None:
        path = self._prefix + name
        if name in self._groups:
            raise AttributeError(f"option group {path!r} cannot be reassigned; set its options ({path}.<option>)")
        option = _OPTIONS.get(path)
        if option is None:
            raise self._unknown(name)
        self._values[path] = _check(option, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"options cannot be deleted: {self._prefix + name!r}")

    def __dir__(self) -> list[str]:
        leaves = [p[len(self._prefix):] for p in _OPTIONS if p.startswith(self._prefix)]
        return [*super().__dir__(), *self._groups, *(leaf for leaf in leaves if "." not in leaf)]

    def __repr__(self) -> str:
        return f"<option group {self._prefix[:-1]!r} of a CompilerConfig>"


class CompilerConfig(_Group):
    """CF-1: the compiler options, reachable as ``config.mode``, ``config.debug.run_eagerly``, ..."""

    __hash__ = None  # type: ignore[assignment]  # mutable and compared by value (CF-2)

    def __init__(self) -> None:
        super().__init__("", {path: o.default for path, o in _OPTIONS.items()})

    def __eq__(self, other: object) -> bool:
        """CF-2: equal iff every option holds an equal value."""
        if not isinstance(other, CompilerConfig):
            return NotImplemented
        return self._values == other._values

    def __copy__(self) -> CompilerConfig:
        # All groups share one value table, so the default shallow copy would alias it: copy the table.
        return copy.deepcopy(self)

    def __repr__(self) -> str:
        changed = ", ".join(f"{p}={v!r}" for p, v in self._values.items() if v != _OPTIONS[p].default)
        return f"CompilerConfig({changed})"

    def as_dict(self) -> tuple[dict[str, str], dict[str, str]]:
        """CF-3: ``(local_options, global_options)``: dotted path -> ``str(value)``, compile-relevant options only."""
        local: dict[str, str] = {}
        global_: dict[str, str] = {}
        for path, option in _OPTIONS.items():
            if changes_compilation(path):
                (local if option.scope == "local" else global_)[path] = str(self._values[path])
        return local, global_


def options_string(config: CompilerConfig) -> str:
    """CF-3: ``",".join(f"{k}={v}")`` over the global options updated with the local ones.

    Key order: global options in declaration order, then local options in declaration order (the two sets are
    disjoint, so this is the insertion order that ``dict.update`` produces).
    """
    local, merged = config.as_dict()
    merged.update(local)
    return ",".join(f"{k}={v}" for k, v in merged.items())
