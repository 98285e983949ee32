#!/usr/bin/env python3
"""Writes the golden INPUT vectors replayed by dp_golden (core/golden/vectors/).

Inputs only: packets (well-formed and malformed), build specs, route
operations and flow keys. Packets are assembled here with struct and a
checksum written in Python, a code path independent of the C core. The
expected OUTPUT (expected.txt) is the transcript of the host dp_golden; the
cross builds (mips64 big-endian, aarch64) must reproduce it byte for byte.

Deterministic: a fixed seed, so re-running rewrites identical files.
Usage: python3 core/golden/make_vectors.py
"""
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "vectors")
CORPUS = os.path.join(HERE, "..", "fuzz", "corpus-parse")
rng = random.Random(20261121)


def csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(src, dst, proto, payload, ttl=64, ident=0, frag=0x4000, options=b"", tos=0,
         total=None, version=4, ihl=None, fix_csum=True):
    if ihl is None:
        ihl = 5 + len(options) // 4
    if total is None:
        total = 20 + len(options) + len(payload)
    hdr = struct.pack("!BBHHHBBH4s4s", (version << 4) | ihl, tos, total, ident, frag, ttl, proto, 0,
                      struct.pack("!I", src), struct.pack("!I", dst)) + options
    if fix_csum:
        c = csum(hdr)
        hdr = hdr[:10] + struct.pack("!H", c) + hdr[12:]
    return hdr + payload


def udp(sport, dport, payload, length=None):
    if length is None:
        length = 8 + len(payload)
    return struct.pack("!HHHH", sport, dport, length, 0) + payload


def tcp(sport, dport, payload, flags=0x18, doff=5, options=b"", seq=1, ack=0):
    return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, doff << 4, flags, 8192, 0, 0) + options + payload


def eth(l3, ethertype=0x0800, vlan=None, pad=True):
    hdr = bytes(rng.randrange(256) for _ in range(12))
    if vlan is not None:
        hdr += struct.pack("!HH", 0x8100, vlan)
    frame = hdr + struct.pack("!H", ethertype) + l3
    if pad and len(frame) < 60:
        frame += b"\0" * (60 - len(frame))
    return frame


def rand_bytes(n):
    return bytes(rng.randrange(256) for _ in range(n))


def addr():
    return rng.getrandbits(32)


def packets():
    out = []
    # Well-formed frames of every shape the parser accepts.
    out.append(("known_header_udp", eth(ipv4(0xC0A80001, 0xC0A800C7, 17, udp(1234, 53, b"\0" * 87)))))
    for i in range(40):
        proto = rng.choice([6, 17, 1, 47])
        pl = rand_bytes(rng.randrange(0, 80))
        if proto == 17:
            l4 = udp(rng.randrange(65536), rng.randrange(65536), pl)
        elif proto == 6:
            nopt = rng.randrange(0, 4)
            l4 = tcp(rng.randrange(65536), rng.randrange(65536), pl, flags=rng.randrange(256),
                     doff=5 + nopt, options=b"\x01" * (4 * nopt), seq=addr(), ack=addr())
        else:
            l4 = pl
        opts = b"\x01" * (4 * rng.randrange(0, 3))
        vlan = rng.randrange(65536) if rng.random() < 0.3 else None
        ttl = rng.choice([0, 1, 2, 64, 128, 255, rng.randrange(256)])
        ip = ipv4(addr(), addr(), proto, l4, ttl=ttl, ident=rng.randrange(65536), options=opts,
                  tos=rng.randrange(256))
        out.append(("ok_%02d_p%d" % (i, proto), eth(ip, vlan=vlan)))
    base = eth(ipv4(0x0A000001, 0x0A000002, 6, tcp(40000, 80, b"hello", doff=6, options=b"\x02\x04\x05\xb4")),
               vlan=0x2064, pad=False)
    for n in range(0, len(base)):
        out.append(("trunc_tcp_%02d" % n, base[:n]))
    u = ipv4(0x0A000001, 0x0A000002, 17, udp(1, 2, b"abcdefgh"))
    out.append(("bad_version_6", eth(ipv4(1, 2, 17, udp(1, 2, b""), version=6))))
    for ihl in (0, 1, 4):
        out.append(("bad_ihl_%d" % ihl, eth(ipv4(1, 2, 17, udp(1, 2, b""), ihl=ihl))))
    out.append(("ihl_15_short", eth(ipv4(1, 2, 17, udp(1, 2, b""), ihl=15), pad=False)))
    out.append(("total_len_short", eth(ipv4(1, 2, 17, udp(1, 2, b""), total=19))))
    out.append(("total_len_long", eth(ipv4(1, 2, 17, udp(1, 2, b""), total=200))))
    out.append(("bad_checksum", eth(u[:10] + bytes([u[10] ^ 0x40]) + u[11:])))
    out.append(("frag_mf", eth(ipv4(1, 2, 17, udp(1, 2, b"x" * 16, length=400), frag=0x2000))))
    out.append(("frag_offset", eth(ipv4(1, 2, 17, b"y" * 24, frag=0x00B9))))
    for ul in (0, 7, 17, 0xFFFF):
        out.append(("udp_len_%d" % ul, eth(ipv4(1, 2, 17, udp(1, 2, b"z" * 8, length=ul)))))
    out.append(("udp_no_room", eth(ipv4(1, 2, 17, b"1234567"))))
    out.append(("tcp_no_room", eth(ipv4(1, 2, 6, b"1" * 19))))
    for doff in (0, 4, 6, 15):
        out.append(("tcp_doff_%d" % doff, eth(ipv4(1, 2, 6, tcp(1, 2, b"", doff=doff)))))
    out.append(("ipv6_type", eth(rand_bytes(40), ethertype=0x86DD)))
    out.append(("arp_type", eth(rand_bytes(28), ethertype=0x0806)))
    out.append(("qinq", eth(struct.pack("!HH", 5, 0x0800) + u, ethertype=0x8100, vlan=7)))
    # Noise behind a plausible start: whatever the parser says, it must say
    # the same on every architecture.
    for i in range(20):
        junk = bytes([0x40 | rng.randrange(16)]) + rand_bytes(rng.randrange(0, 70))
        out.append(("noise_%02d" % i, eth(junk, pad=False)))
    return out


def builds():
    lines = []
    for i in range(24):
        proto = rng.choice(["udp", "tcp"])
        lines.append("b%02d %s %08x %08x %d %d %d %d %08x %08x %d %d %d %s %s" % (
            i, proto, addr(), addr(), rng.randrange(65536), rng.randrange(65536), rng.randrange(256),
            rng.randrange(65536), addr(), addr(), rng.randrange(256), rng.choice([0, 1, 17, 100, 600]),
            rng.randrange(2), rand_bytes(6).hex(), rand_bytes(6).hex()))
    return lines


def dotted(a):
    return "%d.%d.%d.%d" % (a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255)


def routes():
    # Overlapping prefixes of every depth around a few bases; adds, replaces,
    # deletes (some of absent rules) and lookups, interleaved.
    bases = [addr() for _ in range(6)]
    added = []
    lines = []

    def near():
        a = rng.choice(bases)
        for _ in range(rng.randrange(0, 5)):
            a ^= 1 << rng.randrange(32)
        return a

    def lookups(n):
        for _ in range(n):
            if rng.random() < 0.7 and added:
                p, d = rng.choice(added)
                a = p | (rng.getrandbits(32) & ((1 << (32 - d)) - 1))
            else:
                a = near() if rng.random() < 0.5 else addr()
            lines.append("lookup %s" % dotted(a))

    for _ in range(8):
        for _ in range(120):
            # Short prefixes are rare: each /d <= 8 rewrites 2^(24-d) entries,
            # slow under qemu. /0 and /1 still occur.
            d = rng.choice(list(range(8, 33)) * 40 + list(range(0, 8)))
            p = near() & (((1 << d) - 1) << (32 - d))
            lines.append("add %s/%d %d" % (dotted(p), d, rng.randrange(1 << 24)))
            added.append((p, d))
        lookups(150)
        for _ in range(40):
            p, d = rng.choice(added)
            lines.append("del %s/%d" % (dotted(p), d))
        lookups(150)
    lines.append("bulk")
    return lines


def flows():
    lines = []
    for i in range(200):
        lines.append("%08x %08x %d %d %d" % (addr(), addr(), rng.randrange(65536), rng.randrange(65536),
                                             rng.choice([6, 17, 1])))
    return lines


# ---- load-balancer data path: NAT/DR/IPIP, SYN cookies, rate limits ----
# Each generator has its own seeded Random, so adding one leaves the other
# vector files byte for byte as they were.

def l4_fix(ip_pkt: bytes, udp_csum=True) -> bytes:
    """ip_pkt (an IPv4 packet with TCP or UDP) with its L4 checksum computed
    (RFC 768 / 9293 pseudo-header; UDP: 0 if udp_csum is false, a computed
    0 sent as 0xFFFF)."""
    ihl = (ip_pkt[0] & 15) * 4
    total = struct.unpack("!H", ip_pkt[2:4])[0]
    proto = ip_pkt[9]
    seg = bytearray(ip_pkt[ihl:total])
    at = 16 if proto == 6 else 6
    seg[at:at + 2] = b"\0\0"
    c = 0
    if proto == 6 or udp_csum:
        c = csum(ip_pkt[12:20] + struct.pack("!BBH", 0, proto, len(seg)) + bytes(seg))
        if proto == 17 and c == 0:
            c = 0xFFFF
    seg[at:at + 2] = struct.pack("!H", c)
    return ip_pkt[:ihl] + bytes(seg) + ip_pkt[total:]


def eth_with(r, l3, vlan=None, pad=True):
    """Ethernet II frame with random MACs drawn from r."""
    hdr = bytes(r.randrange(256) for _ in range(12))
    if vlan is not None:
        hdr += struct.pack("!HH", 0x8100, vlan)
    frame = hdr + struct.pack("!H", 0x0800) + l3
    if pad and len(frame) < 60:
        frame += b"\0" * (60 - len(frame))
    return frame


