"""`python -m conformance bench`: cold-start vs warm-start benchmarks with baselines (SPEC BE-1..BE-4).

    python -m conformance bench --impl torchair_ref --model gpt-small --rounds 5
    python -m conformance bench --model tiny --run-eagerly --rounds 1 --baselines eager --no-history

Prints medians with [min-max] per variant and phase, the ratios against the baselines (with the reference's
targets), the per-call overhead, and appends the run to the history (`reports/history/`, see
`conformance.report.history`).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any, TextIO

from conformance import impl, process
from conformance.bench import presets

DEFAULT_HISTORY = os.path.join("reports", "history")

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
    p = argparse.ArgumentParser(prog="python -m conformance bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--impl", default=None,
                   help=f"implementation module (IMPL-1; default ${impl.ENV_VAR}, else {impl.DEFAULT_IMPL})")
    p.add_argument("--model", default="tiny", choices=presets.NAMES, help="benchmark model (default tiny)")
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
    p.add_argument("--device", default=None,
                   help="device of the model and inputs (default: the device the implementation declares, IMPL-2)")
    p.add_argument("--threads", type=int, default=1,
                   help="OMP_NUM_THREADS of every worker (default 1: stable figures on a shared host; 0 = inherit)")
    p.add_argument("--baselines", default="eager,inductor,aot",
                   help="comma-separated subset of eager,inductor,aot, or none (default all)")
    p.add_argument("--overhead", action=argparse.BooleanOptionalAction, default=None,
                   help="measure per-call overhead after the rounds (default: on for tiny)")
    p.add_argument("--history", default=DEFAULT_HISTORY, help=f"history folder (default {DEFAULT_HISTORY})")
    p.add_argument("--no-history", action="store_true", help="do not append to the history")
    p.add_argument("--json", metavar="PATH", help="also write this run's records to PATH as a JSON list")
    p.add_argument("--list-models", action="store_true", help="list the benchmark models and exit")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m conformance bench`; returns the exit status."""
    from conformance.bench import environment, harness
    from conformance.report import history

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
    clock = Clock()
    problem = check_arguments(args)
    checked = {"error": problem} if problem else check_impl(options.impl, clock)
    if checked["error"]:
        print(f"error: {checked['error']}", file=sys.stderr)
        return 2
    if args.device is None:
        options.device = checked["device"]
    print(f"bench: {options.impl} on {options.model} ({options.mode}, {'dynamic' if options.dynamic else 'static'}, "
          f"{options.compiler}), {options.rounds} rounds, baselines {', '.join(baselines) or 'none'}",
          file=sys.stderr)
    if checked.get("label"):  # IMPL-4: e.g. upstream's Python with GE graphs on the project's CPU executor
        print(f"bench: {options.impl} runs {checked['label']}: these timings measure that on {options.device}, "
              "not NPU speed", file=sys.stderr)
    commit = environment.project_commit()  # the code measured is the code at the start
    try:
        result = harness.run(options, progress=clock.progress)
    except harness.BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if exc.result is not None and exc.result.samples:
            salvage(harness.records(exc.result, commit=commit), args, reason="a worker failed")
        return 1
    records = harness.records(result, commit=commit)
    print_result(result, sys.stdout)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump([json.loads(r.to_json()) for r in records], handle, indent=1)
    if not args.no_history:
        try:
            for path in history.append(args.history, records):
                clock.progress(f"history: appended to {path}")
        except OSError as exc:
            print(f"error: could not append to the history {args.history}: {exc}", file=sys.stderr)
            salvage(records, args, reason="the history append failed")
            return 1
    return 0


class Clock:
    """Progress lines on stderr, each with the time since the command started."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def progress(self, line: str) -> None:
        print(f"  [{time.monotonic() - self.start:7.1f} s] {line}", file=sys.stderr, flush=True)


def check_arguments(args: argparse.Namespace) -> str | None:
    """Every path argument, before the first measurement: why it cannot be used, else None."""
    if args.threads < 0:
        return f"--threads must be 0 (inherit) or more, got {args.threads}"
    if not args.no_history:
        problem = _writable_folder(args.history)
        if problem:
            return f"--history {args.history!r}: {problem}; pass a folder (or --no-history)"
    if args.json:
        folder = os.path.dirname(os.path.abspath(args.json))
        if os.path.isdir(args.json):
            return f"--json {args.json!r} is a folder; pass a file path"
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            return f"--json {args.json!r}: its folder {folder} does not exist or is not writable"
    return None


def _writable_folder(path: str) -> str | None:
    """Why `path` cannot be (or become) a writable folder, else None."""
    if os.path.exists(path):
        if not os.path.isdir(path):
            return "is a file, not a folder"
        return None if os.access(path, os.W_OK | os.X_OK) else "is not writable"
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return f"{parent} is a file, so the folder cannot be created"
    return None if os.access(parent, os.W_OK | os.X_OK) else f"cannot be created ({parent} is not writable)"


def check_impl(name: str, clock: Clock) -> dict[str, Any]:
    """IMPL-1: resolve the implementation in a fresh process, as the workers will, before any measurement:
    ``{"device": its declared device, "error": None}``, or an ``error`` that names the value and the fix."""
    clock.progress(f"checking that {name} imports and has the IMPL-1 surface ...")
    try:
        checked = process.run("conformance.workers.resolve", {"impl": name}, env=process.child_env()).result
    except process.ProcessError as exc:
        return {"error": f"--impl {name!r}: resolving it crashed its process; pass an importable implementation "
                         f"module such as {impl.DEFAULT_IMPL} or torchair_npu, installed in this environment\n{exc}"}
    if checked["error"]:
        return {"error": f"--impl {name!r}: {checked['error']}"}
    clock.progress(f"{name} imports (device {checked['device']})")
    return checked


def salvage(records: list[Any], args: argparse.Namespace, *, reason: str) -> None:
    """Keep measurements that could not go to the history: a JSON list beside it (or in the working folder)."""
    name = f"bench-unsaved-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}.json"
    for folder in (args.history if os.path.isdir(args.history) else None, os.getcwd(), tempfile.gettempdir()):
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
    from conformance.report import stats

    env, opts = result.env, result.options
    out.write(f"{env.get('impl')} {env.get('impl_version')} | torch {env.get('torch')} | torch_npu "
              f"{env.get('torch_npu')} | CANN {env.get('cann')} | {env.get('device')} ({env.get('soc')}) | "
              f"threads {env.get('threads')}\n")
    out.write(f"{opts.model}.{presets.METHODS[opts.model]} | {opts.mode} | "
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
        out.write("\nWARNING: a warm run traced (Dynamo/Inductor imported or graphs counted): CC-14 broken\n")
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


if __name__ == "__main__":
    sys.exit(main())
