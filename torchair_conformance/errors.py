"""The suite's exception base: every exception the suite, its benchmarks and its report raise on purpose derive from
`ConformanceError` (one `except` for a caller that wants them all), keeping the builtin base each had (`ValueError`,
`RuntimeError`, `AssertionError`...) so that callers' own clauses keep working. Like the reference's
`torchair_ref.errors.TorchairRefError`; the two share nothing (the products share only the contract, SPEC IMPL-1).

Control-flow signals are not errors and stay outside it: the bench worker's `Skip` and the harness's `Interrupted`
(a `BaseException`, like `KeyboardInterrupt`).
"""
from __future__ import annotations


class ConformanceError(Exception):
    """Base of every exception the conformance suite, its benchmarks and its report raise on purpose."""
