"""The lazy cached callable `cache_compile` returns (SPEC CC-7..CC-22): a lock and an explicit state machine.

States (`State`): UNRESOLVED until the first call, which resolves the path (`paths`) under the lock (threads
calling at the same time wait and use its result), then: WARM when the file loads (`artifact`, checked by `record`
and the module/code guards of `guard_check`; Dynamo's bytecode bound to the live method, the graph rebuilt by its
compiler's loader; no Dynamo), TRACED when Dynamo traces the method (`fullgraph=True`) and the result is saved,
UNCACHED when the cache folder cannot be trusted or named (runs compiled, nothing read or written, a warning says
why). A second trace in the process, or a warm call that a guard or the input check rejects after the first call,
is RECOMPILED: the `<func>` folder is removed and nothing is saved again (CC-12). On the first call a failed guard
or misfit input means a stale file: discarded with a warning naming it, traced and saved afresh (CC-17); a size or
stride of a user input that does not fit is CC-15's `AssertionError`.
"""
from __future__ import annotations

import contextlib
import datetime
import enum
import inspect
import logging
import os
import shutil
import sys
import threading
import types
import warnings
from collections.abc import Callable
from typing import Any

import torch

from torchair_ref import _files, compilers
from torchair_ref.errors import CacheFileError, StaleCacheError, UncacheableError
from torchair_ref.inference import (
    artifact,
    bytecode,
    guard_check,
    guard_kinds,
    guard_read,
    guard_spec,
    inputs,
    paths,
    record,
)

logger = logging.getLogger("torchair_ref")

class State(enum.Enum):
    """Where a `CachedFunction` stands (see the module docstring)."""

    UNRESOLVED = "unresolved"
    UNCACHED = "uncached"
    WARM = "warm"
    TRACED = "traced"
    RECOMPILED = "recompiled"


