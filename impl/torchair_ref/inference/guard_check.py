"""Run the record's guard checks on a warm start, without Dynamo (SPEC CC-14, CC-21).

`first_call_failure` evaluates the checks of the module and the code it reaches (`when == "first"`) once, on the
first call, by following each source from the live module and the function's globals. `guarded_method` wraps the
warm function in a function with the method's own signature whose body is one generated boolean expression over the
arguments (`when == "call"`): sizes and symbolic relations, None-ness, container lengths, values, aliasing, and the
ambient state (PyTorch's C++ `GlobalStateGuard`, loaded through `_torch` without Dynamo). A call that fails it goes to
`on_fail` with the failing check, before any kernel runs. Only integers, identifiers and the validated templates of
`guard_spec` reach generated code.
"""
from __future__ import annotations

import functools
import inspect
import json
import math
import types
from collections.abc import Callable
from typing import Any

import torch

from torchair_ref import _refs, _torch
from torchair_ref.inference import guard_spec


def _parsed(source: str) -> tuple[tuple, tuple]:
    return guard_spec.parsed_source(source)


def resolve(source: str, frame: dict[str, Any], module_globals: Any, memo: dict | None = None) -> Any:
    """The live object at a guard source: `L[...]` from `frame`, `G[...]` from `module_globals`."""
    if memo is not None and source in memo:
        return memo[source]
    (root, name), steps = _parsed(source)
    value = frame[name] if root == "L" else module_globals[name]
    for op, arg in steps:
        value = _step(value, op, arg)
    if memo is not None:
        memo[source] = value
    return value


def _step(value: Any, op: str, arg: Any) -> Any:
    if op == "attr":
        return getattr(value, arg)
    if op == "item":
        return dict.__getitem__(value, arg) if isinstance(value, dict) else value[arg]
    if op == "at":
        return value[list(dict.keys(value))[arg]]
    if op == "key":
        return list(dict.keys(value))[arg]
    if op == "type":
        return type(value)
    if op == "dict":
        return dict(value)
    return getattr(value, arg)()  # "call": size(), stride(), ...


def cells(function: types.FunctionType) -> dict[str, Any]:
    """The contents of the function's closure cells, by name (an empty cell is left out)."""
    found = {}
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
        try:
            found[name] = cell.cell_contents
        except ValueError:
            continue
    return found


def first_call_failure(specs: list[dict], module: Any, function: types.FunctionType, module_globals: Any) -> str | None:
    """CC-21: the first module/code check that the live module fails, in words naming Dynamo's guard, or None."""
    frame, memo, digests = {function.__code__.co_varnames[0]: module, **cells(function)}, {}, {}
    for spec in specs:
        if spec["when"] != "first":
            continue
        try:
            ok = _holds(spec, lambda s: resolve(s, frame, module_globals, memo), digests)
        except Exception as exc:  # noqa: BLE001 - a source that is gone fails its guard
            return f"{spec['guard']} failed: {spec['text']} ({type(exc).__name__}: {exc})"
        if not ok:
            found = memo.get(spec.get("source", ""))
            if isinstance(found, torch.Tensor):
                found = f"{found.dtype} on {found.device.type}, size {list(found.shape)}, stride {list(found.stride())}"
            elif spec["check"] in ("class", "object"):
                found = guard_spec.qualified_name(type(found))
            return f"{spec['guard']} failed: {spec['text']}" + ("" if found is None else f" (found {found!s:.200})")
    return None


def _holds(spec: dict, at: Callable[[str], Any], digests: dict) -> bool:
    check = spec["check"]
    if check == "expr":
        values = {f"_s{i}": at(source) for i, source in enumerate(spec["sources"])}
        return bool(eval(_compiled(spec["expr"]), {"__builtins__": {}, **_FUNCTIONS}, values))  # noqa: S307
    if check == "distinct":
        objects = [at(source) for source in spec["sources"]]
        return len({id(o) for o in objects}) == len(objects)
    value = at(spec["source"])
    if check == "class":
        cls = type(value)
        if cls not in digests:
            digests[cls] = (guard_spec.qualified_name(cls), guard_spec.class_digest(cls))
        return digests[cls] == (spec["name"], spec["digest"])
    if check == "object":
        return guard_spec.describe_object(value) == spec["object"]
    if check == "constant":
        return value is spec["value"]
    if check == "equals":
        same_type = guard_spec.qualified_name(type(value)) == spec["type"]
        return same_type and value == guard_spec.from_literal(spec["value"])
    if check == "length":
        return len(value) == spec["length"]
    if check == "contains":
        return (spec["key"] in value) == spec["present"]
    if check == "no_attr":
        return not hasattr(value, spec["attr"])
    if check == "tensor":
        return tensor_fits(value, spec)
    raise guard_spec.UnknownGuard(f"{check} cannot be checked at the first call")


