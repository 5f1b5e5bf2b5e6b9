"""IMPL-2/IMPL-4: the versions an NPU host declares: torch, torch_npu and CANN.

CANN's version is looked up in this order: ``torch.version.cann``, then ``torch_npu.npu.utils.get_cann_version()``,
then the ``version=`` line of ``ascend_toolkit_install.info`` under ``$ASCEND_HOME_PATH`` (the toolkit's own record);
None when none of them says.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["TOOLKIT_INFO", "toolkit_info_version", "cann_version", "declared_versions"]

TOOLKIT_INFO = "ascend_toolkit_install.info"


def toolkit_info_version(environ: Mapping[str, str] | None = None) -> str | None:
    """The ``version=`` value of ``$ASCEND_HOME_PATH/ascend_toolkit_install.info`` (searched one level down too, as
    toolkits put it in ``<arch>-linux/``), or None."""
    environ = os.environ if environ is None else environ
    home = environ.get("ASCEND_HOME_PATH")
    if not home:
        return None
    root = Path(home)
    for candidate in [root / TOOLKIT_INFO, *sorted(root.glob(f"*/{TOOLKIT_INFO}"))]:
        if not candidate.is_file():
            continue
        for line in candidate.read_text(encoding="utf-8", errors="replace").splitlines():
            key, sep, value = line.partition("=")
            if sep and key.strip() == "version" and value.strip():
                return value.strip().strip("'\"")
    return None


def cann_version(torch: ModuleType, torch_npu: ModuleType | None,
                 environ: Mapping[str, str] | None = None) -> str | None:
    """IMPL-2: CANN's version: ``torch.version.cann``, else ``torch_npu.npu.utils.get_cann_version()``, else the
    toolkit's info file; None when nothing says."""
    found = getattr(getattr(torch, "version", None), "cann", None)
    if found:
        return str(found)
    getter = getattr(getattr(getattr(torch_npu, "npu", None), "utils", None), "get_cann_version", None)
    if callable(getter):
        try:
            found = getter()
        except Exception:  # noqa: BLE001 - a broken CANN install: fall through to the toolkit's own record
            found = None
        if found:
            return str(found)
    return toolkit_info_version(environ)


def declared_versions(torch: ModuleType, torch_npu: ModuleType,
                      environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """IMPL-2 ``versions`` for upstream on an NPU."""
    return {"torch": torch.__version__, "torch_npu": getattr(torch_npu, "__version__", None),
            "cann": cann_version(torch, torch_npu, environ)}