def random_l4_packet(r, proto=None, udp_csum=True, frag=0x4000, tcp_opts=None, flags=None):
    """A valid IPv4 packet with TCP or UDP (random options, payload)."""
    proto = proto or r.choice([6, 17])
    pl = bytes(r.randrange(256) for _ in range(r.randrange(0, 60)))
    if proto == 6:
        opts = tcp_opts if tcp_opts is not None else b"\x01" * (4 * r.randrange(0, 4))
        l4 = tcp(r.randrange(65536), r.randrange(65536), pl, flags=r.randrange(256) if flags is None else flags,
                 doff=5 + len(opts) // 4, options=opts, seq=r.getrandbits(32), ack=r.getrandbits(32))
    elif proto == 17:
        l4 = udp(r.randrange(65536), r.randrange(65536), pl)
    else:
        l4 = pl
    ip = ipv4(r.getrandbits(32), r.getrandbits(32), proto, l4, ttl=r.randrange(1, 256), ident=r.randrange(65536),
              frag=frag, options=b"\x01" * (4 * r.randrange(0, 3)), tos=r.randrange(256))
    return l4_fix(ip, udp_csum) if proto in (6, 17) else ip


def nat_vectors():
    r = random.Random(20261)
    lines = []
    hexs = lambda n: "%0*x" % (2 * n, r.getrandbits(8 * n))
    for i in range(60):
        udp_csum = r.random() < 0.75
        ip = random_l4_packet(r, udp_csum=udp_csum)
        frame = eth_with(r, ip, vlan=r.randrange(65536) if r.random() < 0.3 else None)
        op = ("dnat", "snat", "full")[i % 3]
        if op == "full":
            args = "%08x %d %08x %d" % (r.getrandbits(32), r.randrange(65536), r.getrandbits(32), r.randrange(65536))
        else:
            args = "%08x %d" % (r.getrandbits(32), r.randrange(65536))
        lines.append("%s nat_%02d %s %s" % (op, i, args, frame.hex()))
    # Refused: ICMP has no ports; a later fragment carries no L4 header.
    icmp = ipv4(0x0a000001, 0x0a000002, 1, b"\x08\x00" + b"\0" * 30)
    lines.append("dnat nat_icmp 0a000063 80 %s" % eth_with(r, icmp).hex())
    later = ipv4(0x0a000001, 0x0a000002, 17, b"z" * 24, frag=0x0003)
    lines.append("snat nat_later_fragment 0a000063 80 %s" % eth_with(r, later).hex())
    for i in range(10):
        frame = eth_with(r, random_l4_packet(r, proto=r.choice([6, 17, 47])))
        lines.append("dr dr_%02d %s %s %s" % (i, hexs(6), hexs(6), frame.hex()))
    for i in range(24):
        proto = r.choice([6, 17, 47])
        df = r.choice([0x4000, 0])
        ip = random_l4_packet(r, proto=proto, frag=df)
        vlan = r.randrange(65536) if i % 3 == 0 else None
        frame = eth_with(r, ip, vlan=vlan)
        total = len(ip)
        # MTU: fits exactly, fits with room, one byte short (DF decides
        # the error), or headroom short.
        mtu = (total + 20, 1500, total + 19, 1500)[i % 4]
        headroom = 19 if i % 4 == 3 else r.choice([20, 32, 64])
        lines.append("ipip ipip_%02d %08x %08x %s %s %d %d %d %d %s" % (
            i, r.getrandbits(32), r.getrandbits(32), hexs(6), hexs(6), r.randrange(65536), mtu,
            r.choice([0, 64, 255]), headroom, frame.hex()))
    # ICMP "fragmentation needed" (dp_nat_icmp_frag_needed): the balancer's
    # case first (a 1500-byte DF TCP segment from client 198.18.0.1 to VIP
    # 10.0.0.1 through a 1500-byte tunnel MTU: next hop 1480), then random
    # TCP/UDP/GRE packets (VLAN tags, IP options, payloads under 8 bytes),
    # the refusals (an ICMP packet, a later fragment) and a buffer too small.
    seg = ipv4(0xC6120001, 0x0A000001, 6, tcp(40000, 80, b"x" * 1460), ident=7, frag=0x4000)
    lines.append("icmp icmp_lb 0a000001 0 64 1480 %d %s" % (MAX_ICMP_CAP, eth_with(r, l4_fix(seg, True)).hex()))
    for i in range(12):
        proto = r.choice([6, 17, 47])
        ip = random_l4_packet(r, proto=proto, frag=r.choice([0x4000, 0, 0x2000]))
        if proto == 47 and i % 4 == 0:
            ip = ipv4(r.getrandbits(32), r.getrandbits(32), 47, b"\x01\x02\x03", frag=0x4000)
        frame = eth_with(r, ip, vlan=r.randrange(65536) if i % 3 == 0 else None)
        lines.append("icmp icmp_%02d %08x %d %d %d %d %s" % (
            i, r.getrandbits(32), r.randrange(65536), r.choice([64, 255]), r.randrange(68, 65536),
            MAX_ICMP_CAP, frame.hex()))
    echo = ipv4(0x0a000001, 0x0a000002, 1, b"\x08\x00" + b"\0" * 30, frag=0x4000)
    lines.append("icmp icmp_about_icmp 0a000063 1 64 1480 %d %s" % (MAX_ICMP_CAP, eth_with(r, echo).hex()))
    later = ipv4(0x0a000001, 0x0a000002, 17, b"z" * 24, frag=0x0003)
    lines.append("icmp icmp_later_fragment 0a000063 2 64 1480 %d %s" % (MAX_ICMP_CAP, eth_with(r, later).hex()))
    short = ipv4(0x0a000001, 0x0a000002, 6, tcp(1, 2, b""), frag=0x4000)
    lines.append("icmp icmp_no_room 0a000063 3 64 1480 69 %s" % eth_with(r, l4_fix(short, True)).hex())
    return lines


# dp_golden's buffer for an ICMP message in place (its frame buffer).
MAX_ICMP_CAP = 2048


# SipHash-2-4 (Aumasson & Bernstein, "SipHash: a fast short-input PRF",
# 2012), written from the paper's section 2 in plain Python integers.
def siphash24(key: bytes, msg: bytes) -> int:
    M = (1 << 64) - 1

    def rotl(x, b):
        return ((x << b) | (x >> (64 - b))) & M

    k0, k1 = int.from_bytes(key[:8], "little"), int.from_bytes(key[8:16], "little")
    v = [k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d, k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573]

    def rnd():
        v[0] = (v[0] + v[1]) & M; v[1] = rotl(v[1], 13); v[1] ^= v[0]; v[0] = rotl(v[0], 32)
        v[2] = (v[2] + v[3]) & M; v[3] = rotl(v[3], 16); v[3] ^= v[2]
        v[0] = (v[0] + v[3]) & M; v[3] = rotl(v[3], 21); v[3] ^= v[0]
        v[2] = (v[2] + v[1]) & M; v[1] = rotl(v[1], 17); v[1] ^= v[2]; v[2] = rotl(v[2], 32)

    n = len(msg)
    for i in range(0, n - n % 8, 8):
        w = int.from_bytes(msg[i:i + 8], "little")
        v[3] ^= w; rnd(); rnd(); v[0] ^= w
    b = ((n & 255) << 56) | int.from_bytes(msg[n - n % 8:], "little")
    v[3] ^= b; rnd(); rnd(); v[0] ^= b
    v[2] ^= 0xFF
    for _ in range(4):
        rnd()
    return v[0] ^ v[1] ^ v[2] ^ v[3]


MSS_TABLE = [536, 1220, 1300, 1360, 1400, 1440, 1460, 8960]


def mss_index(mss):
    i = 7
    while i > 0 and mss < MSS_TABLE[i]:
        i -= 1
    return i


def cookie_mac(key, bits, client, vip, cport, vport, counter, idx):
    msg = struct.pack("!IIHHIB", client, vip, cport, vport, counter & 0xFFFFFFFF, idx)
    return siphash24(key, msg) & ((1 << (29 - bits)) - 1)


def cookie_make(key, bits, client, vip, cport, vport, mss, counter):
    """The cookie layout of dp_syncookie.h: counter mod 2^C | MSS index | MAC."""
    idx = mss_index(mss)
    return (((counter & ((1 << bits) - 1)) << (32 - bits)) | (idx << (29 - bits))
            | cookie_mac(key, bits, client, vip, cport, vport, counter, idx))


def cookie_check(key, bits, max_age, client, vip, cport, vport, cookie, counter):
    """MSS (> 0), or -2 (age) / -3 (MAC), as dp_syncookie_check."""
    age = (counter - (cookie >> (32 - bits))) & ((1 << bits) - 1)
    if age > max_age:
        return -2
    idx = (cookie >> (29 - bits)) & 7
    if cookie_mac(key, bits, client, vip, cport, vport, counter - age, idx) != cookie & ((1 << (29 - bits)) - 1):
        return -3
    return MSS_TABLE[idx]


def syncookie_vectors():
    r = random.Random(4987)
    lines = ["siphash %d" % n for n in range(64)]
    for bits, max_age in ((5, 1), (3, 2), (12, 40)):
        key = bytes(r.randrange(256) for _ in range(16))
        lines.append("key %s %d %d" % (key.hex(), bits, max_age))
        for _ in range(20):
            t = (r.getrandbits(32), r.getrandbits(32), r.randrange(65536), r.randrange(65536))
            mss = r.choice([0, 100, 535, 536, 1219, 1220, 1300, 1359, 1400, 1452, 1460, 1500, 8960, 9000, 65535])
            made = r.choice([0, 1, (1 << 32) - 1, r.getrandbits(32)])
            lines.append("make %08x %08x %d %d %d %d" % (t + (mss, made)))
            c = cookie_make(key, bits, *t, mss, made)
            for age in (0, max_age, max_age + 1, (1 << bits) - 1):
                lines.append("check %08x %08x %d %d %08x %d" % (t + (c, (made + age) & 0xFFFFFFFF)))
            for b in (r.randrange(32), r.randrange(32)):
                lines.append("check %08x %08x %d %d %08x %d" % (t + (c ^ (1 << b), made)))
            u = list(t)
            u[r.randrange(4)] ^= 1 << r.randrange(16)
            lines.append("check %08x %08x %d %d %08x %d" % (tuple(u) + (c, made)))
            lines.append("check %08x %08x %d %d %08x %d" % (t + (r.getrandbits(32), made)))
        # SYNs (VLAN or not, IP options, Linux-like TCP options, odd MSS
        # placements) turned into SYN-ACKs, the clients' ACKs, and segments
        # that are neither.
        for i in range(12):
            mss = r.choice([0, 536, 1300, 1460, 8961, 1399])
            opts = [b"", struct.pack("!BBH", 2, 4, mss) + b"\x01\x03\x03\x07",
                    b"\x01\x01" + struct.pack("!BBH", 2, 4, mss) + b"\x00\x00",
                    b"\x04\x02\x08\x0a" + bytes(8) + struct.pack("!BBH", 2, 4, mss)][i % 4]
            flags = 0x02 if i < 9 else (0x12, 0x03, 0x10)[i - 9]
            ip = random_l4_packet(r, proto=6, tcp_opts=opts, flags=flags)
            frame = eth_with(r, ip, vlan=r.randrange(65536) if i % 2 else None)
            counter = r.getrandbits(32)
            lines.append("synack %d %d %d %d %s" % (counter, r.choice([1460, 1400, 8960]), r.randrange(65536),
                                                   r.choice([64, 128, 255]), frame.hex()))
            if flags != 0x02:
                continue
            ihl = (ip[0] & 15) * 4
            client, vip = struct.unpack("!II", ip[12:20])
            cport, vport, seq = struct.unpack("!HHI", ip[ihl:ihl + 8])
            c = cookie_make(key, bits, client, vip, cport, vport, mss, counter)
            for age, delta, fl in ((0, 1, 0x10), (max_age, 1, 0x18), (max_age + 1, 1, 0x10), (0, 0, 0x10),
                                   (0, 1, 0x02), (0, 1, 0x14)):
                a = ipv4(client, vip, 6, tcp(cport, vport, b"", flags=fl, seq=(seq + 1) & 0xFFFFFFFF,
                                             ack=(c + delta) & 0xFFFFFFFF))
                lines.append("ack %d %s" % ((counter + age) & 0xFFFFFFFF, eth_with(r, l4_fix(a)).hex()))
    return lines


def ratelimit_vectors():
    r = random.Random(2544)
    lines = []
    # Millisecond ticks: bursts, refills, clear, a clock going back.
    lines.append("config 4 1000")
    lines.append("set 0 10 3 0")
    lines.append("set 1 999 2 0")
    lines.append("set 2 1 1 0")
    lines.append("admit 3 0 5")
    now = 0
    for _ in range(150):
        now += r.choice([0, 1, 7, 33, 100, 250, 1000])
        lines.append("admit %d %d %d" % (r.randrange(3), now, r.randrange(1, 6)))
    lines.append("admit 0 %d 2" % (now - 500))
    lines.append("clear 1")
    lines.append("admit 1 %d 4" % now)
    for s in range(4):
        lines.append("stats %d" % s)
    # The largest clock rate, rate and burst, a clock from 2^63 on, gaps up
    # to 2^62 ticks (the clock stays below 2^64).
    lines.append("config 3 2147483647")
    lines.append("set 0 4294967295 4294967295 0")
    lines.append("set 1 3 5 9223372036854775808")
    lines.append("set 2 1000000 1 1")
    now = 1 << 63
    for i in range(60):
        now += (1 << 62) if i == 30 else r.choice([0, 1, 715827882, 2147483647, 1 << 40, 1 << 56])
        assert now < 1 << 64
        lines.append("admit %d %d %d" % (r.randrange(3), now, r.randrange(1, 9)))
    for s in range(3):
        lines.append("stats %d" % s)
    return lines
def sched():
    """Scheduler scenarios (dp_sched.h): one 'scenario' line, then pool
    changes, picks, connection events and table dumps; see dp_golden.c
    run_sched for the commands. The HAProxy scenarios repeat the ones
    recorded from a real HAProxy 2.6.12 (core/tests/haproxy_record.py)."""
    L = []

    def sc(name, algo, n, table=0, hin=0, flags=0, draws=0, seed=0):
        L.append("scenario %s %s %d %d %d %d %d %d" % (name, algo, n, table, hin, flags, draws, seed))

    def srv(i, w, maxconn=0, ss=0, flags=0, key=0):
        L.append("server %d %d %d %d %d %x" % (i, w, maxconn, ss, flags, key))

    # IPVS rr / wrr: list order, cursor, down/up, quiesce.
    sc("ipvs_rr", "rr", 5)
    for i in range(5):
        srv(i, 1)
    L += ["picks 12 0", "state 2 down 0", "picks 6 0", "state 2 up 0", "picks 6 0", "server 1 0 0 0 0 0",
          "picks 6 0"]
    sc("ipvs_wrr", "wrr", 4)
    for i, w in enumerate([4, 3, 2, 1]):
        srv(i, w)
    L += ["picks 20 0", "server 3 6 0 0 0 0", "picks 16 0", "state 0 draining 0", "picks 12 0"]
    sc("ipvs_wrr_gcd", "wrr", 3)
    for i, w in enumerate([4, 8, 12]):
        srv(i, w)
    L += ["picks 12 0"]
    # IPVS lc / wlc with held and inactive connections.
    for algo in ("lc", "wlc"):
        sc("ipvs_" + algo, algo, 4)
        for i, w in enumerate([1, 2, 3, 4]):
            srv(i, w, 6 if i == 3 else 0)
        L += ["openpick 12 0", "toinactive 1", "toinactive 1", "close 0 0", "openpick 6 0", "close 1 1",
              "openpick 4 0", "info 3"]
    # IPVS sh: bucket fill by weight, down, fallback.
    sc("ipvs_sh", "sh", 5)
    for i, w in enumerate([1, 2, 1, 3, 1]):
        srv(i, w)
    L += ["table", "keys 16 0a000001 1000193 0", "state 3 down 0", "table", "keys 16 0a000001 1000193 0",
          "state 0 draining 0", "keys 16 0a000001 1000193 0"]
    sc("ipvs_sh_fallback_port", "sh", 4, 6, 2, 1)
    for i in range(4):
        srv(i, 2)
    L += ["table", "state 1 draining 0", "keys 20 c0000201 1 0"]
    # Maglev: full small table, weights, drain with fallback, removal.
    sc("maglev_small", "maglev", 5, 1021)
    for i in range(5):
        srv(i, 1 + (i % 2), 0, 0, 0, 0x1000 + i)
    L += ["table", "keys 16 0a000001 7919 0", "remove 2", "table", "keys 16 0a000001 7919 0"]
    sc("maglev_drain_fallback", "maglev", 4, 401, 1, 1)
    for i in range(4):
        srv(i, 3)
    L += ["tablesum", "state 1 draining 0", "tablesum", "keys 12 0a000001 1 0"]
    sc("maglev_96", "maglev", 96)
    for i in range(96):
        srv(i, 1)
    L += ["tablesum", "remapdown 13 3000", "keys 8 0a000001 65599 0"]
    # HAProxy roundrobin and static-rr, as recorded from HAProxy 2.6.12.
    for algo in ("roundrobin", "static-rr"):
        for ws in ([5, 1, 1], [3, 2, 1], [4, 3, 2, 1], [7, 3, 2]):
            sc("ha_%s_%s" % (algo.replace("-", ""), "_".join(map(str, ws))), algo, len(ws))
            for i, w in enumerate(ws):
                srv(i, w)
            L.append("picks %d 0" % (2 * sum(ws)))
    sc("ha_roundrobin_maint", "roundrobin", 3)
    for i, w in enumerate([3, 2, 1]):
        srv(i, w)
    L += ["picks 4 0", "state 0 disabled 0", "picks 5 0", "state 0 up 0", "picks 12 0"]
    sc("ha_roundrobin_maxconn", "roundrobin", 3)
    srv(0, 1, 2)
    srv(1, 1, 1)
    srv(2, 1)
    L += ["openpick 6 0"]
    sc("ha_staticrr_maxconn", "static-rr", 3)
    srv(0, 2, 1)
    srv(1, 1)
    srv(2, 1)
    L += ["openpick 6 0"]
    sc("ha_first_maxconn", "first", 3)
    srv(0, 1, 2)
    srv(1, 1, 1)
    srv(2, 1, 3)
    L += ["openpick 5 0", "close 0 0", "openpick 2 0"]
    sc("ha_leastconn_111", "leastconn", 3)
    for i in range(3):
        srv(i, 1)
    L += ["openpick 5 0", "close 1 0", "openpick 3 0", "close 0 0", "close 1 0", "openpick 4 0"]
    sc("ha_leastconn_321", "leastconn", 3)
    for i, w in enumerate([3, 2, 1]):
        srv(i, w)
    L += ["openpick 12 0"]
    sc("ha_roundrobin_backup", "roundrobin", 3, 0, 0, 2)
    srv(0, 1)
    srv(1, 2, 0, 0, 1)
    srv(2, 1, 0, 0, 1)
    L += ["picks 2 0", "state 0 disabled 0", "picks 6 0"]
    # HAProxy source hashing from 127.0.0.1 .. 127.0.0.40.
    for algo in ("source", "source-consistent"):
        for ws in ([1, 1, 1], [3, 2, 1]):
            sc("ha_%s_%s" % (algo.replace("-", "_"), "_".join(map(str, ws))), algo, len(ws))
            for i, w in enumerate(ws):
                srv(i, w)
            L.append("keys 40 7f000001 1 0")
        sc("ha_%s_maint" % algo.replace("-", "_"), algo, 4)
        for i in range(4):
            srv(i, 1)
        L += ["state 1 disabled 0", "keys 40 7f000001 1 0", "remapdown 2 2000"]
    sc("ha_source_avalanche", "source", 5, 0, 0, 4)
    for i in range(5):
        srv(i, 1)
    L += ["keys 12 0a000001 1 0", "table"]
    # HAProxy slow start: weight and maxconn ramp, picks during the ramp.
    sc("ha_slowstart", "roundrobin", 2)
    srv(0, 10)
    srv(1, 10, 100, 10000)
    L += ["picks 4 0", "state 1 down 1000", "state 1 up 20000"]
    for t in (20000, 20999, 21000, 23500, 25000, 29999, 30000, 31000):
        L += ["pick %d" % t, "info 1"]
    L += ["picks 12 25000"]
    # HAProxy random(2), seeded; random(1) with weights.
    sc("ha_random2", "random", 3, 0, 0, 0, 2, 12345)
    for i, w in enumerate([1, 2, 3]):
        srv(i, w)
    L += ["openpick 12 0", "picks 12 0"]
    sc("ha_random1", "random", 3, 0, 0, 0, 1, 99)
    for i, w in enumerate([1, 2, 3]):
        srv(i, w)
    L += ["picks 24 0"]
    # Key hash inputs: 5-tuple and caller hash (HAProxy balance uri).
    sc("ha_uri_consistent", "source-consistent", 4, 0, 4)
    for i in range(4):
        srv(i, 1)
    L += ["keys 12 0a000001 1 0"]
    return L


def sched_param():
    """uri and hdr hashing (HAProxy 2.6 get_server_uh / get_server_hh), the
    round-robin fallback of a request without the parameter, and the avoid
    argument of redispatch; commands as sched.txt plus `req NOW DATA` (DATA
    hex, '.' present but empty, '-' absent). Scenario lines carry three more
    fields: hash_fn uri_len uri_depth."""
    L = []
    AVAL, NOAVAL, WHOLE, PATH, DOMAIN = 0x4, 0x10, 0x20, 0x40, 0x80

    def sc(name, algo, n, flags=0, fn=0, ulen=0, depth=0):
        L.append("scenario %s %s %d 0 0 %d 0 0 %d %d %d" % (name, algo, n, flags, fn, ulen, depth))

    def srv(i, w, maxconn=0):
        L.append("server %d %d %d 0 0 0" % (i, w, maxconn))

    def req(data, now=0):
        if data is None:
            L.append("req %d -" % now)
        else:
            b = data.encode("latin-1")
            L.append("req %d %s" % (now, b.hex() if b else "."))

    uris = ["/", "/index.html", "/a/b/c?x=1", "/a/b/d?x=2", "/a/b/c?x=3", "/img/1.png", "/img/2.png?v=7",
            "http://example.com/a/b?q=1", "https://user@www.example.org:8443/x/y/z", "http://example.com",
            "*", "www.example.com:443", "/very/long/path/with/many/segments/file.txt?a=b&c=d", "/?", "//"]
    # Map-based, equal and unequal weights, the option combinations.
    for name, ws, flags, fn, ulen, depth in (
            ("uri_map_1111", [1, 1, 1, 1], 0, 0, 0, 0),
            ("uri_map_321_whole_len8", [3, 2, 1], WHOLE, 0, 8, 0),
            ("uri_map_depth2_path_djb2_aval", [1, 2, 3, 4], PATH | AVAL, 1, 0, 2),
            ("uri_map_wt6_whole", [2, 2, 1], WHOLE, 2, 0, 0),
            ("uri_map_crc32_depth1", [1, 1, 1], 0, 3, 0, 1)):
        sc(name, "uri", len(ws), flags, fn, ulen, depth)
        for i, w in enumerate(ws):
            srv(i, w)
        for u in uris:
            req(u)
        req(None)  # mode tcp: no URI, round robin on the map
        req(None)
    # Consistent: default (sdbm + avalanche), then without avalanche; a
    # server goes down and the same URIs are asked again.
    for name, flags, fn in (("uri_chash", 0, 0), ("uri_chash_sdbm_noaval", NOAVAL, 0),
                            ("uri_chash_crc32", 0, 3)):
        sc(name, "uri-consistent", 4, flags, fn)
        for i in range(4):
            srv(i, 1)
        for u in uris:
            req(u)
        L.append("state 2 down 0")
        for u in uris:
            req(u)
    # One server in use: HAProxy hashes nothing (hash 0).
    sc("uri_one_server", "uri", 3)
    for i in range(3):
        srv(i, 1)
    L += ["state 0 down 0", "state 2 disabled 0"]
    for u in uris[:4]:
        req(u)
    req(None)
    # hdr: first value of the line, quotes, blanks; absent or empty header:
    # round robin (map) or ring walk (consistent).
    hdrs = ["www.example.com", "example.com", "a.b.c.d.example.net", " spaced.example.com , other.com",
            '"quoted,comma", second', "localhost", "x.", ".x", "a..b", ",first-empty", "\t tab.example.com\t",
            "WWW.Example.COM"]
    for name, algo, flags, fn in (("hdr_map", "hdr", 0, 0), ("hdr_map_domain", "hdr", DOMAIN, 0),
                                  ("hdr_chash", "hdr-consistent", 0, 0),
                                  ("hdr_chash_domain_djb2", "hdr-consistent", DOMAIN, 1)):
        sc(name, algo, 3, flags, fn)
        for i, w in enumerate([1, 2, 1]):
            srv(i, w, 2 if i == 1 else 0)
        for hv in hdrs:
            req(hv)
        for _ in range(5):
            req(None)
        req("")
        L += ["open 0", "open 1", "open 1"]  # server 1 at its maxconn: skipped by the round robin
        for _ in range(4):
            req(None)
        L.append("state 0 down 0")  # the ring's last node may leave with it
        for _ in range(4):
            req(None)
        for hv in hdrs[:3]:
            req(hv)
    # hdr with one server in use: hash 0, no header needed.
    sc("hdr_one_server", "hdr-consistent", 2)
    srv(0, 1)
    srv(1, 1)
    L.append("state 1 down 0")
    req(None)
    req("www.example.com")
    L.extend(sched_avoid())
    return L


def sched_avoid():
    """dp_sched_pick_avoid on every algorithm (`avoid ID NOW DATA`,
    `avoidkeys ID N SRC STEP NOW`): picks interleaved with redispatches
    that avoid one server, connections held so leastconn/lc move, and each
    pool narrowed until avoid is the only usable server (it is then
    returned), or until only backups are left (the first backup stands)."""
    L = []

    def sc(name, algo, ws, table=0, flags=0, draws=0, seed=0, maxconn=None, backups=()):
        L.append("scenario %s %s %d %d 0 %d %d %d 0 0 0" % (name, algo, len(ws), table, flags, draws, seed))
        for i, w in enumerate(ws):
            mc = maxconn[i] if maxconn else 0
            L.append("server %d %d %d 0 %d 0" % (i, w, mc, 1 if i in backups else 0))

    def avoid(i, n=1, data="-"):
        L.extend(["avoid %d 0 %s" % (i, data)] * n)

    uri = "/a/b/c?x=1".encode().hex()
    host = "www.example.com".encode().hex()
    FALLBACK, NOAVAL = 0x1, 0x10
    # Round robin kinds: the avoided server's turn is passed on; picks in
    # between show the order that follows (fwrr requeues the avoided one as
    # consumed, the map and IPVS cursors move past it).
    for algo in ("roundrobin", "static-rr", "rr", "wrr"):
        sc("avoid_%s_321" % algo.replace("-", ""), algo, [3, 2, 1])
        L.append("picks 3 0")
        avoid(0, 3)
        L.append("picks 4 0")
        avoid(1, 2)
        avoid(2, 2)
        L.append("picks 6 0")
        L.append("state 2 down 0")
        avoid(0, 2)
        L.append("state 1 down 0")
        avoid(0, 2)  # only avoid is left: it is returned
        L.append("picks 2 0")
        L.append("state 0 down 0")
        avoid(0)  # nothing usable
    # Least connections: held connections order the servers.
    for algo in ("leastconn", "lc", "wlc"):
        sc("avoid_%s_321" % algo, algo, [3, 2, 1])
        for _ in range(3):
            avoid(0)
            L.append("openpick 1 0")
        L += ["open 1", "open 1", "open 2"]
        avoid(0, 2)
        avoid(1, 2)
        L += ["state 1 down 0", "state 2 down 0"]
        avoid(0)
        L.append("picks 1 0")
    # first: maxconn saturates servers; avoid is skipped like them.
    sc("avoid_first_maxconn", "first", [1, 1, 1], maxconn=[2, 1, 3])
    avoid(0)
    L += ["openpick 2 0"]
    avoid(0)
    avoid(1)
    L += ["open 1", "open 2", "open 2"]
    avoid(2)  # 0 and 1 full, 2 has room: avoid 2 -> 2
    avoid(0)
    L += ["open 2"]
    avoid(0)  # everything full
    # Backups: only the first backup is usable without allbackups; it stands even when avoided.
    for algo in ("roundrobin", "leastconn", "static-rr", "source-consistent"):
        sc("avoid_%s_backup" % algo.replace("-", ""), algo, [1, 1, 1], backups=(1, 2))
        avoid(0, 2)
        L.append("state 0 down 0")
        avoid(1, 2)
        avoid(2)
    # random: every draw walks past avoid.
    sc("avoid_random_1111", "random", [1, 1, 1, 1], draws=2, seed=7)
    avoid(1, 12)
    L += ["open 0", "open 0", "open 2"]
    avoid(3, 8)
    L += ["state 0 down 0", "state 2 down 0", "state 3 down 0"]
    avoid(1, 2)
    # Source hashing: map-based ignores avoid, consistent walks the ring on.
    for algo, flags in (("source", 0), ("source-consistent", 0), ("source-consistent", NOAVAL)):
        sc("avoid_%s_%x" % (algo.replace("-", "_"), flags), algo, [1, 2, 1, 1], flags=flags)
        L.append("keys 16 0a000001 1 0")
        L.append("avoidkeys 1 16 0a000001 1 0")
        L.append("avoidkeys 3 16 0a000001 1 0")
        L.append("state 0 down 0")
        L.append("avoidkeys 1 16 0a000001 1 0")
        L += ["state 2 down 0", "state 3 down 0"]
        L.append("avoidkeys 1 4 0a000001 1 0")  # one server left: hash 0, avoid returned
    # uri/hdr: the hash path (map slot stands; ring walks on) and the
    # round-robin fallback without the parameter (avoid skipped).
    for algo, data in (("uri", uri), ("uri-consistent", uri), ("hdr", host), ("hdr-consistent", host)):
        sc("avoid_%s" % algo.replace("-", "_"), algo, [1, 1, 1])
        L.append("req 0 %s" % data)
        avoid(0, 1, data)
        avoid(1, 1, data)
        avoid(2, 1, data)
        avoid(0, 4)
        L.append("state 1 down 0")
        avoid(0, 3)
        avoid(2, 1, data)
        L.append("state 2 down 0")
        avoid(0, 1, data)
        avoid(0, 2)
    # IPVS hashes: a plain bucket stands; the fallback walk passes avoid over.
    for algo, table in (("sh", 4), ("maglev", 0)):
        for flags in (0, FALLBACK):
            sc("avoid_%s_%d" % (algo, flags), algo, [1, 1, 1, 1], table=table, flags=flags)
            L.append("keys 12 0a000001 1 0")
            L.append("avoidkeys 2 12 0a000001 1 0")
            L.append("state 0 down 0")
            L.append("avoidkeys 1 12 0a000001 1 0")
            L += ["state 2 down 0", "state 3 down 0"]
            L.append("avoidkeys 1 3 0a000001 1 0")
    return L


def sessions():
    """A session-table script (see dp_golden.c run_sessions): opens, packets,
    closes and budgeted expiries over 3 shards of 20 sessions. Steered opens
    give the start port of the SNAT port search; the port the table will
    pick (the first from there whose out key hashes to the in key's shard)
    is computed here so later packets of the reply direction can use it.
    The clock starts 2000 ticks before the 32-bit wrap."""
    from check_expected import flow_hash  # imported here: check_expected imports this module
    r = random.Random(20261123)
    shards = 3
    vips = [0xC6336401, 0xC6336402, 0xC6336403]
    servers = [0x0A000010 + i for i in range(8)]
    snat = [0x0A640001, 0x0A640002]
    flag_choices = [0x02, 0x12, 0x10, 0x18, 0x11, 0x04, 0x14, 0x00]
    state = {"now": 2 ** 32 - 2000}
    lines, known = [], []  # known: (in_key, out_key or None)

    def tick(n):
        state["now"] = (state["now"] + n) % 2 ** 32
        return state["now"]

    def kstr(k):
        return "%08x %08x %d %d %d" % k

    def shard(k):
        return (flow_hash(*k) * shards) >> 32

    def new_in():
        return (r.getrandbits(32), r.choice(vips), r.randrange(1024, 65536), r.choice([80, 443]),
                r.choice([6, 6, 6, 17]))

    def open_one():
        k = new_in()
        kind = r.random()
        if kind < 0.05 and known:
            k = r.choice(known)[0]  # duplicate
        if kind < 0.75:
            osrc, odst, start = r.choice(servers), r.choice(snat), r.randrange(1024, 65536)
            port = start
            while shard((osrc, odst, 8080, port, k[4])) != shard(k):
                port = 1024 if port == 65535 else port + 1
            lines.append("open2 %s %08x %08x 8080 %d %d %d" % (kstr(k), osrc, odst, start, r.randrange(1000),
                                                             tick(r.randint(0, 3))))
            known.append((k, (osrc, odst, 8080, port, k[4])))
        elif kind < 0.88:
            lines.append("open1 %s %d %d" % (kstr(k), r.randrange(1000), tick(r.randint(0, 3))))
            known.append((k, None))
        else:
            osrc, odst, port = r.choice(servers), r.choice(snat), r.randrange(1024, 65536)
            lines.append("openx %s %08x %08x 8080 %d %d %d" % (kstr(k), osrc, odst, port, r.randrange(1000),
                                                             tick(r.randint(0, 3))))
            known.append((k, (osrc, odst, 8080, port, k[4])))

    def packet(flags=None, conn=None):
        k_in, k_out = conn or r.choice(known)
        k = k_out if k_out and r.random() < 0.45 else k_in
        if flags is None:
            flags = r.choice(flag_choices)
        lines.append("pkt %s %02x %d" % (kstr(k), flags, tick(r.randint(0, 2))))

    def handshake(conn):
        for f, out in ((0x02, 0), (0x12, 1), (0x10, 0), (0x18, 0), (0x18, 1)):
            k = conn[1] if out and conn[1] else conn[0]
            lines.append("pkt %s %02x %d" % (kstr(k), f, tick(1)))

    for _ in range(45):
        open_one()
    for conn in known[:20]:
        handshake(conn)
    for _ in range(150):
        x = r.random()
        if x < 0.80:
            packet()
        elif x < 0.87:
            lines.append("close %s" % kstr(r.choice(known)[r.choice([0, 0, 1])] or r.choice(known)[0]))
        elif x < 0.95:
            lines.append("expire %d %d %d" % (r.randrange(shards), tick(r.randint(0, 30)), r.choice([0, 1, 2, 5])))
        else:
            open_one()
    # Long idle periods: every state's timeout passes in turn (2, 10, 60,
    # 120, 300, 900 s), with reopens and traffic in between.
    for jump in (3, 11, 61, 121, 301, 901):
        for sh in range(shards):
            lines.append("expire %d %d 0" % (sh, tick(jump if sh == 0 else 0)))
        for _ in range(8):
            open_one()
        for _ in range(25):
            packet()
    # A budgeted sweep, 2 buckets at a time, once the short timeouts (NONE,
    # CLOSED, SYN_RECV) have passed but not the longer ones.
    for _ in range(14):
        open_one()
    for conn in known[-14:-7]:
        handshake(conn)
    for _ in range(20):
        packet(conn=r.choice(known[-14:]))
    tick(70)
    for _ in range(3):
        for sh in range(shards):
            lines.append("expire %d %d 2" % (sh, tick(0)))
    # dp_sess_lookup_bulk over recent keys of both directions (most held,
    # some gone) and never-opened ones, in batches shorter and longer than its 16 keys
    # ahead (a random stream of its own, so the lines above stay as they
    # were): each key's result and the batch's ops must be those of single
    # lookups.
    rb = random.Random(20261124)
    for n in (0, 1, 3, 16, 17, 40):
        batch = []
        for _ in range(n):
            kin, kout = rb.choice(known[-40:])
            batch.append(kout if kout and rb.random() < 0.45 else kin)
            if rb.random() < 0.2:
                batch[-1] = (rb.getrandbits(32), rb.choice(vips), rb.randrange(1024, 65536), 80, 6)
        lines.append(" ".join(["bulk", str(n)] + [kstr(k) for k in batch]))
    # dp_sess_expire_report: fresh half-open connections age out (NONE,
    # SYN_RECV); the report array of 5 or 6 entries makes a sweep stop early
    # and the next resume, one of 100 takes the rest.
    for _ in range(20):
        open_one()
    for conn in known[-20:-12]:
        lines.append("pkt %s 02 %d" % (kstr(conn[0]), tick(0)))
    tick(61)
    for sh in range(shards):
        for cap in (5, 6, 100):
            lines.append("expirer %d %d %d %d" % (sh, tick(0), r.choice([0, 3, 8]), cap))
    return lines


# ---- DNS (dns.txt): zones, names, queries and frames -----------------------
# Its own generator, so the vectors above do not change when this part does.
drng = random.Random(1035)


def dns_wire(dotted):
    """Wire form of a dotted name, case kept (RFC 1035 section 3.1)."""
    if dotted == ".":
        return b"\0"
    out = b""
    for label in dotted.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode("latin-1")
    return out + b"\0"


def dns_header(ident, flags, qd=1, an=0, ns=0, ar=0):
    return struct.pack("!HHHHHH", ident, flags, qd, an, ns, ar)


def dns_query(qname, qtype=1, qclass=1, ident=0x1234, flags=0x0100, ar=0, extra=b""):
    return dns_header(ident, flags, ar=ar) + qname + struct.pack("!HH", qtype, qclass) + extra


def dns_opt(udp, ext=0, version=0, flags=0, rdata=b"", owner=b"\0"):
    """OPT pseudo-RR (RFC 6891 section 6.1.2)."""
    return owner + struct.pack("!HHBBHH", 41, udp, ext, version, flags, len(rdata)) + rdata


def dns_frame(dns, vlan=None, option_words=0, proto=17, frag=0x4000, bad_csum=False):
    """Ethernet + IPv4 (checksum from csum above) + UDP 40000 -> 53 + dns."""
    l4 = struct.pack("!HHHH", 40000, 53, 8 + len(dns), 0) + dns
    if proto == 6:
        l4 = struct.pack("!HHIIBBHHH", 40000, 53, 1, 0, 0x50, 0x18, 8192, 0, 0) + dns
    ip = ipv4(0x0A010203, 0x0A000035, proto, l4, ttl=61, ident=0x4D2E, frag=frag,
              options=b"\x01" * (4 * option_words))
    if bad_csum:
        ip = ip[:10] + bytes([ip[10] ^ 1]) + ip[11:]
    hdr = bytes.fromhex("020000000035020000000002")
    if vlan is not None:
        hdr += struct.pack("!HH", 0x8100, vlan)
    return hdr + b"\x08\x00" + ip


def dns_random_name():
    labels = [
        "".join(drng.choice("abcdefghijklmnopqrstuvwxyz0123456789-") for _ in range(drng.randrange(1, 9)))
        for _ in range(drng.randrange(1, 4))
    ]
    return ".".join(labels) + ".example.net"


def dns_random_case(dotted):
    return "".join(c.upper() if c.isalpha() and drng.random() < 0.4 else c for c in dotted)


def dns_add(lines, dotted, ttl, addrs):
    lines.append("add %s %d %s" % (dns_wire(dotted).hex(), ttl,
                                   ",".join("%08x" % a for a in addrs) if addrs else "-"))


def dns():
    """Lines of dns.txt. Zones first (config, then adds), then what is
    asked of them: names converted, queries (DNS messages) and frames."""
    lines = []
    # EDNS on, 1232 bytes (DNS flag day 2020).
    lines.append("config 64 4096 600 1232")
    for dotted in ["www.Example.COM", "f.isi.arpa.", ".", "", "a..b", ".a", "x" * 63, "x" * 64,
                   ".".join(["x" * 63] * 3 + ["y" * 61]), ".".join(["x" * 63] * 3 + ["y" * 62])]:
        lines.append("name %s" % (dotted.encode().hex() or "-"))
    dns_add(lines, "www.example.com", 300, [0xC0000201, 0xC0000202, 0xC0000203])
    dns_add(lines, "NS1.Example.Com", 86400, [0xC6336435])
    dns_add(lines, "mail.example.com", 600, [])
    dns_add(lines, "fit.example.com", 60, [0x0A000000 + i for i in range(29)])
    dns_add(lines, "big.example.com", 60, [0x0A010000 + i for i in range(30)])
    dns_add(lines, "e74.example.com", 60, [0x0A020000 + i for i in range(74)])
    dns_add(lines, "e75.example.com", 60, [0x0A030000 + i for i in range(75)])
    dns_add(lines, "caf\xc9.example", 5, [0x01020304])
    dns_add(lines, ".".join(["x" * 63] * 3 + ["y" * 61]), 7, [0x7F000001])
    dns_add(lines, "WWW.EXAMPLE.COM", 1, [1])  # a duplicate in another case
    dns_add(lines, "zero-ttl.example.com", 0, [0x08080808, 0x08080404])
    dns_add(lines, "max-ttl.example.com", 0x7FFFFFFF, [0x09090909])
    lines.append("add c0%s 5 -" % "0c")                              # a pointer: refused
    lines.append("add 0161 5 -")                                      # no root label
    lines.append("add 016100 2147483648 01020304")                    # TTL over 2^31 - 1
    present = ["www.example.com", "ns1.example.com", "mail.example.com", "fit.example.com", "big.example.com",
               "e74.example.com", "e75.example.com", "zero-ttl.example.com", "max-ttl.example.com"]
    for _ in range(30):
        name = dns_random_name()
        if name in present:
            continue
        present.append(name)
        dns_add(lines, dns_random_case(name), drng.randrange(0, 100000),
                [drng.getrandbits(32) for _ in range(drng.randrange(0, 6))])

    q = []  # (label, message)
    www = dns_wire("www.example.com")
    q.append(("a_www", dns_query(www, ident=0xBEEF)))
    q.append(("any_ns1", dns_query(dns_wire("ns1.example.com"), 255)))
    q.append(("nxdomain", dns_query(dns_wire("nope.example.com"))))
    q.append(("nxdomain_aaaa", dns_query(dns_wire("nope.example.com"), 28)))
    q.append(("nodata_aaaa", dns_query(www, 28)))
    q.append(("nodata_mx", dns_query(www, 15)))
    q.append(("nodata_no_a", dns_query(dns_wire("mail.example.com"))))
    q.append(("refused_ch", dns_query(www, 1, 3)))
    q.append(("refused_any_class", dns_query(www, 1, 255)))
    q.append(("version_bind", dns_query(dns_wire("version.bind"), 16, 3, 0x5C1E, 0)))
    q.append(("notimp_axfr", dns_query(dns_wire("example.com"), 252)))
    q.append(("notimp_ixfr", dns_query(dns_wire("example.com"), 251)))
    for opcode in (1, 2, 4, 5, 15):
        q.append(("opcode_%d" % opcode, dns_query(www, flags=(opcode << 11) | 0x0100)))
    q.append(("qdcount_0", dns_header(0x7777, 0x0100, qd=0)))
    q.append(("qdcount_2", dns_header(0x7778, 0, qd=2) + www + b"\0\x01\0\x01" + www + b"\0\x01\0\x01"))
    q.append(("qr_set", dns_header(1, 0x8580, 1, 1) + www + b"\0\x01\0\x01"))
    q.append(("qr_bare", dns_header(1, 0x8000, qd=0)))
    # Captured-style: dig 9.18 (RD AD, OPT 1232 + COOKIE), nslookup, 0x20 case.
    q.append(("dig_cookie", bytes.fromhex("3b7a01200001000000000001") + www + bytes.fromhex(
        "00010001" "00" "0029" "04d0" "0000" "0000" "000c" "000a0008" "5e1d276b8a42990c")))
    q.append(("nslookup", bytes.fromhex("000201000001000000000000") + dns_wire("ns1.example.com") + b"\0\x01\0\x01"))
    q.append(("caps_0x20", dns_query(dns_wire("wWw.ExAmPlE.cOM"), ident=0x9A01, flags=0)))
    q.append(("latin1_case", dns_query(dns_wire("CAF\xc9.example"))))
    q.append(("latin1_other", dns_query(dns_wire("caf\xe9.example"))))
    q.append(("zero_ttl", dns_query(dns_wire("zero-ttl.example.com"))))
    q.append(("max_ttl", dns_query(dns_wire("max-ttl.example.com"))))
    # Lengths at the limits.
    q.append(("label_63", dns_query(dns_wire("q" * 63 + ".example.com"))))
    for t in (0x40, 0x7F, 0x80, 0xBF):
        q.append(("label_type_%02x" % t, dns_query(bytes([t]) + b"b" * t + b"\0")))
    n255 = ".".join(["x" * 63] * 3 + ["y" * 61])
    n256 = ".".join(["x" * 63] * 3 + ["y" * 62])
    q.append(("name_255", dns_query(dns_wire(n255))))
    q.append(("name_255_caps", dns_query(dns_wire(n255.upper()))))
    q.append(("name_256", dns_query(dns_wire(n256))))
    q.append(("name_256_no_root", dns_query(dns_wire(n256)[:-1])))
    # Pointers.
    q.append(("qname_pointer_self", dns_query(b"\xc0\x0c")))
    q.append(("qname_pointer_tail", dns_query(b"\x03www\xc0\x00")))
    rr_back = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 4) + bytes([10, 0, 0, 1])
    q.append(("ar_pointer_back", dns_query(www, ar=1, extra=rr_back)))
    for target in (0, 11, 33, 40):
        q.append(("ar_pointer_%d" % target, dns_query(www, ar=1, extra=struct.pack("!H", 0xC000 | target) + rr_back[2:])))
    # Counts and sizes.
    q.append(("ar_missing", dns_query(www, ar=1)))
    an = dns_header(2, 0x0100, 1, 1) + www + b"\0\x01\0\x01" + b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 1, 5) + b"\1\2\3\4"
    q.append(("an_rdlen_past_end", an))
    q.append(("an_ignored", an[:-5] + b"\x04\1\2\3\4"))
    q.append(("trailing_byte", dns_query(www) + b"\0"))
    q.append(("uncounted_opt", dns_query(www) + dns_opt(1232)))
    q.append(("fit_512", dns_query(dns_wire("fit.example.com"))))
    q.append(("big_tc", dns_query(dns_wire("big.example.com"))))
    for name, udp in (("big", 4096), ("e74", 4096), ("e75", 4096), ("fit", 100), ("big", 0), ("big", 512),
                      ("e75", 1300)):
        q.append(("edns_%s_%d" % (name, udp), dns_query(dns_wire(name + ".example.com"), ar=1, extra=dns_opt(udp))))
    # EDNS details.
    for fl in (0x8000, 0xFFFF, 0x7FFF):
        q.append(("edns_flags_%04x" % fl, dns_query(www, ar=1, extra=dns_opt(4096, 0, 0, fl))))
    q.append(("edns_badvers", dns_query(www, ar=1, extra=dns_opt(4096, 0, 1, 0x8000))))
    q.append(("edns_two_opt", dns_query(www, ar=2, extra=dns_opt(1232) + dns_opt(4096))))
    q.append(("edns_owner", dns_query(www, ar=1, extra=dns_opt(1232, owner=dns_wire("example")))))
    q.append(("edns_misplaced", dns_header(0x1234, 0x0100, 1, 1) + www + b"\0\x01\0\x01" + dns_opt(1232)))
    # Every prefix of the dig query: short_header, then truncated.
    dig = q[[lbl for lbl, _ in q].index("dig_cookie")][1]
    for n in range(len(dig)):
        q.append(("dig_prefix_%02d" % n, dig[:n]))
    # Random queries over present and absent names, random case, types,
    # classes, flags and OPT; then noise: random byte flips of them.
    qtypes = [1, 1, 1, 28, 15, 255, 16, 251, 252, 0, 65535]
    qclasses = [1, 1, 1, 1, 3, 4, 254, 255]
    rand = []
    for i in range(120):
        name = drng.choice(present + ["absent.example.com", "example.com", "www.example.org"])
        opt = drng.random() < 0.5
        extra = dns_opt(drng.choice([0, 512, 1232, 1400, 4096, drng.randrange(65536)]),
                        0, 1 if drng.random() < 0.1 else 0, drng.getrandbits(16)) if opt else b""
        m = dns_query(dns_wire(dns_random_case(name)), drng.choice(qtypes), drng.choice(qclasses),
                      drng.getrandbits(16), drng.getrandbits(16) & 0x01B0, int(opt), extra)
        rand.append(m)
        q.append(("rand_%03d" % i, m))
    for i in range(60):
        m = bytearray(drng.choice(rand))
        for _ in range(drng.randrange(1, 4)):
            m[drng.randrange(len(m))] = drng.randrange(256)
        if drng.random() < 0.3:
            m = m[:drng.randrange(len(m))]
        q.append(("noise_%02d" % i, bytes(m)))
    lines += ["query %s %s" % (lbl, m.hex() or "-") for lbl, m in q]

    # Frames, answered in place.
    f = [("udp", dns_frame(dns_query(www))),
         ("udp_notimp_padded", dns_frame(dns_query(www, flags=0x2100, ident=0x4242))),
         ("vlan_opt", dns_frame(dns_query(dns_wire("NS1.example.com"), ar=1, extra=dns_opt(1232)), vlan=0x2064)),
         ("ip_options_1", dns_frame(dns_query(www), option_words=1)),
         ("ip_options_10_vlan", dns_frame(dns_query(dns_wire("big.example.com")), vlan=5, option_words=10)),
         ("nxdomain", dns_frame(dns_query(dns_wire("nope.example.com")))),
         ("tcp", dns_frame(dns_query(www), proto=6)),
         ("bad_ip_checksum", dns_frame(dns_query(www), bad_csum=True)),
         ("fragment", dns_frame(dns_query(www), frag=0x2000)),
         ("dns_truncated", dns_frame(dns_query(www)[:-1])),
         ("dns_response", dns_frame(dns_header(1, 0x8580, 1, 0) + www + b"\0\x01\0\x01")),
         ("short_udp", dns_frame(b"\x12"))]
    lines += ["frame %s %s" % (lbl, fr.hex()) for lbl, fr in f]

    # EDNS off: OPT walked like any RR, 512 bytes, no OPT sent.
    lines.append("config 8 256 64 0")
    dns_add(lines, "www.example.com", 300, [0xC0000201, 0xC0000202, 0xC0000203])
    dns_add(lines, "big.example.com", 60, [0x0A010000 + i for i in range(30)])
    lines.append("query plain_opt %s" % dns_query(www, ar=1, extra=dns_opt(4096, 0, 1, 0x8000)).hex())
    lines.append("query plain_big_opt %s" % dns_query(dns_wire("big.example.com"), ar=1, extra=dns_opt(4096)).hex())
    lines.append("query plain_two_opt %s" % dns_query(www, ar=2, extra=dns_opt(1232) + dns_opt(4096)).hex())
    # A zone filling up: names, then name bytes, then records run out.
    lines.append("config 3 40 5 512")
    dns_add(lines, "a.example", 10, [1, 2, 3])
    dns_add(lines, "b.example", 10, [1, 2, 3])
    dns_add(lines, "a-much-much-longer-name.example", 10, [])
    dns_add(lines, "b.example", 10, [4, 5])
    dns_add(lines, ".", 10, [])
    dns_add(lines, "c", 10, [])
    lines.append("query root %s" % dns_query(b"\0").hex())
    lines.append("query a_full %s" % dns_query(dns_wire("A.EXAMPLE")).hex())
    return lines