_FUNCTIONS = {"max": max, "min": min, "abs": abs, "isnan": math.isnan}


@functools.lru_cache(maxsize=4096)
def _compiled(template: str) -> types.CodeType:
    guard_spec.parse_expression(template)  # validated again: only the forms it accepts are ever compiled
    return compile(template, "<torchair_ref guard>", "eval")


def tensor_fits(value: Any, spec: dict) -> bool:
    """A TENSOR_MATCH: dtype, device type, rank, the static sizes, and the strides of dims longer than 1."""
    if not isinstance(value, torch.Tensor) or str(value.dtype) != spec["dtype"]:
        return False
    if value.device.type != spec["device"] or value.dim() != len(spec["size"]):
        return False
    for dim, (size, stride) in enumerate(zip(spec["size"], spec["stride"])):
        if size is not None and value.size(dim) != size:
            return False
        if stride is not None and value.size(dim) > 1 and value.stride(dim) != stride:
            return False
    return True


def global_state_now() -> str:
    """The live global state as GLOBAL_STATE's C++ guard writes it (JSON), to name what differs (CC-23)."""
    return str(_torch.global_state_guard()().__getstate__())


def global_state_checks(state: str) -> dict[bool, Callable[[], bool]]:
    """GLOBAL_STATE as two C++ guards, by the caller's grad mode: the cold trace ran with grad off (CC-16), and so
    does the warm graph whatever the caller's mode, so grad mode is the one field the warm call need not match."""
    GlobalStateGuard = _torch.global_state_guard()  # noqa: N806 - torch's class
    checks = {}
    for grad in (False, True):
        fields = json.loads(state)
        fields["grad_mode"] = grad
        guard = GlobalStateGuard()
        guard.__setstate__(json.dumps(fields, separators=(",", ":")))
        checks[grad] = guard.check
    return checks


def guarded_method(function: types.FunctionType, run: Callable, specs: list[dict],
                   on_fail: Callable[[dict, tuple, dict], Any], module_globals: Any) -> types.FunctionType:
    """CC-21: a function with `function`'s signature that calls `run` with its arguments when every per-call check
    holds, else `on_fail(spec, *args, **kwargs)` with the first failing check (which must raise or compute the call;
    `args` starts with the method's `self`)."""
    code = function.__code__
    specs = [s for s in specs if s["when"] == "call"]
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    positional, keyword = names[:code.co_argcount], names[code.co_argcount:]
    varargs = code.co_varnames[len(names)] if code.co_flags & inspect.CO_VARARGS else None
    varkw = code.co_varnames[len(names) + bool(varargs)] if code.co_flags & inspect.CO_VARKEYWORDS else None
    params = list(positional)
    if code.co_posonlyargcount:
        params.insert(code.co_posonlyargcount, "/")
    if varargs:
        params.append("*" + varargs)
    elif keyword:
        params.append("*")
    params += list(keyword) + (["**" + varkw] if varkw else [])
    call = list(positional) + (["*" + varargs] if varargs else []) + [f"{k}={k}" for k in keyword] + (
        ["**" + varkw] if varkw else [])
    if any(name.startswith("_tq_") for name in code.co_varnames[:len(names) + bool(varargs) + bool(varkw)]):
        raise guard_spec.UnknownGuard(f"a parameter of {function.__qualname__} is named like the guard's helpers")
    namespace: dict[str, Any] = {"__builtins__": {}, "_tq_run": run, "_tq_specs": specs, "_tq_fail": on_fail,
                                 "_tq_G": module_globals, "Exception": Exception,
                                 **{f"_tq_{f.__name__}": f for f in (len, hasattr, type, dict, list, max, min, abs, math.isnan)}}
    namespace["_tq_cells"] = cells(function)
    tests = [_test(spec, i, namespace, set(names) | {varargs, varkw}) for i, spec in enumerate(specs)]
    pack = ", ".join(params)
    forward = ", ".join(call)
    which = "".join(f"    try:\n        if not ({t}):\n            return {i}\n    except Exception:\n"
                    f"        return {i}\n" for i, t in enumerate(tests))
    source = (
        f"def guarded({pack}):\n"
        "    try:\n"
        f"        ok = {' and '.join(f'({t})' for t in tests) or 'True'}\n"
        "    except Exception:\n"
        "        ok = False\n"
        "    if ok:\n"
        f"        return _tq_run({forward})\n"
        f"    return _tq_fail(_tq_specs[_tq_which({forward})], {forward})\n"
        f"def _tq_which({pack}):\n{which}    return 0\n"
    )
    exec(compile(source, f"<torchair_ref guards of {function.__qualname__}>", "exec"), namespace)  # noqa: S102
    guarded = namespace["guarded"]
    namespace["_tq_which"].__defaults__ = guarded.__defaults__ = function.__defaults__
    namespace["_tq_which"].__kwdefaults__ = guarded.__kwdefaults__ = function.__kwdefaults__
    guarded.__qualname__ = function.__qualname__
    return guarded


