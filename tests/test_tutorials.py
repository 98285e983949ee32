"""The tutorials (docs/tutorials/*.md, jupytext markdown notebooks) cannot
rot: each runs top to bottom in a real Jupyter kernel (nbclient), with
ROUTERTWIN_TUTORIAL_QUICK=1 for shorter runs; the asserts inside each
notebook check every figure its text claims. The committed files hold no
outputs."""

import json

import pytest
from conftest import ROOT

jupytext = pytest.importorskip("jupytext")
nbclient = pytest.importorskip("nbclient")

TUTORIALS = ROOT / "docs" / "tutorials"
NOTEBOOKS = sorted(TUTORIALS.glob("[0-9][0-9]-*.md"))  # README.md is not one


def test_the_tutorials_are_there():
    names = [p.stem for p in NOTEBOOKS]
    assert [n[:2] for n in names] == ["01", "02", "03", "04", "05", "06"], names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_tutorial_runs_top_to_bottom(path, monkeypatch):
    monkeypatch.setenv("ROUTERTWIN_TUTORIAL_QUICK", "1")
    nb = jupytext.read(path)
    assert any(c.cell_type == "code" and "assert" in c.source for c in nb.cells), "a tutorial checks its claims"
    assert any("## Exercises" in c.source for c in nb.cells if c.cell_type == "markdown")
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(TUTORIALS)}})
    client.execute()
    figures = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
               if "image/png" in o.get("data", {})]
    assert figures, "a tutorial draws at least one plot"


def test_committed_tutorials_hold_no_outputs():
    for path in NOTEBOOKS:
        nb = jupytext.read(path)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), path
    for path in TUTORIALS.rglob("*.ipynb"):  # a notebook saved from Jupyter must be stripped too
        nb = json.loads(path.read_text())
        for c in nb["cells"]:
            assert not c.get("outputs") and c.get("execution_count") is None, f"{path}: outputs not stripped"
