"""The NCTU testbed as a closed queueing network, solved exactly by MVA
(routertwin.runners.webswitch.mva): WebBench threads are the customers,
each request one cycle through the stations it uses, with think time 0.

Stations (demand per request; a set of identical machines is one station
per machine, each visited by its share of the requests):
- each client PC: its CPU, its 100 Mbit/s link towards the L2 switch
  (requests, ACKs) and from it (responses);
- the GbE uplink between the L2 switch and the web switch, each direction
  carrying every frame that passes the web switch once;
- the web switch's processor: the product profile's cycles per operation,
  counted per request below, at its clock;
- the switch's I/O bus, where its profile names one (F5: PCI, seed 003
  section 5.2): every frame through the switch crosses it into memory and
  out again;
- each server PC: its CPU, its 100 Mbit/s link in and out;
- a delay (no queueing): round trips in the hosts' stacks and the L2
  switch's latency per crossing.

What passes the web switch (seed 003 sections 3.3, 3.4 and 5.4):
- L4 direct routing: the client's packets only (requests, ACKs); the
  servers answer through the L2 switch.
- L4 NAT and every L7 case: both directions.
- HTTP/1.1 on L4: one kept-alive connection per thread, its set-up spread
  over the run (WebBench keeps it): no handshake per request.
- L7 (delayed binding): the switch is each connection's end on both sides.
  Per request it parses the request, evaluates URL rules (counted by the C
  core's dp_urlrule on each file class's path), splices every
  data packet, and per the product's keep-alive strategy opens client and
  server connections (`connections_per_request`).

Cookie persistence (`persistence: cookie`, section 3.5, figure 12): the
testbed's one ASP page on every server, no URL rules; the switch does the
L7 path and the work of its profile's cookie method (`cookie_ops`).

Serialization of one response on the server's link and again on the
client's link is counted on both (store-and-forward of the whole response,
where the wires pipeline segments): latency at low load is over-counted by
about one response's serialization; docs/nctu.md says so.
"""

from __future__ import annotations

import functools
import itertools
import string
from dataclasses import dataclass

from routertwin.runners.webswitch.mva import Solution, Station, solve
from routertwin.runners.webswitch.profiles import WebSwitchProfile
from routertwin.runners.webswitch.testbed import (HANDSHAKE_SEGMENTS_FROM_ACCEPTER, HANDSHAKE_SEGMENTS_FROM_OPENER,
                                                  Testbed, Traffic, cookie_testbed, traffic)


# IEEE 802.3: 8 bytes of preamble and SFD and a 12-byte inter-frame gap,
# on the wire but never in a NIC's DMA
ETHERNET_PREAMBLE_AND_GAP_BYTES = 20


@dataclass(frozen=True)
class Case:
    """One measurement of the paper: a product in a mode on the testbed."""

    product: WebSwitchProfile
    mode: str  # "l4" | "l7"
    forwarding: str  # "dr" | "nat" (l7: nat, the switch is in both directions)
    http: str  # "1.0" | "1.1"
    rules: int  # URL rules configured (l7)
    clients: int
    servers: int
    # "cookie": section 3.5's cookie-persistence test (one ASP page, the
    # switch persists by the profile's cookie_method_tested, no URL rules)
    persistence: str = "none"


def redirect_probability(share: dict[str, float]) -> float:
    """HTTP 302 strategy: the chance that a request's content is not on the
    server its kept-alive connection is bound to. Section 3.4's rules put
    .gif on one half of the servers and .htm on the other; any server
    answers other names. With requests drawn independently, the
    connection's half is a two-state Markov chain (gif half, htm half) that
    moves at a request of the other half's kind: stationary P(gif half) =
    g / (g + h), and a redirect happens at rate 2 g h / (g + h)."""
    g, h = share["gif"], share["htm"]
    return 0.0 if g + h == 0 else 2.0 * g * h / (g + h)


def connections_per_request(case: Case, share: dict[str, float]) -> tuple[float, float, float]:
    """(client-side connections, server-side connections, redirects) opened
    per request, by HTTP version and the product's keep-alive strategy
    (seed 003 section 5.4)."""
    if case.mode == "l4":
        return (0.0, 0.0, 0.0) if case.http == "1.1" else (1.0, 1.0, 0.0)
    strategy = case.product.behaviour.keepalive
    if case.http == "1.0" or strategy == "downgrade_close":
        return 1.0, 1.0, 0.0
    if strategy == "rst_server":
        return 0.0, 1.0, 0.0
    if strategy == "redirect_302":
        q = redirect_probability(share)
        return q, q, q
    if strategy == "server_reuse":
        return 0.0, 0.0, 0.0
    raise ValueError(f"{case.product.platform}: keep-alive strategy {strategy!r} does no URL switching")


