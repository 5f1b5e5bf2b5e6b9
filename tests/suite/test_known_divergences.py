"""SPEC IMPL-5: a known divergence states the failure it expects, and the suite holds a listed test to it.

The list's reader (``torchair_conformance/divergences.py``) is checked on text; the suite's wiring
(``torchair_conformance/conftest.py``) in real pytest processes that load it as a plugin and run tests of their own,
which fail on purpose in known ways, under a list written for them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchair_conformance import clauses, divergences

ROOT = Path(__file__).resolve().parents[2]
WHEEL_TORCHAIR = Path.home() / ".cache" / "torchair-conformance" / "torch_npu-2.14.0" / "torchair"

LIST = textwrap.dedent("""\
    # comment
    a.py::test_x[1] | CC-1 | ValueError: boom \\d+ | inference/_cache_compiler.py:674 | why
    a.py::test_y | CC-2 | torch.fx.GraphModule: x | a/b.py:1-3, c.py:9 | draw-dependent: random
    a.py::test_z | CC-3 | AssertionError: expected (one|two) | c.py:9 | code reading: only on an NPU
""")


@pytest.mark.clause("IMPL-5")
def test_an_entry_states_its_exact_test_exception_pattern_and_wheel_line():
    entries = divergences.parse(LIST, "f.txt")
    first = entries[0]
    assert (first.test, first.clause, first.exception, first.pattern, first.where, first.reason, first.line) == (
        "a.py::test_x[1]", "CC-1", "ValueError", r"boom \d+", "inference/_cache_compiler.py:674", "why", 2)
    assert first.expected == r"ValueError: boom \d+" and not first.draw_dependent and not first.code_reading
    assert entries[1].draw_dependent and entries[2].code_reading and entries[2].pattern == "expected (one|two)"
    # exact ids only: an entry names one case, never the test's other cases or a test whose name extends it
    matched, stale = divergences.match(entries, ["a.py::test_x[1]", "a.py::test_x[2]", "a.py::test_zz"])
    assert list(matched) == ["a.py::test_x[1]"] and [e.test for e in stale] == ["a.py::test_y", "a.py::test_z"]
    # an entry naming a parametrized test as a whole is found, with the cases it should name
    whole = divergences.parse("a.py::test_x | CC-1 | ValueError: boom | c.py:1 | why\n")
    assert divergences.whole_test_entries(whole, ["a.py::test_x[1]", "a.py::test_x[2]"]) == {
        "1: a.py::test_x": ["a.py::test_x[1]", "a.py::test_x[2]"]}


@pytest.mark.clause("IMPL-5")
@pytest.mark.parametrize(("line", "says"), [
    ("a.py::test_x | CC-1 | the old form, a reason only", "old-format entry"),
    ("a.py::test_x | CC-1 | reason with (configs/x.py:5) | more", "old-format entry"),
    ("a.py::test_x | CC-1 | ValueError: ( | c.py:1 | why", "not a regular expression"),
    ("a.py::test_x | CC-1 | ValueError: boom | somewhere | why", "'somewhere' is not a 'file.py:line'"),
    ("a.py::test_x | CC-1 | Value Error boom | c.py:1 | why", "expected '<ExceptionType>: <message pattern>'"),
])
def test_a_malformed_or_old_format_entry_names_its_line_and_the_form(line, says):
    with pytest.raises(divergences.DivergenceListError) as info:
        divergences.parse(f"# header\n\n{line}\n", "list.txt")
    assert str(info.value).startswith("list.txt:3: ") and says in str(info.value), info.value
    assert divergences.FORMAT in str(info.value) or "not a regular expression" in str(info.value)


@pytest.mark.clause("IMPL-5")
def test_a_failure_matches_by_type_or_base_and_pattern():
    entry = divergences.parse("t.py::t | CC-1 | LookupError: no key '\\w+' | c.py:1 | why\n")[0]
    assert divergences.failure_matches(entry, KeyError("no key 'abc'"))  # a subclass, by its base's name
    assert not divergences.failure_matches(entry, KeyError("missing"))  # the pattern must be found
    assert not divergences.failure_matches(entry, ValueError("no key 'abc'"))  # another type
    dotted = divergences.parse("t.py::t | CC-1 | builtins.KeyError: . | c.py:1 | why\n")[0]
    assert divergences.failure_matches(dotted, KeyError("x"))
    assert divergences.describe_failure(KeyError("x")) == {"type": "KeyError", "message": "'x'"}
    long = divergences.describe_failure(RuntimeError("a" * 400 + "END"))
    assert len(long["message"]) <= divergences.MESSAGE_CHARS and long["message"].endswith("END")
    # a long message keeps what the entry's pattern found, even in its middle
    middle = divergences.describe_failure(RuntimeError("h" * 500 + "NotImplementedError: amax" + "t" * 2000), "amax")
    assert len(middle["message"]) <= divergences.MESSAGE_CHARS and "NotImplementedError: amax" in middle["message"]
    assert middle["message"].startswith("h" * 100)


@pytest.mark.clause("IMPL-5")
def test_upstream_entries_name_one_case_of_existing_tests_and_real_wheel_lines():
    path = divergences.default_file("torchair")
    assert path is not None
    entries = divergences.parse(path.read_text(), str(path))
    tests = {name for names in clauses.tests_by_clause(ROOT / "torchair_conformance").values() for name in names}
    known = {c.id for c in clauses.load_clauses()[0]}
    assert len({e.test for e in entries}) == len(entries), "two entries for one test"
    for entry in entries:
        assert entry.clause in known, entry
        assert entry.test.split("[")[0] in tests, entry
        if not WHEEL_TORCHAIR.is_dir():
            continue
        for where in entry.where.split(","):
            file, _, lines = where.strip().partition(":")
            source = WHEEL_TORCHAIR / file
            assert source.is_file(), f"{path}:{entry.line}: {file} is not in the wheel ({WHEEL_TORCHAIR})"
            last = int(lines.split("-")[-1])
            assert last <= len(source.read_text().splitlines()), f"{path}:{entry.line}: {where} past the file's end"


TESTS = textwrap.dedent("""\
    import pytest

    pytestmark = pytest.mark.clause("IMPL-1")

    def test_matching():
        raise ValueError("boom 42 and more")

    def test_other_type():
        raise KeyError("boom 42")

    def test_other_message():
        raise ValueError("a different reason")

    def test_passes():
        pass

    @pytest.mark.parametrize("n", [1, 2])
    def test_param(n):
        assert n == 2, f"n is {n}"
