"""The committed GE IR descriptors (EX-7) are what protoc builds from their ge_ir.proto, and are what the GE executor
(whose classes the reference's exporter writes with) and the suite load their classes from."""

from __future__ import annotations

import difflib
from importlib import resources

import pytest
from google.protobuf import descriptor_pb2, text_format

from ge_executor import ge_ir
from tests.ge_ir_descriptors import REGENERATE, ROOT, SCHEMAS, compile_descriptor, descriptor_path
from torchair_conformance import ge_ir as suite_ge_ir


def _files(data: bytes) -> descriptor_pb2.FileDescriptorSet:
    return descriptor_pb2.FileDescriptorSet.FromString(data)


@pytest.mark.parametrize("proto", SCHEMAS, ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_descriptor_is_what_protoc_builds(proto):
    """EX-7: ge_ir.desc equals protoc's FileDescriptorSet of ge_ir.proto.

    Compared as parsed messages, not bytes: protoc 3.21 and 35 write these bytes identically today, but the byte
    order of a serialized message is no promise across protoc releases, while the descriptor it encodes is."""
    committed_path = descriptor_path(proto)
    built, committed = _files(compile_descriptor(proto)), _files(committed_path.read_bytes())
    diff = "\n".join(difflib.unified_diff(text_format.MessageToString(committed).splitlines(),
                                          text_format.MessageToString(built).splitlines(),
                                          "committed", "protoc", lineterm=""))
    assert committed == built, (
        f"{committed_path.relative_to(ROOT)} is not what protoc builds from {proto.relative_to(ROOT)}: regenerate "
        f"it from the repository root with `{REGENERATE}`\n{diff}"
    )


@pytest.mark.parametrize("module", [ge_ir, suite_ge_ir], ids=["ge_executor", "torchair_conformance"])
def test_classes_come_from_the_packaged_descriptor(module):
    """EX-7: the classes' file descriptor is the one shipped beside the module (ge_ir.desc as package data)."""
    shipped = resources.files(module.__package__).joinpath(module.DESCRIPTOR_FILE).read_bytes()
    (expected,) = _files(shipped).file
    loaded = descriptor_pb2.FileDescriptorProto()
    module.ModelDef.DESCRIPTOR.file.CopyToProto(loaded)
    assert loaded == expected, f"{module.__name__} loaded\n{loaded}\nbut ships\n{expected}"


@pytest.mark.parametrize("module", [ge_ir, suite_ge_ir], ids=["ge_executor", "torchair_conformance"])
def test_a_missing_descriptor_names_the_file_and_the_fix(module, monkeypatch):
    """EX-7: without its descriptor a reader fails naming the file and how to get it back."""
    monkeypatch.setattr(module, "DESCRIPTOR_FILE", "absent.desc")
    with pytest.raises(FileNotFoundError, match=r"absent\.desc is missing.*python -m tests\.ge_ir_descriptors"):
        module._pool()
