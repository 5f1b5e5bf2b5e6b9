"""White-box: `TensorSpec`, the one description of a tensor shared by the record's graph inputs, the per-call input
check and TENSOR_MATCH (SPEC CC-15, CC-17, CC-21; issue 34 item 3)."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from torchair_ref.errors import BrokenCacheError
from torchair_ref.inference import guard_kinds, inputs, tensor_spec
from torchair_ref.inference.guard_kinds.tensor import Tensor
from torchair_ref.inference.guard_values import UnknownGuard
from torchair_ref.inference.tensor_spec import GraphInput, TensorSpec

_DIMS = st.lists(st.one_of(st.none(), st.integers(0, 64)), max_size=4)


@st.composite
def _specs(draw: st.DrawFn) -> TensorSpec:
    shape = tuple(draw(_DIMS))
    stride = tuple(draw(st.lists(st.one_of(st.none(), st.integers(0, 64)), min_size=len(shape),
                                 max_size=len(shape))))
    symbolic = None in shape or None in stride
    expression = st.sampled_from(["s0", "s1*s2", "3*s0**2", "4", "s0 - 1"])

    def exprs(dims: tuple) -> tuple:  # an expression exactly where a dim is symbolic, as `TensorSpec.of` writes
        return tuple(draw(expression) if dim is None else None for dim in dims)

    return TensorSpec(
        dtype=draw(st.sampled_from(["torch.float32", "torch.int64", "torch.bfloat16", "torch.bool"])),
        device=draw(st.sampled_from(["cpu", "cuda:0", "cuda:1", "meta"])),
        shape=shape,
        stride=stride,
        pytype=draw(st.sampled_from([None, "torch.Tensor", "torch.nn.parameter.Parameter"])),
        size_expr=exprs(shape) if symbolic else None,
        stride_expr=exprs(stride) if symbolic else None,
        contiguous=None in stride and draw(st.booleans()),
    )


@given(_specs(), st.sampled_from(["user_input", "parameter", "buffer"]))
def test_a_spec_reads_back_as_it_was_written(spec: TensorSpec, role: str) -> None:
    """CC-17: what a record writes of a graph input, it reads back unchanged (and the JSON is plain data)."""
    written = GraphInput("tensor", "L['x']", role, spec).to_json()
    assert GraphInput.from_json(written, 0) == GraphInput("tensor", "L['x']", role, spec)
    assert all(isinstance(key, str) for key in written)


def test_the_record_format_is_what_it_was_before_the_spec_class() -> None:
    """Files written before `TensorSpec` existed load: the JSON keys and values of a static and of a symbolic input
    are those `record.describe_input` wrote."""
    static = GraphInput.of("L['x']", "user_input", torch.randn(2, 3).t(), "torch.Tensor").to_json()
    assert static == {"kind": "tensor", "source": "L['x']", "role": "user_input", "dtype": "torch.float32",
                      "device": "cpu", "shape": [3, 2], "stride": [1, 3], "pytype": "torch.Tensor"}
    assert GraphInput.of("L['n']", "user_input", 3).to_json() == {"kind": "int", "source": "L['n']",
                                                                    "role": "user_input"}
    compiled = []

    def backend(gm: torch.fx.GraphModule, example_inputs: list) -> object:
        compiled.extend(node.meta["example_value"] for node in gm.graph.nodes if node.op == "placeholder")
        return gm.forward

    torch._dynamo.reset()
    torch.compile(lambda x: x * 2, backend=backend, dynamic=True)(torch.randn(4, 5))
    symbolic = GraphInput.of("L['x']", "user_input", compiled[-1]).to_json()
    rows, cols = symbolic["size_expr"]  # Dynamo's symbol names (s0/s1, or hashed ones such as s77/s27)
    assert symbolic == {"kind": "tensor", "source": "L['x']", "role": "user_input", "dtype": "torch.float32",
                        "device": "cpu", "shape": [None, None], "stride": [None, 1], "size_expr": [rows, cols],
                        "stride_expr": [cols, None], "contiguous": True}
    assert rows != cols and all(isinstance(name, str) for name in (rows, cols))


@pytest.mark.parametrize("field", [{"device": "cuda"}, {"device": "nodevice"}, {"dtype": "torch.nothing"},
                                   {"size": [2, 3]}, {"stride": [1, -1]}])
def test_a_tensor_guard_no_spec_can_hold_is_refused_when_it_loads(field: dict) -> None:
    """CC-17: a TENSOR_MATCH read from a file is checked by the same rules as a graph input's spec; one that no
    spec can hold (a bad dtype, device, or dims) is refused, so the file is rebuilt rather than failing a call.
    `cuda` without an index is a valid device: it simply never fits a tensor on `cuda:0` (Dynamo compares the
    index)."""
    data = {"check": "tensor", "guard": "TENSOR_MATCH", "when": "first", "text": "", "source": "L['self'].w",
            "dtype": "torch.float32", "device": "cpu", "size": [2], "stride": [1], **field}
    if field == {"device": "cuda"}:
        assert not guard_kinds.from_json(data).fits(torch.zeros(2))
        return
    with pytest.raises(UnknownGuard):
        guard_kinds.from_json(data)


def test_a_tensor_guard_with_symbolic_dims_loads_and_checks_the_static_ones() -> None:
    """CC-21: Dynamo's TENSOR_MATCH text gives `None` for a dim it left symbolic, with no expression: such a guard
    loads (a file holding it is not broken on every load) and checks only the static dims."""
    data = {"check": "tensor", "guard": "TENSOR_MATCH", "when": "first", "text": "", "source": "L['self'].t",
            "dtype": "torch.float32", "device": "cpu", "size": [None, 4], "stride": [None, 1]}
    guard = guard_kinds.from_json(data)
    assert guard.fits(torch.zeros(3, 4)) and guard.fits(torch.zeros(7, 4))
    assert not guard.fits(torch.zeros(3, 5)) and not guard.fits(torch.zeros(4, 3).t())


@given(st.sampled_from([(2, 3), (3, 2), (1, 3), (2, 1), (2, 3, 1)]), st.booleans(),
       st.sampled_from([torch.float32, torch.float64]))
def test_tensor_match_and_the_graph_input_check_agree(shape: tuple, transpose: bool, dtype: torch.dtype) -> None:
    """CC-15/CC-21: a module tensor guarded by TENSOR_MATCH and a graph input with the same static spec accept
    exactly the same tensors (one class decides both)."""
    traced = torch.randn(2, 3)
    guard = Tensor("TENSOR_MATCH", "first", "", "L['self'].w", str(traced.dtype), str(traced.device), [2, 3], [3, 1])
    graph_input = GraphInput.of("L['self'].w", "parameter", traced)
    value = torch.randn(*shape, dtype=dtype)
    value = value.t() if transpose and value.dim() == 2 else value
    assert guard.fits(value) == (inputs.mismatch([value], [graph_input]) is None)


@pytest.mark.parametrize(("field", "message"), [
    # found by an attack on this module: each loaded, and the first two crashed or hung the first warm call
    ({"size_expr": ["((((9**8)**8)**8)**8)**8", None]}, "not an expression a warm start can check"),
    ({"size_expr": ["(((((((((9**8)**8)**8)**8)**8)**8)**8)**8)**8)", None]}, "not an expression"),
    ({"size_expr": ["(((s0**8)**8)**8)**8", None]}, "not an expression a warm start can check"),
    ({"size_expr": ["s0\n", None]}, None),  # a trailing newline is no symbol, but still an expression
    ({"contiguous": True, "shape": [4, 4], "stride": [1, 4], "size_expr": None, "stride_expr": None},
     "strides \\[1, 4\\] are all static"),
    ({"size_expr": None}, "missing, but a size or stride is symbolic"),
    ({"size_expr": [None, None]}, "a symbolic dim has no expression"),
    ({"size_expr": ["s0", "4"]}, "the static dim 4 has the expression '4'"),
    ({"shape": [3, 4], "stride": [4, 1]}, "recorded, but every size and stride is static"),
])
def test_a_spec_of_cannot_have_written_is_refused(field: dict, message: str | None) -> None:
    """CC-17: `from_json` refuses what `TensorSpec.of` could not have written, so that a tampered or corrupt file is
    rebuilt when it loads; it never crashes, hangs, or tells the input check and the graph loader different
    layouts (a static layout marked contiguous was accepted as row-major by the check while the loader dropped
    Inductor's assert of the recorded strides). An expression must stay within an int64 with every symbol 2, which
    bounds its degree, so no evaluation of it with real sizes is slow or huge."""
    data = {"dtype": "torch.float32", "device": "cpu", "shape": [None, 4], "stride": [4, 1],
            "size_expr": ["s0", None], "stride_expr": [None, None], **field}
    if message is None:
        spec = TensorSpec.from_json(data)
        assert spec.size_expr == ("s0\n", None)
        return
    with pytest.raises(BrokenCacheError, match=message):
        TensorSpec.from_json(data)
    TensorSpec.from_json({**data, **{key: value for key, value in _VALID.items() if key in field}})


_VALID = {"size_expr": ["s0", None], "stride_expr": [None, None], "contiguous": False, "shape": [None, 4],
          "stride": [4, 1]}


def test_a_spec_with_a_device_index_refuses_another_index() -> None:
    """CC-21: the device index is part of the check: a spec for `cuda:1` (or `cpu:0`, a name no CPU tensor has)
    does not fit a tensor elsewhere; shown on CPU with the index torch compares."""
    spec = TensorSpec("torch.float32", "cpu:0", (2,), (1,))
    assert spec.type_mismatch(torch.zeros(2), "x") == "input x: expected device cpu:0, got cpu"
    with pytest.raises(BrokenCacheError, match="device"):
        TensorSpec.from_json({**spec.to_json(), "device": "cpu:x"})


@given(st.one_of(st.sampled_from(["cpu", "cuda", "cuda:0", "cuda:7", "meta", "cpu:0", "npu", "cuda:-1", "cud",
                                  "", " cpu", "CPU", "cuda:0:1", "privateuseone"]),
                 st.text(max_size=8)))
def test_a_device_text_is_judged_as_torch_judges_it_each_time(text: str) -> None:
    """`_is_device` keeps each answer: the kept one is torch's own, the first time and every later time."""
    try:
        torch.device(text)
        expected = True
    except (RuntimeError, ValueError):
        expected = False
    assert tensor_spec._is_device(text) is expected
    assert tensor_spec._is_device(text) is expected


@given(st.from_regex(r"\A[a-z]{1,3}[0-9]{1,4}\Z"))
def test_a_symbol_alone_is_an_expression_as_ast_reads_it(symbol: str) -> None:
    """`is_expression`'s shortcut for a symbol ("s0") agrees with reading it as Python: a name, worth 2."""
    assert tensor_spec.is_expression(symbol)
    assert tensor_spec.evaluate(symbol, {symbol: 5}) == 5
    assert tensor_spec.is_expression(symbol + "**2") and not tensor_spec.is_expression(symbol + "(")
