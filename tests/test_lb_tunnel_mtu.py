"""The IP-in-IP tunnel's MTU and the tester's client ports, each against an
independent truth.

Tunnel: a client segment whose outer packet (inner + 20) exceeds the
balancer's IP MTU is dropped (tunnel_mtu_exceeded) and, DF set, answered
with ICMP "fragmentation needed" (RFC 792 type 3 code 4) carrying the
next-hop MTU MTU - 20 (RFC 1191), as IPVS does (ip_vs_xmit.c). The client
then sends at mss = next-hop MTU - 40 (RFC 1191/8201 path MTU discovery) and
the connection completes: one ICMP per connection at descriptor level,
since each http10 connection of these runs has its own client address and
the clients cache the path MTU per (client, VIP), as Linux does (at packet
level a second one when the answer comes back after the next segment left). The ICMP bytes are the core's
golden vector, re-checked here with Python's own RFC 1071 sum.

Ports: at packet level the http10 clients go round the tester's client ports
(half the platform's ports): an offered load above one 10GbE port that fits
in all of them is carried without port drops (line-rate arithmetic)."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import pytest

from conftest import run_adx as run

ROOT = Path(__file__).resolve().parents[1]


def units_started(rate: float, duration_s: float) -> int:
    """Units of a constant-rate tester started in [0, duration): unit n at round(n x 1e12 / rate) ps."""
    mean = 1e12 / rate
    dur = round(duration_s * 1e12)
    return sum(1 for n in range(int(rate * duration_s) + 2) if round(n * mean) < dur)


def rfc1071(b: bytes) -> int:
    """The one's complement sum of 16-bit words (not complemented); 0xFFFF over a message that verifies."""
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def test_golden_icmp_frag_needed_verifies_with_python_checksums():
    """core/golden: the balancer's case, a 1500-byte DF segment 198.18.0.1 ->
    VIP 10.0.0.1 over a 1500-byte tunnel MTU, byte for byte as the C core
    built it on the host (the same transcript is compared on mips64 and
    aarch64 by ctest)."""
    vec = next(l for l in (ROOT / "core/golden/vectors/nat.txt").read_text().splitlines()
               if l.startswith("icmp icmp_lb "))
    sent = bytes.fromhex(vec.split()[-1])
    line = next(l for l in (ROOT / "core/golden/expected.txt").read_text().splitlines()
                if l.startswith("nat icmp_lb icmp "))
    assert " rc=0 len=70 " in line
    out = bytes.fromhex(line.split()[-1])
    ip, icmp = out[14:34], out[34:]
    assert out[:6] == sent[6:12] and out[6:12] == sent[:6]  # back to the sender
    assert rfc1071(ip) == 0xFFFF and rfc1071(icmp) == 0xFFFF
    assert ip[9] == 1 and ip[12:16] == bytes([10, 0, 0, 1]) and ip[16:20] == bytes([198, 18, 0, 1])
    assert struct.unpack("!H", ip[2:4])[0] == 20 + 8 + 28
    typ, code, _, unused, mtu = struct.unpack("!BBHHH", icmp[:8])
    assert (typ, code, unused, mtu) == (3, 4, 0, 1500 - 20)
    assert icmp[8:] == sent[14:14 + 28]  # the original header and 8 bytes (ports, sequence number)


TUNNEL = """
    workload: http10
    duration_us: 2000
    level: {level}
    mss: 1460
    request_sizes: {{sizes: table, table: {{3000: 1}}}}
    cases:
      - {{id: tun, rate: 36000, forwarding: tunnel}}
"""


@pytest.mark.parametrize("level", ["descriptor", "packet"])
def test_tunnel_requests_over_the_mtu_complete_after_one_icmp_per_connection(tmp_path, level):
    case = run(tmp_path, TUNNEL.format(level=level))["tun"]
    m, drops = case["metrics"], case["counters"]
    n = units_started(36000, 2e-3)
    assert n == 72
    # each connection's first request segment (1460 + 40 + 20 > 1500) is
    # dropped and answered, and each client learns the MTU once
    assert m["icmp_frag_needed_used"] == n
    assert drops.get("tunnel_mtu_exceeded") == m["icmp_frag_needed"]
    if level == "descriptor":
        # the verdict comes back before the next segment is due: one ICMP each
        assert m["icmp_frag_needed"] == n
    else:
        # an answer that waits on its core longer than the 10 us step gap
        # (behind another connection's SYN: 12.5 us) finds the request's
        # second 1460-byte segment on its way: dropped and answered too, as
        # for a real TCP with two segments in flight; never more than that
        assert n <= m["icmp_frag_needed"] <= 2 * n
    # then the request goes at mss 1480 - 40 = 1440: 3000 = 1440 + 1440 + 120, 3 segments;
    # with the SYN, the ACK and the FIN, 6 client frames reach the server
    assert math.ceil(3000 / 1440) == 3
    assert m["frames_to_servers"] == 6 * n
    assert m["delivery_errors"] == 0
    assert m["units_failed"] == 0
    # completions in the 1.8 ms window within one connection of the starts
    # (the window's edges cut a unit of 11 steps differently from one of 8)
    assert abs(m["cps"] - m["offered_rate"]) * 1.8e-3 <= 1 + 1e-9