def rule_list(count: int) -> list[tuple[str, str]]:
    """The URL rules of section 3.4, in the order configured, as the C
    core's (kind, pattern): .gif, .htm, then the extension rules that pad
    the list (.aaa, .aab, ...: "依此類推, 直到有 50 條 URL 規則為止"), then
    the default that takes every other name (a path beginning with "/");
    `count` counts them all (3 = .gif, .htm, default)."""
    padding = ["".join(letters) for letters in itertools.product(string.ascii_lowercase, repeat=3)][:count - 3]
    return [("ext", "gif"), ("ext", "htm"), *(("ext", p) for p in padding), ("path_beg", "/")]


@functools.lru_cache(maxsize=None)
def path_rule_ops(method: str, count: int, servers: int, path: str) -> tuple[float, float]:
    """(rules evaluated, bytes compared) by the C core (dp_urlrule) for one
    request path: first_match stops at the first match
    (dp_urlrule_match), best_match evaluates every rule
    (dp_urlrule_match_all), per_server_all evaluates every rule of every
    server's list (section 5.5: 50 rules x 14 servers = 700)."""
    from routertwin import _core

    rules = rule_list(count)
    if method == "per_server_all":
        rules = rules * servers
    elif method not in ("first_match", "best_match"):
        raise ValueError(f"rule matching {method!r} does no URL switching")
    r = _core.url_rules_eval(rules, "first", method != "first_match", path)
    if not r["matched"]:
        raise ValueError(f"no rule of {count} matches {path!r}: the default rule is missing")
    return float(r["rules_evaluated"]), float(r["bytes_compared"])


def rule_ops(case: Case, tb: Testbed) -> tuple[float, float]:
    """Mean (rules evaluated, bytes compared) per request over the file
    classes: each class's request path (the testbed's url_prefix and the
    class name) through the C core's URL rules."""
    total = sum(c.share for c in tb.file_classes)
    rules = compared = 0.0
    for c in tb.file_classes:
        n, b = path_rule_ops(case.product.behaviour.rule_matching, case.rules, case.servers, tb.url_prefix + c.name)
        rules += c.share / total * n
        compared += c.share / total * b
    return rules, compared


def server_cookie(j: int) -> str:
    """The pre-arranged cookie of server j (section 5.6: "ServerA 裡面的網頁
    會自己發一個 cookie 叫 Server=A")."""
    return f"Server={string.ascii_uppercase[j % 26]}{j // 26 or ''}"


@functools.lru_cache(maxsize=None)
def prearranged_cookie_ops(servers: int) -> tuple[float, float]:
    """Mean (rules evaluated, bytes compared) to find a request's server by
    its pre-arranged cookie: one rule per server ("Server=A" to server A,
    ...), in order, first match, run by the C core's dp_urlrule on the
    cookie's value; requests spread evenly over the servers."""
    from routertwin import _core

    # each value ends at the ';' that separates cookies, so Server=A never
    # matches Server=A1's rule
    rules = [("path_beg", server_cookie(j) + ";") for j in range(servers)]
    evaluated = compared = 0.0
    for j in range(servers):
        r = _core.url_rules_eval(rules, "first", False, server_cookie(j) + ";")
        evaluated += r["rules_evaluated"] / servers
        compared += r["bytes_compared"] / servers
    return evaluated, compared


def cookie_ops(case: Case, tb: Testbed) -> tuple[float, float, float, float]:
    """(rules evaluated, bytes compared, response header bytes parsed,
    headers rewritten) per request for cookie persistence by the profile's
    tested method (section 5.6):
    - prearranged: the request's Server=X cookie matched against one rule
      per server; responses pass untouched;
    - insert: the switch's cookie names the server, so one lookup; every
      response's header is parsed to its end and a Set-Cookie inserted
      (a rewrite: the segment rebuilt, later sequence numbers offset);
    - learn: one lookup of the request's cookie value; every response's
      header is parsed for the cookie name and the value learnt (one
      table entry written, priced as one rule)."""
    method = case.product.behaviour.cookie_method_tested
    if method == "prearranged":
        rules, compared = prearranged_cookie_ops(case.servers)
        return rules, compared, 0.0, 0.0
    if method == "insert":
        return 1.0, 0.0, float(tb.response_header_bytes), 1.0
    if method == "learn":
        return 2.0, 0.0, float(tb.response_header_bytes), 0.0
    raise ValueError(f"cookie method {method!r}")