# Two ClientHellos written by OpenSSL 3.0.19 through Python 3.11's ssl
# module (ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), check_hostname off,
# maximum_version TLSv1_2 resp. TLSv1_3, wrap_bio(MemoryBIO(), MemoryBIO(),
# server_hostname="www.example.com"), do_handshake() until SSLWantReadError,
# then the outgoing BIO read). Random and key shares are fresh per run, so
# the bytes are kept here rather than regenerated.
OPENSSL_HELLO_TLS12 = (
    "16030100b5010000b10303c1d297e364dcb1ed9a240110592e2952518efaed500940cc52d5fc1d4ef68aeb00"
    "001ec02cc030c02bc02fcca9cca8c024c028c023c027009f009e006b006700ff0100006a0000001400120000"
    "0f7777772e6578616d706c652e636f6d000b000403000102000a000c000a001d0017001e0019001800230000"
    "0016000000170000000d002a0028040305030603080708080809080a080b0804080508060401050106010303"
    "03010302040205020602")
OPENSSL_HELLO_TLS13 = (
    "1603010200010001fc030336ed2d31d3c0779682f7f5ccb62f10d2f4873b085ab87ed7cf91af50faa890cb20"
    "27375c75f3e78298e1a09cb4b4433d59e2ce9bbbd5705e2a6da609162fc070ff0024130213031301c02cc030"
    "c02bc02fcca9cca8c024c028c023c027009f009e006b006700ff0100018f00000014001200000f7777772e65"
    "78616d706c652e636f6d000b000403000102000a00160014001d0017001e0019001801000101010201030104"
    "002300000016000000170000000d002a0028040305030603080708080809080a080b08040805080604010501"
    "0601030303010302040205020602002b00050403040303002d00020101003300260024001d00205be4fb55e6"
    "256c03a2a4129e267b0f1e74de81548604a7a70085ecbfcb150a20001500de00000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000")

