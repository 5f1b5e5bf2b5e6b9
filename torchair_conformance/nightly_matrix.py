"""The nightly workflow's matrix: the legs checked and expanded for GitHub, each with its torch pin (SPEC BE-4).

    python3 -m torchair_conformance.nightly_matrix [--legs JSON] [--a2-runner JSON] [--a3-runner JSON] \
        >> "$GITHUB_OUTPUT"

Standard library only (the workflow runs it before anything is installed). Reads the legs from `--legs` (a JSON list,
the workflow_dispatch input) or `.github/nightly-legs.json`. A leg is `{soc, image, cann, torch_npu[, variant]}`:

- `image` is any container image reference: a registry with a port, a path, a tag and/or a digest
  (`registry.internal.example:5000/mirror/ascend/cann:8.2.rc1-910b-ubuntu22.04-py3.11`, `...@sha256:<64 hex>`, a
  team's own image with torch-npu baked in). Only what its tag names is checked against the leg: a tag that starts
  with a CANN version must name the leg's, a tag that names a chip (`910b`: A2, `a3`: A3, ...) the leg's SoC;
- `cann`, `soc` and `torch_npu` are the leg's own fields; `constraints/torch-npu.json` must pair the CANN release
  with the torch-npu release (Ascend's release notes, cited there) and give torch-npu's torch pin;
- a leg may repeat (SoC, CANN, torch-npu) with another image (another OS or Python): its id then carries its
  `variant`, taken from the leg or from the rest of an Ascend-style tag (`ubuntu22.04-py3.11`).

Prints `include=<JSON>` (the matrix: one job per leg with `soc`, `image`, `cann`, `torch_npu`, `torch`, `variant`,
`runner`, `leg` (its id), `pip_cache` (the key of its pip cache: image and pins)), `legs=<JSON>` (the night's
expected legs, for `report --expected-legs`) and `since=<UTC time>` (when tonight began).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torchair_conformance.errors import ConformanceError
from torchair_conformance.report import cann

ROOT = Path(__file__).resolve().parents[1]
LEGS = ROOT / ".github" / "nightly-legs.json"
TORCH_TABLE = ROOT / "constraints" / "torch-npu.json"
#: runs-on labels per SoC when the dispatch names none
RUNNERS = {"A2": ["self-hosted", "linux", "ascend-a2"], "A3": ["self-hosted", "linux", "ascend-a3"]}
#: chips as Ascend's image tags name them -> the product they are built for
CHIPS = {"910b": "A2", "a2": "A2", "a3": "A3", "910_93": "A3", "910": "Atlas 910", "310p": "310P", "310b": "310B"}
FIELDS = ("soc", "image", "cann", "torch_npu")
OPTIONAL = ("variant", "_comment")
#: a container image reference: [registry[:port]/]path[:tag][@sha256:digest] (Docker's grammar, lower-case path)
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REFERENCE = re.compile(
    rf"(?:(?P<registry>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::\d+)?)/)?(?P<path>{_COMPONENT}(?:/{_COMPONENT})*)"
    r"(?::(?P<tag>\w[\w.-]{0,127}))?(?:@(?P<digest>sha256:[0-9a-f]{64}))?")
_VARIANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class MatrixError(ConformanceError, ValueError):
    """A leg that cannot run as written; the message names the leg and the fix."""


@dataclass(frozen=True)
class Pair:
    """A row of the pairing table: CANN releases and the torch-npu releases Ascend pairs them with."""

    cann: tuple[str, ...]
    torch_npu: tuple[str, ...]
    source: str
    provisional: bool = False

    def has_cann(self, version: str) -> bool:
        return any(cann.same(c, version) or cann.same(c, cann.release(version)) for c in self.cann)


@dataclass(frozen=True)
class Table:
    """`constraints/torch-npu.json`: torch pins and CANN ↔ torch-npu pairs, with their sources."""

    torch: dict[str, str]
    pairs: tuple[Pair, ...]
    sources: dict[str, str]

    def pairs_of(self, version: str, torch_npu: str | None = None) -> list[Pair]:
        return [p for p in self.pairs if p.has_cann(version) and (torch_npu is None or torch_npu in p.torch_npu)]


def load_table(path: Path = TORCH_TABLE) -> Table:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    pairs = tuple(Pair(tuple(row["cann"]), tuple(row["torch_npu"]), row["source"], bool(row.get("provisional")))
                  for row in data.get("pairs", []))
    return Table(dict(data["torch_for_torch_npu"]), pairs, dict(data.get("sources", {})))


def torch_table(path: Path = TORCH_TABLE) -> dict[str, str]:
    """torch-npu release -> the torch release it is built against."""
    return load_table(path).torch


@dataclass(frozen=True)
class Image:
    """What an image reference says about itself: its tag's CANN version and chip, and the rest of the tag."""

    reference: str
    tag: str | None
    digest: str | None
    cann: str | None
    chip: str | None
    rest: str | None


