"""``options.json``: the GE options an exported graph was compiled with (EX-3/EX-4), as pure functions.

The document is ``{"compile options": {"global", "session", "graph"}, "execute options": {same}}``: ``global`` and
``session`` both hold the global options, ``graph`` the local ones, each filtered to GE's compile or execute option
names. The reference compiles with no GE session, so its GE options are the ones its config stands for
(``_GE_NAMES``) plus the determinism torch was asked for; their values are spelled as GE reads them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["OPTIONS_JSON", "COMPILE_OPTION_NAMES", "EXECUTE_OPTION_NAMES", "ge_options", "options_document", "render"]

OPTIONS_JSON = "options.json"

# GE's compile and execute option names, as torch-npu 2.14.0 lists them for options.json (fx2ge_converter.py,
# COMPILE_OPTIONS_WHITELIST and EXECUTE_OPTIONS_WHITELIST), in that order.
COMPILE_OPTION_NAMES = (
    "ge.exec.static_model_ops_lower_limit",
    "ge.opSelectImplmode",
    "ge.deterministic",
    "ge.quant_dumpable",
    "ge.tiling_schedule_optimize",
    "ge.enableSingleStream",
    "ge.oo.level",
    "ge.exportCompileStat",
    "ge.topoSortingMode",
    "ge.jit_compile",
    "ge.exec.atomicCleanPolicy",
    "ge.inputHintShape",
    "ge.fusionSwitchFile",
    "ge.aicoreNum",
    "ge.exec.allow_hf32",
    "ge.optimizationSwitch",
    "ge.oo.constantFolding",
    "ge.oo.deadCodeElimination",
)
EXECUTE_OPTION_NAMES = (
    "ge.exec.staticMemoryPolicy",
    "ge.featureBaseRefreshable",
    "ge.exec.outputReuseMemIndexes",
    "ge.exec.allTensorNotEmpty",
    "ge.exec.frozenInputIndexes",
    "ge.exec.hostInputIndexes",
    "ge.exec.dumpStep",
    "ge.exec.dumpLayer",
)

# Reference option (CF-1 dotted path) -> the GE option it stands for, with GE's spelling of each value.
_GE_NAMES: dict[str, tuple[str, Mapping[str, str]]] = {
    "ge_config.enable_single_stream": ("ge.enableSingleStream", {"True": "true", "False": "false"}),
}
_DETERMINISTIC = "ge.deterministic"


def ge_options(
    local: Mapping[str, str], global_: Mapping[str, str], *, deterministic: bool
) -> tuple[dict[str, str], dict[str, str]]:
    """EX-3: ``(local, global)`` GE options for a config's ``as_dict()`` halves (CF-3) and torch's determinism flag
    (``torch.are_deterministic_algorithms_enabled()``, a graph option: ``ge.deterministic`` "1"/"0")."""

    def translate(options: Mapping[str, str]) -> dict[str, str]:
        return {_GE_NAMES[k][0]: _GE_NAMES[k][1][v] for k, v in options.items() if k in _GE_NAMES}

    graph = translate(local)
    graph[_DETERMINISTIC] = "1" if deterministic else "0"
    return graph, translate(global_)


def _only(options: Mapping[str, str], names: tuple[str, ...]) -> dict[str, str]:
    return {name: options[name] for name in names if name in options}


def options_document(local: Mapping[str, str], global_: Mapping[str, str]) -> dict[str, dict[str, dict[str, str]]]:
    """EX-3: the ``options.json`` document for GE options ``local`` (graph) and ``global_`` (global and session)."""
    document = {}
    for kind, names in (("compile options", COMPILE_OPTION_NAMES), ("execute options", EXECUTE_OPTION_NAMES)):
        shared = _only(global_, names)
        document[kind] = {"global": shared, "session": dict(shared), "graph": _only(local, names)}
    return document


def render(document: Mapping[str, Any]) -> bytes:
    """EX-3: the file text, as ``json.dump(document, f, indent=4)`` writes it."""
    return json.dumps(document, indent=4, ensure_ascii=False).encode()
