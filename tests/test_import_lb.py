"""routertwin import haproxy | ipvs | haproxy-stat, and export haproxy.

Independent truth: HAProxy's configuration manual (the quoting examples of
section 2.2, the defaults rules of section 4), the real haproxy 2.6 of
Debian's package (`haproxy -c` accepts what the twin exports; a running
haproxy's `show stat` counts the picks its roundrobin made) and the
configurations Debian ships with it, which nobody here wrote.
"""

import glob
import os
import shutil
import socket
import string
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import haproxy_command, in_namespace, one_line, run_cli
from routertwin.importers import haproxy, haproxy_stat, ipvs
from routertwin.importers._lbcommon import ImportFileError
from routertwin.scenario_loader import load_scenario

EXAMPLES = sorted(glob.glob("/usr/share/doc/haproxy/examples/*.cfg")) + ["/etc/haproxy/haproxy.cfg"]
HAPROXY = shutil.which("haproxy")
needs_haproxy = pytest.mark.skipif(HAPROXY is None or not EXAMPLES[:-1], reason="Debian's haproxy is not installed")
# Statements that map to scenario keys (the rest must be listed by line).
MODELLED_HEADS = {"mode", "balance", "hash-type", "bind", "default_backend", "server", "default-server",
                  "frontend", "backend", "listen", "defaults", "global", "retries", "cookie", "stick-table", "stick",
                  "maxconn", "backlog", "tune.bufsize",  # these three: the fill-SERVICE case
                  "acl", "use_backend"}  # content switching (test_import_lb_content.py)


def cfg(tmp_path, text: str, name: str = "h.cfg") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load_imported(tmp_path, result, name="s.yaml"):
    path = tmp_path / name
    path.write_text(result.text(), encoding="utf-8")
    return load_scenario(path)


# ---------------------------------------------------------------- tokenizer


def test_manual_2_2_log_format_lines_are_equivalent():
    # configuration manual 2.2: "those are all strictly equivalent"
    lines = [r"log-format %{+Q}o\ %t\ %s\ %{-Q}r",
             r'log-format "%{+Q}o %t %s %{-Q}r"',
             r"log-format '%{+Q}o %t %s %{-Q}r'",
             r"""log-format "%{+Q}o %t"' %s %{-Q}r'""",
             r"""log-format "%{+Q}o %t"' %s'\ %{-Q}r"""]
    assert {tuple(haproxy.tokenize(x, env={})) for x in lines} == {("log-format", "%{+Q}o %t %s %{-Q}r")}


@pytest.mark.parametrize("line, words", [
    # the matrix of manual 2.2, one character at a time
    (r"a\ b", ["a b"]), (r"a\x20b", ["a b"]), (r'"a b"', ["a b"]), (r"'a b'", ["a b"]),
    (r"\#x", ["#x"]), (r'"#x"', ["#x"]), (r"'#x'", ["#x"]), (r"x # comment", ["x"]),
    (r"\$x", ["\\$x"]), (r"$x", ["$x"]), (r"'$x'", ["$x"]), (r'"\$x"', ["$x"]),
    (r"\'", ["'"]), (r'''"'"''', ["'"]), (r"\\", ["\\"]), (r"'\'", ["\\"]), (r'"\\"', ["\\"]),
    (r"\n\r\t", ["\n\r\t"]), (r'"\x41"', ["A"]), (r'""', [""]), ("a\tb  c", ["a", "b", "c"]),
    # not an escape: the backslash stays (regular expressions)
    (r"^/img\.png$", [r"^/img\.png$"]),
    # environment variables expand inside double quotes only (2.3)
    (r'"$HOME_X" $HOME_X', ["/h", "$HOME_X"]), (r'"${HOME_X}/a"', ["/h/a"]), (r'"${UNSET-def}"', ["def"]),
    (r'"${UNSET}"x', ["x"]),
])
def test_quoting_matrix(line, words):
    assert haproxy.tokenize(line, env={"HOME_X": "/h"}) == words


@pytest.mark.parametrize("line, column", [("a 'b", 3), ('a "b', 3), (r"a \xZZ", 3), (r'"${V[*]}"', 2),
                                          ('"x$"', 3), ('"${}"', 2)])
def test_tokenizer_refuses_with_the_column(line, column):
    with pytest.raises(haproxy.TokenError) as e:
        haproxy.tokenize(line, env={})
    assert e.value.column == column


WORD = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x00"), max_size=12)


def _strong_quote(word: str) -> str:
    # manual 2.2: nothing is interpreted inside '...'; a ' itself is written
    # \' outside the quotes, and quoted parts join into one word
    return "'" + word.replace("'", "'\\''") + "'"


def _escape_only(word: str) -> str:
    # manual 2.2: outside quotes any character can be written \xNN (one byte:
    # a word with wider characters, or an empty one, is strongly quoted)
    if not word or any(ord(c) > 255 for c in word):
        return _strong_quote(word)
    return "".join(c if c.isascii() and c.isalnum() else f"\\x{ord(c):02x}" for c in word)


@settings(max_examples=300, deadline=None)
@given(st.lists(WORD, min_size=1, max_size=6), st.sampled_from([_strong_quote, _escape_only]))
def test_quoted_words_come_back(words, quote):
    """Any words, quoted as the manual says, come back as the same words."""
    quoted = [quote(w) for w in words]
    assert haproxy.tokenize(" \t".join(quoted), env={}) == words


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=80))
def test_tokenizer_takes_any_line_or_says_where(line):
    try:
        words = haproxy.tokenize(line, env={})
    except haproxy.TokenError as exc:
        assert 1 <= exc.column <= len(line)
    else:
        assert all(isinstance(w, str) for w in words)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=string.printable, max_size=200))
def test_importer_takes_any_file_or_names_a_line(tmp_path_factory, text):
    """Arbitrary text: a scenario, or an ImportFileError naming a line of the file."""
    path = tmp_path_factory.mktemp("h") / "h.cfg"
    path.write_text(text, encoding="utf-8")
    try:
        haproxy.import_file(path, env={})
    except ImportFileError as exc:
        n = len(path.read_text().split("\n"))
        assert exc.line is None or 1 <= exc.line <= n, str(exc)


# ---------------------------------------------------------------- semantics


def test_defaults_inheritance_and_from(tmp_path):
    # manual 4: a proxy starts from the last defaults before it, or the one
    # named after `from`; a defaults section without `from` resets everything
    path = cfg(tmp_path, """
        defaults web
            mode http
            balance leastconn
            default-server weight 7 maxconn 40
        defaults
            timeout server 1s
        backend plain
            server a 198.18.0.1:80
        backend inherited from web
            hash-type consistent
            server a 198.18.0.1:80
            server b 198.18.0.2:80 weight 2 slowstart 3s backup
        backend src from web
            balance source
            hash-type consistent
            option allbackups
            server c 198.18.0.3
            server d 198.18.0.4:8080 disabled
        """)
    r = haproxy.import_file(path, env={})
    pools = {p["name"]: p for p in r.scenario["balancer"]["pools"]}
    assert pools["plain"] == {"name": "plain", "mode": "tcp", "scheduler": "roundrobin",
                              "servers": [{"name": "a", "address": "198.18.0.1", "port": 80}]}
    assert pools["inherited"]["mode"] == "http" and pools["inherited"]["scheduler"] == "leastconn"
    assert pools["inherited"]["servers"][1] == {"name": "b", "address": "198.18.0.2", "port": 80, "weight": 2,
                                                "maxconn": 40, "slowstart_ms": 3000.0, "backup": True}
    assert pools["src"]["scheduler"] == "source-consistent" and pools["src"]["allbackups"] is True
    assert pools["src"]["servers"][0] == {"name": "c", "address": "198.18.0.3", "weight": 7, "maxconn": 40}
    assert pools["src"]["servers"][1]["disabled"] is True
    # the anonymous defaults' timeout is listed once, at its own line
    assert [(n.line, n.text) for n in r.not_modelled] == [(6, "timeout server 1s")]


