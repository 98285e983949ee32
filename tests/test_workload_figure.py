"""The 100G what-if figure the docs show (docs/figures/workloads-100g.png) is
the one its data file holds (the PNG names the CSV's SHA-256), and that data
is what `scripts/workload-whatif.py` computes today: the figure is
regenerated's numbers, not pixels, so a model change that moves the answer
fails here until the figure is regenerated:

    python3 scripts/workload-whatif.py --figure docs/figures
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import struct
import zlib
from pathlib import Path

import pytest

from conftest import ROOT

FIGURE = ROOT / "docs" / "figures" / "workloads-100g.png"
DATA = ROOT / "docs" / "figures" / "workloads-100g.csv"


def png_text(path: Path) -> dict[str, str]:
    """The tEXt chunks of a PNG (PNG spec 11.3.4.3: keyword, NUL, Latin-1 text)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, pos = {}, 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) == crc
        if kind == b"tEXt":
            key, _, text = body.partition(b"\0")
            out[key.decode("latin-1")] = text.decode("latin-1")
        pos += 12 + length
    return out


def whatif():
    spec = importlib.util.spec_from_file_location("workload_whatif", ROOT / "scripts" / "workload-whatif.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_figure_draws_the_committed_data():
    digest = hashlib.sha256(DATA.read_bytes()).hexdigest()
    assert png_text(FIGURE)["Description"] == f"data {DATA.name} sha256 {digest}"


def test_committed_data_is_what_a_regeneration_computes(tmp_path):
    w = whatif()
    trace = tmp_path / "bulk-tcp.pcap"
    w.write_trace(trace)
    fresh = w.figure_rows(w.octeon(tmp_path, trace), w.t640(tmp_path, trace))
    with open(DATA, newline="", encoding="utf-8") as fh:
        committed = list(csv.DictReader(fh))
    assert len(committed) == len(fresh)
    for old, new in zip(committed, fresh):
        assert (old["panel"], old["series"], old["x"]) == (new["panel"], new["series"], str(new["x"]))
        for key in ("gbps", "gbps_closed_form", "ports_for_100g"):
            if new[key] == "":
                assert old[key] == ""
            else:
                # same seed, same numbers; the CSV holds them to repr's 17 digits
                assert float(old[key]) == pytest.approx(float(new[key]), rel=1e-12), (old, key)
