"""One fresh process of the zoo survey (`tests.zoo.survey`): Dynamo's guards for a zoo model's cached methods, and
`dynamo_export` of the model, as the reference sees them.

Usage: python -m tests.zoo.survey_run, job in and report out as `torchair_conformance.process` says. Job:
`{"model", "pattern": "plain"|"served", "export": bool, "export_dynamic": bool}`.

Guards: each cached method of the pattern is traced as the reference traces it (a fresh copy of the method's code,
`torch.compile(fullgraph=True, dynamic=...)`, grad off) on the pattern's cold steps, into a backend that records the
graph's input sources and runs the graph eagerly; then Dynamo's guard tree for that code is walked, read-only, the
way `torchair_ref.inference.guard_read` walks it, and every leaf guard is given to the reference's translator
(`guard_spec.translate`) on its own, so that one refusal does not hide the next. Per guard: its kind, its source, the
type of the live value there, and the translator's refusal (`UnknownGuard`'s message) or none.

Traced code: every code object Dynamo traced that the reference cannot identify by a readable source
(`record.traced_sources` on each alone: frozen standard-library modules, generated or wrapped functions).

Export: `torchair_ref.dynamo_export` of the plain pattern's `_run` (static shapes; `export_dynamic` adds
`dynamic=True`): exported, or the first refusal; then the captured ATen graph (`export.capture`) is lowered node by
node (`export.lowering.LOWERINGS`) to the end: an op with no lowering, or whose lowering raises for these arguments,
is listed and replaced by a stand-in of its traced dtype and shape, so every node is tried, not only up to the first
refusal.
"""
from __future__ import annotations

import inspect
import logging
import sys
import tempfile
import types
from collections import Counter
from typing import Any

import torch

from torchair_conformance import process
from torchair_conformance.zoo import catalog, patterns

#: guard kinds whose check reads the live value at their source (as `guard_read` reads it)
_VALUE_KINDS = ("TYPE_MATCH", "ID_MATCH", "EQUALS_MATCH", "LENGTH_CHECK", "DICT_LENGTH", "TENSOR_MATCH",
                "DEFAULT_DEVICE")


def _trace(built: patterns.Built, method_name: str, steps: list, dynamic: bool) -> tuple[Any, Any, tuple, dict]:
    """Trace `method_name` as the reference does on the steps that call it; returns (code, function, first args,
    first kwargs) and the graph input sources (via `_trace.sources`)."""
    function = getattr(type(built.module), method_name)
    traced = types.FunctionType(function.__code__.replace(), function.__globals__, function.__name__,
                                function.__defaults__, function.__closure__)
    traced.__kwdefaults__ = function.__kwdefaults__
    sources: list[str] = []
    unreadable: dict[str, str] = {}

    def backend(gm: torch.fx.GraphModule, example_inputs: list) -> Any:
        unreadable.update(_unreadable_code())
        for node in gm.graph.nodes:
            if node.op == "placeholder":
                grapharg = node.meta.get("grapharg")
                source = grapharg.source.name if grapharg is not None and grapharg.source is not None else node.name
                sources.append(source() if callable(source) else source)
        return gm.forward

    compiled = torch.compile(types.MethodType(traced, built.module), backend=backend, fullgraph=True, dynamic=dynamic)
    caches: dict[str, Any] = {}
    first: tuple[tuple, dict] | None = None
    with torch.no_grad():
        for step in steps:
            args = step.args
            if step.state is not None:
                args = (*args, caches.setdefault(step.state, built.new_cache()))
            if step.method == method_name:
                first = first or (args, step.kwargs)
                compiled(*args, **step.kwargs)
            else:  # another method of the pattern (the prompt before a decode): eagerly
                built.eager(step.method)(*args, **step.kwargs)
    if first is None:
        raise ValueError(f"no step calls {method_name}")
    _trace.unreadable = unreadable  # type: ignore[attr-defined]
    return traced.__code__, function, first[0], first[1], frozenset(sources)


