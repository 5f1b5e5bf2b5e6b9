"""SPEC EX-11 (an exported graph computes the model) and EX-7's GE op types, for every export property the suite
has: single rank, dynamic shapes at sizes other than the example's, weights inline and in files on both sides of the
threshold, every dtype of the zoo, and each rank's graph of a 2-rank gloo world (its ``HcomAllReduce`` executed
through gloo in the rank's process: the collective is run, not cut out). Graphs run on the suite's GE executor
(``torchair_conformance.execute``); outputs are held to eager under the suite's tolerance table."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import execute, export_zoo, exports, harness, profiles
from torchair_conformance import strategies as cst
from torchair_conformance.assertions import assert_ge_op_types, assert_worker_ok


def _other_batch(draw, batch):
    """Sizes for the symbolic dims other than the example's, all above every width a drawn module has, and all
    different: two leading dims of one size in the example are two ``-1`` dims of the ``Data`` op (EX-7), so the
    graph must compute the model when they differ (EX-11)."""
    low = profiles.active().max_width + 1
    return draw(st.lists(st.integers(low, low + 12), min_size=len(batch), max_size=len(batch), unique=True)
                .filter(lambda new: new != list(batch)), label="other sizes")


def _check_runs(path, run, spec, batches, seed, *, what: str) -> None:
    """EX-11: the graph at ``path`` gives ``run.module``'s eager outputs on the inputs of each batch."""
    for batch in batches:
        args, kwargs = export_zoo.export_inputs(spec, batch, seed) if batch is not None else (run.args, run.kwargs)
        _check_inputs(path, run.module, args, kwargs, what=f"{what}, batch {batch or 'of the example'}")


def _check_inputs(path, module, args, kwargs, *, what: str) -> None:
    """EX-11: the graph at ``path`` gives ``module``'s eager outputs on ``args``/``kwargs``."""
    want = execute.eager_outputs(module, args, kwargs)
    truth = execute.reference_outputs(module, args, kwargs)
    got = execute.closest(execute.run_air(path, execute.user_tensors(args, kwargs)), want, truth)
    for i, (problem, diff, bound) in enumerate(execute.differences(got, want, truth)):
        assert not problem and diff <= bound, (
            f"EX-11: {what}, output {i}: "
            + (problem or f"max |graph - eager| less {execute.ROUNDING_SLACK}x eager's own worst float64 error is "
                          f"{diff:.4g}, the tolerance table allows {bound:.4g}"))


@pytest.mark.clause("EX-11")
@pytest.mark.parametrize("dtype", cst.EXPORT_DTYPES)
def test_an_erf_gelu_computes_as_eager(impl, dtype):
    """EX-11: a Linear then torch's default (erf) GELU, on inputs solved for pre-activations spread evenly over
    [-3, 1] (the erf and tanh forms differ by up to 4.7e-4 near x = -2.7, five times float32's tolerance for outputs
    of at most 0.85), gives eager's outputs under the tolerance table."""
    spec = {"kind": "export", "class_name": "GeluNet", "seed": 0, "dtype": dtype,
            "inputs": [{"features": 8, "keyword": False}], "hidden": 8,
            "structure": {"class_name": "GeluNet", "in_features": 8, "layers": [{"kind": "act", "fn": "gelu"}]},
            "float_buffer": False, "int_buffer": None, "shared": False, "all_reduce": False, "outputs": 1}
    with harness.scratch() as base:
        run = harness.export_model(impl, spec, [256], 0, str(base / "out"))
        proj = run.module.proj[0]
        wanted = torch.linspace(-3.0, 1.0, 256 * 8, dtype=torch.float64).reshape(256, 8)
        x = torch.linalg.solve(proj.weight.detach().double().cpu(), (wanted - proj.bias.detach().double().cpu()).T).T
        _check_inputs(base / "out" / "export.air", run.module, (x.to(run.args[0].dtype).to(run.args[0].device),), {},
                      what=f"{dtype} Linear -> GELU (erf)")


class _AddsItsWidth(torch.nn.Module):
    def forward(self, x):
        return x + x.shape[1]


@pytest.mark.clause("EX-11", "EX-7")
def test_two_dims_of_one_size_in_the_example_stay_apart_in_the_graph(impl):
    """EX-11: ``x + x.shape[1]`` exported with dynamic=True at 4x4 (two -1 dims in its ``Data`` op) gives the model's
    output at 2x5, where the width differs from the batch. A graph that took the two dims for one (Dynamo's duck
    sizing, with no guard left to catch it) adds the batch instead: a wrong answer with no error."""
    model = _AddsItsWidth().eval()
    with harness.scratch() as base:
        harness.fresh_dynamo()
        impl.dynamo_export(torch.randn(4, 4), model=model, export_path=str(base / "out"), dynamic=True)
        _check_inputs(base / "out" / "export.air", model, (torch.randn(2, 5),), {},
                      what="x + x.shape[1] exported at 4x4, run at 2x5")


