"""Guards hold on every warm call, against the state before the cold call (CC-21; CC-12, CC-14, CC-17; issue 30
items 1 and 2).

State changed between two warm calls: a warm process loads the cold file, makes the cold call (served untraced),
then changes what the cold trace's guards fixed (a bool switching an adapter off, a flag on a module-level config
object, a class attribute, a submodule replaced, an int used as a slice bound; or the first call built an attribute
lazily) and calls again: that call must give
eager's answer (a recompile, CC-12), never the first graph's. State the method itself changes (a counter, a lazily
built attribute, a list argument it appends to): a warm process that starts as the cold one did loads the file and
traces nothing; one that starts from the state the cold call left behind is not served the cold graph.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.reference import warm_guards
from tests.reference.warm_guards import Case

pytestmark = pytest.mark.slow

#: a model with a Linear `lin` and what each case adds; `run` is the cached method
MODEL = """
class Cfg:
    pass


CFG = Cfg()
CFG.use_relu = True


class ClassAttr:
    factor = 2


class Model(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        {init}
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, {signature}):
        {body}


def build(options):
    return Model(options).eval()


def cold(model):
    yield (model, {cold}, {{}})


def warm(model):
    {change}
    yield (model, {warm}, {{}})
"""


def case(body: str, change: str, *, init: str = "pass", signature: str = "x", cold: str = "(torch.randn(2, 4),)",
         warm: str = "(torch.randn(2, 4),)", names: tuple = (), twin: bool = False) -> Case:
    return Case(MODEL.format(init=init, signature=signature, body=body, cold=cold, change=change, warm=warm),
                names=names, twin=twin)


#: what changes between two warm calls, after the first one was served from the file (issue 30 item 1)
BETWEEN_CALLS = {
    "adapter_switched_off": case(
        "y = self.lin(x)\n        if self.use_adapter:\n            y = y + self.adapter(x)\n        return y",
        "model.use_adapter = False",
        init="self.adapter = torch.nn.Linear(4, 4)\n        self.use_adapter = True", names=("use_adapter",)),
    "module_level_config_flag": case(
        "y = self.lin(x)\n        return torch.relu(y) if CFG.use_relu else y", "CFG.use_relu = False",
        names=("use_relu",)),
    "class_attribute": case("return self.lin(x) * ClassAttr.factor", "ClassAttr.factor = 5", names=("factor",)),
    "submodule_replaced": case(
        "return self.act(self.lin(x))", "model.act = torch.nn.Tanh()", init="self.act = torch.nn.ReLU()",
        names=("act", "TYPE_MATCH", "ID_MATCH")),
    "lazy_init_then_built": case(
        "if self.cache is None:\n            self.cache = x.abs() + 1\n        return x * self.cache", "pass",
        init="self.cache = None", names=("cache", "NONE_MATCH"), twin=True),
    "int_slice_bound": case("return self.lin(x)[:, :self.keep]", "model.keep = 2", init="self.keep = 3",
                            names=("keep",)),
    # the Python type of a parameter (issue 30 item 3): Dynamo's tensor guard checks it, so the warm check does too
    "parameter_type": case(
        "return self.lin(x)",
        "class MyParam(torch.nn.Parameter):\n        pass\n    model.lin.weight = MyParam(model.lin.weight.detach())",
        names=("MyParam",)),
}


@pytest.mark.parametrize("name", sorted(BETWEEN_CALLS))
def test_a_change_after_the_first_warm_call_is_seen(tmp_path: Path, name: str):
    """CC-21: the guards run on every warm call, not only the first (issue 30 item 1)."""
    case = BETWEEN_CALLS[name]
    script = warm_guards.write(tmp_path, name, case)
    warm_guards.cold_cache(script, case, tmp_path)
    report = warm_guards.run(script, "later", case, warm_guards.copy_cache(tmp_path, tmp_path / "warm"))
    warm_guards.assert_loaded(report)
    warm_guards.assert_never_served_silently(report, case.names)
    assert report["unique_graphs"] >= 1, "the changed call was served by the loaded graph"


#: methods that change what their guards read (issue 30 item 2); `warm` starts from the state the cold call left
MUTATED = {
    "counter": case("self.calls += 1\n        return x * self.calls", "model.calls = 1", init="self.calls = 0",
                    names=("calls",), twin=True),
    "lazy_init": case(
        "if self.cache is None:\n            self.cache = x.abs() + 1\n        return x * self.cache",
        "model.cache = torch.ones(2, 4) * 5", init="self.cache = None", names=("cache", "NONE_MATCH"), twin=True),
    "list_argument": case(
        "hist.append(x)\n        return self.lin(torch.stack(hist).mean(0))", "history = [torch.randn(2, 4)]",
        signature="x, hist", cold="(torch.randn(2, 4), [])", warm="(torch.randn(2, 4), history)",
        names=("hist", "LENGTH"), twin=True),
}


@pytest.mark.parametrize("name", sorted(MUTATED))
def test_guards_are_recorded_from_the_state_before_the_cold_call(tmp_path: Path, name: str):
    """CC-21: a warm process starting as the cold one did loads the file (no rewrite every run); one starting from
    the state the cold call left is not served the cold graph (issue 30 item 2)."""
    case = MUTATED[name]
    script = warm_guards.write(tmp_path, name, case)
    warm_guards.cold_cache(script, case, tmp_path)
    again = warm_guards.run(script, "cold", case, warm_guards.copy_cache(tmp_path, tmp_path / "again"))
    warm_guards.assert_loaded(again)
    assert again["unique_graphs"] == 0, again["warnings"]
    after = warm_guards.run(script, "warm", case, warm_guards.copy_cache(tmp_path, tmp_path / "after"))
    warm_guards.assert_never_served_silently(after, case.names)
    assert after["unique_graphs"] >= 1, "the changed state was served by the loaded graph"