""")

ENTRIES = textwrap.dedent("""\
    test_fake.py::test_matching | IMPL-1 | ValueError: boom \\d+ | a/b.py:7 | matches
    test_fake.py::test_other_type | IMPL-1 | ValueError: boom | a/b.py:7 | listed as ValueError
    test_fake.py::test_other_message | IMPL-1 | ValueError: boom | a/b.py:7 | listed with another message
    test_fake.py::test_passes | IMPL-1 | ValueError: boom | a/b.py:7 | fixed since
    test_fake.py::test_param[1] | IMPL-1 | AssertionError: n is 1 | a/b.py:8 | one case
""")


def _run(tmp_path: Path, entries: str) -> tuple[subprocess.CompletedProcess, dict | None]:
    """The suite's pytest wiring (loaded as a plugin) on ``TESTS`` under the list ``entries``."""
    (tmp_path / "test_fake.py").write_text(TESTS)
    (tmp_path / "list.txt").write_text(entries)
    out = tmp_path / "out.json"
    out.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "TORCHAIR_CONFORMANCE_IMPL"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "impl"), str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "torchair_conformance.conftest", "-p", "no:cacheprovider",
         "-p", "no:randomly", "test_fake.py", "--known-divergences-file=list.txt", f"--conformance-json={out}",
         "-rA"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    return proc, (json.loads(out.read_text()) if out.exists() else None)


@pytest.mark.slow
@pytest.mark.clause("IMPL-5")
def test_a_listed_test_failing_another_way_fails_the_run_and_xfails_record_their_exception(tmp_path):
    proc, document = _run(tmp_path, ENTRIES)
    out = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, out[-3000:]
    records = {r["test"].split("::")[-1]: r for r in document["tests"]}
    outcomes = {name: r["outcome"] for name, r in records.items()}
    assert outcomes == {"test_matching": "xfailed", "test_other_type": "failed", "test_other_message": "failed",
                        "test_passes": "xpassed", "test_param[1]": "xfailed", "test_param[2]": "passed"}, out[-3000:]
    # the xfails record the exception that happened, with the entry it matched
    assert records["test_matching"]["exception"] == {"type": "ValueError", "message": "boom 42 and more"}
    assert records["test_matching"]["divergence"]["expected"] == r"ValueError: boom \d+"
    assert records["test_matching"]["divergence"]["where"] == "a/b.py:7"
    assert records["test_param[1]"]["exception"]["type"] == "AssertionError"
    assert records["test_param[1]"]["exception"]["message"].startswith("n is 1")
    # a listed test failing another way fails the run, naming both the listed failure and the actual one
    for name, line, actual in (("test_other_type", 2, "KeyError: 'boom 42'"),
                               ("test_other_message", 3, "ValueError: a different reason")):
        said = f"listed as ValueError: boom (a/b.py:7; list.txt:{line}), failed with {actual}"
        assert records[name]["message"] == said, records[name]
        assert said in out, out[-3000:]
    assert records["test_other_type"]["exception"]["type"] == "KeyError"


@pytest.mark.slow
@pytest.mark.clause("IMPL-5")
@pytest.mark.parametrize(("entries", "says"), [
    ("test_fake.py::test_param | IMPL-1 | AssertionError: n is | a/b.py:8 | both cases\n",
     r"list.txt:1: test_fake.py::test_param has the cases test_fake.py::test_param\[1\], "
     r"test_fake.py::test_param\[2\]"),
    ("test_fake.py::test_matching | IMPL-1 | an old-format reason (a/b.py:7)\n",
     r"list.txt:1: an old-format entry .*convert it to '<test id\[params\]> \| <clause> \| <ExceptionType>: "),
], ids=["whole-parametrized-test", "old-format"])
def test_a_list_naming_a_whole_parametrized_test_or_in_the_old_form_is_a_usage_error(tmp_path, entries, says):
    proc, _ = _run(tmp_path, entries)
    out = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, out[-3000:]
    assert re.search(says, out), out[-3000:]
