"""The guard source reader (SPEC CC-21, CC-22): Dynamo's spellings of a guarded object's path read without `ast`,
held to `ast`'s reading (`guard_spec._Reader`, `guard_spec.parsed_source`)."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchair_ref.inference import guard_check, guard_expressions, guard_spec


def _spellings():
    """Sources in Dynamo's spelling (a grammar of every form the reader knows), each possibly damaged by one edit."""
    # mostly what Dynamo writes, sometimes what it never does (a keyword, other quotes, a leading zero)
    name = st.sampled_from(["self", "x", "_modules", "weight", "__code__", "size", "a1", "__dict__"] * 4
                           + ["class", "é", "None"])
    key = st.sampled_from(["'a'", "'0'", "'a.b'", "'a]b'", "0", "1", "10"] * 4
                          + ["\"a\"", "'a\\'b'", "01", "-1", "True", "'\\n'", "1_0"])
    root = st.builds(lambda r, k: f"{r}[{k}]", st.sampled_from(["L", "G"] * 4 + ["X"]), key)

    def extend(inner):
        return st.one_of(
            st.builds(lambda s, n: f"{s}.{n}", inner, name),
            st.builds(lambda s, k: f"{s}[{k}]", inner, key),
            st.builds(lambda s, m: f"{s}.{m}()", inner, st.sampled_from(["size", "stride", "dim", "foo"])),
            st.builds(lambda s, h: f"{h}({s})", inner, st.sampled_from(["type", "dict", "list", "len"])),
            st.builds(lambda s, k: f"___odict_getitem({s}, {k})", inner, key),
            st.builds(lambda s, i: f"list(dict.keys({s}))[{i}]", inner, st.sampled_from(["0", "2", "'a'"])),
            st.builds(lambda s, i: f"{s}[list(dict.keys({s}))[{i}]]", inner, st.sampled_from(["0", "3"])),
            st.builds(lambda s, t, i: f"{s}[list(dict.keys({t}))[{i}]]", inner, inner, st.sampled_from(["0"])),
            st.builds(lambda s, i: f"dict.__getitem__({s}, list(dict.keys({s}))[{i}])", inner,
                      st.sampled_from(["0", "1"])),
        )

    source = st.recursive(root, extend, max_leaves=6)
    edit = st.tuples(st.integers(0, 200), st.sampled_from(["", " ", "(", ")", "[", "]", ".", ",", "'", "0", "a"]),
                     st.integers(0, 2))
    return st.builds(lambda text, e: text if e is None else text[:e[0]] + e[1] + text[e[0] + e[2]:],
                     source, st.none() | st.none() | edit)


@settings(max_examples=500, deadline=None)
@given(_spellings())
def test_the_source_reader_reads_as_ast_does_or_leaves_the_text_to_it(text):
    """`parsed_source` reads Dynamo's spellings without `ast`: whatever the reader reads, `ast` reads the same; what
    `ast` refuses, the reader leaves to it."""
    read = guard_spec._Reader(text).whole()
    if read is None:
        return
    assert guard_spec._parse_with_ast(text) == read


