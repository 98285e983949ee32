"""docs/python-api.md cannot drift: every fenced python block of the tour
runs, in order, in one namespace, from the project root."""

import re

from conftest import ROOT

DOC = ROOT / "docs" / "python-api.md"


def blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_the_tour_has_code_for_each_step():
    code = "\n".join(blocks())
    for call in ("rt.load(", ".with_(", "rt.scenario(", "rt.run(", "rt.sweep(", ".plot(", ".to_parquet(",
                 "rt.rfc2544(", "rt.calibrate("):
        assert call in code, call


def test_every_code_block_of_the_tour_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": "tour"}
    for i, code in enumerate(blocks(), 1):
        try:
            exec(compile(code, f"{DOC.name} block {i}", "exec"), namespace)
        except Exception as exc:  # name the block that broke
            raise AssertionError(f"{DOC.name} python block {i} fails: {type(exc).__name__}: {exc}\n{code}") from exc
