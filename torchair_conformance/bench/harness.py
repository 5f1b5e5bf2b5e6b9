"""Cold and warm starts in fresh processes, N rounds each, with the baselines measured in the same run (BE-1).

A round runs, each as its own fresh process (`worker`): eager (before the cold run in even rounds, after it in odd
ones); the implementation cold (an empty cache folder and an empty Inductor cache); the implementation warm (the
folder that cold run left, and again an empty Inductor cache, so only the cache folder carries over);
`torch.compile` with Inductor on hot Inductor caches; PyTorch's `load_compiled_function` of an `aot_compile` artifact
(with the Inductor cache its save left: the most favourable setting for that baseline). The two priming runs that make
those caches hot (`inductor-prime`, `aot-save`) run once before the rounds and are recorded too. Rounds interleave the
variants, so drift of the machine hits all alike. After the rounds, `overhead` compares the warm cached callable with
its graph called directly (see `overhead`).
"""
from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from torchair_conformance import impl, process
from torchair_conformance.bench import presets
from torchair_conformance.errors import ConformanceError
from torchair_conformance.report import history, stats

logger = logging.getLogger("torchair_conformance.bench")

BASELINES = ("eager", "inductor", "aot")
#: variants whose failure is recorded as a skip with its reason (the implementation's own never are)
BASELINE_VARIANTS = ("inductor-prime", "inductor-hot", "aot-save", "aot-load")
#: variant name -> worker subject
VARIANTS = {
    "eager": "eager",
    "impl-cold": "impl",
    "impl-warm": "impl",
    "inductor-prime": "inductor",
    "inductor-hot": "inductor",
    "aot-save": "aot-save",
    "aot-load": "aot-load",
    "overhead": "overhead",
}