def _dynamo_spellings():
    """Sources as Dynamo writes them: only names, keys and forms it uses, undamaged."""
    name = st.sampled_from(["self", "x", "_modules", "weight", "__code__", "size", "a1", "__dict__", "match"])
    key = st.sampled_from(["'a'", "'0'", "'a.b'", "'a]b'", "'é'", "0", "1", "10"])
    root = st.builds(lambda r, k: f"{r}[{k}]", st.sampled_from(["L", "G"]), st.sampled_from(["'self'", "'x'", "'é'"]))

    def extend(inner):
        return st.one_of(
            st.builds(lambda s, n: f"{s}.{n}", inner, name),
            st.builds(lambda s, k: f"{s}[{k}]", inner, key),
            st.builds(lambda s, m: f"{s}.{m}()", inner, st.sampled_from(["size", "stride", "dim"])),
            st.builds(lambda s, h: f"{h}({s})", inner, st.sampled_from(["type", "dict"])),
            st.builds(lambda s, k: f"___odict_getitem({s}, {k})", inner, key),
            st.builds(lambda s, i: f"list(dict.keys({s}))[{i}]", inner, st.sampled_from(["0", "2"])),
            st.builds(lambda s, i: f"{s}[list(dict.keys({s}))[{i}]]", inner, st.sampled_from(["0", "3"])),
            st.builds(lambda s, i: f"dict.__getitem__({s}, list(dict.keys({s}))[{i}])", inner,
                      st.sampled_from(["0", "1"])),
        )

    return st.recursive(root, extend, max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(_dynamo_spellings())
def test_the_source_reader_reads_every_spelling_dynamo_writes(text):
    """Not only agreement: every form Dynamo writes is read by the reader (not left to `ast`), as `ast` reads it."""
    read = guard_spec._Reader(text).whole()
    assert read is not None and read == guard_spec._parse_with_ast(text)


@pytest.mark.parametrize("source", [
    "dict(type(L['self']._modules['h']).__dict__)['forward'].__closure__[0].cell_contents.__defaults__[1]",
    "list(dict.keys(G['m']._CAN_RECORD_REGISTRY[list(dict.keys(G['m']._CAN_RECORD_REGISTRY))[1]]))[0]",
    "dict.__getitem__(G['m']._CAN_RECORD_REGISTRY, list(dict.keys(G['m']._CAN_RECORD_REGISTRY))[1])['h'].forward",
    "L['self']._modules['layers']._modules[list(dict.keys(L['self']._modules['layers']._modules))[0]]._forward_hooks",
    "type(G['m'].ALL_ATTENTION_FUNCTIONS).__mro__[1].get.__code__", "___odict_getitem(L['self']._modules, 'fc')",
    "L['x'].stride()[0]",
])
def test_the_reader_reads_the_zoo_models_sources(source):
    """Spellings from the guards of transformers models (GPT-2, Llama): the reader reads each, as `ast` does."""
    read = guard_spec._Reader(source).whole()
    assert read is not None and read == guard_spec._parse_with_ast(source)


@pytest.mark.parametrize("text", [
    "type(" * 250 + "L['a']" + ")" * 250, "type(" * 600 + "L['a']" + ")" * 600, "type(L['a'])[" + "9" * 5000 + "]",
    "type(L['\ud800'])", "L['\ud800']", "L['a\x00']",
])
def test_sources_past_what_ast_reads_are_refused_as_guards(text):
    """Nesting past ast's limit, an integer past Python's digit limit, a lone surrogate, a NUL: `UnknownGuard` (the
    method is not cached, saying why), never another exception."""
    assert guard_spec._Reader(text).whole() is None
    with pytest.raises(guard_spec.UnknownGuard):
        guard_spec.parse_source(text)


def _templates():
    """Guard expressions as `parse_expression` leaves them: comparisons, arithmetic, `and`/`or`/`not`, `is`, the
    functions a template may call, names `_s{i}`, numbers (exponents too) and, sometimes, a string constant."""
    leaf = st.one_of(st.sampled_from(["_s0", "_s1", "_s2", "_s10", "math.inf"]), st.integers(-3, 10**6).map(str),
                     st.sampled_from(["1e+20", "2.5", "1e-05", "None", "True", "'s0'", "'_s1 and max'"]))

    def extend(inner):
        return st.one_of(
            st.builds(lambda a, op, b: f"({a}) {op} ({b})", inner,
                      st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "is", "is not", "+", "-", "*", "//", "%",
                                       "**", "/", "and", "or"]), inner),
            st.builds(lambda op, a: f"{op}({a})", st.sampled_from(["not ", "-"]), inner),
            st.builds(lambda f, a, b: f"{f}({a}, {b})", st.sampled_from(["max", "min"]), inner, inner),
            st.builds(lambda f, a: f"{f}({a})", st.sampled_from(["abs", "math.isnan", "math.ceil", "math.floor",
                                                                  "round", "torch.sym_float"]), inner),
        )

    return st.recursive(leaf, extend, max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(_templates(), st.lists(st.sampled_from(["n", "_tq_s3", "x.size()[0]", "_tq_list(_tq_dict.keys(y))[1]",
                                               "_tq_cells['c'].cell_contents", "a + b"]), min_size=4, max_size=4))
def test_a_template_is_rewritten_as_ast_rewrites_it(text: str, reads: list[str]) -> None:
    """CC-21: the name-by-name rewrite of a template (no string constant in it) gives the expression `ast`'s
    rewrite gives, node for node, a read that is not a name (`a + b`) kept whole; a template with a string constant
    is rewritten by `ast` alone."""
    import ast

    try:
        template, _ = guard_expressions.parse_expression(text)
    except guard_spec.UnknownGuard:
        return
    codes = dict(zip(["_s0", "_s1", "_s2", "_s10"], reads))
    names = {name: f"_tq_b{n}" for n, name in enumerate(sorted(guard_expressions.FUNCTIONS))}
    if any(n not in codes for n in ("_s0", "_s1", "_s2", "_s10") if n in template):
        return

    class Replace(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in codes:
                return ast.parse(codes[node.id], mode="eval").body
            return ast.Name(id=names[node.id], ctx=ast.Load())

    expected = ast.dump(Replace().visit(ast.parse(template, mode="eval")))
    assert ast.dump(ast.parse(guard_expressions.substitute(template, codes, names), mode="eval")) == expected


def _simple_spellings():
    """Texts near the simple templates: two operands around a comparison (names, numbers in many spellings, some
    that `ast` reads otherwise or refuses), `not isnan(...)`, with other spacing now and then."""
    operand = st.one_of(
        st.sampled_from(["_s0", "_s1", "_s12", "_s01", "_s", "s0", "_s1e5", "L['x']"]),
        st.integers(0, 10**20).map(str),
        st.sampled_from(["00", "01", "0.0", "1.", ".5", "1e5", "1e+20", "1E5", "1e-05", "1e-5", "2.50", "2.5",
                         "1e309", "0x10", "1_000", "-1", "1.0e-05", "9" * 30, "1" + "0" * 4400]),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
    )
    space = st.sampled_from([" ", " ", " ", "  ", ""])
    comparison = st.builds(lambda a, s1, op, s2, b: f"{a}{s1}{op}{s2}{b}", operand, space,
                           st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "is", "is not", "in", "=", "+"]),
                           space, operand)
    return st.one_of(comparison, st.builds(lambda a: f"not isnan({a})", operand),
                     st.builds(lambda a: f"not  isnan({a})", operand))


