"""EX-7/EX-11 on the benchmark presets: the reference's export of each is GE op types only and, run on the GE
executor, gives the model's eager output (with dynamic=True also at another sequence length)."""

from __future__ import annotations

import pytest
import torch

from tests.reference.export import checks
from torchair_conformance.bench import models as bench_models
from torchair_conformance.execute import run_air
from torchair_ref.export import dynamo_export

# Every op type the presets' exports may hold: GE's own, as upstream's converters (or, for CPU attention, the
# reference's math form) write them.
GE_TYPES = {"Add", "BatchMatMulV2", "BroadcastTo", "Cast", "ConcatV2", "Const", "Data", "Gather", "GatherV2",
            "GeluV2", "Greater", "Identity", "LayerNormV4", "MaskedFill", "MatMul", "MatMulV2", "Mul", "Neg",
            "NetOutput", "Pack", "Pow", "Range", "ReduceMean", "Reshape", "Rsqrt", "Shape", "SoftmaxV2", "SplitV",
            "StridedSliceV2", "Swish", "Transpose", "Unsqueeze"}


class _Prompt(torch.nn.Module):
    """``tiny`` caches ``prompt``: export that method."""

    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__()
        self.module = module

    def forward(self, *args):
        return self.module.prompt(*args)


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("name", ["tiny", "gpt-small", "llama-xs"])
def test_preset_exports_compute_the_model(tmp_path, monkeypatch, name, dynamic):
    built = bench_models.build(name)
    model = built.module if built.method == "forward" else _Prompt(built.module)
    dynamo_export(*built.args, model=model, export_path=str(tmp_path), dynamic=dynamic, **built.kwargs)
    graph = checks.load_air(tmp_path / "export.air").graph[0]
    assert set(checks.op_counts(graph)) <= GE_TYPES, set(checks.op_counts(graph)) - GE_TYPES
    monkeypatch.chdir(tmp_path)
    calls = [built.args]
    if dynamic and name != "tiny":
        calls.append((built.args[0][:, :37],))
    for args in calls:
        tensors = [t for t in torch.utils._pytree.tree_leaves(args) if isinstance(t, torch.Tensor)]
        with torch.no_grad():
            want = model(*args)
        (got,), = run_air(tmp_path / "export.air", tensors)[:1]
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
