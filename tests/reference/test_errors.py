"""Every exception the reference raises on purpose derives from `TorchairRefError` and keeps its builtin base, so a
caller's `except ValueError` (or RuntimeError...) still catches it; a stale cache file is not a broken one."""
from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil

import pytest

import torchair_ref
from torchair_ref.errors import BrokenCacheError, CacheFileError, StaleCacheError, TorchairRefError

#: class name -> the builtin base it had before `TorchairRefError` (callers' except clauses rely on it)
BUILTIN_BASES = {
    "RngOperatorError": RuntimeError,
    "UnsupportedOperatorError": NotImplementedError,
    "NotAnAirFile": ValueError,
    "RunRefused": ValueError,
    "UnusableNameError": ValueError,
    "RecordError": ValueError,
    "InputMismatchError": Exception,
    "UncacheableError": Exception,
    "CacheFileError": ValueError,
    "BrokenCacheError": ValueError,
    "StaleCacheError": ValueError,
    "UnknownGuard": ValueError,
    "UnreferenceableError": ValueError,
}
@functools.lru_cache(maxsize=1)
def _exception_classes() -> dict[str, type]:
    found = {}
    for info in pkgutil.walk_packages(torchair_ref.__path__, "torchair_ref."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == info.name
                    and not name.startswith("_")):
                found[name] = obj
    return found


def test_every_exception_of_the_reference_derives_from_the_base() -> None:
    found = _exception_classes()
    assert set(BUILTIN_BASES) <= set(found), sorted(set(BUILTIN_BASES) - set(found))
    outside = sorted(n for n, cls in found.items() if not issubclass(cls, TorchairRefError))
    assert not outside, f"exceptions not deriving from TorchairRefError: {outside}"


@pytest.mark.parametrize("name", sorted(BUILTIN_BASES))
def test_exception_keeps_its_builtin_base(name: str) -> None:
    assert issubclass(_exception_classes()[name], BUILTIN_BASES[name])


def test_stale_and_broken_are_siblings() -> None:
    """CC-17: both are cache files that are not loaded; a stale one is valid, not broken."""
    assert not issubclass(StaleCacheError, BrokenCacheError) and not issubclass(BrokenCacheError, StaleCacheError)
    assert issubclass(StaleCacheError, CacheFileError) and issubclass(BrokenCacheError, CacheFileError)
