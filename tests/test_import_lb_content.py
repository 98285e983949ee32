"""HAProxy content switching (acl + use_backend) imported into the twin and
routed by the C core's URL rule matching (docs/import-lb.md section 2a).

Independent truth: HAProxy's configuration manual (sections 4.2 and 7) for
the golden mappings, hand counts of which rule each URL of a mix matches for
the split, and the real haproxy -c for what it accepts."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import yaml

from conftest import one_line, run_cli
from routertwin.importers import haproxy
from routertwin.scenario_loader import load_scenario

SAMPLE = "/usr/share/doc/haproxy/examples/content-sw-sample.cfg"
HAPROXY = shutil.which("haproxy")
BACKENDS = """
backend b1
    mode http
    server s1 198.18.0.1:80
backend b2
    mode http
    server s2 198.18.0.2:80
backend b3
    mode http
    server s3 198.18.0.3:80
"""


def cfg(tmp_path, text: str, name: str = "h.cfg"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n") + BACKENDS, encoding="utf-8")
    return path


def imported(tmp_path, text: str):
    r = haproxy.import_file(cfg(tmp_path, text), env={})
    return r, r.scenario["balancer"]["services"][0]


def split(tmp_path, text: str, requests: list[tuple[str, str, int]], name: str = "s.yaml"):
    """The split case's metrics for a URL mix on the imported service."""
    r, svc = imported(tmp_path, text)
    r.scenario["cases"] = [{"id": "mix", "method": "split", "service": svc["name"],
                            "split": {"requests": [{"url": u, "host": h, "count": n} for u, h, n in requests]}}]
    path = tmp_path / name
    path.write_text(yaml.safe_dump(r.scenario, sort_keys=False), encoding="utf-8")
    from routertwin.runners.lb.runner import run

    class Progress:
        def set_total(self, n): pass

        def advance(self, status=""): pass

    (res,) = run(load_scenario(path), Progress())
    return res.metrics


def test_first_match_order_and_default(tmp_path):
    """Manual 4.2: rules in declaration order, the first that matches wins,
    default_backend otherwise. /static/x.css matches both rules: b1, the first."""
    text = """
    frontend f
        mode http
        bind 198.18.0.100:80
        acl is_static path_beg /static
        acl is_css path_end .css
        use_backend b1 if is_static
        use_backend b2 if is_css
        default_backend b3
    """
    r, svc = imported(tmp_path, text)
    assert svc["acls"] == [{"name": "is_static", "fetch": "path", "match": "beg", "icase": False,
                            "patterns": ["/static"]},
                           {"name": "is_css", "fetch": "path", "match": "end", "icase": False, "patterns": [".css"]}]
    assert svc["rules"] == [{"pool": "b1", "if": "is_static"}, {"pool": "b2", "if": "is_css"}]
    assert svc["pool"] == "b3"
    assert not [n for n in r.not_modelled if n.text.startswith(("acl", "use_backend"))]
    # hand count: /static/x.css -> b1 (rule 1 first), /a.css -> b2, /static -> b1, /index.html -> b3,
    # /a.css?v=/static -> b2 (path stops at '?'), /STATIC/a -> b3 (case-sensitive)
    m = split(tmp_path, text, [("/static/x.css", "", 3), ("/a.css", "", 2), ("/static", "", 1),
                               ("/index.html", "", 4), ("/a.css?v=/static", "", 1), ("/STATIC/a", "", 1)])
    assert m["requests"] == 12
    assert m["to_b1_pct"] == pytest.approx(100 * 4 / 12)
    assert m["to_b2_pct"] == pytest.approx(100 * 3 / 12)
    assert m["to_b3_pct"] == pytest.approx(100 * 5 / 12)
    assert (m["rule_1_pct"], m["rule_2_pct"], m["default_pct"]) == pytest.approx((100 * 4 / 12, 100 * 3 / 12,
                                                                                  100 * 5 / 12))


def test_acl_lines_of_one_name_are_ored_and_so_are_patterns(tmp_path):
    """Manual 7.1: patterns of one acl are ORed; acl lines of the same name are ORed."""
    text = """
    frontend f
        mode http
        bind 198.18.0.100:80
        acl media path_beg /img /video
        acl media hdr_beg(host) -i media.
        use_backend b1 if media
        default_backend b2
    """
    _, svc = imported(tmp_path, text)
    assert [a["name"] for a in svc["acls"]] == ["media", "media"]
    assert svc["acls"][1] == {"name": "media", "fetch": "host", "match": "beg", "icase": True,
                              "patterns": ["media."]}
    m = split(tmp_path, text, [("/img/a.png", "www.example.com", 1), ("/video/b", "", 1),
                               ("/x", "MEDIA.example.com", 1), ("/x", "www.example.com", 1)])
    assert (m["to_b1_pct"], m["to_b2_pct"]) == (75.0, 25.0)


def test_and_or_not_and_unless(tmp_path):
    """Manual 7.2: terms ANDed, `||` (or `or`) ORs, `!` negates a term, `unless` the whole."""
    text = """
    frontend f
        mode http
        bind 198.18.0.100:80
        acl api path_beg /api/
        acl v2 path_sub /v2/
        acl admin hdr(host) admin.example.com
        use_backend b1 if api !v2 || admin
        use_backend b2 unless api or admin
        default_backend b3
    """
    _, svc = imported(tmp_path, text)
    assert svc["rules"] == [{"pool": "b1", "if": "api !v2 || admin"}, {"pool": "b2", "unless": "api or admin"}]
    # /api/v1/x: api and not v2 -> b1; /api/v2/x on www: rule 1 false, rule 2: api -> not unless -> b3;
    # /x on admin.example.com: admin -> b1; /x on www -> rule 2 holds (neither) -> b2;
    # /api/v2/x on ADMIN.example.com: hdr(host) exact, case-sensitive: not admin -> b3
    m = split(tmp_path, text, [("/api/v1/x", "www.example.com", 1), ("/api/v2/x", "www.example.com", 1),
                               ("/x", "admin.example.com", 1), ("/x", "www.example.com", 1),
                               ("/api/v2/x", "ADMIN.example.com", 1)])
    assert (m["to_b1_pct"], m["to_b2_pct"], m["to_b3_pct"]) == (40.0, 20.0, 40.0)
    assert m["rule_1_pct"] == 40.0 and m["rule_2_pct"] == 20.0 and m["default_pct"] == 40.0


