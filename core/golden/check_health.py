"""Independent Python references for the '== health' and '== persist'
sections of the golden transcript (dp_health.h, dp_persist.h): HAProxy's
rise/fall counter and check intervals, the check phase, the detection
window, content classification with its comparison count; the stick
table's sets (the key hash re-derived here), LRU purge, nopurge refusal,
expiry and op counts; and HAProxy's cookie decision table."""

KINDS = ["ping", "tcp", "http", "content"]
RESULTS = ["passed", "refused", "timeout", "bad_status", "no_content"]
M32 = 0xFFFFFFFF


def interval(c, health, up):
    full = c["rise"] + c["fall"] - 1
    if health == full:
        return c["inter"]
    if health == 0 and not up:
        return c["down"] or c["inter"]
    return c["fast"] or c["inter"]


def classify(c, answered, refused, status, body):
    """Returns (result name, byte comparisons)."""
    if not answered:
        return "timeout", 0
    if refused:
        return "refused", 0
    if c["kind"] in (0, 1):
        return "passed", 0
    lo, hi = c["smin"], c["smax"]
    if lo == 0 and hi == 0:
        lo, hi = 200, 399
    if not lo <= status <= hi:
        return "bad_status", 0
    if c["kind"] == 3:
        pat, cmp_count, found = c["expect"], 0, False
        if len(pat) <= len(body):
            for i in range(len(body) - len(pat) + 1):
                j = 0
                while j < len(pat):
                    cmp_count += 1
                    if body[i + j] != pat[j]:
                        break
                    j += 1
                if j == len(pat):
                    found = True
                    break
        return ("passed" if found else "no_content"), cmp_count
    return "passed", 0


def check_health(vdir, lines, vector_lines, check_ops, Lines, fail):
    body = Lines("health", lines)
    c, h = None, None
    for vline in vector_lines(vdir + "/health.txt"):
        w = vline.split()
        got = body.next("the result of " + vline)

        def expect(want):
            if got != want:
                fail("health: %r, python says %r" % (got, want))

        if w[0] == "config":
            kind, inter, fast, down, timeout, rise, fall, start = map(int, w[1:9])
            exp = b"" if w[9] == "-" else w[9].encode()
            ok = (kind < 4 and inter > 0 and 1 <= rise <= 1000 and 1 <= fall <= 1000 and start in (0, 1) and
                  (kind != 3 or 1 <= len(exp) <= 64))
            c = dict(kind=kind, inter=inter, fast=fast, down=down, timeout=timeout, rise=rise, fall=fall,
                     start=start, expect=exp, smin=0, smax=0) if ok else None
            if ok:
                h = dict(health=rise if start == 0 else 0, up=1 if start == 0 else 0, next=0, checks=0, failed=0,
                         downs=0, ups=0, last_change=0)
            expect("%s -> %d interval=%d" % (vline, 0 if ok else -1, interval(c, h["health"], h["up"]) if ok else 0))
            continue
        if w[0] == "report":
            res, end = int(w[1]), int(w[2])
            if res >= len(RESULTS):
                expect("%s -> -1 health=%d up=%d next=%d" % (vline, h["health"], h["up"], h["next"]))
                check_ops("health", body.next("ops of " + vline), "ops", {})
                continue
            full = c["rise"] + c["fall"] - 1
            h["checks"] += 1
            if res == 0:
                if h["health"] < full:
                    h["health"] += 1
                    if h["health"] >= c["rise"]:
                        h["health"] = full
            elif h["health"] > 0:
                h["failed"] += 1
                h["health"] -= 1
                if h["health"] < c["rise"]:
                    h["health"] = 0
            change = 0
            if h["up"] and h["health"] < c["rise"]:
                h["up"], change = 0, 1
                h["downs"] += 1
                h["last_change"] = end
            elif not h["up"] and h["health"] >= c["rise"]:
                h["up"], change = 1, 2
                h["ups"] += 1
                h["last_change"] = end
            h["next"] = end + interval(c, h["health"], h["up"])
            expect("%s -> %d health=%d up=%d next=%d" % (vline, change, h["health"], h["up"], h["next"]))
            check_ops("health", body.next("ops of " + vline), "ops", {"table_writes": 1})
        elif w[0] == "classify":
            data = b"" if w[4] == "-" else bytes.fromhex(w[4])
            name, n = classify(c, int(w[1]), int(w[2]), int(w[3]), data)
            expect("%s -> %s" % (vline, name))
            check_ops("health", body.next("ops of " + vline), "ops", {"bytes_parsed": n})
        elif w[0] == "phase":
            start, pos, n, mininter, own, maxspread = map(int, w[1:7])
            m = max(mininter, own)
            if maxspread and m > maxspread:
                m = maxspread
            t = start if (n == 0 or pos >= n) else start + m * pos // n
            expect("%s -> %d" % (vline, t))
        elif w[0] == "window":
            delay = int(w[1])
            fast = (c["fast"] or c["inter"]) if c["fall"] > 1 else 0
            lo = c["fall"] * delay + (c["fall"] - 1) * fast
            expect("%s -> 0 %d %d" % (vline, lo, lo + c["inter"]))
        elif w[0] == "counters":
            expect("counters checks=%d failed=%d down=%d up=%d last_change=%d" % (
                h["checks"], h["failed"], h["downs"], h["ups"], h["last_change"]))
        else:
            fail("health: unknown vector %r" % vline)
    body.done()


def rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & M32


def key_hash(key):
    """MurmurHash3 x86_32-style mixing of the key as big-endian words,
    zero-padded, seed 0x9747b28c, as dp_persist.c documents."""
    h = 0x9747B28C
    for i in range(0, len(key), 4):
        w = int.from_bytes(key[i:i + 4].ljust(4, b"\0"), "big")
        k = rotl((w * 0xCC9E2D51) & M32, 15) * 0x1B873593 & M32
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & M32
    h ^= len(key)
    h ^= h >> 16
    h = h * 0x85EBCA6B & M32
    h ^= h >> 13
    h = h * 0xC2B2AE35 & M32
    h ^= h >> 16
    return h


WAYS, ENTRY = 8, 56


def lines_for(ways):
    return (ways * ENTRY + 63) // 64


def check_persist(vdir, lines, vector_lines, check_ops, Lines, fail):
    body = Lines("persist", lines)
    t = None
    for vline in vector_lines(vdir + "/persist.txt"):
        w = vline.split()
        got = body.next("the result of " + vline)

        def expect(want):
            if got != want:
                fail("persist: %r, python says %r" % (got, want))

        if w[0] == "config":
            cap, klen, expire, onfull = map(int, w[1:5])
            sets = 1
            while sets < (cap + WAYS - 1) // WAYS:
                sets *= 2
            # set -> list of ways: None or [key, server, expire_at (None: never), last_use]
            t = dict(sets=sets, klen=klen, expire=expire, onfull=onfull, e=[[None] * WAYS for _ in range(sets)],
                     clock=0, cursor=0, st=dict(entries=0, lookups=0, hits=0, stores=0, updates=0, expired=0,
                                                purged=0, refused_full=0, removed=0))
            expect("%s -> memory=%d" % (vline, 104 + sets * WAYS * ENTRY))
            continue
        if w[0] == "cookie":
            mode, flags, csrv, usable, served, setc, cacheable = map(int, w[1:8])
            ind, noc, psv, per = flags & 1, flags & 2, flags & 4, flags & 8
            ok = not (mode == 2 and ind) and not (psv and mode != 1 and not ind)
            if not ok:
                expect("%s -> -1 req=0 server=-1 resp=0" % vline)
                check_ops("persist", body.next("ops of " + vline), "ops", {})
                continue
            direct = csrv >= 0 and (usable or per)
            req = 1 if direct else 2
            server = csrv if direct else -1
            if csrv >= 0:
                if mode == 3:
                    req |= 8
                elif mode == 1 and ind:
                    req |= 4
            served_by = server if server >= 0 else served
            direct_eff = direct and server == served_by
            resp = 0
            if mode == 1:
                if not (setc and psv):
                    if setc:
                        resp |= 4
                    if not direct_eff:
                        resp |= 1
                        if noc and cacheable:
                            resp |= 2
            elif mode == 2:
                if setc:
                    resp |= 8
            elif setc:
                if ind and direct_eff:
                    resp |= 4
                elif mode == 3:
                    resp |= 16
            expect("%s -> 0 req=%d server=%d resp=%d" % (vline, req, server, resp))
            check_ops("persist", body.next("ops of " + vline), "ops", {"rules_evaluated": 2})
            continue
        st = t["st"]
        if w[0] in ("store", "lookup", "remove"):
            key = bytes.fromhex(w[1])
            now = int(w[3] if w[0] == "store" else w[2])
            ways = t["e"][key_hash(key) & (t["sets"] - 1)]
            idx = next((i for i, e in enumerate(ways) if e is not None and e[0] == key), None)
            examined = idx + 1 if idx is not None else WAYS

            def is_expired(e):
                return e is not None and e[2] is not None and e[2] <= now

            def expiry():
                return None if t["expire"] == 0 else now + t["expire"]

            ops = {"hashes": 1}
            if w[0] == "lookup":
                st["lookups"] += 1
                ops.update(table_probes=examined, cache_lines=lines_for(examined))
                if idx is None:
                    rc = -2
                elif is_expired(ways[idx]):
                    ways[idx] = None
                    st["entries"] -= 1
                    st["expired"] += 1
                    rc = -2
                    ops["table_writes"] = 1
                else:
                    t["clock"] += 1
                    ways[idx][2], ways[idx][3] = expiry(), t["clock"]
                    st["hits"] += 1
                    rc = ways[idx][1]
                    ops["table_writes"] = 1
            elif w[0] == "remove":
                ops.update(table_probes=examined, cache_lines=lines_for(examined))
                if idx is None:
                    rc = -2
                else:
                    ways[idx] = None
                    st["entries"] -= 1
                    st["removed"] += 1
                    rc = 0
                    ops["table_writes"] = 1
            else:
                server = int(w[2])
                ops.update(table_probes=WAYS, cache_lines=lines_for(WAYS))
                t["clock"] += 1
                if idx is not None:
                    e = ways[idx]
                    if is_expired(e):
                        st["expired"] += 1
                        st["stores"] += 1
                        rc = 0
                    else:
                        st["updates"] += 1
                        rc = 1
                    ways[idx] = [key, server, expiry(), t["clock"]]
                    ops["table_writes"] = 1
                else:
                    slot = next((i for i, e in enumerate(ways) if e is None or is_expired(e)), None)
                    rc = 0
                    if slot is not None:
                        if ways[slot] is not None:
                            st["entries"] -= 1
                            st["expired"] += 1
                    elif t["onfull"] == 1:
                        st["refused_full"] += 1
                        rc = -3
                        t["clock"] -= 1
                    else:
                        slot = min(range(WAYS), key=lambda i: ways[i][3])
                        st["entries"] -= 1
                        st["purged"] += 1
                    if rc == 0:
                        ways[slot] = [key, server, expiry(), t["clock"]]
                        st["entries"] += 1
                        st["stores"] += 1
                        ops["table_writes"] = 1
            expect("%s -> %d" % (vline, rc))
            check_ops("persist", body.next("ops of " + vline), "ops", ops)
        elif w[0] == "expire":
            now, max_sets = int(w[1]), min(int(w[2]), t["sets"])
            freed = 0
            for _ in range(max_sets):
                ways = t["e"][t["cursor"]]
                for i, e in enumerate(ways):
                    if e is not None and e[2] is not None and e[2] <= now:
                        ways[i] = None
                        freed += 1
                t["cursor"] = (t["cursor"] + 1) & (t["sets"] - 1)
            st["entries"] -= freed
            st["expired"] += freed
            expect("%s -> %d" % (vline, freed))
            check_ops("persist", body.next("ops of " + vline), "ops",
                      {"table_probes": max_sets * WAYS, "table_writes": freed})
        elif w[0] == "forget":
            server, count = int(w[1]), 0
            for ways in t["e"]:
                for i, e in enumerate(ways):
                    if e is not None and e[1] == server:
                        ways[i] = None
                        count += 1
            st["entries"] -= count
            st["removed"] += count
            expect("%s -> %d" % (vline, count))
            check_ops("persist", body.next("ops of " + vline), "ops",
                      {"table_probes": t["sets"] * WAYS, "table_writes": count})
        elif w[0] == "stats":
            expect("stats entries=%d capacity=%d lookups=%d hits=%d stores=%d updates=%d expired=%d purged=%d "
                   "refused_full=%d removed=%d" % (st["entries"], t["sets"] * WAYS, st["lookups"], st["hits"],
                                                   st["stores"], st["updates"], st["expired"], st["purged"],
                                                   st["refused_full"], st["removed"]))
        else:
            fail("persist: unknown vector %r" % vline)
    body.done()
