"""The lazy cached callable `cache_compile` returns (SPEC CC-7..CC-22): a lock and an explicit state machine.

States (`State`): UNRESOLVED until the first call, which resolves the path (`paths`) under the lock (threads
calling at the same time wait and use its result), then: WARM when the file loads (`artifact`, checked by `record`
and the module/code guards of `guard_check`; Dynamo's bytecode bound to the live method, the graph rebuilt by its
compiler's loader; no Dynamo), TRACED when Dynamo traces the method (`fullgraph=True`) and the result is saved,
UNCACHED when the cache folder cannot be trusted or named (runs compiled, nothing read or written, a warning says
why). A second trace in the process, or a warm call that a guard or the input check rejects after the first call,
is RECOMPILED: the `<func>` folder is removed and nothing is saved again (CC-12). A file holds up to 8 variants
(`variants`, CC-23): the first call runs the first whose guards and input checks pass (`loading`); when none does,
the method is traced and saved with the new variant added beside the others (a warning names what differs); a
variant written for other code or another environment, and a broken file, are discarded (CC-17). A size or stride
of a user input that does not fit is CC-15's `AssertionError`. A copy of the module copies the callable (CC-24).
"""
from __future__ import annotations

import enum
import logging
import os
import shutil
import threading
import types
from collections.abc import Callable
from typing import Any, Final, cast

import torch

from torchair_ref import _files
from torchair_ref._warn import warn_user
from torchair_ref.errors import BrokenCacheError, CacheFileError, StaleCacheError, UncacheableError
from torchair_ref.inference import (
    artifact,
    copies,
    guard_check,
    guard_read,
    guard_values,
    inputs,
    loading,
    paths,
    record,
    saving,
    variants,
)

logger = logging.getLogger("torchair_ref")


class _NoFit(enum.Enum):
    NO_FIT = "no fit"  # what a warm start returns when no variant of the file serves the first call