def parse_image(reference: str) -> Image:
    """An image reference, checked (raises MatrixError naming the reference), with what its tag names."""
    match = _REFERENCE.fullmatch(reference.strip()) if isinstance(reference, str) else None
    if match is None:
        raise MatrixError(f"{reference!r} is not a container image reference: expected "
                          f"[registry[:port]/]path[:tag][@sha256:<64 hex>], e.g. quay.io/ascend/cann:8.2.rc1-910b-"
                          f"ubuntu22.04-py3.11 or registry.internal.example:5000/mirror/ascend/cann@sha256:...")
    tag, digest = match["tag"], match["digest"]
    if tag is None and digest is None:
        raise MatrixError(f"image {reference!r} names neither a tag nor a digest: a nightly must pin what it runs "
                          f"(add :<tag> or @sha256:<digest>)")
    version, chip, rest = None, None, []
    if tag:
        tokens = tag.split("-")
        used = 0
        for end in range(len(tokens), 0, -1):  # the longest leading part that is a CANN version (9.0.0-beta.1)
            if cann.sort_key("-".join(tokens[:end]))[0] == 1:
                version, used = "-".join(tokens[:end]), end
                break
        for token in tokens[used:]:
            if chip is None and token.lower() in CHIPS:
                chip = token.lower()
            elif version is not None:
                rest.append(token)
    return Image(reference, tag, digest, version, chip, "-".join(rest) or None)


def slug(leg: dict[str, Any]) -> str:
    """The leg's id in paths, cache keys and artifact names: `A2-cann-8.2.RC1-torch_npu-2.14.0`, and its variant
    when it has one (`...-openeuler24.03-py3.11`)."""
    text = f"{leg['soc']}-cann-{leg['cann']}-torch_npu-{leg['torch_npu']}"
    if leg.get("variant"):
        text += f"-{leg['variant']}"
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)


def pip_cache_key(image: str, torch: str, torch_npu: str) -> str:
    """The leg's pip cache: one per image and pins, so a new image or pin starts a cache of its own."""
    return "pip-" + hashlib.sha256(f"{image}\n{torch}\n{torch_npu}".encode()).hexdigest()[:16]


def check_pair(where: str, version: str, torch_npu: str, table: Table) -> Pair:
    """The table's row pairing CANN `version` with `torch_npu`; raises MatrixError naming what goes together."""
    found = table.pairs_of(version, torch_npu)
    if found:
        return next((p for p in found if not p.provisional), found[0])
    with_cann = sorted({t for p in table.pairs_of(version) for t in p.torch_npu})
    with_npu = sorted({c for p in table.pairs if torch_npu in p.torch_npu for c in p.cann}, key=cann.sort_key)
    parts = [f"CANN {version} goes with torch-npu {', '.join(with_cann)}" if with_cann
             else f"the table has no row for CANN {cann.release(version)}"]
    parts.append(f"torch-npu {torch_npu} goes with CANN {', '.join(with_npu)}" if with_npu
                 else f"the table pairs torch-npu {torch_npu} with no CANN")
    raise MatrixError(f"{where}: CANN {version} and torch-npu {torch_npu} do not go together in {TORCH_TABLE.name} "
                      f"(Ascend's release notes): {'; '.join(parts)}. Pick a pair from the table, or add the pair "
                      f"with its source there")


