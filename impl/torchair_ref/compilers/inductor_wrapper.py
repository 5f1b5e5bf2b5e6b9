"""Pure text rules on the Python wrapper that Inductor generates (no torch, no files): which import lines the light
warm loader knows (`unknown_import`), the C++ source of each kernel declaration (`kernel_sources`), and which input
asserts only repeat the cached callable's own input check (`without_checked_asserts`, SPEC CC-15)."""
from __future__ import annotations

import ast
import re
from typing import Any

from torchair_ref._torch import INDUCTOR_HELPER_IMPORTS

#: the import lines of the wrapper run as they are (standard library and torch's public namespace); those of
#: Inductor's helpers that the light loader serves are `_torch.INDUCTOR_HELPER_IMPORTS`
_PLAIN_IMPORTS = frozenset({
    "from ctypes import c_void_p, c_long, c_int",
    "import torch",
    "import math",
    "import random",
    "import os",
    "import tempfile",
    "from math import inf, nan",
    "from cmath import nanj",
    "from torch import device, empty_strided",
})
_SCRIPT_TAIL = ("def get_args(", "def benchmark_compiled_module(", "if __name__ == ")
_IMPORT_LINE = re.compile(r"^\s*(?:import|from)\s")
#: the wrapper's checks of its inputs' layouts: `assert_size_stride(arg0_1, (1, 2), (2, 1), 'input')`, and on torch
#: 2.14 also `assert_size_stride_grouped((arg0_1, arg1_1), ((1, 2), (2, )), ((2, 1), (1, )), 'input')`
_INPUT_ASSERT = re.compile(r"^(\s+)(assert_size_stride(?:_grouped)?\(.*\))$")
_PLAIN_ASSERT = re.compile(r"^assert_size_stride\((\w+), \(((?:\d+, )*\d*)\), \(((?:\d+, )*\d*)\)(?:, 'input')?\)$")
#: the line of `call` that names the wrapper's inputs, e.g. `        arg0_1, arg1_1 = args`
_UNPACK_ARGS = re.compile(r"^\s+(\w+(?:, \w+)*),? = args$")


def kernel_sources(wrapper: str) -> dict[str, str]:
    """The C++ source of each `name = async_compile.cpp_pybinding(argtypes, r'''source''')` of a wrapper, by name
    (the warm loader binds each declaration to the kernel whose recorded source digest it has)."""
    found = {}
    for node in ast.walk(ast.parse(wrapper)):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        call = node.value
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "cpp_pybinding"
                and len(call.args) == 2 and isinstance(call.args[1], ast.Constant)
                and isinstance(call.args[1].value, str)):
            found[node.targets[0].id] = call.args[1].value
    return found


def unknown_import(source: str) -> str | None:
    """The first import line of the wrapper that the light loader does not know, or None (pure).

    The wrapper's tail (`get_args`, `benchmark_compiled_module`, the `__main__` block) only runs as a script.
    """
    for line in source.splitlines():
        if line.startswith(_SCRIPT_TAIL):
            break
        if _IMPORT_LINE.match(line):
            stripped = line.strip()
            if stripped not in _PLAIN_IMPORTS and stripped not in INDUCTOR_HELPER_IMPORTS:
                return stripped
    return None


def without_checked_asserts(source: str, guaranteed: list[Any] | None) -> str:
    """The wrapper with `pass` in place of each `assert_size_stride` (or `assert_size_stride_grouped`) of inputs
    that only repeats what the cached callable's input check makes sure of before every call (pure): the same static
    sizes and strides of the same inputs (`guaranteed[i]` for input i, `inputs.guaranteed_layouts`), all of them
    for a grouped line. Any other line is kept, and all of them when
    the wrapper does not name its inputs in exactly one `... = args` line of as many names as `guaranteed`.

    Each of those asserts costs about a microsecond per call on a CPU host, more than the input check of all the
    inputs together (SPEC CC-15: the check happens once, in C++, before any kernel)."""
    if not guaranteed:
        return source
    lines = source.splitlines()
    unpacks = [m for m in map(_UNPACK_ARGS.match, (line for line in lines if line.endswith(" = args"))) if m]
    names = unpacks[0].group(1).split(", ") if len(unpacks) == 1 else []
    if len(names) != len(guaranteed):
        return source
    position = {name: i for i, name in enumerate(names)}
    for n, line in enumerate(lines):
        found = _INPUT_ASSERT.match(line)
        if found is None:
            continue
        asserted = _asserted_layouts(found.group(2))
        if asserted and all(name in position and guaranteed[position[name]] is not None
                            and tuple(map(tuple, guaranteed[position[name]])) == layout
                            for name, layout in asserted.items()):
            lines[n] = found.group(1) + "pass"
    return "\n".join(lines)


def _asserted_layouts(statement: str) -> dict[str, tuple[Any, ...]] | None:
    """{input name: (sizes, strides)} of one `assert_size_stride[_grouped](..., 'input')` call whose sizes and
    strides are all integer literals (pure); None for anything else (a symbolic size, another form or tag)."""
    plain = _PLAIN_ASSERT.match(statement)  # the common form, without parsing (a wrapper may hold hundreds)
    if plain is not None:
        return {plain.group(1): (_ints(plain.group(2)), _ints(plain.group(3)))}
    try:
        call = ast.parse(statement, mode="eval").body
    except SyntaxError:
        return None
    if (not isinstance(call, ast.Call) or not isinstance(func := call.func, ast.Name) or call.keywords
            or len(call.args) not in (3, 4)):
        return None
    if len(call.args) == 4 and not (isinstance(call.args[3], ast.Constant) and call.args[3].value == "input"):
        return None  # a check after some op: only the checks of the inputs as the call received them repeat ours
    try:
        sizes, strides = ast.literal_eval(call.args[1]), ast.literal_eval(call.args[2])
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    target = call.args[0]
    if func.id == "assert_size_stride" and isinstance(target, ast.Name):
        names, sizes, strides = [target.id], [sizes], [strides]
    elif func.id == "assert_size_stride_grouped" and isinstance(target, ast.Tuple) and all(
            isinstance(e, ast.Name) for e in target.elts):
        names = [e.id for e in target.elts if isinstance(e, ast.Name)]  # all are, checked above
    else:
        return None
    if not (isinstance(sizes, list | tuple) and isinstance(strides, list | tuple)):
        return None
    layouts = list(zip(sizes, strides))
    if len(layouts) != len(names) or len(set(names)) != len(names) or not all(
            isinstance(v, tuple) and all(type(d) is int for d in v) for layout in layouts for v in layout):
        return None
    return dict(zip(names, layouts))


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(item) for item in text.split(",") if item.strip())
