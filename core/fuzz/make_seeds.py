#!/usr/bin/env python3
"""Writes the seed corpora of the LPM, build, NAT, SYN-cookie, session and
DNS fuzzers (core/fuzz/corpus-lpm/, corpus-build/, corpus-nat/,
corpus-syncookie/, corpus-session/, corpus-dns/); the
input layouts are described at the top of each harness. Each seed reaches
a case the harness checks: overlapping prefixes, a rule covering the whole
fuzzed region, second-level groups and rule store running out, bulk
lookups; UDP and TCP builds with and without checksums and payload,
padding, buffers one byte short, oversized and unsupported specs; every
balancer rewrite on TCP, UDP with and without checksum, ICMP, fragments,
short headroom, an MTU one byte short and stale parse results; cookie round
trips, a SYN-ACK, the client's ACK and a segment that is not a SYN; full
session shards, handshakes and closes, one-session connections, budgeted
expiry and duplicate keys; DNS queries of every outcome, with and without
EDNS, small buffers, frames.

The scheduler seeds (core/fuzz/corpus-sched/, layout at the top of
fuzz_sched.c) give each algorithm a small weighted pool with picks, held
connections, maxconn, a backup, a server going down, draining and coming
back with a slow start. The health and persist seeds (corpus-health/,
corpus-persist/) cross rise and fall in both directions and fill the
stick table's set past its 8 ways under purge and nopurge.

Deterministic: re-running rewrites identical files.
Usage: python3 core/fuzz/make_seeds.py
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def addr(a, b, c):
    """The three address bytes of 10.a.b.c (a in 0..3)."""
    return bytes([a, b, c])


def depth(d):
    """Depth byte for /d (12 <= d <= 32): the harness reads 12 + byte % 21."""
    assert 12 <= d <= 32
    return bytes([d - 12])


def add(d, a, b, c, hop):
    return b"\x00" + depth(d) + addr(a, b, c) + hop.to_bytes(3, "big")


def delete(d, a, b, c):
    return b"\x01" + depth(d) + addr(a, b, c)


def lookup(a, b, c):
    return b"\x02" + addr(a, b, c)


def bulk(*addrs):
    return b"\x03" + bytes([len(addrs)]) + b"".join(addr(*x) for x in addrs)


def lpm_seeds():
    nested = [add(12, 0, 0, 0, 1), add(16, 1, 0, 0, 2), add(24, 1, 2, 0, 3), add(25, 1, 2, 128, 4),
              add(32, 1, 2, 200, 5)]
    probes = [lookup(1, 2, 200), lookup(1, 2, 201), lookup(1, 2, 1), lookup(1, 3, 0), lookup(2, 0, 0)]
    yield "nested", b"".join(nested + probes)
    yield "nested_delete", b"".join(nested + [delete(25, 1, 2, 128), delete(32, 1, 2, 200), delete(24, 1, 2, 0)]
                                    + probes + [delete(24, 1, 2, 0)])
    yield "whole_region", add(14, 0, 0, 0, 9) + lookup(3, 255, 255) + add(30, 3, 9, 4, 10) + delete(14, 0, 0, 0) \
        + lookup(3, 9, 5) + lookup(3, 9, 8)
    # Four second-level groups: the fifth split /24 is refused, a longer
    # rule in an already split /24 is not.
    groups = [add(28, 0, g, 16, 20 + g) for g in range(5)] + [add(30, 0, 1, 32, 30), delete(28, 0, 0, 16),
                                                               add(28, 0, 4, 16, 24)]
    yield "groups_exhausted", b"".join(groups) + lookup(0, 4, 17)
    yield "rules_exhausted", b"".join(add(24, 2, n, 0, n) for n in range(26)) + add(24, 2, 3, 0, 99)
    yield "replace_hop", add(20, 1, 16, 0, 7) + add(20, 1, 16, 0, 8) + lookup(1, 20, 3)
    yield "bulk", b"".join(nested) + bulk((1, 2, 200), (1, 2, 129), (1, 2, 0), (0, 0, 0), (3, 3, 3))


def build_spec(sel, src, dst, sport, dport, ttl, ip_id, seq, ack, flags, paylen, bits, payload=b""):
    head = struct.pack("!BIIHHBHIIB", sel, src, dst, sport, dport, ttl, ip_id, seq, ack, flags)
    return head + struct.pack("!H", paylen) + bytes([bits]) + payload


def build_seeds():
    a, b = 0xC0A80001, 0xC0A800C7
    yield "udp_min", build_spec(0, a, b, 1234, 53, 64, 1, 0, 0, 0, 0, 0)
    yield "udp_csum_payload", build_spec(0, a, b, 1234, 53, 64, 2, 0, 0, 0, 17, 3, bytes(range(17)))
    yield "tcp_csum", build_spec(4, a, b, 40000, 80, 128, 3, 0x01020304, 0x05060708, 0x18, 100, 1)
    yield "tcp_payload", build_spec(4, a, b, 40000, 443, 1, 4, 7, 9, 0x02, 30, 3, bytes(range(100, 130)))
    yield "buffer_one_short", build_spec(0, a, b, 1, 2, 64, 5, 0, 0, 0, 1000, 4)
    yield "buffer_59", build_spec(4, a, b, 1, 2, 64, 6, 0, 0, 0, 0, 12)
    yield "spare_room", build_spec(0, a, b, 1, 2, 64, 7, 0, 0, 0, 5, 8)
    yield "bad_protocol", build_spec(47, a, b, 1, 2, 64, 8, 0, 0, 0, 10, 0)
    # Lengths with bit 15 set are taken whole: 65507 (0xFFE3) is the largest
    # UDP payload (20 + 8 + 65507 = 65535); 65496 (0xFFD8) is one more than
    # the largest TCP payload (20 + 20 + 65495 = 65535).
    yield "udp_largest", build_spec(0, a, b, 1, 2, 64, 9, 0, 0, 0, 0xFFE3, 1)
    yield "tcp_too_long", build_spec(4, a, b, 1, 2, 64, 10, 0, 0, 0, 0xFFD8, 0)


# The frame helpers of the golden-vector generator (Python struct and its
# own checksums), shared rather than written a second time.
sys.path.insert(0, os.path.join(HERE, "..", "golden"))
from make_vectors import cookie_make, ipv4, l4_fix, tcp, udp  # noqa: E402


def eth_frame(l3, vlan=None):
    hdr = bytes.fromhex("02000000000102000000000281000064" if vlan else "020000000001020000000002")
    frame = hdr + b"\x08\x00" + l3
    return frame + b"\0" * max(0, 60 - len(frame))


def nat_spec(flags, op, headroom=32, mtu=1500, stale=0, which=0, value=0):
    """The 22-byte header of fuzz_nat.c."""
    return struct.pack("!BIHIHBHBHBH", flags | (op << 2) | (stale << 5), 0x0a640001, 40001, 0xc0a80a0b, 8080,
                       headroom, mtu, 0, 0x1234, which, value)


def nat_seeds():
    syn_opts = b"\x02\x04\x05\xb4\x01\x03\x03\x07"
    t = l4_fix(ipv4(0xc6120001, 0xc6130001, 6, tcp(40000, 80, b"GET / HTTP/1.1\r\n", flags=0x18, doff=7,
                                                    options=syn_opts, seq=7, ack=9), options=b"\x01" * 4))
    u = l4_fix(ipv4(0xc6120002, 0xc6130002, 17, udp(5353, 53, b"\x12\x34" + b"\0" * 20)))
    u0 = ipv4(0xc6120003, 0xc6130003, 17, udp(5353, 53, b"\x12\x34" + b"\0" * 20))
    icmp = ipv4(0xc6120004, 0xc6130004, 1, b"\x08\x00" + b"\0" * 30)
    later = ipv4(0xc6120005, 0xc6130005, 17, b"z" * 24, frag=0x0003)
    first = l4_fix(ipv4(0xc6120006, 0xc6130006, 17, udp(1, 2, b"y" * 40), frag=0x2000))
    big = l4_fix(ipv4(0xc6120007, 0xc6130007, 6, tcp(1, 2, b"x" * 1460), frag=0x4000))
    yield "dnat_tcp_vlan", nat_spec(1, 0) + eth_frame(t, vlan=True)
    yield "snat_udp", nat_spec(1, 1) + eth_frame(u)
    yield "full_udp_no_csum", nat_spec(1, 2) + eth_frame(u0)
    yield "full_icmp", nat_spec(1, 2) + eth_frame(icmp)
    yield "dnat_later_fragment", nat_spec(3, 0) + eth_frame(later)
    yield "dnat_first_fragment", nat_spec(3, 0) + eth_frame(first)
    yield "dr_tcp", nat_spec(1, 3) + eth_frame(t)
    yield "ipip_tcp_vlan", nat_spec(1, 4) + eth_frame(t, vlan=True)
    yield "ipip_short_headroom", nat_spec(1, 4, headroom=19) + eth_frame(u)
    yield "ipip_df_over_mtu", nat_spec(1, 4, mtu=1519) + eth_frame(big)
    yield "full_then_ipip", nat_spec(1, 5) + eth_frame(t)
    yield "stale_l3_offset", nat_spec(1, 2, stale=1, which=0, value=18) + eth_frame(t)
    yield "stale_total_len", nat_spec(1, 4, stale=1, which=3, value=1000) + eth_frame(u)


def syncookie_seeds():
    key = bytes(range(16))
    head = lambda mode, bits=4, age=1, counter=1000: struct.pack("!BBB16sI", mode, bits, age, key, counter)
    tup = struct.pack("!IIHH", 0xc6120001, 0xc6130001, 40000, 80)
    yield "round_trip", head(0) + tup + struct.pack("!HII", 1460, 1, 0x00000001)
    yield "round_trip_old", head(0) + tup + struct.pack("!HII", 1300, 2, 0x80000000)
    yield "round_trip_wide_counter", head(0, bits=20, age=200) + tup + struct.pack("!HII", 9000, 150, 0x10)
    pad = bytes(10)  # MSS, age and mask: unused by the frame modes
    syn = l4_fix(ipv4(0xc6120001, 0xc6130001, 6, tcp(40000, 80, b"", flags=0x02, doff=8, seq=0x01020304,
                                                      options=b"\x02\x04\x05\xb4\x01\x03\x03\x07\x04\x02\x00\x00")))
    yield "synack", head(1) + tup + pad + eth_frame(syn)
    yield "synack_vlan_room", head(5) + tup + pad + eth_frame(syn, vlan=True)
    # The client's ACK of that SYN-ACK (cookie made with C = 1 + 4 % 21 = 5).
    c = cookie_make(key, 5, 0xc6120001, 0xc6130001, 40000, 80, 1460, 1000)
    ack = l4_fix(ipv4(0xc6120001, 0xc6130001, 6, tcp(40000, 80, b"", flags=0x10, seq=0x01020305,
                                                      ack=(c + 1) & 0xFFFFFFFF)))
    yield "ack", head(3) + tup + pad + eth_frame(ack)
    yield "not_a_syn", head(1) + tup + pad + eth_frame(ack)
ALGOS = ["rr", "wrr", "lc", "wlc", "sh", "maglev", "roundrobin", "static-rr", "leastconn", "first", "source",
         "source-consistent", "random"]


def sched_seeds():
    def srv(i, w, maxconn=0, opts=0):
        return bytes([0, i, w, maxconn, opts])

    def state(i, st):
        return bytes([1, i, st])

    def pick(a, b, c):
        return bytes([2, a, b, c])

    def opened(i):
        return bytes([3, i])

    def closed(i, inactive=0):
        return bytes([4, i, inactive])

    def tick(n):
        return bytes([7, n])

    for k, name in enumerate(ALGOS):
        ipvs = k <= 5
        head = bytes([k, 5, 0x01 if ipvs else 0x02, 0, 8])
        body = srv(0, 3) + srv(1, 2, 2) + srv(2, 1) + srv(3, 1, 0, 0 if ipvs else 1) + srv(4, 0)
        body += b"".join(pick(1, j, 3 * j) + opened(j % 3) for j in range(8))
        body += state(0, 1) + b"".join(pick(2, j, j) for j in range(4)) + closed(1) + closed(2)
        body += state(2, 2) + pick(3, 3, 3) + state(0, 0) + (b"" if ipvs else srv(0, 3, 0, 2 << 1))
        body += state(0, 1) + state(0, 0) + tick(15) + pick(4, 4, 4) + tick(20) + pick(5, 5, 5)
        yield "pool_" + name.replace("-", "_"), head + body


def s_open(k_in, k_out, server, dt):
    """Session harness open: key bytes (k_out 0 = no out key), server, clock step."""
    return bytes([0, k_in, k_out, server, dt])


def s_pkt(k, flags, dt):
    return bytes([1, k, flags, dt])


def s_close(k):
    return bytes([2, k])


def s_expire(shard, budget, dt):
    return bytes([3, shard, budget, dt])


def s_lookup(k):
    return bytes([4, k])


def s_bulk(*keys):
    return bytes([5, len(keys)]) + bytes(keys)


def session_seeds():
    """Inputs of fuzz_session.c (layout at its top): key bytes < 128 are
    client keys (even: TCP), >= 128 server keys; SYN 02, ACK 10, FIN 01,
    RST 04. Whether an out key lands in its in key's shard depends on the
    hash, so the opens below try several out keys each."""
    opens = b"".join(s_open(2 * i, 128 + 2 * i, i, 1) for i in range(12))
    yield "fill_and_refuse", opens + s_bulk(0, 2, 4, 6, 128, 130, 200, 1)
    handshake = s_open(4, 130, 7, 1) + s_open(4, 132, 7, 1) + s_open(4, 134, 7, 1)
    for k in (4, 130, 132, 134):
        handshake += s_pkt(k, 0x02, 1) + s_pkt(k, 0x12, 1) + s_pkt(k, 0x10, 1)
    yield "handshake_and_close", handshake + s_pkt(4, 0x11, 1) + s_pkt(130, 0x11, 1) + s_pkt(132, 0x11, 1) \
        + s_pkt(4, 0x04, 1) + s_close(4)
    yield "single_session_dsr", s_open(8, 0, 1, 1) + s_pkt(8, 0x02, 1) + s_pkt(8, 0x10, 1) + s_pkt(8, 0x11, 1) \
        + s_expire(0, 0, 200) + s_expire(1, 0, 0)
    yield "udp_and_expiry_budgets", b"".join(s_open(2 * i + 1, 0, i, 3) for i in range(10)) \
        + s_expire(0, 1, 10) + s_expire(0, 2, 10) + s_expire(1, 3, 10) + s_expire(1, 0, 10) + s_lookup(1)
    yield "duplicates", s_open(10, 0, 1, 1) + s_open(10, 0, 1, 1) + s_open(12, 12, 1, 1) + s_open(14, 10, 1, 1) \
        + s_bulk(10, 12, 14)


def dns_name(dotted):
    if dotted == ".":
        return b"\0"
    return b"".join(bytes([len(l)]) + l.encode() for l in dotted.split(".")) + b"\0"


def dns_msg(name, qtype=1, qclass=1, flags=0x0100, qd=1, an=0, ar=0, extra=b"", ident=0x1234):
    return struct.pack("!6H", ident, flags, qd, an, 0, ar) + dns_name(name) + struct.pack("!HH", qtype, qclass) + extra


def dns_opt(udp=4096, version=0, flags=0x8000, owner=b"\0"):
    return owner + struct.pack("!HHBBHH", 41, udp, 0, version, flags, 0)


def dns_seeds():
    """Byte 0 mode, byte 1 buffer size (fuzz_dns.c); names of its zone."""
    def seed(mode, msg, capb=0):
        return bytes([mode, capb]) + msg
    yield "a_www", seed(0, dns_msg("www.example.com"))
    yield "a_caps_opt", seed(0, dns_msg("WwW.eXample.com", ar=1, extra=dns_opt()))
    yield "big_tc", seed(0, dns_msg("big.example.com"))
    yield "big_edns", seed(0, dns_msg("big.example.com", ar=1, extra=dns_opt(1232)))
    yield "big_edns_off", seed(1, dns_msg("big.example.com", ar=1, extra=dns_opt(1232)))
    # 12 + 21 + 40 * 16 + 11 = 684 bytes: fits a 684-byte limit, not 683.
    yield "big_exact_fit", seed(0, dns_msg("big.example.com", ar=1, extra=dns_opt(684)))
    yield "big_one_short", seed(0, dns_msg("big.example.com", ar=1, extra=dns_opt(683)))
    yield "nxdomain", seed(0, dns_msg("nope.example.com"))
    yield "nodata_aaaa", seed(0, dns_msg("www.example.com", 28))
    yield "nodata_mail", seed(0, dns_msg("mail.example.com"))
    yield "root_any", seed(0, dns_msg(".", 255))
    yield "xyz_ttl", seed(0, dns_msg("x.y.z"))
    yield "refused_ch", seed(0, dns_msg("a", 16, 3))
    yield "axfr", seed(0, dns_msg("a", 252))
    yield "notify", seed(0, dns_msg("a", flags=0x2000))
    yield "qdcount_2", seed(0, dns_msg("a", qd=2) + dns_name("a") + b"\0\x01\0\x01")
    yield "response", seed(0, dns_msg("a", flags=0x8400))
    yield "badvers", seed(0, dns_msg("a", ar=1, extra=dns_opt(version=1)))
    yield "two_opt", seed(0, dns_msg("a", ar=2, extra=dns_opt() + dns_opt()))
    yield "opt_owner", seed(0, dns_msg("a", ar=1, extra=dns_opt(owner=dns_name("a"))))
    yield "ar_pointer", seed(0, dns_msg("a", ar=1, extra=b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 5, 4) + b"abcd"))
    yield "qname_pointer", seed(0, struct.pack("!6H", 1, 0x100, 1, 0, 0, 0) + b"\xc0\x0c\0\x01\0\x01")
    yield "label_63", seed(0, dns_msg("q" * 63 + ".a"))
    yield "name_255", seed(0, dns_msg(".".join(["x" * 63] * 3 + ["y" * 61])))
    yield "name_256", seed(0, dns_msg(".".join(["x" * 63] * 3 + ["y" * 62])))
    yield "cap_small", seed(2, dns_msg("www.example.com"), 40)
    yield "cap_exact", seed(6, dns_msg("www.example.com"))
    yield "frame", seed(8, dns_msg("www.example.com"))
    yield "frame_vlan_options", seed(8 | 16 | 32, dns_msg("big.example.com", ar=1, extra=dns_opt()))
    yield "frame_small_cap", seed(8 | 2, dns_msg("notify", flags=0x2000), 59)
    yield "frame_exact_cap", seed(8 | 6, dns_msg("a"))


def http_seeds():
    """fuzz_http: header (mode, max_line, max_headers, two cut points), message."""
    def hdr(resp, cap_shift, max_line, max_headers):
        return bytes([resp | (cap_shift << 1), max_line, max_headers, 0, 9, 0, 30])
    yield "get11", hdr(0, 3, 255, 15) + b"GET /index.htm HTTP/1.1\r\nHost: www.example.com\r\nCookie: SRV=s1; x=2\r\n\r\n"
    yield "get10ka", hdr(0, 2, 40, 5) + b"GET /a.gif HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"
    yield "post", hdr(0, 3, 255, 15) + (b"POST http://h/cgi/x?y HTTP/1.1\nHost:h\nContent-Length: 12\n"
                                        b"Connection: close\n\nbody")
    yield "resp", hdr(1, 3, 255, 15) + b"HTTP/1.1 200 OK\r\nSet-Cookie: A=1; path=/\r\nContent-Length: 6\r\n\r\n"
    yield "folded", hdr(0, 3, 255, 15) + b"GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n"
    yield "longline", hdr(0, 0, 2, 15) + b"GET /" + b"a" * 100 + b" HTTP/1.1\r\n\r\n"


def tls_seeds():
    """fuzz_tls: whole first records (the golden generator's hellos)."""
    sys.path.insert(0, os.path.join(HERE, "..", "golden"))
    import make_vectors as mv
    yield "openssl12", bytes.fromhex(mv.OPENSSL_HELLO_TLS12)
    yield "openssl13", bytes.fromhex(mv.OPENSSL_HELLO_TLS13)
    yield "handbuilt", mv.tls_hello(sid=bytes(range(32)), exts=[(0, mv.tls_sni(b"shop.example")),
                                                               (43, b"\x04\x03\x04\x03\x03")])
    yield "noext", mv.tls_hello(exts=None)
    # a server's first record (dp_tls_parse_server_hello): OpenSSL's TLS 1.2 ServerHello
    yield "openssl12-server", bytes.fromhex(mv.OPENSSL_SERVER_HELLO_TLS12)


def splice_seeds():
    """fuzz_splice: 5 sequence numbers, then segments (see the harness)."""
    def seg(d, flags, seq, ack, pay, off, dl, ins, edit):
        return bytes([d, flags]) + struct.pack("!II", seq, ack) + bytes([len(pay), off, dl, len(ins), edit]) + pay + ins
    hdr = struct.pack("!5I", 0xFFFFFF00, 0xFFFFFFF0, 0xFFFFFF01, 0xFFFFFFFA, 0xFFFFFFF1)
    yield "cookie", hdr + seg(1, 0x18, 0xFFFFFFFB, 0xFFFFFF20, b"HTTP/1.1 200 OK\r\n\r\n", 17, 0,
                              b"Set-Cookie: S=1\r\n", 1) + \
        seg(0, 0x10, 0xFFFFFF20, 0x30, b"", 0, 0, b"", 0) + seg(1, 0x11, 0x10, 0xFFFFFF20, b"body", 0, 0, b"", 0)
    yield "odd", hdr + seg(0, 0x18, 0xFFFFFF01, 5, b"GET / HTTP/1.1\r\n", 3, 2, b"xyz", 1) + \
        seg(1, 0x10, 7, 0xFFFFFF20, b"", 0, 0, b"", 0)


def health_seeds():
    """fuzz_health: each kind, up and down starts, runs of passes and
    failures long enough to cross rise and fall, content bodies."""
    fail_run = bytes([10, 1] * 7)
    pass_run = bytes([10, 0] * 7)
    yield "tcp_up", bytes([1, 1, 2, 0, 200, 50, 3, 0]) + pass_run + fail_run + pass_run
    yield "http_down", bytes([2, 2, 1, 1, 100, 0, 0, 9]) + fail_run + pass_run + bytes([3, 60, 7, 150])
    yield "content", bytes([3, 0, 0, 0, 5, 1, 1, 1]) + bytes([3, 8]) + b"xxokyyzz" + bytes([3, 4]) + b"nope"
    yield "ping_mixed", bytes([0, 3, 4, 1, 9, 2, 5, 0]) + bytes([i % 251 for i in range(64)])


def persist_seeds():
    """fuzz_persist: fills past 8 keys (purge and nopurge), lookups that
    refresh, expiries, removals and server forgets."""
    fill = b"".join(bytes([0, k, 1 + k]) for k in range(11))
    looks = b"".join(bytes([1, k, 2]) for k in range(11))
    yield "purge_noexpire", bytes([0, 0, 0]) + fill + looks + bytes([4, 3, 0, 2, 5, 0])
    yield "nopurge_expire", bytes([1, 40, 1]) + fill + looks + bytes([3, 0, 50]) + fill
    yield "sid_keys", bytes([3, 17, 0]) + fill + bytes([1, 2, 20, 3, 0, 1, 0, 9, 30]) + looks


def write(folder, seeds):
    os.makedirs(folder, exist_ok=True)
    for name, data in seeds:
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    write(os.path.join(HERE, "corpus-lpm"), lpm_seeds())
    write(os.path.join(HERE, "corpus-build"), build_seeds())
    write(os.path.join(HERE, "corpus-nat"), nat_seeds())
    write(os.path.join(HERE, "corpus-syncookie"), syncookie_seeds())
    write(os.path.join(HERE, "corpus-sched"), sched_seeds())
    write(os.path.join(HERE, "corpus-session"), session_seeds())
    write(os.path.join(HERE, "corpus-dns"), dns_seeds())
    write(os.path.join(HERE, "corpus-http"), http_seeds())
    write(os.path.join(HERE, "corpus-tls"), tls_seeds())
    write(os.path.join(HERE, "corpus-splice"), splice_seeds())
    write(os.path.join(HERE, "corpus-health"), health_seeds())
    write(os.path.join(HERE, "corpus-persist"), persist_seeds())