def test_anonymous_acls_and_case_insensitive(tmp_path):
    text = """
    frontend f
        mode http
        bind 198.18.0.100:80
        use_backend b1 if { hdr_end(host) -i .CDN.example } !{ path -m beg /private }
        use_backend b2 if { path /exact }
        default_backend b3
    """
    r, svc = imported(tmp_path, text)
    assert svc["rules"] == [{"pool": "b1", "if": "@1 !@1.2"}, {"pool": "b2", "if": "@2"}]
    assert svc["acls"] == [
        {"name": "@1", "fetch": "host", "match": "end", "icase": True, "patterns": [".CDN.example"]},
        {"name": "@1.2", "fetch": "path", "match": "beg", "icase": False, "patterns": ["/private"]},
        {"name": "@2", "fetch": "path", "match": "str", "icase": False, "patterns": ["/exact"]}]
    m = split(tmp_path, text, [("/a", "x.cdn.EXAMPLE", 1), ("/private/a", "x.cdn.example", 1),
                               ("/exact", "", 1), ("/exact/", "", 1)])
    assert (m["to_b1_pct"], m["to_b2_pct"], m["to_b3_pct"]) == (25.0, 25.0, 50.0)


def test_an_unmodelled_fetch_makes_the_routing_not_modelled(tmp_path):
    """A rule depending on `src` cannot be routed by the twin: the service
    says so, every acl and use_backend line is listed, and a split case on
    it is refused at load."""
    text = """
    frontend f
        mode http
        bind 198.18.0.100:80
        acl static path_beg /static
        acl internal src 10.0.0.0/8
        use_backend b1 if static
        use_backend b2 if internal
        default_backend b3
    """
    r, svc = imported(tmp_path, text)
    assert "rules" not in svc and "acls" not in svc
    assert svc["rules_not_modelled"].endswith(":7: use_backend b2 if internal: acl 'internal' (line 5): fetch "
                                              "'src' is not modelled (the twin matches path, url, base and "
                                              "hdr(host), each exact or with _beg, _end, _sub)")
    assert {n.line for n in r.not_modelled} >= {4, 5, 6, 7}
    path = tmp_path / "s.yaml"
    r.scenario["cases"] = [{"id": "mix", "method": "split", "service": "f",
                            "split": {"requests": [{"url": "/"}]}}]
    path.write_text(yaml.safe_dump(r.scenario, sort_keys=False))
    proc = run_cli("run", path)
    assert proc.returncode == 2 and "its routing is not modelled" in proc.stderr, proc.stderr


def test_no_default_backend_and_tcp_mode(tmp_path):
    """No rule matches and no default_backend: HAProxy answers 503, the
    split's no_pool_pct. HTTP fetches in a tcp-mode frontend: not modelled."""
    text = """
    frontend f
        mode http
        bind 198.18.0.100:80
        use_backend b1 if { path_beg /a }
    """
    m = split(tmp_path, text, [("/a", "", 1), ("/b", "", 3)])
    assert (m["to_b1_pct"], m["no_pool_pct"], m["default_pct"]) == (25.0, 75.0, 75.0)
    _, svc = imported(tmp_path, text.replace("mode http", "mode tcp"))
    assert "tcp-mode" in svc["rules_not_modelled"]


def test_unused_unmodelled_acl_is_only_listed(tmp_path):
    text = """
    frontend f
        mode http
        bind 198.18.0.100:80
        acl local src 127.0.0.1
        acl api path_beg /api
        use_backend b1 if api
        default_backend b2
    """
    r, svc = imported(tmp_path, text)
    assert [a["name"] for a in svc["acls"]] == ["api"] and svc["rules"] == [{"pool": "b1", "if": "api"}]
    assert [n.line for n in r.not_modelled if n.text.startswith("acl")] == [4]


def test_an_empty_word_ends_the_arguments_as_in_haproxy(tmp_path):
    """haproxy 2.6.12 -c accepts `use_backend b1 if a '' nosuchacl` and
    `acl a path_beg /x '' frob(`: its argument lists end at an empty word."""
    r, svc = imported(tmp_path, """
    frontend f
        mode http
        bind 198.18.0.100:80
        acl a path_beg /x '' frob(
        use_backend b1 if a '' nosuchacl
        use_backend b2 '' if nosuchacl
        default_backend b3
    """)
    assert svc["acls"] == [{"name": "a", "fetch": "path", "match": "beg", "icase": False, "patterns": ["/x"]}]
    assert svc["rules"] == [{"pool": "b1", "if": "a"}, {"pool": "b2"}]
    # so an anonymous ACL with an empty pattern loses its '}' (haproxy: "missing closing '}'")
    path = cfg(tmp_path, """
    frontend f
        mode http
        bind 198.18.0.100:80
        use_backend b1 if { path_beg "" }
        default_backend b3
    """, "e.cfg")
    err = one_line(run_cli("import", "haproxy", path, "-o", tmp_path / "e.yaml"), tmp_path / "e.yaml")
    assert err == f"{path}:4: missing closing '}}' in condition"


@pytest.mark.parametrize("pattern, check", [("'" + "a" * 256 + "'", "a pattern over 255 bytes"),
                                            (r"a\x00b", "a pattern with a NUL byte")])
def test_patterns_the_core_cannot_store_make_the_routing_not_modelled(tmp_path, pattern, check):
    """dp_urlrule stores 1..255 bytes a pattern (C strings): a longer one or
    one with a NUL is listed, and the rule's service is not routed. (An
    empty word ends HAProxy's arguments: no empty pattern reaches it.)"""
    r, svc = imported(tmp_path, f"""
    frontend f
        mode http
        bind 198.18.0.100:80
        use_backend b1 if {{ path_beg {pattern} }}
        default_backend b2
    """)
    assert f"its anonymous ACL: {check} is not modelled" in svc["rules_not_modelled"] and "rules" not in svc


