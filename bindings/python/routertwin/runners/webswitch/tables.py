"""The NCTU paper's feature tables (seed 003, tables 3 to 7) rendered from
the product profiles: one row per feature, one column per product, in the
paper's order (Nortel, Cisco, F5, Foundry, Radware, 3Com). Cells are the
paper's words: a feature true/false/null is Yes/No/N/A, a list is joined
with ", ", a weighted dispatch metric carries "^w" (the paper's
superscript w). A product without URL switching leaves table 5's rule rows
empty, as the paper does for 3Com."""

from __future__ import annotations

from pathlib import Path

from routertwin.runners.webswitch.profiles import Feature, WebSwitchProfile, load_webswitch

# The paper's column order (table 2), by profile name. Cisco's column is the
# product as lent; the two software versions share every table cell.
PAPER_COLUMNS = ("nctu-nortel-ace180e", "nctu-cisco-css11154-v510", "nctu-f5-bigip-ha",
                 "nctu-foundry-serveironxl", "nctu-radware-wsdpro", "nctu-3com-superstack3")


def yes_no(value: Feature, note: str | None = None) -> str:
    text = {True: "Yes", False: "No", None: "N/A"}[value]
    return f"{text} ({note})" if note else text


def _dispatch(p: WebSwitchProfile) -> str:
    return ", ".join(d.name + ("^w" if d.weighted else "") for d in p.features.l4.dispatch)


def _l7_only(p: WebSwitchProfile, text: str) -> str:
    return text if p.features.l7.url_switching else ""


def _ports_1g(p: WebSwitchProfile) -> str:
    h = p.hardware
    return f"{h.ports_1g}" + (" (optional)" if h.ports_1g_optional else "") + ("*" if h.ports_either else "")


# table -> (title, [(row label, cell function)]); labels as the paper prints them.
TABLES = {
    3: ("產品架構比較表 (architecture)", [
        ("10/100M Port #", lambda p: str(p.hardware.ports_10_100)),
        ("1G Port #", _ports_1g),
        ("Processor", lambda p: p.hardware.processor),
        ("Memory", lambda p: p.hardware.memory),
        ("Size/Weight", lambda p: p.hardware.size_weight),
        ("Price", lambda p: p.product.price),
    ]),
    4: ("L4 的功能比較表 (L4 features)", [
        ("NAT", lambda p: yes_no(p.features.l4.nat)),
        ("Direct routing", lambda p: yes_no(p.features.l4.direct_routing)),
        ("Global server load balancing", lambda p: yes_no(p.features.l4.gslb, p.features.l4.gslb_note)),
        ("Dispatch metrics", _dispatch),
        ("Firewall load balancing", lambda p: yes_no(p.features.l4.firewall_lb)),
        ("VPN load balancing", lambda p: yes_no(p.features.l4.vpn_lb)),
    ]),
    5: ("L7 的功能比較表 (L7 features)", [
        ("URL switching", lambda p: yes_no(p.features.l7.url_switching)),
        ("Cookie persistence", lambda p: yes_no(p.features.l7.cookie_persistence)),
        ("SSL ID persistence", lambda p: yes_no(p.features.l7.ssl_id_persistence)),
        ("Matching rules", lambda p: _l7_only(p, ", ".join(p.features.l7.matching_rules))),
        ("Number of rules", lambda p: _l7_only(p, p.features.l7.rule_limit or "")),
        ("Rule precedence", lambda p: _l7_only(p, yes_no(p.features.l7.rule_precedence))),
    ]),
    6: ("容錯的功能比較表 (fault tolerance)", [
        ("Active/active redundancy", lambda p: yes_no(p.features.fault_tolerance.active_active)),
        ("Active/backup redundancy", lambda p: yes_no(p.features.fault_tolerance.active_backup)),
        ("Server check (ping)", lambda p: yes_no(p.features.fault_tolerance.check_ping)),
        ("Server check (port)", lambda p: yes_no(p.features.fault_tolerance.check_port)),
        ("Server check (web page)", lambda p: yes_no(p.features.fault_tolerance.check_web_page)),
        ("Server check (content)", lambda p: yes_no(p.features.fault_tolerance.check_content)),
    ]),
    7: ("其他的功能比較表 (other features)", [
        ("Bandwidth Management", lambda p: yes_no(p.features.other.bandwidth_management)),
        ("IP Routing", lambda p: yes_no(p.features.other.ip_routing)),
        ("Secure management", lambda p: yes_no(p.features.other.secure_management)),
        ("Packet filtering", lambda p: yes_no(p.features.other.packet_filtering)),
        ("Anti Dos", lambda p: yes_no(p.features.other.anti_dos)),
        ("Configuration method", lambda p: ", ".join(p.features.other.configuration)),
    ]),
}


def load_paper_products(platforms: Path) -> list[WebSwitchProfile]:
    """The six products of the paper's tables, in its column order."""
    return [load_webswitch(Path(platforms) / f"{name}.yaml") for name in PAPER_COLUMNS]


def table(number: int, products: list[WebSwitchProfile]) -> tuple[str, list[str], list[list[str]]]:
    """Table `number` (3 to 7): title, header (products) and rows (label first)."""
    if number not in TABLES:
        raise KeyError(f"no table {number} (tables: {', '.join(map(str, TABLES))})")
    title, rows = TABLES[number]
    header = ["Company/Product"] + [f"{p.product.vendor} {p.product.name}" for p in products]
    return title, header, [[label] + [cell(p) for p in products] for label, cell in rows]


def markdown(number: int, products: list[WebSwitchProfile]) -> str:
    title, header, rows = table(number, products)
    lines = [f"Table {number}. {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
