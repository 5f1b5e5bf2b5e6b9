"""A fresh process for tests/reference/test_warm_outputs.py: call a cache_compile'd method whose outputs alias its
inputs or
are built as a dataclass or namedtuple, and reply with what the outputs are next to eager's (CC-14, CC-18).

Job keys: method ("views", "structs", "mutated_view"), dynamic, run_eagerly, cache_dir, batch, wide_fields (the
dataclass gets a third field: its generated `__init__` differs from the one the cache was written with).
"""
from __future__ import annotations

import collections
import dataclasses
import logging
import sys
import warnings
from typing import Any

import torch

import torchair_ref
from torchair_conformance import process

JOB = process.read_job()

if JOB.get("wide_fields"):
    @dataclasses.dataclass
    class Output:
        """HuggingFace `ModelOutput` style."""

        last_hidden_state: torch.Tensor
        hidden_states: torch.Tensor | None = None
        attentions: torch.Tensor | None = None
else:
    @dataclasses.dataclass
    class Output:
        """HuggingFace `ModelOutput` style."""

        last_hidden_state: torch.Tensor
        hidden_states: torch.Tensor | None = None

Pair = collections.namedtuple("Pair", ["value", "flat"])


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def views(self, x: torch.Tensor, z: torch.Tensor):
        return x + 1, x.view(-1), x.t(), x[1:], torch.view_as_real(z), x.contiguous()

    def structs(self, x: torch.Tensor, z: torch.Tensor):
        h = self.fc(x)
        return Output(h, x * 2), Pair(h.sum(-1), x.view(-1))

    def mutated_view(self, x: torch.Tensor, z: torch.Tensor):
        x.add_(1)
        return x.view(-1)


def leaves(value: Any) -> list:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in leaves(v)]
    if dataclasses.is_dataclass(value):
        return leaves([getattr(value, f.name) for f in dataclasses.fields(value)])
    return [value]


def describe(out: Any, inputs: list) -> dict:
    """Types, and per tensor leaf: its values, which input's storage it shares, whether it is a view and of what."""
    roots = [t._base if t._base is not None else t for t in inputs]
    tensors = [t for t in leaves(out) if isinstance(t, torch.Tensor)]
    return {
        "types": [type(out).__name__] + [type(v).__name__ for v in (out if isinstance(out, tuple) else [out])],
        "values": [t.tolist() for t in tensors],
        "shares": [next((i for i, x in enumerate(inputs) if x.untyped_storage().data_ptr()
                         == t.untyped_storage().data_ptr()), None) for t in tensors],
        "view_of_root": [next((i for i, r in enumerate(roots) if t._base is r), None) for t in tensors],
        "is_input": [next((i for i, x in enumerate(inputs) if t is x), None) for t in tensors],
        "layout": [[list(t.shape), list(t.stride()), t.storage_offset()] for t in tensors],
    }


def arguments(batch: int) -> list:
    generator = torch.Generator().manual_seed(batch)
    # Views with a storage offset, as a caller's slices are. No size of a base equals another size by chance at one
    # batch and not at the next: Dynamo guards such equalities (duck sizing), and a warm start checks its guards.
    big = torch.randn(9, batch + 2, 4, generator=generator)
    real, imaginary = (torch.randn(batch + 2, 4, generator=generator) for _ in range(2))
    complex_big = torch.complex(real, imaginary)
    return [big[1, 1:batch + 1], complex_big[2:]]


def main() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    config = torchair_ref.CompilerConfig()
    config.debug.run_eagerly = JOB.get("run_eagerly", False)
    model = Net().eval()
    torch.manual_seed(0)
    model.fc.reset_parameters()
    method = JOB["method"]
    cached = torchair_ref.inference.cache_compile(getattr(model, method), config=config, dynamic=JOB["dynamic"],
                                                  cache_dir=JOB["cache_dir"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inputs = arguments(JOB.get("batch", 3))
        out = cached(*inputs)
        got = describe(out, inputs)
    eager_inputs = arguments(JOB.get("batch", 3))
    with torch.no_grad():
        expected = describe(getattr(model, method)(*eager_inputs), eager_inputs)
    process.reply({"got": got, "eager": expected, "unique_graphs": process.traced()["unique_graphs"],
                   "warnings": [str(w.message) for w in caught if not issubclass(w.category, DeprecationWarning)]})


if __name__ == "__main__":
    main()
