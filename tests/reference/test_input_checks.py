"""White-box: the reference's per-call input check (`torchair_ref.inference.inputs`, SPEC CC-14/CC-15)."""
from __future__ import annotations

import pytest
import torch

from torchair_ref.inference import inputs, tensor_spec
from torchair_ref.inference.tensor_spec import GraphInput


def _json(shape: list, stride: list, size_expr: list | None, stride_expr: list | None, **extra: object) -> dict:
    """A graph input as a record file holds it."""
    return {"kind": "tensor", "source": "L['x']", "role": "user_input", "dtype": "torch.float32", "device": "cpu",
            "shape": shape, "stride": stride, "size_expr": size_expr, "stride_expr": stride_expr, **extra}


def _meta(shape: list, stride: list, size_expr: list | None, stride_expr: list | None,
          **extra: object) -> GraphInput:
    """The same, as the record reads it."""
    return GraphInput.from_json(_json(shape, stride, size_expr, stride_expr, **extra), 0)


@pytest.mark.parametrize(("expr", "values", "expected"), [
    ("3*s0**2", {"s0": 4}, 48),
    ("s0*s1 + 2", {"s0": 3, "s1": 5}, 17),
    ("s0 - 1", {"s0": 7}, 6),
    ("7", {}, 7),
])
def test_evaluate_sums_products_and_small_powers(expr: str, values: dict, expected: int) -> None:
    assert tensor_spec.evaluate(expr, values) == expected


@pytest.mark.parametrize("expr", ["s0**s1", "s0**9", "s0/2", "s0//2", "f(s0)", "s0.real", "2.5*s0"])
def test_evaluate_refuses_anything_else(expr: str) -> None:
    with pytest.raises(ValueError, match="unsupported expression"):
        tensor_spec.evaluate(expr, {"s0": 2, "s1": 3})


def test_a_squared_symbol_in_a_stride_is_checked() -> None:
    """A stride Dynamo wrote as `3*s0**2` binds to the size that defines s0: a tensor that breaks it is refused."""
    record = [_meta([None, None, 3], [None, None, 1], ["s0", "s0", None], ["3*s0**2", "3*s0", None])]
    contiguous = torch.randn(4, 4, 3)  # strides (12, 3, 1): 12 is not 3*4**2
    assert inputs.mismatch([contiguous], record) is not None
    wrong_middle = torch.randn(4, 4, 4, 3)[:, 0]  # strides (48, 3, 1): 3 is not 3*4
    assert inputs.mismatch([wrong_middle], record) is not None
    good = torch.randn(4, 16, 3)[:, ::4]  # (4, 4, 3) with strides (48, 12, 1)
    assert good.stride() == (48, 12, 1)
    assert inputs.mismatch([good], record) is None
    checks = inputs.relation_tests(record)
    assert checks is not None and all(eval(test, {}, {"args": [good]}) for test in checks)  # noqa: S307
    assert not all(eval(test, {}, {"args": [contiguous]}) for test in checks)  # noqa: S307


def test_a_size_dynamo_specialised_is_fixed_by_the_guard_not_a_python_test() -> None:
    record = [_meta([None, None], [None, 1], ["2", "s1"], ["s1", None], contiguous=True)]
    assert record[0].tensor is not None and record[0].tensor.fixed_sizes() == [2, None]
    assert inputs.relation_tests(record) == []
    assert inputs.mismatch([torch.randn(3, 5)], record) is not None
    assert inputs.mismatch([torch.randn(2, 5)], record) is None


@pytest.mark.parametrize(("record", "call", "expected"), [
    # a static size beside a symbolic stride (today's main printed `stride 4==None`)
    ([_meta([3, None], [None, 1], [None, "s0"], ["s0", None])], [torch.randn(5, 4)],
     "expected size 5==3, stride 4==4 at dim=0"),
    # a symbol fixed by another input: the value it was bound to, not the expression
    ([_meta([None, 4], [4, 1], ["s0", None], [None, None]), _meta([None, 4], [4, 1], ["s0", None], [None, None])],
     [torch.randn(3, 4), torch.randn(5, 4)], "expected size 5==3, stride 4==4 at dim=0"),
    # a compound stride, evaluated
    ([_meta([None, None, 3], [None, None, 1], ["s0", "s0", None], ["3*s0**2", "3*s0", None])],
     [torch.randn(4, 4, 3)], "expected size 4==4, stride 12==48 at dim=0"),
    # symbolic strides recorded as contiguous: the row-major strides
    ([_meta([12, None], [None, 1], [None, "s1"], ["s1", None], contiguous=True)], [torch.randn(12, 6)[:, ::2]],
     "expected size 12==12, stride 6==3 at dim=0"),
    # upstream's test_cache_dynamic_assert_size_stride: cached for (12, 2) (the 2 fixed by Linear(2, 1)), called with
    # (12, 12): the first dim that differs, size or stride, in dim order (the reference said `12==2 ... at dim=1`)
    ([_meta([None, 2], [2, 1], ["s0", None], [None, None])], [torch.ones(12, 12)],
     "expected size 12==12, stride 12==2 at dim=0"),
])
def test_a_dynamic_graph_reports_upstreams_message_with_concrete_values(record: list, call: list,
                                                                        expected: str) -> None:
    """CC-15: a size or stride that does not fit a dynamic graph is reported in upstream's `assert_size_stride`
    words, `expected size {actual}=={expected}, stride {actual}=={expected} at dim={i}`, with numbers only."""
    found = inputs.mismatch(call, record)
    assert found is not None and found.kind == "layout", found
    assert found.message.startswith(expected), (found.message, expected)


