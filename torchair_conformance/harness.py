"""In-process and subprocess plumbing shared by the tests: configs, Dynamo hygiene, log capture, workers.

Everything that touches the implementation goes through its public surface (IMPL-1).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import sys
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from torchair_conformance import process
from torchair_conformance.impl import ENV_VAR, Implementation
from torchair_conformance.oracle import FILE_NAME

__all__ = [
    "make_config",
    "fast_options",
    "fresh_dynamo",
    "unique_graphs",
    "Captured",
    "capture",
    "scratch",
    "cache_files",
    "worker_env",
    "run_worker",
    "run_ranks",
    "export_threshold",
    "Export",
    "export_model",
]



def make_config(impl: Implementation, options: Sequence[tuple[str, Any]]) -> Any:
    """CF-1: a fresh ``CompilerConfig`` with each ``(dotted.path, value)`` assigned as written (``c.a.b = v``)."""
    config = impl.CompilerConfig()
    for path, value in options:
        *groups, leaf = path.split(".")
        target = config
        for group in groups:
            target = getattr(target, group)
        setattr(target, leaf, value)
    return config


def fast_options(impl: Implementation) -> list[tuple[str, Any]]:
    """IMPL-2: the assignments a compile-heavy property adds: the implementation's ``fast_cache_config()``, or none
    under a profile that uses the true default config (``nightly``)."""
    from torchair_conformance import profiles

    return [] if profiles.active().true_default_config else impl.fast_cache_options()


def fresh_dynamo() -> None:
    """Forget every Dynamo cache entry and counter, so one example cannot hit another's recompile limits."""
    import torch._dynamo  # here, not at import: a worker that never traces never loads Dynamo (`process.traced`)
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()


def unique_graphs() -> int:
    """CC-14: the number of graphs Dynamo has traced in this process."""
    return int(process.traced()["unique_graphs"])


@dataclass
class Captured:
    """Log records of the implementation's logger and Python warnings seen inside ``capture``."""

    records: list[logging.LogRecord] = field(default_factory=list)
    warnings: list[warnings.WarningMessage] = field(default_factory=list)

    def messages(self, level: int = logging.NOTSET) -> list[str]:
        return [r.getMessage() for r in self.records if r.levelno >= level]

    def at(self, level: int) -> list[str]:
        return [r.getMessage() for r in self.records if r.levelno == level]

    def warning_texts(self, category: type = Warning) -> list[str]:
        return [str(w.message) for w in self.warnings if issubclass(w.category, category)]


class _ListHandler(logging.Handler):
    def __init__(self, sink: list[logging.LogRecord]) -> None:
        super().__init__(logging.DEBUG)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self.sink.append(record)


@contextlib.contextmanager
def capture(logger: logging.Logger) -> Iterator[Captured]:
    """Record ``logger``'s INFO-and-above records and every warning, restoring the logger's level after."""
    captured = Captured()
    handler = _ListHandler(captured.records)
    old_level = logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            yield captured
            captured.warnings.extend(seen)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)


@contextlib.contextmanager
def scratch(prefix: str = "conformance-") -> Iterator[Path]:
    """A fresh directory, removed afterwards; the cwd and ``$TORCHAIR_CACHE_HOME`` are restored too."""
    cwd = os.getcwd()
    home = os.environ.get("TORCHAIR_CACHE_HOME")
    path = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    try:
        yield path
    finally:
        os.chdir(cwd)
        if home is None:
            os.environ.pop("TORCHAIR_CACHE_HOME", None)
        else:
            os.environ["TORCHAIR_CACHE_HOME"] = home
        # Broken-cache tests chown/chmod files: make everything removable first.
        for root, dirs, files in os.walk(path):
            for name in dirs + files:
                full = os.path.join(root, name)
                if not os.path.islink(full):
                    with contextlib.suppress(OSError):
                        os.chmod(full, 0o700)
        shutil.rmtree(path, ignore_errors=True)


