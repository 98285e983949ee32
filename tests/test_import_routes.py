"""`routertwin import linux|frr|bird|mrt`: what each importer makes of a
table whose routes are known, the scenario it writes runs, and bad input
is refused with its place (`FILE:LINE`, entry or byte offset), exit 2 and
nothing written. Hypothesis drives the parsers with mutated and random
input for a few seconds (never an exception other than the one-line error).

Fixtures: tests/data/linux-ip-route.json is `ip -j route show table all` of
a namespace built with the `ip route` commands listed in EXPECTED_LINUX;
tests/data/bird-show-route-all.txt is `birdc show route all` of BIRD 2.0.12
receiving two eBGP feeds plus the static routes listed in EXPECTED_BIRD.
The FRR dump is written here from FRR's JSON writer (zebra_vty.c,
lib/nexthop.c nexthop_json_helper): no FRR runs on these machines.
"""

from __future__ import annotations

import json
import struct

import pytest
from conftest import DATA, ROOT, one_line, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from routertwin.errors import UserError
from routertwin.fib import read_fib
from routertwin.importers import _mrt_writer, mrt
from routertwin.importers import options as import_options

# The namespace behind linux-ip-route.json (d0: 198.18.0.1/24, d1: 198.18.1.1/24):
#   ip route add 10.0.0.0/8 via 198.18.0.2 metric 5 ; ip route add 10.0.0.0/8 via 198.18.1.2 metric 3
#   ip route add 10.1.0.0/16 nexthop via 198.18.0.2 nexthop via 198.18.1.2 weight 2
#   ip route add blackhole 10.2.0.0/16 ; unreachable 10.3.0.0/16 ; prohibit 10.4.0.0/16
#   ip route add 10.5.0.0/16 dev d1 ; ip route add default via 198.18.0.2
#   ip route add 10.6.0.0/16 via 198.18.0.2 table 100
# Ports: one per interface, in order of first appearance (d0 -> 0, d1 -> 1).
EXPECTED_LINUX = {"0.0.0.0/0": "0", "10.0.0.0/8": "1", "10.1.0.0/16": "0,1", "10.2.0.0/16": "blackhole",
                  "10.3.0.0/16": "unreachable", "10.4.0.0/16": "prohibit", "10.5.0.0/16": "1",
                  "198.18.0.0/24": "0", "198.18.1.0/24": "1"}


def _routes(fib_path) -> dict[str, str]:
    fib = read_fib(fib_path)
    return {p: t.text() for p, t in (fib.route(i) for i in range(len(fib)))}


def _import(tmp_path, kind, src, *extra):
    out = tmp_path / "out" / "imp.yaml"
    return run_cli("--root", ROOT, "import", kind, src, "-o", out, *extra), out


def test_linux_table_imported_route_by_route(tmp_path):
    r, out = _import(tmp_path, "linux", DATA / "linux-ip-route.json")
    assert r.returncode == 0, r.stderr
    assert _routes(out.with_suffix(".fib")) == EXPECTED_LINUX
    # table 100, the local table and IPv6 are listed, each with its entry
    assert "route 0 (10.6.0.0/16): table 100" in r.stderr
    assert "(fe80::/64): IPv6 route" in r.stderr
    assert "ECMP weights 1, 2:" in r.stderr
    text = out.read_text()
    assert "route_file: imp.fib" in text and "#   port 1: via 198.18.1.2 dev d1; dev d1" in text
    # --table 100 imports that table instead
    r, out = _import(tmp_path, "linux", DATA / "linux-ip-route.json", "--table", "100")
    assert r.returncode == 0 and _routes(out.with_suffix(".fib")) == {"10.6.0.0/16": "0"}


def test_imported_scenario_runs_and_forwards_by_the_table(tmp_path):
    """The scenario of the Linux table runs: traffic to each route's first
    address; blackhole, unreachable and prohibit destinations are dropped
    under their own names, the rest forwarded (no route misses: default)."""
    r, out = _import(tmp_path, "linux", DATA / "linux-ip-route.json")
    assert r.returncode == 0, r.stderr
    res = run_cli("run", out, "--out", tmp_path / "res", "--set", "duration_s=0.00001")
    assert res.returncode == 0, res.stderr
    case = json.loads((tmp_path / "res" / "imp.json").read_text())["cases"][0]
    drops = case["counters"]
    # 9 routes over 32 tester ports: the routes' first addresses go to the
    # streams of peers 0..8; 3 of the 9 routes are discards.
    assert drops["blackhole"] > 0 and drops["unreachable"] > 0 and drops["prohibited"] > 0
    assert drops["no_route"] == 0
    # one tester port each, at the same frame size: within the stuffing's
    # difference of rate (each port's octets escape differently)
    assert max(drops[k] for k in ("blackhole", "unreachable", "prohibited")) < 1.05 * min(
        drops[k] for k in ("blackhole", "unreachable", "prohibited"))


