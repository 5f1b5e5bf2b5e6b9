"""cache_compile in one process: validation (CC-1..CC-6), first call (CC-7, CC-8, CC-20), recompile (CC-12),
RNG (CC-13), inference only (CC-16), inputs (CC-18), decompositions (CC-19). Eager graph compiler throughout."""
from __future__ import annotations

import functools
import logging
import os
import stat
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

    def dropped(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.dropout(self.fc(x), p=0.5, training=True)

    def branchy(self, x: torch.Tensor, flag: bool) -> torch.Tensor:
        return self.fc(x) * 2 if flag else self.fc(x)

    @staticmethod
    def static(x: torch.Tensor) -> torch.Tensor:
        return x


# -- validation: CC-1..CC-6 -----------------------------------------------------------------------------------


def test_signature_is_keyword_only() -> None:
    """CC-1: everything after func is keyword-only."""
    with pytest.raises(TypeError):
        cache_compile(Net().forward, eager_config())  # type: ignore[misc]


@pytest.mark.parametrize(
    "func",
    [lambda x: x, functools.partial(Net.forward, Net()), Net.static, len, Net.forward],
    ids=["lambda", "partial", "staticmethod", "builtin", "unbound"],
)
def test_only_methods_are_cached(func) -> None:
    """CC-2: anything but a bound method is rejected with the documented message."""
    with pytest.raises(ValueError, match="^Only method can be cached now, got "):
        cache_compile(func)


def test_only_module_methods_are_cached() -> None:
    """CC-2: a bound method of something that is not an nn.Module is rejected."""

    class Plain:
        def run(self, x):
            return x

    with pytest.raises(ValueError, match="^Only torch.nn.Module method can be cached now, got "):
        cache_compile(Plain().run)


def test_backend_config_mismatch_is_rejected() -> None:
    """CC-4, CF-2: a backend built from a config with other values than `config` is rejected."""
    other = eager_config()
    other.mode = "reduce-overhead"
    backend = torchair_ref.get_npu_backend(compiler_config=other)
    with pytest.raises(ValueError) as caught:
        cache_compile(Net().forward, config=eager_config(), backend=backend)
    assert str(caught.value) == "config in current backend is different from the config during cache generation."


def test_backend_with_equal_config_is_accepted_and_gives_the_same_path(tmp_path: Path) -> None:
    """CC-4, CF-2: equal-by-value configs pass; backend alone uses its config, so the path is the same."""
    net = Net()
    x = torch.randn(2, 4)
    by_config = cache_compile(net.forward, config=eager_config(), cache_dir=str(tmp_path / "a"))
    by_backend = cache_compile(
        net.forward, backend=torchair_ref.get_npu_backend(compiler_config=eager_config()), cache_dir=str(tmp_path / "a")
    )
    both = cache_compile(
        net.forward,
        config=eager_config(),
        backend=torchair_ref.get_npu_backend(compiler_config=eager_config()),
        cache_dir=str(tmp_path / "a"),
    )
    by_config(x)
    by_backend(x)
    both(x)
    assert by_config.cache_file == by_backend.cache_file == both.cache_file, (by_config, by_backend, both)


def test_check_order_config_before_func() -> None:
    """CC-4 before CC-2: a mismatched backend is reported even for a function that is not a method."""
    other = eager_config()
    other.mode = "reduce-overhead"
    with pytest.raises(ValueError, match="config in current backend"):
        cache_compile(lambda x: x, config=eager_config(), backend=torchair_ref.get_npu_backend(compiler_config=other))


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a folder to another user")
def test_cache_dir_owned_by_someone_else(tmp_path: Path) -> None:
    """CC-3: an existing cache_dir owned by another user is rejected, chained from a PermissionError."""
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    os.chown(foreign, 12345, 12345)
    with pytest.raises(ValueError, match="must be owned by the current user") as caught:
        cache_compile(Net().forward, cache_dir=str(foreign))
    assert isinstance(caught.value.__cause__, PermissionError), caught.value.__cause__


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
        ({"fullgraph": False}, TypeError, "fullgraph"),
    ],
)
def test_bad_arguments_name_themselves(tmp_path: Path, kwargs: dict, error: type, names: str) -> None:
    """CC-1: wrong types get a specific exception naming the argument; nothing is created."""
    with pytest.raises(error, match=names):
        cache_compile(Net().forward, **kwargs)
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())


def test_nothing_happens_until_the_first_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CC-6, CC-7: no file, no path resolution at cache_compile time; cwd and env are read at the first call."""
    cached = cache_compile(Net().forward, config=eager_config())
    assert cached.cache_file is None and not (tmp_path / ".torchair_cache").exists()
    monkeypatch.setenv("TORCHAIR_CACHE_HOME", str(tmp_path / "home"))
    later = tmp_path / "later"
    later.mkdir()
    monkeypatch.chdir(later)
    cached(torch.randn(2, 4))
    assert cached.cache_file.startswith(str(tmp_path / "home") + os.sep), cached.cache_file
    assert os.path.exists(cached.cache_file)


def test_ge_cache_with_reduce_overhead_warns(caplog: pytest.LogCaptureFixture) -> None:
    """CC-5, CC-9: ge_cache in reduce-overhead logs a warning and adds no gecache tag."""
    config = torchair_ref.CompilerConfig()
    config.mode = "reduce-overhead"
    with caplog.at_level(logging.WARNING, logger="torchair_ref"):
        cached = cache_compile(Net().forward, config=config, ge_cache=True)
    assert any("ge_cache" in r.getMessage() for r in caplog.records), caplog.text
    cached(torch.randn(2, 4))
    model_dir = Path(cached.cache_file).parent.parent.name
    assert model_dir.startswith("Net_dynamic_aclgraphcache_") and "gecache" not in model_dir, model_dir


# -- first call: CC-7, CC-8, CC-11, CC-20 -----------------------------------------------------------------------


def test_first_call_saves_0600_and_logs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """CC-8, CC-11, CC-20: the file lands at the formula's path, mode 0600, and the save is logged."""
    cached = cache_compile(Net().forward, config=eager_config(), tp_rank=1, pp_rank=0)
    with caplog.at_level(logging.INFO, logger="torchair_ref"):
        cached(torch.randn(2, 4))
    path = Path(cached.cache_file)
    assert path.relative_to(tmp_path / ".torchair_cache").parts[1:] == ("tp_rank1_pp_rank0", "forward",
                                                                        "compiled_module"), path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert f"saved to {path}" in caplog.text, caplog.text


