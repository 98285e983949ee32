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
  linear scan of the current rule list; the rule and second-level group
  counts are those of the final rule list;
- flows: every hash equals the documented mixing of the field values, and
  the shard equals (hash * shards) >> 32;
- nat: every NAT/full-NAT rewrite equals the frame with the new addresses
  and ports and both checksums recomputed in full (RFC 1071, UDP "no
  checksum" kept), DR changes only the MACs, IPIP is the RFC 2003 outer
  header with a full checksum before the unchanged inner packet, or the
  documented refusal (no L4, headroom, MTU with DF set or clear);
- syncookie: SipHash-2-4 of the 64 reference messages, every cookie made
  and checked, every SYN-ACK (rebuilt here field by field) and every ACK
  check, against a Python SipHash (self-tested on the paper's Appendix A
  value) and the cookie layout of dp_syncookie.h;
- ratelimit: every admit/refuse, set, clear and bucket state against token
  buckets kept in Python's unbounded integers;
- sched: check_sched.py re-implements the schedulers (IPVS rr, wrr, lc, wlc,
  sh, Maglev tables entry by entry, HAProxy static-rr, leastconn, first,
  source map-based and consistent, random) and compares every pick, table,
  remap count and documented op count; HAProxy roundrobin and the other
  HAProxy scenarios are compared with sequences recorded from a real
  HAProxy 2.6.12;
- l7 (check_l7.py): HTTP heads, URL rules, TLS ClientHellos, cookies and
  spliced segments against Python re-implementations from RFC 7230/6265/
  5246/8446, HAProxy's ACL and cookie semantics and Linux's seqadj rules;
  the four L7 drop reasons at the end of the drop-reason list;
- health, persist (check_health.py): HAProxy's rise/fall counter and
  check intervals, the check phase and detection window, content checks
  with their comparison counts; the stick table (its key hash re-derived,
  LRU purge, nopurge refusal, expiry sweeps) and HAProxy's cookie decision
  table, with every documented op count;
- sessions: a Python model of the session table built from dp_session.h
  (placement, overflow counts, IPVS TCP transitions, per-state aging modulo
  2^32, budgeted expiry) gives every open, lookup, track, close and expiry
  result, the shard counters, and every op count of every operation.

The operation counters the cycle model prices are checked exactly against
what the contracts in core/include/dp/*.h say each call adds: parse
(packets, whole headers walked, checksum bytes), TTL rewrite (one
incremental update, 3 bytes written), build (bytes written, copied and
summed), LPM lookups (one probe and cache line, two when the /24 holds a
longer rule), NAT/DR/IPIP rewrites, SipHash and cookie MACs, SYN-ACKs,
rate-limiter calls, and every session-table operation (its contract states
the counts in terms of the bucket layout, which the model above
reproduces). Not checked: the LPM update counters and the flow-table
counters, whose values depend on the table's internal layout rather than on
a documented per-call count.

Every vector must have its transcript entry and every transcript line must
be accounted for: a short or truncated transcript fails.

Usage: check_expected.py VECTOR_DIR EXPECTED_TXT   (exit 1 on the first mismatch)
"""
import struct
import sys

# The RFC 1071 checksum the vector generator builds valid packets with; the
# C core's own checksums are what this script checks against it.
from make_vectors import csum
# The load-balancer checks use the generator's SipHash-2-4 and cookie layout
# (plain Python, self-tested below against the SipHash paper's Appendix A)
# and its L4 checksum (RFC 768 / 9293 pseudo-header over the whole segment).
from make_vectors import MSS_TABLE, cookie_check, cookie_make, l4_fix, mss_index, siphash24
from check_sched import check_sched
from check_l7 import check_l7
from check_health import check_health, check_persist


def fail(msg):
    print("check_expected: " + msg)
    sys.exit(1)



def parse(frame, verify, allow_frag, ops=None):
    """Returns (reason, fields) following the documented check order, and
    adds to ops (a dict) what dp_pkt.h says dp_parse counts: one packet,
    whole headers once their bytes are present (the L4 header only when
    accepted), IHL*4 checksum bytes when the checksum is verified."""
    if ops is None:
        ops = {}
    add = lambda k, v: ops.__setitem__(k, ops.get(k, 0) + v)
    add("packets", 1)
    n = len(frame)
    if n < 14:
        return "eth_truncated", None
    et = struct.unpack("!H", frame[12:14])[0]
    l3, vlan = 14, 0
    if et == 0x8100:
        if n < 18:
            add("bytes_parsed", 14)
            return "eth_truncated", None
        vlan, et = struct.unpack("!HH", frame[14:18])
        l3 = 18
    add("bytes_parsed", l3)
    if et != 0x0800:
        return "eth_unsupported_type", None
    ip = frame[l3:]
    if len(ip) < 20:
        return "ip4_truncated", None
    add("bytes_parsed", 20)
    if ip[0] >> 4 != 4:
        return "ip4_bad_version", None
    ihl = ip[0] & 15
    if ihl < 5:
        return "ip4_bad_ihl", None
    if len(ip) < ihl * 4:
        return "ip4_truncated", None
    add("bytes_parsed", ihl * 4 - 20)
    total = struct.unpack("!H", ip[2:4])[0]
    if total < ihl * 4 or total > len(ip):
        return "ip4_bad_total_length", None
    if verify:
        add("checksum_bytes", ihl * 4)
        if csum(ip[:ihl * 4]) != 0:
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
    add("bytes_parsed", hdr)
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


def check_ops(where, line, label, want):
    """line must be "  <label>" followed by exactly the nonzero counters of
    want, in dp_ops_t order (the order dp_golden prints them in)."""
    order = ["packets", "bytes_parsed", "bytes_written", "checksum_bytes", "csum_updates", "table_probes",
             "cache_lines", "table_writes", "rules_evaluated", "bytes_copied", "crypto_bytes", "hashes",
             "servers_examined"]
    unknown = set(want) - set(order)
    if unknown:
        fail("%s: checker bug, unknown counters %s" % (where, sorted(unknown)))
    expect = "  " + " ".join([label] + ["%s=%d" % (k, want[k]) for k in order if want.get(k)])
    if line != expect:
        fail("%s: %r, python says %r" % (where, line, expect))


class Lines:
    """The transcript lines of one section, consumed in order."""

    def __init__(self, section, lines):
        self.section, self.lines, self.i = section, lines, 0

    def next(self, what):
        if self.i >= len(self.lines):
            fail("%s: transcript ends where %s was expected" % (self.section, what))
        self.i += 1
        return self.lines[self.i - 1]

    def done(self):
        if self.i != len(self.lines):
            fail("%s: %d transcript lines left over, from %r" % (self.section, len(self.lines) - self.i,
                                                                  self.lines[self.i]))


def check_packets(vdir, lines):
    body = Lines("packets", lines)
    for vline in vector_lines(vdir + "/packets.txt"):
        name, hx = vline.split()
        frame = b"" if hx == "-" else bytes.fromhex(hx)
        head = body.next("the entry of " + name).split()
        if head[:2] != ["pkt", name]:
            fail("packets: expected pkt %s, transcript has %s" % (name, " ".join(head[:2])))
        verdict = dict(kv.split("=") for kv in head[2:])
        ops = {}
        strict, f = parse(frame, True, False, ops)
        if verdict["strict"] != strict:
            fail("packets %s: strict %s, python says %s" % (name, verdict["strict"], strict))
        if strict != "ok":
            lax, f = parse(frame, False, True, ops)
            if verdict["lax"] != lax:
                fail("packets %s: lax %s, python says %s" % (name, verdict["lax"], lax))
        check_ops("packets %s" % name, body.next("the ops of " + name), "ops", ops)
        if f is None:
            continue
        fields = dict(kv.split("=") for kv in body.next("the fields of " + name).split())
        for k, v in f.items():
            base = 16 if k in ("eth", "vlan", "flags", "src", "dst") else 10
            if int(fields[k], base) != v:
                fail("packets %s: %s=%s, python says %d" % (name, k, fields[k], v))
        ttl_line = body.next("the TTL rewrite of " + name).split()
        ihl = f["ihl"] * 4
        hdr = bytearray(frame[f["l3"]:f["l3"] + ihl])
        if hdr[8] <= 1:
            want_res, want, ttl_ops = "ip4_ttl_expired", bytes(hdr), {}
        else:
            ttl_ops = {"csum_updates": 1, "bytes_written": 3}
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
        check_ops("packets %s TTL" % name, body.next("the TTL ops of " + name), "ttl_ops", ttl_ops)
    body.done()


def check_builds(vdir, lines):
    body = Lines("builds", lines)
    for vline in vector_lines(vdir + "/builds.txt"):
        v = vline.split()
        tline = body.next("the build of " + v[0])
        t = tline.split()
        if t[:3] != ["build", v[0], "ok"]:
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
        paylen = int(v[11])
        l4hdr = 20 if proto == 6 else 8
        if total != 20 + l4hdr + paylen:
            fail("builds %s: total length %d" % (v[0], total))
        if len(frame) != max(60, 14 + total):
            fail("builds %s: frame length %d, not the padded %d" % (v[0], len(frame), max(60, 14 + total)))
        if v[12] == "1":
            pseudo = ip[12:20] + struct.pack("!BBH", 0, proto, len(l4))
            if csum(pseudo + l4) != 0:
                fail("builds %s: L4 checksum does not verify" % v[0])
        # dp_pkt.h: everything but the payload written, the payload copied
        # (or zero-filled), the IPv4 header summed, and with an L4 checksum
        # the pseudo-header addresses and the whole segment too.
        ops = {"bytes_written": len(frame) - paylen, "bytes_copied": paylen,
               "checksum_bytes": 20 + (8 + l4hdr + paylen if v[12] == "1" else 0)}
        check_ops("builds %s" % v[0], body.next("the ops of " + v[0]), "ops", ops)
    body.done()


def check_routes(vdir, lines):
    rules = {}
    lookups = []
    body = Lines("routes", lines)
    probes = [0]  # table probes the lookups must count (dp_lpm.h)
    split = set()  # /24s holding a rule longer than /24

    def next_line():
        return body.next("the result of a routes.txt line")

    def count_lookup(ip):
        # One first-level read; a second one when the /24 holds a longer rule.
        probes[0] += 2 if ip >> 8 in split else 1

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
        t = next_line()
        w = vline.split()
        if w[0] == "add":
            p, d = w[1].split("/")
            d = int(d)
            rules[(ip_of(p) & mask(d), d)] = int(w[2])
            split = {q >> 8 for q, e in rules if e > 24}
            want = "add %s %s -> 0" % (w[1], w[2])
        elif w[0] == "del":
            p, d = w[1].split("/")
            d = int(d)
            rc = 0 if rules.pop((ip_of(p) & mask(d), d), None) is not None else -3
            split = {q >> 8 for q, e in rules if e > 24}
            want = "del %s -> %d" % (w[1], rc)
        elif w[0] == "lookup":
            ip = ip_of(w[1])
            lookups.append(ip)
            count_lookup(ip)
            h = lpm(ip)
            want = "lookup %s -> %s" % (w[1], "miss -3" if h is None else h)
        else:
            want = "bulk %d" % len(lookups)
            if t != want:
                fail("routes: %r, python says %r" % (t, want))
            for ip in lookups:
                h = lpm(ip)
                count_lookup(ip)
                want = "  %08x %06x" % (ip, h) if h is not None else "  %08x ffffffff" % ip
                t = next_line()
                if t != want:
                    fail("routes bulk: %r, python says %r" % (t, want))
            continue
        if t != want:
            fail("routes: %r, python says %r" % (t, want))
    t = next_line()
    want = "lpm rules=%d tbl8_groups_used=%d" % (len(rules), len(split))
    if t != want:
        fail("routes: %r, python says %r" % (t, want))
    # Update counters depend on the table's internals (see the docstring).
    if not body.next("the update ops").startswith("  update_ops"):
        fail("routes: no update_ops line after the lpm line")
    check_ops("routes lookups", body.next("the lookup ops"), "lookup_ops",
              {"table_probes": probes[0], "cache_lines": probes[0]})
    body.done()


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
    """Hashes and shards as documented; insert, lookup, expiry and the shard
    counters against a dict per shard following dp_flow.h (capacity per
    shard, refusal when full, lookups refresh last-seen, expiry when
    last-seen + timeout <= now), driven as dp_golden.c drives the table."""
    shards, capacity, timeout = 3, 24, 300
    table = [{} for _ in range(shards)]  # key -> [value, last_seen]
    stats = [dict(inserts=0, refused=0, expired=0) for _ in range(shards)]
    body = Lines("flows", lines)
    now = 0
    for vline in vector_lines(vdir + "/flows.txt"):
        s, d, sp, dp, pr = vline.split()
        key = (int(s, 16), int(d, 16), int(sp), int(dp), int(pr))
        h = flow_hash(*key)
        sh = (h * shards) >> 32
        now += 10
        t = table[sh]
        rc = 0
        if key in t:
            t[key] = [now * 3, now]
        elif len(t) >= capacity:
            rc = -2
            stats[sh]["refused"] += 1
        else:
            t[key] = [now * 3, now]
            stats[sh]["inserts"] += 1
        lrc, value = (0, t[key][0]) if key in t else (-3, 0)
        want = "flow %s hash=%08x shard=%d insert=%d lookup=%d value=%d" % (vline, h, sh, rc, lrc, value)
        got = body.next("the entry of flow " + vline)
        if got != want:
            fail("flows: %r, python says %r" % (got, want))
        if now % 500 == 0:
            for i in range(shards):
                old = [k for k, (_, seen) in table[i].items() if seen + timeout <= now]
                for k in old:
                    del table[i][k]
                stats[i]["expired"] += len(old)
                want = "  expire shard=%d now=%d evicted=%d" % (i, now, len(old))
                got = body.next("an expiry")
                if got != want:
                    fail("flows: %r, python says %r" % (got, want))
    for i in range(shards):
        want = "shard %d entries=%d capacity=%d inserts=%d refused=%d expired=%d deletes=0" % (
            i, len(table[i]), capacity, stats[i]["inserts"], stats[i]["refused"], stats[i]["expired"])
        got = body.next("the counters of shard %d" % i)
        if got != want:
            fail("flows: %r, python says %r" % (got, want))
    # Probe and write counts depend on the bucket layout (see the docstring).
    if not body.next("the flow ops").startswith("  ops"):
        fail("flows: no ops line after the shard counters")
    body.done()


def check_nat(vdir, lines):
    """Every NAT rewrite equals the input frame with the new addresses and
    ports and both checksums recomputed in full (a UDP checksum of 0 stays
    0); DR changes the MACs only; IPIP is the RFC 2003 outer header (full
    checksum) in front of the unchanged inner packet, or the documented
    refusal; ICMP fragmentation needed is RFC 792/1191's message rebuilt
    here; op counts as dp_nat.h states."""
    body = Lines("nat", lines)
    for vline in vector_lines(vdir + "/nat.txt"):
        w = vline.split()
        op, name, frame = w[0], w[1], bytes.fromhex(w[-1])
        verdict, f = parse(frame, True, True)
        if verdict != "ok":
            fail("nat %s: the vector does not parse (%s)" % (name, verdict))
        l3, ihl, tot = f["l3"], f["ihl"] * 4, f["tot"]
        ip = frame[l3:l3 + tot]
        ops = {}
        rc, out = 0, None
        if op in ("dnat", "snat", "full"):
            frag_off = struct.unpack("!H", ip[6:8])[0] & 0x1FFF
            if f["proto"] not in (6, 17) or frag_off:
                rc = -2
            else:
                if op == "full":
                    rew = [(12, 0, int(w[2], 16), int(w[3])), (16, 2, int(w[4], 16), int(w[5]))]
                else:
                    rew = [(12 if op == "snat" else 16, 0 if op == "snat" else 2, int(w[2], 16), int(w[3]))]
                b = bytearray(ip)
                for a_off, p_off, addr, port in rew:
                    b[a_off:a_off + 4] = struct.pack("!I", addr)
                    b[ihl + p_off:ihl + p_off + 2] = struct.pack("!H", port)
                b[10:12] = b"\0\0"
                b[10:12] = struct.pack("!H", csum(bytes(b[:ihl])))
                has_l4 = f["proto"] == 6 or ip[ihl + 6:ihl + 8] != b"\0\0"
                new_ip = l4_fix(bytes(b), udp_csum=has_l4)
                out = frame[:l3] + new_ip + frame[l3 + tot:]
                halves = len(rew)
                ops = {"csum_updates": halves * (5 if has_l4 else 2), "bytes_written": halves * (10 if has_l4 else 8)}
        elif op == "dr":
            out = bytes.fromhex(w[2]) + bytes.fromhex(w[3]) + frame[12:]
            ops = {"bytes_written": 12}
        elif op == "ipip":
            src, dst, dmac, smac = int(w[2], 16), int(w[3], 16), bytes.fromhex(w[4]), bytes.fromhex(w[5])
            ident, mtu, ttl, room = int(w[6]), int(w[7]), int(w[8]), int(w[9])
            df = struct.unpack("!H", ip[6:8])[0] & 0x4000
            if room < 20:
                rc = -3
            elif tot + 20 > mtu:
                rc = -4 if df else -5
            else:
                outer = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, ip[1], tot + 20, ident, df, ttl or ip[8], 4, 0,
                                              struct.pack("!I", src), struct.pack("!I", dst)))
                outer[10:12] = struct.pack("!H", csum(bytes(outer)))
                out = dmac + smac + frame[12:l3] + bytes(outer) + ip
                ops = {"bytes_written": l3 + 20, "checksum_bytes": 20}
        elif op == "icmp":
            # RFC 792 type 3 code 4 with the RFC 1191 next-hop MTU, built
            # here with struct and this file's own RFC 1071 sum.
            src, ident, ttl, mtu, cap = int(w[2], 16), int(w[3]), int(w[4]), int(w[5]), int(w[6])
            frag_off = struct.unpack("!H", ip[6:8])[0] & 0x1FFF
            quote = ip[:ihl + min(8, tot - ihl)]
            if f["proto"] == 1 or frag_off:
                rc = -6
            elif cap < l3 + 28 + len(quote):
                rc = -7
            else:
                icmp = bytearray(struct.pack("!BBHHH", 3, 4, 0, 0, mtu) + quote)
                icmp[2:4] = struct.pack("!H", csum(bytes(icmp)))
                hdr = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, (ip[1] & 0x1E) | 0xC0, 20 + len(icmp), ident, 0,
                                            ttl, 1, 0, struct.pack("!I", src), ip[12:16]))
                hdr[10:12] = struct.pack("!H", csum(bytes(hdr)))
                out = frame[6:12] + frame[0:6] + frame[12:l3] + bytes(hdr) + bytes(icmp)
                ops = {"bytes_written": l3 + 28, "bytes_copied": len(quote), "checksum_bytes": 28 + len(quote)}
        else:
            fail("nat: unknown op %s" % op)
        want = "nat %s %s rc=%d" % (name, op, rc)
        if out is not None:
            want += " len=%d %s" % (len(out), out.hex())
        got = body.next("the result of " + name)
        if got != want:
            fail("nat %s: %r, python says %r" % (name, got[:120], want[:120]))
        check_ops("nat %s" % name, body.next("the ops of " + name), "ops", ops)
    body.done()


def syn_mss(opts):
    """dp_syncookie.h: the last well-formed MSS option (length 4, nonzero);
    the walk stops at EOL or a malformed option."""
    mss, i = 0, 0
    while i < len(opts):
        if opts[i] == 0:
            break
        if opts[i] == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2 or opts[i + 1] > len(opts) - i:
            break
        if opts[i] == 2 and opts[i + 1] == 4 and struct.unpack("!H", opts[i + 2:i + 4])[0]:
            mss = struct.unpack("!H", opts[i + 2:i + 4])[0]
        i += opts[i + 1]
    return mss


def check_syncookie(vdir, lines):
    """SipHash-2-4 outputs, cookies made and checked, SYN-ACKs and ACK
    checks against the Python SipHash and cookie layout of dp_syncookie.h;
    each SYN-ACK is rebuilt here field by field with full checksums."""
    if siphash24(bytes(range(16)), bytes(range(15))) != 0xa129ca6149be45e5:
        fail("syncookie: the Python SipHash-2-4 misses the paper's Appendix A value")
    body = Lines("syncookie", lines)
    key = bits = max_age = None
    hashed = {"hashes": 1, "crypto_bytes": 17}
    for vline in vector_lines(vdir + "/syncookie.txt"):
        w = vline.split()
        got = body.next("the result of " + vline[:40])
        ops = {}
        if w[0] == "siphash":
            n = int(w[1])
            want = "siphash %d %016x" % (n, siphash24(bytes(range(16)), bytes(range(n))))
            ops = {"hashes": 1, "crypto_bytes": n}
        elif w[0] == "key":
            key, bits, max_age = bytes.fromhex(w[1]), int(w[2]), int(w[3])
            ok = 1 <= bits <= 21 and max_age < (1 << bits)
            want = "key counter_bits=%d max_age=%d mac_bits=%d rc=%d" % (bits, max_age, 29 - bits if ok else 0,
                                                                         0 if ok else -1)
            if got != want:
                fail("syncookie: %r, python says %r" % (got, want))
            continue
        elif w[0] == "make":
            t = (int(w[1], 16), int(w[2], 16), int(w[3]), int(w[4]))
            want = "%s -> %08x" % (vline, cookie_make(key, bits, *t, int(w[5]), int(w[6])))
            ops = hashed
        elif w[0] == "check":
            t = (int(w[1], 16), int(w[2], 16), int(w[3]), int(w[4]))
            rc = cookie_check(key, bits, max_age, *t, int(w[5], 16), int(w[6]))
            want = "%s -> %d" % (vline, rc)
            ops = {} if rc == -2 else hashed
        elif w[0] in ("synack", "ack"):
            counter, frame = int(w[1]), bytes.fromhex(w[-1])
            verdict, f = parse(frame, True, False)
            if verdict != "ok" or f["proto"] != 6:
                fail("syncookie: vector %r is not a TCP frame" % vline[:40])
            l3, ihl = f["l3"], f["ihl"] * 4
            ip = frame[l3:]
            client, vip = f["src"], f["dst"]
            cport, vport, seq, ack = struct.unpack("!HHII", ip[ihl:ihl + 12])
            doff, flags = (ip[ihl + 12] >> 4) * 4, ip[ihl + 13]
            if w[0] == "synack":
                if flags & 0x17 != 0x02:
                    want = "synack %d rc=-4" % counter
                else:
                    rmss, window, ttl = int(w[2]), int(w[3]), int(w[4])
                    mss = syn_mss(ip[ihl + 20:ihl + doff])
                    cookie = cookie_make(key, bits, client, vip, cport, vport, mss, counter)
                    iph = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 44, 0, 0x4000, ttl, 6, 0,
                                                struct.pack("!I", vip), struct.pack("!I", client)))
                    iph[10:12] = struct.pack("!H", csum(bytes(iph)))
                    seg = bytearray(struct.pack("!HHIIBBHHHBBH", vport, cport, cookie, (seq + 1) & 0xFFFFFFFF, 0x60,
                                                0x12, window, 0, 0, 2, 4, rmss))
                    seg[16:18] = struct.pack("!H", csum(bytes(iph[12:20]) + struct.pack("!BBH", 0, 6, 24) + bytes(seg)))
                    out = frame[6:12] + frame[0:6] + frame[12:l3] + bytes(iph) + bytes(seg)
                    out += b"\0" * max(0, 60 - len(out))
                    want = "synack %d rc=%d len=%d %s" % (counter, MSS_TABLE[mss_index(mss)], len(out), out.hex())
                    ops = {"bytes_parsed": doff - 20, "bytes_written": 12 + len(out) - l3, "checksum_bytes": 52}
                    ops.update(hashed)
            else:
                if not flags & 0x10 or flags & 0x06:
                    rc = -5
                else:
                    rc = cookie_check(key, bits, max_age, client, vip, cport, vport, (ack - 1) & 0xFFFFFFFF, counter)
                    ops = {} if rc == -2 else hashed
                want = "ack %d -> %d" % (counter, rc)
        else:
            fail("syncookie: unknown vector %r" % vline[:40])
        if got != want:
            fail("syncookie: %r, python says %r" % (got[:140], want[:140]))
        check_ops("syncookie %s" % vline[:40], body.next("the ops of " + vline[:40]), "ops", ops)
    body.done()


def check_ratelimit(vdir, lines):
    """Token buckets modelled with Python's unbounded integers (credit in
    1/ticks_per_second tokens, refill min(capacity, credit + elapsed *
    rate), no overflow guard needed), driven as dp_golden.c drives the
    limiter; op counts as dp_ratelimit.h states."""
    body = Lines("ratelimit", lines)
    tps, buckets = None, []
    for vline in vector_lines(vdir + "/ratelimit.txt"):
        w = vline.split()
        got = body.next("the result of " + vline)
        ops = {}
        if w[0] == "config":
            n, tps = int(w[1]), int(w[2])
            buckets = [dict(rate=0, burst=0, credit=0, cap=0, last=0, admitted=0, refused=0) for _ in range(n)]
            want = "config services=%d ticks_per_second=%d memory=%d" % (n, tps, 64 + 64 * n)
            if got != want:
                fail("ratelimit: %r, python says %r" % (got, want))
            continue
        s = int(w[1])
        ok = s < len(buckets)
        if w[0] == "set":
            rate, burst, now = int(w[2]), int(w[3]), int(w[4])
            ok = ok and rate > 0 and burst > 0
            if ok:
                buckets[s].update(rate=rate, burst=burst, cap=burst * tps, credit=burst * tps, last=now)
                ops = {"table_writes": 1}
            want = "%s -> %d" % (vline, 0 if ok else -1)
        elif w[0] == "clear":
            if ok:
                buckets[s].update(rate=0, burst=0, cap=0, credit=0)
                ops = {"table_writes": 1}
            want = "%s -> %d" % (vline, 0 if ok else -1)
        elif w[0] == "admit":
            now, n = int(w[2]), int(w[3])
            b, res = buckets[s], ""
            for _ in range(n):
                if b["burst"] == 0:
                    b["admitted"] += 1
                    res += "1"
                    continue
                if now > b["last"]:
                    b["credit"] = min(b["cap"], b["credit"] + (now - b["last"]) * b["rate"])
                    b["last"] = now
                if b["credit"] >= tps:
                    b["credit"] -= tps
                    b["admitted"] += 1
                    res += "1"
                else:
                    b["refused"] += 1
                    res += "0"
            want = "%s -> %s" % (vline, res)
            ops = {"table_probes": n, "cache_lines": n, "table_writes": n}
        elif w[0] == "stats":
            b = buckets[s]
            want = "stats %d rate=%d burst=%d tokens=%d admitted=%d refused=%d" % (
                s, b["rate"], b["burst"], b["credit"] // tps if b["burst"] else 0, b["admitted"], b["refused"])
            if got != want:
                fail("ratelimit: %r, python says %r" % (got, want))
            continue
        else:
            fail("ratelimit: unknown vector %r" % vline)
        if got != want:
            fail("ratelimit: %r, python says %r" % (got, want))
        check_ops("ratelimit %s" % vline, body.next("the ops of " + vline), "ops", ops)
# ---- sessions: a Python model of dp_session.h's table -----------------------

SESS_STATES = ["none", "syn_sent", "syn_recv", "established", "fin_wait", "close_wait", "time_wait",
               "closed", "udp"]
# IPVS's tcp_states (net/netfilter/ipvs/ip_vs_proto_tcp.c) for the states the
# table keeps, re-entered here as {table: {flag: "from->to ..."}}.
_IPVS = {
    "in": {"syn": "none>syn_recv syn_sent>established syn_recv>syn_recv established>established "
                  "fin_wait>syn_recv close_wait>syn_recv time_wait>syn_recv closed>syn_recv",
           "fin": "none>closed syn_sent>syn_sent syn_recv>time_wait established>close_wait "
                  "fin_wait>time_wait close_wait>close_wait time_wait>time_wait closed>closed",
           "ack": "none>closed syn_sent>syn_sent syn_recv>established established>established "
                  "fin_wait>fin_wait close_wait>close_wait time_wait>time_wait closed>closed",
           "rst": "none>closed syn_sent>closed syn_recv>syn_recv established>closed "
                  "fin_wait>closed close_wait>closed time_wait>closed closed>closed"},
    "out": {"syn": "none>syn_sent syn_sent>syn_sent syn_recv>syn_recv established>established "
                   "fin_wait>syn_sent close_wait>syn_sent time_wait>syn_sent closed>syn_sent",
            "fin": "none>time_wait syn_sent>syn_sent syn_recv>time_wait established>fin_wait "
                   "fin_wait>fin_wait close_wait>time_wait time_wait>time_wait closed>closed",
            "ack": "none>established syn_sent>syn_sent syn_recv>established established>established "
                   "fin_wait>fin_wait close_wait>close_wait time_wait>time_wait closed>closed",
            "rst": "none>closed syn_sent>syn_sent syn_recv>closed established>closed "
                   "fin_wait>closed close_wait>closed time_wait>time_wait closed>closed"},
}
# INPUT-ONLY differs from INPUT only for FIN in established and fin_wait.
_IPVS["in_only"] = {f: _IPVS["in"][f] for f in _IPVS["in"]}
_IPVS["in_only"]["fin"] = _IPVS["in"]["fin"].replace("established>close_wait", "established>fin_wait") \
    .replace("fin_wait>time_wait", "fin_wait>fin_wait")


def sess_tcp_next(state, out, input_only, flags):
    if state == "udp":
        return state
    if flags & 0x04:
        f = "rst"
    elif flags & 0x02:
        f = "syn"
    elif flags & 0x01:
        f = "fin"
    elif flags & 0x10:
        f = "ack"
    else:
        return "closed"
    table = "out" if out else ("in_only" if input_only else "in")
    return dict(x.split(">") for x in _IPVS[table][f].split())[state]


class SessShard:
    def __init__(self, nb):
        self.nb = nb
        self.used = [[False] * 5 for _ in range(nb)]
        self.tag = [[0] * 5 for _ in range(nb)]
        self.overflow = [0] * nb
        self.rec = [[None] * 5 for _ in range(nb)]
        self.cursor = 0
        self.st = dict(entries=0, connections=0, inserts=0, refused=0, expired=0, deletes=0)
        self.by_state = {n: 0 for n in SESS_STATES}
        self.expired_by_state = {n: 0 for n in SESS_STATES}

    def rec_at(self, slot):
        return self.rec[slot // 5][slot % 5]


def sess_slot_lines(i):
    """Cache lines (0, 1) of the 128-byte bucket that record slot i covers:
    bytes 8 + 24i .. 31 + 24i (dp_session.h's layout)."""
    return {(8 + 24 * i) // 64, (31 + 24 * i) // 64}


class SessModel:
    def __init__(self, shards, capacity, timeouts):
        self.nshards, self.capacity, self.timeouts = shards, capacity, timeouts
        self.nb = (capacity * 6 + 24) // 25
        self.shards = [SessShard(self.nb) for _ in range(shards)]

    def position(self, key, ops):
        h = flow_hash(*key)
        ops["hashes"] += 1
        m = (h * 0x9E3779B97F4A7C15) & (2 ** 64 - 1)
        return (h * self.nshards) >> 32, (((m >> 32) * self.nb) >> 32), (m >> 24) & 0xFF

    def find(self, sh, key, pos, ops):
        s, b = self.shards[sh], pos[1]
        for _ in range(s.nb):
            probes, lines, found = 1, {0}, None
            for i in range(5):
                if s.used[b][i] and s.tag[b][i] == pos[2]:
                    probes += 1
                    lines |= sess_slot_lines(i)
                    if s.rec[b][i]["key"] == key:
                        found = b * 5 + i
                        break
            ops["table_probes"] += probes
            ops["cache_lines"] += len(lines)
            if found is not None:
                return found
            if s.overflow[b] == 0:
                return None
            b = (b + 1) % s.nb
        return None

    def place(self, sh, key, pos, ops):
        s, b = self.shards[sh], pos[1]
        while True:
            ops["table_probes"] += 1
            ops["cache_lines"] += 1
            if not all(s.used[b]):
                break
            s.overflow[b] = min(s.overflow[b] + 1, 0xFFFF) if s.overflow[b] != 0xFFFF else 0xFFFF
            ops["table_writes"] += 1
            b = (b + 1) % s.nb
        i = s.used[b].index(False)
        s.used[b][i] = True
        s.tag[b][i] = pos[2]
        s.rec[b][i] = {"key": key}
        s.st["entries"] += 1
        ops["table_writes"] += 2
        ops["cache_lines"] += 1 if 1 in sess_slot_lines(i) else 0
        return b * 5 + i

    def unplace(self, sh, slot, ops):
        s = self.shards[sh]
        target = slot // 5
        b = self.position(s.rec_at(slot)["key"], ops)[1]
        while b != target:
            if s.overflow[b] != 0xFFFF:
                s.overflow[b] -= 1
            ops["table_writes"] += 1
            b = (b + 1) % s.nb
        s.used[target][slot % 5] = False
        s.rec[target][slot % 5] = None
        s.st["entries"] -= 1
        ops["table_writes"] += 1

    def open(self, kin, kout, server, now, ops):
        pin = self.position(kin, ops)
        if kout is not None:
            pout = self.position(kout, ops)
            if pout[0] != pin[0]:
                return -6, None
        sh = pin[0]
        s = self.shards[sh]
        if self.find(sh, kin, pin, ops) is not None:
            return -5, None
        if kout is not None and self.find(sh, kout, pout, ops) is not None:
            return -5, None
        if s.st["entries"] + (2 if kout else 1) > self.capacity:
            s.st["refused"] += 1
            return -2, None
        state = "none" if kin[4] == 6 else "udp"
        sin = self.place(sh, kin, pin, ops)
        sout = self.place(sh, kout, pout, ops) if kout else sin
        for slot, out, peer in ((sin, False, sout), (sout, True, sin)):
            s.rec_at(slot).update(peer=peer, server=server, last=now, state=state, out=out and kout is not None)
        s.st["connections"] += 1
        s.st["inserts"] += 1
        s.by_state[state] += 1
        return 0, (sh, sin, sout)

    def lookup(self, key, ops):
        pos = self.position(key, ops)
        slot = self.find(pos[0], key, pos, ops)
        if slot is None:
            return None
        r = self.shards[pos[0]].rec_at(slot)
        conn = (pos[0], r["peer"], slot) if r["out"] else (pos[0], slot, r["peer"])
        return conn, 1 if r["out"] else 0, r

    def track(self, conn, d, flags, now, ops):
        sh, sin, sout = conn
        s = self.shards[sh]
        r, peer = s.rec_at(conn[1 + d]), s.rec_at(conn[2 - d])
        nxt = sess_tcp_next(r["state"], d == 1, sin == sout, flags)
        r["last"] = now
        ops["table_probes"] += 1
        ops["table_writes"] += 1
        if nxt != r["state"]:
            s.by_state[r["state"]] -= 1
            s.by_state[nxt] += 1
            if sin != sout:
                ops["table_writes"] += 1
                ops["cache_lines"] += len(sess_slot_lines(conn[2 - d] % 5))
            r["state"] = peer["state"] = nxt
        return nxt

    def remove(self, sh, sin, ops):
        s = self.shards[sh]
        r = s.rec_at(sin)
        sout = r["peer"]
        s.by_state[r["state"]] -= 1
        s.st["connections"] -= 1
        self.unplace(sh, sin, ops)
        if sout != sin:
            self.unplace(sh, sout, ops)

    def close(self, conn, ops):
        ops["table_probes"] += 1 if conn[1] == conn[2] else 2
        self.remove(conn[0], conn[1], ops)
        self.shards[conn[0]].st["deletes"] += 1

    def expire(self, sh, now, budget, ops):
        return len(self.expire_report(sh, now, budget, None, ops)[0])

    def expire_report(self, sh, now, budget, cap, ops):
        """(connections removed as (in key, server, state), buckets scanned);
        cap: entries of the report array (None: dp_sess_expire, no limit)."""
        s = self.shards[sh]
        gone = []
        if cap is not None and cap < 5:
            return gone, 0
        if budget == 0 or budget > s.nb:
            budget = s.nb
        removed = 0
        scanned = 0
        for _ in range(budget):
            if cap is not None and cap - len(gone) < 5:
                break  # a bucket may hold 5 connections to report
            scanned += 1
            b = s.cursor
            s.cursor = (b + 1) % s.nb
            ops["table_probes"] += 1
            ops["cache_lines"] += 2
            for i in range(5):
                if not s.used[b][i]:
                    continue
                r = s.rec[b][i]
                ops["table_probes"] += 1
                if r["out"]:
                    continue
                peer = s.rec_at(r["peer"])
                if r["peer"] != b * 5 + i:
                    ops["table_probes"] += 1
                    ops["cache_lines"] += len(sess_slot_lines(r["peer"] % 5))
                # The later of the two ticks modulo 2^32, then the age.
                a, c = r["last"], peer["last"]
                last = a if (a - c) % 2 ** 32 < 2 ** 31 else c
                age = (now - last) % 2 ** 32
                if age < 2 ** 31 and age >= self.timeouts[r["state"]]:
                    gone.append((r["key"], r["server"], r["state"]))
                    s.expired_by_state[r["state"]] += 1
                    self.remove(sh, b * 5 + i, ops)
                    removed += 1
        s.st["expired"] += removed
        return gone, scanned


def check_sessions(vdir, lines):
    """Replays sessions.txt on a Python model of the session table built from
    dp_session.h alone: the hash (flow_hash), shard and Fibonacci bucket/tag
    split, 5-slot 128-byte buckets with linear probing and overflow counts,
    first-free-slot placement, IPVS's TCP transitions (re-entered above),
    per-state idle timeouts modulo 2^32, budgeted expiry with a cursor; every
    result and every documented op count of every operation must agree."""
    secs = {"none": 2, "syn_sent": 120, "syn_recv": 60, "established": 900, "fin_wait": 120,
            "close_wait": 60, "time_wait": 120, "closed": 10, "udp": 300}
    shards, capacity = 3, 20
    model = SessModel(shards, capacity, secs)
    body = Lines("sessions", lines)

    def expect(want, what):
        got = body.next(what)
        if got != want:
            fail("sessions: %r, python says %r" % (got, want))

    def new_ops():
        return dict(hashes=0, table_probes=0, cache_lines=0, table_writes=0)

    def key(fields):
        return (int(fields[0], 16), int(fields[1], 16), int(fields[2]), int(fields[3]), int(fields[4]))

    memory = 127 + 128 + shards * (256 + 128 * model.nb)
    expect("memory=%d timeouts %s" % (memory, " ".join("%s=%d" % (n, secs[n]) for n in SESS_STATES)),
           "the table line")
    for vline in vector_lines(vdir + "/sessions.txt"):
        f = vline.split()
        ops = new_ops()
        if f[0] == "open1":
            rc, conn = model.open(key(f[1:6]), None, int(f[6]), int(f[7]), ops)
            want = "%s -> rc=%d" % (vline, rc)
        elif f[0] in ("open2", "openx"):
            kin = key(f[1:6])
            osrc, odst, osp, port = int(f[6], 16), int(f[7], 16), int(f[8]), int(f[9])
            if f[0] == "open2":
                want_shard = (flow_hash(*kin) * shards) >> 32
                while True:  # the first port from START on (wrapping in 1024..65535) that steers
                    ops["hashes"] += 1
                    if (flow_hash(osrc, odst, osp, port, kin[4]) * shards) >> 32 == want_shard:
                        break
                    port = 1024 if port == 65535 else port + 1
            rc, conn = model.open(kin, (osrc, odst, osp, port, kin[4]), int(f[10]), int(f[11]), ops)
            want = "%s -> steer=0 port=%d rc=%d" % (vline, port, rc)
        elif f[0] == "pkt":
            found = model.lookup(key(f[1:6]), ops)
            want = "%s -> lookup=%d" % (vline, -3 if found is None else 0)
            if found:
                conn, d, r = found
                was = r["state"]
                now = model.track(conn, d, int(f[6], 16), int(f[7]), ops)
                want += " conn=%d:%d:%d dir=%d server=%d was=%s now=%s" % (conn + (d, r["server"], was, now))
            conn = None
        elif f[0] == "bulk":
            # dp_sess_lookup_bulk: per key what a single lookup finds, ops summed
            keys = [key(f[2 + 5 * k:7 + 5 * k]) for k in range(int(f[1]))]
            found = [model.lookup(k, ops) for k in keys]
            expect("bulk %d -> found=%d" % (len(keys), sum(1 for x in found if x)), "the entry of bulk")
            for x in found:
                if x is None:
                    expect("  miss", "a bulk miss")
                else:
                    conn, d, r = x
                    expect("  conn=%d:%d:%d dir=%d server=%d state=%s" % (conn + (d, r["server"], r["state"])),
                           "a bulk hit")
            check_ops("sessions bulk", body.next("the ops of a bulk"), "ops", ops)
            continue
        elif f[0] == "close":
            found = model.lookup(key(f[1:6]), ops)
            want = "%s -> lookup=%d" % (vline, -3 if found is None else 0)
            if found:
                model.close(found[0], ops)
                want += " close=0"
            conn = None
        elif f[0] == "expire":
            n = model.expire(int(f[1]), int(f[2]), int(f[3]), ops)
            want = "%s -> expired=%d" % (vline, n)
            conn = None
        elif f[0] == "expirer":
            gone, scanned = model.expire_report(int(f[1]), int(f[2]), int(f[3]), int(f[4]), ops)
            expect("%s -> expired=%d scanned=%d" % (vline, len(gone), scanned), "the entry of " + vline)
            for k, server, state in gone:
                expect("  gone %08x %08x %d %d %d server=%d state=%s" % (k + (server, state)),
                       "a connection " + vline + " reports")
            check_ops("sessions " + vline, body.next("the ops of " + vline), "ops", ops)
            continue
        else:
            fail("sessions: unknown vector %r" % vline)
        if f[0].startswith("open") and conn:
            want += " conn=%d:%d:%d" % conn
        expect(want, "the entry of " + vline)
        check_ops("sessions " + vline, body.next("the ops of " + vline), "ops", ops)
    for i, s in enumerate(model.shards):
        expect("shard %d entries=%d capacity=%d connections=%d buckets=%d inserts=%d refused=%d expired=%d "
               "deletes=%d" % (i, s.st["entries"], capacity, s.st["connections"], model.nb, s.st["inserts"],
                               s.st["refused"], s.st["expired"], s.st["deletes"]), "shard %d" % i)
        expect("  by_state " + " ".join(str(s.by_state[n]) for n in SESS_STATES), "by_state %d" % i)
        expect("  expired_by_state " + " ".join(str(s.expired_by_state[n]) for n in SESS_STATES),
               "expired_by_state %d" % i)
    body.done()


# ---- DNS ------------------------------------------------------------------
# The rules of core/include/dp/dp_dns.h written again: the zone's hash and
# layout (for the probe, cache-line and compare counts), the parse checks in
# their documented order, the outcome table; every response in the
# transcript is decoded here (struct only) and each field compared.

M32 = 0xFFFFFFFF


def dns_lower(b):
    return bytes(c + 32 if 65 <= c <= 90 else c for c in b)


def dns_hash(wire):
    """FNV-1a 32 over the ASCII-folded bytes, then MurmurHash3's fmix32."""
    h = 0x811C9DC5
    for c in dns_lower(wire):
        h = ((h ^ c) * 0x01000193) & M32
    h ^= h >> 16
    h = h * 0x85EBCA6B & M32
    h ^= h >> 13
    h = h * 0xC2B2AE35 & M32
    h ^= h >> 16
    return h


def dns_lines(off, n):
    """64-byte lines spanned by n >= 1 bytes at offset off of an aligned pool."""
    return (off + n - 1) // 64 - off // 64 + 1


def dns_name_to_wire(dotted):
    if dotted == b"":
        return None
    if dotted == b".":
        return b"\0"
    labels = dotted.split(b".")
    if labels[-1] == b"":
        labels = labels[:-1]
    if any(len(l) == 0 or len(l) > 63 for l in labels):
        return None
    w = b"".join(bytes([len(l)]) + dns_lower(l) for l in labels) + b"\0"
    return w if len(w) <= 255 else None


def dns_wire_ok(w):
    if not 1 <= len(w) <= 255:
        return False
    pos = 0
    while pos < len(w):
        if w[pos] == 0:
            return pos == len(w) - 1
        if w[pos] > 63:
            return False
        pos += 1 + w[pos]
    return False


def add_op(ops, k, v=1):
    ops[k] = ops.get(k, 0) + v


class DnsZone:
    """Slots: the smallest power of two >= 2 * max_names, 16 bytes each,
    4 a line; names and RRsets (TTL word + addresses) back to back."""

    def __init__(self, max_names, max_name_bytes, max_records, edns):
        self.max_names, self.max_name_bytes, self.max_records, self.edns = max_names, max_name_bytes, max_records, edns
        self.slots = 2
        while self.slots < 2 * max_names:
            self.slots *= 2
        self.table = [None] * self.slots
        self.names = self.name_bytes = self.records = self.words = 0

    def walk(self, wire, ops):
        """(entry or None, slot, bytes compared), counting the walk."""
        low, h = dns_lower(wire), dns_hash(wire)
        i, prev, compared = h & (self.slots - 1), None, 0
        for n in range(self.slots):
            add_op(ops, "table_probes")
            if n == 0 or i // 4 != prev:
                add_op(ops, "cache_lines")
            prev = i // 4
            e = self.table[i]
            if e is None:
                return None, i, compared
            if e["hash"] == h and len(e["name"]) == len(low):
                k = 0
                while k < len(low) and e["name"][k] == low[k]:
                    k += 1
                read = k + 1 if k < len(low) else len(low)
                compared += read
                add_op(ops, "cache_lines", dns_lines(e["off"], read))
                if k == len(low):
                    return e, i, compared
            i = (i + 1) & (self.slots - 1)
        fail("dns: checker bug, walk did not end")

    def add(self, wire, addrs, ttl, ops):
        if not dns_wire_ok(wire) or len(addrs) > 65535 or ttl > 0x7FFFFFFF:
            return -1
        add_op(ops, "hashes")
        e, i, _ = self.walk(wire, ops)
        if e is not None:
            return -3
        if (self.names >= self.max_names or len(wire) > self.max_name_bytes - self.name_bytes
                or len(addrs) > self.max_records - self.records):
            return -2
        self.table[i] = dict(name=dns_lower(wire), hash=dns_hash(wire), off=self.name_bytes, word=self.words,
                             addrs=list(addrs), ttl=ttl)
        self.names += 1
        self.name_bytes += len(wire)
        self.records += len(addrs)
        self.words += 1 + len(addrs)
        add_op(ops, "table_writes", 1 + len(addrs))
        add_op(ops, "bytes_copied", len(wire))
        return 0


def dns_walk_name(m, pos, question):
    """(status or None, end); checks per length byte: present, root,
    pointer, label type/length, name length."""
    used = 0
    while True:
        if pos >= len(m):
            return "truncated", pos
        c = m[pos]
        if c == 0:
            return None, pos + 1
        if c & 0xC0 == 0xC0:
            if question:
                return "qname_pointer", pos
            if pos + 1 >= len(m):
                return "truncated", pos
            target = (c & 0x3F) << 8 | m[pos + 1]
            if target < 12 or target >= pos:
                return "bad_pointer", pos
            return None, pos + 2
        if c > 63:
            return "label_too_long", pos
        if used + 1 + c + 1 > 255:
            return "name_too_long", pos
        used += 1 + c
        pos += 1 + c


def dns_parse(m, ops):
    """(status, fields) as dp_dns_parse; "ok" for a well-formed query."""
    q = {}
    if len(m) < 12:
        return "short_header", q
    q["id"], q["flags"], qd, an, ns, ar = struct.unpack("!6H", m[:12])
    add_op(ops, "bytes_parsed", 12)
    if q["flags"] & 0x8000:
        return "qr_set", q
    if (q["flags"] >> 11) & 15:
        return "notimp_opcode", q
    if qd != 1:
        return "formerr_qdcount", q
    st, pos = dns_walk_name(m, 12, True)
    if st:
        return st, q
    if len(m) - pos < 4:
        return "truncated", q
    q["qname"] = m[12:pos]
    q["qtype"], q["qclass"] = struct.unpack("!HH", m[pos:pos + 4])
    pos += 4
    add_op(ops, "bytes_parsed", len(q["qname"]) + 4)
    q["opts"], q["misplaced"] = [], False
    for r in range(an + ns + ar):
        start = pos
        st, pos = dns_walk_name(m, pos, False)
        if st:
            return st, q
        if len(m) - pos < 10:
            return "truncated", q
        rtype, rclass, rttl, rdlen = struct.unpack("!HHIH", m[pos:pos + 10])
        if len(m) - pos - 10 < rdlen:
            return "truncated", q
        add_op(ops, "bytes_parsed", pos - start + 10)
        if rtype == 41:
            if r < an + ns:
                q["misplaced"] = True
            else:
                q["opts"].append(dict(owner=m[start:pos], udp=rclass, version=(rttl >> 16) & 255,
                                      flags=rttl & 0xFFFF))
        pos += 10 + rdlen
    if pos != len(m):
        return "trailing_bytes", q
    return "ok", q


DNS_DROPS = {"short_header": "dns_malformed", "qr_set": "dns_unsupported", "truncated": "dns_malformed",
             "label_too_long": "dns_malformed", "name_too_long": "dns_malformed", "qname_pointer": "dns_malformed",
             "bad_pointer": "dns_malformed", "trailing_bytes": "dns_malformed", "no_room": "buffer_too_small"}


def dns_expect(zone, m, ops, in_place):
    """What dp_dns_answer must do with message m: a dict of the result
    fields, the drop reason, and for a response what it must hold."""
    st, q = dns_parse(m, ops)
    e = dict(status=st, drop="ok", rcode=0, aa=0, tc=0, opt=0, an=0, limit=512, cmp=0, qtype=0, qclass=0,
             question=False, q=q, rr=None)
    if st == "notimp_opcode" or st == "formerr_qdcount":
        e["rcode"] = 4 if st == "notimp_opcode" else 1
    elif st != "ok":
        e["drop"] = DNS_DROPS[st]
        return e
    else:
        e["question"] = True
        e["qtype"], e["qclass"] = q["qtype"], q["qclass"]
        opts = q["opts"]
        if zone.edns and (len(opts) > 1 or q["misplaced"] or (len(opts) == 1 and opts[0]["owner"] != b"\0")):
            e["status"], e["rcode"] = "formerr_opt", 1
        else:
            e["status"] = None
            if zone.edns and len(opts) == 1:
                e["opt"] = 1
                e["limit"] = max(512, min(opts[0]["udp"], zone.edns))
                if opts[0]["version"] > 0:
                    e["status"], e["rcode"] = "badvers", 16
            if e["status"] is not None:
                pass
            elif q["qclass"] != 1:
                e["status"], e["rcode"] = "refused_class", 5
            elif q["qtype"] in (251, 252):
                e["status"], e["rcode"] = "notimp_qtype", 4
            else:
                e["aa"] = 1
                add_op(ops, "hashes")
                rr, _, e["cmp"] = zone.walk(q["qname"], ops)
                if rr is None:
                    e["status"], e["rcode"] = "nxdomain", 3
                elif not rr["addrs"] or q["qtype"] not in (1, 255):
                    e["status"] = "nodata"
                else:
                    e["status"], e["an"], e["rr"] = "noerror", len(rr["addrs"]), rr
        if 12 + len(q["qname"]) + 4 + 11 * e["opt"] + 16 * e["an"] > e["limit"]:
            e["an"], e["tc"] = 0, 1
        if e["an"]:
            rr = e["rr"]
            add_op(ops, "cache_lines", dns_lines(rr["word"] * 4, (len(rr["addrs"]) + 1) * 4))
        if not in_place:
            add_op(ops, "bytes_copied", len(q["qname"]) + 4)
    add_op(ops, "bytes_written", 12 + 16 * e["an"] + 11 * e["opt"])
    return e


def dns_check_response(where, m, e, resp, zone):
    """Decodes resp and compares every field with the expectation e for
    the query m."""
    q = e["q"]
    if len(resp) < 12:
        fail("%s: response of %d bytes" % (where, len(resp)))
    rid, flags, qd, an, ns, ar = struct.unpack("!6H", resp[:12])
    opcode = (q["flags"] >> 11) & 15
    want_flags = 0x8000 | opcode << 11 | e["aa"] << 10 | e["tc"] << 9 | (q["flags"] & 0x0100) | (e["rcode"] & 15)
    if rid != q["id"] or flags != want_flags:
        fail("%s: header id %04x flags %04x, python says %04x %04x" % (where, rid, flags, q["id"], want_flags))
    want_counts = (1 if e["question"] else 0, e["an"], 0, e["opt"])
    if (qd, an, ns, ar) != want_counts:
        fail("%s: counts %s, python says %s" % (where, (qd, an, ns, ar), want_counts))
    pos = 12
    if e["question"]:
        qlen = len(q["qname"]) + 4
        if resp[12:12 + qlen] != m[12:12 + qlen]:
            fail("%s: the question is not repeated byte for byte" % where)
        pos += qlen
    for k in range(an):
        # The owner is a pointer to offset 12, which decodes to the question.
        if resp[pos:pos + 2] != b"\xc0\x0c":
            fail("%s: answer %d owner is not the pointer C00C" % (where, k))
        rtype, rclass, ttl, rdlen = struct.unpack("!HHIH", resp[pos + 2:pos + 12])
        addr = struct.unpack("!I", resp[pos + 12:pos + 16])[0]
        want = (1, 1, e["rr"]["ttl"], 4, e["rr"]["addrs"][k])
        if (rtype, rclass, ttl, rdlen, addr) != want:
            fail("%s: answer %d is %s, python says %s" % (where, k, (rtype, rclass, ttl, rdlen, addr), want))
        pos += 16
    if ar:
        dof = q["opts"][0]["flags"] & 0x8000
        want = (0, 41, zone.edns, (e["rcode"] >> 4) << 24 | dof, 0)
        got = (resp[pos],) + struct.unpack("!HHIH", resp[pos + 1:pos + 11])
        if got != want:
            fail("%s: OPT %s, python says %s" % (where, got, want))
        pos += 11
    if pos != len(resp):
        fail("%s: %d bytes after the last record" % (where, len(resp) - pos))
    if len(resp) > e["limit"]:
        fail("%s: %d bytes over the %d-byte limit" % (where, len(resp), e["limit"]))


def dns_check_res(where, line, e):
    want = "  res rcode=%d aa=%d tc=%d opt=%d an=%d limit=%d cmp=%d qtype=%d qclass=%d" % (
        e["rcode"], e["aa"], e["tc"], e["opt"], e["an"], e["limit"], e["cmp"], e["qtype"], e["qclass"])
    if line != want:
        fail("%s: %r, python says %r" % (where, line, want))


def dns_check_frame(where, frame, head, body, zone):
    """A frame answered in place: parse as dp_parse, answer the UDP
    payload, rebuild the headers; check the response frame field by field."""
    ops = {}
    reason, f = parse(frame, True, False, ops)
    if reason == "ok" and f["proto"] != 17:
        reason = "dns_unsupported"
    if reason != "ok":
        want = "frame %s unknown drop=%s len=0 -" % (where, reason)
        if head != want:
            fail("dns frame: %r, python says %r" % (head, want))
        dns_check_res("dns frame " + where, body.next("a res line"), dict(
            rcode=0, aa=0, tc=0, opt=0, an=0, limit=0, cmp=0, qtype=0, qclass=0))
        check_ops("dns frame " + where, body.next("an ops line"), "ops", ops)
        return
    l2, l4 = f["l3"], f["l4"]
    udp_len = struct.unpack("!H", frame[l4 + 4:l4 + 6])[0]
    dns = frame[l4 + 8:l4 + udp_len]
    # In place the question is copied only when the query's IPv4 options
    # put its message further on than the response's.
    e = dns_expect(zone, dns, ops, l4 + 8 == l2 + 28)
    t = head.split()
    if t[:4] != ["frame", where, e["status"], "drop=" + e["drop"]]:
        fail("dns frame %s: %s, python says %s drop=%s" % (where, " ".join(t[2:4]), e["status"], e["drop"]))
    dns_check_res("dns frame " + where, body.next("a res line"), e)
    if e["drop"] != "ok":
        check_ops("dns frame " + where, body.next("an ops line"), "ops", ops)
        return
    out = bytes.fromhex(t[5])
    if int(t[4][4:]) != len(out):
        fail("dns frame %s: len field %s for %d bytes" % (where, t[4], len(out)))
    # Padding hides the DNS length: take it from the UDP header, then check
    # the frame is exactly that, padded to 60.
    resp_len = struct.unpack("!H", out[l2 + 24:l2 + 26])[0] - 8
    if len(out) != max(60, l2 + 28 + resp_len):
        fail("dns frame %s: frame of %d bytes for a %d-byte answer" % (where, len(out), resp_len))
    if out[0:6] != frame[6:12] or out[6:12] != frame[0:6] or out[12:l2] != frame[12:l2]:
        fail("dns frame %s: Ethernet header not swapped / tag not kept" % where)
    ip = out[l2:l2 + 20]
    want_ip = struct.pack("!BBHHHBB", 0x45, 0, 28 + resp_len, 0, 0x4000, 64, 17)
    if ip[:10] != want_ip or csum(ip) != 0 or ip[12:16] != frame[l2 + 16:l2 + 20] or ip[16:20] != frame[l2 + 12:l2 + 16]:
        fail("dns frame %s: IPv4 header wrong" % where)
    udp = out[l2 + 20:l2 + 28 + resp_len]
    if udp[0:2] != frame[l4 + 2:l4 + 4] or udp[2:4] != frame[l4:l4 + 2] or len(udp) != 8 + resp_len:
        fail("dns frame %s: UDP ports or length wrong" % where)
    if csum(ip[12:20] + struct.pack("!BBH", 0, 17, len(udp)) + udp) != 0 or udp[6:8] == b"\0\0":
        fail("dns frame %s: UDP checksum does not verify" % where)
    if any(out[l2 + 28 + resp_len:]):
        fail("dns frame %s: padding not zero" % where)
    dns_check_response("dns frame " + where, dns, e, udp[8:], zone)
    add_op(ops, "bytes_written", l2 + 28 + len(out) - (l2 + 28 + resp_len))
    add_op(ops, "checksum_bytes", 20 + 8 + len(udp))
    check_ops("dns frame " + where, body.next("an ops line"), "ops", ops)


def check_dns(vdir, lines):
    body = Lines("dns", lines)
    zone = None

    def zone_line():
        want = "zone names=%d name_bytes=%d records=%d slots=%d" % (zone.names, zone.name_bytes, zone.records,
                                                                     zone.slots)
        got = body.next("the zone counters")
        if got != want:
            fail("dns: %r, python says %r" % (got, want))

    for vline in vector_lines(vdir + "/dns.txt"):
        w = vline.split()
        if w[0] == "config":
            if zone is not None:
                zone_line()
            zone = DnsZone(*[int(x) for x in w[1:5]])
            want = "config " + " ".join(w[1:5])
            got = body.next("a config line")
            if got != want:
                fail("dns: %r, python says %r" % (got, want))
        elif w[0] == "name":
            wire = dns_name_to_wire(b"" if w[1] == "-" else bytes.fromhex(w[1]))
            want = "name %s -> %s" % (w[1], "-1" if wire is None else "0 " + wire.hex())
            got = body.next("a name line")
            if got != want:
                fail("dns: %r, python says %r" % (got, want))
        elif w[0] == "add":
            ops = {}
            addrs = [] if w[3] == "-" else [int(a, 16) for a in w[3].split(",")]
            rc = zone.add(bytes.fromhex(w[1]), addrs, int(w[2]), ops)
            want = "add %s -> %d" % (w[1], rc)
            got = body.next("an add line")
            if got != want:
                fail("dns: %r, python says %r" % (got, want))
            check_ops("dns add " + w[1], body.next("an ops line"), "ops", ops)
        elif w[0] == "query":
            m = b"" if w[2] == "-" else bytes.fromhex(w[2])
            ops = {}
            e = dns_expect(zone, m, ops, False)
            t = body.next("the answer to " + w[1]).split()
            if t[:4] != ["query", w[1], e["status"], "drop=" + e["drop"]]:
                fail("dns query %s: %s, python says %s drop=%s" % (w[1], " ".join(t[2:4]), e["status"], e["drop"]))
            dns_check_res("dns query " + w[1], body.next("a res line"), e)
            if e["drop"] == "ok":
                resp = bytes.fromhex(t[5])
                if t[4] != "len=%d" % len(resp):
                    fail("dns query %s: %s for %d bytes" % (w[1], t[4], len(resp)))
                dns_check_response("dns query " + w[1], m, e, resp, zone)
            elif t[4:] != ["len=0", "-"]:
                fail("dns query %s: a drop with a response" % w[1])
            check_ops("dns query " + w[1], body.next("an ops line"), "ops", ops)
        elif w[0] == "frame":
            dns_check_frame(w[1], bytes.fromhex(w[2]), body.next("the answer to frame " + w[1]), body, zone)
        else:
            fail("dns: unknown vector line %r" % vline)
    zone_line()
    body.done()


# The L7 reasons, appended after the DNS ones (names are an output format:
# indices and spellings never change).
# The tunnel's MTU drop after them.
L7_DROPS = ["http_malformed", "http_too_large", "tls_malformed", "url_no_match", "tunnel_mtu_exceeded"]


def check_drop_reasons(lines):
    names = [l.split(" ", 1)[1] for l in lines]
    if [l.split(" ", 1)[0] for l in lines] != [str(i) for i in range(len(lines))] or names[0] != "ok":
        fail("drop reasons: not numbered from 0 with 'ok' first")
    at = names.index("dns_unsupported") + 1
    if names[at:] != L7_DROPS:
        fail("drop reasons: after dns_unsupported %r, expected %r" % (names[at:], L7_DROPS))


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    vdir, expected = sys.argv[1], sys.argv[2]
    sec = sections(expected)
    for name in ("drop reasons", "packets", "builds", "routes", "flows", "nat", "syncookie", "ratelimit", "sched",
                 "sessions", "dns", "l7", "health", "persist", "sched_param"):
        if name not in sec:
            fail("%s has no '== %s' section" % (expected, name))
    check_packets(vdir, sec["packets"])
    check_builds(vdir, sec["builds"])
    check_routes(vdir, sec["routes"])
    check_flows(vdir, sec["flows"])
    check_nat(vdir, sec["nat"])
    check_syncookie(vdir, sec["syncookie"])
    check_ratelimit(vdir, sec["ratelimit"])
    check_sched(vdir, sec["sched"], vector_lines, check_ops, Lines, flow_hash)
    check_sessions(vdir, sec["sessions"])
    check_dns(vdir, sec["dns"])
    check_drop_reasons(sec["drop reasons"])
    check_l7(vdir, sec["l7"], vector_lines, check_ops, Lines, fail)
    check_health(vdir, sec["health"], vector_lines, check_ops, Lines, fail)
    check_persist(vdir, sec["persist"], vector_lines, check_ops, Lines, fail)
    check_sched(vdir, sec["sched_param"], vector_lines, check_ops, Lines, flow_hash, "sched_param.txt", "sched_param")
    print("check_expected: transcript agrees with the Python references")


if __name__ == "__main__":
    main()