def test_health_and_persistence_are_carried_and_httpchk_listed(tmp_path):
    path = cfg(tmp_path, """
        backend app
            mode http
            option httpchk GET /health HTTP/1.1
            cookie SRV insert indirect nocache
            stick-table type ip size 200k expire 30m
            stick on src
            option redispatch
            retries 3
            server s1 198.18.0.1:80 check inter 2s fastinter 500 downinter 10s rise 2 fall 3 cookie a
            server s2 198.18.0.2:80 check
        """)
    r = haproxy.import_file(path, env={})
    # the failover model acts on health checks, retries, redispatch and persistence; not on httpchk
    assert [(n.line, n.reason) for n in r.not_modelled] == [(3, "not modelled yet: would set pool key 'httpchk'")]
    pool = r.scenario["balancer"]["pools"][0]
    assert {k: pool[k] for k in ("cookie", "stick_table", "stick_on", "redispatch", "retries")} == {
        "cookie": {"name": "SRV", "mode": "insert", "indirect": True, "nocache": True},
        "stick_table": {"type": "ip", "size": 200 * 1024, "expire_ms": 1_800_000.0},
        "stick_on": "src", "redispatch": True, "retries": 3}
    assert pool["servers"][1] == {"name": "s2", "address": "198.18.0.2", "port": 80, "check": True}
    # and httpchk's value was understood (it switches on when the schema has the key)
    parser = haproxy._Parser(path.read_text().splitlines(), str(path), {})
    app = parser.parse()[0]
    assert app.settings == {"httpchk": "GET /health HTTP/1.1",
                           "cookie": {"name": "SRV", "mode": "insert", "indirect": True, "nocache": True},
                           "stick_table": {"type": "ip", "size": 200 * 1024, "expire_ms": 1_800_000.0},
                           "stick_on": "src", "redispatch": True, "retries": 3}
    assert {k: app.servers[0][k] for k in ("check", "inter_ms", "fastinter_ms", "downinter_ms", "rise", "fall",
                                           "cookie")} == {"check": True, "inter_ms": 2000.0, "fastinter_ms": 500.0,
                                                          "downinter_ms": 10000.0, "rise": 2, "fall": 3,
                                                          "cookie": "a"}


def test_every_statement_is_mapped_or_listed():
    """Debian's examples: every non-empty statement either is a keyword the
    scenario carries or appears in the list with its line."""
    for path in EXAMPLES:
        r = haproxy.import_file(path, env={})
        listed = {n.line for n in r.not_modelled}
        for no, line in enumerate(Path(path).read_text().splitlines(), 1):
            words = haproxy.tokenize(line, env={})
            if words and no not in listed:
                assert words[0] in MODELLED_HEADS or words[:2] in (
                    ["option", "allbackups"], ["option", "redispatch"], ["timeout", "connect"],
                    ["timeout", "check"], ["timeout", "queue"]), f"{path}:{no}: {line}"
                if words[0] in ("bind", "server", "default-server"):
                    # a mapped server line has only modelled options
                    assert not set(words) & {"ssl", "name", "track", "source", "verify"}, f"{path}:{no}"


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_debian_examples_import_and_load(tmp_path, path):
    r = haproxy.import_file(path, env={})
    sc = load_imported(tmp_path, r)
    assert sc.kind == "lb" and sc.config.balancer is not None


def test_content_switching_sample_maps_its_backends(tmp_path):
    path = "/usr/share/doc/haproxy/examples/content-sw-sample.cfg"
    if not os.path.exists(path):
        pytest.skip("Debian's haproxy examples are not installed")
    bal = load_imported(tmp_path, haproxy.import_file(path, env={})).config.balancer
    assert [(s.name, s.mode, s.listen, s.pool) for s in bal.services] == [
        ("public", "http", ["192.168.1.10:80"], "dynamic")]
    dyn = bal.pool("dynamic")
    assert dyn.scheduler == "roundrobin"
    assert [(s.name, s.address, s.port, s.maxconn) for s in dyn.servers] == [
        (f"dynsrv{i}", f"192.168.1.{i}", 80, 500) for i in range(1, 5)]


# ---------------------------------------------------------------- export


