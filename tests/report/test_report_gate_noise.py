"""The gate knows the noise (issue 33, item 4): synthetic histories, judged night after night as the nightly would.

A steady drift of the host slows eager and the cache alike and fires nothing; a 25 % slower warm load in one series
is suspected on its first night and a regression on the second; ±15 % noise at one round a night never fires; and a
night with nothing to compare says "not checked", never green."""
from __future__ import annotations

import random

from tests.report import nightly_sample as sample
from torchair_conformance.report import gate, history, matrix, model, outputs, verdict

CANN, NPU = "8.1.RC1", "2.6.0.post2"


def nights(count: int, **per_night) -> list[history.Record]:
    """`count` nights of one A2 series and of the reference on the CPU; `per_night[name](night)` gives
    `night_records`' keyword `name` for the A2 series only."""
    rng = random.Random(33)
    records = []
    for night in range(1, count + 1):
        extra = {name: f(night) for name, f in per_night.items()}
        records += sample.night_records(night, CANN, NPU, rng=rng, **extra)
        records += sample.night_records(night, None, None, rng=rng, hour=4,
                                        **{k: v for k, v in extra.items() if k in ("rounds", "spread")})
    return records


def judged_each_night(records: list[history.Record]) -> dict[int, gate.GateResult]:
    """The gate as each night's report saw it: the history up to that night."""
    out = {}
    dates = sorted({r.date[:10] for r in records})
    for night, day in enumerate(dates, 1):
        seen = [r for r in records if r.date[:10] <= day]
        series = model.group(seen)
        out[night] = gate.evaluate({s.key: [r.view() for r in s.runs] for s in series})
    return out


def test_a_steady_host_drift_on_eager_and_warm_alike_does_not_fire() -> None:
    # the host gets slower night after night, to +40 % by night 30 (a step of +40 % on night 31, too)
    ramp = nights(30, busy=lambda n: 1 + 0.4 * (n - 1) / 29)
    step = nights(34, busy=lambda n: 1.4 if n > 30 else 1.0)
    for records in (ramp, step):
        for night, result in judged_each_night(records).items():
            assert not result.fired, (night, [(c.figure.key, c.factor, c.reason) for c in result.fired])
            assert not [c for c in result.checks if c.status == "suspected"], night
    slower = [r for r in step if r.variant == "impl-warm" and r.env["cann"]]
    assert slower[-1].median("ttfo_s") > 1.35 * slower[0].median("ttfo_s"), "the host did get slower"


def test_a_25_percent_slower_warm_load_in_one_series_fires_on_the_second_night() -> None:
    records = nights(22, slower_load=lambda n: 1.25 if n >= 21 else 1.0)
    judged = judged_each_night(records)
    assert all(not judged[n].fired for n in range(1, 21))
    first = [c for c in judged[21].checks if c.figure.key == "warm-load" and c.run.env["cann"]]
    assert [c.status for c in first] == ["suspected"], [(c.status, c.reason) for c in first]
    assert "a regression if the next night confirms it" in first[0].reason
    assert not judged[21].fired, "one night is not a regression"
    (fired,) = judged[22].fired
    assert (fired.figure.key, fired.run.env["cann"], fired.kind) == ("warm-load", CANN, "window")
    assert fired.factor > 1.2 and "two nights running" in fired.reason
    assert not [c for c in judged[22].checks if c.run.env["cann"] is None and c.status != "ok"], "one series only"


def test_noise_of_15_percent_at_one_round_over_30_nights_never_fires() -> None:
    records = nights(30, rounds=lambda n: 1, spread=lambda n: 0.15)
    judged = judged_each_night(records)
    for night, result in judged.items():
        assert not result.fired, (night, [(c.figure.key, c.factor, c.limit, c.reason) for c in result.fired])
        if night > 1:
            # judged, not waved through for having one round: the noise comes from the series' nights
            assert result.checks and all(c.status in ("ok", "suspected") for c in result.checks), night
    late = [c for c in judged[30].checks if c.figure.key == "warm-ttfo"]
    assert all(c.noise > 0.05 and c.limit > 0.2 for c in late), "the limit follows the series' own noise"


def test_a_night_with_nothing_to_compare_says_not_checked_not_green() -> None:
    records = nights(1)
    results = matrix.build([])
    report = model.build(records, results, history_files=[], night=verdict.Night(expected=[]))
    assert not report.performance_checked and report.verdict.green
    assert outputs.headline(report).startswith("nothing was checked")
    assert "performance not checked" in outputs.checked(report)
    assert outputs.verdict_document(report)["performance"] == "not checked"
    judged = model.build(nights(8), results, history_files=[], night=verdict.Night(expected=[]))
    assert judged.performance_checked and outputs.headline(judged) == "green: nothing broke, nothing got slower"
    assert outputs.figures_checked(judged) == [f.label for f in gate.FIGURES]
