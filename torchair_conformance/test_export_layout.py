"""SPEC section 4 in one process: the call (EX-1), symlink refusals (EX-2), the layout (EX-3), the ``.air`` graph
(EX-7), the ``dynamo.pbtxt`` dump (EX-8), module stacks and symbolic shapes (EX-9) and Dynamo hygiene (EX-10)."""

from __future__ import annotations

import logging
import os

import pytest
import torch
import torch._dynamo
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from torchair_conformance import export_zoo, exports, harness, models, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import (
    assert_data_ops,
    assert_edges_resolve,
    assert_files,
    assert_logged,
    assert_net_output,
    assert_options_json,
    assert_pbtxt_matches,
)

ATC_FLAG = "export.experimental.auto_atc_config_generated"
STACK_FLAG = "export.experimental.enable_record_nn_module_stack"


def _flag(options, path: str) -> bool:
    """The value ``options`` leave ``path`` at (False, the default, when unassigned)."""
    value = False
    for assigned, v in options:
        if assigned == path:
            value = v
    return value


@st.composite
def export_paths(draw: st.DrawFn) -> dict:
    """Where to export: an existing directory, or 1-2 missing levels; absolute or relative to the cwd."""
    return {"missing_levels": draw(st.integers(0, 2), label="missing_levels"),
            "relative": draw(st.booleans(), label="relative_export_path")}


def _export_path(base, spec: dict):
    """(the export_path argument, the directory it names); the cwd is ``base``/cwd (``scratch`` restores it)."""
    cwd = base / "cwd"
    target = cwd / "exports"
    target.mkdir(parents=True)
    for k in range(spec["missing_levels"]):
        target = target / f"level{k}"
    os.chdir(cwd)
    return (os.path.relpath(target, cwd) if spec["relative"] else str(target)), target


@pytest.mark.clause("EX-1", "EX-3", "EX-7", "EX-8")
@pytest.mark.parametrize("dynamic", [None, False, True])
@given(data=st.data())
@settings(max_examples=profiles.examples("compile"))
def test_single_process_export_writes_the_air_and_its_dump(impl, dynamic, data):
    """EX-3/EX-7/EX-8: <path>/<name>.air parses with one Data per input and a NetOutput; dynamo.pbtxt dumps it;
    options.json holds the GE options."""
    spec = data.draw(cst.export_models(), label="model")
    batch = data.draw(cst.export_batches(cst.export_batch_dims(dynamic)), label="batch")
    name = data.draw(st.one_of(st.none(), cst.export_names()), label="export_name (None: the default)")
    options = data.draw(cst.export_options(), label="config")
    where = data.draw(export_paths(), label="export_path")
    with harness.scratch() as base:
        arg, target = _export_path(base, where)
        run = harness.export_model(impl, spec, batch, data.draw(cst.seeds, label="input_seed"), arg,
                                   export_name=name, dynamic=dynamic, options=options)
        assert run.returned is None, f"EX-1: dynamo_export returned {run.returned!r}, expected None"
        air = exports.air_name(name or "export")
        # Weights are inline (a small model); the ATC flag is for multi-process exports only.
        assert_files(target, {air, exports.PBTXT, exports.OPTIONS_JSON},
                     what=f"EX-3: export_path {arg!r}, export_name {name!r}")
        assert_options_json(target / exports.OPTIONS_JSON, what="EX-3")
        model = exports.load_air(target / air)
        assert len(model.graph) >= 1, f"EX-7: {air} holds no graph"
        graph = model.graph[0]
        assert_data_ops(graph, exports.expected_data(spec, batch, bool(dynamic)), what="EX-7: graph[0] inputs")
        assert_net_output(graph, spec["outputs"], what="EX-7: graph[0] result")
        assert_edges_resolve(graph, what="EX-7: graph[0] edges")
        assert_pbtxt_matches((target / exports.PBTXT).read_text(encoding="utf-8"), graph, what="EX-8")


@pytest.mark.clause("EX-1", "EX-3")
@pytest.mark.parametrize("export_name", ["sub/net", "a/b/net", "./net", "../../net", "{elsewhere}/net"])
def test_only_the_last_component_of_export_name_is_used(impl, export_name):
    """EX-1: export_name "a/b/net" writes <export_path>/net.air, never into a/b (nor an absolute directory)."""
    spec = {"kind": "export", "class_name": "Named", "seed": 0, "dtype": "float32",
            "inputs": [{"features": 3, "keyword": False}], "hidden": 4,
            "structure": {"class_name": "Named", "in_features": 4, "layers": []}, "float_buffer": False,
            "int_buffer": None, "shared": False, "all_reduce": False, "outputs": 1}
    with harness.scratch() as base:
        os.chdir(base)
        (base / "elsewhere").mkdir()
        name = export_name.format(elsewhere=base / "elsewhere")
        harness.export_model(impl, spec, [5], 0, str(base / "out"), export_name=name)
        assert_files(base / "out", {"net.air", exports.PBTXT, exports.OPTIONS_JSON}, what=f"EX-1: export_name {name!r}")
        assert exports.files_under(base / "elsewhere") == set(), f"EX-1: export_name {name!r} wrote elsewhere"