@settings(max_examples=500, deadline=None)
@given(_simple_spellings())
def test_a_simple_template_is_taken_as_ast_would_give_it_back(text: str) -> None:
    """What `_simple_template` takes without `ast` is exactly what `ast`'s path gives back unchanged, with no
    source: the same template, not another spelling, and nothing `ast` refuses."""
    if not guard_expressions._simple_template(text):
        return
    guard_expressions._parsed_expression.cache_clear()
    original = guard_expressions._simple_template
    try:
        guard_expressions._simple_template = lambda _: False  # ast's path alone
        assert guard_expressions._parsed_expression(text) == (text, ())
    finally:
        guard_expressions._simple_template = original
        guard_expressions._parsed_expression.cache_clear()


@pytest.mark.parametrize("text", ["_s0 == _s1", "_s0 is _s1", "_s0 is not _s1", "2 <= _s0", "_s0 == 1e-05",
                                  "_s0 == 0.1", "_s0 != 0", "not isnan(_s3)", "_s10 > 123"])
def test_the_zoo_models_templates_are_simple(text: str) -> None:
    """The templates of GPT-2's and Llama's 37 and 28 expression guards are read without `ast`."""
    assert guard_expressions._simple_template(text)


def test_an_expression_binds_the_functions_ast_reads_in_it() -> None:
    """An expression's check binds the functions of its template as `ast` reads it: a name spelled with other
    letters that Python reads as the same name (full-width `ｉｓｎａｎ` is `isnan`) is bound too, so the check is
    written and holds as Dynamo's own text would."""
    assert guard_expressions.functions_in("not ｉｓｎａｎ(_s0)") == ("isnan",)
    assert guard_expressions.functions_in("_s0 == 'max'") == ("max",)  # a string constant binds one more, harmless
    assert guard_expressions.functions_in("_s0 <= _s1") == ()


