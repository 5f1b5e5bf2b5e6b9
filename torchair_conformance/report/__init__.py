"""The benchmark history and the published report (SPEC BE-3, BE-4).

The documents between the suite, the bench and the report are typed and versioned, each written and read by one
module: the history's records (`history`, written by the bench) and the suite's results (`results`, written by the
suite's `--conformance-json`). The report is a model (`model`: the gate, the verdict and the matrix gathered into one
`Report`, no I/O) and a renderer (`render` with `context`, `charts`, `outputs`) that only reads it.

- `versioned` the format check and field filter every versioned document shares.
- `history`  the append-only JSONL store under `reports/history/`: one file per CANN version (off-NPU: per device
             and torch version), one record per variant of a bench run; its format is documented there.
- `stats`    medians/min/max, the ratios against the baselines, the targets (pure functions).
- `gate`     did a figure get slower than its own noise: in-run ratios against the series' nights and the previous
             CANN version's, suspected on one night, a regression when confirmed (pure).
- `results`  the suite's results document (`--conformance-json`): `Document`, `TestRecord`, written and read here.
- `matrix`   the conformance matrix (clause x implementation/version) from the suite's results documents.
- `cann`     CANN version strings in Ascend's release order (alpha, beta and B-builds before their release).
- `legs`     the nightly's legs (implementation x SoC x CANN x torch-npu), expected and retired.
- `verdict`  the night's verdict: suites, missing legs, staleness, the gate (pure).
- `model`    what the night says, as data: series, the saving (cold → warm), one regression per slowed figure,
             tests changed since the previous night, two CANN versions side by side (pure).
- `changes`  the tests whose outcome changed between two results of one leg, for the model (pure).
- `units`    figures with their units: seconds, changes (pure).
- `context`  the model shaped into rows and strings for `templates/` (jinja2), with the charts drawn and the links.
- `charts`   matplotlib figures (PNG) for the report, wide and narrow (phones).
- `outputs`  `verdict.json`, `verdict-junit.xml`, the GitHub step summary.
- `render`   writes `reports/index.html`, `reports/README.md`, the charts and the outputs, all or nothing.
- `cli`      `python -m torchair_conformance report [--gate]`.
"""
