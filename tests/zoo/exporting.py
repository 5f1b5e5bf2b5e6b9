"""The reference's `dynamo_export` of a zoo model, its graph run on the GE executor against eager (EX-7, EX-11):
what `tests/zoo/test_zoo_export.py` checks and `python -m tests.zoo.export_table` reports.

`python -m tests.zoo.export_table` prints, for every zoo model (static shapes; Llama also `dynamic=True`, run at a
second shape) and the ports of upstream's export tests, a row: ATen operators in the captured graph, GE op types
written, exported or the refusal, executed or the error, max |graph - eager|.
"""
from __future__ import annotations

import collections
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import torch

#: float32 tolerance of EX-11 for the zoo (issue 31)
RTOL, ATOL = 1e-3, 1e-4


@dataclass
class Row:
    """One export and its runs."""

    model: str
    dynamic: bool
    aten_ops: int = 0
    ge_ops: int = 0
    op_types: dict[str, int] = field(default_factory=dict)
    exported: str = "no"
    executed: str = "no"
    max_error: float | None = None
    shapes: list[str] = field(default_factory=list)

    def ok(self) -> bool:
        return self.exported == "yes" and self.executed == "yes"


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"


def export_and_run(name: str, model: torch.nn.Module, calls: list[tuple[tuple, dict]], *, dynamic: bool,
                   folder: Path | None = None) -> Row:
    """Export ``model`` on ``calls[0]`` with the reference, then run the graph on each call's inputs in the
    exporter's Data order (tensor args, then kwargs, then a Python int that is a Data of its own as a 0-d tensor)
    and compare with eager within RTOL/ATOL."""
    import ge_executor
    import torchair_ref
    from torchair_ref.export import capture, ge_build

    row = Row(name, dynamic)
    args, kwargs = calls[0]
    torch._dynamo.reset()
    with tempfile.TemporaryDirectory(prefix="zoo-export-") as scratch:
        out = Path(folder or scratch)
        try:
            captured = capture.capture(model, args, kwargs, dynamic=dynamic)
            row.aten_ops = len({ge_build._target_name(n.target) for n in captured.gm.graph.nodes
                                if n.op == "call_function"})
            torch._dynamo.reset()
            torchair_ref.dynamo_export(*args, model=model, export_path=str(out), dynamic=dynamic, **kwargs)
            row.exported = "yes"
        except Exception as exc:  # noqa: BLE001 - the refusal is the row's result
            row.exported = _error(exc)
            return row
        from ge_executor import ge_ir

        graph = ge_ir.ModelDef.FromString((out / "export.air").read_bytes()).graph[0]
        row.op_types = dict(collections.Counter(op.type for op in graph.op))
        row.ge_ops = len(row.op_types)
        try:
            runnable = ge_executor.load(graph, weights_dir=out)
            errors = []
            data = row.op_types.get("Data", 0)
            for call_args, call_kwargs in calls:
                tensors = [t for t in [*call_args, *call_kwargs.values()] if isinstance(t, torch.Tensor)]
                ints = [torch.tensor(v) for v in call_args if isinstance(v, int)]
                got = runnable.run(tensors + ints[:data - len(tensors)])
                with torch.no_grad():
                    want = model(*call_args, **call_kwargs)
                want = list(want) if isinstance(want, (tuple, list)) else [want]
                for g, w in zip(got, want, strict=True):
                    if (g.dtype, g.shape) != (w.dtype, w.shape):
                        raise AssertionError(f"output {tuple(g.shape)} {g.dtype}, eager {tuple(w.shape)} {w.dtype}")
                    errors.append((g.double() - w.double()).abs().max().item())
                    if not torch.allclose(g, w, rtol=RTOL, atol=ATOL):
                        raise AssertionError(f"max |graph - eager| {errors[-1]:.3g} beyond rtol {RTOL}, atol {ATOL}")
                row.shapes.append("x".join(str(n) for n in tensors[0].shape))
            row.executed, row.max_error = "yes", max(errors)
        except Exception as exc:  # noqa: BLE001 - the error is the row's result
            row.executed = _error(exc)
    return row


def zoo_row(name: str, dynamic: bool = False) -> Row:
    """A zoo model exported at its cold shape (and, dynamic, run at its other shape too)."""
    from torchair_conformance.zoo import catalog, export

    entry = catalog.entry(name)
    shapes = [entry.cold_shape, entry.other_shape] if dynamic else [entry.cold_shape]
    return export_and_run(name, export.build(name), [export.inputs(name, s) for s in shapes], dynamic=dynamic)


def port_rows() -> list[Row]:
    """The single-process ports of upstream's export tests (tests/reference/export/upstream_ports.py)."""
    from tests.reference.export import upstream_ports as ports

    torch.manual_seed(0)
    return [
        export_and_run("upstream test_export_bf16", ports.Bf16(), [(ports.example_bf16(), {})], dynamic=False),
        export_and_run("upstream test_export_with_sym_pack", ports.SymPack(),
                       [(ports.example_sym_pack(y), {}) for y in (3, 4)], dynamic=True),
        export_and_run("transformer block, att.softmax(-1)", ports.Block().eval(), [(ports.example_block(), {})],
                       dynamic=False),
    ]
