"""The suite's pytest wiring: the implementation switch, profiles, clause marks, capability skips, known
divergences, the run header and the JSON results.

Options: ``--impl MODULE`` (else ``$TORCHAIR_CONFORMANCE_IMPL``, else ``torchair_ref``), ``--clause ID`` (only
the tests whose clause marks include one of the IDs; repeatable or comma-separated), ``--conformance-json PATH``,
``--known-divergences {xfail,skip}``, ``--known-divergences-file PATH``; hypothesis's own
``--hypothesis-profile`` selects ``dev``/``ci``/``nightly`` (default ``ci``).
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from torchair_conformance import clauses, divergences, models, profiles
from torchair_conformance.impl import Implementation, ImplementationError, add_option, resolve, selected_name
from torchair_conformance.report import results


@dataclass
class _State:
    """What one session gathers for its run header, its terminal summary and its results document."""

    profile: str
    #: ``--clause``: the clause IDs the session runs the tests of (empty: every test)
    selected_clauses: list[str]
    started: float = field(default_factory=time.time)
    records: list[results.TestRecord] = field(default_factory=list)
    #: the divergence list applied (None: none)
    divergence_file: str | None = None
    #: ``file:line: test | clause`` of the listed divergences that match no test
    stale: list[str] = field(default_factory=list)
    #: node id -> the clause IDs its marks name
    clauses: dict[str, list[str]] = field(default_factory=dict)
    #: node id -> its known divergence
    divergent: dict[str, divergences.Divergence] = field(default_factory=dict)
    #: listed divergences that passed and are fixed (their entries can go)
    fixed: list[str] = field(default_factory=list)
    #: node ids of draw-dependent divergences that passed for this run's draws (no evidence of a fix)
    passed_draw: list[str] = field(default_factory=list)


_IMPL = pytest.StashKey[Implementation]()
_STATE = pytest.StashKey[_State]()

profiles.register()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "TorchAir conformance suite")
    add_option(group.addoption)
    group.addoption("--clause", action="append", default=[], metavar="ID",
                    help="run only the tests that check one of these SPEC clause IDs (repeatable, or comma-separated: "
                         "--clause CC-15,CC-16)")
    group.addoption("--conformance-json", default=None, metavar="PATH",
                    help="write one JSON record per test here (a folder: <impl>-<device>[-cann-V][-soc-S].json in it)")
    group.addoption("--known-divergences", choices=("xfail", "skip"), default="xfail",
                    help="what a known divergence becomes (default: xfail)")
    group.addoption("--known-divergences-file", default=None, metavar="PATH",
                    help="divergence list to apply (default: torchair_conformance/known_divergences/<impl>.txt)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "clause(*ids): the SPEC clause IDs this test checks")
    config.addinivalue_line("markers", "requires(*capabilities): skip unless the implementation declares them")
    config.addinivalue_line("markers", "uses_default_config: compiles with the implementation's true default config")
    profile = profiles.activate(config.getoption("hypothesis_profile", None))
    name = selected_name(config.getoption("impl"))
    try:
        config.stash[_IMPL] = resolve(name)
    except ImplementationError as exc:
        raise pytest.UsageError(str(exc)) from exc
    models.use_device(config.stash[_IMPL].device)
    config.stash[_STATE] = _State(profile.name, _selected_clauses(config))
    config.pluginmanager.register(_Results(config), "conformance-results")


def parse_clause_selection(values: list[str], known: set[str], source: str) -> list[str]:
    """``--clause`` values (each one ID or a comma-separated list, any case) as sorted unique IDs; an ID that SPEC
    does not define is a usage error naming it, the closest known ID, and where the known IDs are listed."""
    ids, unknown = clauses.match_ids([p for value in values for p in value.split(",") if p.strip()], known)
    if unknown:
        raise pytest.UsageError(
            f"--clause {', '.join(unknown)}: no such SPEC clause ID (the known IDs are the ones in {source}; "
            "`python -m torchair_conformance clauses` lists them with their tests, "
            "torchair_conformance/clauses.py reads them)")
    return ids


def _selected_clauses(config: pytest.Config) -> list[str]:
    values = config.getoption("clause") or []
    if not values:
        return []
    found, source = clauses.load_clauses()
    return parse_clause_selection(values, {c.id for c in found}, source)


def _impl(config: pytest.Config) -> Implementation:
    return config.stash[_IMPL]


def pytest_report_header(config: pytest.Config) -> list[str]:
    impl = _impl(config)
    origin = getattr(impl.module, "__file__", None)
    state = config.stash[_STATE]
    return [
        f"conformance: implementation {impl.name} ({origin})" + (f": {impl.label}" if impl.label else ""),
        f"conformance: device {impl.device}; versions {json.dumps(dict(impl.versions), default=str)}",
        f"conformance: capabilities {sorted(impl.capabilities) or 'none declared'}; "
        f"hooks {sorted(impl.hooks) or 'none'}",
        f"conformance: hypothesis profile {state.profile}; known divergences "
        f"{config.getoption('known_divergences_file') or divergences.default_file(impl.divergences) or 'none'}",
    ] + ([f"conformance: clauses {', '.join(state.selected_clauses)} only"] if state.selected_clauses else [])


@pytest.fixture(scope="session")
def impl(pytestconfig: pytest.Config) -> Implementation:
    """IMPL-1: the implementation under test."""
    return _impl(pytestconfig)


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    """No test sees another test's Dynamo caches or counters."""
    from torchair_conformance.harness import fresh_dynamo

    fresh_dynamo()
    yield
    fresh_dynamo()


