"""`python -m torchair_conformance bench`: cold-start vs warm-start benchmarks with baselines (SPEC BE-1..BE-4).

    python -m torchair_conformance bench --impl torchair_ref --model gpt-small --rounds 5
    python -m torchair_conformance bench --model tiny --run-eagerly --rounds 1 --baselines eager --no-history
    # your own model (see models.from_factory)
    python -m torchair_conformance bench --model mypackage.models:make_model

Prints medians with [min-max] per variant and phase, the ratios against the baselines (with the reference's
targets), the per-call overhead, and appends the run to a history (see `torchair_conformance.report.history`): a
local one, `bench-history/`, unless `--publish` (the published `reports/history/`) or `--history PATH` says otherwise.
Every argument is checked before the first measurement (`preflight`). Ctrl-C (SIGINT) or SIGTERM stops the workers,
removes the scratch folders and keeps what was measured in `bench-unsaved-<time>-<pid>.json`.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any, TextIO

from torchair_conformance import impl
from torchair_conformance.bench import preflight, presets

#: the history a run appends to unless told otherwise: local, never the published one
LOCAL_HISTORY = "bench-history"
#: the published history, which the report renders (`--publish`)
PUBLISHED_HISTORY = os.path.join("reports", "history")

#: (column title, metric, unit) of the printed table
COLUMNS = (
    ("TTFO", "ttfo_s", "s"),
    ("start+import", "startup_import_s", "s"),
    ("build", "build_s", "s"),
    ("compile/load", "compile_or_load_s", "s"),
    ("first call", "first_call_s", "s"),
    ("steady call", "steady_s", "s"),
    ("artifact", "artifact_bytes", "B"),
)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m torchair_conformance bench", description=__doc__.split("\n\n")[0])
    impl.add_option(p.add_argument)
    p.add_argument("--model", default="tiny",
                   help=f"benchmark model: a preset ({', '.join(presets.NAMES)}; default tiny; --list-models), or your "
                        f"own as package.module:factory, a function returning (module, method, args[, kwargs]) "
                        f"(contract: torchair_conformance.bench.models.from_factory)")
    p.add_argument("--mode", default="max-autotune", choices=("max-autotune", "reduce-overhead"))
    dyn = p.add_mutually_exclusive_group()
    dyn.add_argument("--dynamic", dest="dynamic", action="store_true", default=True, help="dynamic=True (default)")
    dyn.add_argument("--static", dest="dynamic", action="store_false", help="dynamic=False")
    p.add_argument("--rounds", type=int, default=5, help="cold and warm runs each (BE-1 asks for >= 5; default 5)")
    p.add_argument("--run-eagerly", action="store_true",
                   help="config.debug.run_eagerly = True: the implementation's fast eager graph compiler")
    p.add_argument("--ge-cache", action=argparse.BooleanOptionalAction, default=None,
                   help="cache_compile(..., ge_cache=...): keep compiled kernels in the cache folder (default: on in "
                        "max-autotune, off in reduce-overhead, where it has no effect)")
    p.add_argument("--device", default=None, choices=preflight.DEVICES,
                   help="device of the model and inputs (default: the device the implementation declares, IMPL-2)")
    p.add_argument("--threads", type=int, default=1,
                   help="OMP_NUM_THREADS of every worker (default 1: stable figures on a shared host; 0 = inherit)")
    p.add_argument("--baselines", default="eager,inductor,aot",
                   help="comma-separated subset of eager,inductor,aot, or none (default all)")
    p.add_argument("--overhead", action=argparse.BooleanOptionalAction, default=None,
                   help="measure per-call overhead after the rounds (default: on for tiny)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--publish", action="store_true",
                       help=f"append to the published history, {PUBLISHED_HISTORY} (what the nightly does)")
    where.add_argument("--history", default=None,
                       help=f"history folder to append to (default {LOCAL_HISTORY}, a local one)")
    where.add_argument("--no-history", action="store_true", help="do not append to any history")
    p.add_argument("--json", metavar="PATH", help="also write this run's records to PATH as a JSON list")
    p.add_argument("--list-models", action="store_true", help="list the benchmark models and exit")
    return p


def history_folder(args: argparse.Namespace) -> str | None:
    """The history this run appends to: the published one only when asked (`--publish`, or `--history` naming it)."""
    if args.no_history:
        return None
    if args.publish:
        return PUBLISHED_HISTORY
    return args.history or LOCAL_HISTORY


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m torchair_conformance bench`; returns the exit status."""
    from torchair_conformance.bench import environment, harness

    args = parser().parse_args(argv)
    if args.list_models:
        list_models(sys.stdout)
        return 0
    baselines = () if args.baselines.strip() in ("", "none") else tuple(
        b.strip() for b in args.baselines.split(",") if b.strip())
    try:
        options = harness.Options(
            impl=impl.selected_name(args.impl), model=args.model, mode=args.mode, dynamic=args.dynamic,
            rounds=args.rounds, run_eagerly=args.run_eagerly, ge_cache=args.ge_cache, device=args.device,
            threads=args.threads, baselines=baselines, overhead=args.overhead,
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    history = history_folder(args)
    problem = preflight.check_arguments(args, history)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    clock = Clock()
    commit = environment.project_commit()  # the code measured is the code at the start
    measured: list[Any] = []  # the run's records, once the rounds are done
    with interrupts():
        try:
            return _run(args, options, history, clock, commit, measured)
        except harness.Interrupted as exc:
            name = signal.Signals(exc.signum).name
            partial = exc.result
            records = measured or (harness.records(partial, commit=commit) if partial and partial.samples else [])
            if records:
                salvage(records, history, reason=f"{name} stopped the run")
            else:
                print(f"bench: {name} before anything was measured; nothing to keep", file=sys.stderr)
            return 128 + exc.signum


def _run(args: argparse.Namespace, options: Any, history_dir: str | None, clock: Clock, commit: str | None,
         measured: list[Any]) -> int:
    """The checks in a fresh process, the rounds, the printed table, the history append."""
    from torchair_conformance.bench import harness
    from torchair_conformance.report import history

    problem = impl.name_problem(options.impl)  # before a process is started for it
    checked = {"error": problem} if problem else preflight.check_target(options.impl, args.device, options.model,
                                                                         clock.progress)
    if checked["error"]:
        print(f"error: {checked['error']}", file=sys.stderr)
        return 2
    options.device, options.method = checked["device"], checked["method"]
    print(f"bench: {options.impl} on {options.model} ({options.mode}, {'dynamic' if options.dynamic else 'static'}, "
          f"{options.compiler}), {options.rounds} rounds, baselines {', '.join(options.baselines) or 'none'}",
          file=sys.stderr)
    if checked.get("label"):  # IMPL-4: e.g. upstream's Python with GE graphs on the project's CPU executor
        print(f"bench: {options.impl} runs {checked['label']}: these timings measure that on {options.device}, "
              "not NPU speed", file=sys.stderr)
    try:
        result = harness.run(options, progress=clock.progress)
    except harness.BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if exc.result is not None and exc.result.samples:
            salvage(harness.records(exc.result, commit=commit), history_dir, reason="a worker failed")
        return 1
    measured.extend(harness.records(result, commit=commit))
    print_result(result, sys.stdout)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump([json.loads(r.to_json()) for r in measured], handle, indent=1)
    if history_dir is None:
        return 0
    try:
        for path in history.append(history_dir, measured):
            clock.progress(f"history: appended to {path}")
    except OSError as exc:
        print(f"error: could not append to the history {history_dir}: {exc}", file=sys.stderr)
        salvage(measured, history_dir, reason="the history append failed")
        return 1
    if os.path.abspath(history_dir) != os.path.abspath(PUBLISHED_HISTORY):
        clock.progress(f"history: {history_dir} is not the published {PUBLISHED_HISTORY} (that takes a run only with "
                       f"--publish); render it: python -m torchair_conformance report --history {history_dir} --out "
                       f"bench-report")
    return 0


@contextlib.contextmanager
def interrupts() -> Iterator[None]:
    """SIGINT (Ctrl-C) and SIGTERM (a cancelled job) raise `harness.Interrupted` once, wherever the run waits, so
    that the worker is killed, the scratch folders are removed and the measurements kept; a second signal during
    that cleanup is ignored rather than let it lose them."""
    from torchair_conformance.bench import harness

    fired: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        if not fired:
            fired.append(signum)
            raise harness.Interrupted(signum)

    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


class Clock:
    """Progress lines on stderr, each with the time since the command started."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def progress(self, line: str) -> None:
        print(f"  [{time.monotonic() - self.start:7.1f} s] {line}", file=sys.stderr, flush=True)


def salvage(records: list[Any], history: str | None, *, reason: str) -> None:
    """Keep measurements that could not go to the history: a JSON list beside it (or in the working folder)."""
    name = f"bench-unsaved-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}.json"
    for folder in (history if history and os.path.isdir(history) else None, os.getcwd(), tempfile.gettempdir()):
        if folder is None:
            continue
        path = os.path.join(folder, name)
        try:
            with open(path, "w", encoding="utf-8") as handle:
                json.dump([json.loads(r.to_json()) for r in records], handle, indent=1)
        except OSError:
            continue
        print(f"kept: {len(records)} records measured before {reason} in {path} (not in the history)",
              file=sys.stderr)
        return
    print(f"error: could not keep the measurements anywhere ({reason})", file=sys.stderr)


def print_result(result: Any, out: TextIO) -> None:
    """The medians with [min-max], the ratios with their targets, the overhead, whether the warm run traced."""
    from torchair_conformance.report import stats

    env, opts = result.env, result.options
    out.write(f"{env.get('impl')} {env.get('impl_version')} | torch {env.get('torch')} | torch_npu "
              f"{env.get('torch_npu')} | CANN {env.get('cann')} | {env.get('device')} ({env.get('soc')}) | "
              f"threads {env.get('threads')}\n")
    out.write(f"{opts.model}.{opts.method} | {opts.mode} | "
              f"{'dynamic' if opts.dynamic else 'static'} | graph compiler {opts.compiler} | ge_cache {opts.ge_cache}"
              f" | {opts.rounds} rounds | {result.started} .. {result.finished}\n"
              f"host load average (1/5/15 min): {result.load_avg.get('start')} at the start, "
              f"{result.load_avg.get('end')} at the end\n\n")
    out.write(f"{'variant':<15}" + "".join(f"{title:>27}" for title, _, _ in COLUMNS) + "   traced\n")
    for variant, samples in result.samples.items():
        if variant == "overhead":
            continue
        summary = stats.summarize(samples)
        cells = [format_cell(summary.get(metric), unit) for _, metric, unit in COLUMNS]
        traced = summary.get("traced_runs")
        traced_text = f"{int(traced['median'])}/{traced['n']}" if traced else "-"
        out.write(f"{variant:<15}" + "".join(f"{c:>27}" for c in cells) + f"   {traced_text}\n")
    for variant, reason in result.skipped.items():
        out.write(f"{variant:<15} skipped: {reason}\n")
    out.write("\nratios (of medians; [min-max] of the per-round ratios):\n")
    for value in stats.ratios(result.samples):
        out.write("  " + format_ratio(value) + "\n")
    for s in result.samples.get("overhead", []):
        meets = s["overhead_s"] <= stats.OVERHEAD_TARGET_S
        out.write(f"\nper-call overhead ({s['compiler']} graph, {opts.model}): cached {s['cached_call_s'] * 1e6:.2f} us"
                  f" vs graph called directly {s['direct_call_s'] * 1e6:.2f} us -> overhead "
                  f"{s['overhead_s'] * 1e6:.2f} us (by minimums {s['overhead_min_s'] * 1e6:.2f} us); target <= "
                  f"{stats.OVERHEAD_TARGET_S * 1e6:.0f} us: {'met' if meets else 'MISSED'}\n")
    warm = result.samples.get("impl-warm", [])
    if any(stats.did_trace(s.get("traced", {})) for s in warm):
        out.write("\nWARNING: a warm run traced (Dynamo counted a graph or a frame): CC-14 broken\n")
    elif any(stats.imported(s.get("traced", {})) for s in warm):
        out.write("\nnote: a warm run had Dynamo or Inductor imported "
                  "(no graph or frame counted: not a trace, CC-14)\n")
    if any(not s.get("matches_cold", True) for s in warm):
        out.write("\nWARNING: a warm run's output differs from its cold run's (CC-14)\n")


def format_cell(summary: dict[str, float] | None, unit: str) -> str:
    if not summary:
        return "-"
    if unit == "B":
        return f"{summary['median'] / 1024:.1f} KiB"
    return f"{fmt_seconds(summary['median'])} [{fmt_seconds(summary['min'])}-{fmt_seconds(summary['max'])}]"


def fmt_seconds(value: float) -> str:
    """Seconds to 3 significant digits in a readable unit."""
    if value >= 1:
        return f"{value:.3g}s"
    if value >= 1e-3:
        return f"{value * 1e3:.3g}ms"
    return f"{value * 1e6:.3g}us"


def format_ratio(value: Any) -> str:
    r = value.ratio
    text = f"{r.name}: {value.value:.3g}" if value.value is not None else f"{r.name}: -"
    if value.low is not None:
        text += f" [{value.low:.3g}-{value.high:.3g}]"
    if r.target is not None:
        text += f"; target <= {r.target:.3g}: {'met' if value.meets else 'MISSED'}"
    return text


def list_models(out: TextIO) -> None:
    out.write("tiny       the seed: two Linear(2, 1), prompt/decode (per-call overhead dominates)\n")
    for name, p in {"gpt-small": presets.GPT_SMALL, **presets.LLAMA}.items():
        out.write(f"{name:<10} {p.parameters() / 1e6:8.1f}M params, {p.dtype}, d_model {p.d_model}, {p.layers} layers,"
                  f" {p.heads} heads ({p.kv_heads or p.heads} kv), ffn {p.ffn}, input (1, {p.seq})\n")
    for alias, name in presets.ALIASES.items():
        out.write(f"{alias:<10} = {name}\n")
    out.write("package.module:factory  your own model: factory() returns (module, method, args[, kwargs]); the "
              "contract is in torchair_conformance.bench.models.from_factory\n")


if __name__ == "__main__":
    sys.exit(main())