@dataclass(frozen=True)
class SwitchWork:
    """What the web switch does per request (means)."""

    packets: float  # packets it receives and forwards
    control_packets: float  # connection set-up/teardown segments on its wires
    connections: float  # connection sides it opens and closes
    rules: float  # URL rules evaluated
    rule_bytes: float  # bytes the rules compared
    parsed_bytes: float  # request bytes parsed
    rewrites: float  # headers rewritten
    redirects: float  # HTTP 302 answers
    cycles: float  # of the switch's processor


def switch_work(case: Case, tb: Testbed, t: Traffic) -> SwitchWork:
    p = case.product
    c_conn, s_conn, redirects = connections_per_request(case, t.group_share)
    control = (c_conn + s_conn) * (HANDSHAKE_SEGMENTS_FROM_OPENER + HANDSHAKE_SEGMENTS_FROM_ACCEPTER)
    if case.mode == "l4":
        data = t.packets_client_to_server + (t.packets_server_to_client if case.forwarding == "nat" else 0.0)
        # DR: only the client's control segments reach the switch
        if case.forwarding == "dr":
            control = c_conn * HANDSHAKE_SEGMENTS_FROM_OPENER
        cycles = p.costs.l4_packet_cycles * (data + control)
        return SwitchWork(data, control, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, cycles)
    c = p.costs
    data = t.packets_client_to_server + t.packets_server_to_client + 2.0 * redirects  # a 302 and its ACK
    response_parsed = cookie_rewrites = 0.0
    if case.persistence == "cookie":
        per_match, per_match_bytes, response_parsed, cookie_rewrites = cookie_ops(case, tb)
    else:
        per_match, per_match_bytes = rule_ops(case, tb)
    rules = per_match * (1.0 + redirects)  # a redirected request is matched twice
    rule_bytes = per_match_bytes * (1.0 + redirects)
    parsed = tb.request_bytes * (1.0 + redirects) + response_parsed
    rewrites = 1.0 if case.http == "1.1" and p.behaviour.keepalive == "downgrade_close" else 0.0
    rewrites += cookie_rewrites
    conns = c_conn + s_conn
    cycles = (c.l7_packet_cycles * data + c.connection_cycles * conns + c.rule_cycles * rules
              + c.rule_byte_cycles * rule_bytes + c.parse_byte_cycles * parsed + c.rewrite_cycles * rewrites)
    return SwitchWork(data, control, conns, rules, rule_bytes, parsed, rewrites, redirects, cycles)


def server_shares(case: Case, share: dict[str, float]) -> list[dict[str, float]]:
    """Per server, the share of all requests of each group it serves (round
    robin within the servers a rule names). L4: every server takes 1/S of
    every group. L7 (section 3.4): .gif to the first half, .htm to the
    second half, other names to any server."""
    s = case.servers
    if case.mode == "l4":
        return [{g: v / s for g, v in share.items()} for _ in range(s)]
    half = s // 2
    out = []
    for j in range(s):
        out.append({"gif": share["gif"] / half if j < half else 0.0,
                    "htm": share["htm"] / (s - half) if j >= half else 0.0,
                    "other": share["other"] / s})
    return out


