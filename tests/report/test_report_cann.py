"""CANN version strings in Ascend's release order (BE-4: the previous CANN), on real version strings."""
from __future__ import annotations

import pytest

from torchair_conformance.report import cann

#: real CANN version strings, as Ascend's download pages and projects that pin CANN quote them, in release order:
#: trial builds (T), release candidates (RC), the final release; within a stage, community alphas and betas, then
#: internal B-builds, come before the version they prefix
ORDERED = [
    "7.0.RC1.B010",          # MindX's build of 7.0.RC1
    "7.0.RC1",
    "7.0.0",
    "8.0.T2.B010",           # a trial build (FrameworkPTAdapter docs)
    "8.0.RC1.B030",
    "8.0.RC1",
    "8.0.RC2.alpha003",
    "8.0.RC2.beta1",         # MindSpore 2.3's pin
    "8.0.RC2",
    "8.0.RC3.alpha002",
    "8.0.RC3.alpha003",
    "8.0.RC3.beta1",
    "8.0.RC3",
    "8.0.RC3.20",            # a commercial patch of 8.0.RC3 (Ascend Extension for PyTorch 6.0.0 release notes)
    "8.0.0.beta1",           # the community edition of 8.0.0 (same notes)
    "8.0.0",
    "8.1.RC1.alpha001",
    "8.1.RC1.B010",
    "8.1.RC1.B050",          # a vLLM-Ascend host's toolkit folder
    "8.1.RC1",
    "8.2.RC1.alpha002",
    "8.2.RC1.B010",
    "8.2.RC1",
    "8.3.RC1.alpha001",      # quay.io/ascend/cann's 8.3.rc1.alpha001 images
    "8.10.RC1",
    "9.0.0-beta.1",          # CANN 9's image tags (quay.io/ascend/cann:9.0.0-beta.1-a3-...)
    "9.0.0-beta.2",
    "9.0.0",
    "9.1.0.beta.1",          # CANN 9's conda packages
    "9.1.0",
]


def test_real_versions_sort_in_release_order() -> None:
    shuffled = sorted(ORDERED, key=lambda v: v[::-1])
    assert sorted(shuffled, key=cann.sort_key) == ORDERED


@pytest.mark.parametrize(("low", "high"), list(zip(ORDERED, ORDERED[1:])))
def test_each_neighbour_is_older(low: str, high: str) -> None:
    assert cann.parse(low) < cann.parse(high)


def test_spelling_does_not_change_the_version() -> None:
    assert cann.parse("8.1.rc1") == cann.parse("8.1.RC1")
    assert cann.parse("8.1.RC1.b020") == cann.parse("8.1.RC1.B020")
    assert cann.normalize("8.1.rc1") == "8.1.RC1" and cann.normalize("8.2.rc1.b010") == "8.2.RC1.B010"
    assert cann.same("8.2.rc1", "8.2.RC1") and not cann.same("8.2.RC1", "8.2.RC1.B010")


def test_unknown_strings_sort_last_and_parse_names_the_value() -> None:
    assert sorted(["weird", "8.0.RC3", None], key=cann.sort_key) == [None, "8.0.RC3", "weird"]
    for bad in ("8.1", "8.0.RC2.x", "8.1.RC1-alpha", "8.2.RC1.B"):
        with pytest.raises(cann.CannVersionError, match=rf"'{bad}' is not a CANN version: expected MAJOR.MINOR"):
            cann.parse(bad)


def test_a_build_pairs_as_the_release_it_leads_to() -> None:
    assert [cann.release(v) for v in ("8.2.rc1.b010", "9.0.0-beta.1", "8.0.RC3.20", "8.1.RC1")] == [
        "8.2.RC1", "9.0.0", "8.0.RC3.20", "8.1.RC1"]
    assert cann.same("9.0.0-beta.1", "9.0.0.beta1") and not cann.same("8.0.RC3.20", "8.0.RC3")