@pytest.mark.clause("EX-11", "EX-7")
@pytest.mark.parametrize("dtype", cst.EXPORT_DTYPES)
@pytest.mark.parametrize("dynamic", [False, True])
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("compile", len(cst.EXPORT_DTYPES)))
def test_the_exported_graph_computes_the_model(impl, dynamic, dtype, data):
    """EX-11/EX-7: the single-process export, run on its example inputs (and, when dynamic, on inputs of other
    sizes), gives the model's eager outputs; its op types are GE's."""
    spec = data.draw(cst.export_models(dtypes=(dtype,), activations=cst.DRAWN_ACTIVATIONS), label="model")
    batch = data.draw(cst.export_batches(cst.export_batch_dims(dynamic)), label="batch")
    seed = data.draw(cst.seeds, label="input_seed")
    others = [_other_batch(data.draw, batch)] if dynamic else []
    with harness.scratch() as base:
        run = harness.export_model(impl, spec, batch, seed, str(base / "out"), dynamic=dynamic)
        air = base / "out" / "export.air"
        assert_ge_op_types(exports.load_air(air).graph[0], what=f"EX-7: dynamic={dynamic}")
        _check_runs(air, run, spec, [None, *others], seed + 1, what=f"{dtype} dynamic={dynamic}")


@pytest.mark.clause("EX-11", "EX-6")
@pytest.mark.requires("threshold_override")
@pytest.mark.parametrize("dtype", cst.EXPORT_DTYPES)
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("compile", len(cst.EXPORT_DTYPES)))
def test_weights_from_files_and_from_consts_compute_the_model(impl, dtype, data):
    """EX-11/EX-6: with the threshold just under graph + weights (every weight a FileConstant, read from its file)
    and just over it (every weight a Const), the graph gives the model's eager outputs."""
    spec = data.draw(cst.export_models(dtypes=(dtype,), activations=cst.DRAWN_ACTIVATIONS), label="model")
    batch = data.draw(cst.export_batches(), label="batch")
    seed = data.draw(cst.seeds, label="input_seed")
    with harness.scratch() as base:
        probe = harness.export_model(impl, spec, batch, seed, str(base / "probe"))
        total = (base / "probe" / "export.air").stat().st_size  # graph + inline weights
        weights = sum(exports.weight_sizes(export_zoo.model_weights(probe.module)))
        for side, threshold in (("files", weights), ("inline", 2 * total)):
            run = harness.export_model(impl, spec, batch, seed, str(base / side), threshold=threshold)
            kinds = exports.op_counts(exports.load_air(base / side / "export.air").graph[0])
            assert (kinds["FileConstant"] > 0) == (side == "files"), f"EX-6: threshold {threshold}: {dict(kinds)}"
            _check_runs(base / side / "export.air", run, spec, [None], seed, what=f"{dtype}, weights {side}")


_RANK_TIMEOUT_S = 300


@pytest.mark.clause("EX-11", "EX-4")
@pytest.mark.requires("multi_rank_export")
@pytest.mark.parametrize("dynamic", [False, True])
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("process", 2))
def test_each_ranks_graph_computes_its_model_with_the_collective_run_through_gloo(impl, dynamic, data):
    """EX-11/EX-4: in a 2-rank gloo world each rank runs its own exported graph in its process, the HcomAllReduce
    through gloo with the other rank's graph, and gets its model's eager outputs (the eager model's all_reduce runs
    through gloo too). bfloat16 is left out: HcomAllReduce's registration has no DT_BF16 (REG_OP(HcomAllReduce) in
    CANN's hcom_ops.h), so no rank graph of a bfloat16 model can hold the collective."""
    spec = data.draw(cst.export_models(max_depth=2, all_reduce=True, dtypes=("float32", "float16"),
                                       activations=cst.DRAWN_ACTIVATIONS), label="model")
    batch = data.draw(cst.export_batches(cst.export_batch_dims(dynamic)), label="batch")
    name = data.draw(cst.export_names(), label="export_name")
    others = [_other_batch(data.draw, batch)] if dynamic else []
    with harness.scratch() as base:
        out = base / "out"
        job = {"model": spec, "batch": batch, "input_seed": 0, "export_path": str(out), "export_name": name,
               "dynamic": dynamic, "config": [], "threshold": None, "execute": [batch, *others]}
        results = harness.run_ranks([job, job], impl=impl.name, cwd=base, worker="export", timeout=_RANK_TIMEOUT_S)
        for rank, result in enumerate(results):
            assert_worker_ok(result, what=f"rank {rank} of 2")
            for where, checks in result["executed"].items():
                for k, (mismatch, diff, bound) in enumerate(checks):
                    assert not mismatch and diff <= bound, (
                        f"EX-11: rank {rank}, batch {where}, output {k}: {mismatch or ''} max |graph - eager| = "
                        f"{diff} > {bound} allowed by the tolerance table ({spec['dtype']}, dynamic={dynamic})")
            graph = exports.load_air(out / exports.air_name(name, rank)).graph[0]
            assert_ge_op_types(graph, what=f"EX-7: rank {rank}")