def test_tunnel_requests_that_fit_draw_no_icmp(tmp_path):
    # 1440-byte segments: 1480 + 20 = 1500 fits the tunnel exactly
    case = run(tmp_path, TUNNEL.format(level="descriptor").replace("mss: 1460", "mss: 1440"))["tun"]
    m = case["metrics"]
    assert m["icmp_frag_needed"] == 0 and "tunnel_mtu_exceeded" not in case["counters"]
    assert m["frames_to_servers"] == 6 * units_started(36000, 2e-3) and m["units_failed"] == 0


def test_http10_clients_spread_over_the_tester_ports(tmp_path):
    """100 kB responses at 20,000 connections/s through full NAT: more than
    one 10GbE port carries, less than the 8 client ports do. Every response
    segment crosses a client port (the balancer to the tester): per
    connection 68 full segments and one of 100000 - 68 x 1460 = 720 bytes,
    each frame 14 + 40 + payload + 4 FCS (at least 64) + 20 preamble and gap
    on the wire, and the client's ACK of every second segment but the last
    (34 ACKs of 84 octets on the wire the other way, on its own port)."""
    cps, size, mss, ports = 20000, 100_000, 1460, 16
    segs = math.ceil(size / mss)
    wire = lambda payload: max(14 + 40 + payload + 4, 64) + 20
    per_conn_bits = 8 * ((segs - 1) * wire(mss) + wire(size - (segs - 1) * mss))
    offered_bps = cps * per_conn_bits
    client_ports = ports // 2
    assert offered_bps > 10e9  # one port cannot carry it
    assert offered_bps / client_ports < 10e9  # each of the 8 carries its share
    case = run(tmp_path, f"""
        workload: http10
        duration_us: 2000
        warmup_us: 0
        level: packet
        response_sizes: {{sizes: table, table: {{{size}: 1}}}}
        cases:
          - {{id: spread, rate: {cps}, forwarding: fullnat}}
    """)["spread"]
    m, drops = case["metrics"], case["counters"]
    assert "tx_queue_full" not in drops
    assert m["units_failed"] == 0
    # A unit is its script (windows off): SYN, SYN-ACK, ACK, the request,
    # the response's 69 segments and 34 ACKs, the two FINs and the last ACK,
    # 10 us apart, and the last one's own latency. On one port the
    # responses' backlog would grow at (offered - 10 Gbit/s) / offered of the
    # response phase, about 440 us; spread, no port holds a standing queue:
    # every unit ends within a tenth of that of its script.
    script_us = 10 * (7 + segs + (segs - 1) // 2 - 1)
    backlog_us = script_us * (1 - 10e9 / offered_bps)
    assert backlog_us > 400
    assert script_us <= m["unit_latency_max_us"] < script_us + backlog_us / 10


def test_http11_clients_cache_the_path_mtu_per_vip(tmp_path):
    """IxLoad's users each have one address (198.18.u.1) and one virtual
    service, with 20 connections: once a user's first transaction learnt
    the tunnel's MTU, its later connections to that VIP start at the learnt
    mss, as Linux caches a path MTU per destination. 200 transactions go
    round the 1920 connections in order: connections 0..199, users 0..9, so
    10 ICMPs, one per client, and every transaction completes."""
    case = run(tmp_path, """
        workload: http11
        duration_us: 2000
        request_sizes: {sizes: table, table: {3000: 1}}
        cases:
          - {id: h11, rate: 100000, forwarding: tunnel}
    """)["h11"]
    m = case["metrics"]
    transactions = units_started(100000, 2e-3)
    users = len({conn // 20 for conn in range(transactions)})
    assert (transactions, users) == (200, 10)
    assert m["icmp_frag_needed"] == m["icmp_frag_needed_used"] == users
    assert case["counters"]["tunnel_mtu_exceeded"] == users
    assert m["units_failed"] == 0
    # each request: 3 segments of at most 1440 bytes reach the server
    assert m["frames_to_servers"] == 3 * transactions
