"""Web-switch product profiles (scenarios/platforms/nctu-*.yaml): what the
NCTU comparison (seed 003) says of each of its six switches, as data.

A profile has four parts:
- `product` and `hardware`: tables 2 and 3 of the paper (vendor, name,
  software, ports, processor, memory, size, price).
- `features`: tables 4 (L4), 5 (L7), 6 (fault tolerance) and 7 (other),
  as typed values; routertwin.runners.webswitch.tables renders the paper's
  cells from them. A feature is true (Yes), false (No) or null (N/A).
- `behaviour`: the strategies section 5 describes: the L4 forwarding path,
  how URL rules are matched, how HTTP/1.1 keep-alive is handled, which
  cookie-persistence methods exist and which one figure 12 used.
- `costs`: what the switch's processor spends per operation, in cycles at
  `clock_mhz`. The paper gives clocks for three products only (table 3);
  every other number is an assumption with a range.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from routertwin.runners._shared.profiles import load_profile
from routertwin.scenario_loader import FieldError, ScenarioModel

Feature = bool | None  # Yes / No / N/A in the paper's tables


class Product(ScenarioModel):
    vendor: str
    name: str  # table 2
    software: str  # table 3 "OS/firmware", or the version section 5.4 names
    price: str  # table 3, as printed


class Hardware(ScenarioModel):
    ports_10_100: int = Field(ge=0)
    ports_1g: int = Field(ge=0)
    ports_1g_optional: bool = False  # table 3: "2 (optional)"
    ports_either: bool = False  # table 3 footnote *: each port is 10/100 or 1G, not both
    processor: str  # table 3, as printed
    memory: str
    size_weight: str
    config_storage: Literal["flash", "disk"]  # section 2: F5 and Cisco keep it on a disk


class Dispatch(ScenarioModel):
    name: str  # the vendor's name for the metric, as table 4 prints it
    weighted: bool = False  # table 4's superscript w


class L4Features(ScenarioModel):
    nat: Feature
    direct_routing: Feature
    gslb: Feature
    gslb_note: str | None = None  # "for WSD-DS"
    dispatch: list[Dispatch]
    firewall_lb: Feature
    vpn_lb: Feature


class L7Features(ScenarioModel):
    url_switching: bool
    cookie_persistence: Feature
    ssl_id_persistence: Feature
    matching_rules: list[str]  # rule kinds, as table 5 prints them
    rule_limit: str | None  # table 5 "Number of rules", as printed
    rule_precedence: Feature


class FaultTolerance(ScenarioModel):
    active_active: Feature
    active_backup: Feature
    check_ping: Feature
    check_port: Feature
    check_web_page: Feature
    check_content: Feature


class OtherFeatures(ScenarioModel):
    bandwidth_management: Feature
    ip_routing: Feature
    secure_management: Feature
    packet_filtering: Feature
    anti_dos: Feature
    configuration: list[str]


class Features(ScenarioModel):
    l4: L4Features
    l7: L7Features
    fault_tolerance: FaultTolerance
    other: OtherFeatures


# How a product keeps an HTTP/1.1 connection when the next request belongs
# to another server (section 5.4):
#   rst_server      the client side stays keep-alive; the switch resets the
#                   server connection after each request (Nortel)
#   downgrade_close rewrites "Connection: keep-alive" to "close": HTTP/1.0
#                   behaviour on both sides (Foundry, Radware)
#   redirect_302    keeps both connections while requests stay on the
#                   server; otherwise answers 302 and the client reconnects (Cisco)
#   server_reuse    keeps every server connection it opened and splices the
#                   next request onto the right one (F5)
#   none            no URL switching (3Com)
KeepAlive = Literal["rst_server", "downgrade_close", "redirect_302", "server_reuse", "none"]

# How URL rules are evaluated for one request (section 5.5):
#   first_match     in order, stop at the first match
#   best_match      every rule, keep the most specific match
#   per_server_all  every rule of every server (Nortel: 50 x 14 = 700)
#   none            no URL switching
RuleMatching = Literal["first_match", "best_match", "per_server_all", "none"]


class Behaviour(ScenarioModel):
    l4_forwarding: Literal["hardware", "cpu"]  # who touches an L4 packet
    keepalive: KeepAlive
    rule_matching: RuleMatching
    cookie_methods: list[Literal["prearranged", "insert", "learn"]]  # section 5.6
    cookie_method_tested: Literal["prearranged", "insert", "learn"]  # figure 12's bar label
    # SSL service: a first record that is no readable ClientHello (dp_tls) is
    # forwarded without persistence or reset (model/l7)
    ssl_unparsed: Literal["forward", "reset"]
    # a request head that cannot be parsed: an RST to the client or a 400 (model/l7)
    malformed_request: Literal["reset", "bad_request"]
    # redundant pair: "connections" copies each L4 session and mirrors each
    # spliced L7 connection (and every persistence entry) to the other
    # switch, so a takeover keeps established connections; "persistence" copies learned cookies
    # and SSL session IDs only, so clients keep their servers but
    # connections are lost; "none": both are lost (model/l7
    # WebSwitch::SetSyncPeer)
    session_sync: Literal["none", "persistence", "connections"]
    # redundant pair: the master's advertisement (heartbeat) interval; the
    # backup takes over Master_Down_Interval = 3 x it + Skew_Time after the
    # last one (RFC 5798 6.1; VRRPv3 carries it in centiseconds, 12 bits)
    failover_advert_interval_s: float = Field(ge=0.01, le=40.95)


class Costs(ScenarioModel):
    """Processor time per operation, cycles at clock_mhz."""

    clock_mhz: float = Field(gt=0, le=10000)
    l4_packet_cycles: float = Field(ge=0)  # one packet on the L4 path (NAT or DR rewrite)
    # The I/O bus every forwarded frame crosses between the NICs and memory,
    # bytes/s, when the CPU forwards (a PC's PCI bus); absent: not a limit.
    io_bus_bytes_per_s: float | None = Field(default=None, gt=0, le=1e12)
    io_bus_crossings: int = Field(default=2, ge=1, le=8)  # DMA in and DMA out
    # The L7 path's costs; absent for a product without URL switching.
    l7_packet_cycles: float | None = Field(default=None, ge=0)  # one spliced packet (lookup, seq/ack translation, checksum)
    connection_cycles: float | None = Field(default=None, ge=0)  # one TCP connection side set up and torn down
    parse_byte_cycles: float | None = Field(default=None, ge=0)  # one request byte parsed (request line and headers)
    rule_cycles: float | None = Field(default=None, ge=0)  # one URL rule evaluated (dp_ops rules_evaluated)
    rule_byte_cycles: float | None = Field(default=None, ge=0)  # one byte a rule compared (dp_urlrule bytes_parsed)
    rewrite_cycles: float | None = Field(default=None, ge=0)  # one header rewritten (downgrade to close)


class WebSwitchProfile(ScenarioModel):
    platform: str
    product: Product
    hardware: Hardware
    features: Features
    behaviour: Behaviour
    costs: Costs

    @model_validator(mode="after")
    def _l7_costs_with_url_switching(self):
        l7 = ("l7_packet_cycles", "connection_cycles", "parse_byte_cycles", "rule_cycles", "rule_byte_cycles",
              "rewrite_cycles")
        for name in l7:
            if self.features.l7.url_switching and getattr(self.costs, name) is None:
                raise FieldError(("costs", name), "required: the product does URL switching (features.l7.url_switching)")
            if not self.features.l7.url_switching and getattr(self.costs, name) is not None:
                raise FieldError(("costs", name), "the product does no URL switching (features.l7.url_switching): "
                                                  "an L7 cost means nothing")
        if self.features.l7.url_switching == (self.behaviour.keepalive == "none"):
            raise FieldError(("behaviour", "keepalive"), "'none' exactly when features.l7.url_switching is false")
        if self.features.l7.url_switching == (self.behaviour.rule_matching == "none"):
            raise FieldError(("behaviour", "rule_matching"), "'none' exactly when features.l7.url_switching is false")
        if self.behaviour.cookie_method_tested not in self.behaviour.cookie_methods:
            raise FieldError(("behaviour", "cookie_method_tested"), "must be one of behaviour.cookie_methods")
        return self

    def us(self, cycles: float) -> float:
        """Microseconds of `cycles` at the profile's clock."""
        return cycles / self.costs.clock_mhz


def load_webswitch(path: Path) -> WebSwitchProfile:
    return load_profile(Path(path), WebSwitchProfile)