def _suite_id(item: pytest.Item) -> str:
    """``test_file.py::test_name[params]``: the id that divergence prefixes are matched against."""
    return "::".join([item.path.name] + item.nodeid.split("::")[1:])


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    impl = _impl(config)
    state = config.stash[_STATE]
    known = {c.id for c in clauses.load_clauses()[0]}
    unmarked, unknown = [], []
    for item in items:
        ids = [cid for mark in item.iter_markers("clause") for cid in mark.args]
        if not ids:
            unmarked.append(item.nodeid)
        unknown += [f"{item.nodeid}: {cid}" for cid in ids if cid not in known]
        state.clauses[item.nodeid] = sorted(set(ids))
        for mark in item.iter_markers("requires"):
            missing = [c for c in mark.args if not impl.has(c)]
            if missing:
                item.add_marker(pytest.mark.skip(
                    reason=f"{impl.name} does not declare capability {', '.join(missing)} (IMPL-2)"))
    if unmarked or unknown:
        raise pytest.UsageError(
            "every conformance test must carry @pytest.mark.clause(<known SPEC IDs>); "
            f"unmarked: {unmarked}; unknown IDs: {unknown}")
    # Divergences are matched against the whole collection, so that --clause never makes an entry look stale.
    _apply_divergences(config, items)
    _deselect_other_clauses(config, items, set(state.selected_clauses))


