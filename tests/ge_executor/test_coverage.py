"""EX-11: every GE op type the reference's exporter can write has a kernel in the executor, so an export of the
reference never fails on the executor for a missing kernel. The set comes from the exporter's code
(``tests/ge_executor/emitted.py`` walks the lowering table), not from a hand list."""

from __future__ import annotations

import pytest

from ge_executor import supported_op_types
from tests.ge_executor.emitted import UnresolvedOpType, _Walk, exporter_op_types


def test_every_op_type_the_exporter_writes_has_a_kernel():
    emitted = exporter_op_types()
    missing = {op_type: sorted(origins) for op_type, origins in emitted.items() if op_type not in supported_op_types()}
    assert not missing, (f"GE op types the reference's lowering writes without an executor kernel (op type: the ATen "
                         f"operators that write it): {missing}. Add each to its family in impl/ge_executor/kernels/")


def test_the_walk_follows_helpers_factories_and_builder_methods():
    """The derivation is not vacuous: op types written through every route the exporter uses are found, each with
    the operator that writes it."""
    emitted = exporter_op_types()
    assert "aten.relu.default" in emitted["Relu"]  # a factory's closure: _unary("Relu")
    assert "sub" in emitted["Sub"]  # another closure of the same factory: _binary("Sub")
    assert "aten.add.Tensor" in emitted["Add"]  # a factory called at once: _binary("Add")(b, node, x, y)
    assert "aten.addmm.default" in emitted["MatMulV2"]  # a module helper: _matmul_v2
    assert "aten.arange.default" in emitted["Cast"]  # a Builder method: b.cast
    assert "aten.view.default" in emitted["Pack"]  # b.int_list of a symbolic size
    assert {"Data", "NetOutput", "Const", "FileConstant", "HcomAllReduce", "GeluV2"} <= set(emitted)


def test_an_op_type_the_walk_cannot_tell_fails_naming_the_function():
    def lower(b, node, x):
        kind = "Re" + "lu"
        return b.one(kind, [("x", x)], None, ())

    from torchair_ref.export.ge_build import Builder

    with pytest.raises(UnresolvedOpType, match=r"<locals>\.lower .*cannot tell the GE op type `kind`"):
        _Walk(Builder).function(lower, {})
