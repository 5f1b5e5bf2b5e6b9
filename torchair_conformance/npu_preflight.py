"""`tox -e npu`'s first command: is this an Ascend host with CANN, and is the torch pin the torch-npu release's?

Standard library only (no torch, no torch-npu: nothing is installed yet), so that a host without an NPU fails here,
naming what is missing and how to fix it, before pip downloads gigabytes or fails on an unrelated pin:

    python torchair_conformance/npu_preflight.py --torch-npu 2.14.0 --torch 2.14.0

Checks: the NPU driver's devices (`/dev/davinci<N>` and `/dev/davinci_manager`), the CANN toolkit
(`$ASCEND_HOME_PATH`, which CANN's `set_env.sh` sets), and that `--torch` is the torch release that
`constraints/torch-npu.json` names for `--torch-npu`. Exit 0 when all hold, 2 otherwise.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

#: where Ascend's install guide puts the toolkit's environment script
DEFAULT_SET_ENV = "/usr/local/Ascend/ascend-toolkit/set_env.sh"
TABLE = Path(__file__).resolve().parents[1] / "constraints" / "torch-npu.json"


def torch_for(torch_npu: str, table: Path = TABLE) -> str | None:
    """The torch release `torch_npu` is built against, from the table, or None when the table lacks it."""
    with open(table, encoding="utf-8") as handle:
        return json.load(handle)["torch_for_torch_npu"].get(torch_npu)


def device_problems(dev: str = "/dev") -> list[str]:
    """What of the NPU driver's device files is missing under `dev`."""
    problems = []
    if not glob.glob(os.path.join(dev, "davinci[0-9]*")):
        problems.append(f"no NPU device: no {dev}/davinci<N> (the Ascend driver is not installed or not loaded on "
                        f"this host, or the container was started without --device {dev}/davinci<N>); run tox -e npu "
                        f"on an Ascend A2/A3 host, or pass the NPUs to the container")
    elif not os.path.exists(os.path.join(dev, "davinci_manager")):
        problems.append(f"no {dev}/davinci_manager: the container needs --device {dev}/davinci_manager (and "
                        f"{dev}/devmm_svm, {dev}/hisi_hdc) beside its NPUs")
    return problems


def cann_problems(environ: Mapping[str, str], set_env: str = DEFAULT_SET_ENV) -> list[str]:
    """Why the CANN toolkit is not usable from this environment, if it is not."""
    home = environ.get("ASCEND_HOME_PATH")
    if home and os.path.isdir(home):
        return []
    if home:
        return [f"ASCEND_HOME_PATH={home} is not a folder: source the set_env.sh of an installed CANN toolkit "
                f"(e.g. source {set_env}) before tox -e npu"]
    if os.path.exists(set_env):
        return [f"ASCEND_HOME_PATH is not set: run `source {set_env}` before tox -e npu"]
    return [f"no CANN toolkit: ASCEND_HOME_PATH is not set and {set_env} does not exist; install the CANN toolkit "
            f"(or use a CANN container image) and source its set_env.sh before tox -e npu"]


def pin_problems(torch_npu: str, torch: str, table: Path = TABLE) -> list[str]:
    """Whether `torch` is the pin the table gives `torch_npu` (a mismatch makes pip fail, later and less clearly)."""
    wanted = torch_for(torch_npu, table)
    if wanted is None:
        return [f"torch-npu {torch_npu} is not in {table}: add the torch release it is built against there "
                f"(TORCH_NPU_VERSION picks the torch-npu release)"]
    if wanted != torch:
        return [f"torch {torch} is not the pin of torch-npu {torch_npu} ({wanted}, from {table}): set "
                f"TORCH_VERSION={wanted}"]
    return []


def main(argv: list[str] | None = None) -> int:
    """Entry point; prints every problem to stderr and returns 2 when there is one."""
    p = argparse.ArgumentParser(prog="npu_preflight", description=__doc__.split("\n\n")[0])
    p.add_argument("--torch-npu", required=True, help="the torch-npu release to install")
    p.add_argument("--torch", required=True, help="the torch release to install beside it")
    p.add_argument("--dev", default="/dev", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    problems = device_problems(args.dev) + cann_problems(os.environ) + pin_problems(args.torch_npu, args.torch)
    for problem in problems:
        print(f"tox -e npu: {problem}", file=sys.stderr)
    if problems:
        print("tox -e npu: stopped before installing anything (see above)", file=sys.stderr)
        return 2
    print(f"tox -e npu: NPU devices, CANN ({os.environ['ASCEND_HOME_PATH']}) and the torch pin are in place")
    return 0


if __name__ == "__main__":
    sys.exit(main())