def _unreadable_code() -> dict[str, str]:
    """Each code object Dynamo traced for the compile in progress that the reference cannot identify by its source
    (`record.traced_sources`, one code at a time, so every one is listed): qualified name -> the reason."""
    from torchair_ref import _torch
    from torchair_ref.inference import record

    found = {}
    for code in _torch.traced_code():
        try:
            record.traced_sources([code])
        except OSError as exc:
            found[f"{getattr(code, 'co_qualname', code.co_name)} ({code.co_filename}:{code.co_firstlineno})"] = str(exc)
    return found


def guards(built: patterns.Built, method_name: str, steps: list, dynamic: bool) -> dict[str, Any]:
    """Every leaf guard Dynamo holds for the traced method, with the reference translator's verdict on each."""
    from torchair_ref import _torch
    from torchair_ref.inference import guard_check, guard_kinds, guard_read, guard_spec

    code, function, args, kwargs, graph_inputs = _trace(built, method_name, steps, dynamic)
    entries = _torch.cache_entries(code)
    wrapper = entries[-1].guard_manager
    wrapper.populate_code_parts_for_debugging()
    bound = inspect.signature(function).bind(built.module, *args, **kwargs)
    bound.apply_defaults()
    frame = {**dict(bound.arguments), **guard_check.cells(function)}
    fixed = frozenset({function.__code__.co_varnames[0], *function.__code__.co_freevars})
    found: list[dict[str, Any]] = []

    def value_at(source: str | None) -> tuple[Any, str]:
        if source is None:
            return None, "-"
        try:
            value = guard_check.resolve(source, frame, function.__globals__)
        except Exception as exc:  # noqa: BLE001 - reported: a source the reference cannot follow
            return None, f"unreadable ({type(exc).__name__})"
        kind = type(value)
        return value, kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"

    def add(kind: str, source: str | None, guard: Any) -> None:
        parts = [guard_read.strip_comment(p) for p in guard.verbose_code_parts()]
        value, value_type = value_at(source)
        if kind == "DEFAULT_DEVICE":
            value = _torch.default_device_module().CURRENT_DEVICE
        try:
            guard_kinds.translate(guard_kinds.RawGuard(kind, source, tuple(parts), value if kind in _VALUE_KINDS
                                                       else None, fixed, graph_inputs))
            refused = None
        except guard_spec.UnknownGuard as exc:
            refused = str(exc)
        except Exception as exc:  # noqa: BLE001 - any other failure of the translator is a refusal too
            refused = f"{type(exc).__name__}: {exc}"
        found.append({"kind": kind, "source": source, "value_type": value_type, "text": parts[0][:200] if parts
                      else "", "refused": refused})

    def walk(manager: Any, source: str | None) -> None:
        for guard in manager.get_leaf_guards():
            add(type(guard).__name__, source, guard)
        if type(manager).__name__ == "DictGuardManager":
            for index, (key_manager, value_manager) in sorted(manager.get_key_value_managers().items()):
                if key_manager is not None:
                    walk(key_manager, f"list(dict.keys({source}))[{int(index)}]")
                if value_manager is not None:
                    walk(value_manager, f"{source}[list(dict.keys({source}))[{int(index)}]]")
        for child in manager.get_child_managers():
            walk(child, child.get_source())

    walk(wrapper.root, None)
    for guard in wrapper.root.get_epilogue_lambda_guards():
        add(type(guard).__name__, None, guard)
    kinds = Counter(g["kind"] for g in found)
    pairs = Counter(f"{g['kind']} on {g['value_type']}" for g in found)
    refusals = Counter(g["refused"] for g in found if g["refused"])
    return {"method": method_name, "versions_cached": len(entries), "guards": len(found), "kinds": dict(kinds),
            "unreadable_code": getattr(_trace, "unreadable", {}),
            "kind_value_types": dict(pairs), "refusals": dict(refusals),
            "refused_guards": [g for g in found if g["refused"]][:200]}


class _Exported(torch.nn.Module):
    """The plain pattern's `_run` as a module's `forward`, for `dynamo_export(model=...)`."""

    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner._run(*args, **kwargs)


