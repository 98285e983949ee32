"""Checks the '== l7' section of the golden transcript (called by
check_expected.py) against Python re-implementations written from the
specifications, not from the C:

- http: RFC 7230 line rules (CRLF or bare LF, control bytes, obs-fold,
  token method and header names, HTTP/1.0 and 1.1 only, one Host,
  Content-Length digits and agreement) applied to the whole message at
  once, with the limits located by byte position (line over max_line at
  its max_line+1-th byte, head over the buffer at its cap+1-th byte): the
  verdict, the byte count taken, every field, RFC 7230 6.3 persistence,
  HAProxy's `path` and the documented op counts (each head byte scanned
  and copied once, whatever the cut points);
- rules: HAProxy path_beg / path_sub / path_end / extension / hdr(host)
  with Python string operations, first-match or stable precedence order,
  and the documented byte-comparison counts of a naive left-to-right scan;
- tls: RFC 5246 / 8446 ClientHello walk with every length checked, GREASE
  (RFC 8701) skipped in supported_versions, SNI (RFC 6066), the bytes
  walked; the ServerHello walk (RFC 5246 7.4.1.3, the 2-byte selected
  version of RFC 8446), its session ID and the bytes walked;
- cookies: RFC 6265 Cookie pairs, Set-Cookie name/value, HAProxy's
  insert ("Set-Cookie: N=V; path=/"), rewrite and prefix ("V~") heads;
- splice: the edited frame with both checksums recomputed in full (0 and
  0xFFFF taken as the same TCP/IPv4 checksum, RFC 1624 section 3),
  sequence and acknowledgment numbers from the seqadj rules of dp_splice.h
  (Linux nf_conntrack_seqadj) modulo 2^32, the connection state and the
  op counts.
"""
import struct

from make_vectors import csum

