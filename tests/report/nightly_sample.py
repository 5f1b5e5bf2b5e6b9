"""A synthetic nightly history: 60 runs of upstream TorchAir on gpt-small on an Ascend A2, over three CANN versions.

Deterministic (seeded), small per record (eager, cold and warm only, 5 rounds), written on demand into a folder:

    python -m tests.report.nightly_sample OUT      # OUT/history/*.jsonl and OUT/conformance/*.json

Nights 1-20 run CANN 8.0.RC3, 21-40 CANN 8.1.RC1, 41-60 CANN 8.10.RC1 (sorts after 8.1 and 8.2 only by version,
not as a string). `plant` makes 8.10's warm load 20 % slower (300 ms -> 360 ms), the change the gate must catch;
night 37 is on a dirty work tree. The conformance results: the reference and upstream on CPU, and upstream on the
A2 for the two newest CANN versions, with every outcome. Beside it, the reference on the runner's CPU every night
(one series of 60 runs, for the bounded trend and runs table).
"""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from torchair_conformance.report import history, stats

CANN = (("8.0.RC3", "2.6.0.post1"), ("8.1.RC1", "2.6.0.post2"), ("8.10.RC1", "2.6.0.post3"))
ENV = {"impl": "torchair_npu", "impl_version": None, "torch": "2.6.0", "device": "npu", "soc": "Ascend910B2",
       "python": "3.11.7", "host": "a2-runner-1", "threads": 1,
       "machine": {"npu-smi": "910B2 x8, health OK", "driver": "24.1.rc3", "firmware": "7.5.0.1.129"}}
BENCH = {"model": "gpt-small", "method": "forward", "mode": "max-autotune", "dynamic": True, "compiler": "ge",
         "ge_cache": True}
#: variant -> (startup+import, build, compile or load, first call) medians, seconds
PHASES = {"eager": (5.8, 0.4, 0.0, 0.9), "impl-cold": (6.1, 0.4, 36.5, 0.0005), "impl-warm": (6.1, 0.4, 0.30, 0.0005)}


def _sample(rng: random.Random, variant: str, slower_load: float, busy: float, spread: float | None = None) -> dict:
    """One round; each phase jitters by 3 % (Gaussian), or uniformly within ±`spread`."""
    startup, build, load, first = (p * busy for p in PHASES[variant])
    load *= slower_load if variant == "impl-warm" else 1.0
    jitter = [max(0.0, p * (1 + (rng.uniform(-spread, spread) if spread else rng.gauss(0, 0.03))))
              for p in (startup, build, load, first)]
    return {"startup_import_s": jitter[0], "build_s": jitter[1], "compile_or_load_s": jitter[2],
            "first_call_s": jitter[3], "ttfo_s": sum(jitter), "steady_s": 0.0011 * busy * (1 + rng.gauss(0, 0.02)),
            "compile_or_load_how": "log" if variant == "impl-warm" else "first-minus-second",
            "traced": {"dynamo_imported": variant == "impl-cold", "inductor_imported": False,
                       "unique_graphs": int(variant == "impl-cold"), "frames_total": None}}


def night_records(night: int, cann: str | None, torch_npu: str | None, *, rng: random.Random,
                  slower_load: float = 1.0, rounds: int = 5, busy: float = 1.0, load_1min: float = 0.4,
                  dirty: bool = False, hour: int = 2, spread: float | None = None) -> list[history.Record]:
    """The three records (eager, cold, warm) of one nightly run (`cann` None: the reference on the CPU)."""
    day = f"2026-{1 + (night - 1) // 28:02d}-{1 + (night - 1) % 28:02d}"
    date = f"{day}T{hour:02d}:00:00Z"
    commit = f"{night:040x}"[-40:] + ("+dirty" if dirty else "")
    env = {**ENV, "cann": cann, "torch_npu": torch_npu}
    if cann is None:
        env = {**env, "impl": "torchair_ref", "impl_version": "0.1.0", "torch": "2.13.0+cpu", "device": "cpu",
               "soc": "AMD EPYC", "host": "a2-runner-1", "machine": None}
    out = []
    for variant in PHASES:
        samples = [_sample(rng, variant, slower_load, busy, spread) for _ in range(rounds)]
        out.append(history.Record(run_id=f"{date}-{night}-{cann}", date=date, commit=commit, env=env,
                                  bench={**BENCH, "rounds": rounds, "compiler": "ge" if cann else "inductor"},
                                  variant=variant, samples=samples,
                                  summary=stats.summarize(samples),
                                  load_avg={"start": [load_1min, load_1min, load_1min],
                                            "end": [load_1min, load_1min, load_1min], "cpus": 16}))
    return out


