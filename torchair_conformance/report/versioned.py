"""Versioned JSON documents: what the history's records (`history`) and the suite's results (`results`) share.

Each document names its `format`, an integer that changes whenever a reader of the old format would misread the new
one. A reader knows one format and refuses any other with a message naming the format found, the one it knows and
what to do; fields it does not know are ignored (a newer writer may add optional fields without a new format).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any


def check_format(data: Mapping[str, Any], known: int, *, what: str, fix: str, absent: int | None = None) -> None:
    """Raise ValueError unless `data["format"]` is `known`; `absent` is the format of a document without the field
    (None: the field is required). The message names `what` the document is, both formats and the `fix`."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{what} must be a JSON object, found {type(data).__name__}: {fix}")
    found = data.get("format", absent)
    if found != known or isinstance(found, bool):
        shown = "no 'format' field" if "format" not in data else f"format {data['format']!r}"
        raise ValueError(f"{what} of {shown}; this reader knows format {known}: {fix}")


def known_fields(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of `data` that name a field of the dataclass `cls` (the others are a newer writer's extras)."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}