def _source_code(source: str, params: set) -> str:
    """Python code reading a per-call source from the wrapper's parameters (names and keys only)."""
    (root, name), steps = _parsed(source)
    if root == "L":
        code = name if name in params else f"_tq_cells[{name!r}]"
    else:
        code = f"_tq_G[{name!r}]"
    for op, arg in steps:
        if op == "attr" or op == "call":
            if not str(arg).isidentifier():
                raise guard_spec.UnknownGuard(f"{source}: {arg!r} is not an attribute name")
            code = f"{code}.{arg}" + ("()" if op == "call" else "")
        elif op == "item":
            code = f"{code}[{arg!r}]"
        elif op == "key":
            code = f"_tq_list(_tq_dict.keys({code}))[{int(arg)}]"
        elif op == "at":
            code = f"{code}[_tq_list(_tq_dict.keys({code}))[{int(arg)}]]"
        else:
            code = f"_tq_{op}({code})"
    return code


def _test(spec: dict, i: int, namespace: dict, params: set) -> str:
    """One per-call check as a Python boolean expression (constants go into `namespace`)."""
    check = spec["check"]
    if check == "global_state":
        namespace["_tq_state"] = global_state_checks(spec["state"])
        namespace["_tq_grad"] = torch.is_grad_enabled
        return "_tq_state[_tq_grad()]()"
    if check == "function_modes":
        namespace["_tq_modes"] = _torch.torch_function_mode_count()
        return "not _tq_modes()"
    if check == "default_device":
        namespace["_tq_device"] = _torch.default_device_module()
        namespace[f"_tq_v{i}"] = spec["device"]
        if spec["device"] is None:
            return "_tq_device.CURRENT_DEVICE is None"
        return f"_tq_device.CURRENT_DEVICE is not None and str(_tq_device.CURRENT_DEVICE) == _tq_v{i}"
    if check == "expr":
        codes = {f"_s{n}": _source_code(source, params) for n, source in enumerate(spec["sources"])}
        return guard_spec.substitute(spec["expr"], codes, prefix="_tq_")
    if check == "distinct":
        codes = [_source_code(s, params) for s in spec["sources"]]
        return " and ".join(f"{a} is not {b}" for n, a in enumerate(codes) for b in codes[n + 1:]) or "True"
    value = _source_code(spec["source"], params)
    namespace[f"_tq_v{i}"] = spec
    if check == "constant":
        return f"{value} is {spec['value']!r}"
    if check == "length":
        return f"_tq_len({value}) == {int(spec['length'])}"
    if check == "equals":
        namespace[f"_tq_v{i}"] = guard_spec.from_literal(spec["value"])
        namespace[f"_tq_t{i}"] = _type_named(spec["type"])
        return f"_tq_type({value}) is _tq_t{i} and {value} == _tq_v{i}"
    if check == "class":
        cls = _type_named(spec["name"])
        if cls is None or guard_spec.class_digest(cls) != spec["digest"]:
            namespace[f"_tq_c{i}"] = _class_check
            return f"_tq_c{i}({value}, _tq_v{i})"
        namespace[f"_tq_t{i}"] = cls
        return f"_tq_type({value}) is _tq_t{i}"
    if check == "contains":
        namespace[f"_tq_k{i}"] = spec["key"]
        return f"(_tq_k{i} in {value}) is {bool(spec['present'])!r}"
    if check == "no_attr":
        namespace[f"_tq_k{i}"] = spec["attr"]
        return f"not _tq_hasattr({value}, _tq_k{i})"
    if check == "tensor":
        namespace["_tq_tensor_fits"] = tensor_fits
        return f"_tq_tensor_fits({value}, _tq_v{i})"
    if check == "object":
        namespace["_tq_describe"] = guard_spec.describe_object
        return f"_tq_describe({value}) == _tq_v{i}['object']"
    raise guard_spec.UnknownGuard(f"{check} cannot be checked per call")


def _class_check(value: Any, spec: dict) -> bool:
    cls = type(value)
    return (guard_spec.qualified_name(cls), guard_spec.class_digest(cls)) == (spec["name"], spec["digest"])


def _type_named(name: str) -> type | None:
    """The class a qualified name names, importing nothing new (a class of a module not loaded is not the one)."""
    import sys

    module, _, qualname = name.rpartition(".")
    while module and module not in sys.modules:
        module, _, head = module.rpartition(".")
        qualname = f"{head}.{qualname}"
    if not module or "<" in qualname:
        return None
    try:
        found = _refs.resolve({"module": module, "qualname": qualname})
    except Exception:  # noqa: BLE001 - not reachable by name: compared by name and digest instead
        return None
    return found if isinstance(found, type) and guard_spec.qualified_name(found) == name else None