def without_intercepts(tmp_path):
    """content-sw-sample.cfg with its monitor-uri and stats uri lines made comments (line numbers kept)."""
    lines = open(SAMPLE).read().splitlines()
    assert lines[26].split()[0] == "monitor-uri" and lines[30].split()[:2] == ["stats", "uri"]
    lines[26], lines[30] = "#" + lines[26], "#" + lines[30]
    path = tmp_path / "sw.cfg"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_debian_content_switching_sample(tmp_path):
    """Debian's content-sw-sample.cfg: its two use_backend rules route to
    `static`, everything else to `dynamic`."""
    if not os.path.exists(SAMPLE):
        pytest.skip("Debian's haproxy examples are not installed")
    r = haproxy.import_file(SAMPLE, env={})
    (svc,) = r.scenario["balancer"]["services"]
    # its monitor-uri (line 27) and stats uri (line 31) answer their URIs before use_backend
    assert svc["rules_not_modelled"] == f"{SAMPLE}:27: monitor-uri /monitoruri: answers requests for its URI " \
                                        "before use_backend (not modelled)"
    r = haproxy.import_file(without_intercepts(tmp_path), env={})
    (svc,) = r.scenario["balancer"]["services"]
    assert svc["pool"] == "dynamic"
    assert svc["rules"] == [{"pool": "static", "if": "@1"}, {"pool": "static", "if": "@2"}]
    assert svc["acls"] == [{"name": "@1", "fetch": "host", "match": "beg", "icase": True, "patterns": ["img"]},
                           {"name": "@2", "fetch": "path", "match": "beg", "icase": False,
                            "patterns": ["/img", "/css"]}]
    listed = {n.line for n in r.not_modelled}
    lines = open(SAMPLE).read().splitlines()
    for no, line in enumerate(lines, 1):
        if line.split()[:1] == ["use_backend"]:
            assert no not in listed


def test_sample_split_and_its_cost_counted_by_hand(tmp_path):
    """docs/import-lb.md 2a's mix on content-sw-sample's rules. Hand count
    (dp_urlrule_eval's documented comparisons, short-circuited):
    /img/logo.png on www.example.com: hdr_beg img vs 'w' 1 byte, miss;
      path_beg /img 4 bytes, hit -> static by rule 2 (2 tests, 5 bytes);
    /index.php on IMG.example.com: -i 'IMG' 3 bytes, hit -> static by rule 1 (1 test, 3 bytes);
    /login.php?next=/css on www: 1 byte; /img: '/', 'l'!='i' 2 bytes; /css: 2 bytes
      (path stops at '?') -> dynamic by default (3 tests, 5 bytes)."""
    if not os.path.exists(SAMPLE):
        pytest.skip("Debian's haproxy examples are not installed")
    r = haproxy.import_file(without_intercepts(tmp_path), env={})
    r.scenario["scenario"] = "sw"  # run_cases reads out/<file stem>.json
    r.scenario["cases"] = [{"id": "split-public", "method": "split", "service": "public", "split": {"requests": [
        {"url": "/img/logo.png", "host": "www.example.com", "count": 30},
        {"url": "/index.php", "host": "IMG.example.com", "count": 10},
        {"url": "/login.php?next=/css", "host": "www.example.com", "count": 60}]}}]
    scenario = tmp_path / "sw.yaml"
    scenario.write_text(yaml.safe_dump(r.scenario, sort_keys=False))
    from conftest import run_cases

    (case,) = run_cases(tmp_path, scenario)
    assert case["metrics"] == pytest.approx({
        "requests": 100.0, "to_static_pct": 40.0, "to_dynamic_pct": 60.0, "rule_1_pct": 10.0, "rule_2_pct": 30.0,
        "default_pct": 60.0, "terms_per_request": (30 * 2 + 10 * 1 + 60 * 3) / 100,
        "bytes_compared_per_request": (30 * 5 + 10 * 3 + 60 * 5) / 100})


def test_acl_lines_of_every_debian_example_are_carried_or_listed():
    """An acl line maps to a service's acls or is listed by its line (a
    backend's ACLs serve rules the twin does not model)."""
    import glob

    for path in sorted(glob.glob("/usr/share/doc/haproxy/examples/*.cfg")):
        r = haproxy.import_file(path, env={})
        listed = {n.line for n in r.not_modelled}
        carried = [a for s in r.scenario["balancer"]["services"] for a in s.get("acls", [])
                   if not a["name"].startswith("@")]
        for no, line in enumerate(open(path).read().splitlines(), 1):
            words = haproxy.tokenize(line, env={})
            if words[:1] == ["acl"] and no not in listed:
                assert any(a["name"] == words[1] and a["patterns"] == words[-len(a["patterns"]):]
                           for a in carried), f"{path}:{no}: {line}"