# The first record of an OpenSSL 3.0.19 TLS 1.2 server (Python 3.11's ssl
# module, server and client over MemoryBIOs, a self-signed RSA 2048
# certificate, OP_NO_TICKET): its ServerHello alone, with the 32-byte
# session ID it chose. Kept for the same reason.
OPENSSL_SERVER_HELLO_TLS12 = (
    "160303005d020000590303a8f787e3d61b6b301dea5b5f9b4be7c895cc6f41203685c57070102382a0c55720"
    "26978ee52e5bc22cc6941e1fb527a4ee566844f958be0a22591c5b546610edafc030000011ff01000100000b"
    "00040300010200170000")


def tls_server_hello(sid=b"", exts=None, after=b"", version=0x0303):
    """A ServerHello record from RFC 5246 7.4.1.3 / RFC 8446 4.1.3, then `after` in the same record."""
    body = struct.pack("!H", version) + bytes(range(0x50, 0x70)) + bytes([len(sid)]) + sid + b"\x13\x01\x00"
    if exts is not None:
        e = b"".join(struct.pack("!HH", t, len(d)) + d for t, d in exts)
        body += struct.pack("!H", len(e)) + e
    hs = b"\x02" + struct.pack("!I", len(body))[1:] + body + after
    return struct.pack("!BHH", 22, 0x0303, len(hs)) + hs