@pytest.mark.parametrize("size_expr", [[[], "4"], ["", "4"], ["s0 +", "4"], [7, "4"], ["s0"], "s0", ["s0/2", "4"]])
def test_a_record_with_an_expression_it_cannot_check_is_broken(size_expr: object) -> None:
    """CC-17: a cache file whose symbolic sizes are not expressions the check can evaluate is refused when it loads
    (rebuilt with a warning), never a TypeError or SyntaxError at the first call (found by
    test_fuzz_cache_file_lazy)."""
    from torchair_ref.inference import artifact

    record = _json([None, None], [None, 1], size_expr, ["4", None], contiguous=True)
    with pytest.raises(artifact.BrokenCacheError, match="size_expr"):
        tensor_spec.graph_inputs([record])
    tensor_spec.graph_inputs([{**record, "size_expr": ["s0", "4"]}])


@pytest.mark.parametrize("device", ["", "nodevice", "cpu:x", 3, None])
def test_a_record_with_a_device_torch_does_not_know_is_broken(device: object) -> None:
    """CC-17: an input record whose device torch cannot parse is refused when the file loads, never a RuntimeError
    at the first call (found by test_fuzz_cache_file_lazy: `"device": ""`)."""
    from torchair_ref.inference import artifact

    record = _json([2, 4], [4, 1], None, None)
    tensor_spec.graph_inputs([record])
    with pytest.raises(artifact.BrokenCacheError, match="device"):
        tensor_spec.graph_inputs([{**record, "device": device}])


_WRAPPER = """
class Runner:
    def call(self, args):
        arg0_1, arg1_1, s0, arg3_1 = args
        args.clear()
        assert_size_stride(arg0_1, (1, 2), (2, 1), 'input')
        assert_size_stride(arg1_1, (1, ), (1, ), 'input')
        assert_size_stride(arg3_1, (s0, 2), (2, 1), 'input')
        if True:
            assert_size_stride(arg1_1, (1, ), (1, ), 'input')
        assert_size_stride_grouped((arg1_1, arg0_1), ((1, ), (1, 2)), ((1, ), (2, 1)), 'input')
        assert_size_stride_grouped((arg1_1, arg3_1), ((1, ), (4, 2)), ((1, ), (2, 1)), 'input')
        buf0 = empty_strided_cpu((1, ), (1, ), torch.float32)
        assert_size_stride(arg0_1, (1, 2), (2, 1), 'torch.ops.aten.mm.default')
        return (buf0, )
"""


def test_the_wrapper_keeps_only_the_asserts_the_input_check_does_not_cover() -> None:
    """CC-15: an input assert of Inductor's wrapper is left out (a `pass`, so that any block stays valid) only when
    the input check guarantees the very same static sizes and strides of the very same input (of every input, for
    torch 2.14's grouped form)."""
    from torchair_ref.compilers.inductor_wrapper import without_checked_asserts

    record = [_meta([1, 2], [2, 1], None, None), _meta([1], [1], None, None),
              GraphInput("symint", "L['n']", "user_input"),
              _meta([None, 2], [2, 1], ["s0", None], [None, None])]
    guaranteed = inputs.guaranteed_layouts(record)
    assert guaranteed == [([1, 2], [2, 1]), ([1], [1]), None, None]
    lines = without_checked_asserts(_WRAPPER, guaranteed).splitlines()
    asserts = [line.strip() for line in lines if "assert_size_stride" in line]
    assert asserts == ["assert_size_stride(arg3_1, (s0, 2), (2, 1), 'input')",
                       "assert_size_stride_grouped((arg1_1, arg3_1), ((1, ), (4, 2)), ((1, ), (2, 1)), 'input')",
                       "assert_size_stride(arg0_1, (1, 2), (2, 1), 'torch.ops.aten.mm.default')"]
    assert lines.count("        pass") == 3 and lines.count("            pass") == 1
    compile("\n".join(lines), "<wrapper>", "exec")
    other_layout = [([1, 2], [1, 1]), ([2], [1]), None, None]
    assert "pass" not in without_checked_asserts(_WRAPPER, other_layout)
    assert without_checked_asserts(_WRAPPER, guaranteed[:3]) == _WRAPPER  # not the wrapper's inputs: all kept
    assert without_checked_asserts(_WRAPPER, None) == _WRAPPER


