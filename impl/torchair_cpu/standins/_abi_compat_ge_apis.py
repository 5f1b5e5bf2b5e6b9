"""IMPL-4: stand-in for upstream's native ``torchair.core._abi_compat_ge_apis`` (GE C APIs across ABIs).

Upstream's Python never calls into it by name; any attribute reached on it needs GE."""

from torchair_cpu.standins._needs import needs_cann


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    needs_cann(f"torchair.core._abi_compat_ge_apis.{name}")
