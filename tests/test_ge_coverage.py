"""docs/ge-coverage.md cannot go stale (EX-7): regenerated from the wheel's converter registry, the reference's
lowering table and the executor's kernels, it equals the committed page; without the wheel, the committed page's
reference columns still agree with the code. The static reader of upstream's registry is checked on a small
converter tree of its own."""

from __future__ import annotations

import re
import textwrap

import pytest

from tests import ge_coverage


def _committed_rows() -> dict[str, list[str]]:
    rows = {}
    for line in ge_coverage.DOC.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\| `([^`]+)` \|(.*)\|$", line)
        if match:
            rows[match.group(1)] = [cell.strip() for cell in match.group(2).split(" | ")]
    return rows


def test_the_committed_page_is_what_the_generator_writes_now():
    from torchair_cpu import wheel

    try:
        torchair = wheel.ensure() / "torchair"
    except wheel.WheelError as exc:
        pytest.skip(f"the torch-npu wheel's sources are not available here ({exc}); the reference's columns are "
                    "checked by test_the_committed_pages_reference_columns_match_the_lowering_table")
    page = ge_coverage.build(torchair)
    assert ge_coverage.DOC.read_text(encoding="utf-8") == page, (
        "docs/ge-coverage.md is stale: run `python -m tests.ge_coverage --write` (and commit it)")


def test_the_committed_pages_reference_columns_match_the_lowering_table():
    """Without the wheel: every operator the reference lowers is a row marked lowered (or a row of the "not
    converted" table), no other row is, the GE ops column is what each lowering writes, and the heading's count is
    the number of lowered ATen rows."""
    lowered = ge_coverage.reference_lowerings()
    rows = _committed_rows()
    marked = {op for op, cells in rows.items() if len(cells) == 5 and cells[2] == "yes" or len(cells) == 2}
    assert marked == set(lowered), (f"lowered but not marked: {sorted(set(lowered) - marked)}; marked but not "
                                    f"lowered: {sorted(marked - set(lowered))}")
    for op, ge_ops in lowered.items():
        cell = rows[op][3] if len(rows[op]) == 5 else rows[op][1]
        assert cell == ge_coverage._cell(ge_ops), f"{op}: the page lists {cell}, the lowering writes {sorted(ge_ops)}"
    heading = ge_coverage.DOC.read_text(encoding="utf-8").splitlines()[0]
    count = sum(1 for op, cells in rows.items() if op.startswith("aten.") and len(cells) == 5 and cells[2] == "yes")
    assert f"lowers {count} of the" in heading, heading


def test_the_registry_reader_on_a_converter_tree(tmp_path):
    """Decorated converters, the register(...)(fn) form, getattr overloads, helpers of the module followed for their
    ge.<Op> calls, and stubs that only raise counted apart."""
    package = tmp_path / "torchair" / ge_coverage.CONVERTERS / "aten"
    package.mkdir(parents=True)
    (package / "demo.py").write_text(textwrap.dedent('''
        def _helper(x):
            return ge.Relu(ge.Neg(x))

        @declare_supported([])
        @register_fx_node_ge_converter(torch.ops.aten.demo.default)
        def demo(self, meta_outputs=None):
            """NB: a docstring"""
            if self.dtype is None:
                raise RuntimeError("no")
            return _helper(ge.Cast(self, dst_type=1))

        @register_fx_node_ge_converter(torch.ops.aten.demo.out)
        def demo_out(self, out=None, meta_outputs=None):
            """NB: a stub"""
            raise NotImplementedError("torch.ops.aten.demo.out ge_converter is not implemented!")

        @register_fx_node_ge_converter(getattr(torch.ops.aten.demo, "dimname", None))
        def demo_dimname(self, dim, meta_outputs=None):
            return ge.Identity(self)

        def later(x, meta_outputs=None):
            return ge.Exp(x)

        later_reg = register_fx_node_ge_converter(operator.neg)(later)
    '''))
    found = {c.op: c for c in ge_coverage.upstream_converters(tmp_path / "torchair")}
    assert sorted(found) == ["aten.demo.default", "aten.demo.dimname", "aten.demo.out", "operator.neg"]
    assert found["aten.demo.default"].ge_ops == {"Cast", "Relu", "Neg"} and found["aten.demo.default"].converts
    assert found["aten.demo.default"].where == "torchair/_ge_concrete_graph/ge_converter/aten/demo.py:7"
    assert not found["aten.demo.out"].converts and found["aten.demo.out"].ge_ops == set()
    assert found["aten.demo.dimname"].ge_ops == {"Identity"} and found["operator.neg"].ge_ops == {"Exp"}
    page = ge_coverage.render(list(found.values()), {"aten.demo.default": {"Relu"}}, {"Relu", "Cast"}, "demo")
    assert page.splitlines()[0].endswith("lowers 1 of the 2 ATen operators upstream TorchAir converts")
    assert "| `aten.demo.default` | torchair/_ge_concrete_graph/ge_converter/aten/demo.py:7 | `Cast`, `Neg`, " \
           "`Relu` | yes | `Relu` | `Neg` |" in page
