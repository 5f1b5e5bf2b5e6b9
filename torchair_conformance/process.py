"""One fresh-process protocol for every worker: a JSON job in, one JSON result out.

The parent starts ``python -m <module>`` with the job as JSON on stdin; the child reads it with `read_job` and
answers with `reply`: one line ``CONFORMANCE_RESULT {json}`` on stdout (the last such line counts, anything else it
prints is output like any other). stdin, stdout and stderr are files, never pipes: many children may run at once
(the ranks of a world) and none may block on a full pipe. A child that dies, runs past its time or prints no result
is a `ProcessError` that carries its exit status, its job and the tails of what it printed.

Used by the suite's workers (`torchair_conformance.workers`), the benchmark worker
(`torchair_conformance.bench.worker`) and the
reference's own warm-start test programs (`tests/programs`). No torch here: the benchmark times its children's
imports, and the parent of a benchmark never imports torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torchair_conformance.errors import ConformanceError

__all__ = ["RESULT_PREFIX", "DEFAULT_TIMEOUT_S", "ProcessError", "Reply", "Started", "child_env", "start", "run",
           "read_job", "reply", "traced"]

RESULT_PREFIX = "CONFORMANCE_RESULT "
# Generous: a child imports torch and may compile with Inductor on a loaded 2-core machine.
DEFAULT_TIMEOUT_S = 600
_PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent)
_TAIL_CHARS = 6000


class ProcessError(ConformanceError, AssertionError):
    """A fresh process died, ran past its time or printed no result."""


@dataclass(frozen=True)
class Reply:
    """What a child answered: its result, and what else it printed (its log lines are on stderr)."""

    result: dict[str, Any]
    stdout: str
    stderr: str
    returncode: int


def child_env(paths: Sequence[str | None] = (), extra: Mapping[str, str | None] | None = None
              ) -> dict[str, str]:
    """The parent's environment with a PYTHONPATH that works from any working folder: this package's parent,
    ``paths`` (None entries skipped), then the parent's own entries made absolute; ``extra`` sets variables, or
    removes those it maps to None."""
    env = dict(os.environ)
    inherited = [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    entries = [_PACKAGE_PARENT, *paths, *inherited]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in entries if p))
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


class Started:
    """A child started by `start`; `reply` waits for its answer."""

    def __init__(self, module: str, job: Mapping[str, Any], proc: subprocess.Popen, folder: Path) -> None:
        self.module, self.job, self.proc, self.folder = module, job, proc, folder

    def reply(self, timeout: float = DEFAULT_TIMEOUT_S) -> Reply:
        """Wait at most ``timeout`` seconds (then kill it) and read its result; `ProcessError` when there is none."""
        timed_out = False
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            self.kill()
        stdout, stderr = (self.folder / "out").read_text(), (self.folder / "err").read_text()
        status = f"ran past its {timeout} s and was killed" if timed_out else f"exited {self.proc.returncode}"
        for line in reversed(stdout.splitlines()):
            if line.startswith(RESULT_PREFIX) and not timed_out:
                return Reply(json.loads(line[len(RESULT_PREFIX):]), stdout, stderr, self.proc.returncode)
        raise ProcessError(
            f"{self.module} {status} without a result\njob: {json.dumps(self.job)[:_TAIL_CHARS]}\n"
            f"stdout tail:\n{stdout[-_TAIL_CHARS // 2:]}\nstderr tail:\n{stderr[-_TAIL_CHARS:]}"
        )

    def kill(self) -> None:
        """Kill the child if it still runs, and reap it."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def start(module: str, job: Mapping[str, Any], folder: os.PathLike, *, cwd: os.PathLike | None = None,
          env: Mapping[str, str] | None = None, python_flags: Sequence[str] = ()) -> Started:
    """Start ``python [python_flags] -m module`` on ``job``; its job, stdout and stderr are files in ``folder``
    (created; the caller removes it after `Started.reply`)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "job.json").write_text(json.dumps(job))
    with open(folder / "job.json") as stdin, open(folder / "out", "w") as out, open(folder / "err", "w") as err:
        proc = subprocess.Popen([sys.executable, *python_flags, "-m", module], stdin=stdin, stdout=out, stderr=err,
                                cwd=cwd, env=dict(env) if env is not None else None)
    return Started(module, job, proc, folder)


def run(module: str, job: Mapping[str, Any], *, cwd: os.PathLike | None = None,
        env: Mapping[str, str] | None = None, python_flags: Sequence[str] = (),
        timeout: float = DEFAULT_TIMEOUT_S) -> Reply:
    """Run ``python -m module`` on ``job`` in a fresh process and return its reply (see `start`)."""
    with tempfile.TemporaryDirectory(prefix="conformance-process-") as folder:
        return start(module, job, folder, cwd=cwd, env=env, python_flags=python_flags).reply(timeout)


def read_job() -> dict[str, Any]:
    """In the child: the job the parent wrote to stdin."""
    return json.loads(sys.stdin.read())


def reply(result: Mapping[str, Any]) -> None:
    """In the child: print the result line the parent reads."""
    sys.stdout.write(RESULT_PREFIX + json.dumps(result) + "\n")
    sys.stdout.flush()


def traced() -> dict[str, Any]:
    """In the child, after its calls: what Dynamo traced in this process (CC-14). ``dynamo_imported`` and
    ``inductor_imported``; ``unique_graphs`` and ``frames_total`` from Dynamo's counters (``frames_total`` None
    where torch does not keep it). A process that never imported Dynamo traced nothing: its counts are 0, read
    without importing Dynamo (2 s of a warm process's CPU, which the counters it would create cannot change)."""
    found: dict[str, Any] = {"dynamo_imported": "torch._dynamo" in sys.modules,
                             "inductor_imported": "torch._inductor" in sys.modules}
    if not found["dynamo_imported"]:
        return {**found, "unique_graphs": 0, "frames_total": 0}
    from torch._dynamo.utils import counters

    frames = counters.get("frames", {})
    return {**found, "unique_graphs": int(counters["stats"]["unique_graphs"]),
            "frames_total": int(frames["total"]) if "total" in frames else None}
