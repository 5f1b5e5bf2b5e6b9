"""Issue 31's bar for the zoo (EX-7, EX-11): every zoo model exports with the reference's `dynamo_export` (static
shapes; Llama also with `dynamic=True`) with GE op types only, and the exported graph run on the GE executor with
the same inputs equals eager (float32: rtol 1e-3, atol 1e-4); the dynamic export also at the model's other shape.
Models of the `nightly` tier carry the `nightly` mark. `$TORCHAIR_ZOO_REPORT` gets one JSON line per export."""
from __future__ import annotations

import dataclasses
import json
import os
import re

import pytest

from tests.zoo import exporting
from torchair_conformance.zoo import catalog, export

#: an op type written as an operator name (aten.addmm.default, prims..., _c10d_functional...)
_OPERATOR_NAME = re.compile(r"\.|^(aten|prims|torch|operator)")


def _params(names: tuple[str, ...]) -> list:
    return [pytest.param(n, marks=[pytest.mark.nightly] if catalog.entry(n).tier == "nightly" else [], id=n)
            for n in names]


def _record(row: exporting.Row) -> None:
    path = os.environ.get("TORCHAIR_ZOO_REPORT")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"export": dataclasses.asdict(row)}) + "\n")


def _check(row: exporting.Row) -> None:
    _record(row)
    assert row.exported == "yes", f"EX-7: {row.model} (dynamic={row.dynamic}) was refused: {row.exported}"
    named = sorted(t for t in row.op_types if _OPERATOR_NAME.search(t))
    assert not named, f"EX-7: {row.model}: op types that are operator names: {named}"
    assert row.executed == "yes", f"EX-11: {row.model} (dynamic={row.dynamic}): {row.executed}"


@pytest.mark.parametrize("name", _params(catalog.NAMES))
def test_the_export_runs_to_eager(name: str) -> None:
    row = exporting.zoo_row(name)
    _check(row)
    assert row.max_error is not None, row


@pytest.mark.parametrize("name", [export.DYNAMIC, "gpt2"])
def test_a_dynamic_llm_export_runs_at_another_shape(name: str) -> None:
    """Llama and GPT-2 with dynamic=True: -1 dims in their Data ops, run at the cold shape and at (3, 11). GPT-2's
    GELU computes with math.pi, a float Dynamo leaves unspecialised then (``aten.true_divide.Tensor``)."""
    row = exporting.zoo_row(name, dynamic=True)
    _check(row)
    entry = catalog.entry(name)
    assert row.shapes == ["x".join(map(str, s)) for s in (entry.cold_shape, entry.other_shape)], row.shapes
