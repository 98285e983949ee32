"""Seed 003's figures 6-12: the transcription of what the paper prints of
them (validation/figures/nctu.yaml) against the reference rows it overlaps
and against the seed's own lines; the cookie-persistence case of figure
12 against hand counts and the servers' saturation rate; the redrawn
figures written."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from conftest import ROOT, line_of, one_line, run_cli, write_scenario
from routertwin.runners.webswitch import figures
from routertwin.runners.webswitch.model import Case, evaluate, prearranged_cookie_ops
from routertwin.runners.webswitch.profiles import load_webswitch
from routertwin.runners.webswitch.testbed import load_testbed
from routertwin.scenario_loader import read_yaml_file

DATA = ROOT / "validation" / "figures" / "nctu.yaml"
SEED = Path("/work/shared/seeds/003_2676d6ce2afe586c.txt")
PLATFORMS = ROOT / "scenarios" / "platforms"
TESTBED = ROOT / "scenarios" / "workloads" / "webbench-nctu.yaml"


def figure_data() -> list[dict]:
    data, _ = read_yaml_file(DATA)
    return data["figures"]


def all_values() -> list[dict]:
    return [dict(v, figure=f["figure"]) for f in figure_data() for v in f.get("values", [])]


def reference_rows() -> dict[str, dict]:
    with open(ROOT / "validation" / "reference.csv", newline="") as fh:
        return {r["id"]: r for r in csv.DictReader(fh) if r["id"].startswith("nctu-")}


def test_the_transcription_covers_figures_6_to_12():
    assert [f["figure"] for f in figure_data()] == list(range(6, 13))


def test_every_nctu_reference_row_is_one_figure_value():
    rows = reference_rows()
    named = [v["row"] for v in all_values() if v.get("row")]
    assert sorted(named) == sorted(rows), "each nctu-* row once, and no row that reference.csv lacks"


@pytest.mark.parametrize("value", [v for v in all_values() if v.get("row")], ids=lambda v: v["row"])
def test_a_figure_value_agrees_with_its_reference_row(value):
    row = reference_rows()[value["row"]]
    assert float(row["value"]) == pytest.approx(value["value"], abs=1e-9)
    assert row["unit"] == value["unit"]
    assert row["metric"] == value["metric"]
    assert row["seed"] == read_yaml_file(DATA)[0]["seed"]
    if value["product"] != "testbed":
        p = load_webswitch(PLATFORMS / f"nctu-{value['product']}.yaml")
        assert p.product.vendor in row["system"]
        if "(v" in row["system"]:  # Cisco's row names its software version
            assert p.product.software.split()[-1] in row["system"]


def test_every_product_named_has_a_profile():
    for f in figure_data():
        for entry in [*f.get("values", []), *f.get("methods", [])]:
            if entry["product"] != "testbed":
                assert (PLATFORMS / f"nctu-{entry['product']}.yaml").is_file(), entry


def test_figure_12_methods_are_the_profiles_tested_methods():
    (fig12,) = [f for f in figure_data() if f["figure"] == 12]
    for m in fig12["methods"]:
        assert load_webswitch(PLATFORMS / f"nctu-{m['product']}.yaml").behaviour.cookie_method_tested == m["method"]


@pytest.mark.skipif(not SEED.is_file(), reason="seed 003's text is not on this machine")
def test_every_quote_and_caption_is_on_the_seed_line_it_cites():
    lines = SEED.read_text(encoding="utf-8").splitlines()
    for f in figure_data():
        assert f["caption"] in lines[f["caption_line"] - 1], f["figure"]
        for entry in [*f.get("values", []), *f.get("claims", []), *f.get("methods", [])]:
            assert entry["quote"] in lines[entry["line"] - 1], (f["figure"], entry["quote"])


# ----------------------------------------------------- figure 12's cookie --

@pytest.mark.parametrize("servers", [2, 6, 14])
def test_prearranged_cookie_rules_are_first_match_over_one_rule_per_server(servers):
    """Requests spread evenly over S servers, each found by the first
    matching of S rules in order: (1 + 2 + ... + S) / S = (S + 1) / 2."""
    rules, compared = prearranged_cookie_ops(servers)
    assert rules == pytest.approx((servers + 1) / 2)
    assert compared > rules  # every evaluated rule compared at least its first byte


def cookie_case(name: str, servers: int = 6) -> Case:
    return Case(load_webswitch(PLATFORMS / f"nctu-{name}.yaml"), "l7", "nat", "1.0", 3, 14, servers, "cookie")


def test_insert_costs_one_rewrite_and_the_response_header_more_than_learn_less_a_lookup():
    """Nortel offers both: with everything else equal, insert's switch
    cycles minus learn's are a rewrite plus the parse of the one
    Set-Cookie line insert adds, less the one table write learn does
    (docs/nctu.md)."""
    tb = load_testbed(TESTBED)
    nortel = load_webswitch(PLATFORMS / "nctu-nortel-ace180e.yaml")
    learn = nortel.model_copy(update={"behaviour": nortel.behaviour.model_copy(
        update={"cookie_method_tested": "learn"})})
    ins = evaluate(cookie_case("nortel-ace180e"), tb).work
    lrn = evaluate(Case(learn, "l7", "nat", "1.0", 3, 14, 6, "cookie"), tb).work
    c = nortel.costs
    extra_header = tb.cookie_test.set_cookie_bytes
    # the inserted line also lengthens the response: its segments are counted by the traffic arithmetic
    packet_diff = (ins.packets - lrn.packets) * c.l7_packet_cycles
    expected = c.rewrite_cycles + c.parse_byte_cycles * extra_header - c.rule_cycles + packet_diff
    assert ins.cycles - lrn.cycles == pytest.approx(expected)


def test_a_saturated_cookie_testbed_serves_at_the_servers_asp_rate():
    """With the ASP page costing 50 ms, the six servers' CPUs dominate every
    other station a thousandfold: a balanced network of K = 6 stations of
    demand D = (page + connection) / 6 each, whose throughput with N
    customers is N / (D (N + K - 1)) (Lazowska et al., Quantitative System
    Performance, 1984, 5.4: balanced systems), whatever the switch."""
    tb = load_testbed(TESTBED)
    tb = tb.model_copy(update={"cookie_test": tb.cookie_test.model_copy(update={"server_cpu_per_request_us": 50000}),
                               "client": tb.client.model_copy(update={"threads": 64})})
    r = evaluate(cookie_case("f5-bigip-ha"), tb)
    demand = (50000 + tb.server.cpu_per_connection_us) * 1e-6 / 6
    customers = 14 * 64
    assert r.requests_per_s == pytest.approx(customers / (demand * (customers + 6 - 1)), rel=1e-3)
    assert r.solution.bottleneck.endswith(".cpu") and r.solution.bottleneck.startswith("server")


HEAD = f"""
    scenario: cookie
    kind: webswitch
    seed: 1
    testbed: {TESTBED}
    mode: l7
    persistence: cookie
"""


def test_cookie_persistence_on_a_product_without_l7_costs_names_file_line_and_key(tmp_path):
    path, text = write_scenario(tmp_path, HEAD, f"""
        products:
          - {PLATFORMS / 'nctu-3com-superstack3.yaml'}
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"s.yaml:{line_of(text, 'nctu-3com')}: key 'products[0]'" in line and "prices no L7" in line


def test_cookie_persistence_with_url_rules_is_refused(tmp_path):
    path, text = write_scenario(tmp_path, HEAD, f"""
        rules: [3, 50]
        products: [{PLATFORMS / 'nctu-nortel-ace180e.yaml'}]
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"s.yaml:{line_of(text, 'rules')}: key 'rules'" in line and "no URL rules" in line


# ------------------------------------------------------------- the plots --

def test_the_figures_are_drawn_with_the_paper_values(tmp_path):
    written = figures.draw(ROOT, tmp_path)
    assert [p.name for p in written] == [f"nctu-fig{n:02d}.png" for n in range(6, 13)]
    for p in written:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000
    paper = figures.load_paper(ROOT)
    assert [v["value"] for v in paper.values(9, "gain")] == [16, 100, 36, 900]