TCHAR = set(b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def hx(b):
    return b.hex() if b else "-"


def unhex(s):
    return b"" if s == "-" else bytes.fromhex(s)


# ---------------------------------------------------------------- http

class Head:
    pass


def http_line(h, line, start):
    """One line without its LF; returns None, 'done' or an error name."""
    content = line[:-1] if line.endswith(b"\r") else line
    for c in content:
        if c == 13:
            return "bad_cr"
        if (c < 32 and c != 9) or c == 127:
            return "control_byte"
    if not h.started:
        if not content:
            return None
        h.started = True
        return (status_line if h.response else request_line)(h, content, start)
    if not content:
        h.blank = start
        if h.version == 1:
            h.keepalive = not h.close
        else:
            h.keepalive = h.ka and not h.close
        return "done"
    h.headers += 1
    if h.headers > h.max_headers:
        return "too_many_headers"
    if content[0] in (32, 9):
        return "folded_header"
    i = 0
    while i < len(content) and content[i] in TCHAR:
        i += 1
    if i == 0 or i >= len(content) or content[i] != ord(":"):
        return "bad_header"
    name = content[:i].lower()
    vs, ve = i + 1, len(content)
    while vs < ve and content[vs] in (32, 9):
        vs += 1
    while ve > vs and content[ve - 1] in (32, 9):
        ve -= 1
    value, span = content[vs:ve], (start + vs, ve - vs)
    if name == b"host":
        if h.has_host:
            return "duplicate_host"
        h.has_host, h.host = True, span
    elif name == b"connection":
        for tok in value.split(b","):
            tok = tok.strip(b" \t").lower()
            if tok == b"close":
                h.close = True
            elif tok == b"keep-alive":
                h.ka = True
    elif name == b"content-length":
        if not value or not all(48 <= c <= 57 for c in value) or int(value) > 2 ** 53:
            return "bad_content_length"
        if h.has_length and h.cl != int(value):
            return "bad_content_length"
        h.has_length, h.cl = True, int(value)
    elif name == b"transfer-encoding":
        h.chunked = True
    elif name == b"cookie" and not h.response:
        if h.cookies == 0:
            h.cookie = span
        h.cookies += 1
    elif name == b"set-cookie" and h.response:
        if len(h.sc) < 8:
            h.sc.append(span)
        h.nsc += 1
    return None


def request_line(h, b, start):
    i = 0
    while i < len(b) and b[i] in TCHAR:
        i += 1
    if i == 0 or i >= len(b) or b[i] != 32:
        return "bad_method"
    h.method = (start, i)
    t = i + 1
    i = t
    while i < len(b) and 0x20 < b[i] < 0x7F:
        i += 1
    if i == t or i >= len(b) or b[i] != 32:
        return "bad_target"
    h.target = (start + t, i - t)
    rest = b[i + 1:]
    if rest not in (b"HTTP/1.0", b"HTTP/1.1"):
        return "bad_version"
    h.version = rest[7] - 48
    return None


def status_line(h, b, start):
    if len(b) < 8 or b[:8] not in (b"HTTP/1.0", b"HTTP/1.1"):
        return "bad_version"
    h.version = b[7] - 48
    code = b[9:12]
    if len(b) < 12 or b[8] != 32 or not all(48 <= c <= 57 for c in code) or code[0] == 48 or \
            (len(b) > 12 and b[12] != 32):
        return "bad_status"
    h.code = int(code)
    return None


def http_parse(msg, response, max_line, max_headers, cap):
    h = Head()
    h.response, h.max_headers = response, max_headers
    h.started = h.has_host = h.has_length = h.chunked = h.close = h.ka = h.keepalive = False
    h.version = h.code = h.cl = h.blank = h.headers = h.cookies = h.nsc = 0
    h.method = h.target = h.host = h.cookie = (0, 0)
    h.sc = []
    pos = 0
    while True:
        j = msg.find(b"\n", pos)
        end = j if j >= 0 else len(msg) - 1  # last byte index looked at
        # The first limit hit, by byte index: the buffer (cap+1-th head
        # byte, checked before the line length) or the line.
        hits = []
        if cap <= end:
            hits.append((cap, "head_too_large"))
        if pos + max_line <= end:
            hits.append((pos + max_line, "line_too_long"))
        if hits:
            at, st = min(hits)
            return h, st, "none", at + 1, min(at + 1, cap)
        if j < 0:
            return h, "more", "none", len(msg), len(msg)
        r = http_line(h, msg[pos:j], pos)
        pos = j + 1
        if r == "done":
            return h, "done", "none", pos, pos
        if r == "too_many_headers":
            return h, "too_many_headers", "none", pos, pos
        if r is not None:
            return h, "malformed", r, pos, pos


def http_path(msg, target):
    off, n = target
    t = msg[off:off + n]
    i = 0
    if not t.startswith(b"/"):
        k = 0
        while k < n and t[k] not in b":/":
            k += 1
        if k + 2 < n and t[k:k + 3] == b"://":
            k += 3
            while k < n and t[k] != ord("/"):
                k += 1
            i = k
        else:
            i = n
    start = i
    while i < n and t[i] != ord("?"):
        i += 1
    return t[start:i], i


# ---------------------------------------------------------------- rules

def rule_eval(kind, icase, pat, path, host):
    f = (lambda s: s.lower()) if icase else (lambda s: s)
    s = f(host if kind == 4 else path)
    p = f(pat)
    n, m = len(s), len(p)

    def cmp(a):
        c = 0
        for x, y in zip(a, p):
            c += 1
            if x != y:
                return False, c
        return True, c

    if kind == 0:
        return cmp(s[:m]) if n >= m else (False, 0)
    if kind in (2, 3):
        return cmp(s[n - m:]) if n >= m else (False, 0)
    if kind == 4:
        return cmp(s) if n == m else (False, 0)
    total = 0
    for k in range(0, n - m + 1):
        hit, c = cmp(s[k:k + m])
        total += c
        if hit:
            return True, total
    return False, total


# ---------------------------------------------------------------- tls

def tls_framing(d, msg_type, wrong_type, alone):
    """The record and handshake-message framing both hellos share, per
    dp_tls.h: (None, fields, hlen) to go on with the body at byte 9, else
    (status, fields, bytes walked) to return."""
    f = {"rec": 0}
    if len(d) < 5:
        return "more", f, 0
    rlen = struct.unpack("!H", d[3:5])[0]
    if d[0] != 22 or d[1] != 3:
        return "not_handshake", f, 0
    if rlen > 16384:
        return "malformed", f, 0
    f["rec"] = 5 + rlen
    if len(d) < 5 + rlen:
        return "more", f, 0
    if rlen < 4:
        return "malformed", f, 5
    if d[5] != msg_type:
        return wrong_type, f, 5
    hlen = int.from_bytes(d[6:9], "big")
    if hlen > rlen - 4:
        return "fragmented", f, 5
    if alone and hlen < rlen - 4:
        return "malformed", f, 5
    return None, f, hlen


def tls_server_parse(d):
    """(status, fields, bytes walked) of a server's first record: RFC 5246
    7.4.1.3 ServerHello, RFC 8446 supported_versions (2 bytes), per dp_tls.h."""
    status, f, hlen = tls_framing(d, 2, "not_server_hello", alone=False)
    if status:
        return status, f, hlen
    end, p = 9 + hlen, 9  # messages after the ServerHello are not read
    if end - p < 34:
        return "malformed", f, 9
    f["rv"], f["sv"] = struct.unpack("!H", d[1:3])[0], struct.unpack("!H", d[9:11])[0]
    f["sel"] = f["sv"]
    p += 34
    if end - p < 1 or d[p] > 32 or end - p - 1 < d[p]:
        return "malformed", {"rec": f["rec"]}, p
    f["sid"] = d[p + 1:p + 1 + d[p]]
    p += 1 + d[p]
    if end - p < 3:
        return "malformed", {"rec": f["rec"]}, p
    f["cs"] = struct.unpack("!H", d[p:p + 2])[0]
    p += 3
    if p == end:
        return "ok", f, p
    if end - p < 2 or struct.unpack("!H", d[p:p + 2])[0] != end - p - 2:
        return "malformed", {"rec": f["rec"]}, p
    p += 2
    while p < end:
        if end - p < 4:
            return "malformed", {"rec": f["rec"]}, p
        t, el = struct.unpack("!HH", d[p:p + 4])
        if end - p - 4 < el or (t == 43 and el != 2):
            return "malformed", {"rec": f["rec"]}, p
        if t == 43:
            f["sel"] = struct.unpack("!H", d[p + 4:p + 6])[0]
        p += 4 + el
    return "ok", f, p


def tls_parse(d):
    """(status, fields, bytes walked) per dp_tls.h."""
    status, f, hlen = tls_framing(d, 1, "not_client_hello", alone=True)
    if status:
        return status, f, hlen
    end, p = 9 + hlen, 9
    if end - p < 34:
        return "malformed", f, 9
    f["rv"], f["cv"] = struct.unpack("!H", d[1:3])[0], struct.unpack("!H", d[9:11])[0]
    f["max"] = f["cv"]
    p += 34
    if end - p < 1 or d[p] > 32 or end - p - 1 < d[p]:
        return "malformed", {"rec": f["rec"]}, p
    f["sid"] = d[p + 1:p + 1 + d[p]]
    p += 1 + d[p]
    n = struct.unpack("!H", d[p:p + 2])[0] if end - p >= 2 else None
    if n is None or n < 2 or n % 2 or end - p - 2 < n:
        return "malformed", {"rec": f["rec"]}, p
    f["suites"] = n // 2
    p += 2 + n
    if end - p < 1 or d[p] < 1 or end - p - 1 < d[p]:
        return "malformed", {"rec": f["rec"]}, p
    p += 1 + d[p]
    f["ext"], f["sni"] = 0, b""
    if p == end:
        return "ok", f, p
    if end - p < 2 or struct.unpack("!H", d[p:p + 2])[0] != end - p - 2:
        return "malformed", {"rec": f["rec"]}, p
    p += 2
    while p < end:
        if end - p < 4:
            return "malformed", {"rec": f["rec"]}, p
        t, el = struct.unpack("!HH", d[p:p + 4])
        if end - p - 4 < el:
            return "malformed", {"rec": f["rec"]}, p
        e = d[p + 4:p + 4 + el]
        if t == 43:
            if el < 1 or e[0] + 1 != el or e[0] < 2 or e[0] % 2:
                return "malformed", {"rec": f["rec"]}, p
            for k in range(1, el, 2):
                v = struct.unpack("!H", e[k:k + 2])[0]
                if not (e[k] == e[k + 1] and e[k] & 15 == 10) and v > f["max"]:
                    f["max"] = v
        elif t == 0 and not f["sni"]:
            if el < 2 or struct.unpack("!H", e[:2])[0] + 2 != el or el == 2:
                return "malformed", {"rec": f["rec"]}, p
            k = 2
            while k < el:
                if el - k < 3:
                    return "malformed", {"rec": f["rec"]}, p
                nl = struct.unpack("!H", e[k + 1:k + 3])[0]
                if nl > el - k - 3 or nl == 0:
                    return "malformed", {"rec": f["rec"]}, p
                if e[k] == 0 and not f["sni"]:
                    f["sni"] = e[k + 3:k + 3 + nl]
                k += 3 + nl
        f["ext"] += 1
        p += 4 + el
    return "ok", f, p


# ---------------------------------------------------------------- cookies

def cookie_find(v, name):
    i, n = 0, len(v)
    while i < n:
        while i < n and v[i] in b" \t;":
            i += 1
        ns = i
        while i < n and v[i] not in b"=;":
            i += 1
        nm = v[ns:i].rstrip(b" \t")
        if i < n and v[i] == ord("="):
            i += 1
        else:
            continue
        while i < n and v[i] in b" \t":
            i += 1
        vs = i
        while i < n and v[i] != ord(";"):
            i += 1
        val = v[vs:i].rstrip(b" \t")
        if nm == name:
            return 0, vs, len(val), i
    return -2, 0, 0, n


def setcookie_walk(s):
    """(name, value offset, value length, bytes walked) or (None, walked)."""
    i, n = 0, len(s)
    while i < n and s[i] in b" \t":
        i += 1
    ns = i
    while i < n and s[i] not in b"=;":
        i += 1
    nm = s[ns:i].rstrip(b" \t")
    if i >= n or s[i] != ord("=") or not nm:
        return None, 0, 0, i
    i += 1
    while i < n and s[i] in b" \t":
        i += 1
    vs = i
    while i < n and s[i] != ord(";"):
        i += 1
    return nm, vs, len(s[vs:i].rstrip(b" \t")), i


def cookie_text_ok(t, is_name):
    if (is_name and not t) or len(t) > 64:
        return False
    bad = set(b';,"\\') | (set(b"()<>@:/[]?={}") if is_name else set())
    return all(0x20 < c < 0x7F and c not in bad for c in t)


# ---------------------------------------------------------------- splice

def after(a, b):
    d = (a - b) & 0xFFFFFFFF
    return d != 0 and d < 0x80000000


def verify_frame(where, got, want, fail):
    """got equals want but for the TCP (and IPv4) checksum's +0/-0."""
    if len(got) != len(want):
        fail("%s: frame length %d, python says %d" % (where, len(got), len(want)))
    ip_csum, tcp_csum = 14 + 10, 14 + 20 + 16
    for at in (ip_csum, tcp_csum):
        g, w = got[at:at + 2], want[at:at + 2]
        if g != w and not ({g, w} == {b"\0\0", b"\xff\xff"}):
            fail("%s: checksum at %d is %s, python says %s" % (where, at, g.hex(), w.hex()))
    mask = lambda b: b[:ip_csum] + b"\0\0" + b[ip_csum + 2:tcp_csum] + b"\0\0" + b[tcp_csum + 2:]
    if mask(got) != mask(want):
        fail("%s: frame %s, python says %s" % (where, got.hex(), want.hex()))


def refresh(frame):
    """frame (Ethernet + 20-byte IPv4 + TCP) with both checksums recomputed."""
    f = bytearray(frame)
    total = struct.unpack("!H", f[16:18])[0]
    f[24:26] = b"\0\0"
    f[24:26] = struct.pack("!H", csum(bytes(f[14:34])))
    seg = bytearray(f[34:14 + total])
    seg[16:18] = b"\0\0"
    c = csum(bytes(f[26:34]) + struct.pack("!BBH", 0, 6, len(seg)) + bytes(seg))
    f[50:52] = struct.pack("!H", c)
    return bytes(f)


# ---------------------------------------------------------------- driver

def check_l7(vdir, lines, vector_lines, check_ops, Lines, fail):
    body = Lines("l7", lines)
    table, order, maxr = [], "first", 0
    for v in vector_lines(vdir + "/l7.txt"):
        w = v.split()
        op = w[0]
        if op == "http":
            kind, max_line, max_hdr, cap, cuts, mhex = w[1], int(w[2]), int(w[3]), int(w[4]), w[5], w[6]
            msg = unhex(mhex)
            h, st, err, used, copied = http_parse(msg, kind == "resp", max_line, max_hdr, cap)
            expect = "http %s -> %s err=%s used=%d" % (" ".join(w[1:]), st, err, used)
            got = body.next(expect)
            if got != expect:
                fail("l7: %r, python says %r" % (got, expect))
            check_ops("l7 " + v[:60], body.next("ops"), "ops", {"bytes_parsed": used, "bytes_copied": copied})
            if st != "done":
                continue
            flags = (0x01 if h.response else 0) | (0x02 if h.has_length else 0) | (0x04 if h.chunked else 0) | \
                (0x08 if h.close else 0) | (0x10 if h.ka else 0) | (0x20 if h.keepalive else 0) | 0x40 | \
                (0x80 if h.has_host else 0)
            sp = lambda label, s: " %s=%s" % (label, hx(msg[s[0]:s[0] + s[1]]))
            expect = "  head flags=%04x version=1.%d code=%d cl=%d blank=%d len=%d" % (
                flags, h.version, h.code, h.cl, h.blank, used)
            expect += sp("method", h.method) + sp("target", h.target) + sp("host", h.host) + sp("cookie", h.cookie)
            expect += " cookies=%d setcookies=%d" % (h.cookies, h.nsc) + "".join(sp("sc", s) for s in h.sc)
            got = body.next(expect)
            if got != expect:
                fail("l7: %r, python says %r" % (got, expect))
            if not h.response:
                path, scanned = http_path(msg, h.target)
                expect = "  path =%s" % hx(path)
                got = body.next(expect)
                if got != expect:
                    fail("l7: %r, python says %r" % (got, expect))
                check_ops("l7 path", body.next("path_ops"), "path_ops", {"bytes_parsed": scanned})
        elif op == "rules":
            table, order, maxr = [], w[1], int(w[2])
            if body.next(v) != v:
                fail("l7: rules line %r" % v)
        elif op == "rule":
            kind, flags, prec, target, pat = int(w[1]), int(w[2]), int(w[3]), int(w[4]), unhex(w[5])
            stored = (b"." if kind == 3 else b"") + pat
            ops = {}
            if not pat or len(stored) > 255:
                rc = -1
            elif len(table) >= maxr or sum(len(r[2]) for r in table) + len(stored) > maxr * 64:
                rc = -2
            else:
                pos = len(table)
                if order == "prec":
                    while pos > 0 and table[pos - 1][3] > prec:
                        pos -= 1
                table.insert(pos, (kind, flags & 1, stored, prec, target))
                rc = pos
                ops = {"table_writes": 1 + len(table) - 1 - pos, "bytes_copied": len(stored)}
            expect = "%s -> %d" % (v, rc)
            got = body.next(expect)
            if got != expect:
                fail("l7: %r, python says %r" % (got, expect))
            check_ops("l7 " + v, body.next("ops"), "ops", ops)
        elif op == "match":
            path, host = unhex(w[1]), unhex(w[2])
            hits, cmps = [], []
            for kind, icase, pat, prec, target in table:
                hit, c = rule_eval(kind, icase, pat, path, host)
                hits.append(hit)
                cmps.append(c)
            first = hits.index(True) if True in hits else -3
            n_eval = first + 1 if first >= 0 else len(table)
            expect = "%s -> %d target=%d" % (v, first, table[first][4] if first >= 0 else 0)
            got = body.next(expect)
            if got != expect:
                fail("l7: %r, python says %r" % (got, expect))
            check_ops("l7 " + v, body.next("ops"), "ops",
                      {"rules_evaluated": n_eval, "bytes_parsed": sum(cmps[:n_eval])})
            idx = [i for i, x in enumerate(hits) if x]
            expect = "  all %d" % len(idx) + "".join(" %d" % i for i in idx)
            got = body.next(expect)
            if got != expect:
                fail("l7: %r, python says %r" % (got, expect))
            check_ops("l7 " + v, body.next("all_ops"), "all_ops",
                      {"rules_evaluated": len(table), "bytes_parsed": sum(cmps)})
        elif op == "tls":
            d = unhex(w[1])
            st, f, walked = tls_parse(d)
            expect = "tls %s -> %s rec=%d" % (w[1], st, f["rec"])
            if st == "ok":
                expect += " rv=%04x cv=%04x max=%04x suites=%d ext=%d sid=%s sni=%s" % (
                    f["rv"], f["cv"], f["max"], f["suites"], f["ext"], hx(f["sid"]), hx(f["sni"]))
            got = body.next(expect)
            if got != expect:
                fail("l7: %r, python says %r" % (got[:200], expect[:200]))
            check_ops("l7 tls", body.next("ops"), "ops", {"bytes_parsed": walked})
        elif op == "tlssrv":
            d = unhex(w[1])
            st, f, walked = tls_server_parse(d)
            expect = "tlssrv %s -> %s rec=%d" % (w[1], st, f["rec"])
            if st == "ok":
                expect += " rv=%04x sv=%04x sel=%04x cs=%04x sid=%s" % (f["rv"], f["sv"], f["sel"], f["cs"],
                                                                       hx(f["sid"]))
            got = body.next(expect)
            if got != expect:
                fail("l7: %r, python says %r" % (got[:200], expect[:200]))
            check_ops("l7 tlssrv", body.next("ops"), "ops", {"bytes_parsed": walked})
        elif op == "cookie":
            name, val = w[1].encode(), unhex(w[2])
            rc, off, ln, walked = cookie_find(val, name) if cookie_text_ok(name, True) else (-1, 0, 0, 0)
            expect = "%s -> %d" % (v, rc) + (" off=%d len=%d" % (off, ln) if rc == 0 else "")
            got = body.next(expect)
            if got != expect:
                fail("l7: %r, python says %r" % (got, expect))
            check_ops("l7 " + v, body.next("ops"), "ops", {"bytes_parsed": walked} if rc != -1 else {})
        elif op == "setcookie":
            mode, name, value, resp = w[1], w[2].encode(), w[3].encode(), unhex(w[4])
            h, st, err, used, _ = http_parse(resp, True, 8190, 101, 4096)
            if st != "done":
                fail("l7: %r: the response does not parse" % v)
            walked, found = 0, None
            for off, ln in h.sc:
                nm, vo, vl, k = setcookie_walk(resp[off:off + ln])
                walked += k
                if nm == name:
                    found = (off + vo, vl)
                    break
            if mode == "learn":
                expect = "%s -> %s" % (v, ("0 value=%s" % hx(resp[found[0]:found[0] + found[1]])) if found else "-2")
                got = body.next(expect)
                if got != expect:
                    fail("l7: %r, python says %r" % (got, expect))
                check_ops("l7 " + v, body.next("ops"), "ops", {"bytes_parsed": walked})
                continue
            ops, aops = {}, {}
            if not cookie_text_ok(name, True) or not cookie_text_ok(value, False):
                expect = "%s -> -1" % v
            elif mode == "insert":
                e = (h.blank, 0, b"Set-Cookie: " + name + b"=" + value + b"; path=/\r\n")
            elif found is None:
                expect = "%s -> -2" % v
                ops = {"bytes_parsed": walked}
            else:
                e = (found[0], 0 if mode == "prefix" else found[1], value + (b"~" if mode == "prefix" else b""))
                ops = {"bytes_parsed": walked}
            if cookie_text_ok(name, True) and cookie_text_ok(value, False) and (mode == "insert" or found):
                off, dl, ins = e
                new = resp[:off] + ins + resp[off + dl:]
                expect = "%s -> 0 off=%d del=%d ins=%s apply=0 head=%s" % (v, off, dl, hx(ins), hx(new))
                ops["bytes_written"] = len(ins)
                aops = {"bytes_copied": len(ins) + (len(resp) - off - dl if len(ins) != dl else 0)}
            got = body.next(expect)
            if got != expect:
                fail("l7: %r, python says %r" % (got, expect))
            check_ops("l7 " + v, body.next("ops"), "ops", ops)
            check_ops("l7 " + v, body.next("apply_ops"), "apply_ops", aops)
        elif op == "splice":
            check_splice(v, w, body, check_ops, fail)
        else:
            fail("l7: unknown vector %r" % v)
    body.done()


def check_splice(v, w, body, check_ops, fail):
    cisn, visn, req, local, srv, resp = (int(x, 16) for x in w[1:7])
    d, off, dl = int(w[7]), int(w[8]), int(w[9])
    ins = None if w[10] == "x" else unhex(w[10])
    f1, f2 = unhex(w[11]), unhex(w[12])
    M = 0xFFFFFFFF
    expect = "splice %s ->  setup_ops table_writes=3" % " ".join(w[1:])
    got = body.next(expect)
    if got != expect:
        fail("l7: %r, python says %r" % (got[:120], expect[:120]))
    # State after accept, handshake and bind.
    c_next = (cisn + 1) & M
    v_next = (visn + 1) & M
    if after(req, c_next):
        c_next = req
    adj = {0: [0, (local - req) & M, (local - req) & M, 0], 1: [0, (resp - srv) & M, (resp - srv) & M, 0]}
    frame = bytearray(f1)
    total = struct.unpack("!H", frame[16:18])[0]
    doff = (frame[46] >> 4) * 4
    pay_at = 34 + doff
    pay = bytes(frame[pay_at:14 + total])
    seq = struct.unpack("!I", frame[38:42])[0]
    edit_ops = {}
    if ins is not None:
        new_pay = pay[:off] + ins + pay[off + dl:]
        new_total = total - dl + len(ins)
        frame = bytearray(frame[:pay_at] + new_pay)
        frame[16:18] = struct.pack("!H", new_total)
        frame = bytearray(refresh(bytes(frame)))
        if len(frame) < 60:
            frame += b"\0" * (60 - len(frame))
        delta = (len(ins) - dl) & M
        a = adj[d]
        if delta and (not a[3] or after(seq, a[0])):
            a[0], a[1], a[2], a[3] = seq, a[2], (a[2] + delta) & M, 1
        tail = len(pay) - off - dl
        odd = (len(ins) - dl) % 2 != 0
        edit_ops = {"checksum_bytes": dl + len(ins) + (2 * tail if odd else 0), "csum_updates": 3,
                    "bytes_written": len(ins) + 6, "bytes_copied": tail if len(ins) != dl else 0}
        pay = new_pay
    expect_edit = "  edit=0"
    line = body.next("edit line")
    if not line.startswith(expect_edit + "  edit_ops"):
        fail("l7: %r, python says edit=0" % line)
    check_ops("l7 splice edit", line[len(expect_edit):], "edit_ops", edit_ops)

    def map_seq(dr, s):
        a = adj[dr]
        return (s + (a[2] if a[3] and after(s, a[0]) else a[1])) & M

    def map_ack(dr, k):
        o = adj[1 - dr]
        return (k - (o[2] if o[3] and after((k - o[1]) & M, o[0]) else o[1])) & M

    def xlate(dr, fr):
        nonlocal c_next, v_next
        fr = bytearray(fr)
        s, k = struct.unpack("!II", fr[38:46])
        flags = fr[47]
        ns = map_seq(dr, s)
        fr[38:42] = struct.pack("!I", ns)
        if flags & 0x10:
            fr[42:46] = struct.pack("!I", map_ack(dr, k))
        fr = bytearray(refresh(bytes(fr)))
        t = struct.unpack("!H", fr[16:18])[0]
        plen = t - 20 - (fr[46] >> 4) * 4
        end = plen + (1 if flags & 2 else 0) + (1 if flags & 1 else 0)
        if dr == 0:
            if after((s + end) & M, c_next):
                c_next = (s + end) & M
        elif after((ns + end) & M, v_next):
            v_next = (ns + end) & M
        ops = {"bytes_parsed": 8, "bytes_written": 10 if flags & 0x10 else 6,
               "csum_updates": 4 if flags & 0x10 else 2}
        return bytes(fr), ops

    want, ops = xlate(d, frame)
    line = body.next("xlate")
    if not line.startswith("  xlate=0 frame="):
        fail("l7: %r, python says xlate=0" % line[:80])
    verify_frame("l7 splice " + w[11][:40], bytes.fromhex(line[len("  xlate=0 frame="):]), want, fail)
    check_ops("l7 splice xlate", body.next("xlate_ops"), "xlate_ops", ops)
    if f2:
        want, ops = xlate(1 - d, f2)
        line = body.next("xlate2")
        if not line.startswith("  xlate2=0 frame="):
            fail("l7: %r, python says xlate2=0" % line[:80])
        verify_frame("l7 splice frame2", bytes.fromhex(line[len("  xlate2=0 frame="):]), want, fail)
        check_ops("l7 splice xlate2", body.next("xlate2_ops"), "xlate2_ops", ops)
    expect = "  state c_next=%08x v_next=%08x c2s=%08x,%08x,%08x,%d s2c=%08x,%08x,%08x,%d" % tuple(
        [c_next, v_next] + adj[0] + adj[1])
    got = body.next(expect)
    if got != expect:
        fail("l7: %r, python says %r" % (got, expect))
