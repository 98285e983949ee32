#!/usr/bin/env python3
"""Checks the committed golden transcript (expected.txt) against independent
Python re-implementations, so the transcript is not merely "what the host
printed once":

- packets: a Python parser gives the same verdict (drop reason name) and, for
  accepted frames, the same fields; every TTL rewrite equals the original
  header with TTL-1 and a fully recomputed checksum;
- builds: every built frame's IPv4 header checksum verifies, the UDP/TCP
  checksum verifies with the pseudo-header when one was asked for, and the
  addresses, ports, TTL and length are those of the spec;
- routes: every add/delete return code, lookup and bulk result equals a
  linear scan of the current rule list;
- flows: every hash equals the documented mixing of the field values, and
  the shard equals (hash * shards) >> 32.

Usage: check_expected.py VECTOR_DIR EXPECTED_TXT   (exit 1 on the first mismatch)
"""
import struct
import sys


def fail(msg):
    print("check_expected: " + msg)
    sys.exit(1)


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def parse(frame, verify, allow_frag):
    """Returns (reason, fields) following the documented check order."""
    n = len(frame)
    if n < 14:
        return "eth_truncated", None
    et = struct.unpack("!H", frame[12:14])[0]
    l3, vlan = 14, 0
    if et == 0x8100:
        if n < 18:
            return "eth_truncated", None
        vlan, et = struct.unpack("!HH", frame[14:18])
        l3 = 18
    if et != 0x0800:
        return "eth_unsupported_type", None
    ip = frame[l3:]
    if len(ip) < 20:
        return "ip4_truncated", None
    if ip[0] >> 4 != 4:
        return "ip4_bad_version", None
    ihl = ip[0] & 15
    if ihl < 5:
        return "ip4_bad_ihl", None
    if len(ip) < ihl * 4:
        return "ip4_truncated", None
    total = struct.unpack("!H", ip[2:4])[0]
    if total < ihl * 4 or total > len(ip):
        return "ip4_bad_total_length", None
    if verify and csum(ip[:ihl * 4]) != 0:
        return "ip4_bad_checksum", None
    frag = struct.unpack("!H", ip[6:8])[0]
    if frag & 0x3FFF and not allow_frag:
        return "ip4_fragment", None
    proto = ip[9]
    l4 = ip[ihl * 4:total]
    f = dict(eth=et, vlan=vlan, l3=l3, l4=l3 + ihl * 4, tot=total, ihl=ihl, ttl=ip[8], proto=proto,
             flags=0, src=struct.unpack("!I", ip[12:16])[0], dst=struct.unpack("!I", ip[16:20])[0],
             sport=0, dport=0)
    hdr = 0
    if frag & 0x1FFF == 0 and proto == 17:
        if len(l4) < 8:
            return "l4_truncated", None
        ulen = struct.unpack("!H", l4[4:6])[0]
        if ulen < 8 or (ulen > len(l4) and not frag & 0x2000):
            return "udp_bad_length", None
        hdr = 8
        f["sport"], f["dport"] = struct.unpack("!HH", l4[:4])
    elif frag & 0x1FFF == 0 and proto == 6:
        if len(l4) < 20:
            return "l4_truncated", None
        doff = (l4[12] >> 4) * 4
        if doff < 20 or doff > len(l4):
            return "tcp_bad_offset", None
        hdr = doff
        f["sport"], f["dport"] = struct.unpack("!HH", l4[:4])
        f["flags"] = l4[13]
    f["pay"] = f["l4"] + hdr
    f["paylen"] = len(l4) - hdr
    return "ok", f


def sections(path):
    out, cur = {}, None
    with open(path) as fh:
        for line in fh:
            line = line.rstrip("\n")
            if line.startswith("== "):
                cur = line[3:]
                out[cur] = []
            elif cur is not None:
                out[cur].append(line)
    return out


def vector_lines(path):
    with open(path) as fh:
        return [l.rstrip("\n") for l in fh if l.strip() and not l.startswith("#")]


def check_packets(vdir, lines):
    body = [l for l in lines if not l.startswith("  ops")]
    i = 0
    for vline in vector_lines(vdir + "/packets.txt"):
        name, hx = vline.split()
        frame = b"" if hx == "-" else bytes.fromhex(hx)
        head = body[i].split()
        i += 1
        if head[1] != name:
            fail("packets: expected %s, transcript has %s" % (name, head[1]))
        verdict = dict(kv.split("=") for kv in head[2:])
        strict, f = parse(frame, True, False)
        if verdict["strict"] != strict:
            fail("packets %s: strict %s, python says %s" % (name, verdict["strict"], strict))
        if strict != "ok":
            lax, f = parse(frame, False, True)
            if verdict["lax"] != lax:
                fail("packets %s: lax %s, python says %s" % (name, verdict["lax"], lax))
            if lax != "ok":
                continue
        fields = dict(kv.split("=") for kv in body[i].split())
        i += 1
        for k, v in f.items():
            base = 16 if k in ("eth", "vlan", "flags", "src", "dst") else 10
            if int(fields[k], base) != v:
                fail("packets %s: %s=%s, python says %d" % (name, k, fields[k], v))
        ttl_line = body[i].split()
        i += 1
        ihl = f["ihl"] * 4
        hdr = bytearray(frame[f["l3"]:f["l3"] + ihl])
        if hdr[8] <= 1:
            want_res, want = "ip4_ttl_expired", bytes(hdr)
        else:
            hdr[8] -= 1
            hdr[10:12] = b"\0\0"
            c = csum(bytes(hdr))
            # A header that did not verify before keeps its error: compare
            # the incremental result with the full one only when it did.
            if csum(frame[f["l3"]:f["l3"] + ihl]) != 0:
                want_res, want = "ok", None
            else:
                want_res, want = "ok", bytes(hdr[:10]) + struct.pack("!H", c) + bytes(hdr[12:])
        if ttl_line[1] != "ttl=" + want_res or (want is not None and ttl_line[2] != want.hex()):
            fail("packets %s: TTL rewrite %s, python says %s %s" % (name, " ".join(ttl_line[1:3]), want_res,
                                                                    want.hex() if want else ""))
    return i