@pytest.mark.parametrize(("record", "expected"), [
    # `tiny`'s input: sizes specialised by Dynamo, strides symbolic, contiguous -> row-major
    (_meta([None, None], [None, 1], ["2", "2"], ["2", None], contiguous=True), ([2, 2], [2, 1])),
    (_meta([1, None], [None, 1], [None, "64"], ["64", None], contiguous=True), ([1, 64], [64, 1])),
    (_meta([None, 4], [None, 1], ["s0", None], ["4", None], contiguous=True), None),  # a free size
    (_meta([0, 4], [None, 1], [None, None], ["4", None], contiguous=True), None),  # no elements: anything goes
    (_meta([3, 4], [None, 1], [None, None], ["s1", None]), None),  # not recorded as contiguous
    (_meta([3, 4], [None, 2], [None, None], ["s1", None], contiguous=True), None),  # a static stride not row-major
])
def test_a_contiguous_input_with_fixed_sizes_has_a_guaranteed_layout(record: GraphInput,
                                                                      expected: object) -> None:
    """CC-15: `is_contiguous()` on every call with every size fixed (none 0) leaves only the row-major strides, so
    Inductor's assert of the same layout repeats the input check (and is left out: `without_checked_asserts`)."""
    assert inputs.guaranteed_layouts([record]) == [expected]


@pytest.mark.parametrize("tensor", [torch.randn(1, 64), torch.randn(7, 64)[2:3], torch.randn(64, 1).t(),
                                    torch.randn(2, 64)[:, ::2].contiguous(), torch.randn(1, 128)[:, ::2]])
def test_whatever_passes_the_check_of_a_guaranteed_layout_passes_inductors_assert(tensor: torch.Tensor) -> None:
    """CC-15: every tensor the full check accepts for a guaranteed layout also passes `assert_size_stride` of that
    layout; one it refuses is never run (so leaving the assert out drops no check)."""
    from torch._C._dynamo.guards import assert_size_stride

    record = _meta([1, None], [None, 1], [None, "64"], ["64", None], contiguous=True)
    [(sizes, strides)] = inputs.guaranteed_layouts([record])
    if inputs.mismatch([tensor], [record]) is None:
        assert_size_stride(tensor, tuple(sizes), tuple(strides))
    else:
        with pytest.raises(AssertionError):
            assert_size_stride(tensor, tuple(sizes), tuple(strides))


def test_tinys_grouped_input_assert_of_torch_2_14_is_left_out() -> None:
    """CC-15: `tiny` on torch 2.14: Inductor groups the asserts of the two parameters and of `x` (sizes specialised,
    strides symbolic, contiguous); the input check covers all three, so no assert runs on a warm call."""
    from torchair_ref.compilers.inductor_wrapper import without_checked_asserts

    record = [_meta([1, 2], [2, 1], None, None), _meta([1], [1], None, None),
              _meta([None, None], [None, 1], ["2", "2"], ["2", None], contiguous=True),
              _meta([2, 2], [2, 1], None, None)]
    wrapper = ("def call(args):\n"
               "    arg0_1, arg1_1, arg2_1, arg3_1 = args\n"
               "    assert_size_stride_grouped((arg1_1, arg2_1, arg0_1), ((1, ), (2, 2), (1, 2)), "
               "((1, ), (2, 1), (2, 1)), 'input')\n"
               "    assert_size_stride(arg3_1, (2, 2), (2, 1), 'input')\n")
    assert "assert" not in without_checked_asserts(wrapper, inputs.guaranteed_layouts(record))


def test_a_scalar_input_is_checked_for_its_type_in_the_full_check_and_the_fast_path() -> None:
    """CC-15, CC-17 (issue 30): a graph input of a scalar kind takes only that Python type (a symbolic int arrives
    as an int); after a call passes the full check, the one-call fast path keeps checking it, so a tensor where the
    record says an int goes to the full check and is refused, never to the graph."""
    tensor = _meta([2, 3], [3, 1], None, None)
    count = GraphInput("symint", "L['x'].size()[0]", "user_input")
    assert count.scalar_mismatch(2) is None and count.scalar_mismatch(True) is not None
    assert "expected a value of type int, got a Tensor" in (count.scalar_mismatch(torch.ones(2)) or "")
    assert GraphInput("float", "L['scale']", "user_input").scalar_mismatch(2) is not None
    ran: list[tuple] = []
    refused: list[inputs.Mismatch] = []

    def refuse(found: inputs.Mismatch) -> None:
        refused.append(found)
        raise inputs.InputMismatchError(found)

    check = inputs.GraphInputCheck(lambda args: ran.append(tuple(args)), [tensor, count], refuse)
    scope: dict = {}
    check.bind(scope, "graph")
    x = torch.ones(2, 3)
    scope["graph"](x, 2)  # the full check, which installs the fast path
    assert scope["graph"] is not check._checked_call
    scope["graph"](x, 2)
    assert len(ran) == 2 and not refused
    with pytest.raises(inputs.InputMismatchError, match="expected a value of type int, got a Tensor"):
        scope["graph"](x, torch.ones(2))
    assert len(ran) == 2 and len(refused) == 1
