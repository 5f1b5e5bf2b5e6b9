"""The reference's export leaves Dynamo as it found it, beyond EX-10 (which torchair_conformance/test_export_layout.py
checks): functions compiled before keep their code (upstream resets Dynamo instead), no cache entries stay on the
model's code, the model is never run, and an export's dims depend on its own inputs alone."""

from __future__ import annotations

import subprocess
import sys

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


_SHAPES_AFTER_OTHER_EXPORTS = """
import sys, tempfile, torch
from tests.reference.export import checks
from torchair_ref.export import dynamo_export

def data_dims(batch, width):
    model = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.Linear(width, 3))
    with tempfile.TemporaryDirectory() as out:
        dynamo_export(torch.randn(batch, width), model=model, export_path=out, dynamic=True)
        graph = checks.load_air(out + "/export.air").graph[0]
        return list(checks.ops_of(graph, "Data")[0].output_desc[0].shape.dim)

first = data_dims(3, 3)
data_dims(2, 5)
data_dims(4, 3)
print(first, data_dims(3, 3))
"""


def test_a_dynamic_export_depends_on_its_own_inputs_alone():
    """EX-10/EX-11: in a fresh process, a dynamic=True export of a 3x3 input gives the same Data dims before and after
    exports of other models and sizes (every export runs the same entry code, whose Dynamo frame state would carry
    the sizes they saw), and its batch is symbolic though it equals the width the weight fixes (no duck sizing)."""
    done = subprocess.run([sys.executable, "-c", _SHAPES_AFTER_OTHER_EXPORTS], env=checks.child_env(),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split("\n")[-2] == "[-1, 3] [-1, 3]", done.stdout


_EQUAL_DIMS_AT_OTHER_SIZES = """
import tempfile, torch
from tests.reference.export import checks
from torchair_conformance.execute import run_air
from torchair_ref.export import dynamo_export

class AddsTheWidth(torch.nn.Module):
    def forward(self, x):
        return x + x.shape[1]

model = AddsTheWidth()
with tempfile.TemporaryDirectory() as out:
    dynamo_export(torch.randn(4, 4), model=model, export_path=out, dynamic=True)
    graph = checks.load_air(out + "/export.air").graph[0]
    x = torch.randn(2, 5)
    (got,), = run_air(out + "/export.air", [x])[:1]
    print(list(checks.ops_of(graph, "Data")[0].output_desc[0].shape.dim), float((got - model(x)).abs().max()))
"""


def test_dims_equal_in_the_example_are_apart_in_the_graph():
    """EX-11: exported at 4x4 with dynamic=True (first in a fresh process), the graph reads each dim from its own
    place, so it computes the model at 2x5. With duck sizing both dims were one symbol: the graph added the batch
    where the model adds the width, a wrong answer with no error."""
    done = subprocess.run([sys.executable, "-c", _EQUAL_DIMS_AT_OTHER_SIZES], env=checks.child_env(),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split("\n")[-2] == "[-1, -1] 0.0", done.stdout
