"""SPEC EX-3, EX-6, EX-7, EX-8, EX-9 and EX-11 on real models: the zoo's `transformers` and `timm` families
(`torchair_conformance.zoo.export`: each model's plain call returning its main tensor), exported with the
implementation's `dynamo_export` at drawn batch and sequence sizes, against any implementation.

Each export writes the single-process layout (EX-3), holds one `Data` per user input, GE op types only and a
`NetOutput` (EX-7), each parameter inline as a `Const` of its bytes (EX-6: zoo models are far below the
externalisation threshold), a `dynamo.pbtxt` of the same graph (EX-8), and its graph, run on the project's GE
executor, computes the model (EX-11, the suite's tolerance table). One LLM (Llama) is also exported with
`dynamic=True`: its `Data` ops have -1 dims and the graph computes the model at other lengths and batches.

Skipped, with the install command, where the zoo's packages are not installed. The `nightly` tier of the zoo (every
model but GPT-2, Llama and ResNet-18) runs only under the `nightly` hypothesis profile.
"""
from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_conformance import execute, exports, ge_ir, harness, profiles
from torchair_conformance.assertions import (
    assert_data_ops,
    assert_edges_resolve,
    assert_files,
    assert_ge_op_types,
    assert_net_output,
    assert_options_json,
    assert_pbtxt_matches,
    assert_weights_inline,
)
from torchair_conformance.zoo import catalog, packages

_MISSING = packages.missing()