@pytest.mark.clause("EX-1", "EX-3")
def test_export_path_and_name_default_to_export_file_and_export(impl):
    """EX-1/EX-3: with neither export_path nor export_name (nor config), the export lands in
    ./export_file/export.air."""
    with harness.scratch() as base:
        os.chdir(base)
        harness.fresh_dynamo()
        returned = impl.dynamo_export(torch.randn(4, 3), model=nn.Linear(3, 2).eval())
        assert returned is None, f"EX-1: dynamo_export returned {returned!r}, expected None"
        assert_files(base / "export_file", {"export.air", exports.PBTXT, exports.OPTIONS_JSON},
                     what="EX-3: the default export_path ./export_file and export_name export")


@pytest.mark.clause("EX-1")
def test_model_is_keyword_only(impl):
    """EX-1: a model passed positionally is an example input, and the missing model= raises TypeError."""
    model = nn.Linear(3, 2).eval()
    with harness.scratch() as base:
        os.chdir(base)
        with pytest.raises(TypeError):
            impl.dynamo_export(torch.randn(4, 3), model, export_path=str(base / "out"))
        assert exports.files_under(base) == set(), f"EX-1: a refused call wrote {sorted(exports.files_under(base))}"


class _Breaks(nn.Module):
    """A model Dynamo cannot trace as one graph."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.a(x)
        torch._dynamo.graph_break()
        return self.b(y)


@pytest.mark.clause("EX-1")
def test_a_graph_break_raises(impl):
    """EX-1: the whole model must be one graph (fullgraph=True): a graph break raises and no .air is written."""
    with harness.scratch() as base:
        harness.fresh_dynamo()
        with pytest.raises(Exception) as info:
            impl.dynamo_export(torch.randn(4, 3), model=_Breaks().eval(), export_path=str(base / "out"))
        assert not (base / "out" / "export.air").exists(), f"EX-1: an .air was written despite {info.value!r}"


@pytest.mark.clause("EX-2")
@pytest.mark.parametrize("link", ["export_path", "air file", "dangling air file"])
@given(data=st.data())
@settings(max_examples=profiles.examples("compile"))
def test_symlinks_are_refused(impl, link, data):
    """EX-2: a symlinked export_path or <name>.air: an ERROR log line, nothing written, None returned."""
    spec = data.draw(cst.export_models(max_depth=2), label="model")
    batch = data.draw(cst.export_batches(), label="batch")
    name = data.draw(st.one_of(st.none(), cst.export_names()), label="export_name (None: the default)")
    with harness.scratch() as base:
        elsewhere = base / "elsewhere"
        elsewhere.mkdir()
        out = base / "out"
        air = exports.air_name(name or "export")
        if link == "export_path":
            out.symlink_to(elsewhere, target_is_directory=True)
        else:
            out.mkdir()
            target = elsewhere / "target.air"
            if link == "air file":
                target.write_bytes(b"not yours")
            (out / air).symlink_to(target)
        before = _snapshot(base)
        run = harness.export_model(impl, spec, batch, 0, str(out), export_name=name)
        assert run.returned is None, f"EX-2: dynamo_export returned {run.returned!r}, expected None"
        linked = out if link == "export_path" else out / air
        assert_logged(run.captured, logging.ERROR, [os.path.abspath(linked)],
                      what=f"EX-2: an ERROR naming the symlinked {link}")
        errors = run.captured.at(logging.ERROR)
        assert len(errors) == 1, f"EX-2: one ERROR line for a symlinked {link}, got {errors!r}"
        after = _snapshot(base)
        assert after == before, (
            f"EX-2: with a symlinked {link} something was written: before {before!r}, after {after!r}")


def _snapshot(root) -> dict:
    """Every file and link under ``root``: a link as its target, a file as its bytes."""
    return {p: (f"-> {os.readlink(root / p)}" if os.path.islink(root / p) else (root / p).read_bytes())
            for p in sorted(exports.files_under(root))}


@pytest.mark.clause("EX-9", "EX-7")
@pytest.mark.parametrize("record", [True, False], ids=["record", "no_record"])
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("compile", 2))
def test_module_stacks_are_recorded_only_when_asked(impl, record, data):
    """EX-9: enable_record_nn_module_stack puts an nn_module_stack attr on the ops of module code; off, none has it."""
    spec = data.draw(cst.export_models(max_depth=2), label="model")
    batch = data.draw(cst.export_batches(), label="batch")
    dynamic = data.draw(st.booleans(), label="dynamic")
    with harness.scratch() as base:
        harness.export_model(impl, spec, batch, 0, str(base / "out"), dynamic=dynamic, options=[(STACK_FLAG, record)])
        graph = exports.load_air(base / "out" / "export.air").graph[0]
        stacks = {op.name: op.attr["nn_module_stack"].s.decode("utf-8", "replace")
                  for op in graph.op if "nn_module_stack" in op.attr}
        if not record:
            assert not stacks, f"EX-9: the flag is off, yet ops carry nn_module_stack: {sorted(stacks)!r}"
            return
        # Every model projects its first input with proj[0], an nn.Linear: its ops run inside that module.
        assert any("proj" in text and "Linear" in text for text in stacks.values()), (
            f"EX-9: no op's nn_module_stack names the Linear module proj.0 that the model runs; stacks: {stacks!r}")


@pytest.mark.clause("EX-9", "EX-7")
@pytest.mark.parametrize(("dynamic", "dims"), [pytest.param(False, None, id="False"),
                                                pytest.param(True, cst.export_batch_dims(True), id="True"),
                                                pytest.param(True, 1, id="True-1d")])
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("compile", 2))
def test_dynamic_exports_have_symbolic_dims(impl, dynamic, dims, data):
    """EX-9/EX-7: dynamic=True writes the inputs' batch dims as -1; dynamic=False writes every dim as it is."""
    spec = data.draw(cst.export_models(max_depth=2), label="model")
    batch = data.draw(cst.export_batches(dims), label="batch")
    with harness.scratch() as base:
        harness.export_model(impl, spec, batch, 0, str(base / "out"), dynamic=dynamic)
        graph = exports.load_air(base / "out" / "export.air").graph[0]
        assert_data_ops(graph, exports.expected_data(spec, batch, dynamic), what=f"EX-9: dynamic={dynamic}")
        symbolic = [op.name for op in graph.op for d in op.output_desc if -1 in d.shape.dim]
        assert bool(symbolic) == dynamic, (
            f"EX-9: dynamic={dynamic}, yet the ops with -1 dims are {symbolic!r}")


