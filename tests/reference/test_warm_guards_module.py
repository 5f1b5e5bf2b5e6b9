"""A warm start never serves a module, or code, the cold trace's guards reject (CC-21 (b), (d), (f); CC-22; CC-15,
CC-17): tied parameters, hooks, submodule training, the live code reached, parameter sizes, the hash seed.

Each case runs a cold process (it writes the cache) and a warm process whose first call meets the differing module
(the file is stale: CC-17), judged against eager's result in the same process (tests/reference/warm_guards.py).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.reference import warm_guards
from tests.reference.warm_guards import Case

pytestmark = pytest.mark.slow

#: a Linear submodule `fc` behind `run`; PRE and POST are the case's lines around the call
SUBMODULE = """
class Sub(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x)


class Model(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.sub = Sub()
        self.bn = torch.nn.BatchNorm1d(3)
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, x):
        return self.bn(helper(self.sub(x)))


def relu(x):
    return torch.relu(x)


def sigmoid(x):
    return torch.sigmoid(x)


helper = {helper}


def plus_one(module, args, output):
    return output + 1


def times_three(self, x):
    return self.fc(x) * 3


def build(options):
    return Model(options).eval()


def cold(model):
    {cold}
    yield (model, (torch.randn(8, 3),), {{}})


def warm(model):
    {warm}
    yield (model, (torch.randn(8, 3),), {{}})
"""


def submodule(cold: str = "pass", warm: str = "pass", helper: str = "relu", names: tuple = ()) -> Case:
    return Case(SUBMODULE.format(cold=cold, warm=warm, helper=helper), names=names)


TIED = """
class Model(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4)
        self.head = torch.nn.Linear(4, 10, bias=False)
        if PHASE == "cold":
            self.head.weight = self.embed.weight
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, ids):
        return self.head(self.embed(ids))


def build(options):
    return Model(options)


def cold(model):
    yield (model, (torch.arange(6),), {})


warm = cold
"""

#: CC-15/CC-17: the second instance's parameter is longer; str(module) is the same (a bare Parameter is not shown)
PARAMETER_SIZE = """
class Model(torch.nn.Module):
    def __init__(self, options, n):
        super().__init__()
        self.options = options
        self.scale = torch.nn.Parameter(torch.randn(n))
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, x):
        return x.sum(-1, keepdim=True) * self.scale


def build(options):
    return Model(options, 4 if PHASE == "cold" else 6)


def cold(model):
    yield (model, (torch.randn(8, 3),), {})
    yield (Model(model.options, 6), (torch.randn(8, 3),), {})


def warm(model):
    yield (model, (torch.randn(8, 3),), {})
"""

CASES = {
    "tied_then_untied": Case(TIED, names=("tied", "weight", "alias", "parameter")),
    "parameter_size": Case(PARAMETER_SIZE, names=("size", "scale", "parameter")),
    "hook_removed": submodule(cold="model.sub.fc.register_forward_hook(plus_one)", names=("hook",)),
    "hook_added": submodule(warm="model.sub.fc.register_forward_hook(plus_one)", names=("hook",)),
    "submodule_training": submodule(warm="model.bn.train()", names=("training",)),
    "helper_chosen_at_import": submodule(helper="relu if PHASE == 'cold' else sigmoid",
                                         names=("helper", "relu", "sigmoid", "code")),
    "monkeypatched_method": submodule(warm="model.sub.forward = types.MethodType(times_three, model.sub)",
                                      names=("forward", "code", "sub")),
    # the class's traced method itself replaced: the class guard compares the code of the methods the trace reached
    "monkeypatched_class_method": submodule(warm="Sub.forward = times_three", names=("Sub", "TYPE_MATCH")),
    # a member the cold class did not have: an attribute lookup may now find it first
    "member_added_to_class": submodule(warm="Sub.extra = times_three", names=("Sub", "TYPE_MATCH")),
}


@pytest.mark.parametrize("name", list(CASES))
def test_warm_module_the_cold_trace_would_not_serve(tmp_path: Path, name: str) -> None:
    """CC-21: the first warm call on a module or code the cold trace's guards reject equals eager's result, and the
    re-trace's warning names what differs (CC-17)."""
    case = CASES[name]
    script = warm_guards.write(tmp_path, "case", case)
    warm_guards.cold_cache(script, case, tmp_path)
    report = warm_guards.run(script, "warm", case, tmp_path)
    warm_guards.assert_never_served_silently(report, case.names)


BLOCK = """
class Block(torch.nn.Module):
    def forward(self, x):
        return x * {factor}


class Model(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.block = Block()
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, x):
        return self.block(x) + 1


def build(options):
    return Model(options)


def cold(model):
    yield (model, (torch.randn(8, 3),), {{}})


warm = cold
"""


def test_two_scripts_in_one_folder_share_no_graph(tmp_path: Path) -> None:
    """CC-21 (f): two `__main__` scripts with the same class names and `str(module)`, a different `Block.forward`,
    run in one folder: the second never runs the first one's graph."""
    first = warm_guards.write(tmp_path, "first", Case(BLOCK.format(factor=2)))
    second = warm_guards.write(tmp_path, "second", Case(BLOCK.format(factor=3)))
    warm_guards.cold_cache(first, Case(""), tmp_path)
    report = warm_guards.run(second, "warm", Case(""), tmp_path)
    # the class guard on `self.block` fails (its class's code differs); before its message said "the code it
    # reaches does not fit", which any failure said
    warm_guards.assert_never_served_silently(report, ("Block.forward", "TYPE_MATCH", "'block'"))


SPARE = BLOCK.replace("        return x * {factor}\n", """        return x * 2

    def spare(self, x):
        return x * {factor}
""")


def test_a_method_the_trace_never_reached_may_differ(tmp_path: Path) -> None:
    """CC-21 (f), CC-14: two scripts whose `Block` differs only in a method the trace never reached load each
    other's graph: a cold trace of the second would have read the same code, so it would have served the call."""
    first = warm_guards.write(tmp_path, "first", Case(SPARE.format(factor=2)))
    second = warm_guards.write(tmp_path, "second", Case(SPARE.format(factor=3)))
    warm_guards.cold_cache(first, Case(""), tmp_path)
    report = warm_guards.run(second, "warm", Case(""), tmp_path)
    assert report["unique_graphs"] == 0 and not report["warnings"], report
    warm_guards.assert_loaded(report)


SET_CONSTANT = """
class Model(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.kind = "gamma"
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, x):
        if self.kind in {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}:
            return x * 2
        return x - 1


def build(options):
    return Model(options)


def cold(model):
    yield (model, (torch.randn(8, 3),), {})


warm = cold
"""


@pytest.mark.parametrize("warm_seed", ["2", None], ids=["seed2", "unset"])
def test_set_constant_loads_under_another_hash_seed(tmp_path: Path, warm_seed: str | None) -> None:
    """CC-22, CC-14: a method holding a set constant, cached with PYTHONHASHSEED=1, loads (untraced, no warning)
    in a process with another seed, or none (random)."""
    script = warm_guards.write(tmp_path, "case", Case(SET_CONSTANT))
    warm_guards.cold_cache(script, Case(SET_CONSTANT), tmp_path, env={"PYTHONHASHSEED": "1"})
    report = warm_guards.run(script, "warm", Case(SET_CONSTANT), tmp_path, env={"PYTHONHASHSEED": warm_seed})
    assert report["unique_graphs"] == 0 and not report["warnings"], report
    warm_guards.assert_loaded(report)
