"""Cold-start versus warm-start benchmarks (SPEC BE-1..BE-3).

- `presets`     the benchmark models by name, as plain data (no torch import: the CLI lists them cheaply).
- `models`      the models themselves: `tiny` (the zoo's seed, `torchair_conformance.models`), `gpt-small`,
                `llama-*` presets; random weights; or the user's own, `package.module:factory` (`models.from_factory`:
                the contract).
- `worker`      one measured fresh process (`python -m torchair_conformance.bench.worker`,
                `torchair_conformance.process`'s protocol): phases, artifact bytes, traced; it imports the
                implementation by `torchair_conformance.impl`'s rule.
- `harness`     N rounds of cold and warm runs plus the baselines, each in a fresh process; medians, min/max.
- `overhead`    per-call overhead of the cached callable against calling the compiled graph directly.
- `environment` the environment key of every record (BE-3): versions, CANN, device, SoC, host, commit.
- `preflight`   every argument checked before the first measurement: paths, and in one fresh process the
                implementation (`--impl`, the suite's switch, `torchair_conformance.impl`), the device and a
                factory model.
- `cli`         `python -m torchair_conformance bench` (`tox -e bench` runs it too: one worker, one record format);
                a local history unless `--publish`; SIGINT/SIGTERM keep what was measured.

Nothing here imports torch at import time: the worker's own timing starts before `import torch`.
"""
