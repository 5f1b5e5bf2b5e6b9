"""Tensor constants of a compiled graph, written as data (SPEC CC-14; issue 29: served prompts).

A graph that builds a tensor from Python numbers (`torch.tensor([...])`, as `transformers`' mask and cache code does
in a prompt) holds it as an attribute of AOTAutograd's graph (a `get_attr` node). The record keeps each one as raw
bytes of its storage with its dtype, size, stride, offset and device, so that the warm graph reads the very tensor
the cold graph read; nothing is pickled. Only plain strided tensors are kept, up to `MAX_BYTES` in all; anything
else leaves the graph uncacheable, saying why.
"""
from __future__ import annotations

import base64
import ctypes
from collections.abc import Mapping
from typing import Any

import torch

from torchair_ref.errors import UncacheableError

#: the most constant bytes one graph's record keeps (larger constants are weights, which belong to the module)
MAX_BYTES = 1 << 20


def encode(constants: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each constant as data; `UncacheableError` naming the first one that cannot be kept."""
    encoded: dict[str, dict[str, Any]] = {}
    total = 0
    for name in sorted(constants):
        tensor = constants[name]
        if (type(tensor) is not torch.Tensor or tensor.layout is not torch.strided or tensor.is_quantized
                or tensor.is_conj() or tensor.is_neg()):
            raise UncacheableError(f"the graph holds the constant {name}, a {type(tensor).__name__} that is not a "
                                   "plain strided tensor")
        storage = tensor.untyped_storage()
        total += storage.nbytes()
        if total > MAX_BYTES:
            raise UncacheableError(f"the graph holds tensor constants of more than {MAX_BYTES} bytes (at {name})")
        host = storage.cpu() if tensor.device.type != "cpu" else storage  # type: ignore[no-untyped-call]
        data = ctypes.string_at(host.data_ptr(), host.nbytes()) if host.nbytes() else b""
        encoded[name] = {
            "dtype": str(tensor.dtype).removeprefix("torch."), "size": list(tensor.shape),
            "stride": list(tensor.stride()), "offset": tensor.storage_offset(), "device": str(tensor.device),
            "storage": base64.b64encode(data).decode("ascii"),
        }
    return encoded


def decode(encoded: Mapping[str, Mapping[str, Any]]) -> dict[str, torch.Tensor]:
    """The constants `encode` wrote, each on its device with its layout; `ValueError` for a malformed entry."""
    constants = {}
    for name, entry in encoded.items():
        dtype = getattr(torch, str(entry["dtype"]), None)
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"tensor constant {name}: unknown dtype {entry['dtype']!r}")
        data = bytearray(base64.b64decode(str(entry["storage"]), validate=True))
        raw = torch.frombuffer(data, dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)
        size, stride, offset = [int(s) for s in entry["size"]], [int(s) for s in entry["stride"]], int(entry["offset"])
        if not _fits(size, stride, offset, dtype.itemsize, len(data)):
            raise ValueError(f"tensor constant {name}: size {size}, stride {stride} and offset {offset} do not fit "
                             f"its {len(data)} bytes")
        raw = raw.to(torch.device(str(entry["device"])))
        tensor = torch.empty(0, dtype=dtype, device=raw.device)
        tensor.set_(raw.untyped_storage(), offset, size, stride)
        constants[str(name)] = tensor
    return constants


def _fits(size: list[int], stride: list[int], offset: int, itemsize: int, nbytes: int) -> bool:
    """Whether every element of the view lies inside the storage (pure): a file cannot make a read outside it."""
    if len(size) != len(stride) or offset < 0 or any(n < 0 for n in size) or any(s < 0 for s in stride):
        return False
    if 0 in size:
        return offset * itemsize <= nbytes
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    return (last + 1) * itemsize <= nbytes
