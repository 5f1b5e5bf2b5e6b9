"""The reference's exporter in one process: its graph (GE op counts, attrs, Shape/Gather/Pack for symbolic dims, Data
names), its dump and module-stack text, its own argument errors. The contract (EX-1..3, EX-7..10) is checked by
torchair_conformance/test_export_layout.py."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from ge_executor import ge_ir
from tests.reference.export import checks, models
from torchair_ref.export import dynamo_export


def test_export_path_may_be_path_like(tmp_path):
    """The reference also accepts an os.PathLike export_path (upstream annotates it as a str)."""
    dynamo_export(torch.randn(2, 4), model=models.TwoLayer(), export_path=tmp_path / "p", export_name="n")
    assert checks.files_under(tmp_path) == {"p/n.air", "p/dynamo.pbtxt", "p/options.json"}, checks.files_under(tmp_path)


def test_main_graph_ops(tmp_path):
    """EX-7: one Data per user input, a Const per weight, GE ops as upstream's converters choose them (addmm:
    Transpose of the weight, MatMulV2, Mul by alpha, Add of the bias), NetOutput fed by the result."""
    model = models.TwoLayer()
    dynamo_export(torch.randn(2, 4), model=model, export_path=str(tmp_path), config=checks.config())
    graph = checks.load_air(tmp_path / "export.air").graph[0]
    counts = checks.op_counts(graph)
    # Const: 5 weights, and per linear layer the Transpose's perm and the alpha of the Mul.
    expected = {"Data": 1, "Const": 9, "Transpose": 2, "MatMulV2": 2, "Mul": 3, "Add": 2, "Relu": 1, "NetOutput": 1}
    assert dict(counts) == expected, f"op counts {dict(counts)}, expected {expected}"
    net_output = checks.ops_of(graph, "NetOutput")[0]
    assert list(net_output.input) == ["Mul_2:0"], list(net_output.input)
    matmul = checks.ops_of(graph, "MatMulV2")[0]
    assert list(matmul.input) == ["args_0:0", "Transpose:0", "", ""], list(matmul.input)  # bias, offset_w omitted
    assert [(k, matmul.attr[k].WhichOneof("value")) for k in sorted(matmul.attr)] == [
        ("offset_x", "i"), ("transpose_x1", "b"), ("transpose_x2", "b")], matmul.attr
    names = {op.name for op in graph.op}
    for op in graph.op:
        for edge in filter(None, op.input):  # "" is an omitted optional input
            src, index = edge.rsplit(":", 1)
            assert src in names and int(index) >= 0, f"{op.name}: input {edge!r} names no op output"
    ids = [op.id for op in graph.op]
    assert ids == list(range(len(ids))), ids
    data = checks.ops_of(graph, "Data")[0]
    assert (data.name, data.attr["index"].i, list(data.output_desc[0].shape.dim)) == ("args_0", 0, [2, 4]), data


@pytest.mark.parametrize("export_name, air", [("dir/name/", "name.air"), ("plain", "plain.air")])
def test_only_last_component_of_export_name(tmp_path, export_name, air):
    """The reference's reading of EX-1: a trailing "/" is ignored (upstream's os.path.split would leave an empty
    name), and the ModelDef is named after the file."""
    out = tmp_path / "deep" / "out"
    dynamo_export(torch.randn(2, 4), model=models.TwoLayer(), export_path=str(out), export_name=export_name,
                  config=checks.config())  # fmt: skip
    expected = {f"deep/out/{air}", "deep/out/dynamo.pbtxt", "deep/out/options.json"}
    assert checks.files_under(tmp_path) == expected, checks.files_under(tmp_path)
    assert checks.load_air(out / air).name == air.removesuffix(".air")


@pytest.mark.parametrize("export_name", ["..", "", "/", "."])
def test_export_name_without_usable_component(tmp_path, export_name):
    """EX-1: an export_name with no file name is refused with the argument named."""
    with pytest.raises(ValueError, match="export_name"):
        dynamo_export(torch.randn(2, 4), model=models.TwoLayer(), export_path=str(tmp_path), export_name=export_name)
    assert checks.files_under(tmp_path) == set()


def test_model_must_be_a_module(tmp_path):
    """EX-1: a model that is not an nn.Module is a TypeError naming model."""
    with pytest.raises(TypeError, match="model must be a torch.nn.Module, got function"):
        dynamo_export(torch.randn(2), model=lambda x: x + 1, export_path=str(tmp_path))


def test_export_path_that_is_a_file(tmp_path):
    """EX-3: an export_path that is an existing file is refused with the path and the fix."""
    target = tmp_path / "file"
    target.write_text("keep")
    with pytest.raises(NotADirectoryError, match=r"export_path .*file.* is an existing file; pass a directory"):
        dynamo_export(torch.randn(2, 4), model=models.TwoLayer(), export_path=str(target))
    assert target.read_text() == "keep"


def test_positional_and_keyword_inputs(tmp_path):
    """EX-1/EX-7: every positional and keyword example input is a Data op, in (args, kwargs) order."""
    x, y, mask = torch.randn(2, 4), torch.randn(2, 4, dtype=torch.float64), torch.ones(2, 4, dtype=torch.bool)
    dynamo_export(x, y, model=models.TwoInputs(), export_path=str(tmp_path), mask=mask)
    graph = checks.load_air(tmp_path / "export.air").graph[0]
    found = [(op.name, op.attr["index"].i, ge_ir.DataType.Name(op.output_desc[0].dtype))
             for op in checks.ops_of(graph, "Data")]  # fmt: skip
    expected = [("args_0", 0, "DT_FLOAT"), ("args_1", 1, "DT_DOUBLE"), ("kwargs_mask", 2, "DT_BOOL")]
    assert found == expected, f"Data ops {found}, expected {expected}"


class Arguments(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(4, eps=0.25)

    def forward(self, x):
        return self.norm(x).to(torch.float16), torch.split(x, 2, dim=-1)


def _const_value(graph, edge):
    """The tensor a Const op feeding ``edge`` holds, as (dtype name, dims, values)."""
    op = next(op for op in graph.op if op.name == edge.rsplit(":", 1)[0])
    assert op.type == "Const", op
    t = op.attr["value"].t
    dtype = {"DT_INT64": torch.int64, "DT_INT32": torch.int32}[ge_ir.DataType.Name(t.desc.dtype)]
    values = torch.frombuffer(bytearray(t.data), dtype=dtype).tolist() if t.data else []
    return ge_ir.DataType.Name(t.desc.dtype), list(t.desc.shape.dim), values


def test_non_tensor_arguments_become_ge_attrs_and_operands(tmp_path):
    """EX-7: an ATen call's numbers become the GE op's attrs or index operands as upstream's converters write them:
    LayerNormV4's epsilon and normalized_shape, Cast's dst_type (GE's C++ type number), SplitV's sizes and axis."""
    dynamo_export(torch.randn(3, 4), model=Arguments(), export_path=str(tmp_path))
    graph = checks.load_air(tmp_path / "export.air").graph[0]
    by_type = {op.type: op for op in graph.op}
    norm = by_type["LayerNormV4"]
    assert norm.attr["epsilon"].f == 0.25 and len(norm.output_desc) == 3, norm
    assert _const_value(graph, norm.input[1]) == ("DT_INT64", [1], [4]), norm.input
    cast = by_type["Cast"]
    assert (cast.attr["dst_type"].i, list(cast.input)) == (1, [f"{norm.name}:0"]), cast  # DT_FLOAT16 is 1 in C++
    split = by_type["SplitV"]
    assert (split.attr["num_split"].i, len(split.output_desc)) == (2, 2), split
    assert _const_value(graph, split.input[1]) == ("DT_INT64", [2], [2, -1]), split.input
    assert _const_value(graph, split.input[2]) == ("DT_INT32", [], [-1]), split.input
    assert [d.name for d in split.input_desc] == ["x", "size_splits", "split_dim"], split.input_desc
    net_output = checks.ops_of(graph, "NetOutput")[0]
    assert list(net_output.input) == [f"{cast.name}:0", f"{split.name}:0", f"{split.name}:1"], net_output.input


class Unlowered(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Sequential(nn.Linear(4, 4), nn.LeakyReLU(0.25))

    def forward(self, x):
        return self.inner(x)


def test_an_operator_without_lowering_raises_naming_it_and_where(tmp_path):
    """EX-7: an operator the reference cannot lower raises at export, naming the operator, the module path and the
    source line; nothing is written (never an op of an invented type)."""
    with pytest.raises(NotImplementedError) as info:
        dynamo_export(torch.randn(3, 4), model=Unlowered(), export_path=str(tmp_path / "out"))
    text = str(info.value)
    for part in ("aten.leaky_relu.default", "inner.1: torch.nn.modules.activation.LeakyReLU",
                 "test_export_layout.py"):
        assert part in text, f"{part!r} not in {text!r}"
    assert not (tmp_path / "out").exists()


class Reshapes(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)

    def forward(self, x):
        return self.fc(x).view(x.shape[0], 2, 3), x.shape[0]


def test_dynamic_exports_symbolic_dims(tmp_path):
    """EX-9/EX-7: dynamic=True gives -1 for symbolic dims, sizes read from inputs, one Data per user input."""
    dynamo_export(torch.randn(5, 4), model=Reshapes(), export_path=str(tmp_path), dynamic=True)
    graph = checks.load_air(tmp_path / "export.air").graph[0]
    data = checks.ops_of(graph, "Data")
    assert [list(op.output_desc[0].shape.dim) for op in data] == [[-1, 4]], data
    view = checks.ops_of(graph, "Reshape")[-1]
    assert list(view.output_desc[0].shape.dim) == [-1, 2, 3], view
    packs = checks.ops_of(graph, "Pack")
    pack = next(p for p in packs if f"{p.name}:0" == view.input[1])
    assert (pack.attr["N"].i, pack.attr["axis"].i) == (3, 0), pack
    # The symbolic size: Gather(Shape(args_0), 0); the other two entries are 0-d int64 Consts.
    shapes, gathers = checks.ops_of(graph, "Shape"), checks.ops_of(graph, "Gather")
    assert [(list(op.input), op.attr["dtype"].i) for op in shapes] == [(["args_0:0"], 9)], shapes  # 9: DT_INT64
    assert [op.input[0] for op in gathers] == [f"{shapes[0].name}:0"], gathers
    assert _const_value(graph, gathers[0].input[1]) == ("DT_INT64", [], [0]), gathers[0].input
    assert pack.input[0] == f"{gathers[0].name}:0", pack.input
    assert [_const_value(graph, e) for e in pack.input[1:]] == [("DT_INT64", [], [2]), ("DT_INT64", [], [3])]
    assert f"{gathers[0].name}:0" in checks.ops_of(graph, "NetOutput")[0].input


def test_nn_module_stack_text(tmp_path):
    """The reference's nn_module_stack text (EX-9): the root class, then one "name: class" line per module."""
    dynamo_export(torch.randn(2, 4), model=models.TwoLayer(), export_path=str(tmp_path),
                  config=checks.config(module_stack=True))  # fmt: skip
    graph = checks.load_air(tmp_path / "export.air").graph[0]
    stacks = {op.name: op.attr["nn_module_stack"].s.decode() for op in graph.op if "nn_module_stack" in op.attr}
    root = f"{models.TwoLayer.__module__}.TwoLayer"
    assert stacks["MatMulV2"] == f"{root}\nfc1: torch.nn.modules.linear.Linear", stacks
    assert stacks["MatMulV2_1"] == f"{root}\nfc2: torch.nn.modules.linear.Linear", stacks
    assert stacks["Mul_2"] == root, stacks
    assert not {"args_0", "NetOutput"} & set(stacks), stacks


def test_pbtxt_is_the_same_graph(tmp_path):
    """EX-8: dynamo.pbtxt has one node block per op with the same names, types and inputs, dtypes by name."""
    dynamo_export(torch.randn(2, 4, dtype=torch.bfloat16), model=models.TwoLayer(torch.bfloat16),
                  export_path=str(tmp_path), config=checks.config(module_stack=True))  # fmt: skip
    graph = checks.load_air(tmp_path / "export.air").graph[0]
    text = (tmp_path / "dynamo.pbtxt").read_text()
    nodes = checks.pbtxt_nodes(text)
    found = [(n["name"], n["op"], n["inputs"]) for n in nodes]
    expected = [(op.name, op.type, list(op.input)) for op in graph.op]
    assert found == expected, f"pbtxt nodes {found}\n.air ops {expected}"
    counts = (text.count('op: "Data"'), text.count('op: "Const"'), text.count("dtype: DT_BF16"))
    bf16 = ge_ir.DataType.Value("DT_BF16")
    consts = [op.attr["value"].t.desc for op in checks.ops_of(graph, "Const")]
    # every bfloat16 output, and each bfloat16 Const's value desc (5 weights; the perms are int64)
    bf16_descs = sum(d.dtype == bf16 for op in graph.op for d in op.output_desc) + sum(d.dtype == bf16 for d in consts)
    assert counts == (1, 7, bf16_descs), f"(Data, Const, DT_BF16) counts {counts}, expected {(1, 7, bf16_descs)}"
    assert 'key: "nn_module_stack"' in text and "dt:" not in text
    const = next(n for n in nodes if n["op"] == "Const")
    assert "# data: " in const["text"] and "bytes, in the .air file" in const["text"], const["text"]


class ReturnsNothing(nn.Module):
    def forward(self, x):
        return None


def test_model_without_tensor_work(tmp_path):
    """EX-7: a model that computes nothing has no graph to export: a ValueError that says so."""
    with pytest.raises(ValueError, match="no graph to export"):
        dynamo_export(torch.randn(2), model=ReturnsNothing(), export_path=str(tmp_path))


class Scales(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, n, *, flag):
        return self.fc(x) * n if flag else x


def test_dynamic_int_input_is_a_scalar_data(tmp_path):
    """EX-9/EX-7: with dynamic=True an int argument becomes a symbolic input: an int64 scalar Data op."""
    dynamo_export(torch.randn(3, 4), 5, model=Scales(), export_path=str(tmp_path), dynamic=True, flag=True)
    graph = checks.load_air(tmp_path / "export.air").graph[0]
    found = [(op.name, op.attr["index"].i, ge_ir.DataType.Name(op.output_desc[0].dtype),
              list(op.output_desc[0].shape.dim)) for op in checks.ops_of(graph, "Data")]  # fmt: skip
    assert found == [("args_0", 0, "DT_FLOAT", [-1, 4]), ("args_1", 1, "DT_INT64", [])], found
    mul = checks.ops_of(graph, "Mul")[-1]
    cast = next(op for op in graph.op if f"{op.name}:0" == mul.input[1])
    assert (cast.type, list(cast.input), cast.attr["dst_type"].i) == ("Cast", ["args_1:0"], 0), cast  # to float


@pytest.mark.parametrize("kwargs, message", [
    ({"export_path": 123}, "export_path must be a str or os.PathLike, got int"),
    ({"export_name": b"net"}, "export_name must be a str, got bytes"),
    ({"dynamic": "yes"}, "dynamic must be a bool, got str"),
])  # fmt: skip
def test_argument_types(tmp_path, kwargs, message):
    """EX-1: arguments of the wrong type are TypeErrors naming the argument."""
    kwargs = {"export_path": str(tmp_path / "out"), **kwargs}
    with pytest.raises(TypeError, match=message):
        dynamo_export(torch.randn(2, 4), model=models.TwoLayer(), **kwargs)
    assert not (tmp_path / "out").exists()