class CachedFunction:
    """CC-7: the callable `cache_compile` returns; see the module docstring for what its first call does."""

    def __init__(
        self,
        func: types.MethodType,
        *,
        config: Any,
        dynamic: bool,
        cache_dir: Any,
        ranks: tuple[int | None, int | None, int | None],
        decompositions: dict,
        ge_cache: bool,
    ) -> None:
        self._method = func
        self._config = config
        self._dynamic = dynamic
        self._cache_dir = cache_dir
        self._ranks = ranks
        self._decompositions = decompositions
        self._ge_cache = ge_cache
        self._call: Callable | None = None
        #: the loaded graph's bound bytecode, while it is `_call` (a later misfit then recompiles, CC-12)
        self._warm_call: Callable | None = None
        self._path: str | None = None
        self._root = ""
        self._traces = 0
        self._compile_ids: list = []
        self._compilation: Any = None
        self._model_info = ""
        self._traced: list[record.TracedSource] | UncacheableError = UncacheableError(
            "Dynamo did not report the traced code")
        #: why the graph traced in this process cannot be saved, found outside the graph compiler (None: it can)
        self._uncacheable: UncacheableError | None = None
        #: a warm load failure to carry into the next record: `{"reason": ...}` (see `_try_load`)
        self._load_failure: dict[str, str] | None = None
        self._save_allowed = True
        self._recompile_reason = ""
        self._lock = threading.RLock()
        self.state = State.UNRESOLVED
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__doc__ = func.__doc__

    @property
    def cache_file(self) -> str | None:
        """The `compiled_module` path, once the first call has resolved it (CC-8)."""
        return self._path

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        call = self._call
        if call is None:
            with self._lock:
                call = self._call
                if call is None:
                    return self._first_call(args, kwargs)
        try:
            return call(*args, **kwargs)
        except inputs.InputMismatchError as exc:  # only the warm graph raises it, before any kernel runs
            return self._after_mismatch(exc, args, kwargs)

    def __repr__(self) -> str:
        return f"<cache_compile of {self.__qualname__}, cache {self._path or '(not resolved yet)'}>"

    # -- first call -------------------------------------------------------------------------------------------

    def _first_call(self, args: tuple, kwargs: dict) -> Any:
        try:
            self._path = path = self._resolve_path()
        except paths.UnusableNameError as exc:
            return self._run_uncached(str(exc), args, kwargs)
        link = _files.symlink_below(self._root, self._path)
        if link is not None:
            self._discard(path, f"{link} is a symlink; the levels below the cache root are never followed", 4)
            with contextlib.suppress(OSError):
                os.unlink(link)  # the link itself, never what it points to
        kernels = os.path.join(os.path.dirname(path), artifact.KERNEL_DIR)
        damaged = _files.damaged_level(self._root, kernels)
        if damaged is not None:
            self._discard(path, f"{damaged} is not a directory", 4)
            with contextlib.suppress(OSError):
                os.unlink(damaged)  # a file of ours in a folder of ours (never waited on, never followed)
            self._remove_func_dir()
        problem = _files.unsafe_level(self._root, kernels)
        if problem is not None:
            return self._run_uncached(problem, args, kwargs)
        if os.path.lexists(path):
            warm = self._try_load(path)
            if warm is not None:
                try:
                    result = warm(*args, **kwargs)
                except inputs.InputMismatchError as exc:
                    # The file fits this function but not what it is called with (model.to(dtype), other device):
                    # a cold process would compile for these inputs, so this one does too, and saves it.
                    self._discard(path, StaleCacheError(f"the first call does not fit the graph: {exc}"))
                    self._remove_func_dir()
                else:
                    self._call, self.state = warm, State.WARM
                    return result
        return self._compile_and_run(path, args, kwargs)

    def _run_uncached(self, reason: str, args: tuple, kwargs: dict) -> Any:
        """CC-17: compile and run without reading or writing any cache file, saying why (log and warning)."""
        self._path, self.state = None, State.UNCACHED
        logger.warning("%s runs without its cache: %s", self.__qualname__, reason)
        warnings.warn(f"{self.__qualname__} runs without its cache: {reason}", UserWarning, stacklevel=4)
        return self._compile_and_run(None, args, kwargs)

    def _resolve_path(self) -> str:
        """CC-7/CC-8: read cwd, TORCHAIR_CACHE_HOME and torch.distributed now, once."""
        from torchair_ref.config import options_string

        module = self._method.__self__
        world_size, process_rank = paths.distributed_state()
        global_rank, tp_rank, pp_rank = self._ranks
        root = paths.resolve_root(self._cache_dir, env=os.environ, cwd=os.getcwd())
        info = paths.model_info(
            type(module).__name__,
            str(module),
            options_string(self._config),
            self._dynamic,
            paths.cache_tags(self._config.mode, self._ge_cache),
            deterministic_level=paths.npu_deterministic_level(sys.modules),
        )
        dist = paths.dist_level(
            world_size=world_size, process_rank=process_rank, global_rank=global_rank, tp_rank=tp_rank, pp_rank=pp_rank
        )
        # CC-8's realpath: the root the caller named may be reached through symlinks, but the levels below it are
        # the cache's own, so a symlink there is damage (CC-17) and is never resolved into the path.
        self._root = os.path.realpath(root)
        self._model_info = info
        return paths.cache_file(self._root, info, dist, self._method.__name__)

    def _try_load(self, path: str) -> Callable | None:
        """CC-14/CC-17: the warm callable, or None after discarding a cache that cannot be trusted.

        A file that is valid and current but that the loader fails on is rebuilt once; its new record remembers
        the failure, and when the rebuilt file fails the same way it is kept and not rewritten again (each process
        then compiles, with a warning, instead of rewriting the file every time).
        """
        loaded: record.CacheRecord | None = None
        try:
            loaded = record.checked(artifact.read(path), self._method, self._model_info)
            call = self._warm_callable(loaded, os.path.join(os.path.dirname(path), artifact.KERNEL_DIR))
        except Exception as exc:  # noqa: BLE001 - any failure to load means: rebuild, never crash (CC-17)
            if loaded is None or isinstance(exc, CacheFileError):  # broken or stale: rebuilt, no failure kept
                self._discard(path, exc)
                self._remove_func_dir()
                return None
            failure = {"reason": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
            if loaded.extra.get("load_failure") == failure:
                self._save_allowed = False
                logger.warning("%s: kept cache %s fails to load again (%s); compiling without rewriting it.",
                               self.__qualname__, path, failure["reason"])
                warnings.warn(f"Cache {path} fails to load the same way twice ({failure['reason']}); compiling "
                              "without rewriting it", UserWarning, stacklevel=5)
                return None
            self._load_failure = failure
            self._discard(path, exc)
            self._remove_func_dir()
            return None
        logger.info("%s loaded from %s", self.__qualname__, path)
        return call

    def _discard(self, path: str, reason: Any, stacklevel: int = 5) -> None:
        """CC-17: say (log and warning) that the cache at `path` is not used and why (the warning points at the
        caller's first call: `stacklevel` counts the frames between it and here)."""
        kind = "stale" if isinstance(reason, StaleCacheError) else "broken"
        reason = str(reason) or type(reason).__name__  # a MemoryError has no message
        logger.warning("Discarding %s cache %s (%s); compiling afresh.", kind, path, reason)
        warnings.warn(f"Discarding {kind} cache {path}: {reason}", UserWarning, stacklevel=stacklevel)

    def _warm_callable(self, loaded: record.CacheRecord, kernel_dir: str) -> Callable:
        function = self._method.__func__
        record.check_input_records(loaded.inputs)
        module_globals = bytecode.ModuleView(function.__globals__)
        module_globals.update(bytecode.injected_objects(loaded.globals))
        failed = guard_check.first_call_failure(loaded.guards, self._method.__self__, function, module_globals)
        if failed is not None:
            raise StaleCacheError(f"the module or the code it reaches does not fit the graph: {failed}")
        boxed = compilers.load(loaded.graph, kernel_dir, inputs.guaranteed_layouts(loaded.inputs))
        graph = inputs.GraphInputCheck(boxed, loaded.inputs, self._raise_mismatch)
        rebuilt, graph_name = bytecode.rebuild(
            bytecode.decode(loaded.bytecode), loaded.globals, graph._checked_call, function
        )
        graph.bind(rebuilt.__globals__, graph_name)
        guarded = guard_check.guarded_method(function, rebuilt, loaded.guards, self._guard_failed, module_globals)
        self._warm_call = types.MethodType(guarded, self._method.__self__)  # the graph switches grad mode (CC-16)
        return self._warm_call

    @staticmethod
    def _guard_failed(spec: guard_kinds.GuardSpec, *args: Any, **kwargs: Any) -> Any:
        """CC-21: a call that a guard of the cold trace rejects is traced afresh (stale on the first call)."""
        found = inputs.Mismatch("type", f"Dynamo's guard {spec.guard} fails: {spec.text}")
        raise inputs.InputMismatchError(found)

    def _raise_mismatch(self, found: inputs.Mismatch) -> None:
        """CC-15: a size or stride that does not fit on the first warm call is an `AssertionError`; anything else
        (a dtype, device or rank, or a size on a later call) is traced afresh, as a cold process would."""
        if found.kind == "layout" and self._call is None:
            raise AssertionError(found.message)
        raise inputs.InputMismatchError(found)

    def _after_mismatch(self, exc: inputs.InputMismatchError, args: tuple, kwargs: dict) -> Any:
        """CC-12: a later call that does not fit the loaded graph is traced (a recompile), as in a cold process."""
        with self._lock:
            if self._warm_call is not None and self._call is self._warm_call:
                self._recompile_reason = f" ({exc})"
                self._traces, self._compile_ids = 1, [object()]  # the loaded graph counts as the first trace
                self._compile_and_run(self._path or "", args, kwargs, run=False)
        return self._call(*args, **kwargs)

    # -- cold path --------------------------------------------------------------------------------------------

    def _compile_and_run(self, path: str | None, args: tuple, kwargs: dict, run: bool = True) -> Any:
        function = self._method.__func__
        # A fresh code object: Dynamo's cache (and our trace count) then belongs to this CachedFunction alone.
        traced = types.FunctionType(
            function.__code__.replace(), function.__globals__, function.__name__, function.__defaults__,
            function.__closure__,
        )
        traced.__kwdefaults__ = function.__kwdefaults__
        traced.__qualname__ = function.__qualname__
        compiled = torch.compile(
            types.MethodType(traced, self._method.__self__), backend=self._backend, fullgraph=True,
            dynamic=self._dynamic,
        )
        call = inputs.inference(compiled)
        if not run:
            self._call = call
            return None
        try:
            result = call(*args, **kwargs)
        finally:
            self._call = call  # after the first call, even a failed one: threads waiting on it then use it
        if self._traces == 1 and self._save_allowed and path is not None:
            self._save(path, traced.__code__, args, kwargs)
        return result

    def _backend(self, gm: Any, example_inputs: list) -> Callable:
        from torchair_ref.backend import compile_dynamo_graph

        # Dynamo may restart its analysis and call the backend again for the same compile (attempt 0/0_1): that
        # is still the first trace. A new compile id (0/1) is a recompile (CC-12).
        compile_id, traced = guard_read.trace_facts()
        if isinstance(compile_id, UncacheableError):
            self._uncacheable, compile_id = compile_id, object()
        if compile_id not in self._compile_ids:
            self._compile_ids.append(compile_id)
        self._traces = len(self._compile_ids)
        if self._traces == 1:
            self._traced = traced
        if self._traces == 1 and self.state is State.UNRESOLVED:
            self.state = State.TRACED
        if self._traces > 1:
            self.state = State.RECOMPILED
            warnings.warn(
                f"Skip cache as {self.__qualname__} recompiled (trace {self._traces}){self._recompile_reason}; removed "
                f"{os.path.dirname(self._path or '')} and will not save it again in this process. Keep shapes "
                "(or use dynamic=True) and Python values on guarded paths fixed to use the cache.",
                UserWarning,
                stacklevel=2,
            )
            self._remove_func_dir()
        compilation = compile_dynamo_graph(
            gm,
            example_inputs,
            config=self._config,
            decompositions=self._decompositions,
            reject_rng=True,
            keep_kernels=self._ge_cache and self._config.mode == "max-autotune",
        )
        if self._traces == 1:
            self._compilation = compilation
        return compilation.runnable

    def _save(self, path: str, traced_code: types.CodeType, args: tuple, kwargs: dict) -> None:
        """CC-11/CC-20: write the artifact, or warn why it could not be written (the call already succeeded)."""
        try:
            link = _files.symlink_below(self._root, self._path)
            if link is not None:
                raise OSError(f"{link} is a symlink; the cache is never written through one")
            payload, files = self._payload(traced_code, args, kwargs)
            folder = os.path.dirname(path)
            _files.make_private_levels(self._root, os.path.join(folder, artifact.KERNEL_DIR) if files else folder)
            if not artifact.write(path, payload, files):
                logger.info("%s not saved: another process is saving %s", self.__qualname__, path)
                return
        except UncacheableError as exc:
            warnings.warn(f"{self.__qualname__} is not cached: {exc}", UserWarning, stacklevel=4)
            return
        except Exception as exc:  # noqa: BLE001 - the call succeeded; a failed save must not turn it into an error
            warnings.warn(f"{self.__qualname__} could not be cached at {path}: {exc}", UserWarning, stacklevel=4)
            return
        logger.info("%s saved to %s", self.__qualname__, path)

    def _payload(self, traced_code: types.CodeType, args: tuple, kwargs: dict) -> tuple[dict, dict[str, bytes]]:
        from torchair_ref.config import options_string

        compilation = self._compilation
        graph = compilation.graph if compilation is not None else None
        if graph is None:
            raise UncacheableError("no graph was compiled")
        for reason in (graph.uncacheable, self._uncacheable, self._traced):
            if isinstance(reason, UncacheableError):
                raise reason
        function = self._method.__func__
        transformed = bytecode.transformed_code(traced_code)
        try:
            guards = guard_read.guard_specs(traced_code, function, self._method.__self__, args, kwargs,
                                            frozenset(source for source, _, _ in compilation.inputs))
        except guard_spec.UnknownGuard as exc:
            raise UncacheableError(f"a warm start cannot check Dynamo's guard {exc}") from exc
        written = record.CacheRecord(
            name=f"{function.__qualname__}{inspect.signature(function)}",
            created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            environment=artifact.environment(compilation.device),
            function={
                "module": function.__module__,
                "qualname": function.__qualname__,
                "code_digest": guard_spec.code_digest(function.__code__),
            },
            model_info=self._model_info,
            training=bool(self._method.__self__.training),
            traced_sources=self._traced,
            options={
                "mode": self._config.mode,
                "dynamic": self._dynamic,
                "ge_cache": self._ge_cache,
                "options_string": options_string(self._config),
            },
            bytecode=bytecode.encode(transformed),
            globals=bytecode.injected_globals(transformed, function.__globals__, guard_spec.global_names(guards)),
            inputs=[record.describe_input(source, role, value) for source, role, value in compilation.inputs],
            guards=guards,
            graph=graph.record,
            extra={"load_failure": self._load_failure} if self._load_failure else {},
        )
        return written.to_payload(), graph.files

    def _remove_func_dir(self) -> None:
        """CC-12/CC-17: remove this function's folder (never its siblings or parents)."""
        if self._path:
            shutil.rmtree(os.path.dirname(self._path), ignore_errors=True)