def stations(case: Case, tb: Testbed) -> tuple[list[Station], SwitchWork, Traffic]:
    net = tb.network
    t = traffic(tb)
    by_group = {g: traffic(tb, g) for g, v in t.group_share.items() if v > 0}
    work = switch_work(case, tb, t)
    c_conn, s_conn, redirects = connections_per_request(case, t.group_share)
    ctrl_bytes = t.ack_wire_bytes  # a control segment is a bare TCP segment
    host_bit = 8.0 / net.host_link_bps
    out: list[Station] = []
    # clients: every request from one of them, in turn
    cl_cpu = (tb.client.cpu_per_request_us * (1.0 + redirects) + tb.client.cpu_per_connection_us * c_conn) * 1e-6
    cl_tx = (t.client_to_server_wire_bytes + redirects * t.request_wire_bytes
             + c_conn * HANDSHAKE_SEGMENTS_FROM_OPENER * ctrl_bytes) * host_bit
    cl_rx = (t.response_wire_bytes + redirects * (tb.response_header_bytes + ctrl_bytes)
             + c_conn * HANDSHAKE_SEGMENTS_FROM_ACCEPTER * ctrl_bytes) * host_bit
    for i in range(case.clients):
        out += [Station(f"client{i + 1}.cpu", cl_cpu / case.clients),
                Station(f"client{i + 1}.link_out", cl_tx / case.clients),
                Station(f"client{i + 1}.link_in", cl_rx / case.clients)]
    # servers: each by the share of the groups it serves
    srv_conn_opened = s_conn if case.mode == "l7" else c_conn
    for j, mine in enumerate(server_shares(case, t.group_share)):
        n = sum(mine.values())
        resp = sum(v * by_group[g].response_wire_bytes for g, v in mine.items() if v > 0)
        req = sum(v * by_group[g].client_to_server_wire_bytes for g, v in mine.items() if v > 0)
        ctrl_out = n * srv_conn_opened * HANDSHAKE_SEGMENTS_FROM_ACCEPTER * ctrl_bytes
        ctrl_in = n * srv_conn_opened * HANDSHAKE_SEGMENTS_FROM_OPENER * ctrl_bytes
        cpu = n * (tb.server.cpu_per_request_us + tb.server.cpu_per_connection_us * srv_conn_opened) * 1e-6
        out += [Station(f"server{j + 1}.cpu", cpu),
                Station(f"server{j + 1}.link_in", (req + ctrl_in) * host_bit),
                Station(f"server{j + 1}.link_out", (resp + ctrl_out) * host_bit)]
    # the uplink: every frame through the switch, once each way
    through = t.client_to_server_wire_bytes + work.control_packets * ctrl_bytes
    if case.mode == "l7" or case.forwarding == "nat":
        through += t.response_wire_bytes
    if case.mode == "l7":
        through += redirects * (t.request_wire_bytes + tb.response_header_bytes + ctrl_bytes)
    up_bit = 8.0 / net.uplink_bps
    out += [Station("uplink.to_switch", through * up_bit), Station("uplink.from_switch", through * up_bit)]
    out.append(Station("switch.cpu", case.product.us(work.cycles) * 1e-6))
    bus = case.product.costs.io_bus_bytes_per_s
    if bus is not None:
        # every frame through the switch crosses its I/O bus by DMA into
        # memory and out again, without preamble and inter-frame gap
        frames = work.packets + work.control_packets
        dma = (through - frames * ETHERNET_PREAMBLE_AND_GAP_BYTES) * case.product.costs.io_bus_crossings
        out.append(Station("switch.io_bus", dma / bus))
    # delays: a round trip per request, one per connection opened on each
    # side (delayed binding opens the server side after the request), one
    # per redirect; the L2 switch per crossing (request and response, twice
    # each through the web switch, once when the server answers directly)
    trips = 1.0 + c_conn + (s_conn if case.mode == "l7" else 0.0) + redirects
    crossings = 3.0 if (case.mode == "l4" and case.forwarding == "dr") else 4.0
    delay = (trips * net.host_round_trip_us + crossings * net.l2_switch_latency_us) * 1e-6
    out.append(Station("hosts_and_l2", delay, delay=True))
    return out, work, t


@dataclass(frozen=True)
class Result:
    solution: Solution
    work: SwitchWork
    traffic: Traffic

    @property
    def requests_per_s(self) -> float:
        return self.solution.throughput

    @property
    def latency_ms(self) -> float:
        return self.solution.response_s * 1e3

    @property
    def response_mbps(self) -> float:
        """HTTP response bytes (headers and bodies) per second, as WebBench counts them."""
        return self.solution.throughput * self.traffic.response_bytes * 8e-6


def case_testbed(case: Case, tb: Testbed) -> Testbed:
    """The testbed a case runs on: the cookie test's page and headers for
    persistence "cookie", the appendix-4 file set otherwise."""
    if case.persistence == "cookie":
        return cookie_testbed(tb, switch_inserts=case.product.behaviour.cookie_method_tested == "insert")
    return tb


def evaluate(case: Case, tb: Testbed) -> Result:
    sts, work, t = stations(case, case_testbed(case, tb))
    return Result(solve(sts, case.clients * tb.client.threads), work, t)