def test_parameter_values_do_not_change_the_path() -> None:
    """CC-10: two modules of one structure with other weights share a path."""
    a, b = Net(), Net()
    with torch.no_grad():
        b.fc.weight.add_(1)
    ca, cb = cache_compile(a.forward, config=eager_config()), cache_compile(b.forward, config=eager_config())
    ca(torch.randn(2, 4))
    cb(torch.randn(2, 4))
    assert ca.cache_file == cb.cache_file


def test_structure_and_options_change_the_path() -> None:
    """CC-10: another module structure or another compile option changes the md5 level."""
    base = cache_compile(Net(4).forward, config=eager_config())
    wider = cache_compile(Net(5).forward, config=eager_config())
    other_options = eager_config()
    other_options.ge_config.enable_single_stream = True
    optioned = cache_compile(Net(4).forward, config=other_options)
    export_flag = eager_config()
    export_flag.export.experimental.enable_record_nn_module_stack = True
    exported = cache_compile(Net(4).forward, config=export_flag)
    base(torch.randn(2, 4))
    wider(torch.randn(2, 5))
    optioned(torch.randn(2, 4))
    exported(torch.randn(2, 4))
    dirs = [Path(c.cache_file).parents[1].name for c in (base, wider, optioned, exported)]
    assert len({dirs[0], dirs[1], dirs[2]}) == 3 and dirs[3] == dirs[0], dirs


# -- recompile: CC-12 -------------------------------------------------------------------------------------------


def test_recompile_removes_func_dir_only(tmp_path: Path) -> None:
    """CC-12: a second trace warns, removes <func>/ (not its siblings), and results stay correct."""
    net = Net()
    first = cache_compile(net.forward, config=eager_config(), dynamic=False)
    sibling = cache_compile(net.branchy, config=eager_config(), dynamic=False)
    x = torch.randn(2, 4)
    first(x)
    sibling(x, True)
    func_dir = Path(first.cache_file).parent
    assert func_dir.exists() and Path(sibling.cache_file).exists()
    y = torch.randn(3, 4)
    with pytest.warns(UserWarning, match="Skip cache as .*recompiled"):
        out = first(y)
    torch.testing.assert_close(out, net(y).detach())
    assert not func_dir.exists(), list(func_dir.parent.iterdir())
    assert func_dir.parent.exists() and Path(sibling.cache_file).exists()
    first(torch.randn(5, 4))
    assert not func_dir.exists(), "saved again after a recompile"


def test_guarded_python_value_change_is_a_recompile() -> None:
    """CC-12: a different Python value on a guarded path is a recompile too."""
    net = Net()
    cached = cache_compile(net.branchy, config=eager_config())
    x = torch.randn(2, 4)
    cached(x, True)
    with pytest.warns(UserWarning, match="recompiled"):
        out = cached(x, False)
    torch.testing.assert_close(out, net.fc(x).detach())


# -- RNG: CC-13 -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["noisy", "dropped"])
@pytest.mark.parametrize("mode", ["max-autotune", "reduce-overhead"])
def test_rng_operators_are_rejected(method: str, mode: str) -> None:
    """CC-13: RNG operators fail the first call with BackendCompilerFailed; nothing is written, in every mode."""
    from torch._dynamo.exc import BackendCompilerFailed

    config = eager_config()
    config.mode = mode
    cached = cache_compile(getattr(Net(), method), config=config)
    with pytest.raises(BackendCompilerFailed) as caught:
        cached(torch.randn(2, 4))
    assert "Cache compile does not support operator that depend on RNG" in str(caught.value.inner_exception)
    assert not os.path.exists(cached.cache_file), cached.cache_file


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


# -- inference only: CC-16 --------------------------------------------------------------------------------------


def test_outputs_carry_no_autograd_graph() -> None:
    """CC-16: even with grad enabled and parameters requiring grad, outputs have no grad_fn; backward raises."""
    cached = cache_compile(Net().forward, config=eager_config())
    out = cached(torch.randn(2, 4, requires_grad=True))
    assert out.grad_fn is None and not out.requires_grad
    with pytest.raises(RuntimeError):
        out.sum().backward()
    assert torch.is_grad_enabled()


# -- inputs: CC-18 ----------------------------------------------------------------------------------------------


def test_non_contiguous_and_keyword_inputs() -> None:
    """CC-18: non-contiguous tensors and keyword arguments reach the graph."""

    class Kw(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(4, 4))

        def run(self, a, b=None, *, scale: float = 2.0, tensors=()):
            return a @ self.w + b * scale + sum(tensors)

    model = Kw()
    cached = cache_compile(model.run, config=eager_config())
    a = torch.randn(4, 3).t()
    b = torch.randn(3, 4)
    extras = [torch.randn(3, 4), torch.randn(3, 4)]
    expected = model.run(a, b=b, scale=2.0, tensors=extras).detach()
    torch.testing.assert_close(cached(a, b=b, tensors=extras), expected)


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
