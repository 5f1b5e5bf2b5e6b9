"""`python -m tests.zoo.export_table [MODEL...]`: the reference's `dynamo_export` of every zoo model (static; Llama
also `dynamic=True`) and of the ports of upstream's export tests, each graph run on the GE executor against eager:
one Markdown row per export (`tests/zoo/exporting.py`). The 2-rank reduce-scatter port is
`tests/reference/test_export_collectives.py`."""
from __future__ import annotations

import sys

import torch

from tests.zoo import exporting


def main(argv: list[str]) -> int:
    from torchair_conformance.zoo import catalog, export

    names = argv or list(catalog.NAMES)
    rows = [exporting.zoo_row(n) for n in names]
    if not argv or export.DYNAMIC in argv:
        rows.append(exporting.zoo_row(export.DYNAMIC, dynamic=True))
    if not argv:
        rows += exporting.port_rows()
    print(f"torch {torch.__version__}\n")
    print("| model | dynamic | ATen ops | GE op types | exported | executed | max error | shapes run |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        error = "-" if r.max_error is None else f"{r.max_error:.2g}"
        print(f"| {r.model} | {r.dynamic} | {r.aten_ops} | {r.ge_ops} | {r.exported} | {r.executed} | {error} | "
              f"{', '.join(r.shapes)} |")
    return 0 if all(r.ok() for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
