"""`python -m torchair_conformance nightly`: suite -> benchmarks -> history -> report, then one honest exit status.

    python -m torchair_conformance nightly --impl torchair_npu --model tiny --model gpt-small --rounds 5 \\
        -- --junitxml=j.xml

Every step runs even when an earlier one failed (the report then shows what failed); the command exits 1 when the
suite failed or errored, a known divergence XPASSed, the suite wrote no fresh results, a benchmark failed, or the
report's gate found the night red (`report --gate`); 0 only when all of it is green. Arguments after `--` go to
pytest. The suite's results go to `--results` as one file per implementation and environment (CANN, SoC). Every
argument is checked before the suite starts (`check_arguments`); the benchmarks append to `--history`, passed to
`bench` explicitly (the published `reports/history/` by default: the nightly is what publishes).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence

from torchair_conformance.impl import add_option, name_problem
from torchair_conformance.report import matrix, results

#: the night's benchmarks: the per-call overhead (tiny), a small model, and one of realistic size (125M parameters)
DEFAULT_MODELS = ("tiny", "gpt-small", "llama-125m")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m torchair_conformance nightly", description=__doc__.split("\n\n")[0])
    add_option(p.add_argument, required=True)  # torchair_npu on an Ascend runner
    p.add_argument("--model", action="append", default=[],
                   help=f"benchmark model, a preset or package.module:factory (repeatable; default "
                        f"{' '.join(DEFAULT_MODELS)}; `none`: no benchmarks this night)")
    p.add_argument("--rounds", type=int, default=5, help="benchmark rounds (default 5; fewer are not gated)")
    p.add_argument("--results", default=os.path.join("reports", "conformance"),
                   help="folder of the suite's results documents (default reports/conformance)")
    p.add_argument("--history", default=os.path.join("reports", "history"), help="history folder")
    p.add_argument("--out", default="reports", help="report folder")
    return p


def fresh_results(folder: str, impl: str, since: float) -> list[tuple[str, results.Document]]:
    """The results documents of `impl` in `folder` that finished after `since` (this night's)."""
    found = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        try:
            document = results.read(path)
        except (results.ResultsError, OSError):
            continue
        if document.implementation == impl and document.finished is not None and document.finished >= since:
            found.append((path, document))
    return found


def suite_problems(status: int, documents: Sequence[tuple[str, results.Document]], impl: str) -> list[str]:
    """Why the suite's part of the night is red (pure)."""
    problems = []
    if status != 0:
        problems.append(f"suite: pytest exited {status} (1: tests failed, 2: interrupted, 3: internal error, 4: usage "
                        f"error such as an implementation that does not import, 5: no tests collected)")
    if not documents:
        problems.append(f"suite: no fresh results for {impl} (the suite wrote no results document this night)")
    for path, document in documents:
        outcomes = [t.outcome for t in document.tests]
        bad = {o: outcomes.count(o) for o in matrix.BAD_OUTCOMES if o in outcomes}
        if bad:
            problems.append(f"suite: {path}: " + ", ".join(f"{n} {o}" for o, n in bad.items())
                            + (" (xpassed: a known divergence passed, fixed upstream)" if "xpassed" in bad else ""))
    return problems


def this_leg(impl: str, benchmarks: bool, environ: Mapping[str, str] | None = None) -> list[dict[str, str]]:
    """The legs this run is: its own (SoC from `$TORCHAIR_SOC`, CANN from the toolkit's install info, the installed
    torch-npu) when it benchmarks on an NPU host, else none; never the other legs of a history fetched from the data
    branch, which other runners run tonight."""
    from torchair_conformance.bench.environment import distribution_version
    from torchair_conformance.report.cann import from_install_info as cann_from_install_info

    environ = os.environ if environ is None else environ
    leg = {"impl": impl, "soc": environ.get("TORCHAIR_SOC") or "", "cann": cann_from_install_info(environ) or "",
           "torch_npu": distribution_version("torch-npu") or ""}
    if not (benchmarks and all(leg.values())):
        return []
    if environ.get("TORCHAIR_LEG_VARIANT"):
        leg["variant"] = environ["TORCHAIR_LEG_VARIANT"]
    return [leg]


def check_arguments(args: argparse.Namespace) -> str | None:
    """Every argument, before the suite's hour: why one cannot be used (naming the value and the valid ones), else
    None. A `package.module:factory` model is checked in a fresh process (`torchair_conformance.bench.preflight`)."""
    from torchair_conformance.bench import preflight, presets
    from torchair_conformance.report import outdir

    if args.rounds < 1:
        return f"--rounds must be at least 1, got {args.rounds}"
    problem = name_problem(args.impl)
    if problem:
        return problem
    for model in bench_models(args):
        try:
            presets.canonical(model)
        except ValueError as exc:
            return f"--model: {exc}"
    for flag, folder in (("--history", args.history), ("--results", args.results)):
        problem = preflight.writable_folder(folder)
        if problem:
            return f"{flag} {folder!r}: {problem}; pass a folder"
    problem = outdir.check(args.out)
    if problem:
        return problem
    for model in filter(presets.is_factory, bench_models(args)):
        checked = preflight.check_target(args.impl, None, model, lambda line: print(f"nightly: {line.strip()}",
                                                                                    file=sys.stderr))
        if checked["error"]:
            return checked["error"]
    return None


def bench_models(args: argparse.Namespace) -> list[str]:
    """The night's benchmark models: `--model` (repeatable), `DEFAULT_MODELS` without it, none for `none`."""
    return [m for m in args.model or DEFAULT_MODELS if m != "none"]


def _step(title: str, command: list[str]) -> int:
    print(f"nightly: {title}: {' '.join(command)}", file=sys.stderr, flush=True)
    started = time.monotonic()
    status = subprocess.run(command).returncode
    print(f"nightly: {title}: exit {status} after {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return status


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m torchair_conformance nightly`; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    pytest_args = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser().parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    problem = check_arguments(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    python = sys.executable
    since = time.time()
    status = _step("suite", [python, "-m", "pytest", "torchair_conformance", "--impl", args.impl,
                             "--conformance-json", args.results.rstrip("/\\") + os.sep, *pytest_args])
    problems = suite_problems(status, fresh_results(args.results, args.impl, since), args.impl)
    night = bench_models(args)
    for model in night:
        bench = _step(f"bench {model}", [python, "-m", "torchair_conformance", "bench", "--impl", args.impl,
                                         "--model", model, "--rounds", str(args.rounds), "--history", args.history])
        if bench:
            problems.append(f"bench {model}: exited {bench}")
    # --since: only what this night wrote satisfies --require-results and counts as the leg's fresh runs
    with tempfile.TemporaryDirectory(prefix="torchair-nightly-") as tmp:
        expected = os.path.join(tmp, "legs.json")
        with open(expected, "w", encoding="utf-8") as handle:
            json.dump(this_leg(args.impl, bool(night)), handle)
        report = _step("report", [python, "-m", "torchair_conformance", "report", "--gate", "--history", args.history,
                                  "--out", args.out, "--conformance", os.path.join(args.results, "*.json"),
                                  "--require-results", args.impl, "--expected-legs", expected,
                                  "--since", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(since))])
    if report == 1:
        problems.append("report: the gate found the night red (see the report's verdict)")
    elif report:
        problems.append(f"report: exited {report} (nothing rendered)")
    for problem in problems:
        print(f"nightly: red: {problem}", file=sys.stderr)
    print(f"nightly: {'red' if problems else 'green'}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
