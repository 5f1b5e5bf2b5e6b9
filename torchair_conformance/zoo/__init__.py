"""The real-model zoo: `transformers` and `timm` models built from small configs with seeded random weights (nothing
downloaded), wrapped the way TorchAir's users wrap them, run cold, warm and eager in fresh processes.

`catalog` (the models, as data), `families` (building them and their inputs), `patterns` (how they are cached and
called: plain, served prompt/decode, vLLM-Ascend's proxies), `run` (the fresh-process runner and its verdict),
`packages` (the zoo extra, imported so that it works beside either torch release). The reference's tests
(`tests/zoo`), the suite (`test_zoo.py`), the benchmarks and the exporter's tests take their real models from here.
"""
