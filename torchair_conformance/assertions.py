"""Assertion helpers; every message carries the values that broke it."""

from __future__ import annotations

import json
import logging
import math
import os
import re
import stat
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import torch

from torchair_conformance import ge_ir
from torchair_conformance.exports import (
    OPTIONS_JSON_SHAPE,
    files_under,
    parse_pbtxt,
    resolve_file_path,
    same_bytes_as_file,
    tensor_bytes,
)
from torchair_conformance.harness import Captured, cache_files

__all__ = [
    "assert_cache_file_at",
    "assert_no_cache_file",
    "assert_mode_0600",
    "assert_logged",
    "assert_warned",
    "exception_chain",
    "assert_chain_contains",
    "assert_outputs_close",
    "assert_worker_ok",
    "TOLERANCES",
    "tolerance",
    "max_abs_diff_bound",
    "assert_files",
    "assert_data_ops",
    "assert_net_output",
    "assert_edges_resolve",
    "assert_weights_inline",
    "assert_weights_in_files",
    "assert_pbtxt_matches",
    "assert_options_json",
]


def assert_cache_file_at(root: os.PathLike | str, expected: str, *, story: str = "") -> None:
    """CC-8: the only ``compiled_module`` under ``root`` is ``expected``."""
    found = cache_files(root)
    assert found == [expected], (
        f"expected exactly one cache file at {expected!r} under root {os.fspath(root)!r}, found {found!r}"
        + (f" ({story})" if story else "")
    )


def assert_no_cache_file(root: os.PathLike | str, *, why: str) -> None:
    found = cache_files(root) if os.path.exists(root) else []
    assert not found, f"expected no compiled_module under {os.fspath(root)!r} ({why}), found {found!r}"


def assert_mode_0600(path: str) -> None:
    """CC-11 / RC-3: ``path`` is a regular file (not a symlink) with permission bits exactly 0600."""
    st = os.lstat(path)
    assert stat.S_ISREG(st.st_mode), f"expected a regular file at {path!r}, found mode {oct(st.st_mode)}"
    assert stat.S_IMODE(st.st_mode) == 0o600, f"expected mode 0o600 for {path!r}, found {oct(stat.S_IMODE(st.st_mode))}"


def assert_logged(captured: Captured, level: int, substrings: Sequence[str], *, what: str) -> str:
    """A record at ``level`` (exactly) of the implementation's logger contains every substring; returns it."""
    messages = captured.at(level)
    for message in messages:
        if all(s in message for s in substrings):
            return message
    raise AssertionError(
        f"expected a {logging.getLevelName(level)} log record containing {list(substrings)!r} ({what}); "
        f"records at that level: {messages!r}; "
        f"all records: {[(r.levelname, r.getMessage()) for r in captured.records]!r}"
    )


def assert_warned(captured: Captured, category: type, substrings: Sequence[str], *, what: str) -> str:
    """A warning of ``category`` whose text contains every substring; returns its text."""
    texts = captured.warning_texts(category)
    for text in texts:
        if all(s in text for s in substrings):
            return text
    seen = [f"{w.category.__name__}: {w.message}" for w in captured.warnings]
    raise AssertionError(
        f"expected a {category.__name__} containing {list(substrings)!r} ({what}); warnings seen: {seen!r}")


