"""The reference's export leaves Dynamo as it found it, beyond EX-10 (which torchair_conformance/test_export_layout.py
checks): functions compiled before keep their code (upstream resets Dynamo instead), no cache entries stay on the
model's code, and the model is never run."""

from __future__ import annotations

import torch
from torch import nn
from torch._dynamo.eval_frame import _debug_get_cache_entry_list
from torch._dynamo.testing import CompileCounter

from tests.reference.export import checks, models
from torchair_ref.export import dynamo_export


def _double_plus_one(x):
    return x * 2 + 1


def _triple(x):
    return x * 3


def test_export_leaves_other_compiles_alone(tmp_path):
    """EX-10: a function compiled before keeps its compiled code, and later compiles behave as in a fresh process."""
    x = torch.randn(3, 4)
    before = CompileCounter()
    compiled_before = torch.compile(_double_plus_one, backend=before)
    compiled_before(x)
    config_before = torch._dynamo.config.get_config_copy()

    model = models.TwoLayer()
    dynamo_export(torch.randn(2, 4), model=model, export_path=str(tmp_path), config=checks.config())

    assert torch._dynamo.config.get_config_copy() == config_before, "export changed torch._dynamo.config"
    torch.testing.assert_close(compiled_before(x), x * 2 + 1)
    assert (before.frame_count, before.op_count) == (1, 2), (before.frame_count, before.op_count)

    for code in (type(model).forward.__code__, nn.Module._call_impl.__code__, nn.Linear.forward.__code__):
        entries = _debug_get_cache_entry_list(code)
        assert entries == [], f"export left {len(entries)} Dynamo cache entries on {code.co_qualname}"

    after = CompileCounter()
    compiled_after = torch.compile(_triple, backend=after)
    for _ in range(2):
        torch.testing.assert_close(compiled_after(x), x * 3)
    assert (after.frame_count, after.op_count) == (1, 1), (after.frame_count, after.op_count)

    model_counter = CompileCounter()
    compiled_model = torch.compile(model, backend=model_counter, fullgraph=True)
    torch.testing.assert_close(compiled_model(x[:, :4]), model(x[:, :4]))
    compiled_model(x[:, :4])
    assert model_counter.frame_count == 1, f"the exported model compiled {model_counter.frame_count} times"


class Counts(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        self.calls += 1
        return self.fc(x)


def test_export_does_not_run_the_model_or_change_grad_mode(tmp_path):
    """EX-1/EX-10: export traces without executing the model's graph and leaves grad mode as it found it."""
    model = Counts()
    calls = []
    handle = model.fc.register_forward_hook(lambda *_: calls.append(1))
    grad_before = torch.is_grad_enabled()
    dynamo_export(torch.randn(1, 2), model=model, export_path=str(tmp_path))
    handle.remove()
    found = (model.calls, calls, torch.is_grad_enabled())
    assert found == (0, [], grad_before), f"(forward calls, hook calls, grad mode) after export: {found}"
    assert checks.op_counts(checks.load_air(tmp_path / "export.air").graph[0])["MatMulV2"] == 1
