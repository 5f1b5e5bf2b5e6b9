"""The reference's cache_compile in one process, beyond what the conformance suite asks of any implementation: its
own argument type checks, its RNG detection (seeded ops that draw nothing, Inductor's decompositions, eval dropout),
and the decompositions it writes into the record (CC-19). Eager graph compiler unless marked inductor."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

import torchair_ref
from torchair_ref.inference import cache_compile


def eager_config() -> torchair_ref.CompilerConfig:
    config = torchair_ref.CompilerConfig()
    config.debug.run_eagerly = True
    return config


class Net(torch.nn.Module):
    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))

    def noisy(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x) + torch.randn_like(x)


# -- argument types: the reference's own checks (CC-1) -------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "names"),
    [
        ({"dynamic": "yes"}, TypeError, "dynamic"),
        ({"ge_cache": 1}, TypeError, "ge_cache"),
        ({"cache_dir": 3}, TypeError, "cache_dir"),
        ({"tp_rank": -1}, ValueError, "tp_rank"),
        ({"pp_rank": True}, ValueError, "pp_rank"),
        ({"global_rank": 1.5}, ValueError, "global_rank"),
        ({"config": {"mode": "max-autotune"}}, TypeError, "config"),
        ({"custom_decompositions": [1]}, TypeError, "custom_decompositions"),
    ],
)
def test_bad_arguments_name_themselves(tmp_path: Path, kwargs: dict, error: type, names: str) -> None:
    """CC-1: wrong types get a specific exception naming the argument; nothing is created."""
    with pytest.raises(error, match=names):
        cache_compile(Net().forward, **kwargs)
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())


def test_extra_keywords_are_ignored_with_a_warning_naming_each(tmp_path: Path) -> None:
    """CC-1: extra keyword arguments (vLLM-Ascend passes `fullgraph=`) never raise; the reference warns, on the
    caller's line and on its logger, naming each one, and caches as without them."""
    import logging
    import warnings

    net = Net()
    plain = cache_compile(net.forward, config=eager_config(), cache_dir=str(tmp_path / "a"))
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    torchair_ref.logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            extra = cache_compile(net.forward, config=eager_config(), cache_dir=str(tmp_path / "b"), fullgraph=True,
                                  zzz_option=[1] * 50)
    finally:
        torchair_ref.logger.removeHandler(handler)
    texts = [str(w.message) for w in seen]
    assert len(texts) == 2, texts
    assert texts[0].startswith("cache_compile() ignores the keyword argument fullgraph=True: "), texts
    # the value is shown shortened
    assert texts[1].startswith("cache_compile() ignores the keyword argument zzz_option=[1, 1, "), texts
    assert "...:" in texts[1] and "1, " * 30 not in texts[1], texts
    assert {w.filename for w in seen} == {__file__}, [(w.filename, w.lineno) for w in seen]
    assert [r.getMessage() for r in records if r.levelno == logging.WARNING] == texts
    x = torch.randn(2, 4)
    torch.testing.assert_close(extra(x), plain(x))
    assert os.path.relpath(extra.cache_file, tmp_path / "b") == os.path.relpath(plain.cache_file, tmp_path / "a")


# -- RNG: CC-13 -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dropout_p", [0.0, 0.25])
def test_attention_draws_random_only_with_dropout(dropout_p: float) -> None:
    """CC-13: attention kernels are tagged as seeded but draw only when dropout_p > 0."""
    from torch._dynamo.exc import BackendCompilerFailed

    class Attention(torch.nn.Module):
        def forward(self, q):
            return torch.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=dropout_p, is_causal=True)

    cached = cache_compile(Attention().forward, config=eager_config())
    q = torch.randn(1, 2, 8, 4)
    if dropout_p:
        with pytest.raises(BackendCompilerFailed, match="depend on RNG"):
            cached(q)
    else:
        expected = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        torch.testing.assert_close(cached(q), expected)
        assert os.path.exists(cached.cache_file)


@pytest.mark.inductor
def test_rng_rejected_under_inductor() -> None:
    """CC-13: the default (Inductor) compiler rejects RNG too, after Inductor's own decompositions."""
    from torch._dynamo.exc import BackendCompilerFailed

    cached = cache_compile(Net().noisy)
    with pytest.raises(BackendCompilerFailed, match="depend on RNG"):
        cached(torch.randn(2, 4))
    assert not os.path.exists(cached.cache_file)


def test_eval_dropout_is_not_rng() -> None:
    """CC-13: dropout in eval form draws nothing and is accepted."""

    class Drop(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.drop = torch.nn.Dropout(0.5)

        def forward(self, x):
            return self.drop(x) + 1

    model = Drop().eval()
    cached = cache_compile(model.forward, config=eager_config())
    x = torch.randn(3)
    torch.testing.assert_close(cached(x), x + 1)
    assert os.path.exists(cached.cache_file)


# -- decompositions: CC-19 --------------------------------------------------------------------------------------


def test_custom_decompositions_are_applied() -> None:
    """CC-19: a decomposition passed by the caller replaces the operator in the compiled graph."""
    calls = []

    def relu_as_clamp(x):
        calls.append(1)
        return torch.clamp(x, min=0)

    cached = cache_compile(
        Net().forward, config=eager_config(), custom_decompositions={torch.ops.aten.relu.default: relu_as_clamp}
    )
    cached(torch.randn(2, 4))
    assert calls, "the custom decomposition was never called"
    from torchair_ref.inference import artifact

    code = artifact.read(cached.cache_file)["graph"]["code"]
    assert "aten.clamp" in code and "aten.relu" not in code, code


# -- a refusal the user can act on (issue 29 item 6) ------------------------------------------------------------


class Broken(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.add_(1)  # a view of an input the graph mutates: a warm start could not rebuild it (CC-18)
        return x.view(-1)


def test_not_cached_and_recompile_warnings_point_at_the_users_call_and_are_logged(tmp_path: Path) -> None:
    """CC-17: the "is not cached" warning (an output a warm start cannot rebuild) and the recompile one (raised under
    Dynamo) name the
    line that called the cached method, and each is on the implementation's logger too."""
    import logging
    import warnings

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    torchair_ref.logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            broken = cache_compile(Broken().forward, config=eager_config(), cache_dir=str(tmp_path / "a"))
            broken(torch.randn(2, 3)); call_line = _line()  # noqa: E702 - the call and its line number together
            net = Net()
            static = cache_compile(net.forward, config=eager_config(), cache_dir=str(tmp_path / "b"), dynamic=False)
            static(torch.randn(2, 4))
            static(torch.randn(3, 4)); recompile_line = _line()  # noqa: E702
    finally:
        torchair_ref.logger.removeHandler(handler)
    not_cached = [w for w in seen if "is not cached" in str(w.message)]
    recompiled = [w for w in seen if "Skip cache as" in str(w.message)]
    assert [(w.filename, w.lineno) for w in not_cached] == [(__file__, call_line)], not_cached
    assert [(w.filename, w.lineno) for w in recompiled] == [(__file__, recompile_line)], recompiled
    logged = [r.getMessage() for r in records if r.levelno == logging.WARNING]
    assert str(not_cached[0].message) in logged and str(recompiled[0].message) in logged, logged


def _line() -> int:
    import sys

    return sys._getframe(1).f_lineno