# The routes sb added in BIRD (tests/data/bird-show-route-all.txt) and two
# BGP routes: 10.0.229.0/24 has a static best route and a BGP alternative.
EXPECTED_BIRD = {"30.0.0.0/8": "0,1", "30.1.0.0/16": "blackhole", "30.2.0.0/16": "unreachable",
                 "30.3.0.0/16": "prohibit", "30.4.0.0/16": "1", "10.0.229.0/24": "1", "10.0.162.0/24": "0",
                 "10.1.141.0/24": "1"}


def test_bird_table_best_routes(tmp_path):
    r, out = _import(tmp_path, "bird", DATA / "bird-show-route-all.txt", "--port", "dev bb0=0",
                     "--port", "dev bb1=1")
    assert r.returncode == 0, r.stderr
    got = _routes(out.with_suffix(".fib"))
    assert {p: got[p] for p in EXPECTED_BIRD} == EXPECTED_BIRD
    assert len(got) == 404 + 5  # 404 BGP networks, 5 static-only prefixes
    assert "routes were not the best of their prefix" in out.read_text()


def _frr_doc() -> dict:
    def nh(ip, dev, **flags):
        return {"flags": 3, "fib": True, "ip": ip, "afi": "ipv4", "interfaceIndex": 2, "interfaceName": dev,
                "active": True, "weight": 1, **flags}

    def route(prefix, proto, nexthops, installed=True, metric=0):
        return {"prefix": prefix, "prefixLen": int(prefix.split("/")[1]), "protocol": proto, "vrfId": 0,
                "vrfName": "default", "selected": installed, "destSelected": installed, "distance": 20,
                "metric": metric, "installed": installed, "table": 254, "internalStatus": 16,
                "internalFlags": 8, "nexthops": nexthops}

    bh = {"flags": 3, "fib": True, "unreachable": True, "active": True}
    return {
        "0.0.0.0/0": [route("0.0.0.0/0", "static", [nh("198.18.0.2", "eth0")])],
        "10.0.0.0/8": [route("10.0.0.0/8", "bgp", [nh("198.18.0.2", "eth0"), nh("198.18.1.2", "eth1")]),
                       route("10.0.0.0/8", "ospf", [nh("198.18.1.2", "eth1")], installed=False)],
        # a recursive route: the BGP next hop, then its resolver installed in the FIB
        "10.1.0.0/16": [route("10.1.0.0/16", "bgp", [
            {"flags": 5, "ip": "203.0.113.9", "afi": "ipv4", "active": True, "recursive": True},
            nh("198.18.1.2", "eth1", resolver=True)])],
        "10.2.0.0/16": [route("10.2.0.0/16", "static", [{**bh, "blackhole": True}])],
        "10.3.0.0/16": [route("10.3.0.0/16", "static", [{**bh, "reject": True}])],
        "10.4.0.0/16": [route("10.4.0.0/16", "static", [{**bh, "adminProhibited": True}])],
        "198.18.0.0/24": [route("198.18.0.0/24", "connected",
                                [{"flags": 3, "fib": True, "directlyConnected": True, "interfaceIndex": 2,
                                  "interfaceName": "eth0", "active": True}])],
    }


def test_frr_installed_routes_and_fib_next_hops(tmp_path):
    src = tmp_path / "frr.json"
    src.write_text(json.dumps(_frr_doc()))
    r, out = _import(tmp_path, "frr", src)
    assert r.returncode == 0, r.stderr
    assert _routes(out.with_suffix(".fib")) == {
        "0.0.0.0/0": "0", "10.0.0.0/8": "0,1", "10.1.0.0/16": "1", "10.2.0.0/16": "blackhole",
        "10.3.0.0/16": "unreachable", "10.4.0.0/16": "prohibit", "198.18.0.0/24": "0"}
    assert "1 routes were not installed" in out.read_text()


def _dump(path, routes, peers=((0xC6120002, 65001),)):
    _mrt_writer.write_rib(path, list(peers), routes)
    return path


def _hosts(n):
    return [(0x0A000000 + (i << 8), 24, [(0, 0xC6120002 + (i % 3), (65001, 65002))]) for i in range(n)]