def _leg(i: int, leg: Any, runners: dict[str, list[str]], table: Table) -> dict[str, Any]:
    where = f"leg {i} {json.dumps(leg)[:200]}"
    if not (isinstance(leg, dict) and all(isinstance(leg.get(k), str) and leg[k] for k in FIELDS)):
        raise MatrixError(f"{where}: needs 'soc', 'image', 'cann' and 'torch_npu' strings")
    unknown = sorted(set(leg) - set(FIELDS) - set(OPTIONAL))
    if unknown:
        raise MatrixError(f"{where}: unknown field(s) {unknown}; a leg has {list(FIELDS)} and optionally 'variant'")
    if leg["soc"] not in runners:
        raise MatrixError(f"{where}: soc must be one of {sorted(runners)}")
    try:
        cann.parse(leg["cann"])
        image = parse_image(leg["image"])
    except (cann.CannVersionError, MatrixError) as exc:
        raise MatrixError(f"{where}: {exc}") from exc
    if image.chip is not None and CHIPS[image.chip] != leg["soc"]:
        raise MatrixError(f"{where}: the image's tag names {CHIPS[image.chip]} ({image.chip}), not {leg['soc']}: take "
                          f"the {leg['soc']} image of CANN {leg['cann']}")
    if image.cann is not None and not cann.same(image.cann, leg["cann"]):
        raise MatrixError(f"{where}: the image's tag names CANN {image.cann}, not {leg['cann']}")
    variant = leg.get("variant")
    if variant is not None and not (isinstance(variant, str) and _VARIANT.fullmatch(variant)):
        raise MatrixError(f"{where}: 'variant' must be a short name (letters, digits, . _ -), e.g. "
                          f"openeuler24.03-py3.11")
    torch = table.torch.get(leg["torch_npu"])
    if torch is None:
        raise MatrixError(f"{where}: torch-npu {leg['torch_npu']} is not in {TORCH_TABLE.name}: add the torch "
                          f"release it is built against")
    pair = check_pair(where, leg["cann"], leg["torch_npu"], table)
    return {"soc": leg["soc"], "image": leg["image"].strip(), "cann": cann.normalize(leg["cann"]),
            "torch_npu": leg["torch_npu"], "torch": torch, "variant": variant,
            "_derived_variant": image.rest, "runner": runners[leg["soc"]],
            "pairing": ("provisional: " if pair.provisional else "") + table.sources.get(pair.source, pair.source),
            "pip_cache": pip_cache_key(leg["image"].strip(), torch, leg["torch_npu"])}


def include(legs: list[Any], runners: dict[str, list[str]], table: Table) -> list[dict[str, Any]]:
    """The matrix's `include:` entries, one per leg, checked."""
    if not isinstance(legs, list) or not legs:
        raise MatrixError(f"the legs must be a non-empty JSON list of {{soc, image, cann, torch_npu[, variant]}}, got "
                          f"{legs!r:.200}")
    out = [_leg(i, leg, runners, table) for i, leg in enumerate(legs)]
    triples: dict[tuple, list[dict[str, Any]]] = {}
    for entry in out:
        triples.setdefault((entry["soc"], entry["cann"], entry["torch_npu"]), []).append(entry)
    for (soc, version, torch_npu), entries in triples.items():
        if len(entries) > 1:
            for entry in entries:
                entry["variant"] = entry["variant"] or entry["_derived_variant"]
            variants = [e["variant"] for e in entries]
            if None in variants or len(set(variants)) < len(variants):
                raise MatrixError(f"{len(entries)} legs run {soc} · CANN {version} · torch-npu {torch_npu} with images "
                                  f"{[e['image'] for e in entries]}: give each a distinct 'variant' (the OS and "
                                  f"Python of its image, e.g. ubuntu22.04-py3.11), which its id and results carry")
    seen = set()
    for entry in out:
        del entry["_derived_variant"]
        entry["leg"] = slug(entry)
        if entry["leg"] in seen:
            raise MatrixError(f"a second leg {entry['leg']}")
        seen.add(entry["leg"])
    return out


def expected(entries: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The night's expected legs, as `report --expected-legs` reads them."""
    return [{k: e[k] for k in ("soc", "cann", "torch_npu", "variant") if e.get(k)} for e in entries]


def _json(text: str, default: Any, what: str) -> Any:
    if not text.strip():
        return default
    try:
        return json.loads(text)
    except ValueError as exc:
        raise MatrixError(f"{what}: not JSON ({exc}): {text!r:.200}") from exc


def main(argv: list[str] | None = None) -> int:
    """Entry point; prints the GitHub outputs, or the problem and 2."""
    p = argparse.ArgumentParser(prog="python3 -m torchair_conformance.nightly_matrix",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--legs", default="", help=f"JSON list of legs (default: {LEGS.relative_to(ROOT)})")
    p.add_argument("--a2-runner", default="", help="runs-on labels of the A2 runners (JSON list)")
    p.add_argument("--a3-runner", default="", help="runs-on labels of the A3 runners (JSON list)")
    args = p.parse_args(argv)
    try:
        legs = _json(args.legs, None, "--legs")
        if legs is None:
            legs = json.loads(LEGS.read_text(encoding="utf-8"))["legs"]
        runners = {"A2": _json(args.a2_runner, RUNNERS["A2"], "--a2-runner"),
                   "A3": _json(args.a3_runner, RUNNERS["A3"], "--a3-runner")}
        entries = include(legs, runners, load_table())
    except MatrixError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for entry in entries:
        if entry["pairing"].startswith("provisional"):
            print(f"::warning::leg {entry['leg']}: CANN {entry['cann']} with torch-npu {entry['torch_npu']} is a "
                  f"provisional pairing ({entry['pairing']})", file=sys.stderr)
    print(f"include={json.dumps(entries, separators=(',', ':'))}")
    print(f"legs={json.dumps(expected(entries), separators=(',', ':'))}")
    print(f"since={time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