def test_the_shape_printers_functions_are_kept():
    """What Dynamo's shape-guard printer writes for rounding and true division (MobileViT: `math.ceil(s / 2)`),
    `torch.sym_float` and `math.inf`, kept under short names that the check binds to the same functions; evaluated
    as Python evaluates Dynamo's own text."""
    import math

    text = "(2*math.ceil((1 + (((-1) + L['x'].size()[2]) // 8)) / 2)) == (1 + (((-1) + L['x'].size()[2]) // 8))"
    template, sources = guard_expressions.parse_expression(text)
    assert (template, sources) == ("2 * ceil((1 + (-1 + _s0) // 8) / 2) == 1 + (-1 + _s0) // 8", ["L['x'].size()[2]"])
    for size in range(1, 80):
        expected = eval(text, {"math": math, "L": {"x": torch.empty(1, 1, size)}})  # noqa: S307 - the test's own text
        code = guard_expressions.substitute(template, {"_s0": str(size)}, {"ceil": "ceil"})
        assert eval(code, {"ceil": guard_expressions.FUNCTIONS["ceil"]}) == expected  # noqa: S307
    assert guard_expressions.parse_expression("math.floor(torch.sym_float(L['n']) / 3) < math.inf") == (
        "floor(sym_float(_s0) / 3) < inf", ["L['n']"])
    assert guard_expressions.parse_expression("round(L['n'] / 2) + math.trunc(L['m']) == 3")[0] == (
        "round(_s0 / 2) + trunc(_s1) == 3")


def test_a_class_attribute_is_read_from_the_class_dict_without_a_copy():
    """CC-21: Dynamo reads a class attribute as `dict(C.__dict__)['k']`; the generated check reads `C.__dict__['k']`
    from the class's read-only view (no copy of the class dict on every call), and a copy where `__dict__` is not
    such a view, with the same value either way, and a missing key a failed read."""
    import types

    hoisted, reads = {}, []
    code = guard_check._source_code("dict(type(L['self']).__dict__)['forward']", {"self"}, hoisted, reads)
    assert not any("_tq_dict(" in line and "_tq_proxy" not in line for line in reads), reads

    class Plain:
        def forward(self):
            return 1

    class Odd:
        __dict__ = {"forward": "instance dict"}  # type: ignore[assignment]  # an object whose __dict__ is a dict

    namespace = {"_tq_type": type, "_tq_dict": dict, "_tq_proxy": types.MappingProxyType}
    function = "def read(self):\n" + "".join(f"    {line}\n" for line in reads) + f"    return {code}\n"
    exec(function, namespace)  # noqa: S102 - the test's own generated code
    assert namespace["read"](Plain()) is Plain.__dict__["forward"]
    hoisted, reads = {}, []
    code = guard_check._source_code("dict(L['o'].__dict__)['forward']", {"o"}, hoisted, reads)
    exec("def read(o):\n" + "".join(f"    {line}\n" for line in reads) + f"    return {code}\n", namespace)  # noqa: S102
    assert namespace["read"](Odd()) == "instance dict"
    with pytest.raises(KeyError):
        namespace["read"](types.SimpleNamespace())