def check_builds(vdir, lines):
    body = [l for l in lines if not l.startswith("  ops")]
    for vline, tline in zip(vector_lines(vdir + "/builds.txt"), body):
        v = vline.split()
        t = tline.split()
        if t[1] != v[0] or t[2] != "ok":
            fail("builds %s: %s" % (v[0], tline[:60]))
        frame = bytes.fromhex(t[4])
        proto = 6 if v[1] == "tcp" else 17
        ip = frame[14:34]
        total = struct.unpack("!H", ip[2:4])[0]
        if csum(ip) != 0 or ip[9] != proto or ip[8] != int(v[6]):
            fail("builds %s: IPv4 header wrong" % v[0])
        if ip[12:20] != bytes.fromhex(v[2]) + bytes.fromhex(v[3]):
            fail("builds %s: addresses wrong" % v[0])
        l4 = frame[34:14 + total]
        if struct.unpack("!HH", l4[:4]) != (int(v[4]), int(v[5])):
            fail("builds %s: ports wrong" % v[0])
        if total != 20 + (20 if proto == 6 else 8) + int(v[11]):
            fail("builds %s: total length %d" % (v[0], total))
        if v[12] == "1":
            pseudo = ip[12:20] + struct.pack("!BBH", 0, proto, len(l4))
            if csum(pseudo + l4) != 0:
                fail("builds %s: L4 checksum does not verify" % v[0])


def check_routes(vdir, lines):
    rules = {}
    lookups = []
    out = iter(lines)

    def ip_of(s):
        a = [int(x) for x in s.split(".")]
        return (a[0] << 24) | (a[1] << 16) | (a[2] << 8) | a[3]

    def mask(d):
        return 0 if d == 0 else (0xFFFFFFFF << (32 - d)) & 0xFFFFFFFF

    def lpm(ip):
        best = None
        for (p, d), h in rules.items():
            if ip & mask(d) == p and (best is None or d > best[0]):
                best = (d, h)
        return None if best is None else best[1]

    for vline in vector_lines(vdir + "/routes.txt"):
        t = next(out)
        w = vline.split()
        if w[0] == "add":
            p, d = w[1].split("/")
            d = int(d)
            rules[(ip_of(p) & mask(d), d)] = int(w[2])
            want = "add %s %s -> 0" % (w[1], w[2])
        elif w[0] == "del":
            p, d = w[1].split("/")
            d = int(d)
            rc = 0 if rules.pop((ip_of(p) & mask(d), d), None) is not None else -3
            want = "del %s -> %d" % (w[1], rc)
        elif w[0] == "lookup":
            ip = ip_of(w[1])
            lookups.append(ip)
            h = lpm(ip)
            want = "lookup %s -> %s" % (w[1], "miss -3" if h is None else h)
        else:
            want = "bulk %d" % len(lookups)
            if t != want:
                fail("routes: %r, python says %r" % (t, want))
            for ip in lookups:
                h = lpm(ip)
                want = "  %08x %06x" % (ip, h) if h is not None else "  %08x ffffffff" % ip
                t = next(out)
                if t != want:
                    fail("routes bulk: %r, python says %r" % (t, want))
            continue
        if t != want:
            fail("routes: %r, python says %r" % (t, want))
    t = next(out)
    if not t.startswith("lpm rules=%d " % len(rules)):
        fail("routes: %r, python says %d rules" % (t, len(rules)))


def flow_hash(src, dst, sport, dport, proto):
    M = 0xFFFFFFFF

    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & M

    h = 0x5AD1F10B
    for w in (src, dst, (sport << 16) | dport, proto):
        k = rotl((w * 0xCC9E2D51) & M, 15) * 0x1B873593 & M
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & M
    h ^= 13
    h ^= h >> 16
    h = h * 0x85EBCA6B & M
    h ^= h >> 13
    h = h * 0xC2B2AE35 & M
    h ^= h >> 16
    return h


def check_flows(vdir, lines):
    flows = [l for l in lines if l.startswith("flow ")]
    vecs = vector_lines(vdir + "/flows.txt")
    if len(flows) != len(vecs):
        fail("flows: %d lines for %d keys" % (len(flows), len(vecs)))
    for vline, t in zip(vecs, flows):
        s, d, sp, dp, pr = vline.split()
        h = flow_hash(int(s, 16), int(d, 16), int(sp), int(dp), int(pr))
        want = "flow %s hash=%08x shard=%d " % (vline, h, (h * 3) >> 32)
        if not t.startswith(want):
            fail("flows: %r, python says %r" % (t, want))


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    vdir, expected = sys.argv[1], sys.argv[2]
    sec = sections(expected)
    check_packets(vdir, sec["packets"])
    check_builds(vdir, sec["builds"])
    check_routes(vdir, sec["routes"])
    check_flows(vdir, sec["flows"])
    print("check_expected: transcript agrees with the Python references")


if __name__ == "__main__":
    main()