def exception_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` then its inner exception / cause / context, each once."""
    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and all(cur is not c for c in chain):
        chain.append(cur)
        cur = getattr(cur, "inner_exception", None) or cur.__cause__ or cur.__context__
    return chain


def assert_chain_contains(exc: BaseException, text: str, *, what: str) -> None:
    chain = exception_chain(exc)
    assert any(text in str(e) for e in chain), (
        f"expected {text!r} in the message of {type(exc).__name__} or its inner exceptions ({what}); "
        f"chain: {[(type(e).__name__, str(e)[:300]) for e in chain]!r}"
    )


# The one tolerance table of the suite: a compiled (or cached) result against eager, per dtype. 16-bit floats keep
# 8 (bfloat16) or 11 (float16) significant bits, so one rounding step is 2**-7 ~ 7.8e-3 (bfloat16) or 2**-10 ~ 1e-3
# (float16) of the value; a graph compiler that fuses ops rounds once where eager rounds after every op, which over
# the zoo's few layers moves an output by a couple of such steps: 2e-2 for bfloat16 (about 2.5 steps, above
# torch.testing's own 1.6e-2) and 1e-2 for float16. float32 and float64 only see reassociation.
TOLERANCES: Mapping[torch.dtype, Mapping[str, float]] = {
    torch.float64: {"rtol": 1e-7, "atol": 1e-7},
    torch.float32: {"rtol": 1e-4, "atol": 1e-5},
    torch.bfloat16: {"rtol": 2e-2, "atol": 2e-2},
    torch.float16: {"rtol": 1e-2, "atol": 1e-2},
}


def tolerance(dtype: torch.dtype) -> Mapping[str, float]:
    """``TOLERANCES``'s entry for ``dtype`` (float32's for any other dtype)."""
    return TOLERANCES.get(dtype, TOLERANCES[torch.float32])


def max_abs_diff_bound(expected: Any) -> float:
    """What ``TOLERANCES`` allows for max |got - expected| over ``expected``'s tensor leaves (atol + rtol * max
    |leaf|, the largest over leaves), for a worker that reports only that maximum (``eager_max_diff``)."""
    bounds = [0.0]
    for leaf in _leaves(expected):
        if isinstance(leaf, torch.Tensor):
            tol = tolerance(leaf.dtype)
            scale = leaf.detach().abs().max().item() if leaf.numel() else 0.0
            bounds.append(tol["atol"] + tol["rtol"] * scale)
    return max(bounds)


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def assert_outputs_close(got: Any, expected: Any, *, what: str) -> None:
    """Same structure; tensors equal within their dtype's tolerance; other leaves equal."""
    g, e = _leaves(got), _leaves(expected)
    assert len(g) == len(e), f"{what}: expected {len(e)} output leaves, got {len(g)}: {got!r}"
    for i, (a, b) in enumerate(zip(g, e)):
        if isinstance(b, torch.Tensor):
            assert isinstance(a, torch.Tensor), f"{what}: leaf {i}: expected a tensor, got {a!r}"
            assert a.shape == b.shape and a.dtype == b.dtype, (
                f"{what}: leaf {i}: expected {tuple(b.shape)} {b.dtype}, got {tuple(a.shape)} {a.dtype}")
            torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), **tolerance(b.dtype),
                                       msg=lambda m, i=i: f"{what}: leaf {i}: {m}")
        else:
            assert a == b, f"{what}: leaf {i}: expected {b!r}, got {a!r}"


def assert_worker_ok(result: Mapping[str, Any], *, what: str) -> None:
    """A worker finished its calls without an exception."""
    err = result.get("error")
    assert err is None, (
        f"{what}: the worker raised {err['type']}: {err['message'][:2000]}\n"
        f"chain: {[(c['type'], c['message'][:300]) for c in err['chain']]}\n{err['traceback']}\n"
        f"logs: {result.get('logs')}"
    )


def messages_at(result: Mapping[str, Any], level: int) -> Iterable[str]:
    return [m for lvl, m in result.get("logs", []) if lvl == level]


# --- dynamo_export (SPEC section 4) -------------------------------------------------------------------------------
# ``weights`` arguments are ``export_zoo.model_weights(module)``: {first fqn: [tensor, fqn, fqn, ...]}.


# EX-7: an op type written as an ATen/prims/c10d operator name (aten.addmm.default, _c10d_functional.all_reduce...)
_OPERATOR_NAME = re.compile(r"^(aten|prims|_?c10d_functional|torch|operator|builtins)\.|\.(default|Tensor|int)$")


def assert_ge_op_types(graph: Any, *, what: str) -> None:
    """EX-7: every op type is a GE type name (``MatMulV2``), never an operator name such as ``aten.addmm.default``."""
    named = sorted({op.type for op in graph.op if _OPERATOR_NAME.search(op.type) or not op.type.isidentifier()})
    assert not named, f"{what}: op types that are operator names, not GE op types: {named!r}"


def assert_files(root: os.PathLike | str, expected: Collection[str], *, what: str) -> None:
    """EX-3/EX-4: the files under ``root`` are exactly ``expected`` (relative ``/`` paths)."""
    found = files_under(root)
    assert found == set(expected), (
        f"{what}: expected exactly the files {sorted(expected)!r} under {os.fspath(root)!r}, found {sorted(found)!r} "
        f"(missing {sorted(set(expected) - found)!r}, unexpected {sorted(found - set(expected))!r})")


def assert_data_ops(graph: Any, expected: Sequence[tuple[int, Sequence[int]]], *, what: str) -> None:
    """EX-6/EX-7: one ``Data`` op per user input, with these (dtype, dims) in some order, attr ``index`` numbering
    them 0..n-1 in op order."""
    data = [op for op in graph.op if op.type == "Data"]
    found = sorted((op.output_desc[0].dtype if op.output_desc else None,
                    list(op.output_desc[0].shape.dim) if op.output_desc else None) for op in data)
    want = sorted((dtype, list(dims)) for dtype, dims in expected)
    readable = lambda pairs: [  # noqa: E731
        (ge_ir.proto_dtype_name(d) if d is not None else None, dims) for d, dims in pairs]
    assert found == want, (
        f"{what}: expected one Data op per user input with (dtype, dims) {readable(want)!r}, found {readable(found)!r} "
        f"(ops {[op.name for op in data]!r})")
    indices = [op.attr["index"].i if "index" in op.attr else None for op in data]
    assert indices == list(range(len(data))), (
        f"{what}: the Data ops must be numbered 0..{len(data) - 1} by attr index in op order, found {indices!r} "
        f"for {[op.name for op in data]!r}")


def assert_net_output(graph: Any, outputs: int, *, what: str) -> None:
    """EX-7: exactly one ``NetOutput`` op, whose inputs are the model's ``outputs`` result tensors."""
    nets = [op for op in graph.op if op.type == "NetOutput"]
    assert len(nets) == 1, f"{what}: expected one NetOutput op, found {[op.name for op in nets]!r}"
    data_inputs = [i for i in nets[0].input if not i.endswith(":-1")]
    assert len(data_inputs) == outputs, (
        f"{what}: the NetOutput op should take the {outputs} output(s) of the model, its inputs are "
        f"{list(nets[0].input)!r}")


def assert_edges_resolve(graph: Any, *, what: str) -> None:
    """EX-7: every op input is ``"<op of this graph>:<output index>"`` (``-1``: a control edge) or ``""``, an
    omitted optional input (GE's op builders write it to keep input positions; it is no edge)."""
    names = {op.name for op in graph.op}
    bad = []
    for op in graph.op:
        for edge in op.input:
            if edge == "":
                continue
            src, sep, index = edge.rpartition(":")
            if not sep or src not in names or not index.lstrip("-").isdigit():
                bad.append((op.name, edge))
    assert not bad, f"{what}: op inputs that name no op of the graph (op, input): {bad[:20]!r}"


def _weight_desc(t: Any) -> tuple[int, list[int]]:
    return ge_ir.proto_dtype(t.dtype), list(t.shape)


def assert_weights_inline(graph: Any, weights: Mapping[str, Sequence[Any]], *, what: str) -> None:
    """EX-6: no ``FileConstant`` op, and each weight is a ``Const`` op holding its dtype, shape and exact bytes."""
    files = [op.name for op in graph.op if op.type == "FileConstant"]
    assert not files, f"{what}: expected every weight inline (Const), found FileConstant ops {files!r}"
    consts = {}
    for op in graph.op:
        if op.type == "Const" and "value" in op.attr:
            t = op.attr["value"].t
            consts.setdefault((t.desc.dtype, tuple(t.desc.shape.dim), t.data), op.name)
    missing = []
    for tensor, *names in weights.values():
        key = _as_key(tensor)
        if key not in consts:
            missing.append(f"{'='.join(names)} ({ge_ir.proto_dtype_name(key[0])} {list(key[1])})")
    const_descs = [(name, ge_ir.proto_dtype_name(k[0]), list(k[1]), len(k[2])) for k, name in consts.items()]
    assert not missing, (
        f"{what}: these weights have no Const op holding their dtype, shape and bytes: {missing!r}; "
        f"Const ops (name, dtype, shape, data bytes): {const_descs!r}")


def assert_weights_in_files(graph: Any, weights: Mapping[str, Sequence[Any]], weight_dir: os.PathLike | str, *,
                            cwd: os.PathLike | str, what: str) -> set[str]:
    """EX-6/EX-7: each weight is a ``FileConstant`` (attrs shape, dtype, file_path) whose file, named by an fqn of
    the weight with ``.`` -> ``_`` in ``weight_dir``, holds exactly its bytes; no Const holds a weight. Returns the
    weight file names."""
    by_file = {}
    for fqn, (tensor, *names) in weights.items():
        for name in names:
            by_file[name.replace(".", "_")] = (fqn, tensor, names)
    seen: set[str] = set()
    files: set[str] = set()
    real_dir = os.path.realpath(weight_dir)
    for op in graph.op:
        if op.type != "FileConstant":
            continue
        for attr in ("shape", "dtype", "file_path"):
            assert attr in op.attr, f"{what}: FileConstant {op.name!r} has no attr {attr!r}: attrs {sorted(op.attr)!r}"
        path = resolve_file_path(op.attr["file_path"].s, cwd)
        base = os.path.basename(path)
        assert os.path.dirname(path) == real_dir, (
            f"{what}: FileConstant {op.name!r} has file_path {op.attr['file_path'].s!r}, which is not in the rank's "
            f"directory {real_dir!r}")
        assert base in by_file, (
            f"{what}: FileConstant {op.name!r} names the file {base!r}, which is no weight's fqn with '.' -> '_' "
            f"(weight files would be {sorted(by_file)!r})")
        fqn, tensor, names = by_file[base]
        seen.add(fqn)
        files.add(base)
        # The dtype attr is a dt attr: GE's C++ numbering (float32 = 0), not the descriptors' protobuf enum.
        dtype, dims = ge_ir.cpp_dtype(tensor.dtype), list(tensor.shape)
        found = (op.attr["dtype"].dt, list(op.attr["shape"].list.i))
        assert found == (dtype, dims), (
            f"{what}: FileConstant {op.name!r} for {'='.join(names)}: expected dtype {ge_ir.cpp_dtype_name(dtype)} "
            f"(dt {dtype}, GE's C++ numbering) shape {dims}, its attrs say {ge_ir.cpp_dtype_name(found[0])} "
            f"(dt {found[0]}) {found[1]}")
        assert os.path.isfile(path), f"{what}: the weight file {path!r} of {'='.join(names)} does not exist"
        size = os.path.getsize(path)
        expected = math.prod(dims) * tensor.element_size()
        assert size == expected, (
            f"{what}: the weight file {path!r} of {'='.join(names)} holds {size} bytes, expected prod({dims}) x "
            f"{tensor.element_size()} = {expected} (raw bytes, no header)")
        differ = same_bytes_as_file(tensor, path)
        assert differ is None, (
            f"{what}: the weight file {path!r} of {'='.join(names)} ({tensor.dtype}) differs from the weight's raw "
            f"bytes (C order, native byte order) first at byte {differ}")
    missing = sorted(set(weights) - seen)
    assert not missing, (
        f"{what}: with the weights externalised, these weights have no FileConstant: {missing!r}; FileConstant ops "
        f"{[(op.name, op.attr['file_path'].s) for op in graph.op if op.type == 'FileConstant']!r}")
    held = {(op.attr["value"].t.desc.dtype, tuple(op.attr["value"].t.desc.shape.dim), op.attr["value"].t.data): op.name
            for op in graph.op if op.type == "Const" and "value" in op.attr}
    # A one-element weight may coincide with a scalar constant the graph needs anyway, and an integer buffer with an
    # index list (upstream writes permutation and shape lists as Consts): only larger floating-point weights count.
    inline = []
    for tensor, *names in weights.values():
        key = _as_key(tensor)
        if tensor.numel() > 1 and tensor.is_floating_point() and key in held:
            inline.append(f"{'='.join(names)} as Const {held[key]!r}")
    assert not inline, f"{what}: all or nothing: these weights are still inline while others are in files: {inline!r}"
    return files


def _as_key(tensor: Any) -> tuple[int, tuple[int, ...], bytes]:
    dtype, dims = _weight_desc(tensor)
    return dtype, tuple(dims), tensor_bytes(tensor)


def assert_pbtxt_matches(text: str, graph: Any, *, what: str) -> None:
    """EX-8: the dump has one ``node`` block per op of the graph, with its name, type and inputs, and writes each
    output's dtype by enum name (``dtype: DT_...``, also inside a quoted descriptor as upstream writes it)."""
    nodes = parse_pbtxt(text)
    found = Counter((n.name, n.op) for n in nodes)
    want = Counter((op.name, op.type) for op in graph.op)
    assert found == want, (
        f"{what}: dynamo.pbtxt should hold one node block per op of the .air graph: {len(nodes)} blocks for "
        f"{len(graph.op)} ops; in the dump only {sorted((found - want).elements())[:20]!r}, in the graph only "
        f"{sorted((want - found).elements())[:20]!r}")
    by_name = {n.name: n for n in nodes}
    for op in graph.op:
        node = by_name[op.name]
        assert node.inputs == list(op.input), (
            f"{what}: node {op.name!r} has inputs {node.inputs!r} in dynamo.pbtxt, {list(op.input)!r} in the .air")
        for desc in op.output_desc:
            name = ge_ir.proto_dtype_name(desc.dtype)
            # Upstream writes descriptors as quoted text fields, so a line break may be the two characters "\n".
            assert re.search(rf"(?:\\n|\b)dtype:\s*{name}\b", node.text), (
                f"{what}: node {op.name!r} outputs {name}, but its dynamo.pbtxt block has no 'dtype: {name}':\n"
                f"{node.text[:1500]}")


def assert_options_json(path: os.PathLike | str, *, what: str) -> None:
    """EX-3/EX-4: ``options.json`` exists and is ``json.dump(indent=4)`` of ``{"compile options": {"global", "session",
    "graph"}, "execute options": {same}}``, each a dict of strings, ``session`` equal to ``global`` (both are the
    global options). Which options appear is the implementation's (SPEC names no required option)."""
    assert os.path.isfile(path), f"{what}: no options.json at {os.fspath(path)!r}"
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        document = json.loads(text)
    except ValueError as e:
        raise AssertionError(f"{what}: {os.fspath(path)!r} is not JSON ({e}): {text[:500]!r}") from None
    shape = {k: sorted(v) for k, v in document.items()} if isinstance(document, dict) and all(
        isinstance(v, dict) for v in document.values()) else document
    want = {k: sorted(v) for k, v in OPTIONS_JSON_SHAPE.items()}
    assert shape == want, f"{what}: options.json must have exactly the keys {want!r}, found {shape!r}"
    for kind, scopes in document.items():
        for scope, options in scopes.items():
            bad = ({k: v for k, v in options.items() if not (isinstance(k, str) and isinstance(v, str))}
                   if isinstance(options, dict) else options)
            assert isinstance(options, dict) and not bad, (
                f"{what}: options.json [{kind!r}][{scope!r}] must map option names to strings; offending: {bad!r}")
        assert scopes["session"] == scopes["global"], (
            f"{what}: options.json [{kind!r}]: session and global both hold the global options, found "
            f"{scopes['session']!r} and {scopes['global']!r}")
    written = (json.dumps(document, indent=4), json.dumps(document, indent=4, ensure_ascii=False))
    assert text in written, (
        f"{what}: options.json should read as json.dump(document, indent=4) writes it; found:\n{text[:2000]}")
