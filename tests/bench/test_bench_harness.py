"""The bench harness end to end: fresh worker processes, cold then warm, phases, history (BE-1..BE-4).

Tiny model, the implementation's eager graph compiler, one round, the eager baseline only: seconds, not minutes.
Numbers are recorded, never asserted against targets.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchair_conformance.bench import cli, harness, overhead
from torchair_conformance.report import history

PHASES = ("startup_s", "import_s", "build_s", "compile_or_load_s", "first_call_s")


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path, list[dict]]:
    root = tmp_path_factory.mktemp("bench")
    status = cli.main(["--model", "tiny", "--run-eagerly", "--rounds", "1", "--baselines", "eager", "--no-overhead",
                       "--history", str(root / "history"), "--json", str(root / "run.json")])
    return status, root, json.loads((root / "run.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_cold_and_warm_runs_are_recorded_with_their_phases(bench_run: tuple[int, Path, list[dict]]) -> None:
    status, _, records = bench_run
    assert status == 0
    by_variant = {r["variant"]: r for r in records}
    assert sorted(by_variant) == ["eager", "impl-cold", "impl-warm"]
    for variant, record in by_variant.items():
        (sample,) = record["samples"]
        total = sum(sample[p] for p in PHASES)
        assert sample["ttfo_s"] == pytest.approx(total, rel=1e-6), f"{variant}: phases {total} != TTFO {sample}"
        assert record["summary"]["ttfo_s"]["n"] == 1


@pytest.mark.slow
def test_warm_run_loads_without_tracing_and_matches_cold(bench_run: tuple[int, Path, list[dict]]) -> None:
    _, _, records = bench_run
    cold = next(r for r in records if r["variant"] == "impl-cold")["samples"][0]
    warm = next(r for r in records if r["variant"] == "impl-warm")["samples"][0]
    assert not cold["cache_hit"] and cold["traced"]["dynamo_imported"] and cold["traced"]["unique_graphs"] == 1
    assert warm["cache_hit"] and warm["compile_or_load_how"] == "log", warm
    assert warm["traced"] == {"dynamo_imported": False, "inductor_imported": False, "unique_graphs": 0,
                              "frames_total": warm["traced"]["frames_total"]}, warm["traced"]
    assert warm["matches_cold"] and warm["artifact_bytes"] == cold["artifact_bytes"] > 0


@pytest.mark.slow
def test_history_record_carries_the_environment_key(bench_run: tuple[int, Path, list[dict]]) -> None:
    _, root, _ = bench_run
    (path,) = (root / "history").glob("*.jsonl")
    assert path.name.startswith("cpu-torch-")
    records = history.load(root / "history")
    assert len(records) == 3 and len({r.run_id for r in records}) == 1
    env = records[0].env
    assert env["impl"] == "torchair_ref" and env["cann"] is None and env["threads"] == 1
    assert set(env) >= set(history.KEY_ENV) | {"host"}
    assert records[0].bench["compiler"] == "eager" and records[0].date.endswith("Z")


def test_direct_graph_matches_and_overhead_is_timed() -> None:
    import torch

    from torchair_conformance.bench import models

    built = models.build("tiny")
    direct = overhead.direct_graph(built.bound(), built.args, built.kwargs, compiler="eager", dynamic=True)
    with torch.no_grad():
        timed = overhead.compare({"direct": direct, "eager": lambda: built.bound()(*built.args)}, blocks=3,
                                 calls=20, warmup=2)
    assert set(timed) == {"direct", "eager"} and all(t["min"] > 0 for t in timed.values())


@pytest.mark.parametrize("argv, message", [
    (["--model", "gpt-smal"], "unknown benchmark model 'gpt-smal'; did you mean gpt-small?"),
    (["--model", "gpt-huge"], "unknown benchmark model 'gpt-huge'; known: tiny, gpt-small"),
    (["--device", "nup"], "invalid choice: 'nup'"),
    (["--publish", "--history", "x"], "not allowed with argument --publish"),
    (["--rounds", "0"], "rounds must be at least 1"),
    (["--baselines", "eager,tensorrt"], "unknown baselines"),
])
def test_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture) -> None:
    try:
        status = cli.main(argv + ["--no-history"])
    except SystemExit as exc:
        status = exc.code
    assert status == 2 and message in capsys.readouterr().err


def test_options_defaults() -> None:
    assert harness.Options(model="llama").model == "llama-xs"
    options = harness.Options(impl="torchair")
    assert options.device == "npu" and options.compiler == "ge"
    assert harness.Options().overhead is True and harness.Options().compiler == "inductor"


def test_list_models(capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["--list-models"]) == 0
    out = capsys.readouterr().out
    assert "gpt-small" in out and "llama-7b" in out and "llama      = llama-xs" in out


def test_rounds_interleave_and_warm_gets_only_the_cold_cache_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """BE-1: the order of the fresh processes and the folders each one gets; a failing baseline is a recorded skip."""
    calls: list[tuple[str, dict]] = []

    def fake_worker(options: harness.Options, subject: str, **spec: str) -> dict:
        calls.append((subject, spec))
        if subject == "aot-save":
            raise harness.BenchError("aot-save worker failed: RuntimeError: no\ntraceback")
        return {"ttfo_s": 1.0, "cache_hit": subject == "impl" and len([c for c in calls if c[0] == "impl"]) % 2 == 0,
                "output_sha256": "x", "env": {"impl": options.impl}}

    monkeypatch.setattr(harness, "run_worker", fake_worker)
    result = harness.run(harness.Options(model="tiny", rounds=2), progress=lambda line: None)
    subjects = [subject for subject, _ in calls]
    # Eager and warm take turns at following the cold run.
    rounds = ["eager", "impl", "impl", "inductor"] + ["impl", "eager", "impl", "inductor"]
    assert subjects == ["inductor", "aot-save"] + rounds + ["overhead"]
    assert result.skipped == {"aot-save": "failed: aot-save worker failed: RuntimeError: no"}
    cold, warm = calls[3][1], calls[4][1]
    assert warm["cache_dir"] == cold["cache_dir"] and warm["inductor_cache"] != cold["inductor_cache"]
    assert calls[5][1]["inductor_cache"] == calls[0][1]["inductor_cache"], "torch.compile runs on the primed cache"
    assert calls[6][1]["cache_dir"] != cold["cache_dir"], "each round's cold run starts from an empty folder"
    assert calls[8][1]["cache_dir"] == calls[6][1]["cache_dir"], "the second warm run gets its round's cold folder"
    assert [s["matches_cold"] for s in result.samples["impl-warm"]] == [True, True]