def test_mrt_import_maps_next_hops_by_the_declared_ports(tmp_path, write):
    dump = _dump(tmp_path / "rib.mrt", _hosts(30) + [(0, 0, [(0, 0xC6120002, (65001,))])])
    ports = write("ports.yaml", """
        # next hop -> port
        198.18.0.2: 5
        198.18.0.4/31: 7   # 198.18.0.4 (and .5)
        198.18.0.3: 6
    """)
    r, out = _import(tmp_path, "mrt", dump, "--ports", ports)
    assert r.returncode == 0, r.stderr
    got = _routes(out.with_suffix(".fib"))
    assert got["0.0.0.0/0"] == "5"
    assert [got[f"10.0.{i}.0/24"] for i in range(3)] == ["5", "6", "7"]
    assert len(got) == 31


# --- bad input: FILE:LINE (or entry, or byte offset), exit 2, nothing written

def _mrt_records(tmp_path, n=4):
    dump = _dump(tmp_path / "ok.mrt", _hosts(n))
    data = dump.read_bytes()
    offsets, off = [], 0
    while off < len(data):  # record starts, from the common header's length field
        offsets.append(off)
        off += 12 + struct.unpack_from(">I", data, off + 8)[0]
    return data, offsets


def _refused(tmp_path, kind, src, *extra) -> str:
    r, out = _import(tmp_path, kind, src, *extra)
    line = one_line(r)
    assert not (tmp_path / "out").exists()
    return line


def test_truncated_mrt_names_the_offset_of_the_cut_record(tmp_path):
    data, offsets = _mrt_records(tmp_path)
    bad = tmp_path / "cut.mrt"
    bad.write_bytes(data[:-5])
    assert _refused(tmp_path, "mrt", bad) == (f"{bad}: offset {offsets[-1]}: truncated record: its header gives "
                                              f"{len(data) - offsets[-1] - 12} bytes, "
                                              f"{len(data) - 5 - offsets[-1] - 12} remain")
    bad.write_bytes(data[:offsets[-1] + 7])
    assert f"offset {offsets[-1]}: truncated MRT header: 7 of 12 bytes" in _refused(tmp_path, "mrt", bad)


def test_malformed_mrt_records_name_their_offset(tmp_path):
    data, offsets = _mrt_records(tmp_path)
    bad = tmp_path / "bad.mrt"
    b = bytearray(data)
    b[offsets[2] + 12 + 4] = 33  # prefix length of the second RIB record
    bad.write_bytes(bytes(b))
    assert _refused(tmp_path, "mrt", bad).endswith(f"offset {offsets[2]}: malformed record: IPv4 prefix length 33 > 32")
    b = bytearray(data)
    b[offsets[1] + 4:offsets[1] + 6] = struct.pack(">H", 16)  # a BGP4MP record in a RIB dump
    bad.write_bytes(bytes(b))
    assert f"offset {offsets[1]}: MRT record of type 16 (BGP4MP)" in _refused(tmp_path, "mrt", bad)
    b = bytearray(data)
    struct.pack_into(">H", b, offsets[3] + 12 + 10, 9)  # the first entry's peer index; there is one peer
    bad.write_bytes(bytes(b))
    assert f"offset {offsets[3]}: RIB entry 0 names peer 9; the PEER_INDEX_TABLE has 1" in _refused(tmp_path, "mrt", bad)
    bad.write_text("not an MRT file at all\n")
    assert "offset 0:" in _refused(tmp_path, "mrt", bad)


@pytest.mark.parametrize("kind, text, expect", [
    ("linux", '{"routes": []}', "expected the JSON list `ip -j route show` prints, got a dict"),
    ("linux", '[{"dst": "10.0.0.0/33", "gateway": "198.18.0.2"}]',
     "route 0 (10.0.0.0/33): 'dst' is not an IPv4 prefix"),
    ("linux", '[{"dst": "10.0.0.0/8", "gateway": "198.18.0.2"},\n{"dst": "300.1.2.0/24", "dev": "x"}]',
     "route 1 (300.1.2.0/24): 'dst' is not an IPv4 prefix"),
    ("linux", '[{"dst": "10.0.0.0/8"}]', "route 0 (10.0.0.0/8): a unicast route needs a 'gateway' or a 'dev'"),
    ("linux", '[{"dst": "10.0.0.0/8",\n "gateway": "198.18.0.2",,}]', ":2:"),
    ("frr", '[{"dst": "10.0.0.0/8"}]', "expected the JSON object `show ip route json` prints"),
    ("frr", '{"10.0.0.0/40": [{"installed": true, "nexthops": []}]}', "prefix '10.0.0.0/40': not an IPv4 prefix"),
    ("bird", "Table master4:\n10.0.0.0/8  unicast [static1 10:00] * (200)\n\tvia 198.18.0.2 on eth0\n"
             "garbage here\n", ":4: expected a route line"),
    ("bird", "Table master4:\n10.0.0.0/99  unicast [static1 10:00] * (200)\n", ":2: '10.0.0.0/99' is not an IPv4"),
    ("bird", "hello\n", ":1: expected a route line"),
])
def test_bad_route_dumps_are_refused_with_their_place(tmp_path, kind, text, expect):
    src = tmp_path / "dump.txt"
    src.write_text(text)
    line = _refused(tmp_path, kind, src)
    assert line.startswith(str(src)) and expect in line, line