def tls_hello(sid=b"", suites=b"\x00\x2f\xc0\x2b", comp=b"\x00", exts=None, client_version=0x0303,
              record_version=0x0301):
    """A ClientHello record assembled from RFC 5246 7.4.1.2 / RFC 8446 4.1.2."""
    body = struct.pack("!H", client_version) + bytes(range(0xA0, 0xC0))
    body += bytes([len(sid)]) + sid + struct.pack("!H", len(suites)) + suites + bytes([len(comp)]) + comp
    if exts is not None:
        e = b"".join(struct.pack("!HH", t, len(d)) + d for t, d in exts)
        body += struct.pack("!H", len(e)) + e
    hs = b"\x01" + struct.pack("!I", len(body))[1:] + body
    return struct.pack("!BHH", 22, record_version, len(hs)) + hs


def tls_sni(name):
    return struct.pack("!HBH", len(name) + 3, 0, len(name)) + name


def l7_vectors():
    """dp_http, dp_urlrule, dp_tls, dp_cookie and dp_splice inputs (own
    random stream, so the other areas' vectors stay as they were)."""
    r = random.Random(2026112303)
    out = []
    reqs = [
        b"GET /index.htm HTTP/1.1\r\nHost: www.example.com\r\n\r\n",
        b"GET /a.gif HTTP/1.0\r\nConnection: Keep-Alive\r\nCookie: SRV=s1; x=2\r\n\r\nBODY",
        b"GET / HTTP/1.0\r\n\r\n",
        b"POST /cgi/x HTTP/1.1\nHost:h \t\nContent-Length: 12\nConnection: foo, close\n\n",
        b"\r\nGET http://h/p?q HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
        b"get /x.GIF?y=1 HTTP/1.1\r\nCookie: a=1\r\nCookie: b=2\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        b"GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
        b"GET / HTTP/2.0\r\n\r\n",
        b"GET /\r\n\r\n",
        b"GET  / HTTP/1.1\r\n\r\n",
        b"G(T / HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1\r\nX : y\r\n\r\n",
        b"GET / HTTP/1.1\r\nX: a\rb\r\n\r\n",
        b"GET / HTTP/1.1\r\nX: a\x01\r\n\r\n",
        b"GET /\x80 HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n",
        b"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        b"GET / HTTP/1.1\r\nContent-Length: 9007199254740993\r\n\r\n",
        b"GET / HTTP/1.1\r\nContent-Length:\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: h",
        b"OPTIONS * HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\n\r\n",
        b"GET /a/b/c.htm HTTP/1.1\r\nCookie:  SRV = s2 ; y\r\nConnection: close\r\n\r\nGET /next HTTP/1.1\r\n",
    ]
    resps = [
        b"HTTP/1.1 200 OK\r\nSet-Cookie: A=1; path=/\r\nContent-Length: 6\r\nSet-Cookie: B=2\r\n\r\n",
        b"HTTP/1.0 302\r\nLocation: /x\r\n\r\n",
        b"HTTP/1.1 20 OK\r\n\r\n",
        b"HTTP/1.1 099 OK\r\n\r\n",
        b"HTTP/1.1 404 Not Found\r\nConnection: close\r\n"
        + b"".join(b"Set-Cookie: c" + str(i).encode() + b"=" + str(i).encode() + b"\r\n" for i in range(10)) + b"\r\n",
        b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
    ]
    out.append("# http REQ|RESP MAX_LINE MAX_HEADERS BUFFER_CAP CUTS(a,b,..|-) MESSAGE-HEX")
    for kind, msgs in (("req", reqs), ("resp", resps)):
        for m in msgs:
            out.append("http %s 8190 101 4096 - %s" % (kind, m.hex()))
            cuts = sorted(r.sample(range(len(m) + 1), min(3, len(m) + 1)))
            out.append("http %s 8190 101 4096 %s %s" % (kind, ",".join(map(str, cuts)), m.hex()))
    # Limits: a 40-byte line limit, 3 headers, a 64-byte head buffer.
    for m in (b"GET /" + b"a" * 40 + b" HTTP/1.1\r\n\r\n", b"GET /" + b"a" * 24 + b" HTTP/1.1\r\n\r\n",
              b"GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n", b"GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n",
              b"GET / HTTP/1.1\r\nHost: " + b"h" * 30 + b"\r\nCookie: x=" + b"1" * 20 + b"\r\n\r\n"):
        out.append("http req 40 3 64 - %s" % m.hex())
        out.append("http req 40 3 64 %d %s" % (r.randrange(len(m)), m.hex()))
    for _ in range(20):
        # random mutations of valid requests
        m = bytearray(r.choice(reqs[:6]))
        for _ in range(r.randrange(1, 4)):
            m[r.randrange(len(m))] = r.choice(b" \r\n:;=/aZ\t\x00")
        out.append("http req 8190 101 4096 %d %s" % (r.randrange(len(m) + 1), bytes(m).hex()))

    out.append("# rules first|prec MAX | rule KIND(0 beg,1 sub,2 end,3 ext,4 host) FLAGS(1 icase) PREC TARGET PATTERN-HEX")
    out.append("# match PATH-HEX HOST-HEX (first match, then match-all)")
    # NCTU rule set I (.gif, .htm; the rest to every server) and II (50 rules).
    for nrules in (2, 50):
        out.append("rules first %d" % nrules)
        exts = ["gif", "htm"] + ["a" + chr(97 + i // 26) + chr(97 + i % 26) for i in range(nrules - 2)]
        for i, e in enumerate(exts):
            out.append("rule 3 0 0 %d %s" % (i, e.encode().hex()))
        for path in (b"/wbtree/a.gif", b"/wbtree/b.htm", b"/missing.jpg", b"/x.aaz", b"/"):
            out.append("match %s %s" % (path.hex(), b"www".hex()))
    out.append("rules prec 16")
    mixed = [(0, 0, 5, 1, b"/cgi/"), (1, 0, 3, 2, b"cart"), (2, 1, 9, 3, b".GIF"), (4, 1, 1, 4, b"img.example.com"),
             (3, 0, 3, 5, b"htm"), (0, 1, 0, 6, b"/STATIC"), (1, 0, 9, 7, b"aab")]
    for kind, flags, prec, target, pat in mixed:
        out.append("rule %d %d %d %d %s" % (kind, flags, prec, target, pat.hex()))
    paths = [b"/cgi/run.gif", b"/static/a.htm", b"/shop/cart/x.htm", b"/aaab", b"/x.gif", b"/", b""]
    hosts = [b"IMG.example.COM", b"www", b""]
    for _ in range(25):
        out.append("match %s %s" % (r.choice(paths).hex() or "-", r.choice(hosts).hex() or "-"))
    out.append("rules first 12")
    alpha = "ab/.G"
    for i in range(12):
        pat = "".join(r.choice(alpha) for _ in range(r.randrange(1, 4)))
        out.append("rule %d %d 0 %d %s" % (r.randrange(5), r.randrange(2), i, pat.encode().hex()))
    for _ in range(25):
        p = "".join(r.choice(alpha) for _ in range(r.randrange(0, 10)))
        h = "".join(r.choice(alpha) for _ in range(r.randrange(0, 3)))
        out.append("match %s %s" % (p.encode().hex() or "-", h.encode().hex() or "-"))

    out.append("# tls RECORD-HEX")
    good = tls_hello(sid=bytes(range(32)), exts=[(0, tls_sni(b"shop.example")), (0xff01, b"\x00")])
    tls = [good, tls_hello(), tls_hello(exts=None, client_version=0x0301),
           tls_hello(sid=b"\x55" * 32, exts=[(43, b"\x06\x3a\x3a\x03\x04\x03\x03"), (0, tls_sni(b"a.b"))]),
           bytes.fromhex(OPENSSL_HELLO_TLS12), bytes.fromhex(OPENSSL_HELLO_TLS13)]
    bad = []
    for at, v in ((0, 23), (1, 2), (5, 2), (8, None), (43, 33), (44 + 32 + 1, 3), (44 + 32 + 1, 0), (44 + 32 + 6, 0)):
        b = bytearray(good)
        b[at] = v if v is not None else (b[at] + 1) & 255
        bad.append(bytes(b))
    b = bytearray(good)
    b[8] -= 1
    bad.append(bytes(b))
    for k in (0, 1, 4, 5):  # the extensions block and first extension lengths, off by one
        b = bytearray(good)
        b[44 + 32 + 2 + 4 + 2 + k] ^= 1
        bad.append(bytes(b))
    bad.append(struct.pack("!BHH", 22, 0x0301, 0x4001))  # over 2^14: refused on the header alone
    bad.append(struct.pack("!BHH", 22, 0x0301, 3) + b"\x01\x00\x00")
    for data in tls + bad + [good[:n] for n in (0, 4, 5, 60, len(good) - 1)] + [good + b"\x17\x03\x03"]:
        out.append("tls %s" % (data.hex() or "-"))

    out.append("# tlssrv RECORD-HEX (the server's first record)")
    sgood = tls_server_hello(sid=bytes(range(32)), exts=[(43, b"\x03\x04"), (0xff01, b"\x00")])
    srv = [bytes.fromhex(OPENSSL_SERVER_HELLO_TLS12), sgood, tls_server_hello(),
           tls_server_hello(sid=b"\x07" * 16, after=b"\x0b\x00\x00\x03\x00\x00\x00"),
           tls_server_hello(exts=[(43, b"\x03\x04\x00")]), tls_server_hello(exts=[(1, b"\x00" * 9)])]
    for at, v in ((0, 21), (1, 2), (5, 1), (43, 33), (8, None)):
        b = bytearray(sgood)
        b[at] = v if v is not None else (b[at] + 1) & 255
        srv.append(bytes(b))
    b = bytearray(sgood)
    b[44 + 32 + 3 + 1] ^= 1  # the extensions block length, off by one
    srv.append(bytes(b))
    # prefixes are MORE; a ClientHello is no ServerHello
    for data in srv + [sgood[:n] for n in (0, 5, 40, len(sgood) - 1)] + [tls[0]]:
        out.append("tlssrv %s" % (data.hex() or "-"))

    out.append("# cookie NAME COOKIE-HEADER-VALUE-HEX | setcookie learn|insert|rewrite|prefix NAME VALUE RESPONSE-HEX")
    for name, v in (("SRV", b"SRV=s1; x=2"), ("SRV", b"a=1;SRV = s2 ;SRV=s3"), ("SRV", b"srv=s1; SRVX=2"),
                    ("SRV", b"flag; SRV="), ("SRV", b""), ("x", b"a=1; x=22; b=3"), ("a", b" a = 1 ")):
        out.append("cookie %s %s" % (name, v.hex() or "-"))
    resp = (b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nSet-Cookie: ASPSESSIONID=abc123; path=/\r\n"
            b"Set-Cookie: Server=A\r\n\r\n")
    for mode, name, value in (("learn", "ASPSESSIONID", "-"), ("learn", "Server", "-"), ("learn", "none", "-"),
                              ("insert", "SRVID", "s1"), ("rewrite", "ASPSESSIONID", "s1"),
                              ("prefix", "ASPSESSIONID", "s1"), ("rewrite", "none", "s1"), ("insert", "SRVID", "s\"1")):
        out.append("setcookie %s %s %s %s" % (mode, name, value, resp.hex()))
    out.append("setcookie insert SRVID server-7 %s" % b"HTTP/1.0 200 OK\n\n".hex())

    out.append("# splice CISN VISN REQ LOCAL SERVER RESP DIR(0 c2s,1 s2c) OFF DEL INS-HEX|x FRAME-HEX FRAME2-HEX|-")
    for _ in range(30):
        def near():
            return (0xFFFFFFFF - r.randrange(0, 600)) if r.random() < 0.7 else r.getrandbits(32)
        cisn, visn, srv = near(), near(), near()
        req = (cisn + 1) & 0xFFFFFFFF
        local = req if r.random() < 0.5 else near()
        resp_seq = (visn + 1 + r.randrange(0, 3000)) & 0xFFFFFFFF
        d = r.randrange(2)
        pay = bytes(r.randrange(32, 127) for _ in range(r.randrange(0, 80)))
        seq = near() if r.random() < 0.5 else (req if d == 0 else (srv + r.randrange(0, 50)) & 0xFFFFFFFF)
        flags = r.choice([0x18, 0x10, 0x11, 0x08])
        f1 = eth_with(r, l4_fix(ipv4(0xC6120001 + d, 0xC6130001, 6,
                                     tcp(40000, 80, pay, flags=flags, seq=seq, ack=near()))))
        ins = b""
        if r.random() < 0.7 and pay:
            off = r.randrange(len(pay) + 1)
            dl = r.randrange(len(pay) - off + 1) if r.random() < 0.3 else 0
            ins = bytes(r.randrange(32, 127) for _ in range(r.randrange(0, 40)))
            ins_hex = ins.hex() or "-"
        else:
            off, dl, ins_hex = 0, 0, "x"
        f2 = "-"
        if r.random() < 0.8:
            # the other side's ACK: of the segment's start or end as the receiver numbers it, or random
            base = (seq + ((local - req) if d == 0 else (resp_seq - srv))) & 0xFFFFFFFF
            ack = r.choice([base, (base + len(pay) - dl + len(ins)) & 0xFFFFFFFF, r.getrandbits(32)])
            f2 = eth_with(r, l4_fix(ipv4(0xC6130001, 0xC6120001, 6,
                                         tcp(80, 40000, b"", flags=0x10, seq=r.getrandbits(32), ack=ack)))).hex()
        out.append("splice %08x %08x %08x %08x %08x %08x %d %d %d %s %s %s" % (
            cisn, visn, req, local, srv, resp_seq, d, off, dl, ins_hex, f1.hex(), f2))
    return out


def health_vectors():
    """Checkers of every kind with random result sequences (phases of
    mostly passing and mostly failing probes, so servers go down and come
    back), classifications, the check phase and detection windows."""
    r = random.Random(1212)
    out = []
    configs = [(1, 2000, 0, 0, 0, 2, 3, 0, "-"), (1, 600, 150, 900, 0, 2, 3, 0, "-"),
               (0, 1000, 250, 5000, 300, 1, 1, 1, "-"), (2, 3000, 500, 0, 1000, 3, 2, 0, "-"),
               (3, 1500, 100, 7000, 0, 4, 5, 1, "ready"), (1, 0, 0, 0, 0, 2, 3, 0, "-"),
               (3, 1000, 0, 0, 0, 2, 3, 0, "-")]
    for c in configs:
        out.append("config %d %d %d %d %d %d %d %d %s" % c)
        if c[1] == 0 or (c[0] == 3 and c[8] == "-"):
            continue  # refused configurations
        out.append("window 0")
        out.append("window %d" % (c[4] or c[1]))
        t = 0
        for i in range(60):
            good = (i // 15) % 2 == 0
            res = 0 if r.random() < (0.85 if good else 0.2) else r.choice([1, 2, 3, 4])
            t += r.randrange(0, 3000)
            out.append("report %d %d" % (res, t))
        out.append("report 9 %d" % t)
        out.append("counters")
        for _ in range(6):
            body = bytes(r.choice(b"readyst: \n") for _ in range(r.randrange(0, 40)))
            out.append("classify %d %d %d %s" % (r.random() < 0.9, r.random() < 0.2,
                                                r.choice([0, 150, 200, 204, 302, 399, 404, 503]),
                                                body.hex() if body else "-"))
    for _ in range(12):
        n = r.randrange(1, 9)
        out.append("phase %d %d %d %d %d %d" % (r.randrange(0, 10000), r.randrange(0, n), n,
                                               r.choice([0, 1000, 2000, 5000]), r.choice([100, 1500, 2000, 30000]),
                                               r.choice([0, 0, 1000])))
    return out


def persist_vectors():
    """A 1-set table under purge and nopurge, a larger one with expiry,
    32-byte session-ID keys, and cookie decisions over every mode and
    option combination."""
    r = random.Random(2020)
    out = []
    for cap, klen, expire, onfull, keys, steps in ((8, 4, 0, 0, 13, 120), (8, 4, 5000, 1, 12, 120),
                                                    (64, 4, 2000, 0, 90, 400), (16, 32, 0, 0, 30, 120)):
        out.append("config %d %d %d %d" % (cap, klen, expire, onfull))
        pool = [bytes(r.randrange(256) for _ in range(klen)) for _ in range(keys)]
        now = 0
        for _ in range(steps):
            now += r.randrange(0, 120)
            k = r.choice(pool).hex()
            x = r.random()
            if x < 0.45:
                out.append("lookup %s %d" % (k, now))
            elif x < 0.9:
                out.append("store %s %d %d" % (k, r.randrange(0, 6), now))
            elif x < 0.95:
                out.append("remove %s %d" % (k, now))
            else:
                out.append("expire %d %d" % (now, r.randrange(1, 4)))
        out.append("forget 2")
        out.append("stats")
    for mode in range(4):
        for flags in range(16):
            for csrv, usable, served, setc, cacheable in ((-1, 0, 5, 0, 1), (-1, 0, 5, 1, 0), (3, 1, 3, 1, 1),
                                                          (3, 0, 4, 0, 1), (3, 0, 4, 1, 0)):
                out.append("cookie %d %d %d %d %d %d %d" % (mode, flags, csrv, usable, served, setc, cacheable))
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    pkts = packets()
    with open(os.path.join(OUT, "packets.txt"), "w") as f:
        f.write("# name hex-frame (Ethernet II, no FCS); generated by make_vectors.py\n")
        for name, frame in pkts:
            f.write("%s %s\n" % (name, frame.hex() if frame else "-"))
    # Fuzzer seeds: well-formed frames of each shape and a few malformed
    # ones; byte 0 is the harness's option byte (checksum check on).
    os.makedirs(CORPUS, exist_ok=True)
    for name, frame in pkts:
        if name.startswith(("known", "ok_0", "bad_", "frag", "udp_len_17", "tcp_doff_6", "qinq")):
            with open(os.path.join(CORPUS, name), "wb") as f:
                f.write(b"\x01" + frame)
    with open(os.path.join(OUT, "builds.txt"), "w") as f:
        f.write("# name proto src dst sport dport ttl id seq ack flags paylen l4csum dmac smac\n")
        for line in builds():
            f.write(line + "\n")
    with open(os.path.join(OUT, "routes.txt"), "w") as f:
        f.write("# add P/D HOP | del P/D | lookup IP | bulk (all lookups again, batched)\n")
        for line in routes():
            f.write(line + "\n")
    with open(os.path.join(OUT, "sched.txt"), "w") as f:
        f.write("# scheduler scenarios; commands in core/golden/dp_golden.c run_sched\n")
        for line in sched():
            f.write(line + "\n")
    with open(os.path.join(OUT, "flows.txt"), "w") as f:
        f.write("# src dst (hex) sport dport proto\n")
        for line in flows():
            f.write(line + "\n")
    with open(os.path.join(OUT, "nat.txt"), "w") as f:
        f.write("# dnat|snat NAME IP PORT FRAME | full NAME SIP SPORT DIP DPORT FRAME | dr NAME DMAC SMAC FRAME |\n"
                "# ipip NAME SRC DST DMAC SMAC ID MTU TTL HEADROOM FRAME   (addresses hex, frames Ethernet II hex)\n"
                "# icmp NAME SRC ID TTL NEXT_HOP_MTU CAP FRAME   (ICMP fragmentation needed, in place)\n")
        for line in nat_vectors():
            f.write(line + "\n")
    with open(os.path.join(OUT, "syncookie.txt"), "w") as f:
        f.write("# siphash LEN (key 00..0f, message 00..LEN-1) | key KEY C MAX_AGE |\n"
                "# make CLIENT VIP CPORT VPORT MSS COUNTER | check CLIENT VIP CPORT VPORT COOKIE COUNTER |\n"
                "# synack COUNTER MSS WINDOW TTL FRAME | ack COUNTER FRAME\n")
        for line in syncookie_vectors():
            f.write(line + "\n")
    with open(os.path.join(OUT, "ratelimit.txt"), "w") as f:
        f.write("# config SERVICES TICKS_PER_SECOND | set SVC RATE BURST NOW | clear SVC |\n"
                "# admit SVC NOW N (N connections at NOW) | stats SVC\n")
        for line in ratelimit_vectors():
            f.write(line + "\n")
    with open(os.path.join(OUT, "sessions.txt"), "w") as f:
        f.write("# key = src dst (hex) sport dport proto; ticks are seconds\n"
                "# open1 KEY SERVER NOW | open2 KEY OSRC ODST OSPORT START SERVER NOW (SNAT port steered from START)\n"
                "# openx KEY OSRC ODST OSPORT OPORT SERVER NOW | pkt KEY FLAGS(hex) NOW | close KEY\n"
                "# expire SHARD NOW BUDGET | expirer SHARD NOW BUDGET CAP (dp_sess_expire_report, CAP entries)\n")
        for line in sessions():
            f.write(line + "\n")

    with open(os.path.join(OUT, "dns.txt"), "w") as f:
        f.write("# config MAX_NAMES MAX_NAME_BYTES MAX_RECORDS EDNS_UDP_SIZE (a fresh zone) | name DOTTED-HEX|- |\n"
                "# add WIRE-HEX TTL ADDR,ADDR,...|- | query LABEL DNS-HEX|- | frame LABEL FRAME-HEX (answered in place)\n")
        for line in dns():
            f.write(line + "\n")
    with open(os.path.join(OUT, "l7.txt"), "w") as f:
        for line in l7_vectors():
            f.write(line + "\n")
    with open(os.path.join(OUT, "health.txt"), "w") as f:
        f.write("# config KIND INTER FASTINTER DOWNINTER TIMEOUT RISE FALL START EXPECT|- | report RESULT END_MS |\n"
                "# classify ANSWERED REFUSED STATUS BODY-HEX|- | phase START POS N MININTER OWN MAXSPREAD |\n"
                "# window FAIL_DELAY | counters\n")
        for line in health_vectors():
            f.write(line + "\n")
    with open(os.path.join(OUT, "persist.txt"), "w") as f:
        f.write("# config CAPACITY KEY_LEN EXPIRE_MS ON_FULL | store KEY-HEX SERVER NOW | lookup KEY-HEX NOW |\n"
                "# remove KEY-HEX NOW | expire NOW MAX_SETS | forget SERVER | stats |\n"
                "# cookie MODE FLAGS COOKIE_SERVER USABLE SERVED_BY SERVER_SETS_COOKIE CACHEABLE\n")
        for line in persist_vectors():
            f.write(line + "\n")
    with open(os.path.join(OUT, "sched_param.txt"), "w") as f:
        f.write("# uri/hdr schedulers and redispatch: the sched.txt commands (dp_golden.c run_sched_file),\n"
                "# scenario lines + hash_fn uri_len uri_depth; req NOW DATA-HEX|.|- ; avoid ID NOW DATA-HEX|.|- ;\n"
                "# avoidkeys ID N SRC STEP NOW\n")
        for line in sched_param():
            f.write(line + "\n")


if __name__ == "__main__":
    main()
