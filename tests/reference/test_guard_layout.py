"""White-box: the per-call check's fast path laid out with few names (`guard_layout`; SPEC CC-21; issue 29 item 7):
it holds exactly where every read first, then every check, holds; it checks in the same order with the same values;
it names registers and one tuple of constants, never a string literal's text."""
from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from torchair_ref.inference import guard_layout
from torchair_ref.inference.guard_values import UnknownGuard


@st.composite
def _checks(draw: st.DrawFn) -> tuple[list[str], list[str], set[int], dict[int, bool]]:
    """Reads, each of some earlier ones (and a literal that looks like a local), checks over reads and constants,
    the reads that raise and each check's outcome."""
    count = draw(st.integers(1, 12))
    reads = []
    for index in range(count):
        used = draw(st.lists(st.integers(0, index - 1), max_size=3)) if index else []
        literal = draw(st.sampled_from(["'_tq_s0'", '"_tq_b1 _tq_s2"', "'x'"]))
        reads.append(f"_tq_s{index} = _tq_read({index}, {literal}, {', '.join(f'_tq_s{u}' for u in used)})")
    tests = []
    for number in range(draw(st.integers(0, 10))):
        used = draw(st.lists(st.integers(0, count - 1), max_size=3))
        constant = draw(st.integers(0, 3))
        tests.append(f"_tq_test({number}, _tq_b{constant}, {''.join(f'_tq_s{u}, ' for u in used)}'_tq_s{count}')")
    raising = draw(st.sets(st.integers(0, count - 1), max_size=2))
    outcomes = draw(st.dictionaries(st.integers(0, 9), st.booleans()))
    return reads, tests, raising, outcomes


def _run(body: list[str], raising: set[int], outcomes: dict[int, bool]) -> tuple[bool, list[Any], list[Any]]:
    """Whether the fast path's body holds, and the reads and checks it made, with their arguments."""
    made: list[Any] = []
    checked: list[Any] = []
    constants = [("constant", n) for n in range(4)]

    def read(index: int, *used: Any) -> Any:
        made.append((index, used))
        if index in raising:
            raise KeyError(index)
        return ("read", index)

    def test(number: int, *values: Any) -> bool:
        checked.append((number, values))
        return outcomes.get(number, True)

    namespace: dict[str, Any] = {"_tq_read": read, "_tq_test": test, "_tq_B": tuple(constants), "Exception": Exception,
                                 **{f"_tq_b{n}": value for n, value in enumerate(constants)}}
    source = "def check():\n    try:\n" + "".join(f"        {line}\n" for line in body) + (
        "        ok = True\n    except Exception:\n        ok = False\n    return ok\n")
    exec(compile(source, "<test>", "exec"), namespace)  # noqa: S102
    return namespace["check"](), made, checked


@given(_checks())
def test_the_fast_path_holds_where_every_read_then_every_check_holds(drawn: Any) -> None:
    """The laid-out body holds exactly where the reads, all first, and then the checks, all in an `and`, hold; where
    it holds, it made the same reads and the same checks, in the same order, with the same values."""
    reads, tests, raising, outcomes = drawn
    first = [*reads, f"ok = ({' and '.join(tests) or 'True'})", "if not ok:", "    raise Exception"]
    expected, made, checked = _run(first, raising, outcomes)
    found, laid_made, laid_checked = _run(guard_layout.laid_out(reads, tests), raising, outcomes)
    assert found is expected
    if expected:
        assert laid_checked == checked
        assert sorted(laid_made, key=repr) == sorted(made, key=repr)


@given(_checks())
def test_the_fast_path_names_registers_and_one_tuple(drawn: Any) -> None:
    """No hoisted local or constant keeps its own name (outside a literal); no more registers than reads; the
    literals are as they were."""
    reads, tests, _, _ = drawn
    body = guard_layout.laid_out(reads, tests)
    text = "\n".join(body)
    bare = re.sub(r"'[^']*'|\"[^\"]*\"", "", text)
    assert not re.search(r"\b_tq_[sb][0-9]+\b", bare)
    assert len(set(re.findall(r"\b_tq_r[0-9]+\b", bare))) <= len(reads)
    literals = re.findall(r"'[^']*'|\"[^\"]*\"", "\n".join(reads + tests))
    assert sorted(re.findall(r"'[^']*'|\"[^\"]*\"", text)) == sorted(literals)


def test_a_chain_of_prefixes_needs_few_registers() -> None:
    """A deep module's reads (each a step from the one before, each checked): one register, not one per read."""
    reads = ["_tq_s0 = _tq_G['m']"] + [f"_tq_s{n} = _tq_s{n - 1}.a{n}" for n in range(1, 200)]
    tests = [f"_tq_s{n} is _tq_b{n}" for n in range(200)]
    body = guard_layout.laid_out(reads, tests)
    assert set(re.findall(r"\b_tq_r[0-9]+\b", "\n".join(body))) == {"_tq_r0"}


def test_a_check_naming_a_local_no_read_assigns_is_refused() -> None:
    with pytest.raises(UnknownGuard, match="_tq_s3"):
        guard_layout.laid_out(["_tq_s0 = x.a"], ["_tq_s3 is None"])


@pytest.mark.parametrize(("names", "expected"), [
    ({}, ()),
    ({"_tq_b1": 1, "_tq_b0": 0}, (0, 1)),
    ({"_tq_b0": 0, "_tq_b2": 2}, None),
    ({"_tq_b0": 0, "_tq_b01": 1}, None),
    ({"_tq_b1": 1}, None),
    ({"_tq_b0": 0, "_tq_run": print, "_tq_B": ()}, (0,)),
    ({f"_tq_b{n}": n for n in range(5000)}, tuple(range(5000))),  # past the names made so far
    ({**{f"_tq_b{n}": n for n in range(5000)}, "_tq_b5001": 0}, None),
])
def test_the_constants_tuple_holds_each_number_once(names: dict[str, Any], expected: Any) -> None:
    """`_tq_B` only for the names the writers give (`_tq_b0` to `_tq_b{N-1}`): a gap or another spelling of a
    number is no tuple (the check is then written from its specs)."""
    assert guard_layout.constants(names) == expected


def test_an_expression_names_its_constants_as_items_but_in_its_literals() -> None:
    assert guard_layout.numbered("_tq_b0(x) and _tq_b12 == '_tq_b3' and _tq_s1") == (
        "_tq_B[0](x) and _tq_B[12] == '_tq_b3' and _tq_s1")
