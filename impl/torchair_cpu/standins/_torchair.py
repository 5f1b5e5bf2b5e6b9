"""IMPL-4: stand-in for upstream's native ``torchair.core._torchair`` (GE session, graphs, op registry, export).

Everything here that would run GE or ask CANN raises ``NeedsCANNError``, with two exceptions. A graph handle,
``TorchNpuGraphBase``, loads, compiles and runs its GE graph on the project's CPU GE executor (``_graph.py``). And
``export``: upstream's Python builds the whole export model (``GeGraph.SerializeToString()``, a serialized
``ge.proto.ModelDef``, ge/_ge_graph.py) and hands it to the native side to be written as
``<export_path_dir>/<export_name>``; the stand-in writes those bytes unchanged, adding nothing. What GE's own writer
would add or normalise is not imitated, so only an NPU run checks it.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping

# upstream reads it as torchair.core._torchair.TorchNpuGraphBase: a re-export (the redundant alias says so to ruff,
# whose unused-import fix removed it once and left upstream without a graph handle)
from torchair_cpu.standins._graph import TorchNpuGraphBase as TorchNpuGraphBase
from torchair_cpu.standins._needs import unavailable


class TorchDataType(enum.Enum):
    """The names upstream's Python maps torch dtypes to; their native values exist only in CANN."""

    BOOL = "BOOL"
    UINT8 = "UINT8"
    INT8 = "INT8"
    INT16 = "INT16"
    UINT16 = "UINT16"
    INT32 = "INT32"
    UINT32 = "UINT32"
    INT64 = "INT64"
    UINT64 = "UINT64"
    BF16 = "BF16"
    FLOAT16 = "FLOAT16"
    FLOAT32 = "FLOAT32"
    FLOAT64 = "FLOAT64"
    COMPLEX64 = "COMPLEX64"
    COMPLEX128 = "COMPLEX128"


def export(serialized_graph: bytes, options: Mapping[str, str]) -> None:
    """EX-3/EX-4: write upstream's serialized export model, unchanged, to
    ``options['export_path_dir']/options['export_name']``."""
    path = os.path.join(options["export_path_dir"], options["export_name"])
    with open(path, "wb") as handle:
        handle.write(bytes(serialized_graph))


def SetDebugLogPath(path: str) -> None:  # noqa: N802 - upstream's native name
    """Native debug logging does not exist here; upstream's Python logging still goes to ``path``'s handler."""


#: the options upstream initialised "GE" with, in order (GE itself does not exist here)
initialized_with: list = []


def InitializeGraphEngine(options: Mapping[str, str]) -> None:  # noqa: N802 - upstream's native name
    """Record the options; nothing is started. Upstream's Python enforces one set of global options per process
    (CC-7 (b)) before it gets here; the graphs run on the CPU GE executor, which needs no session."""
    initialized_with.append(dict(options))


def FinalizeGraphEngine() -> None:  # noqa: N802 - upstream's native name
    """Upstream calls it at exit; GE never started here, so there is nothing to finalise."""


InitDeviceStdoutChannel = unavailable("torchair.core._torchair.InitDeviceStdoutChannel")
GetSocName = unavailable("torchair.core._torchair.GetSocName")
StupidRepeat = unavailable("torchair.core._torchair.StupidRepeat")
AclmdlSetDump = unavailable("torchair.core._torchair.AclmdlSetDump")
AclopStartDumpArgs = unavailable("torchair.core._torchair.AclopStartDumpArgs")
AclopStopDumpArgs = unavailable("torchair.core._torchair.AclopStopDumpArgs")
get_registered_ir_def = unavailable("torchair.core._torchair.get_registered_ir_def")
check_cann_compat = unavailable("torchair.core._torchair.check_cann_compat")
as_torch_tensors = unavailable("torchair.core._torchair.as_torch_tensors")