def export(built: patterns.Built, dynamic: bool) -> dict[str, Any]:
    """`dynamo_export` of the plain pattern: exported or the first refusal, and every op that has no lowering."""
    import torchair_ref
    from torchair_ref.export import capture

    step = patterns.script(built, "cold")[0]
    model = _Exported(built.module).eval()
    report: dict[str, Any] = {"dynamic": dynamic}
    with tempfile.TemporaryDirectory(prefix="zoo-export-") as folder:
        try:
            torchair_ref.dynamo_export(*step.args, model=model, export_path=folder, dynamic=dynamic, **step.kwargs)
            report["exported"], report["refusal"] = True, None
        except Exception as exc:  # noqa: BLE001 - the refusal is the result
            report["exported"], report["refusal"] = False, f"{type(exc).__name__}: {str(exc)[:400]}"
    torch._dynamo.reset()
    try:
        captured = capture.capture(model, step.args, step.kwargs, dynamic=dynamic)
    except Exception as exc:  # noqa: BLE001 - no graph to walk
        report["capture_error"] = f"{type(exc).__name__}: {str(exc)[:400]}"
        return report
    report.update(lower_all(captured))
    return report


def lower_all(captured: Any) -> dict[str, Any]:
    """Lower every node of a captured graph: the ops with no lowering, and those whose lowering raised. A node that
    cannot be lowered gets a stand-in (a `Data` op of its traced dtype and shape), so every node after it is still
    tried: a lowering that refuses an input built by an unsupported op (attention with a mask) is found too."""
    from ge_executor import ge_ir
    from torchair_ref.export import ge_build

    builder = ge_build.Builder(ge_ir.GraphDef(name="survey"), False)
    for graph_input in captured.inputs:
        builder.data(graph_input)
    ops: Counter = Counter()
    missing: Counter = Counter()
    refused: dict[str, str] = {}

    def stand_in(node: torch.fx.Node) -> None:
        traced = node.meta.get("val")
        if isinstance(traced, (list, tuple)):
            builder.values[node] = [_data(builder, v, f"{node.name}_{i}") for i, v in enumerate(traced)]
        else:
            builder.values[node] = _data(builder, traced, node.name)

    for node in captured.gm.graph.nodes:
        if node.op != "call_function":
            continue
        name = ge_build._target_name(node.target)
        ops[name] += 1
        if ge_build.lowering_of(node.target) is None and getattr(node.target, "__name__", "") != "getitem":
            missing[name] += 1
            stand_in(node)
            continue
        try:
            builder.call(node)
        except Exception as exc:  # noqa: BLE001 - a lowering that refuses these arguments: listed
            refused.setdefault(name, f"{type(exc).__name__}: {str(exc)[:300]}")
            stand_in(node)
    return {"aten_ops": dict(ops), "no_lowering": dict(missing), "lowering_refused": refused}


def _data(builder: Any, traced: Any, name: str) -> Any:
    from torchair_ref.export import ge_build

    if traced is None:
        return None
    dtype, shape = ge_build.spec_of(traced)
    return builder.one("Data", [], dtype, shape, {"index": -1}, name=f"stand_in_{name}")


def main() -> int:
    job = process.read_job()
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    name, pattern = job["model"], job["pattern"]
    torch.manual_seed(0)
    built = patterns.build(name, pattern, None, {})
    steps = patterns.script(built, "cold")
    entry = catalog.entry(name)
    dynamic = entry.dynamic if pattern == "plain" else True
    report: dict[str, Any] = {"model": name, "pattern": pattern, "torch": torch.__version__, "methods": []}
    for method in dict.fromkeys(step.method for step in steps):
        torch._dynamo.reset()
        try:
            report["methods"].append(guards(built, method, steps, dynamic))
        except Exception as exc:  # noqa: BLE001 - reported
            report["methods"].append({"method": method, "error": f"{type(exc).__name__}: {str(exc)[:400]}"})
    if job.get("export"):
        report["export"] = [export(built, False)] + ([export(built, True)] if job.get("export_dynamic") else [])
    process.reply(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
