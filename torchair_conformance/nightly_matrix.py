"""The nightly workflow's matrix: valid SoC x CANN image x torch-npu legs, each with its torch pin (SPEC BE-4).

    python3 -m torchair_conformance.nightly_matrix [--legs JSON] [--a2-runner JSON] [--a3-runner JSON] >> "$GITHUB_OUTPUT"

Standard library only (the workflow runs it before anything is installed). Reads the legs from `--legs` (a JSON list,
the workflow_dispatch input) or `.github/nightly-legs.json`; checks that each image's tag names the leg's CANN release
and chip (`910b`: A2, `a3`: A3) and that `constraints/torch-npu.json` knows the torch-npu release; prints
`include=<JSON>` (the matrix: one job per leg with `soc`, `image`, `cann`, `torch_npu`, `torch`, `runner`, `leg`),
`legs=<JSON>` (the night's expected legs, for `report --expected-legs`) and `since=<UTC time>` (when tonight began).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from torchair_conformance.report import cann

ROOT = Path(__file__).resolve().parents[1]
LEGS = ROOT / ".github" / "nightly-legs.json"
TORCH_TABLE = ROOT / "constraints" / "torch-npu.json"
#: runs-on labels per SoC when the dispatch names none
RUNNERS = {"A2": ["self-hosted", "linux", "ascend-a2"], "A3": ["self-hosted", "linux", "ascend-a3"]}
#: `<registry>/cann:<cann>-<chip>-<os>-py<python>`, Ascend's image tags
_IMAGE = re.compile(r"(?P<repo>[^\s:]+/cann):(?P<cann>[^-\s]+)-(?P<chip>910b|a3)-(?P<os>[a-z]+[\d.]+)-py(?P<py>3\.\d+)")
_CHIPS = {"910b": "A2", "a3": "A3"}


class MatrixError(ValueError):
    """A leg that cannot run as written; the message names the leg and the fix."""


def torch_table(path: Path = TORCH_TABLE) -> dict[str, str]:
    with open(path, encoding="utf-8") as handle:
        return dict(json.load(handle)["torch_for_torch_npu"])


def slug(leg: dict[str, str]) -> str:
    """The leg's name in paths, cache keys and artifact names: `A2-cann-8.2.RC1-torch_npu-2.14.0`."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{leg['soc']}-cann-{leg['cann']}-torch_npu-{leg['torch_npu']}")


def include(legs: list[Any], runners: dict[str, list[str]], table: dict[str, str]) -> list[dict[str, Any]]:
    """The matrix's `include:` entries, one per leg, checked."""
    if not isinstance(legs, list) or not legs:
        raise MatrixError(f"the legs must be a non-empty JSON list of {{soc, image, cann, torch_npu}}, got "
                          f"{legs!r:.200}")
    out, seen = [], set()
    for i, leg in enumerate(legs):
        where = f"leg {i} {json.dumps(leg)[:200]}"
        if not (isinstance(leg, dict) and all(isinstance(leg.get(k), str) and leg[k]
                                               for k in ("soc", "image", "cann", "torch_npu"))):
            raise MatrixError(f"{where}: needs 'soc', 'image', 'cann' and 'torch_npu' strings")
        if leg["soc"] not in runners:
            raise MatrixError(f"{where}: soc must be one of {sorted(runners)}")
        match = _IMAGE.fullmatch(leg["image"])
        if match is None:
            raise MatrixError(f"{where}: the image must be a CANN image tagged <cann>-<910b|a3>-<os>-py<3.x> "
                              f"(e.g. quay.io/ascend/cann:8.2.rc1-a3-ubuntu22.04-py3.11)")
        if _CHIPS[match["chip"]] != leg["soc"]:
            raise MatrixError(f"{where}: the image is built for {_CHIPS[match['chip']]} ({match['chip']}), not "
                              f"{leg['soc']}: take the {leg['soc']} image of CANN {leg['cann']}")
        try:
            cann.parse(leg["cann"])
        except cann.CannVersionError as exc:
            raise MatrixError(f"{where}: {exc}") from exc
        if not cann.same(match["cann"], leg["cann"]):
            raise MatrixError(f"{where}: the image holds CANN {match['cann']}, not {leg['cann']}")
        torch = table.get(leg["torch_npu"])
        if torch is None:
            raise MatrixError(f"{where}: torch-npu {leg['torch_npu']} is not in {TORCH_TABLE.name}: add the torch "
                              f"release it is built against")
        entry = {"soc": leg["soc"], "image": leg["image"], "cann": cann.normalize(leg["cann"]),
                 "torch_npu": leg["torch_npu"], "torch": torch, "runner": runners[leg["soc"]]}
        entry["leg"] = slug(entry)
        if entry["leg"] in seen:
            raise MatrixError(f"{where}: a second leg {entry['leg']}")
        seen.add(entry["leg"])
        out.append(entry)
    return out


def _json(text: str, default: Any, what: str) -> Any:
    if not text.strip():
        return default
    try:
        return json.loads(text)
    except ValueError as exc:
        raise MatrixError(f"{what}: not JSON ({exc}): {text!r:.200}") from exc


def main(argv: list[str] | None = None) -> int:
    """Entry point; prints the GitHub outputs, or the problem and 2."""
    p = argparse.ArgumentParser(prog="python3 -m torchair_conformance.nightly_matrix", description=__doc__.split("\n\n")[0])
    p.add_argument("--legs", default="", help=f"JSON list of legs (default: {LEGS.relative_to(ROOT)})")
    p.add_argument("--a2-runner", default="", help="runs-on labels of the A2 runners (JSON list)")
    p.add_argument("--a3-runner", default="", help="runs-on labels of the A3 runners (JSON list)")
    args = p.parse_args(argv)
    try:
        legs = _json(args.legs, None, "--legs")
        if legs is None:
            legs = json.loads(LEGS.read_text(encoding="utf-8"))["legs"]
        runners = {"A2": _json(args.a2_runner, RUNNERS["A2"], "--a2-runner"),
                   "A3": _json(args.a3_runner, RUNNERS["A3"], "--a3-runner")}
        entries = include(legs, runners, torch_table())
    except MatrixError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    expected = [{k: e[k] for k in ("soc", "cann", "torch_npu")} for e in entries]
    print(f"include={json.dumps(entries, separators=(',', ':'))}")
    print(f"legs={json.dumps(expected, separators=(',', ':'))}")
    print(f"since={time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