@pytest.mark.skipif(HAPROXY is None, reason="Debian's haproxy is not installed")
def test_rules_export_to_what_haproxy_accepts_and_round_trip(tmp_path):
    text = """
    frontend f
        mode http
        bind 198.18.0.100:80
        acl media path_beg /img /video
        acl media hdr_beg(host) -i media.
        acl odd path_sub "a b" 'it''s' -x
        use_backend b1 if media !{ path_end .php } || odd
        use_backend b2 unless { hdr(host) -i -- -dash.example }
        use_backend b3
        default_backend b2
    """
    path = cfg(tmp_path, text)
    first = tmp_path / "first.yaml"
    assert run_cli("import", "haproxy", path, "-o", first).returncode == 0
    out = tmp_path / "back.cfg"
    proc = run_cli("export", "haproxy", first, "-o", out)
    assert proc.returncode == 0, proc.stderr
    check = subprocess.run([HAPROXY, "-c", "-f", str(out)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    again = tmp_path / "again.yaml"
    assert run_cli("import", "haproxy", out, "-o", again).returncode == 0
    a, b = load_scenario(first).config.balancer, load_scenario(again).config.balancer
    assert a.model_dump() == b.model_dump()
    assert [x.patterns for x in a.services[0].acls][2] == ["a b", "its", "-x"]


BAD = [
    ("frontend f\n    mode http\n    bind :80\n    use_backend nowhere if TRUE\n", 4, "use_backend 'nowhere'"),
    ("frontend f\n    mode http\n    bind :80\n    use_backend b1 if nothere\n", 4, "no such ACL: 'nothere'"),
    ("frontend f\n    mode http\n    bind :80\n    use_backend b1 if a\n    acl a path /\n", 4,
     "no such ACL: 'a'"),
    ("frontend f\n    mode http\n    bind :80\n    use_backend b1 if { path_beg /a\n", 4,
     "missing closing '}'"),
    ("frontend f\n    mode http\n    bind :80\n    use_backend b1 when TRUE\n", 4,
     "only 'if' and 'unless' are allowed"),
    ("frontend f\n    mode http\n    bind :80\n    acl 1@a path /\n", 4, "acl name '1@a'"),
    ("frontend f\n    mode http\n    bind :80\n    acl a\n", 4, "an ACL needs a fetch"),
]


@pytest.mark.parametrize("text, line, message", BAD, ids=[b[2][:30] for b in BAD])
def test_bad_rules_name_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "h.cfg"
    path.write_text(text + BACKENDS)
    out = tmp_path / "out.yaml"
    err = one_line(run_cli("import", "haproxy", path, "-o", out), out)
    assert err.startswith(f"{path}:{line}: ") and message in err, err


EDITS = [
    ("if: is_static", "if: is_static ||", None),  # a trailing || is HAProxy's too: no error
    ("if: is_static", "if: nope", "no ACL named 'nope'"),
    ("if: is_static", "if: '{'", "'{' is not an ACL name"),
    ("pool: b1", "pool: b9", "no pool named 'b9'"),
    ("match: beg", "match: regex", "match"),
    ("fetch: path", "fetch: src", "fetch"),
    ("patterns:", "pattern:", "pattern"),
    ("[/static]", "['']", "at least 1 character"),
]


@pytest.mark.parametrize("old, new, message", EDITS, ids=[e[1] for e in EDITS])
def test_edited_rules_errors_name_the_line(tmp_path, old, new, message):
    r, _ = imported(tmp_path, """
    frontend f
        mode http
        bind 198.18.0.100:80
        acl is_static path_beg /static
        use_backend b1 if is_static
        default_backend b3
    """)
    text = r.text()
    assert old in text
    path = tmp_path / "s.yaml"
    path.write_text(text.replace(old, new, 1))
    proc = run_cli("run", path)
    if message is None:
        assert proc.returncode == 0, proc.stderr
        return
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if new in t)
    assert proc.returncode == 2 and f"{path}:{line}: " in proc.stderr and message in proc.stderr, proc.stderr


# ---------------------------------------------------------------- against the real HAProxy

LIVE = """
global
    stats socket {sock} mode 600 level admin
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend f
    bind 198.18.0.1:8080
    acl media path_beg /img /video
    acl media hdr_beg(host) -i media.
    acl api path_beg /api/
    acl v2 path_sub /v2/
    acl admin hdr(host) admin.example.com
    acl php path_end -i .php
    acl exact path /exact
    use_backend b1 if api !v2 || admin
    use_backend b2 if { url_sub -i q=1 } || { base_beg media.example.com/img } || { url_end =/img }
    use_backend b4 if { base /exact } { url /exact }
    use_backend b2 if media !{ hdr_end(host) -i .cdn.example }
    use_backend b3 unless php or exact or { path -m sub x }
    use_backend b4 if !!v2 { hdr_sub(host) example }
    acl api path -m beg /API/
    default_backend b5
"""
LIVE_BACKENDS = "".join(f"backend b{i}\n    http-request return status 200 content-type text/plain string b{i}\n"
                        for i in range(1, 6))


def live_routes(job: str) -> list[str]:
    """Runs inside a namespace: the real haproxy on the job's configuration,
    each request (url, host[, port: 8080]) sent over TCP; the backend that
    answered each one."""
    import json
    import socket
    import time
    from pathlib import Path

    spec = json.loads(Path(job).read_text())
    proc = subprocess.Popen([HAPROXY or "haproxy", "-db", "-f", spec["cfg"]], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        for port in sorted({(r[2:] or [8080])[0] for r in spec["requests"]}):
            while True:
                try:
                    socket.create_connection(("198.18.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
        out = []
        for url, host, *port in spec["requests"]:
            head = f"GET {url} HTTP/1.1\r\nHost: {host}\r\n" if host else f"GET {url} HTTP/1.0\r\n"
            with socket.create_connection(("198.18.0.1", (port or [8080])[0]), timeout=5) as s:
                s.sendall((head + "Connection: close\r\n\r\n").encode())
                data = b""
                while chunk := s.recv(65536):
                    data += chunk
            out.append(data.decode().rsplit("\r\n\r\n", 1)[1])
        return out
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.skipif(HAPROXY is None or os.geteuid() != 0, reason="needs Debian's haproxy and root (a namespace)")
def test_twin_routes_every_request_as_the_real_haproxy(tmp_path):
    """300 requests drawn from paths and Host values that hit and miss each
    ACL (case, prefix, suffix, query string, no Host header; `api` has a
    second line after the rules that use it): the backend
    the real haproxy 2.6 answers from, request by request, is the pool the
    twin's rules (the C core's matching) pick, and the split case's shares
    are those counts."""
    import json
    import random

    from conftest import in_namespace
    from routertwin.runners.lb.content import Switch

    cfg_path = tmp_path / "live.cfg"
    cfg_path.write_text(LIVE.replace("{sock}", str(tmp_path / "s.sock")) + LIVE_BACKENDS)
    rng = random.Random(7)
    paths = ["/", "/img/a.png", "/img?Q=1", "/a?x=/img", "/IMG/a.png", "/video", "/api/v1/x", "/api/v2/y", "/API/v1", "/a/v2/b", "/x.php",
             "/X.PHP", "/exact", "/exact/", "/exact?q=1", "/index.html?x=/img", "/box", "/api/v2/x.php", "/v2/"]
    hosts = ["", "www.example.com", "media.example.com", "MEDIA.cdn.example", "media.x.CDN.EXAMPLE",
             "admin.example.com", "ADMIN.example.com", "admin.example.com:8080", "example", "other.org"]
    requests = [(rng.choice(paths), rng.choice(hosts)) for _ in range(300)]
    job = tmp_path / "job.json"
    job.write_text(json.dumps({"cfg": str(cfg_path), "requests": requests}))
    real = json.loads(in_namespace("ub", "test_import_lb_content", f"json.dumps(t.live_routes({str(job)!r}))"))

    r = haproxy.import_file(cfg_path, env={})
    (svc,) = r.scenario["balancer"]["services"]
    assert "rules_not_modelled" not in svc
    scenario = tmp_path / "s.yaml"
    r.scenario["cases"] = [{"id": "mix", "method": "split", "service": "f",
                            "split": {"requests": [{"url": u, "host": h} for u, h in requests]}}]
    scenario.write_text(yaml.safe_dump(r.scenario, sort_keys=False))
    loaded = load_scenario(scenario)
    s = loaded.config.balancer.services[0]
    switch = Switch(s.acls, s.rules, s.pool)
    twin = [switch.route(u, h).pool for u, h in requests]
    wrong = [(req, a, b) for req, a, b in zip(requests, real, twin) if a != b]
    assert not wrong, wrong[:10]
    assert len(set(real)) == 5  # every backend was reached
    from routertwin.runners.lb.runner import run

    class Progress:
        def set_total(self, n): pass

        def advance(self, status=""): pass

    (res,) = run(loaded, Progress())
    for b in ("b1", "b2", "b3", "b4", "b5"):
        assert res.metrics[f"to_{b}_pct"] == pytest.approx(100 * real.count(b) / 300)


EDGE = """
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend true_first
    bind 198.18.0.1:8081
    use_backend b1 if TRUE
    acl TRUE path_beg /nomatch
    default_backend b2
frontend false_first
    bind 198.18.0.1:8082
    use_backend b1 if FALSE
    acl FALSE path_beg /x
    default_backend b2
frontend hosts
    bind 198.18.0.1:8083
    acl h hdr(host) a.com
    acl org hdr_end(host) -i .org
    use_backend b3 if { base_beg a.com/ }
    use_backend b4 if { base /p }
    use_backend b1 if h
    use_backend b5 if org
    default_backend b2
"""


@pytest.mark.skipif(HAPROXY is None or os.geteuid() != 0, reason="needs Debian's haproxy and root (a namespace)")
def test_twin_routes_predefined_acls_and_host_lists_as_the_real_haproxy(tmp_path):
    """The real haproxy 2.6.12: `use_backend b1 if TRUE` before `acl TRUE
    path_beg /nomatch` sends every request to b1 (the acl line is ORed onto
    the predefined TRUE), which the acl line alone would not: the import
    says the routing is not modelled. FALSE first then `acl FALSE path_beg
    /x` is the acl line: carried, and routed as haproxy does. Host lists:
    request by request, the twin's pool is haproxy's backend."""
    import json

    from conftest import in_namespace
    from routertwin.runners.lb.balancer import Service
    from routertwin.runners.lb.content import Switch

    cfg_path = tmp_path / "edge.cfg"
    cfg_path.write_text(EDGE + LIVE_BACKENDS)
    paths = ["/p", "/a", "/x", "/nomatch"]
    hosts = ["", "a.com", "b.com,a.com", "a.com,b.com", "b.com, a.com", ",a.com", " , a.com", "a.com,",
             "b.com,,a.com", "x.ORG,b.com", "b.com,\tx.org ", "a.com:80", "b.com"]
    requests = [(u, h, port) for port in (8081, 8082, 8083) for u in paths for h in hosts]
    job = tmp_path / "job.json"
    job.write_text(json.dumps({"cfg": str(cfg_path), "requests": requests}))
    real = json.loads(in_namespace("ue", "test_import_lb_content", f"json.dumps(t.live_routes({str(job)!r}))"))
    answers = dict(zip(requests, real))

    services = {s["name"]: s for s in haproxy.import_file(cfg_path, env={}).scenario["balancer"]["services"]}
    assert services["true_first"]["rules_not_modelled"].startswith(
        f"{cfg_path}:9: use_backend b1 if TRUE: acl 'TRUE' (line 10): ")
    assert {answers[(u, h, 8081)] for u in paths for h in hosts} == {"b1"}  # even /a: TRUE held
    assert answers[("/a", "", 8081)] == "b1"
    for name, port in (("false_first", 8082), ("hosts", 8083)):
        s = Service.model_validate(services[name])
        switch = Switch(s.acls, s.rules, s.pool)
        wrong = [(u, h, answers[(u, h, port)], switch.route(u, h).pool) for u in paths for h in hosts
                 if switch.route(u, h).pool != answers[(u, h, port)]]
        assert not wrong, (name, wrong)
    assert {answers[(u, h, 8083)] for u in paths for h in hosts} == {"b1", "b2", "b3", "b4", "b5"}
    # the comma cases the whole-string comparison got wrong, as haproxy answered them
    assert (answers[("/a", "b.com,a.com", 8083)], answers[("/a", "a.com,b.com", 8083)],
            answers[("/p", ",a.com", 8083)], answers[("/a", "b.com,\tx.org ", 8083)]) == ("b1", "b3", "b4", "b5")


@pytest.mark.parametrize("rule, message", [
    ("use_backend b2 if { path_beg /p/ }", "h.cfg:4: service 'f': the lab's request GET /p/0 (Host: lab) goes to "
                                           "pool 'b2' by rule 1"),
    ("use_backend b2 if { src 10.0.0.0/8 }", "routes by content the twin does not model"),
    ("use_backend b2 if { path_beg /img }", None),
    ("monitor-uri /p/0", "h.cfg:4: service 'f': the lab's request GET /p/0 is answered by HAProxy's monitor-uri "
                         "/p/0"),
    ("stats uri /p/", "h.cfg:4: service 'f': the lab's request GET /p/0 is answered by HAProxy's stats /p/"),
    ("monitor-uri /p", None),  # the whole target must equal it
    ("stats enable", None),  # its default URI, /haproxy?stats
])
def test_lab_refuses_a_service_whose_rules_divert_its_requests(tmp_path, rule, message):
    """`routertwin lab haproxy` measures the service's default pool: a rule
    that sends the lab's requests elsewhere, one the twin cannot evaluate,
    or a monitor-uri or stats page that answers them, is refused before
    anything runs (the split case refuses any monitor-uri or stats line:
    its URL mix is the user's)."""
    from routertwin.lab.haproxy import load_config
    from routertwin.lab.system import LabError

    path = tmp_path / "h.cfg"
    path.write_text(textwrap.dedent(f"""
    frontend f
        mode http
        bind 198.18.0.100:80
        {rule}
        default_backend b1
    """).lstrip() + BACKENDS)
    if message is None:
        assert load_config(path).pool["name"] == "b1"
        return
    with pytest.raises(LabError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(path)


WORDS = ["a", "b", "!a", "!!b", "||", "or", "OR", "{", "}", "path_beg", "hdr_beg(host)", "path", "src", "-i", "-m",
         "beg", "--", "/x", "X", "TRUE", "FALSE", "METH_GET", "!", "if", "unless", "b1", "%[var(txn.b)]", "''",
         "url_beg", "base", "url_dir"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["acl a", "acl b", "use_backend b1", "use_backend b2 if", "use_backend b3 unless"]),
                min_size=1, max_size=4),
       st.lists(st.lists(st.sampled_from(WORDS), max_size=7), min_size=4, max_size=4))
def test_any_rules_import_and_route_or_name_a_line(tmp_path_factory, heads, tails):
    """acl and use_backend lines made of HAProxy's condition words: the
    import names a line, or its scenario loads and routes a request
    (or says the routing is not modelled)."""
    from routertwin.importers._lbcommon import ImportFileError
    from routertwin.runners.lb.content import Switch
    from routertwin.runners.lb.balancer import Service

    body = "".join(f"    {h} {' '.join(t)}\n" for h, t in zip(heads, tails))
    path = tmp_path_factory.mktemp("h") / "h.cfg"
    path.write_text("frontend f\n    mode http\n    bind 198.18.0.100:80\n" + body + "    default_backend b3\n"
                    + BACKENDS)
    try:
        r = haproxy.import_file(path, env={})
    except ImportFileError as exc:
        assert 4 <= exc.line <= 3 + len(heads), str(exc)
        return
    svc = Service.model_validate(r.scenario["balancer"]["services"][0])
    if svc.rules_not_modelled is None:
        switch = Switch(svc.acls, svc.rules, svc.pool)
        for url, host in (("/x", "X"), ("/x?b=/x", ""), ("/X/x", "a,x ")):
            assert switch.route(url, host).pool == reference_pool(svc, url, host), (body, url, host)


def reference_pool(svc, url: str, host: str) -> str | None:
    """The pool by Python's own string tests (manual 7.1.3 and 7.2, no C
    core): `path` up to '?', Host's comma-separated values trimmed, `base`
    the first value and the path; first rule whose condition holds."""
    path = url.split("?")[0]
    values = [v.strip() for v in host.split(",")] if host else []
    fetched = {"path": [path], "url": [url], "host": values, "base": [(values[0] if values else "") + path]}
    tests = {"str": str.__eq__, "beg": str.startswith, "end": str.endswith, "sub": lambda s, p: p in s}

    def holds(name: str) -> bool:
        entries = [a for a in svc.acls if a.name == name]
        if not entries:
            return name == "TRUE"
        return any(tests[a.match](v.lower() if a.icase else v, p.lower() if a.icase else p)
                   for a in entries for v in fetched[a.fetch] for p in a.patterns)

    for r in svc.rules:
        text = r.if_ if r.if_ is not None else r.unless
        if text is None:
            return r.pool
        groups, neg = [[]], False
        for w in text.split():
            neg ^= (len(w) - len(w.lstrip("!"))) % 2 == 1
            w = w.lstrip("!")
            if w in ("||", "or", "OR", "Or", "oR"):
                groups.append([])
                neg = False
            elif w:
                groups[-1].append(holds(w) != neg)
                neg = False
        if any(all(g) for g in groups if g) != (r.unless is not None):
            return r.pool
    return svc.pool


@pytest.mark.skipif(HAPROXY is None, reason="Debian's haproxy is not installed")
@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["acl a", "acl b", "use_backend b1", "use_backend b2 if", "use_backend b3 unless"]),
                min_size=1, max_size=4),
       st.lists(st.lists(st.sampled_from(WORDS), max_size=7), min_size=4, max_size=4))