def test_unmapped_next_hop_and_strict_are_errors(tmp_path):
    line = _refused(tmp_path, "linux", DATA / "linux-ip-route.json", "--port", "dev d0=0")
    assert "next hop 'via 198.18.1.2 dev d1' is in no entry of the port mapping" in line
    line = _refused(tmp_path, "linux", DATA / "linux-ip-route.json", "--strict")
    assert "route 0 (10.6.0.0/16): table 100" in line and "(--strict: not modelled)" in line


# --- Hypothesis: the parsers never fail other than with the one-line error

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(routes=st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 32), st.integers(0, 2**32 - 1)),
                       min_size=1, max_size=40, unique_by=lambda r: (r[0], r[1])))
def test_mrt_entries_round_trip_through_an_independent_writer(tmp_path_factory, routes):
    path = tmp_path_factory.mktemp("rt") / "rib.mrt"
    masked = [(p & ((0xFFFFFFFF << (32 - n)) & 0xFFFFFFFF), n, nh) for p, n, nh in routes]
    masked = list({(p, n): (p, n, nh) for p, n, nh in masked}.values())
    _dump(path, [(p, n, [(0, nh, (65001,))]) for p, n, nh in masked])
    import ipaddress

    want = [(f"{ipaddress.IPv4Address(p)}/{n}", "198.18.0.2", str(ipaddress.IPv4Address(nh))) for p, n, nh in masked]
    assert list(mrt.entries(path)) == want


@FUZZ
@given(data=st.data())
def test_mutated_mrt_is_imported_or_refused_in_one_line(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("mut")
    raw = bytearray(_dump(folder / "ok.mrt", _hosts(5)).read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        at = data.draw(st.integers(0, len(raw) - 1))
        if op == "flip":
            raw[at] = data.draw(st.integers(0, 255))
        elif op == "cut":
            del raw[at:at + data.draw(st.integers(1, 16))]
        else:
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=8))
        if not raw:
            raw = bytearray(b"\0")
    path = folder / "m.mrt"
    path.write_bytes(bytes(raw))
    try:
        list(mrt.entries(path))
    except UserError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(path))


json_values = st.recursive(st.none() | st.booleans() | st.integers(-5, 2**33) | st.text(max_size=12),
                           lambda c: st.lists(c, max_size=4) | st.dictionaries(st.sampled_from(
                               ["dst", "gateway", "dev", "type", "table", "metric", "nexthops", "ip", "installed",
                                "selected", "fib", "interfaceName", "unreachable", "10.0.0.0/8", "weight"]), c,
                               max_size=5), max_leaves=12)


@FUZZ
@given(doc=json_values, kind=st.sampled_from(["linux", "frr"]))
def test_random_json_is_imported_or_refused_in_one_line(tmp_path_factory, doc, kind):
    from routertwin import importers

    folder = tmp_path_factory.mktemp("js")
    path = folder / "d.json"
    path.write_text(json.dumps(doc))
    try:
        importers.convert(kind, path, import_options(kind, out=folder / "o.yaml", root=ROOT))
    except UserError as exc:
        assert "\n" not in str(exc)


@FUZZ
@given(lines=st.lists(st.sampled_from([
    "Table master4:", "Table master6:", "10.0.0.0/8  unicast [s 1] * (200)", "  unicast [b 1] (100)",
    "\tvia 198.18.0.2 on eth0", "\tvia 198.18.0.3 on eth1 weight 1", "\tdev eth2", "\tType: static univ",
    "10.1.0.0/16 blackhole [s 1] * (200)", "2001:db8::/32 unicast [s 1] * (200)", "x", "\tvia 1.2.3 on e",
    "10.2.0.0/16 prohibited [s 1] * (200)", "0.0.0.0/0 unreachable [s 1] * (200)"]), max_size=12))
def test_random_bird_text_is_imported_or_refused_in_one_line(tmp_path_factory, lines):
    from routertwin import importers

    folder = tmp_path_factory.mktemp("bird")
    path = folder / "b.txt"
    path.write_text("\n".join(lines) + "\n")
    try:
        importers.convert("bird", path, import_options("bird", out=folder / "o.yaml", root=ROOT))
    except UserError as exc:
        assert "\n" not in str(exc)
