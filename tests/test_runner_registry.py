"""The runner registry (routertwin.runners): a kind is a module or a package
found by name; `_shared` holds pieces several kinds use and is no kind."""

from __future__ import annotations

import pytest

from routertwin import runners

CONTRACT = {"Schema", "run", "check", "testers", "METRICS", "UNITS"}


def test_kinds_are_modules_and_packages_found_by_name():
    kinds = runners.available()
    assert {"pipeline", "queue_analytic", "router"} <= set(kinds)
    assert not any(k.startswith("_") for k in kinds)
    with pytest.raises(runners.UnknownKind):
        runners.get("_shared")


@pytest.mark.parametrize("kind", ["pipeline", "router", "lb"])
def test_a_packaged_kind_exposes_just_the_runner_contract(kind):
    module = runners.get(kind)
    assert {"Schema", "run"} <= set(module.__all__) <= CONTRACT
    assert all(hasattr(module, name) for name in module.__all__)