_NO_FIT: Final = _NoFit.NO_FIT


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
        decompositions: dict[Any, Any],
        ge_cache: bool,
    ) -> None:
        self._method = func
        self._config = config
        self._dynamic = dynamic
        self._cache_dir = cache_dir
        self._ranks = ranks
        self._decompositions = decompositions
        self._ge_cache = ge_cache
        self._call: Callable[..., Any] | None = None
        #: the loaded graph's bound bytecode, while it is `_call` (a later misfit then recompiles, CC-12)
        self._warm_call: Callable[..., Any] | None = None
        self._path: str | None = None
        self._root = ""
        self._traces = 0
        self._compile_ids: list[Any] = []
        self._compilation: Any = None
        self._model_info = ""
        self._traced: guard_read.Traced | UncacheableError = UncacheableError(
            "Dynamo did not report the traced code")
        #: why the graph traced in this process cannot be saved, found outside the graph compiler (None: it can)
        self._uncacheable: UncacheableError | None = None
        #: a warm load failure to carry into the next record: `{"reason": ...}` (see `_load_failed`)
        self._load_failure: dict[str, str] | None = None
        #: the file's variants that fit this function but not this process's first call (CC-23)
        self._kept: list[dict[str, Any]] = []
        self._save_allowed = True
        self._recompile_reason = ""
        self._before = guard_read.Before()
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

    def __reduce__(self) -> tuple[Any, ...]:
        """CC-24: `copy.deepcopy` and `pickle` copy what `cache_compile` was given, bound to the copied module."""
        options = {"config": self._config, "dynamic": self._dynamic, "cache_dir": self._cache_dir,
                   "ranks": self._ranks, "ge_cache": self._ge_cache}
        return rebuild, (self._method, options, copies.portable_decompositions(self._decompositions))

    def __repr__(self) -> str:
        return f"<cache_compile of {self.__qualname__}, cache {self._path or '(not resolved yet)'}>"

    # -- first call -------------------------------------------------------------------------------------------

    def _first_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            self._path = path = self._resolve_path()
        except paths.UnusableNameError as exc:
            return self._run_uncached(str(exc), args, kwargs)
        kernels = os.path.join(os.path.dirname(path), artifact.KERNEL_DIR)
        for removed in _files.repair_levels(self._root, path, kernels):
            self._discard(path, removed)
        problem = _files.unsafe_level(self._root, kernels)
        if problem is not None:
            return self._run_uncached(problem, args, kwargs)
        if os.path.lexists(path):
            outcome = self._warm_start(path, args, kwargs)
            if outcome is not _NO_FIT:
                return outcome
        return self._compile_and_run(path, args, kwargs)

    def _run_uncached(self, reason: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """CC-17: compile and run without reading or writing any cache file, saying why (log and warning)."""
        self._path, self.state = None, State.UNCACHED
        warn_user(f"{self.__qualname__} runs without its cache: {reason}", logger)
        return self._compile_and_run(None, args, kwargs)

    def _resolve_path(self) -> str:
        """CC-7/CC-8: read cwd, TORCHAIR_CACHE_HOME and torch.distributed now, once."""
        self._root, self._model_info, path = paths.resolve(
            self._method, self._config, dynamic=self._dynamic, ge_cache=self._ge_cache, cache_dir=self._cache_dir,
            ranks=self._ranks)
        return path

    def _warm_start(self, path: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """CC-14/CC-23: run the first variant of the file that fits this first call, or `_NO_FIT` after keeping
        (`self._kept`) the variants that belong to this function and environment but not to this process."""
        self._kept = []  # a first call that raised (a wrong argument) leaves none behind for the next
        try:
            payloads = variants.split(artifact.read(path))
        except Exception as exc:  # noqa: BLE001 - any failure to read means: rebuild, never crash (CC-17)
            self._discard(path, exc)
            self._remove_func_dir()
            return _NO_FIT
        kernel_dir = os.path.join(os.path.dirname(path), artifact.KERNEL_DIR)
        misses: list[str] = []
        for payload in payloads:
            with guard_values.digests_kept():  # each class digested once: as it was when the check began
                warm = self._try_load(path, payload, kernel_dir, misses, args, kwargs)
            if warm is _NO_FIT:
                return _NO_FIT
            if warm is None:
                continue
            try:
                result = warm(*args, **kwargs)
            except inputs.InputMismatchError as exc:
                # The variant fits this function but not what it is called with (another thread count, static
                # shape, model.to(dtype)): a cold process would compile for these inputs, so this one does too.
                misses.append(str(exc))
                self._kept.append(payload)
                continue
            self._call, self.state = warm, State.WARM
            logger.info("%s loaded from %s", self.__qualname__, path)
            return result
        reason = "; ".join(misses) or "no variant"
        if self._kept:
            message = (f"Stale cache {path} for this process: {reason}; compiling afresh and adding a variant "
                       f"beside the {len(self._kept)} it keeps")
            warn_user(message, logger)
        else:
            self._discard(path, StaleCacheError(reason))
            self._remove_func_dir()
        return _NO_FIT

    def _try_load(
        self, path: str, payload: dict[str, Any], kernel_dir: str, misses: list[str], args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Callable[..., Any] | _NoFit | None:
        """CC-14/CC-17/CC-23: one variant's warm callable for this first call; None when it does not fit (a variant
        whose guards fail is kept, one written for other code or another environment is dropped); `_NO_FIT` after
        discarding a cache that cannot be trusted (`_load_failed`)."""
        try:
            loaded = record.checked(payload, self._method, self._model_info)
        except StaleCacheError as exc:
            misses.append(str(exc))
            return None
        except Exception as exc:  # noqa: BLE001 - any failure to load means: rebuild, never crash (CC-17)
            self._discard(path, exc)
            self._remove_func_dir()
            return _NO_FIT
        try:
            guarded = loading.guards(loaded, self._method, self._guard_failed)
        except StaleCacheError as exc:
            misses.append(str(exc))
            self._kept.append(payload)  # CC-23: it fits this function but not this process: it stays in the file
            return None
        except Exception as exc:  # noqa: BLE001 - any failure to load means: rebuild, never crash (CC-17)
            return self._load_failed(path, loaded, exc)
        try:
            # The variant's guards against this first call, before its graph is loaded (CC-23: a variant that does
            # not fit costs no load). Only a failing guard is handled here: what else the call raises (an argument
            # the method does not take) reaches the caller, the file untouched.
            types.MethodType(guarded, self._method.__self__)(*args, **kwargs)
        except inputs.InputMismatchError as exc:
            misses.append(str(exc))
            self._kept.append(payload)  # CC-23: it fits this function but not this process: it stays in the file
            return None
        try:
            return self._warm_callable(guarded, loaded, kernel_dir)
        except Exception as exc:  # noqa: BLE001 - any failure to load means: rebuild, never crash (CC-17)
            return self._load_failed(path, loaded, exc)

    def _load_failed(self, path: str, loaded: record.CacheRecord, exc: Exception) -> _NoFit:
        """CC-17: a variant that is valid and current but that the loader fails on is rebuilt once (`_NO_FIT`); its
        new record remembers the failure, and when the rebuilt file fails the same way it is kept and not rewritten
        again (each process then compiles, with a warning, instead of rewriting the file every time)."""
        if not isinstance(exc, CacheFileError):
            failure = {"reason": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
            if loaded.extra.get("load_failure") == failure:
                self._save_allowed = False
                warn_user(f"{self.__qualname__}: cache {path} fails to load the same way twice "
                          f"({failure['reason']}); compiling without rewriting it", logger)
                return _NO_FIT
            self._load_failure = failure
        self._discard(path, exc)
        self._remove_func_dir()
        return _NO_FIT

    def _discard(self, path: str, reason: Any) -> None:
        """CC-17: say (log and warning, at the caller's call) that the cache at `path` is not used and why."""
        kind = "stale" if isinstance(reason, StaleCacheError) else "broken"
        reason = str(reason) or type(reason).__name__  # a MemoryError has no message
        warn_user(f"Discarding {kind} cache {path}: {reason}; compiling afresh", logger)

    def _warm_callable(self, guarded: types.FunctionType, loaded: record.CacheRecord,
                       kernel_dir: str) -> Callable[..., Any]:
        """CC-14: the variant's warm callable: its guards (`loading.guards`, which held for the first call) in
        front of its graph, loaded now."""
        loading.with_graph(guarded, loaded, kernel_dir, self._method, self._raise_mismatch)
        self._warm_call = types.MethodType(guarded, self._method.__self__)  # the graph switches grad mode (CC-16)
        return self._warm_call

    @staticmethod
    def _guard_failed(spec: Any, *args: Any, **kwargs: Any) -> Any:
        """CC-21: a call that a guard of the cold trace rejects is traced afresh (stale on the first call); `spec`
        is None when the checks failed together but each held alone (state changed while they ran), or a
        `BrokenCacheError` met naming the check (CC-17: an edited record)."""
        if isinstance(spec, BrokenCacheError):
            raise inputs.InputMismatchError(inputs.Mismatch("type", str(spec)))
        live = guard_check.global_state_now() if spec is not None and spec.check == "global_state" else None
        found = inputs.Mismatch("type", variants.differing_fields(None if spec is None else spec.to_json(), live))
        raise inputs.InputMismatchError(found)

    def _raise_mismatch(self, found: inputs.Mismatch) -> None:
        """CC-15: a size or stride that does not fit on the first warm call is an `AssertionError`; anything else
        (a dtype, device or rank, or a size on a later call) is traced afresh, as a cold process would."""
        if found.kind == "layout" and self._call is None:
            raise AssertionError(found.message)
        raise inputs.InputMismatchError(found)

    def _after_mismatch(self, exc: inputs.InputMismatchError, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """CC-12: a later call that does not fit the loaded graph is traced (a recompile), as in a cold process."""
        with self._lock:
            if self._warm_call is not None and self._call is self._warm_call:
                self._recompile_reason = f" ({exc})"
                self._traces, self._compile_ids = 1, [object()]  # the loaded graph counts as the first trace
                self._compile_and_run(self._path or "", args, kwargs, run=False)
        return cast("Callable[..., Any]", self._call)(*args, **kwargs)  # set by `_compile_and_run` at the latest

    # -- cold path --------------------------------------------------------------------------------------------

    def _compile_and_run(
        self, path: str | None, args: tuple[Any, ...], kwargs: dict[str, Any], run: bool = True
    ) -> Any:
        function = self._method.__func__
        # A fresh code object: Dynamo's cache (and our trace count) then belongs to this CachedFunction alone.
        traced = types.FunctionType(
            function.__code__.replace(), function.__globals__, function.__name__, function.__defaults__,
            function.__closure__,
        )
        traced.__kwdefaults__ = function.__kwdefaults__
        traced.__qualname__ = function.__qualname__
        self._before = guard_read.Before()  # the guarded state before the traced call runs (CC-21)
        compiled = torch.compile(
            types.MethodType(traced, self._method.__self__), backend=self._backend, fullgraph=True,
            dynamic=self._dynamic, options={"guard_filter_fn": self._before},
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

    def _backend(self, gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
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
            warn_user(
                f"Skip cache as {self.__qualname__} recompiled (trace {self._traces}){self._recompile_reason}; removed "
                f"{os.path.dirname(self._path or '')} and will not save it again in this process. Keep shapes "
                "(or use dynamic=True) and Python values on guarded paths fixed to use the cache.", logger)
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

    def _save(self, path: str, traced_code: types.CodeType, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """CC-11/CC-20: write the artifact, or warn why it could not be written (the call already succeeded)."""
        try:
            link = _files.symlink_below(self._root, cast(str, self._path))  # resolved: a save has a path
            if link is not None:
                raise OSError(f"{link} is a symlink; the cache is never written through one")
            payload, files = saving.payload(
                self._method, traced_code, args, kwargs, compilation=self._compilation,
                uncacheable=(self._uncacheable, self._traced), config=self._config, dynamic=self._dynamic,
                ge_cache=self._ge_cache, model_info=self._model_info, load_failure=self._load_failure,
                before=self._before.values)
            if not saving.write(self._root, path, payload, files, self._kept):  # CC-23: with the kept variants
                logger.info("%s not saved: another process is saving %s", self.__qualname__, path)
                return
        except UncacheableError as exc:
            warn_user(f"{self.__qualname__} is not cached: {exc}", logger)
            return
        except Exception as exc:  # noqa: BLE001 - the call succeeded; a failed save must not turn it into an error
            warn_user(f"{self.__qualname__} could not be cached at {path}: {exc}", logger)
            return
        logger.info("%s saved to %s", self.__qualname__, path)

    def _remove_func_dir(self) -> None:
        """CC-12/CC-17: remove this function's folder (never its siblings or parents), its variants and kernels."""
        self._kept = []
        if self._path:
            shutil.rmtree(os.path.dirname(self._path), ignore_errors=True)


def rebuild(method: types.MethodType, options: dict[str, Any], decompositions: list[tuple[Any, Any]]) -> Any:
    """CC-24: the cached callable of a copy (what `CachedFunction.__reduce__` names), `method` bound to the copy."""
    return CachedFunction(method, decompositions=copies.decompositions_from(decompositions), **options)
