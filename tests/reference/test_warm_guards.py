"""A warm call that depends on the arguments is never served when the cold trace's guards reject it (CC-21 (a)-(c),
(e); CC-12, CC-14, CC-17): size relations, argument structure, non-tensor values, autocast.

Each case runs a cold process (it writes the cache), then warm processes on copies of that cache: "warm" makes the
differing call first (the file is stale: CC-17), "later" first makes the cold call (it loads) then the differing one
(a recompile: CC-12). Every warm call is judged against eager's result in the same process
(tests/reference/warm_guards.py).
The module-level cases (hooks, training, code, hash seed, parameter sizes) are
tests/reference/test_warm_guards_module.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.reference import warm_guards
from tests.reference.warm_guards import Case

pytestmark = pytest.mark.slow

ONE_INPUT = """
class Model(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, x):
        {body}


def build(options):
    return Model(options)


def cold(model):
    yield (model, (torch.randn({cold}),), {{}})


def warm(model):
    yield (model, (torch.randn({warm}),), {{}})
"""


def one_input(body: str, cold: str, warm: str, names: tuple = ("size",), inductor: bool = True) -> Case:
    return Case(ONE_INPUT.format(body=body, cold=cold, warm=warm), names=names, inductor=inductor)


ARGUMENTS = """
class Model(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, {signature}):
        {body}


def build(options):
    return Model(options)


def cold(model):
    a, b, c = torch.randn(8, 3), torch.randn(8, 3), torch.randn(8, 3)
    yield (model, {cold}, {{}})


def warm(model):
    a, b, c = torch.randn(8, 3), torch.randn(8, 3), torch.randn(8, 3)
    yield (model, {warm}, {{}})
"""


def arguments(signature: str, body: str, cold: str, warm: str, names: tuple, dynamic: bool = True,
              inductor: bool = False) -> Case:
    return Case(ARGUMENTS.format(signature=signature, body=body, cold=cold, warm=warm), dynamic, names, inductor)


#: a shape guard with `math.ceil` and `/` (MobileViT rounds its patch grid up this way): Dynamo guards
#: `(-1)*L['x'].size()[0] + 4*math.ceil(L['x'].size()[0] / 4) == 0` for the 8 rows of the cold call
CEIL = """
import math


class Model(torch.nn.Module):
    def __init__(self, options):
        super().__init__()
        self.cached = torchair_ref.inference.cache_compile(self.run, **options)

    def run(self, x):
        pad = math.ceil(x.size(0) / 4) * 4 - x.size(0)
        return (torch.nn.functional.pad(x, (0, 0, 0, pad)) if pad else x) * 2


def build(options):
    return Model(options)


def cold(model):
    yield (model, (torch.randn(8, 3),), {{}})


def warm(model):
    yield (model, (torch.randn({warm}),), {{}})
"""

CASES = {
    # (a) symbolic size relations, cached with 8 rows
    "slice_constant": one_input("return x[:4] * 2", "8, 3", "2, 3"),
    "slice_int": arguments("x, n", "return x[:n] + 1", "(a, 6)", "(torch.randn(2, 3), 6)", ("size", "n"),
                           inductor=True),
    "narrow": arguments("x, s", "return x.narrow(0, s, 3) * 2", "(a, 2)", "(torch.randn(2, 3), 0)", ("size",)),
    "slice_past_the_end": one_input("return x[:5_000_000] + 1", "5_000_008, 1", "2, 1"),
    "branch_on_size": one_input("return x * 2 if x.size(0) > 3 else x - 1", "8, 3", "2, 3", inductor=False),
    "squeeze_batch_one": one_input("return x.squeeze() + 1", "8, 1, 6", "1, 1, 6"),
    "empty_input": one_input("return x.amax(0)", "8, 3", "0, 3"),
    "ceil_of_size": Case(CEIL.format(warm="6, 3"), names=("size", "ceil")),
    # (b) argument structure
    "same_tensor_twice": arguments("x, y", "return x * 2 + y", "(a, a)", "(a, b)",
                                   ("alias", "same", "duplicate", " is l[")),
    "optional_tensor": arguments("x, mask=None", "return x * 2 if mask is None else x * mask", "(a,)", "(a, b)",
                                 ("none", "mask")),
    "list_length": arguments("xs", "return sum(xs)", "([a, b],)", "([a, b, c],)", ("len", "xs")),
    # (c) non-tensor values the graph specialised on
    "int_static": arguments("x, k", "return x * k", "(a, 2)", "(a, 3)", ("k",), dynamic=False),
    "bool": arguments("x, flag", "return x + 1 if flag else x - 1", "(a, True)", "(a, False)", ("flag",)),
    "str": arguments("x, mode", "return x.relu() if mode == 'relu' else x.sigmoid()", "(a, 'relu')",
                     "(a, 'sigmoid')", ("mode",)),
    # (e) global state: autocast
    "autocast": Case("""
        class Model(torch.nn.Module):
            def __init__(self, options):
                super().__init__()
                self.fc = torch.nn.Linear(3, 3)
                self.cached = torchair_ref.inference.cache_compile(self.run, **options)

            def run(self, x):
                return self.fc(x)


        def build(options):
            return Model(options)


        def cold(model):
            yield (model, (torch.randn(8, 3),), {})


        def warm(model):
            yield (model, (torch.randn(8, 3),), {}, lambda: torch.autocast("cpu", dtype=torch.bfloat16))
        """, names=("autocast", "global_state"), inductor=True),
}


@pytest.fixture(scope="module")
def cold_folders() -> dict[str, Path]:
    """Each case's folder with its script and the cache its cold process wrote (made at the case's first test)."""
    return {}


def cold_folder(folders: dict[str, Path], factory: pytest.TempPathFactory, name: str) -> Path:
    if name not in folders:
        folder = factory.mktemp(name)
        warm_guards.cold_cache(warm_guards.write(folder, "case", CASES[name]), CASES[name], folder)
        folders[name] = folder
    return folders[name]


@pytest.mark.parametrize("phase", ["warm", "later"])
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.inductor) if c.inductor else n
                                  for n, c in CASES.items()])
def test_warm_call_the_cold_trace_would_not_serve(cold_folders: dict[str, Path], tmp_path_factory, tmp_path: Path,
                                                  name: str, phase: str) -> None:
    """CC-21: the warm call equals eager's or raises where eager raises; a re-trace says why (CC-12, CC-17)."""
    folder = cold_folder(cold_folders, tmp_path_factory, name)
    work = warm_guards.copy_cache(folder, tmp_path / "warm")
    report = warm_guards.run(folder / "case.py", phase, CASES[name], work)
    if phase == "later":
        warm_guards.assert_loaded(report)
    warm_guards.assert_never_served_silently(report, CASES[name].names)


def test_a_shape_guard_with_ceil_serves_the_sizes_it_accepts(tmp_path: Path) -> None:
    """CC-14, CC-21: a cold trace whose shape guard uses `math.ceil` and `/` is cached, and a warm process whose
    call has other rows the guard accepts (12: no padding either) loads it and traces nothing."""
    case = Case(CEIL.format(warm="12, 3"))
    script = warm_guards.write(tmp_path, "case", case)
    warm_guards.cold_cache(script, case, tmp_path)
    report = warm_guards.run(script, "warm", case, warm_guards.copy_cache(tmp_path, tmp_path / "warm"))
    warm_guards.assert_loaded(report)
    assert report["unique_graphs"] == 0, report["warnings"]
