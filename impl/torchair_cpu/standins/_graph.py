"""IMPL-4: upstream's native GE graph handle (``torchair.core._torchair.TorchNpuGraphBase``), backed by the project's
GE executor (``ge_executor``) so that upstream's own Python compiles, caches and runs graphs on CPU.

Upstream's ``TorchNpuGraph`` (core/_backend.py:177-212) calls ``load(serialized ModelDef, options, input_placements,
output_dtypes, executor_type)`` and ``set_hint_shape(input shapes, output shapes)`` once, ``compile()`` once, then
``run((inputs, assigned_outputs, stream))`` per call, expecting a list of tensors. Here ``load`` parses and checks the
graph (an op without a CPU kernel fails there, naming it), ``compile`` has nothing left to do, and ``run`` computes the
outputs with torch, writing into any assigned output tensor as GE does. Nothing of GE's own compilation (fusion,
memory planning, NPU kernels) is imitated: results are what CANN's operator semantics give, computed on CPU.

With ``$TORCHAIR_CPU_GE_GRAPHS`` set to a folder, every graph upstream loads is also written there, as the serialized
``ModelDef`` it handed over (``<sha256>.pb``), before it is checked: what upstream emits, including graphs the
executor refuses. ``tests/suite/test_conformance_upstream.py`` collects the op types of a whole suite run this way.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from ge_executor import GeExecutorError, Graph, ge_ir, load
from ge_executor.registry import torch_dtype

__all__ = ["TorchNpuGraphBase", "GRAPHS_ENV"]

#: the environment variable naming a folder that receives every graph upstream loads
GRAPHS_ENV = "TORCHAIR_CPU_GE_GRAPHS"


def _keep(serialized_model: bytes) -> None:
    """Write the graph to ``$TORCHAIR_CPU_GE_GRAPHS`` (when set), named by its digest so that repeats are one file."""
    folder = os.environ.get(GRAPHS_ENV)
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    target = Path(folder) / f"{hashlib.sha256(serialized_model).hexdigest()}.pb"
    if not target.exists():
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(serialized_model)
        partial.replace(target)


class TorchNpuGraphBase:
    """A GE graph handle whose graph runs on the project's CPU GE executor."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self._graph: Graph | None = None
        self._output_dtypes: list[torch.dtype] = []
        self.options: dict = {}
        self.hint_shapes: tuple[Any, Any] = ((), ())

    def load(self, serialized_model: bytes, options: Mapping[str, str], input_placements: Sequence[int],
             output_dtypes: Sequence[int], executor_type: int) -> None:
        """Parse and check the ``ModelDef``; ``output_dtypes`` are GE C++ numbers, checked after every run."""
        _keep(bytes(serialized_model))
        self._graph = load(bytes(serialized_model))
        self.options = dict(options)
        self._output_dtypes = [torch_dtype(ge_ir.cpp_dtype_name(v), f"graph {self.name!r} output dtype {v}")
                               for v in output_dtypes]

    def set_hint_shape(self, inputs_shape: Any, output_shapes: Any) -> None:
        """GE uses the hints to plan memory; the executor computes shapes at run time and only keeps them."""
        self.hint_shapes = (inputs_shape, output_shapes)

    def compile(self) -> None:
        """Everything the executor checks was checked by ``load``; a graph that was never loaded cannot compile."""
        self._loaded()

    def auto_tune(self, *args: Any, **kwargs: Any) -> None:
        from torchair_cpu.standins._needs import needs_cann

        needs_cann(f"GE graph auto_tune ({self.name}) (AOE tunes NPU kernels)")

    def run(self, args: tuple[Sequence[torch.Tensor], Sequence[torch.Tensor | None], Any]) -> list[torch.Tensor]:
        """Outputs of the graph for ``inputs``; an assigned output receives its value in place and is returned."""
        inputs, assigned, _stream = args
        graph = self._loaded()
        outputs = graph.run(list(inputs))
        if self._output_dtypes and [o.dtype for o in outputs] != self._output_dtypes:
            raise GeExecutorError(f"graph {self.name!r}: the executor computed output dtypes "
                                  f"{[o.dtype for o in outputs]}, upstream declared {self._output_dtypes}")
        for index, target in enumerate(assigned or ()):
            if target is not None:
                target.copy_(outputs[index])
                outputs[index] = target
        return outputs

    def _loaded(self) -> Graph:
        if self._graph is None:
            raise GeExecutorError(f"GE graph {self.name!r} was not loaded: upstream calls load() before compile/run")
        return self._graph
