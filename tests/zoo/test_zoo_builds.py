"""The zoo itself: every model builds from its config alone (nothing downloaded), deterministically, and runs eagerly
on its inputs; the package check names what is missing. Cheap: no compile."""
from __future__ import annotations

import pytest
import torch

from torchair_conformance.zoo import catalog, families, packages, patterns


@pytest.mark.parametrize("name", catalog.NAMES)
def test_every_model_builds_the_same_twice_and_runs_eagerly(name: str) -> None:
    first, second = families.build_model(name, seed=0), families.build_model(name, seed=0)
    a, b = first.state_dict(), second.state_dict()
    assert list(a) == list(b) and all(torch.equal(a[k], b[k]) for k in a), f"{name}: weights differ between builds"
    other = families.build_model(name, seed=1).state_dict()
    assert any(not torch.equal(a[k], other[k]) for k in a if a[k].is_floating_point()), f"{name}: seed ignored"
    built = patterns.build(name, "plain", None, {})
    step = patterns.script(built, "cold")[0]
    with torch.no_grad():
        out = built.eager(step.method)(*step.args, **step.kwargs)
    assert out is not None


def test_the_catalog_names_its_patterns_and_refuses_unknown_names() -> None:
    assert set(catalog.DECODERS) <= set(catalog.LANGUAGE) and len(catalog.VISION) == 5
    assert catalog.patterns_of("llama") == catalog.PATTERNS and catalog.patterns_of("resnet18") == ("plain",)
    with pytest.raises(ValueError, match="did you mean llama"):
        catalog.entry("lama")


def test_missing_packages_are_named_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "timm" else real(name, *a))
    reason = packages.missing()
    assert reason is not None and "timm" in reason and "zoo" in reason, reason