class BenchError(ConformanceError, RuntimeError):
    """A worker failed; the message carries its error and the tail of its output, `result` what was measured
    before it (set by `run`)."""

    result: Result | None = None


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived (the CLI's handler raises it): like KeyboardInterrupt, no `except Exception` stops
    it; `run` kills the running worker on the way out, removes its scratch folder and sets `result` to what was
    measured before it."""

    result: Result | None = None

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


@dataclass
class Options:
    """What to measure; the CLI's flags map one to one."""

    impl: str = "torchair_ref"
    model: str = "tiny"
    mode: str = "max-autotune"
    dynamic: bool = True
    rounds: int = 5
    run_eagerly: bool = False
    ge_cache: bool | None = None
    device: str | None = None
    threads: int = 1
    baselines: tuple[str, ...] = BASELINES
    overhead: bool | None = None
    timeout_s: float = 1800.0
    #: the method that is cached and timed: a preset's, or what a `package.module:factory` returns (the CLI's
    #: preflight reads it)
    method: str | None = None
    steady: dict[str, Any] = field(default_factory=dict)
    overhead_timing: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.model = presets.canonical(self.model)
        if self.method is None and not presets.is_factory(self.model):
            self.method = presets.METHODS[self.model]
        if self.mode not in ("max-autotune", "reduce-overhead"):
            raise ValueError(f"mode must be max-autotune or reduce-overhead, got {self.mode!r}")
        if self.rounds < 1:
            raise ValueError(f"rounds must be at least 1, got {self.rounds}")
        unknown = set(self.baselines) - set(BASELINES)
        if unknown:
            raise ValueError(f"unknown baselines {sorted(unknown)}; known: {', '.join(BASELINES)}")
        if self.device is None:  # the CLI passes the device the implementation declares (IMPL-2)
            self.device = "npu" if impl.needs_torch_npu(self.impl) else "cpu"
        if self.overhead is None:
            self.overhead = self.model == "tiny"
        if self.ge_cache is None:
            self.ge_cache = self.mode == "max-autotune"

    @property
    def compiler(self) -> str:
        """The graph compiler the implementation is configured with: eager (`debug.run_eagerly`), else GE on an
        NPU or for upstream on CPU (`torchair_cpu`: GE graphs on the project's executor), and Inductor elsewhere
        (the reference's default)."""
        if self.run_eagerly:
            return "eager"
        return "ge" if self.device == "npu" or self.impl.split(".")[0] == "torchair_cpu" else "inductor"

    def bench_key(self) -> dict[str, Any]:
        """What was measured, beside the environment: part of every record's key."""
        return {"model": self.model, "method": self.method, "mode": self.mode,
                "dynamic": self.dynamic, "compiler": self.compiler, "ge_cache": self.ge_cache,
                "rounds": self.rounds}


@dataclass
class Result:
    """A bench invocation's samples by variant (one worker result per sample), and skip reasons."""

    options: Options
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    env: dict[str, Any] = field(default_factory=dict)
    started: str = ""
    finished: str = ""
    #: host load averages at the start and the end, and the CPU count: figures from a busy host are worth less
    load_avg: dict[str, Any] = field(default_factory=dict)

    def add(self, variant: str, sample: dict[str, Any]) -> None:
        if "skipped" in sample:
            self.skipped[variant] = sample["skipped"]
            return
        self.samples.setdefault(variant, []).append(sample)


def run(options: Options, *, progress: Callable[[str], None] | None = None,
        workdir: str | None = None) -> Result:
    """BE-1: the rounds of cold and warm runs and the baselines; every sample from its own fresh process."""
    progress = progress or logger.info
    result = Result(options, started=_now(), load_avg={"start": _load(), "cpus": os.cpu_count()})
    root = tempfile.mkdtemp(prefix="torchair-bench-", dir=workdir)
    try:
        _run_in(root, options, result, progress)
    except (BenchError, Interrupted) as exc:
        # What was measured before the failure or the signal is kept: the caller writes it out.
        exc.result = result
        raise
    finally:
        shutil.rmtree(root, ignore_errors=True)
        result.finished = _now()
        result.load_avg["end"] = _load()
    return result


def _run_in(root: str, options: Options, result: Result, progress: Callable[[str], None]) -> None:
    def spawn(variant: str, label: str, **spec: Any) -> dict[str, Any]:
        progress(f"{label}: {variant} ...")
        started = time.monotonic()
        try:
            sample = run_worker(options, VARIANTS[variant], **spec)
            progress(f"{label}: {variant} done in {time.monotonic() - started:.1f} s")
        except BenchError as exc:
            if variant not in BASELINE_VARIANTS:
                raise
            # A baseline that fails on this model or torch is a finding to record, not a reason to stop.
            progress(f"{label}: {variant} failed, recorded as skipped: {exc}")
            sample = {"skipped": f"failed: {str(exc).splitlines()[0]}"}
        result.add(variant, sample)
        return sample

    hot_inductor = os.path.join(root, "inductor-hot")
    aot_inductor, aot_file = os.path.join(root, "inductor-aot"), os.path.join(root, "aot", "compiled.bin")
    os.makedirs(os.path.dirname(aot_file))
    if "inductor" in options.baselines:
        spawn("inductor-prime", "prime", inductor_cache=hot_inductor)
    if "aot" in options.baselines:
        spawn("aot-save", "prime", inductor_cache=aot_inductor, aot_file=aot_file)
    last_cache = last_inductor = None
    for i in range(options.rounds):
        label = f"round {i + 1}/{options.rounds}"
        # Warm and eager, the pair whose ratio is a target (BE-4), take turns at running right after the heavy cold
        # run (even rounds: eager, cold, warm; odd rounds: cold, eager, warm): a position effect (page cache, CPU
        # frequency) then hits both alike over the rounds.
        eager_first = i % 2 == 0
        if "eager" in options.baselines and eager_first:
            spawn("eager", label, inductor_cache=_fresh(root, f"eager-{i}"))
        cache_dir, cold_inductor = _fresh(root, f"cache-{i}"), _fresh(root, f"inductor-cold-{i}")
        cold = spawn("impl-cold", label, cache_dir=cache_dir, inductor_cache=cold_inductor)
        if not result.env:
            result.env = dict(cold.get("env") or {})
        if cold.get("cache_hit"):
            raise BenchError(f"the cold run found a cache in the empty folder {cache_dir}")
        if "eager" in options.baselines and not eager_first:
            spawn("eager", label, inductor_cache=_fresh(root, f"eager-{i}"))
        warm = spawn("impl-warm", label, cache_dir=cache_dir, inductor_cache=_fresh(root, f"inductor-warm-{i}"))
        warm["matches_cold"] = warm.get("output_sha256") == cold.get("output_sha256")
        if "inductor" in options.baselines and "inductor-prime" not in result.skipped:
            spawn("inductor-hot", label, inductor_cache=hot_inductor)
        if "aot" in options.baselines and "aot-save" not in result.skipped:
            spawn("aot-load", label, inductor_cache=aot_inductor, aot_file=aot_file)
        last_cache, last_inductor = cache_dir, cold_inductor
    if options.overhead and last_cache:
        spawn("overhead", "after the rounds", cache_dir=last_cache, inductor_cache=last_inductor)


def run_worker(options: Options, subject: str, *, inductor_cache: str, cache_dir: str | None = None,
               aot_file: str | None = None) -> dict[str, Any]:
    """Run one `worker` process and return its result (a `{"skipped": reason}` result is passed through)."""
    spec = {
        "subject": subject, "impl": options.impl, "model": options.model, "mode": options.mode,
        "dynamic": options.dynamic, "run_eagerly": options.run_eagerly, "ge_cache": options.ge_cache,
        "device": options.device, "compiler": options.compiler, "cache_dir": cache_dir, "aot_file": aot_file,
        "steady": options.steady, "overhead": options.overhead_timing,
    }
    extra = {"TORCHAIR_CACHE_HOME": None, "TORCHINDUCTOR_CACHE_DIR": inductor_cache,
             **({"OMP_NUM_THREADS": str(options.threads)} if options.threads else {})}
    if subject == "overhead":
        # The direct graph compiles in the timing process: with one compile thread Inductor starts no pool of
        # compile workers, which would still be importing torch on the other cores while the calls are timed (on
        # 2 cores that doubled both timings, and the overhead with them, in 2 runs of 3).
        extra["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    env = process.child_env(extra=extra)
    spec["spawned_at"] = time.time()
    try:
        reply = process.run("torchair_conformance.bench.worker", spec, env=env, timeout=options.timeout_s)
    except process.ProcessError as exc:
        raise BenchError(f"{subject} worker failed: {exc}") from exc
    sample = reply.result
    if "error" in sample:
        tail = "\n".join(reply.stderr.splitlines()[-30:])
        raise BenchError(f"{subject} worker failed: {sample['error']}\n{sample.get('traceback', '')}{tail}")
    sample["process_s"] = time.time() - spec["spawned_at"]
    return sample


def records(result: Result, *, commit: str | None) -> list[history.Record]:
    """BE-3/BE-4: one history record per variant of this run (see `torchair_conformance.report.history`)."""
    run_id = f"{result.started}-{os.getpid()}"
    out = []
    variants: Iterable[str] = [v for v in VARIANTS if v in result.samples or v in result.skipped]
    for variant in variants:
        samples = [{k: v for k, v in s.items() if k != "env"} for s in result.samples.get(variant, [])]
        out.append(history.Record(
            run_id=run_id, date=result.started, commit=commit, env=result.env,
            bench=result.options.bench_key(), variant=variant, samples=samples,
            summary=stats.summarize(samples), skipped=result.skipped.get(variant), load_avg=result.load_avg,
        ))
    return out


def _fresh(root: str, name: str) -> str:
    path = os.path.join(root, name)
    os.makedirs(path)
    return path


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