def _run(model: nn.Module, *args, **kwargs):
    return model(*args, **kwargs)


def _compile_story(spec, batches) -> list:
    """Compile ``_run`` on a fresh build of ``spec``'s model with a recording backend, call it on each batch, and
    return what Dynamo did: per traced graph, the shapes (symbolic as text) of its tensor inputs; then the results."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append([str(tuple(t.shape)) for t in example_inputs if isinstance(t, torch.Tensor)])
        return gm.forward

    module = export_zoo.build_export_model(spec)
    compiled = torch.compile(_run, backend=backend)
    results = []
    with torch.no_grad():
        for batch in batches:
            args, kwargs = export_zoo.export_inputs(spec, batch, 1)
            results.append(models.digest(compiled(module, *args, **kwargs)))
    return graphs + results


@pytest.mark.clause("EX-10")
@given(data=st.data())
@settings(max_examples=profiles.examples("compile"))
def test_export_leaves_later_compiles_unchanged(impl, data):
    """EX-10: after an export, compiling another function traces the same graphs as in a process that never
    exported, and Dynamo's config is as it was."""
    spec = data.draw(cst.export_models(dtypes=("float32",), max_depth=2), label="model")
    batch = data.draw(cst.export_batches(), label="export batch")
    dynamic = data.draw(st.booleans(), label="dynamic")
    later = data.draw(st.lists(cst.export_batches(), min_size=1, max_size=3), label="batches of the later compile")
    harness.fresh_dynamo()
    baseline = _compile_story(spec, later)
    harness.fresh_dynamo()
    config_before = torch._dynamo.config.get_config_copy()
    with harness.scratch() as base:
        harness.export_model(impl, spec, batch, 0, str(base / "out"), dynamic=dynamic)
    config_after = torch._dynamo.config.get_config_copy()
    changed = {k: (v, config_after.get(k)) for k, v in config_before.items() if config_after.get(k) != v}
    assert not changed, f"EX-10: the export left Dynamo config changed (before, after): {changed!r}"
    after = _compile_story(spec, later)
    assert after == baseline, (
        f"EX-10: after a dynamic={dynamic} export, compiling another function traced {after!r}; without the export "
        f"{baseline!r}")


@pytest.mark.clause("EX-10")
def test_repeated_exports_do_not_count_as_recompiles(impl):
    """EX-10: exports of one model class at three shapes, under a recompile limit of 1 that raises when hit, each
    write their own graph: no export counts as a recompile of another."""
    with harness.scratch() as base, torch._dynamo.config.patch(recompile_limit=1, fail_on_recompile_limit_hit=True):
        harness.fresh_dynamo()
        for batch in (2, 3, 4):
            impl.dynamo_export(torch.randn(batch, 4), model=nn.Linear(4, 3).eval(), export_path=str(base / str(batch)))
        for batch in (2, 3, 4):
            graph = exports.load_air(base / str(batch) / "export.air").graph[0]
            dims = [list(op.output_desc[0].shape.dim) for op in graph.op if op.type == "Data"]
            assert dims == [[batch, 4]], f"EX-10: the export at batch {batch} wrote Data dims {dims!r}"