def write(out: Path, *, plant: bool = True) -> Path:
    """Write the sample under `out` (`history/`, `torchair_conformance/`); returns `out`."""
    rng = random.Random(10)
    records = []
    for night in range(1, 61):
        cann, torch_npu = CANN[(night - 1) // 20]
        records += night_records(night, cann, torch_npu, rng=rng, dirty=night == 37,
                                 slower_load=1.2 if plant and cann == "8.10.RC1" else 1.0)
        records += night_records(night, None, None, rng=rng, hour=4)
    history.append(out / "history", records)
    write_results(out / "conformance")
    return out


def write_results(folder: Path) -> None:
    """Results documents of the reference, upstream on CPU and upstream on the A2 (two CANN versions)."""
    folder.mkdir(parents=True, exist_ok=True)
    tests = [("torchair_conformance/test_paths.py::test_path_formula", ["CC-8", "CC-9"]),
             ("torchair_conformance/test_paths.py::test_parameter_values_keep_path", ["CC-10"]),
             ("torchair_conformance/test_rng.py::test_rng_rejected[reduce-overhead]", ["CC-13"]),
             ("torchair_conformance/test_warm_start.py::test_warm_untraced", ["CC-14"]),
             ("torchair_conformance/test_config.py::test_equality_by_value", ["CF-2"]),
             ("torchair_conformance/test_readable.py::test_readable_prints_guards", ["RC-1"])]
    docs = {
        "torchair_ref-cpu.json": ("torchair_ref", "cpu", {"torchair_ref": "0.1.0", "torch": "2.13.0+cpu"},
                                  ["passed", "passed", "passed", "passed", "passed", "skipped"]),
        "torchair_cpu-cpu.json": ("torchair_cpu", "cpu", {"torch": "2.14.0", "torch_npu": "2.14.0"},
                                  ["passed", "xpassed", "xfailed", "skipped", "xfailed", "passed"]),
        "torchair_npu-npu-cann-8.1.RC1-soc-Ascend910B2.json": (
            "torchair_npu", "npu", {"torch": "2.6.0", "torch_npu": "2.6.0.post2", "cann": "8.1.RC1",
                                    "soc": "Ascend910B2"},
            ["passed", "passed", "xfailed", "passed", "xfailed", "passed"]),
        "torchair_npu-npu-cann-8.10.RC1-soc-Ascend910B2.json": (
            "torchair_npu", "npu", {"torch": "2.6.0", "torch_npu": "2.6.0.post3", "cann": "8.10.RC1",
                                    "soc": "Ascend910B2"},
            ["passed", "passed", "xfailed", "failed", "xfailed", "error"]),
    }
    finished = 1772587800.0  # 2026-03-04T01:30:00Z: just before run 60 (dates in `night_records`)
    for name, (impl, device, versions, outcomes) in docs.items():
        records = []
        for (test, clauses), outcome in zip(tests, outcomes):
            message = {"failed": "AssertionError: the warm start traced: dynamo_imported=True\nassert not True",
                       "error": "teardown: PermissionError: [Errno 13] cache folder left read-only",
                       "xfailed": "known divergence of upstream from CF-2: configs compare by identity",
                       "skipped": "needs capability ge_cache"}.get(outcome)
            records.append({"test": test, "clauses": clauses, "outcome": outcome, "message": message})
        document = {"implementation": impl, "device": device, "versions": versions, "profile": "nightly",
                    "started": finished - 1800, "finished": finished,
                    "exit_status": 1 if {"failed", "error"} & set(outcomes) else 0, "tests": records}
        (folder / name).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    print(write(Path(sys.argv[1])))
