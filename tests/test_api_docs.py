"""The API reference is generated from docstrings by pdoc, here, into a
temporary folder: a public name without a docstring, or a docstring pdoc
cannot render, fails the test, so the reference cannot rot."""

import inspect
import subprocess
import sys

import pytest

import routertwin as rt


def _undocumented() -> list[str]:
    missing = []
    for name in rt.__all__:
        obj = getattr(rt, name)
        if name.startswith("__"):
            continue
        if not (inspect.getdoc(obj) or "").strip():
            missing.append(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                target = member.fget if isinstance(member, property) else member
                if callable(target) and not (inspect.getdoc(target) or "").strip():
                    missing.append(f"{name}.{attr}")
    return missing


def test_every_public_name_has_a_docstring():
    assert not _undocumented(), f"public names without a docstring: {_undocumented()}"


def test_pdoc_builds_the_reference(tmp_path):
    pytest.importorskip("pdoc")
    out = tmp_path / "api"
    proc = subprocess.run([sys.executable, "-W", "error::UserWarning", "-m", "pdoc", "routertwin", "-o", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "Warn" not in proc.stderr, proc.stderr
    page = (out / "routertwin.html").read_text(encoding="utf-8")
    for name in rt.__all__:
        if not name.startswith("__"):
            assert f'id="{name}"' in page, f"{name} is not in the generated reference"
