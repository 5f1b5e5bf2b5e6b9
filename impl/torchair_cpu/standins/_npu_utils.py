"""IMPL-4: stand-in for upstream's native ``torchair.core._npu_utils`` (NPU format casts)."""

from torchair_cpu.standins._needs import unavailable

NpuFormatCastViaCpu = unavailable("torchair.core._npu_utils.NpuFormatCastViaCpu")