def test_importer_refuses_only_what_haproxy_refuses(tmp_path_factory, heads, tails):
    """The real haproxy -c on the same lines: what it accepts imports; a
    line the importer refuses is one haproxy raises an alert for."""
    from routertwin.importers._lbcommon import ImportFileError

    body = "".join(f"    {h} {' '.join(t)}\n" for h, t in zip(heads, tails))
    path = tmp_path_factory.mktemp("h") / "h.cfg"
    path.write_text("defaults\n    timeout client 1s\n    timeout server 1s\n    timeout connect 1s\n"
                    "frontend f\n    mode http\n    bind 198.18.0.100:80\n" + body + "    default_backend b3\n"
                    + BACKENDS)
    check = subprocess.run([HAPROXY, "-c", "-f", str(path)], capture_output=True, text=True, timeout=60)
    try:
        haproxy.import_file(path, env={})
    except ImportFileError as exc:
        assert check.returncode != 0 and f"[{path}:{exc.line}]" in check.stdout + check.stderr, \
            (str(exc), check.stdout + check.stderr)
        return


@pytest.mark.parametrize("case, message", [
    ("{id: m, method: split, service: f}", "a split case needs 'service'"),
    ("{id: m, method: split, service: nope, split: {requests: [{url: /}]}}", "no service named 'nope'"),
    ("{id: m, method: split, service: f, split: {requests: [{url: x}]}}", "url"),
    ("{id: m, method: split, service: f, split: {requests: [{url: /, hots: a}]}}", "hots"),
    ("{id: m, method: remap, pool: b1, service: f}", "'service' belongs to split cases"),
])
def test_bad_split_cases_name_the_line(tmp_path, case, message):
    r, _ = imported(tmp_path, """
    frontend f
        mode http
        bind 198.18.0.100:80
        use_backend b1 if { path_beg /a }
        default_backend b2
    """)
    r.scenario.pop("cases")
    path = tmp_path / "s.yaml"
    text = r.text() + f"cases:\n- {case}\n"
    path.write_text(text)
    proc = run_cli("run", path)
    line = len(text.splitlines())
    assert proc.returncode == 2 and f"{path}:{line}: " in proc.stderr and message in proc.stderr, proc.stderr


