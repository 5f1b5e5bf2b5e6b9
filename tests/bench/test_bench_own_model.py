"""`--model package.module:factory`: benchmark your own model; the contract is checked before any measurement."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

from torchair_conformance.bench import cli, models, preflight, presets

F = "tests.bench.factories"


def test_a_factory_that_keeps_the_contract_builds_like_a_preset() -> None:
    built = models.build(f"{F}:mlp")
    assert built.method == "forward" and not built.module.training and built.kwargs == {"scale": 2.0}
    again = models.build(f"{F}:mlp")
    assert torch.equal(built.bound()(*built.args, **built.kwargs), again.bound()(*again.args, **again.kwargs)), \
        "seeded before the factory is called: the same weights and inputs in every process"


@pytest.mark.parametrize("factory, message", [
    ("tests.no_such_module:mlp", "cannot import 'tests.no_such_module': ModuleNotFoundError"),
    (f"{F}:nothing", f"{F} has no function 'nothing'"),
    (f"{F}:NOT_CALLABLE", "(it is a int)"),
    (f"{F}:two_items", "must return (module, method, args) or (module, method, args, kwargs), got tuple (Mlp("),
    (f"{F}:not_a_module", "the module it returns must be a torch.nn.Module, got function"),
    (f"{F}:no_such_method", "must name a method of Mlp (e.g. 'forward'), got 'decode'"),
    (f"{F}:raises", "raises() raised RuntimeError('the checkpoint is missing')"),
])
def test_a_broken_contract_is_named(factory: str, message: str) -> None:
    with pytest.raises(models.ModelError) as caught:
        models.from_factory(factory)
    assert str(caught.value).startswith(f"--model {factory}: ") and message in str(caught.value), str(caught.value)


def test_names_that_are_neither_a_preset_nor_a_factory() -> None:
    assert presets.is_factory("my_pkg.models:make") and presets.canonical("my_pkg.models:make") == "my_pkg.models:make"
    for name in ("my_pkg.models", "my_pkg.models:make:x", "my-pkg:make", ":make"):
        with pytest.raises(ValueError, match="or your own model as package.module:factory"):
            presets.canonical(name)


def test_preflight_runs_the_factory_once_on_its_inputs() -> None:
    job = {"impl": "torchair_ref", "device": None}
    checked = preflight.check({**job, "model": f"{F}:mlp"})
    checked.pop("uncompiled", None)  # where this process compiled torchair_ref from source (its own test)
    assert checked == {"error": None, "device": "cpu", "method": "forward", "label": ""}
    problem = preflight.check({**job, "model": f"{F}:wrong_inputs"})["error"]
    assert problem.startswith(f"--model {F}:wrong_inputs: forward(...) failed on the example inputs it returns: "
                              "RuntimeError("), problem


def test_a_broken_factory_is_refused_before_measuring(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["--model", f"{F}:no_such_method", "--history", str(tmp_path), "--rounds", "1"]) == 2
    err = capsys.readouterr().err
    assert f"error: --model {F}:no_such_method: the method it returns must name a method of Mlp" in err, err
    assert "round 1" not in err and "Traceback" not in err and not list(tmp_path.iterdir())


@pytest.mark.slow
def test_a_factory_model_is_benchmarked_cold_and_warm(tmp_path: Path) -> None:
    status = cli.main(["--model", f"{F}:mlp", "--run-eagerly", "--rounds", "1", "--baselines", "eager",
                       "--no-overhead", "--history", str(tmp_path / "history"), "--json", str(tmp_path / "run.json")])
    assert status == 0
    records = {r["variant"]: r for r in json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))}
    assert sorted(records) == ["eager", "impl-cold", "impl-warm"]
    assert records["impl-warm"]["bench"]["model"] == f"{F}:mlp" and records["impl-warm"]["bench"]["method"] == "forward"
    warm = records["impl-warm"]["samples"][0]
    # Loaded, not traced; whether Dynamo was imported is the implementation's finding (for this model the
    # reference's eager graph imports it), not the factory's.
    assert warm["cache_hit"] and warm["matches_cold"] and warm["traced"]["unique_graphs"] == 0, warm


def test_a_zoo_model_by_name(tmp_path: Path) -> None:
    """`--model hf:<name>` (issue 29 item 5): a zoo model is a model the benchmark's processes build; an unknown name
    lists the zoo; without the zoo's packages the error says how to install them."""
    from torchair_conformance.zoo import packages

    assert presets.is_factory("hf:gpt2") and presets.canonical("hf:gpt2") == "hf:gpt2"
    with pytest.raises(models.ModelError, match=r"--model hf:gpt3: not a zoo model; known: hf:gpt2, "):
        models.build("hf:gpt3")
    if packages.missing() is not None:
        with pytest.raises(models.ModelError, match=r"--model hf:gpt2: .*pip install"):
            models.build("hf:gpt2")
        return
    built = models.build("hf:gpt2")
    again = models.build("hf:gpt2")
    assert built.method == "_run" and not built.module.training
    out, out_again = built.bound()(*built.args, **built.kwargs), again.bound()(*again.args, **again.kwargs)
    assert torch.equal(out.logits, out_again.logits), "the same weights and inputs in every process"


@pytest.mark.parametrize("cached", [False, True], ids=["no-bytecode", "compiled"])
def test_preflight_names_an_implementation_compiled_from_source(tmp_path: Path, cached: bool) -> None:
    """A warm worker that compiles the implementation from source (PYTHONDONTWRITEBYTECODE, no bytecode cached) pays
    that on every start, which an installed package does not: the preflight names those modules, and only then."""
    import subprocess
    import sys

    prefix = tmp_path / "pycache"  # an empty bytecode tree of this test's own, or one compileall filled
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": "1"}
    if cached:
        import torchair_ref

        folder = str(Path(torchair_ref.__file__).parent)
        subprocess.run([sys.executable, "-m", "compileall", "-q", folder], env=env, check=True, capture_output=True)
    code = ("import json; from torchair_conformance.bench import preflight; "
            "print(json.dumps(preflight.check({'impl': 'torchair_ref', 'device': None, 'model': 'tiny'})))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    checked = json.loads(out.stdout.strip().splitlines()[-1])
    assert checked["error"] is None
    if cached:
        assert "uncompiled" not in checked, checked
    else:
        assert "torchair_ref" in checked["uncompiled"] and "torchair_ref.inference.cached" in checked["uncompiled"]
