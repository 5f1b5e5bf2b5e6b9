"""Hypothesis profiles (``dev``, ``ci``, ``nightly``) and the per-cost example budgets derived from them.

``ci`` is the default: the whole suite in under 10 minutes on 2 cores against the reference, with the
implementation's ``fast_cache_config()`` (IMPL-2; the reference's eager graph compiler) for most properties.
``nightly`` draws many more examples, uses the
implementation's true default config and larger cases. ``dev`` is the smallest, for editing.
Select one with ``--hypothesis-profile NAME`` or ``$HYPOTHESIS_PROFILE``. ``$TORCHAIR_HYPOTHESIS_DB`` names a
folder for hypothesis's example database in every profile (the nightly pipeline keeps it between nights, so a
failure found at night is replayed first the next night); without it only ``dev`` keeps one (``.hypothesis/``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

__all__ = ["PROFILES", "DEFAULT", "Profile", "register", "activate", "active", "examples", "examples_per_case"]

DEFAULT = "ci"


@dataclass(frozen=True)
class Profile:
    """What a profile means for the suite beyond hypothesis's own settings."""

    name: str
    # Examples per property by cost: "cheap" (no compile), "compile" (in-process compiles), "process" (fresh
    # subprocesses per example), "inductor" (the implementation's default graph compiler).
    budgets: dict[str, int]
    # Whether compile-heavy properties use the implementation's true default config instead of its fast_cache_config.
    true_default_config: bool
    # Upper bound on layer widths and depths of drawn modules and on input dims.
    max_width: int
    max_depth: int
    max_batch: int


PROFILES: dict[str, Profile] = {
    "dev": Profile("dev", {"cheap": 10, "compile": 3, "process": 1, "inductor": 1}, False, 8, 3, 4),
    "ci": Profile("ci", {"cheap": 50, "compile": 8, "process": 3, "inductor": 1}, False, 16, 4, 6),
    "nightly": Profile("nightly", {"cheap": 500, "compile": 60, "process": 15, "inductor": 5}, True, 256, 8, 64),
}

_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
_active: str | None = None


def register() -> None:
    """Register the three profiles with hypothesis (idempotent)."""
    folder = os.environ.get("TORCHAIR_HYPOTHESIS_DB")
    shared = DirectoryBasedExampleDatabase(folder) if folder else None
    for name, base in (("dev", 10), ("ci", 50), ("nightly", 500)):
        settings.register_profile(
            name,
            max_examples=base,
            deadline=None,
            suppress_health_check=_SUPPRESS,
            database=shared or (settings.default.database if name == "dev" else None),
            print_blob=True,
            # Every example compiles: shrinking a failure can take many minutes, so only nightly shrinks.
            phases=list(Phase) if name == "nightly" else [p for p in Phase if p is not Phase.shrink],
        )


def activate(name: str | None) -> Profile:
    """Load profile ``name`` (else ``$HYPOTHESIS_PROFILE``, else ``ci``) into hypothesis and the suite."""
    global _active
    name = name or os.environ.get("HYPOTHESIS_PROFILE") or DEFAULT
    if name not in PROFILES:
        raise ValueError(f"unknown hypothesis profile {name!r}; the suite defines {', '.join(PROFILES)}")
    register()
    settings.load_profile(name)
    _active = name
    return PROFILES[name]


def active() -> Profile:
    """The profile in force (``ci`` until one is activated)."""
    return PROFILES[_active or DEFAULT]


def examples(cost: str) -> int:
    """The number of examples for a property of this cost under the active profile."""
    return active().budgets[cost]


def examples_per_case(cost: str, cases: int) -> int:
    """Examples for each case of a property parametrized over ``cases`` finite cases: the cost's budget shared
    between them, at least one each, so every case runs in every profile and the total stays near the budget."""
    return max(1, examples(cost) // cases)