@pytest.mark.parametrize("before, name, used", [
    ("use_backend b1 if TRUE", "TRUE", 4),  # the reviewer's case: haproxy sends everything to b1
    ("use_backend b1 if !METH_GET", "METH_GET", 4),
    ("http-request set-header X-A 1 if METH_GET", "METH_GET", 4),  # any condition makes the proxy's ACL
])
def test_a_predefined_acl_used_before_an_acl_line_of_its_name_is_not_modelled(tmp_path, before, name, used):
    """acl.c: a condition naming a predefined ACL no `acl` line has defined
    yet adds that predefined ACL to the proxy; a later `acl NAME ...` line
    is ORed onto it (haproxy 2.6.12: test_twin_routes_predefined_acls_and_
    host_lists_as_the_real_haproxy). The twin would take the acl lines alone:
    the service says so with the lines."""
    r, svc = imported(tmp_path, f"""
    frontend f
        mode http
        bind 198.18.0.100:80
        {before}
        acl {name} path_beg /nomatch
        use_backend b2 if {name}
        default_backend b3
    """)
    rule = 4 if before.startswith("use_backend") else 6
    words = before if rule == 4 else f"use_backend b2 if {name}"
    assert svc["rules_not_modelled"] == (f"{tmp_path / 'h.cfg'}:{rule}: {words}: acl '{name}' (line 5): line {used} "
                                         f"used HAProxy's predefined '{name}' before it, so HAProxy ORs the acl "
                                         "lines onto the predefined ACL")
    assert "rules" not in svc and "acls" not in svc