pytestmark = [pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")]


def _tiered(names: tuple[str, ...]) -> list:
    """`names` as parameters; those outside the CI tier skip unless the nightly profile is active."""
    nightly = profiles.active().name == "nightly"
    return [pytest.param(name, id=name, marks=[] if catalog.entry(name).tier == "ci" or nightly else [
        pytest.mark.skip(reason="zoo model of the nightly tier: runs under --hypothesis-profile nightly")])
        for name in names]


PARAMS = _tiered(catalog.NAMES)


@st.composite
def _shapes(draw: st.DrawFn, name: str, min_batch: int = 1) -> tuple[int, int]:
    """(batch, sequence) for a language model, (batch, pixels) for a vision one (its configured image size)."""
    entry = catalog.entry(name)
    batch = draw(st.integers(min_batch, 3), label="batch")
    if entry.library == "timm":
        return batch, entry.cold_shape[1]
    return batch, draw(st.integers(4, 24), label="sequence")


@contextlib.contextmanager
def _as_a_host_without_torch_npu() -> Iterator[None]:
    """Set aside the import finders that refuse ``torch_npu`` with an error (``torchair_cpu``'s, IMPL-3) while the
    zoo builds a model: ``transformers`` probes ``importlib.util.find_spec("torch_npu")`` on importing a model's
    module, which on a host without torch-npu answers ``None`` (and is cached), not an exception."""
    refusing = []
    for finder in list(sys.meta_path):
        try:
            finder.find_spec("torch_npu", None)
        except ModuleNotFoundError:
            refusing.append(finder)
        except Exception:  # noqa: BLE001 - a finder that fails otherwise is not the one set aside here
            continue
    for finder in refusing:
        sys.meta_path.remove(finder)
    try:
        yield
    finally:
        sys.meta_path[:0] = refusing


def _export(impl, name: str, shape: tuple[int, int], seed: int, out, *, dynamic: bool):
    from torchair_conformance.zoo import export

    harness.fresh_dynamo()
    with _as_a_host_without_torch_npu():
        module = export.build(name, seed)
    args, kwargs = export.inputs(name, shape, seed)
    with harness.capture(impl.logger):
        returned = impl.dynamo_export(*args, model=module, export_path=str(out), dynamic=dynamic, **kwargs)
    assert returned is None, f"EX-1: dynamo_export returned {returned!r}"
    return module, args, kwargs


def _parameters(module: torch.nn.Module) -> dict:
    """EX-6: each distinct parameter once, with its fqns (tied weights share one tensor and one Const)."""
    by_tensor: dict[int, list] = {}
    for fqn, t in module.named_parameters(remove_duplicate=False):
        by_tensor.setdefault(id(t), [t]).append(fqn)
    return {entry[1]: entry for entry in by_tensor.values()}


def _expected_data(args: tuple, kwargs: dict, dynamic: bool) -> list:
    return [(ge_ir.proto_dtype(t.dtype), [-1] * t.dim() if dynamic else list(t.shape))
            for t in execute.user_tensors(args, kwargs)]


def _check_runs(air, module, calls, *, what: str) -> None:
    """EX-11: the graph at ``air`` gives the module's eager outputs on each call's inputs."""
    for args, kwargs in calls:
        want = execute.eager_outputs(module, args, kwargs)
        truth = execute.reference_outputs(module, args, kwargs)
        got = execute.closest(execute.run_air(air, execute.user_tensors(args, kwargs)), want, truth)
        for k, (problem, diff, bound) in enumerate(execute.differences(got, want, truth)):
            shape = list(execute.user_tensors(args, kwargs)[0].shape)
            assert not problem and diff <= bound, (
                f"EX-11: {what}, inputs of shape {shape}, output {k}: "
                + (problem or f"max |graph - eager| less {execute.ROUNDING_SLACK}x eager's own worst float64 error is "
                              f"{diff:.4g}, the tolerance table allows {bound:.4g}"))


@pytest.mark.clause("EX-3", "EX-6", "EX-7", "EX-8", "EX-11")
@pytest.mark.parametrize("name", PARAMS)
@given(data=st.data())
@settings(max_examples=profiles.examples_per_case("process", len(PARAMS)))
def test_a_zoo_model_exports_with_ge_ops_and_computes_the_model(impl, name, data):
    """EX-3/EX-6/EX-7/EX-8/EX-11: a real model's static export, at drawn sizes and weights."""
    shape = data.draw(_shapes(name), label="shape")
    seed = data.draw(st.integers(0, 2**16), label="seed")
    with harness.scratch() as base:
        out = base / "out"
        module, args, kwargs = _export(impl, name, shape, seed, out, dynamic=False)
        assert_files(out, {"export.air", exports.PBTXT, exports.OPTIONS_JSON}, what=f"EX-3: {name}")
        graph = exports.load_air(out / "export.air").graph[0]
        what = f"{name} {shape}"
        assert_ge_op_types(graph, what=f"EX-7: {what}")
        assert_data_ops(graph, _expected_data(args, kwargs, False), what=f"EX-7: {what}")
        assert_net_output(graph, 1, what=f"EX-7: {what}")
        assert_edges_resolve(graph, what=f"EX-7: {what}")
        assert_weights_inline(graph, _parameters(module), what=f"EX-6: {what}")
        assert_pbtxt_matches((out / exports.PBTXT).read_text(encoding="utf-8"), graph, what=f"EX-8: {what}")
        assert_options_json(out / exports.OPTIONS_JSON, what=f"EX-3: {what}")
        _check_runs(out / "export.air", module, [(args, kwargs)], what=what)


@pytest.mark.clause("EX-7", "EX-9", "EX-11")
@given(data=st.data())
@settings(max_examples=profiles.examples("process"))
def test_an_llm_exported_with_dynamic_shapes_computes_it_at_other_sizes(impl, data):
    """EX-7/EX-9/EX-11: Llama with dynamic=True: -1 dims in its Data ops, and the graph computes the model at the
    example's sizes and at other drawn ones."""
    from torchair_conformance.zoo import export

    name = export.DYNAMIC
    # Exported at a batch of 2 or more: Dynamo keeps a dim of size 1 static (0/1 specialisation, upstream's too), so a
    # batch-1 export has no -1 batch dim. Run at any batch, 1 included.
    shape = data.draw(_shapes(name, min_batch=2), label="shape")
    other = data.draw(_shapes(name).filter(lambda s: s != shape), label="other shape")
    seed = data.draw(st.integers(0, 2**16), label="seed")
    with harness.scratch() as base:
        module, args, kwargs = _export(impl, name, shape, seed, base / "out", dynamic=True)
        graph = exports.load_air(base / "out" / "export.air").graph[0]
        assert_ge_op_types(graph, what=f"EX-7: {name} dynamic")
        assert_data_ops(graph, _expected_data(args, kwargs, True), what=f"EX-9: {name} dynamic")
        _check_runs(base / "out" / "export.air", module, [(args, kwargs), export.inputs(name, other, seed + 1)],
                    what=f"{name} dynamic=True, exported at {shape}")
