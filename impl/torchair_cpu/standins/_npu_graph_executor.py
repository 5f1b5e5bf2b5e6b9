"""IMPL-4: stand-in for upstream's native ``torchair.core._npu_graph_executor`` (NPU tensor storage queries)."""

from torchair_cpu.standins._needs import unavailable

GetNpuStorageSizes = unavailable("torchair.core._npu_graph_executor.GetNpuStorageSizes")
