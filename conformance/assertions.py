"""Assertion helpers; every message carries the values that broke it."""

from __future__ import annotations

import logging
import os
import stat
from typing import Any, Iterable, List, Mapping, Optional, Sequence

import torch

from conformance.harness import Captured, cache_files

__all__ = [
    "assert_cache_file_at",
    "assert_no_cache_file",
    "assert_mode_0600",
    "assert_logged",
    "assert_warned",
    "exception_chain",
    "assert_chain_contains",
    "assert_outputs_close",
    "assert_worker_ok",
    "tolerance",
]


def assert_cache_file_at(root: os.PathLike | str, expected: str, *, story: str = "") -> None:
    """CC-8: the only ``compiled_module`` under ``root`` is ``expected``."""
    found = cache_files(root)
    assert found == [expected], (
        f"expected exactly one cache file at {expected!r} under root {os.fspath(root)!r}, found {found!r}"
        + (f" ({story})" if story else "")
    )


def assert_no_cache_file(root: os.PathLike | str, *, why: str) -> None:
    found = cache_files(root) if os.path.exists(root) else []
    assert not found, f"expected no compiled_module under {os.fspath(root)!r} ({why}), found {found!r}"


def assert_mode_0600(path: str) -> None:
    """CC-11 / RC-3: ``path`` is a regular file (not a symlink) with permission bits exactly 0600."""
    st = os.lstat(path)
    assert stat.S_ISREG(st.st_mode), f"expected a regular file at {path!r}, found mode {oct(st.st_mode)}"
    assert stat.S_IMODE(st.st_mode) == 0o600, f"expected mode 0o600 for {path!r}, found {oct(stat.S_IMODE(st.st_mode))}"


def assert_logged(captured: Captured, level: int, substrings: Sequence[str], *, what: str) -> str:
    """A record at ``level`` (exactly) of the implementation's logger contains every substring; returns it."""
    messages = captured.at(level)
    for message in messages:
        if all(s in message for s in substrings):
            return message
    raise AssertionError(
        f"expected a {logging.getLevelName(level)} log record containing {list(substrings)!r} ({what}); "
        f"records at that level: {messages!r}; all records: {[(r.levelname, r.getMessage()) for r in captured.records]!r}"
    )


def assert_warned(captured: Captured, category: type, substrings: Sequence[str], *, what: str) -> str:
    """A warning of ``category`` whose text contains every substring; returns its text."""
    texts = captured.warning_texts(category)
    for text in texts:
        if all(s in text for s in substrings):
            return text
    seen = [f"{w.category.__name__}: {w.message}" for w in captured.warnings]
    raise AssertionError(f"expected a {category.__name__} containing {list(substrings)!r} ({what}); warnings seen: {seen!r}")


def exception_chain(exc: BaseException) -> List[BaseException]:
    """``exc`` then its inner exception / cause / context, each once."""
    chain: List[BaseException] = []
    cur: Optional[BaseException] = exc
    while cur is not None and all(cur is not c for c in chain):
        chain.append(cur)
        cur = getattr(cur, "inner_exception", None) or cur.__cause__ or cur.__context__
    return chain


def assert_chain_contains(exc: BaseException, text: str, *, what: str) -> None:
    chain = exception_chain(exc)
    assert any(text in str(e) for e in chain), (
        f"expected {text!r} in the message of {type(exc).__name__} or its inner exceptions ({what}); "
        f"chain: {[(type(e).__name__, str(e)[:300]) for e in chain]!r}"
    )


def tolerance(dtype: torch.dtype) -> Mapping[str, float]:
    """Tolerances for comparing a compiled result with eager: tight for float64, loose for 16-bit floats."""
    return {
        torch.float64: {"rtol": 1e-7, "atol": 1e-7},
        torch.float32: {"rtol": 1e-4, "atol": 1e-5},
        torch.bfloat16: {"rtol": 2e-2, "atol": 2e-2},
        torch.float16: {"rtol": 1e-2, "atol": 1e-2},
    }.get(dtype, {"rtol": 1e-4, "atol": 1e-5})


def _leaves(value: Any) -> List[Any]:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def assert_outputs_close(got: Any, expected: Any, *, what: str) -> None:
    """Same structure; tensors equal within their dtype's tolerance; other leaves equal."""
    g, e = _leaves(got), _leaves(expected)
    assert len(g) == len(e), f"{what}: expected {len(e)} output leaves, got {len(g)}: {got!r}"
    for i, (a, b) in enumerate(zip(g, e)):
        if isinstance(b, torch.Tensor):
            assert isinstance(a, torch.Tensor), f"{what}: leaf {i}: expected a tensor, got {a!r}"
            assert a.shape == b.shape and a.dtype == b.dtype, (
                f"{what}: leaf {i}: expected {tuple(b.shape)} {b.dtype}, got {tuple(a.shape)} {a.dtype}")
            torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), **tolerance(b.dtype),
                                       msg=lambda m: f"{what}: leaf {i}: {m}")
        else:
            assert a == b, f"{what}: leaf {i}: expected {b!r}, got {a!r}"


def assert_worker_ok(result: Mapping[str, Any], *, what: str) -> None:
    """A worker finished its calls without an exception."""
    err = result.get("error")
    assert err is None, (
        f"{what}: the worker raised {err['type']}: {err['message'][:2000]}\n"
        f"chain: {[(c['type'], c['message'][:300]) for c in err['chain']]}\n{err['traceback']}\n"
        f"logs: {result.get('logs')}"
    )


def messages_at(result: Mapping[str, Any], level: int) -> Iterable[str]:
    return [m for lvl, m in result.get("logs", []) if lvl == level]
