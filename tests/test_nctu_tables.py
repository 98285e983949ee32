"""The NCTU paper's feature tables (seed 003) generated from the six
product profiles (scenarios/platforms/nctu-*.yaml) and checked cell by cell
against the paper. The expected cells below are transcribed from
shared/seeds/003_2676d6ce2afe586c.txt by hand, table by table (column
order: Nortel, Cisco, F5, Foundry, Radware, 3Com). Two transcription
conventions: the superscript w of table 4 is written "^w", and items of a
list cell are separated by ", " (the text of table 4's 3Com dispatch cell
lost its separators: "round robin w least connection w quickest response")."""

from __future__ import annotations

from pathlib import Path

import pytest

from routertwin.runners.webswitch import tables

ROOT = Path(__file__).resolve().parents[1]
PLATFORMS = ROOT / "scenarios" / "platforms"

# Table 3 (產品架構比較表), rows 10/100M Port # .. Price (OS/firmware is in the
# profiles' product.software; Cisco's "WebNS" is given a version by section 5.4).
TABLE_3 = {
    "10/100M Port #": ["8", "12", "2", "8", "8", "12"],
    "1G Port #": ["9*", "2", "2 (optional)", "2", "2", "2"],
    "Processor": ["2 RISCs/port", "Central RISC, Distributed forwarding", "Pentium !!! 850MHz",
                  "Power PC MPC 740 400 MHz", "Power PC MPC 750 266MHz", "ASIC-based"],
    "Memory": ["2MB per port", "128 MB", "512MB DRAM", "32 MB DRAM", "64MB DRAM", "32 MB DRAM"],
    "Size/Weight": ["2U/8 kg", "1.5U", "2U/12 kg", "1.5U/8 kg", "1U/3.5 kg", "1.5U/6.6 kg"],
    "Price": ["USD $29327 NT $1012K", "NT $1250K", "USD $24250 NT $837K", "NT $374K", "NT $1095K",
              "USD $7995 NT$276K"],
}

# Table 4 (L4 的功能比較表).
TABLE_4 = {
    "NAT": ["Yes"] * 6,
    "Direct routing": ["Yes", "No", "Yes", "Yes", "Yes", "No"],
    "Global server load balancing": ["Yes", "Yes", "Yes", "Yes", "Yes (for WSD-DS)", "No"],
    "Dispatch metrics": [
        "min_miss, hash, least connections, round robin, quickest response bandwidth, weight",
        "round-robin^w, least connections, hash",
        "round-robin, least connections, quickest response predictive, weight",
        "round robin, least connections^w, quickest response^w",
        "round-robin, least traffic, least users number, server load",
        "round robin^w, least connection^w, quickest response",
    ],
    "Firewall load balancing": ["Yes", "Yes", "Yes", "Yes", "No", "No"],
    "VPN load balancing": ["Yes", "N/A", "Yes", "No", "No", "No"],
}

# Table 5 (L7 的功能比較表); 3Com's last three cells are empty in the paper.
TABLE_5 = {
    "URL switching": ["Yes", "Yes", "Yes", "Yes", "Yes", "No"],
    "Cookie persistence": ["Yes"] * 6,
    "SSL ID persistence": ["Yes"] * 6,
    "Matching rules": ["directory, substring, regular expression",
                       "directory, substring, file extension, regular expression",
                       "directory, substring, file extension", "directory, substring, file extension",
                       "file extension, hostname", ""],
    "Number of rules": ["128 strings, 40 bytes each rule, 4500 bytes each request", "512 rules, 1024 bytes each",
                        "no limit", "256", "256", ""],
    "Rule precedence": ["Yes", "Yes", "No", "Yes", "No", ""],
}

# Table 6 (容錯的功能比較表).
TABLE_6 = {
    "Active/active redundancy": ["Yes"] * 6,
    "Active/backup redundancy": ["Yes"] * 6,
    "Server check (ping)": ["Yes"] * 6,
    "Server check (port)": ["Yes"] * 6,
    "Server check (web page)": ["Yes"] * 6,
    "Server check (content)": ["Yes", "Yes", "Yes", "Yes", "Yes", "No"],
}

# Table 7 (其他的功能比較表).
TABLE_7 = {
    "Bandwidth Management": ["Yes", "N/A", "Yes", "No", "Yes", "No"],
    "IP Routing": ["Yes"] * 6,
    "Secure management": ["Yes", "Yes", "Yes", "Yes", "No", "N/A"],
    "Packet filtering": ["Yes"] * 6,
    "Anti Dos": ["Yes", "Yes", "Yes", "N/A", "Yes", "Yes"],
    "Configuration method": ["CLI, Java", "CLI, Web", "CLI, Web", "CLI, Web", "CLI, Web", "CLI, Web"],
}

PAPER = {3: TABLE_3, 4: TABLE_4, 5: TABLE_5, 6: TABLE_6, 7: TABLE_7}


@pytest.fixture(scope="module")
def products():
    return tables.load_paper_products(PLATFORMS)


@pytest.mark.parametrize("number", sorted(PAPER))
def test_generated_table_matches_the_paper_cell_by_cell(products, number):
    _, header, rows = tables.table(number, products)
    assert len(header) == 7
    expected = PAPER[number]
    assert [r[0] for r in rows] == list(expected), "rows and their order as the paper prints them"
    wrong = [f"{row[0]} / {header[i]}: twin {cell!r}, paper {expected[row[0]][i - 1]!r}"
             for row in rows for i, cell in enumerate(row) if i > 0 and cell != expected[row[0]][i - 1]]
    assert not wrong, "\n".join(wrong)


def test_a_changed_profile_changes_its_cell(products):
    """The cells come from the profiles: flip one feature, one cell moves."""
    radware = products[4].model_copy(deep=True)
    radware.features.other.secure_management = True
    _, _, rows = tables.table(7, [*products[:4], radware, products[5]])
    secure = next(r for r in rows if r[0] == "Secure management")
    assert secure[1:] == ["Yes", "Yes", "Yes", "Yes", "Yes", "N/A"]


def test_both_cisco_versions_share_every_table_cell():
    """Section 5.4 lent two software versions of one product: same tables."""
    v310 = tables.load_webswitch(PLATFORMS / "nctu-cisco-css11154-v310.yaml")
    v510 = tables.load_webswitch(PLATFORMS / "nctu-cisco-css11154-v510.yaml")
    assert v310.product.software != v510.product.software
    for n in PAPER:
        assert tables.table(n, [v310])[2] == tables.table(n, [v510])[2]


def test_table_number_outside_the_paper_is_refused(products):
    with pytest.raises(KeyError, match="no table 8"):
        tables.table(8, products)


def test_the_docs_appendix_is_what_the_profiles_generate(products):
    text = (ROOT / "docs" / "nctu.md").read_text(encoding="utf-8")
    begin, end = "<!-- generated tables begin -->\n", "<!-- generated tables end -->"
    shown = text[text.index(begin) + len(begin):text.index(end)]
    assert shown == "\n".join(tables.markdown(n, products) for n in (3, 4, 5, 6, 7))