def test_an_acl_line_before_any_use_of_a_predefined_name_replaces_it_and_false_is_equivalent(tmp_path):
    """An `acl TRUE ...` line before the rules is the proxy's TRUE (the
    predefined one is never made); FALSE ORed with acl lines is the acl
    lines, so FALSE used first is carried."""
    config = """
    frontend f
        mode http
        bind 198.18.0.100:80
        acl TRUE path_beg /t
        use_backend b1 if TRUE
        use_backend b2 if FALSE
        acl FALSE path_beg /f
        use_backend b2 if FALSE
        default_backend b3
    """
    _, svc = imported(tmp_path, config)
    assert [a["name"] for a in svc["acls"]] == ["TRUE", "FALSE"]
    m = split(tmp_path, config, [("/t", "", 1), ("/f", "", 1), ("/x", "", 2)])
    # /t -> b1 (rule 1), /f -> b2 (rule 2: FALSE is /f already there, as in haproxy), /x -> b3
    assert (m["to_b1_pct"], m["to_b2_pct"], m["to_b3_pct"], m["rule_2_pct"]) == (25.0, 25.0, 50.0, 25.0)


@pytest.mark.parametrize("line, reason", [
    ("http-request set-path /api%[path]", "rewrites the path or URL before use_backend"),
    ("http-request set-uri /x", "rewrites the path or URL before use_backend"),
    ("http-request set-header host a.example", "rewrites the Host header before use_backend"),
    ("http-request deny if { path_beg /old }", "can answer or end the request before use_backend"),
    ("http-request redirect prefix /new if { path_beg /old }", "can answer or end the request before use_backend"),
    ("http-request return status 200", "can answer or end the request before use_backend"),
    ("redirect prefix /new if { path_beg /old }", "answers with a redirect before use_backend"),
    ("monitor-uri /health", "answers requests for its URI before use_backend"),
    ("stats uri /stats", "turns on the statistics page"),
    ("stats enable", "turns on the statistics page"),
])
def test_lines_acting_before_use_backend_make_the_routing_not_modelled(tmp_path, line, reason):
    """HAProxy runs http-request rules, redirect, monitor-uri and the stats
    page before use_backend (http_process_req_common): a line that can
    change the path or Host the rules match, or answer the request, comes
    first in rules_not_modelled, with its line."""
    r, svc = imported(tmp_path, f"""
    frontend f
        mode http
        bind 198.18.0.100:80
        acl api path_beg /api
        {line}
        use_backend b1 if api
        default_backend b2
    """)
    assert svc["rules_not_modelled"].startswith(f"{tmp_path / 'h.cfg'}:5: {line}: {reason}")
    assert "rules" not in svc
    assert {n.line for n in r.not_modelled} >= {4, 5, 6}
    # a header other than Host, and set-var, leave what the rules see as it was
    _, svc = imported(tmp_path, """
    frontend f
        mode http
        bind 198.18.0.100:80
        acl api path_beg /api
        http-request set-header X-Host a.example
        http-request set-var(txn.a) str(b)
        use_backend b1 if api
        default_backend b2
    """)
    assert svc["rules"] == [{"pool": "b1", "if": "api"}]


def test_the_reviewers_rewrite_file_is_not_routed(tmp_path):
    """set-path then a redirect, then use_backend on the rewritten path."""
    text = textwrap.dedent("""
    frontend f
        mode http
        bind 198.18.0.1:8080
        http-request set-path /api%[path]
        http-request redirect prefix /new if { path_beg /old }
        use_backend b1 if { path_beg /api }
        default_backend b2
    """).lstrip()
    path = tmp_path / "rw.cfg"
    path.write_text(text + BACKENDS)
    (svc,) = haproxy.import_file(path, env={}).scenario["balancer"]["services"]
    assert svc["rules_not_modelled"].startswith(f"{path}:4: http-request set-path /api%[path]: ")