def _apply_divergences(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Known divergences become xfail (or skip) marks; entries that match no test are reported as stale."""
    impl = _impl(config)
    state = config.stash[_STATE]
    path = config.getoption("known_divergences_file") or divergences.default_file(impl.divergences)
    if not path:
        return
    state.divergence_file = str(path)
    try:
        entries = divergences.parse(Path(path).read_text(encoding="utf-8"), str(path))
    except divergences.DivergenceListError as exc:
        raise pytest.UsageError(str(exc)) from exc
    ids = {_suite_id(item): item for item in items}
    whole = divergences.whole_test_entries(entries, ids)
    if whole:
        raise pytest.UsageError(
            "IMPL-5: a known divergence names one case of a parametrized test, never the test as a whole; "
            + "; ".join(f"{path}:{entry} has the cases {', '.join(cases)}" for entry, cases in whole.items()))
    matched, stale = divergences.match(entries, ids)
    state.stale = [f"{path}:{e.line}: {e.test} | {e.clause}" for e in stale]
    as_skip = config.getoption("known_divergences") == "skip"
    for test_id, entry in matched.items():
        item = ids[test_id]
        reason = (f"known divergence of {impl.name} from {entry.clause}: expected {entry.expected} "
                  f"({entry.where}): {entry.reason}")
        if entry.clause not in state.clauses[item.nodeid]:
            reason += f" (note: the test is marked {state.clauses[item.nodeid]}, not {entry.clause})"
        state.divergent[item.nodeid] = entry
        item.add_marker(pytest.mark.skip(reason=reason) if as_skip else pytest.mark.xfail(reason=reason, strict=False))


def _deselect_other_clauses(config: pytest.Config, items: list[pytest.Item], selected: set[str]) -> None:
    """``--clause``: keep the tests that check a selected clause; the rest are reported as deselected."""
    if not selected:
        return
    state = config.stash[_STATE]
    kept = [item for item in items if selected & set(state.clauses[item.nodeid])]
    dropped = [item for item in items if not selected & set(state.clauses[item.nodeid])]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """IMPL-5: a listed test's failure must be the one its entry states; any other fails the run, naming both. Every
    failure's exception is kept on the report for the results document."""
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is None or call.excinfo.errisinstance((pytest.skip.Exception, KeyboardInterrupt)):
        return
    exc = call.excinfo.value
    entry = item.config.stash[_STATE].divergent.get(item.nodeid)
    report.conformance_exception = dict(divergences.describe_failure(exc, entry.pattern if entry else None))
    if entry is None or getattr(report, "wasxfail", None) is None or divergences.failure_matches(entry, exc):
        return
    actual = report.conformance_exception
    headline = (f"listed as {entry.expected} ({entry.where}; {item.config.stash[_STATE].divergence_file}:"
                f"{entry.line}), failed with {actual['type']}: {actual['message']}")
    report.outcome = "failed"
    del report.wasxfail
    report.longrepr = f"{headline}\n\n{report.longrepr}"
    report.conformance_mismatch = headline


class _Results:
    """Collects one record per test (clause IDs, outcome, implementation, versions) for the results document."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        state = self.config.stash[_STATE]
        final = report.when == "call" or (report.when == "setup" and not report.passed) or (
            report.when == "teardown" and report.failed)
        if not final:
            return
        impl = _impl(self.config)
        entry = state.divergent.get(report.nodeid)
        xfail = getattr(report, "wasxfail", None)
        if report.when == "teardown":
            outcome = "error"
        elif xfail is not None and report.skipped:
            outcome = "xfailed"
        elif xfail is not None:
            # A listed divergence that now passes: the implementation fixed it (the entry can go), unless it shows
            # only for some draws.
            outcome = "xpassed"
            if entry is not None and entry.draw_dependent:
                state.passed_draw.append(report.nodeid)
            else:
                state.fixed.append(f"{report.nodeid} ({entry.clause + ': ' + entry.reason if entry else xfail})")
        else:
            outcome = report.outcome
        message = None
        mismatch = getattr(report, "conformance_mismatch", None)
        if mismatch is not None:
            message = mismatch[:2000]
        elif report.failed:
            message = str(report.longrepr)[-2000:]
        elif xfail is not None:
            message = (("passed for these draws: " if report.nodeid in state.passed_draw else "fixed upstream: ")
                       if outcome == "xpassed" else "") + xfail
        elif report.skipped and isinstance(report.longrepr, tuple):
            message = report.longrepr[2]
        state.records.append(results.TestRecord(
            test=report.nodeid, outcome=outcome, clauses=state.clauses.get(report.nodeid, []), phase=report.when,
            duration_s=round(report.duration, 3), implementation=impl.name, device=impl.device,
            versions=dict(impl.versions), profile=state.profile, message=message,
            fixed_upstream=outcome == "xpassed" and report.nodeid not in state.passed_draw,
            exception=getattr(report, "conformance_exception", None), divergence=_entry_record(entry)))


def _entry_record(entry: divergences.Divergence | None) -> dict | None:
    """The known divergence a test is listed under, as the results document records it (IMPL-5)."""
    if entry is None:
        return None
    evidence = "random" if entry.draw_dependent else "code reading" if entry.code_reading else "observed"
    return {"clause": entry.clause, "expected": entry.expected, "where": entry.where, "reason": entry.reason,
            "evidence": evidence, "line": entry.line}


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash[_STATE]
    if state.fixed:
        terminalreporter.section("fixed upstream (listed known divergences that passed: remove their entries)")
        for line in state.fixed:
            terminalreporter.line(line)
    if state.passed_draw:
        terminalreporter.section(
            "draw-dependent known divergences that passed for this run's draws (no evidence of a fix)")
        for line in state.passed_draw:
            terminalreporter.line(line)
    if state.stale:
        terminalreporter.section("stale known divergences (they match no test)")
        for line in state.stale:
            terminalreporter.line(line)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    path = config.getoption("conformance_json")
    if not path or _STATE not in config.stash:
        return
    state = config.stash[_STATE]
    impl = _impl(config)
    versions = dict(impl.versions)
    if os.environ.get("TORCHAIR_LEG_VARIANT"):  # the nightly leg's image variant (two legs of one CANN and SoC)
        versions["variant"] = os.environ["TORCHAIR_LEG_VARIANT"]
    results.write(path, results.Document(
        implementation=impl.name, label=impl.label, device=impl.device, versions=versions,
        capabilities=sorted(impl.capabilities), profile=state.profile, selected_clauses=state.selected_clauses,
        python=platform.python_version(), host=platform.node(), started=state.started, finished=time.time(),
        exit_status=int(exitstatus), divergence_file=state.divergence_file, stale_divergences=state.stale,
        fixed_upstream=state.fixed, tests=state.records))