@needs_haproxy
@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_export_is_accepted_by_haproxy_and_round_trips(tmp_path, path):
    first = load_imported(tmp_path, haproxy.import_file(path, env={}), "first.yaml")
    out = tmp_path / "exported.cfg"
    proc = run_cli("export", "haproxy", tmp_path / "first.yaml", "-o", out)
    if not first.config.balancer.services and not first.config.balancer.pools:
        # Debian's /etc/haproxy/haproxy.cfg: global settings and defaults only
        assert "nothing HAProxy could run" in one_line(proc, out)
        return
    assert proc.returncode == 0, proc.stderr
    check = subprocess.run([HAPROXY, "-c", "-f", str(out)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    again = load_imported(tmp_path, haproxy.import_file(out, env={}), "again.yaml")
    # a service whose routing is not modelled goes out without the lines that made it so (a comment
    # says why): it comes back with the rest of its keys, routed by its default pool
    expected = first.config.balancer.model_dump()
    for svc in expected["services"]:
        if svc["rules_not_modelled"] is not None:
            assert f"# content switching not exported: {svc['rules_not_modelled']}" in out.read_text()
            svc["rules_not_modelled"] = None
    assert again.config.balancer.model_dump() == expected
    assert _fills(again) == _fills(first)


def _fills(scenario):
    """What the fill cases model: connections held, bytes each, accept queue."""
    return [(c.id, c.tablefill.limit, c.tablefill.bytes_per_connection, c.tablefill.accept_queue)
            for c in scenario.config.cases if c.method == "tablefill"]


@needs_haproxy
def test_fill_settings_survive_export_and_import(tmp_path):
    cfg = tmp_path / "fill.cfg"
    cfg.write_text("global\n    maxconn 3000\n    tune.bufsize 32768\n\n"
                   "frontend big\n    bind 198.18.0.1:80\n    maxconn 5000\n    backlog 700\n"
                   "    default_backend b\n\n"
                   "frontend small\n    bind 198.18.0.1:81\n    maxconn 1200\n    default_backend b\n\n"
                   "backend b\n    server s1 198.18.0.2:80\n")
    first = load_imported(tmp_path, haproxy.import_file(cfg, env={}), "first.yaml")
    # the global maxconn caps 'big'; 'small' keeps its own; 2 x 32768 buffers + the manual's other ~1 kB
    assert _fills(first) == [("fill-big", 3000, 2 * 32768 + 1024, 700), ("fill-small", 1200, 2 * 32768 + 1024, 1200)]
    out = tmp_path / "exported.cfg"
    proc = run_cli("export", "haproxy", tmp_path / "first.yaml", "-o", out)
    assert proc.returncode == 0, proc.stderr
    check = subprocess.run([HAPROXY, "-c", "-f", str(out)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    again = load_imported(tmp_path, haproxy.import_file(out, env={}), "again.yaml")
    assert _fills(again) == _fills(first)


# ---------------------------------------------------------------- bad input


BAD = [
    ("frontend f\n    bind :80\n    frobnicate 3\n", 3, "unknown keyword 'frobnicate'"),
    ("backend b\n    server s 198.18.0.1:80 weight 300\n", 2, "weight: '300' must be an integer in 0..256"),
    ("backend b\n    server s 198.18.0.1:80 wieght 3\n", 2, "unknown server option 'wieght'"),
    ("backend b\n    server s 256.1.1.1:80\n", 2, "is not an IPv4 or IPv6 address"),
    ("backend b\n    server s 198.18.0.1:70000\n", 2, "port 70000 is out of range"),
    ("frontend f\n    bind 198.18.0.1:0\n", 2, "port 0 is out of range"),
    ("frontend f\n    bind :80\n    default_backend nowhere\n", 3, "default_backend 'nowhere'"),
    ("backend b\n    use-server s2 if TRUE\n    server s1 198.18.0.1:80\n", 2, "use-server 's2'"),
    ("backend b\n    server s1 198.18.0.1:80 track b/s9\n", 2, "track 'b/s9'"),
    ("backend b\n    server s 198.18.0.1:80\n    server s 198.18.0.2:80\n", 3, "already defined at line 2"),
    ("backend b\n    balance roundrobinn\n", 2, "unknown algorithm 'roundrobinn'"),
    ("backend b\n    mode udp\n", 2, "must be tcp or http"),
    ("backend b\n    timeout server 5x\n", 2, "is not a time"),
    ("backend b\n    cookie S insert rewrite\n", 2, "exclude each other"),
    ("frontend f\n    server s 198.18.0.1:80\n", 2, "not allowed in a frontend"),
    ("    mode http\n", 1, "outside any section"),
    ("frontend f\n    bind \"198.18.0.1:80\n", 2, "unmatched double quote"),
    ("backend b from nowhere\n", 1, "defaults section 'nowhere' does not exist"),
    (".if defined(X)\n.endif\n", 1, "conditional blocks"),
    ("global\n    maxconnn 10\n", 2, "unknown keyword 'maxconnn'"),
]


@pytest.mark.parametrize("text, line, message", BAD, ids=[b[2][:30] for b in BAD])
def test_bad_configuration_names_file_and_line(tmp_path, text, line, message):
    path = cfg(tmp_path, text)
    out = tmp_path / "out.yaml"
    err = one_line(run_cli("import", "haproxy", path, "-o", out), out)
    assert err.startswith(f"{path}:{line}: ") and message in err, err


def test_strict_refuses_what_is_not_modelled(tmp_path):
    path = cfg(tmp_path, "backend b\n    timeout server 5s\n    server s 198.18.0.1:80\n")
    out = tmp_path / "out.yaml"
    err = one_line(run_cli("import", "haproxy", path, "-o", out, "--strict"), out)
    assert err == (f"{path}:2: timeout server 5s (not modelled yet: would set pool key 'timeouts_ms') "
                   "(--strict: not modelled)")
    # without --strict: written, and the listed line is in the file's head
    proc = run_cli("import", "haproxy", path, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert f"#   {path}:2: timeout server 5s  (not modelled yet: would set pool key 'timeouts_ms')" in out.read_text()


# ---------------------------------------------------------------- IPVS


IPVS_RULES = """\
-A -t 198.18.0.10:80 -s wlc
-a -t 198.18.0.10:80 -r 198.18.1.1:80 -g -w 3
-a -t 198.18.0.10:80 -r 198.18.1.2:80 -g -w 1
-A -u 198.18.0.10:53 -s mh -p 300
-a -u 198.18.0.10:53 -r 198.18.1.3 -i -w 1
-a -u 198.18.0.10:53 -r 198.18.1.4:5353 -i -w 0
-A -t [2001:db8::1]:443 -s lblc
-a -t [2001:db8::1]:443 -r [2001:db8::2]:443 -m -w 2
-A -f 7 -s rr
-A -t 198.18.0.20:0 -s rr -p 600
-a -t 198.18.0.20:0 -r 198.18.1.9 -g
"""


def test_ipvs_rules(tmp_path):
    path = cfg(tmp_path, IPVS_RULES, "rules.txt")
    r = ipvs.import_file(path)
    bal = load_imported(tmp_path, r).config.balancer
    web = bal.pool("tcp:198.18.0.10:80")
    assert (web.scheduler, web.forwarding) == ("wlc", "dr")
    assert [(s.address, s.port, s.weight) for s in web.servers] == [("198.18.1.1", 80, 3), ("198.18.1.2", 80, 1)]
    dns = bal.pool("udp:198.18.0.10:53")
    assert (dns.mode, dns.scheduler, dns.forwarding) == ("udp", "maglev", "tunnel")
    assert [(s.port, s.weight) for s in dns.servers] == [(53, 1), (5353, 0)]  # no port: the service's
    v6 = bal.pool("tcp:2001:db8::1:443")
    assert v6.scheduler is None and v6.forwarding is None
    assert bal.services[2].listen == ["[2001:db8::1]:443"]
    reasons = {(n.line, n.reason.split(":")[0].split(" ")[0]) for n in r.not_modelled}
    assert reasons == {(4, "persistence"), (7, "scheduler"), (8, "masquerading"), (9, "firewall-mark"),
                       (10, "a"), (11, "a")}  # a service on port 0


@pytest.mark.parametrize("text, line, message", [
    ("-a -t 198.18.0.10:80 -r 198.18.1.1:80 -g\n-A -t 198.18.0.10:80 -s rr\n", 1, "before its virtual service"),
    ("-A -t 198.18.0.10:80 -s fancy\n", 1, "unknown scheduler 'fancy'"),
    ("-A -t 198.18.0.10:80 -s rr\n-a -t 198.18.0.10:80 -r 198.18.1.1 -w 70000\n", 2, "0..65535"),
    ("-A -t 198.18.0.300:80 -s rr\n", 1, "not an IPv4 or IPv6 address"),
    ("-A -t 198.18.0.1:80 -s rr --frob\n", 1, "unknown option '--frob'"),
    ("-A -t 198.18.0.1:80\n-A -t 198.18.0.1:80\n", 2, "already defined at line 1"),
])
def test_bad_ipvs_rules(tmp_path, text, line, message):
    path = cfg(tmp_path, text, "rules.txt")
    out = tmp_path / "out.yaml"
    err = one_line(run_cli("import", "ipvs", path, "-o", out), out)
    assert err.startswith(f"{path}:{line}: ") and message in err, err


IPVS_TOKEN = st.sampled_from(["-A", "-a", "-t", "-u", "-f", "-s", "-r", "-w", "-p", "-g", "-i", "-m", "-x", "-M",
                               "rr", "wlc", "mh", "lblc", "198.18.0.1:80", "198.18.1.2", "[2001:db8::1]:443",
                               "300", "3", "70000", "'", "#", "198.18.0.999:80", ":80"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(IPVS_TOKEN, max_size=9).map(" ".join), max_size=8))
def test_ipvs_takes_any_rules_or_names_a_line(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("i") / "rules.txt"
    path.write_text("\n".join(lines) + "\n")
    try:
        r = ipvs.import_file(path)
    except ImportFileError as exc:
        assert exc.line is not None and 1 <= exc.line <= len(lines), str(exc)
    else:
        for pool in r.scenario["balancer"]["pools"]:
            assert all(0 <= s["weight"] <= 65535 for s in pool["servers"])


# ---------------------------------------------------------------- what-if on an imported pool


def test_remap_on_an_imported_pool(tmp_path):
    path = cfg(tmp_path, """
        backend app
            balance roundrobin
        """ + "".join(f"    server s{i} 198.18.0.{i}:80\n" for i in range(1, 9)) + """
        backend hashed
            balance source
            hash-type consistent
        """ + "".join(f"    server h{i} 198.18.0.{i}:80\n" for i in range(1, 9)))
    out = tmp_path / "s.yaml"
    assert run_cli("import", "haproxy", path, "-o", out).returncode == 0
    res = tmp_path / "res"
    proc = run_cli("run", out, "--out", res)
    assert proc.returncode == 0, proc.stderr
    import json

    cases = {c["case"]: c for c in json.loads((res / "haproxy-h.json").read_text())["cases"]}
    rr, ch = cases["fail-app"]["metrics"], cases["fail-hashed"]["metrics"]
    # round robin with a session table: only the failed server's connections
    # move, 1/8 of them (100,000 keys dealt in turn)
    assert rr["moved_pct"] == pytest.approx(12.5, abs=0.01) and rr["moved_pct"] == rr["on_failed_pct"]
    # and the load on the others: s1's share spread evenly over the seven left
    assert rr["after_s1_pct"] == 0
    assert [rr[f"after_s{i}_pct"] for i in range(2, 9)] == pytest.approx([100 / 7] * 7, abs=0.01)
    # consistent hashing: about the failed server's share moves, far less than map-based's
    assert ch["moved_pct"] == pytest.approx(ch["on_failed_pct"], rel=0.25) and ch["moved_pct"] < 20
    # a ninth server: round robin breaks nothing established and deals it 1/9
    # of the new connections; the consistent ring moves exactly the keys it takes
    drain = cases["drain-app"]["metrics"]
    assert (drain["moved_pct"], drain["redirected_pct"], drain["refused_pct"]) == (0, 12.5, 0)
    add_rr, add_ch = cases["add-app"]["metrics"], cases["add-hashed"]["metrics"]
    assert add_rr["moved_pct"] == 0 and add_rr["on_added_pct"] == pytest.approx(100 / 9, abs=0.01)
    assert add_ch["moved_pct"] == add_ch["on_added_pct"] and 5 < add_ch["moved_pct"] < 20


# ---------------------------------------------------------------- show stat from a real haproxy


def _live_show_stat(workdir: Path, weights: list[int], connections: int) -> str:
    """A real haproxy (roundrobin, mode tcp) over len(weights) tiny servers in
    a network namespace this test creates: `connections` connections, then
    `show stat` on its socket. Run inside the namespace (see below)."""
    servers = []
    for i in range(len(weights)):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("198.18.0.1", 22000 + i))
        s.listen(64)
        servers.append(s)

        def serve(sock=s, idx=i):
            while True:
                try:
                    c, _ = sock.accept()
                except OSError:
                    return
                c.sendall(b"%d\n" % idx)
                c.close()

        threading.Thread(target=serve, daemon=True).start()
    sock_path = workdir / "stats.sock"
    conf = workdir / "live.cfg"
    conf.write_text("global\n  nbthread 1\n  stats socket %s level admin\n"
                    "defaults\n  mode tcp\n  timeout connect 2s\n  timeout client 10s\n  timeout server 10s\n"
                    "frontend f\n  bind 198.18.0.1:21999\n  default_backend b\n"
                    "backend b\n  balance roundrobin\n" % sock_path
                    + "".join(f"  server s{i} 198.18.0.1:{22000 + i} weight {w}\n" for i, w in enumerate(weights)))
    proc = subprocess.Popen([HAPROXY, "-db", "-f", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(100):
            if sock_path.exists():
                break
            time.sleep(0.05)
        for _ in range(connections):
            c = socket.create_connection(("198.18.0.1", 21999), timeout=5)
            c.recv(16)
            c.close()
        return haproxy_command(sock_path, "show stat")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        for s in servers:
            s.close()


@needs_haproxy
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for its network namespace")
def test_show_stat_of_a_real_haproxy_becomes_calibrate_rows(tmp_path):
    weights = [3, 2, 1]
    out = in_namespace("imptest", "test_import_lb", "t._live_show_stat(Path(%r), %r, 60)" % (str(tmp_path), weights))
    csv_path = tmp_path / "stat.csv"
    csv_path.write_text(out)
    calib = tmp_path / "calib.csv"
    proc = run_cli("import", "haproxy-stat", csv_path, "-o", calib)
    assert proc.returncode == 0, proc.stderr
    from routertwin.validation.calibration import CalibrationData
    from routertwin.validation.reference import load_reference

    rows = load_reference(calib)
    data = CalibrationData(rows)
    assert len(data) == len(rows)  # every row is a calibrate row
    # HAProxy's roundrobin over 60 connections, weights 3:2:1: exactly 30, 20, 10
    picks = [data.value(f"haproxy-stat-b-s{i}-picks") for i in range(3)]
    assert picks == [30, 20, 10]
    assert [data.value(f"haproxy-stat-b-s{i}-pick_share") for i in range(3)] == pytest.approx([50, 100 / 3, 50 / 3], rel=1e-9)
    assert all(data.value(f"haproxy-stat-b-s{i}-sessions") == p for i, p in enumerate(picks))
    assert "haproxy-stat-b-s0-response_ms" in data or "haproxy-stat-b-s0-total_ms" in data


def test_show_stat_bad_input(tmp_path):
    bad = cfg(tmp_path, "pxname,svname\nb,s0\n", "stat.csv")
    err = one_line(run_cli("import", "haproxy-stat", bad, "-o", tmp_path / "o.csv"), tmp_path / "o.csv")
    assert err.startswith(f"{bad}:1: not a `show stat` answer")
    bad.write_text("# pxname,svname,stot,lbtot,\nb,s0,12,x1,\n")
    assert one_line(run_cli("import", "haproxy-stat", bad)).startswith(f"{bad}:2: column 'lbtot'")


# ---------------------------------------------------------------- the balancer keys of an edited scenario

BALANCER_HEAD = """\
scenario: edited
kind: lb
balancer:
  source: haproxy
  services:
  - {name: web, listen: ['*:80'], pool: app}
  pools:
  - name: app
    scheduler: roundrobin
    servers:
    - {name: a, address: 198.18.0.1, port: 80}
    - {name: b, address: 198.18.0.2, port: 80, weight: 3}
cases:
- {id: f, method: remap, pool: app, server: a}
"""


@pytest.mark.parametrize("old, new, line, message", [
    ("pool: app}", "pool: nowhere}", 6, "key 'balancer.services[0].pool': no pool named 'nowhere'"),
    ("address: 198.18.0.2", "address: 198.18.0.300", 12, "is not an IPv4 or IPv6 address"),
    ("weight: 3", "weight: 70000", 12, "less than or equal to 65535"),
    ("scheduler: roundrobin", "scheduler: fastest", 9, "unknown scheduler 'fastest'"),
    ("server: a}", "server: zz}", 14, "no usable active server 'zz'"),
    ("pool: app, server", "pool: other, server", 14, "no pool named 'other'"),
    ("- {name: b,", "- {name: a,", 12, "server 'a' appears twice"),
    ("cases:\n- {id: f, method: remap, pool: app, server: a}\n", "cases:\n- {id: s, rate: 1000}\n", 14,
     "needs the platform profile"),
])
def test_edited_balancer_errors_name_the_line(tmp_path, old, new, line, message):
    assert old in BALANCER_HEAD
    path = tmp_path / "s.yaml"
    path.write_text(BALANCER_HEAD.replace(old, new))
    err = one_line(run_cli("run", path, "--out", tmp_path / "o"), tmp_path / "o")
    assert err.startswith(f"{path}:{line}: ") and message in err, err


FAILOVER_CFG = """
    defaults
        mode http
        default-server inter 1s fastinter 500 downinter 5s rise 3 fall 2
        retries 3
    frontend web
        bind 198.18.0.10:80
        default_backend redisp
    backend redisp
        option redispatch
    """ + "".join(f"    server r{i} 198.18.0.{i}:80 check\n" for i in range(1, 4)) + """
    backend plain
    """ + "".join(f"    server p{i} 198.18.0.{i}:80 check\n" for i in range(1, 4)) + """
    backend sticky
        stick-table type ip size 1k expire 30m
        stick on src
        option redispatch
    """ + "".join(f"    server k{i} 198.18.0.{i}:80 check\n" for i in range(1, 4)) + """
    backend unchecked
        server u1 198.18.0.1:80
        server u2 198.18.0.2:80
    """


def test_failover_what_if_from_imported_health_checks(tmp_path):
    """Each checked pool gets a failover-POOL case with its inherited check
    timers, retries, redispatch and stick table; its detection time is
    inside the window HAProxy's rules give (manual 5.2: an UP server is
    checked every `inter`; once a check fails, every `fastinter` until `fall`
    consecutive failures mark it DOWN; a refused connection fails a check at
    once): the first failing check comes in [0, inter] after the death, the
    DOWN state (fall - 1) * fastinter later."""
    import json

    path = cfg(tmp_path, FAILOVER_CFG, name="fo.cfg")
    r = haproxy.import_file(path, env={})
    assert r.not_modelled == []
    cases = {c["id"]: c for c in r.scenario["cases"] if c["method"] == "failover"}
    assert sorted(cases) == ["failover-plain", "failover-redisp", "failover-sticky"]  # unchecked: none
    assert cases["failover-plain"]["failover"] == {
        "servers": 3, "weights": 1, "scheduler": "roundrobin", "kill_server": 0, "inter_ms": 1000,
        "fastinter_ms": 500, "downinter_ms": 5000, "rise": 3, "fall": 2, "retries": 3, "redispatch": False}
    out = tmp_path / "fo.yaml"
    assert run_cli("import", "haproxy", path, "-o", out).returncode == 0
    proc = run_cli("run", out, "--out", tmp_path / "res")
    assert proc.returncode == 0, proc.stderr
    got = {c["case"]: c["metrics"] for c in json.loads((tmp_path / "res" / "haproxy-fo.json").read_text())["cases"]}
    inter, fastinter, fall, rate = 1000, 500, 2, 100  # rate: the case's requests per second (model default)
    lo, hi = (fall - 1) * fastinter, inter + (fall - 1) * fastinter
    plain, redisp, sticky = got["failover-plain"], got["failover-redisp"], got["failover-sticky"]
    for m in (plain, redisp, sticky):
        # a check at the instant of the death sees it dead: both ends are reachable
        assert lo <= m["detection_ms"] <= hi and (m["window_min_ms"], m["window_max_ms"]) == (lo, hi)
    # round robin over 3 servers (or 10 sticky clients of 30): every third
    # request meets the dead server until it is DOWN
    for m in (plain, sticky):
        assert abs(m["to_dead_server"] - m["detection_ms"] / 1000 * rate / 3) <= 1
    # retries 3 on the same refusing server (1 s apart: manual 4.2 'retries')
    # fail; with option redispatch, round robin and more than one server up,
    # HAProxy 2.6 redispatches the first retry at once, avoiding the server
    # that failed: every request is served
    assert plain["failed"] == plain["to_dead_server"] > 0
    assert redisp["failed"] == 0 and redisp["redispatched"] == redisp["to_dead_server"] > 0
    # stick on src: 30 clients dealt round robin, 10 per server; only the dead server's 10 move
    assert cases["failover-sticky"]["failover"]["persistence"] == "stick_src"
    assert sticky["sticky_clients_moved"] == 30 // 3 and sticky["failed"] == 0


PER_SERVER_CFG = """
    defaults
        mode http
        timeout connect 300ms
        timeout check 1s
        retries 2
    frontend web
        bind 198.18.0.10:80
        default_backend pool
    backend pool
        option redispatch
        server a 198.18.0.1:80 check weight 3 inter 1s fastinter 250 fall 2
        server b 198.18.0.2:80 check weight 1 inter 3s
        server c 198.18.0.3:80 check weight 1 inter 3s downinter 10s rise 4
        server d 198.18.0.4:80 check backup
    """


def test_failover_case_has_each_servers_weight_and_timers_and_the_timeouts(tmp_path):
    """The failover-POOL case carries every usable server's weight and check
    timers (manual 5.2 defaults: weight 1, fall 3, rise 2, fastinter and
    downinter = that server's inter) and the inherited timeout connect and
    timeout check, which are no longer listed; the dying server a's own
    timers set its detection window [(fall - 1) x fastinter, + inter] =
    [250, 1250] ms."""
    import json

    path = cfg(tmp_path, PER_SERVER_CFG, name="ps.cfg")
    r = haproxy.import_file(path, env={})
    assert r.not_modelled == []
    (case,) = [c for c in r.scenario["cases"] if c["method"] == "failover"]
    assert case["failover"] == {
        "servers": 3, "weights": "3,1,1", "scheduler": "roundrobin", "kill_server": 0,
        "inter_ms": "1000,3000,3000", "fastinter_ms": "250,3000,3000", "downinter_ms": "1000,3000,10000",
        "rise": "2,2,4", "fall": "2,3,3", "retries": 2, "redispatch": True, "connect_timeout_ms": 300,
        "check_timeout_ms": 1000}
    out = tmp_path / "ps.yaml"
    assert run_cli("import", "haproxy", path, "-o", out).returncode == 0
    proc = run_cli("run", out, "--out", tmp_path / "res")
    assert proc.returncode == 0, proc.stderr
    (m,) = [c["metrics"] for c in json.loads((tmp_path / "res" / "haproxy-ps.json").read_text())["cases"]
            if c["case"] == "failover-pool"]
    assert (m["window_min_ms"], m["window_max_ms"]) == (250, 1250) and 250 <= m["detection_ms"] <= 1250
    # round robin, redispatch, three servers up: each failed attempt is redispatched at once
    assert m["failed"] == 0 and m["redispatched"] == m["to_dead_server"] > 0


@needs_haproxy
def test_per_server_settings_and_timeouts_survive_export_and_import(tmp_path):
    path = cfg(tmp_path, PER_SERVER_CFG, name="ps.cfg")
    first = haproxy.import_file(path, env={})
    (tmp_path / "first.yaml").write_text(first.text(), encoding="utf-8")
    out = tmp_path / "back.cfg"
    assert run_cli("export", "haproxy", tmp_path / "first.yaml", "-o", out).returncode == 0
    text = out.read_text()
    assert "    timeout connect 300ms\n" in text and "    timeout check 1s\n" in text
    check = subprocess.run([HAPROXY, "-c", "-f", str(out)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, text + check.stdout + check.stderr
    again = haproxy.import_file(out, env={})
    assert again.scenario["cases"] == first.scenario["cases"]


@needs_haproxy
def test_failover_settings_survive_export_and_import(tmp_path):
    path = cfg(tmp_path, FAILOVER_CFG, name="fo.cfg")
    first = haproxy.import_file(path, env={})
    (tmp_path / "first.yaml").write_text(first.text(), encoding="utf-8")
    out = tmp_path / "back.cfg"
    proc = run_cli("export", "haproxy", tmp_path / "first.yaml", "-o", out)
    assert proc.returncode == 0, proc.stderr
    check = subprocess.run([HAPROXY, "-c", "-f", str(out)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, out.read_text() + check.stdout + check.stderr
    again = haproxy.import_file(out, env={})
    assert (load_imported(tmp_path, again, "again.yaml").config.balancer.model_dump()
            == load_imported(tmp_path, first, "first-loaded.yaml").config.balancer.model_dump())
    assert again.scenario["cases"] == first.scenario["cases"]
    assert [c["id"] for c in again.scenario["cases"] if c["method"] == "failover"] == [
        "failover-redisp", "failover-plain", "failover-sticky"]


INTERVAL_CFG = """
    defaults
        mode http
        retries 3
        option redispatch 2
    frontend web
        bind 198.18.0.10:80
        default_backend mixed
    backend mixed
        server a 198.18.0.1:80
        server b 198.18.0.2:80 check inter 1s
        server c 198.18.0.3:80 check inter 1s
    backend last
        option redispatch
        server d 198.18.0.4:80 check
        server e 198.18.0.5:80 check
    """


def test_option_redispatch_interval_and_unchecked_servers_reach_the_failover_case(tmp_path):
    """option redispatch 2 (inherited) is the case's redispatch_after; plain
    option redispatch keeps HAProxy's default (-1, no key). A pool whose
    first server has no check still gets a case: the first checked server
    dies, and `checked` says a is never probed (lb-failover.h)."""
    path = cfg(tmp_path, INTERVAL_CFG, name="iv.cfg")
    r = haproxy.import_file(path, env={})
    cases = {c["id"]: c["failover"] for c in r.scenario["cases"] if c["method"] == "failover"}
    assert cases["failover-mixed"]["redispatch_after"] == 2 and cases["failover-mixed"]["redispatch"] is True
    assert cases["failover-mixed"]["checked"] == "0,1,1" and cases["failover-mixed"]["kill_server"] == 1
    assert "redispatch_after" not in cases["failover-last"] and "checked" not in cases["failover-last"]
    out = tmp_path / "iv.yaml"
    assert run_cli("import", "haproxy", path, "-o", out).returncode == 0
    proc = run_cli("run", out, "--out", tmp_path / "res")
    assert proc.returncode == 0, proc.stderr


def test_timeout_check_without_timeout_connect_leaves_a_check_inter(tmp_path):
    """HAProxy gives a check's connection min(timeout connect, inter) only
    when both timeouts are set (tcpcheck_eval_connect: "if
    (proxy->timeout.check && proxy->timeout.connect)"); with timeout check
    alone it gets inter, so a silent server with inter 8 s is taken out
    after 3 x 8000 + 2 x 8000 ms at least, not after the model's assumed
    5 s connect timeout per check."""
    path = cfg(tmp_path, """
        defaults
            mode http
            timeout check 1s
        backend b
            server a 198.18.0.1:80 check inter 8s
            server b 198.18.0.2:80 check inter 8s
        """)
    (case,) = [c["failover"] for c in haproxy.import_file(path, env={}).scenario["cases"]
               if c["method"] == "failover"]
    assert "check_timeout_ms" not in case and "connect_timeout_ms" not in case
    from routertwin import _core

    r = _core.run_lb_failover({**case, "kill_mode": "silent", "duration_s": 60})
    assert (r["window_min_ms"], r["window_max_ms"]) == (3 * 8000 + 2 * 8000, 3 * 8000 + 2 * 8000 + 8000)


@pytest.mark.parametrize("text, line, message", [
    ("backend b\n    retries 3\n    option redispatch -4\n    server a 198.18.0.1:80\n", 3,
     "option redispatch -4 with retries 3 names no retry"),
    ("defaults\n    option redispatch -3\nbackend b\n    retries 2\n    server a 198.18.0.1:80\n", 2,
     "option redispatch -3 with retries 2 names no retry"),
    ("backend b\n    option redispatch 2x\n", 2, "option redispatch interval: '2x' must be an integer"),
])
def test_a_redispatch_interval_naming_no_retry_is_refused_at_its_line(tmp_path, text, line, message):
    path = cfg(tmp_path, text)
    out = tmp_path / "out.yaml"
    err = one_line(run_cli("import", "haproxy", path, "-o", out), out)
    assert err.startswith(f"{path}:{line}: ") and message in err, err


@needs_haproxy
def test_redispatch_interval_survives_export_and_import(tmp_path):
    path = cfg(tmp_path, INTERVAL_CFG, name="iv.cfg")
    first = haproxy.import_file(path, env={})
    (tmp_path / "first.yaml").write_text(first.text(), encoding="utf-8")
    out = tmp_path / "back.cfg"
    assert run_cli("export", "haproxy", tmp_path / "first.yaml", "-o", out).returncode == 0
    text = out.read_text()
    assert "    option redispatch 2\n" in text
    check = subprocess.run([HAPROXY, "-c", "-f", str(out)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, text + check.stdout + check.stderr
    assert haproxy.import_file(out, env={}).scenario["cases"] == first.scenario["cases"]


@needs_haproxy
def test_settings_switch_on_when_the_schema_has_their_keys(tmp_path, monkeypatch):
    """SETTINGS is the one switch: give the balancer schema the keys the
    health-check and persistence model will add, and the same importer
    carries them, export writes them, haproxy -c accepts them and they
    come back on import."""
    from types import SimpleNamespace

    from routertwin.runners.lb import balancer as b

    class CheckedServer(b.Server):
        check: bool = False
        inter_ms: float | None = None
        fastinter_ms: float | None = None
        downinter_ms: float | None = None
        rise: int | None = None
        fall: int | None = None
        cookie: str | None = None

    class PersistentPool(b.Pool):
        servers: list[CheckedServer] = []
        httpchk: str | None = None
        cookie: dict | None = None
        stick_table: dict | None = None
        stick_on: str | None = None
        redispatch: bool = False
        retries: int | None = None
        timeouts_ms: dict | None = None

    class TimedService(b.Service):
        timeouts_ms: dict | None = None

    class FullBalancer(b.Balancer):
        services: list[TimedService] = []
        pools: list[PersistentPool] = []

    monkeypatch.setitem(haproxy._SCHEMA, "server", CheckedServer)
    monkeypatch.setitem(haproxy._SCHEMA, "pool", PersistentPool)
    monkeypatch.setitem(haproxy._SCHEMA, "service", TimedService)
    path = cfg(tmp_path, """
        frontend web
            bind 198.18.0.1:80
            timeout client 30s
            default_backend app
        backend app
            mode tcp
            option httpchk GET /health
            cookie SRV insert indirect nocache
            stick-table type ip size 1m expire 30m
            stick on src
            option redispatch
            retries 3
            timeout connect 5s
            timeout server 1m
            server s1 198.18.0.2:80 check inter 2s fastinter 500ms downinter 10s rise 2 fall 3 cookie a
            server s2 198.18.0.3:80 check cookie b
        """)
    first = haproxy.import_file(path, env={})
    assert first.not_modelled == []
    bal = FullBalancer.model_validate(first.scenario["balancer"])
    text = haproxy.export(SimpleNamespace(config=SimpleNamespace(balancer=bal, cases=[]), path=None,
                                           name="switched"))
    out = tmp_path / "out.cfg"
    out.write_text(text)
    check = subprocess.run([HAPROXY, "-c", "-f", str(out)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, text + check.stdout + check.stderr
    again = FullBalancer.model_validate(haproxy.import_file(out, env={}).scenario["balancer"])
    assert again.model_dump() == bal.model_dump()
    pool = again.pools[0]
    assert (pool.retries, pool.redispatch, pool.stick_on, pool.timeouts_ms) == (3, True, "src", {"server": 60000.0})
    assert pool.connect_timeout_ms == 5000.0
    assert pool.servers[0].inter_ms == 2000.0 and pool.servers[1].cookie == "b"
    assert again.services[0].timeouts_ms == {"client": 30000.0}


def test_python_import_file(tmp_path):
    import routertwin as rt

    path = cfg(tmp_path, "backend b\n    timeout server 5s\n    server s1 198.18.0.1:80\n    server s2 198.18.0.2:80\n")
    out = tmp_path / "b.yaml"
    imported = rt.import_file("haproxy", path, out)
    assert imported.unmodelled == [f"{path}:2: timeout server 5s (not modelled yet: would set pool key 'timeouts_ms')"]
    sc = rt.load(out)
    assert [c.id for c in sc.config.cases] == ["fail-b", "drain-b", "add-b", "drain-timed-b", "ecmp-fail-b",
                                               "ecmp-add-b", "ecmp-rh-fail-b", "ecmp-rh-add-b"]
    with pytest.raises(rt.UserError, match=r":2: timeout server 5s .*--strict"):
        rt.import_file("haproxy", path, tmp_path / "c.yaml", strict=True)
    assert not (tmp_path / "c.yaml").exists()


def test_recorded_show_stat_maps_each_column(tmp_path):
    """tests/data/haproxy-2.6-show-stat.csv is what `_live_show_stat` got from
    Debian's haproxy 2.6.12 (weights 3:2:1, 60 connections; recorded on
    2026-11-23 as root in a namespace): every row the importer writes is the
    server's column, read here with csv on its own."""
    import csv as _csv

    from conftest import DATA

    sample = DATA / "haproxy-2.6-show-stat.csv"
    lines = sample.read_text().splitlines()
    rows = list(_csv.DictReader([lines[0][2:]] + lines[1:]))
    servers = {r["svname"]: r for r in rows if r["type"] == "2"}
    backend = next(r for r in rows if r["svname"] == "BACKEND")
    out = haproxy_stat.import_file(sample, prefix="rec")
    got = {r["id"]: r for r in out.rows}
    assert {r["role"] for r in out.rows} == {"calibrate"}
    for name, rec in servers.items():
        for metric, column, unit, _ in haproxy_stat.METRICS:
            if rec[column] != "":
                row = got[f"rec-b-{name}-{metric}"]
                assert (float(row["value"]), row["unit"]) == (float(rec[column]), unit)
        share = got[f"rec-b-{name}-pick_share"]
        assert float(share["value"]) == pytest.approx(100 * float(rec["lbtot"]) / float(backend["lbtot"]), rel=1e-9)
    assert [servers[f"s{i}"]["lbtot"] for i in range(3)] == ["30", "20", "10"]  # HAProxy's roundrobin, 3:2:1


@needs_haproxy
def test_ipv6_addresses_follow_the_last_colon_rule(tmp_path):
    # manual 4.2 'bind': for IPv6 the port is the number after the last colon
    path = cfg(tmp_path, """
        frontend f
            bind :::8080
            bind [2001:db8::1]:81
            default_backend b
        backend b
            server s 2001:db8::2:80 weight 2
            server t [2001:db8::3]
            server u [2001:db8::4]:8080
        """)
    sc = load_imported(tmp_path, haproxy.import_file(path, env={}))
    bal = sc.config.balancer
    assert bal.services[0].listen == ["[::]:8080", "[2001:db8::1]:81"]
    assert [(s.address, s.port) for s in bal.pools[0].servers] == [("2001:db8::2", 80), ("2001:db8::3", None),
                                                                   ("2001:db8::4", 8080)]
    out = tmp_path / "out.cfg"
    out.write_text(haproxy.export(sc))
    check = subprocess.run([HAPROXY, "-c", "-f", str(out)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr
    again = load_imported(tmp_path, haproxy.import_file(out, env={}), "again.yaml")
    assert again.config.balancer.model_dump() == bal.model_dump()
    bad = cfg(tmp_path, "backend b\n    server t ::1\n", "bad.cfg")
    with pytest.raises(ImportFileError, match=r"bad.cfg:2: .*after the last colon"):
        haproxy.import_file(bad, env={})


def test_draining_under_ipvs_mh_refuses_the_drained_servers_clients(tmp_path):
    # ip_vs_mh.c: a dest quiesced to weight 0 keeps its table slots, and
    # without the mh-fallback flag its keys find no server
    rules = "-A -t 198.18.0.10:80 -s mh\n" + "".join(
        f"-a -t 198.18.0.10:80 -r 198.18.1.{i}:80 -g -w 1\n" for i in range(1, 5))
    out = tmp_path / "lvs.yaml"
    assert run_cli("import", "ipvs", cfg(tmp_path, rules, "rules.txt"), "-o", out).returncode == 0
    res = tmp_path / "res"
    assert run_cli("run", out, "--out", res).returncode == 0
    import json

    cases = {c["case"]: c["metrics"] for c in json.loads((res / "ipvs-rules.json").read_text())["cases"]}
    d = cases["drain-tcp-198.18.0.10-80"]
    assert d["moved_pct"] == 0 and d["refused_pct"] == d["on_drained_pct"] == d["redirected_pct"] > 0
    f = cases["fail-tcp-198.18.0.10-80"]
    assert f["refused_pct"] == 0 and f["moved_pct"] >= f["on_failed_pct"]  # a failed dest leaves the table


@needs_haproxy
@pytest.mark.parametrize("seed", [1, 2])
def test_tokenizer_agrees_with_haproxy_on_random_lines(tmp_path, seed):
    """The real haproxy as the oracle: `.notice WORD` makes haproxy -c print
    the one word it read (or refuse: a second word, an unmatched quote, a
    bad variable). 400 random lines of the characters that matter; the
    tokenizer must read each the same way (an empty word after the first is
    invisible to .notice)."""
    import random
    import re as _re

    rng = random.Random(seed)
    alphabet = ["a", "b", " ", "\t", "'", '"', "\\", "#", "$", "x", "4", "1", "{", "}", "-", "r", "t", "n", "_"]
    lines = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 10))) for _ in range(400)]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    mismatches = []
    for start in range(0, len(lines), 40):  # haproxy stops after 50 errors
        batch = lines[start:start + 40]
        path = tmp_path / f"notice{start}.cfg"
        path.write_text("global\n" + "".join(f".notice {x}\n" for x in batch))
        proc = subprocess.run([HAPROXY, "-c", "-f", str(path)], capture_output=True, env=env, timeout=60)
        seen: dict[int, tuple] = {}
        for chunk in (proc.stdout + proc.stderr).decode("latin-1").split("\n["):
            m = _re.search(r"parsing \[[^:]*:(\d+)\]: '(.*)'\.$", chunk, _re.S)
            if m and "NOTICE" in chunk:
                seen[int(m.group(1))] = ("word", m.group(2))
            elif (m := _re.search(r"parsing \[[^:]*:(\d+)\]", chunk)) and "ALERT" in chunk:
                seen.setdefault(int(m.group(1)), ("refused",))
        for no, text in enumerate(batch, 2):
            try:
                words = haproxy.tokenize(".notice " + text, env={})
                while len(words) > 2 and words[-1] == "":
                    words.pop()
                ours = ("word", words[1] if len(words) > 1 else "") if len(words) <= 2 else ("refused",)
            except haproxy.TokenError:
                ours = ("refused",)
            if seen.get(no) != ours:
                mismatches.append((text, seen.get(no), ours))
    assert not mismatches, mismatches[:5]


# ---------------------------------------------------------------- balance uri / hdr

HASH_CFG = """
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s

frontend web
    bind 198.18.0.100:80
    default_backend cache

backend cache
    balance uri whole len 32 depth 3 path-only
    hash-type consistent djb2
""" + "".join(f"    server c{i} 198.18.0.{i}:80\n" for i in range(1, 9)) + """
backend vhosts
    balance hdr(Host) use_domain_only
    hash-type map-based sdbm avalanche
""" + "".join(f"    server v{i} 198.18.1.{i}:80\n" for i in range(1, 5)) + """
backend plainuri
    balance uri
""" + "".join(f"    server p{i} 198.18.2.{i}:80 weight {i}\n" for i in range(1, 4))


def test_balance_uri_and_hdr_import_with_their_options(tmp_path):
    pools = {p["name"]: p for p in haproxy.import_file(cfg(tmp_path, HASH_CFG), env={}).scenario["balancer"]["pools"]}
    cache, vhosts, plain = pools["cache"], pools["vhosts"], pools["plainuri"]
    # manual 4.2: "hash-type consistent djb2" names a function without the avalanche modifier
    assert (cache["scheduler"], cache["hash_function"], cache["hash_avalanche"]) == ("uri-consistent", "djb2", False)
    assert (cache["uri_whole"], cache["uri_path_only"], cache["uri_len"], cache["uri_depth"]) == (True, True, 32, 3)
    assert (vhosts["scheduler"], vhosts["hdr_name"], vhosts["hdr_domain_only"]) == ("hdr", "Host", True)
    assert (vhosts["hash_function"], vhosts["hash_avalanche"]) == ("sdbm", True)
    assert plain["scheduler"] == "uri" and not {"hash_function", "uri_whole", "uri_len"} & set(plain)


@pytest.mark.parametrize("line, message", [
    ("balance uri len 0", "'len' expects a positive integer"),
    ("balance uri depth", "'depth' expects a positive integer"),
    ("balance uri entire", "only 'len', 'depth', 'path-only' and 'whole'"),
    ("balance hdr()", "a header field name is needed"),
    ("balance hdr(Host) use_domain", "only 'use_domain_only' may follow"),
    ("hash-type consistent md5", "hash-type: map-based|consistent"),
    ("hash-type map-based sdbm avalanch", "hash-type: map-based|consistent"),
])
def test_bad_uri_hdr_and_hash_type_lines_name_the_line(tmp_path, line, message):
    path = cfg(tmp_path, f"backend b\n    {line}\n    server s 198.18.0.1:80\n")
    with pytest.raises(ImportFileError) as err:
        haproxy.import_file(path, env={})
    assert err.value.line == 2 and message in str(err.value)


@needs_haproxy
def test_uri_and_hdr_pools_export_to_what_haproxy_accepts_and_round_trip(tmp_path):
    first = haproxy.import_file(cfg(tmp_path, HASH_CFG), env={})
    (tmp_path / "first.yaml").write_text(first.text(), encoding="utf-8")
    out = tmp_path / "back.cfg"
    proc = run_cli("export", "haproxy", tmp_path / "first.yaml", "-o", out)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert "balance uri whole path-only len 32 depth 3" in text and "hash-type consistent djb2\n" in text
    assert "balance hdr(Host) use_domain_only" in text and "hash-type map-based sdbm avalanche" in text
    check = subprocess.run([HAPROXY, "-c", "-f", str(out)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, text + check.stdout + check.stderr
    again = haproxy.import_file(out, env={})
    assert (load_imported(tmp_path, again, "again.yaml").config.balancer.model_dump()
            == load_imported(tmp_path, first, "first-loaded.yaml").config.balancer.model_dump())


def _haproxy_map(weights: list[int]) -> list[int]:
    """lb_map.c's slot table for these weights, from the golden checker's
    Python re-implementation (core/golden/check_sched.py, not dp_sched.c)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "golden"))
    from check_sched import Pool

    pool = Pool("uri", len(weights), 0, 0, 0, 0, 0, None)
    for i, w in enumerate(weights):
        pool.set_server(i, w, 0, 0, 0, 0, None)
    pool.build(None)
    return [i for i in pool.table]


def test_imported_uri_pools_run_their_remap_cases(tmp_path):
    """The twin runs an imported balance uri pool. Consistent hashing moves
    the failed server's own requests, about 1/8. Map-based hashing (weights
    1, 2, 3) sends hash h to map[h % 6], and after p1 fails to map'[h % 5]
    over weights 2, 3: with uniform hashes a request keeps its server in the
    fraction of residues h mod 30 where the two maps agree (closed form)."""
    out = tmp_path / "s.yaml"
    assert run_cli("import", "haproxy", cfg(tmp_path, HASH_CFG), "-o", out).returncode == 0
    res = tmp_path / "res"
    proc = run_cli("run", out, "--out", res)
    assert proc.returncode == 0, proc.stderr
    import json

    cases = {c["case"]: c["metrics"] for c in json.loads((res / "haproxy-h.json").read_text())["cases"]}
    cache, plain = cases["fail-cache"], cases["fail-plainuri"]
    assert cache["moved_pct"] == pytest.approx(cache["on_failed_pct"], abs=0.01)
    assert cache["moved_pct"] == pytest.approx(12.5, abs=4)
    before = _haproxy_map([1, 2, 3])
    after = [i + 1 for i in _haproxy_map([2, 3])]  # servers 1, 2 of the first pool
    kept = sum(before[h % 6] == after[h % 5] for h in range(30)) / 30
    assert plain["moved_pct"] == pytest.approx(100 * (1 - kept), abs=0.6)  # 100,000 keys: sd 0.16 %
    assert plain["on_failed_pct"] == pytest.approx(100 / 6, abs=0.6)


QUEUE_CFG = """
    defaults
        mode http
        timeout connect 4s
        timeout client 30s
        timeout server 30s
    frontend f
        bind 198.18.0.10:80
        default_backend q
    backend q
        balance leastconn
        timeout queue 1500ms
        option redispatch
        cookie SRV insert indirect nocache
        default-server maxconn 8 maxqueue 3
        server a 198.18.0.1:80 cookie a
        server b 198.18.0.2:80 cookie b maxqueue 0
    backend inherit
        server c 198.18.0.3:80 maxconn 2
        server d 198.18.0.4:80 maxconn 2
"""


@needs_haproxy
def test_maxconn_maxqueue_and_timeout_queue_map_to_the_timed_case_and_back(tmp_path):
    """maxconn, maxqueue (server and default-server) and timeout queue are
    pool and server keys now, not listed; the drain-timed case uses them:
    timeout queue when set, else timeout connect (manual 4.2); the cookie
    makes its clients persistent. Export writes them back, haproxy -c accepts
    the file, and importing it again gives the same balancer and cases."""
    path = cfg(tmp_path, QUEUE_CFG, name="q.cfg")
    first = haproxy.import_file(path, env={})
    assert [n.text for n in first.not_modelled] == ["timeout client 30s", "timeout server 30s"]
    sc = load_imported(tmp_path, first, "first.yaml")
    q, inherit = sc.config.balancer.pools
    assert [(s.maxconn, s.maxqueue) for s in q.servers] == [(8, 3), (8, 0)]
    assert (q.queue_timeout_ms, inherit.queue_timeout_ms, inherit.connect_timeout_ms) == (1500.0, None, 4000.0)
    from routertwin.runners.lb.runner import _timed_keys

    cases = {c.id: c for c in sc.config.cases}
    keys, names = _timed_keys(sc, cases["drain-timed-q"])
    assert (keys["maxconn"], keys["maxqueue"], keys["timeout_queue_ms"]) == ({"0": 8.0, "1": 8.0},
                                                                             {"0": 3.0, "1": 0.0}, 1500)
    assert (keys["persistence"], keys["clients"], keys["redispatch"], names) == ("cookie", 20, True, ["a", "b"])
    keys, _ = _timed_keys(sc, cases["drain-timed-inherit"])
    assert keys["timeout_queue_ms"] == 4000 and "persistence" not in keys  # timeout connect's
    out = tmp_path / "back.cfg"
    assert run_cli("export", "haproxy", tmp_path / "first.yaml", "-o", out).returncode == 0
    text = out.read_text()
    assert "    timeout queue 1500ms\n" in text and " maxconn 8 maxqueue 3" in text
    check = subprocess.run([HAPROXY, "-c", "-f", str(out)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, text + check.stdout + check.stderr
    again = haproxy.import_file(out, env={})
    assert (load_imported(tmp_path, again, "again.yaml").config.balancer.model_dump()
            == sc.config.balancer.model_dump())
    assert again.scenario["cases"] == first.scenario["cases"]