def test_use_backend_in_a_backend_is_listed_as_haproxy_ignores_it(tmp_path):
    """haproxy 2.6.12 -c: "'use_backend' ignored because backend 'b1' has
    no frontend capability" (a warning), yet a bad condition is an error."""
    text = """
    frontend f
        mode http
        bind 198.18.0.100:80
        default_backend b1
    backend b1
        mode http
        use_backend b2 if TRUE
        server s1 198.18.0.1:80
    backend b2
        mode http
        server s2 198.18.0.2:80
    """
    path = tmp_path / "h.cfg"
    path.write_text(textwrap.dedent(text).lstrip())
    r = haproxy.import_file(path, env={})
    assert [(n.line, n.reason) for n in r.not_modelled if n.line == 7] == [
        (7, "ignored by HAProxy: a backend has no frontend capability")]
    assert r.scenario["balancer"]["services"][0]["pool"] == "b1"
    path.write_text(textwrap.dedent(text.replace("if TRUE", "if nope")).lstrip())
    with pytest.raises(haproxy.ImportFileError, match="no such ACL: 'nope'") as exc:
        haproxy.import_file(path, env={})
    assert exc.value.line == 7
    if HAPROXY is not None:
        for body, ok in ((text, True), (text.replace("if TRUE", "if nope"), False)):
            path.write_text("defaults\n    timeout client 1s\n    timeout server 1s\n    timeout connect 1s\n"
                            + textwrap.dedent(body).lstrip())
            check = subprocess.run([HAPROXY, "-c", "-f", str(path)], capture_output=True, text=True, timeout=60)
            assert (check.returncode == 0) == ok, check.stdout + check.stderr
            assert "no frontend capability" in check.stdout + check.stderr


def test_tcp_mode_rules_on_true_and_false_are_carried(tmp_path):
    """TRUE and FALSE fetch nothing: a tcp-mode frontend's rules on them
    route as HAProxy does; an acl of HTTP fetches there is only listed."""
    r, svc = imported(tmp_path, """
    frontend f
        mode tcp
        bind 198.18.0.100:80
        acl api path_beg /api
        use_backend b1 if FALSE
        use_backend b2 if !FALSE TRUE
        default_backend b3
    """)
    assert svc["rules"] == [{"pool": "b1", "if": "FALSE"}, {"pool": "b2", "if": "!FALSE TRUE"}]
    assert "acls" not in svc and [n.line for n in r.not_modelled if n.text.startswith("acl")] == [4]
    from routertwin.runners.lb.balancer import Service
    from routertwin.runners.lb.content import Switch

    s = Service.model_validate(svc)
    assert Switch(s.acls, s.rules, s.pool).route("/api", "").pool == "b2"


@pytest.mark.parametrize("old, new, at, message", [
    ("name: '@1.2'", "name: '@1'", "name: '@1'\n", "anonymous ACL '@1' appears twice"),
    ("if: '@1 || @1.2'", "if: '@1'", "name: '@1.2'", "anonymous ACL '@1.2' is used by no rule"),
    ("    mode: http\n    listen", "    mode: tcp\n    listen", "acls:", "acls fetch HTTP fields: a tcp service"),
    ("    mode: http\n    listen", "    mode: udp\n    listen", "acls:", "acls fetch HTTP fields: a udp service"),
])
def test_anonymous_acls_are_each_one_used_entry(tmp_path, old, new, at, message):
    """export writes an `@N` entry back inline where a rule uses it: a
    second entry of the name, or one no rule uses, would be lost, so the
    schema refuses both at their line; tcp and udp services match no HTTP
    fetch."""
    r, _ = imported(tmp_path, """
    frontend f
        mode http
        bind 198.18.0.100:80
        use_backend b1 if { path_beg /a } || { path_beg /b }
        default_backend b2
    """)
    text = r.text()
    assert old in text
    text = text.replace(old, new, 1)
    path = tmp_path / "s.yaml"
    path.write_text(text)
    lines = text.splitlines()
    line = [i for i, t in enumerate(lines, 1) if at.strip() in t][-1 if at.endswith("\n") else 0]
    proc = run_cli("run", path)
    assert proc.returncode == 2 and f"{path}:{line}: " in proc.stderr and message in proc.stderr, proc.stderr


def test_host_lists_are_hdr_values_and_base_takes_the_first(tmp_path):
    """hdr(host) fetches each comma-separated value of Host (blanks
    trimmed, empty ones too) and an ACL holds when one matches; base is the
    first value then the path (haproxy 2.6.12:
    test_twin_routes_predefined_acls_and_host_lists_as_the_real_haproxy).
    Hand count, rule 1 base_beg a.com/, rule 2 hdr(host) a.com:
    /p b.com,a.com: base b.com/p miss; hdr b.com miss, a.com hit -> b1 (3 tests)
    /p a.com,b.com: base a.com/p hit -> b2 (1 test)
    /p ,a.com: base /p (first value empty) miss; hdr '' miss, a.com hit -> b1 (3 tests)
    /p x.com: base miss, hdr miss -> b3 (2 tests)
    /p, no Host: base /p miss; hdr(host) finds no value, so no test -> b3 (1 test)"""
    m = split(tmp_path, """
    frontend f
        mode http
        bind 198.18.0.100:80
        acl h hdr(host) a.com
        use_backend b2 if { base_beg a.com/ }
        use_backend b1 if h
        default_backend b3
    """, [("/p", "b.com,a.com", 1), ("/p", "a.com,b.com", 1), ("/p", ",a.com", 1), ("/p", "x.com", 1), ("/p", "", 1)])
    assert (m["to_b1_pct"], m["to_b2_pct"], m["to_b3_pct"]) == (40.0, 20.0, 40.0)
    assert m["terms_per_request"] == pytest.approx((3 + 1 + 3 + 2 + 1) / 5)


def test_core_terms_refuse_a_pattern_with_a_nul_byte():
    """dp_urlrule_add reads a C string: the binding refuses a NUL instead of
    storing the pattern cut short; a subject goes by length, so a NUL in it
    is a byte like any other."""
    from routertwin import _core

    with pytest.raises(ValueError, match="term 1: the pattern has a NUL byte"):
        _core.UrlTerms([("beg", "/a", False), ("beg", "a\x00b", False)])
    t = _core.UrlTerms([("beg", "a", False), ("str", "ab", False)])
    assert t.eval(0, "a\x00b")[0] and not t.eval(1, "a\x00b")[0] and t.eval(1, "ab")[0]