def cache_files(root: os.PathLike | str) -> list[str]:
    """Every ``compiled_module`` under ``root`` (real paths, sorted)."""
    found = []
    for dirpath, _, files in os.walk(root):
        if FILE_NAME in files:
            found.append(os.path.realpath(os.path.join(dirpath, FILE_NAME)))
    return sorted(found)


def _import_root(impl: str) -> str | None:
    """The sys.path entry the implementation under test was imported from (so workers import the same one)."""
    top = sys.modules.get(impl.split(".")[0])
    origin = getattr(top, "__file__", None)
    if not origin:
        return None
    path = Path(origin).resolve().parent
    return str(path.parent if path.name == impl.split(".")[0] else path)


def worker_env(impl: str, extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """A worker's environment: the implementation's import root on PYTHONPATH, ``$TORCHAIR_CONFORMANCE_IMPL`` set,
    no ``$TORCHAIR_CACHE_HOME`` unless ``extra`` sets it."""
    return process.child_env([_import_root(impl)], {"TORCHAIR_CACHE_HOME": None, ENV_VAR: impl, **(extra or {})})


def run_worker(kind: str, job: Mapping[str, Any], *, impl: str, cwd: os.PathLike | None = None,
               env: Mapping[str, str | None] | None = None,
               timeout: float = process.DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """Run ``python -m torchair_conformance.workers.<kind>`` on ``job`` in a fresh process and return its JSON
    result."""
    return process.run(f"torchair_conformance.workers.{kind}", {**job, "impl": impl}, cwd=cwd,
                       env=worker_env(impl, env),
                       timeout=timeout).result


@contextlib.contextmanager
def export_threshold(impl: Implementation, nbytes: int | None) -> Iterator[None]:
    """EX-6 (IMPL-2 ``set_externalize_threshold``): exports inside use ``nbytes`` as the threshold; None: the real
    one. Callers check the ``threshold_override`` capability first."""
    if nbytes is None:
        yield
        return
    override = impl.threshold_override(nbytes)
    if override is None:
        raise AssertionError(f"{impl.name} declares threshold_override but offers no set_externalize_threshold hook")
    with override:
        yield


@dataclass
class Export:
    """One in-process ``dynamo_export`` of a described model: what was exported and what happened."""

    module: torch.nn.Module
    args: tuple
    kwargs: dict[str, Any]
    returned: Any
    captured: Captured


def export_model(impl: Implementation, spec: Mapping[str, Any], batch: Sequence[int], input_seed: int,
                 export_path: Any, *, export_name: str | None = None, dynamic: bool | None = None,
                 options: Sequence[tuple[str, Any]] = (), threshold: int | None = None) -> Export:
    """EX-1: build ``spec``'s model and inputs, and ``dynamo_export`` them (``export_name``/``dynamic`` left to
    their defaults when None; a config only when ``options`` assigns something)."""
    from torchair_conformance import export_zoo

    fresh_dynamo()
    module = export_zoo.build_export_model(spec)
    args, kwargs = export_zoo.export_inputs(spec, batch, input_seed)
    named: dict[str, Any] = {"export_path": export_path}
    if export_name is not None:
        named["export_name"] = export_name
    if dynamic is not None:
        named["dynamic"] = dynamic
    if options:
        named["config"] = make_config(impl, options)
    with capture(impl.logger) as captured, export_threshold(impl, threshold):
        returned = impl.dynamo_export(*args, model=module, **named, **kwargs)
    return Export(module, args, kwargs, returned, captured)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(jobs: Sequence[Mapping[str, Any]], *, impl: str, cwd: os.PathLike | None = None,
              env: Mapping[str, str | None] | None = None, timeout: float = process.DEFAULT_TIMEOUT_S,
              worker: str = "rank") -> list[dict[str, Any]]:
    """Run one ``torchair_conformance.workers.<worker>`` process per job as a gloo world on 127.0.0.1 (rank = job
    index):
    ``rank`` runs ``cache_compile`` jobs, ``export`` runs ``dynamo_export`` jobs."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="conformance-ranks-") as tmp:
        started: list[process.Started] = []
        try:
            for rank, job in enumerate(jobs):
                rank_env = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": str(rank),
                            "WORLD_SIZE": str(len(jobs)), **(env or {})}
                started.append(process.start(f"torchair_conformance.workers.{worker}", {**job, "impl": impl},
                                             Path(tmp, f"rank{rank}"), cwd=cwd, env=worker_env(impl, rank_env)))
            return [s.reply(timeout).result for s in started]
        finally:
            for s in started:
                s.kill()


@dataclass
class RootPlan:
    """How one example gives the cache root (``strategies.cache_roots``) and the root the formula then yields."""

    cache_dir: Any
    env_before: str | None
    env_after: str | None
    cwd_at_cache_compile: Path
    cwd_at_first_call: Path
    expected_root: str


def plan_root(spec: Mapping[str, Any], base: Path) -> RootPlan:
    """CC-7/CC-8: turn a drawn root description into concrete arguments, env and cwds under ``base``."""
    rel = os.path.join(*spec["segments"])
    first, second = base / "cwd_a", base / "cwd_b"
    first.mkdir()
    second.mkdir()
    kind = spec["kind"]
    if kind == "absolute":
        root = base / "abs" / rel
        if spec.get("exists"):
            root.mkdir(parents=True)
        arg: Any = root if spec.get("as_path") else str(root)
        return RootPlan(arg, None, None, first, first, str(root))
    if kind == "relative":
        return RootPlan(rel, None, None, first, first, str(first / rel))
    if kind == "env":
        home = str(base / "home" / rel)
        late = spec.get("set_after_cache_compile")
        return RootPlan(spec.get("falsy_cache_dir"), None if late else home, home if late else None, first, first,
                        home)
    if kind == "default":
        return RootPlan(spec.get("falsy_cache_dir"), None, None, first, first, str(first / ".torchair_cache"))
    if kind == "chdir":
        if spec.get("relative"):
            return RootPlan(rel, None, None, first, second, str(second / rel))
        return RootPlan(None, None, None, first, second, str(second / ".torchair_cache"))
    raise ValueError(f"unknown root kind {kind!r}")


@contextlib.contextmanager
def root_env(plan: RootPlan) -> Iterator[None]:
    """Enter ``plan``'s cwd and ``$TORCHAIR_CACHE_HOME`` for ``cache_compile`` (restored by ``scratch``)."""
    os.environ.pop("TORCHAIR_CACHE_HOME", None)
    if plan.env_before is not None:
        os.environ["TORCHAIR_CACHE_HOME"] = plan.env_before
    os.chdir(plan.cwd_at_cache_compile)
    yield


def before_first_call(plan: RootPlan) -> None:
    """Apply what changes between ``cache_compile`` and the first call (cwd, a late ``$TORCHAIR_CACHE_HOME``)."""
    if plan.env_after is not None:
        os.environ["TORCHAIR_CACHE_HOME"] = plan.env_after
    os.chdir(plan.cwd_at_first_call)


def expected_cache_file(impl: Implementation, module: torch.nn.Module, method: str,
                        options: Sequence[tuple[str, Any]], *, dynamic: bool, root: str, ge_cache: bool = False,
                        ranks: Mapping[str, int | None] | None = None, world_size: int = 1,
                        rank: int = 0) -> str:
    """CC-8: where the suite's own formula puts the cache file for these choices."""
    from torchair_conformance import oracle
    from torchair_conformance.strategies import mode_of

    ranks = ranks or {}
    config = make_config(impl, options)
    info = oracle.model_info(type(module).__name__, str(module), oracle.options_string(config.as_dict()), bool(dynamic),
                             oracle.tags_for(mode_of(options), ge_cache), oracle.deterministic_level())
    dist = oracle.dist_level(world_size, rank, ranks.get("global_rank"), ranks.get("tp_rank"), ranks.get("pp_rank"))
    return oracle.cache_file(root, info, dist, method)
