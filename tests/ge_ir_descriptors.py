"""The committed GE IR descriptors (EX-7): each ``ge_ir.proto`` compiled by protoc into ``ge_ir.desc`` beside it.

The GE executor (``impl/ge_executor``, whose classes the reference's exporter writes with) and the suite
(``torchair_conformance``) each build their message classes from their own ``ge_ir.desc``, a serialized
``FileDescriptorSet``, so neither needs protoc at install or import time.
protoc comes from the ``grpcio-tools`` wheel (the ``test`` extra). After editing a ``ge_ir.proto``, regenerate::

    python -m tests.ge_ir_descriptors

``tests/test_ge_ir_descriptors.py`` fails while a committed descriptor differs from what protoc builds.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = (ROOT / "impl" / "ge_executor" / "ge_ir.proto", ROOT / "torchair_conformance" / "ge_ir.proto")
REGENERATE = "python -m tests.ge_ir_descriptors"


def descriptor_path(proto: Path) -> Path:
    """EX-7: where the descriptor compiled from ``proto`` is committed (and shipped as package data)."""
    return proto.with_suffix(".desc")


def compile_descriptor(proto: Path) -> bytes:
    """EX-7: the ``FileDescriptorSet`` protoc builds from ``proto``, as bytes.

    ``-I`` is the file's own folder so that the descriptor names it ``ge_ir.proto`` wherever the checkout lies; no
    source info, so comments in the ``.proto`` do not change the descriptor."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ge_ir.desc"
        args = ["protoc", f"-I{proto.parent}", "--include_imports", f"--descriptor_set_out={out}", str(proto)]
        code = protoc.main(args)
        if code != 0:
            raise RuntimeError(f"protoc exited {code} on {proto} (its message is on stderr): fix the .proto")
        return out.read_bytes()


def main() -> None:
    """Rewrite every committed descriptor from its ``.proto``."""
    for proto in SCHEMAS:
        target = descriptor_path(proto)
        target.write_bytes(compile_descriptor(proto))
        print(f"wrote {target.relative_to(ROOT)} from {proto.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
