"""The lb kind's failover method end to end (routertwin run -> C++
RunLbFailover -> dp_health): the detection time against the closed form
worked in model/lb/CMakeLists.txt (checks every 2 s, fastinter 500 ms,
fall 3, death 7.3 s after a check at 6.166 s: DOWN 1866 ms later), failed
requests with and without option redispatch, and bad keys as one line."""

from __future__ import annotations

import pytest

from conftest import adx_scenario as scenario, line_of, one_line, run_adx as run, run_cli

FAILOVER = ("{servers: 3, inter_ms: 2000, fastinter_ms: 500, fall: 3, kill_server: 1, kill_at_s: 7.3, "
            "request_rate: 300, duration_s: 14, retries: 3, redispatch: %s}")


def test_failover_detection_and_redispatch(tmp_path):
    cases = run(tmp_path, """
        cases:
          - {id: off, method: failover, failover: %s}
          - {id: on, method: failover, failover: %s}
    """ % (FAILOVER % "false", FAILOVER % "true"))
    off, on = cases["off"]["metrics"], cases["on"]["metrics"]
    assert off["detection_ms"] == 1866.0 == on["detection_ms"]
    assert off["window_min_ms"] <= off["detection_ms"] < off["window_max_ms"]
    # every third request (300/s) reaches the dead server for 1.866 s
    assert abs(off["to_dead_server"] - 1.866 * 100) <= 1
    assert off["failed"] == off["to_dead_server"] and on["failed"] == 0
    assert on["redispatched"] == on["to_dead_server"]
    # over time: a request refused by the dead server is retried on it after the turn-around,
    # min(timeout connect, 1 s), three times: it fails 3 s after it arrived. The 186-187 failures
    # fill [7.3 + 3, 9.166 + 3) s at 100/s, nothing outside (60 bins of 14 s / 60)
    tl = cases["off"]["distributions"]["loss_timeline"]
    row, width = tl["ports"][0], tl["bin_s"]
    assert sum(row) == off["failed"] and list(tl["reasons"]) == ["failed"]
    hit = [b for b, n in enumerate(row) if n]
    assert hit[0] == int(10.3 / width) and hit[-1] == int(12.166 / width)
    for b in hit[1:-1]:
        assert abs(row[b] - 100 * width) <= 1
    assert off["loss_bins"] == len(hit) and on["loss_bins"] == 0
    # served at the first attempt (off) or redispatched at once (on): no served request waited
    assert off["served_delay_max_ms"] == 0 == on["served_delay_max_ms"]


def test_unknown_failover_key_is_one_line(tmp_path):
    path, text = scenario(tmp_path, """
        cases:
          - {id: f, method: failover, failover: {fal: 3}}
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"{path}:{line_of(text, 'fal: 3')}: key 'cases[0].failover" in line and "unknown key" in line


def test_bad_failover_value_names_its_key(tmp_path):
    path, text = scenario(tmp_path, """
        cases:
          - id: f
            method: failover
            failover:
              kill_mode: explode
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"{path}:{line_of(text, 'kill_mode: explode')}:" in line and "refuse or silent" in line


def test_failover_keys_belong_to_failover_cases(tmp_path):
    path, text = scenario(tmp_path, """
        cases:
          - {id: x, rate: 1.0e5, failover: {fall: 3}}
    """)
    line = one_line(run_cli("run", path, "--out", tmp_path / "out"), tmp_path / "out")
    assert f"{path}:{line_of(text, 'failover: {fall')}: key 'cases[0].failover'" in line


def test_the_failover_what_if_against_its_closed_forms():
    """scenarios/whatif/lb-health-failover.yaml: the figures its comment
    derives (detection 1866 ms; silent death + 3 x 2000 ms of timeouts =
    7866 ms; RFC 5798 takeover 3609.375 ms after the last advertisement at
    10 s, i.e. 3354.375 ms after the death at 10.255 s, losing requests
    1026..1360 at 100/s; the dead server's 10 of 30 sticky clients move)."""
    import routertwin as rt
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scenarios" / "whatif" / "lb-health-failover.yaml"
    df = rt.run(rt.load(path)).to_dataframe().set_index("case")
    m = lambda case, k: df.loc[case, f"metric.{k}"]
    assert m("no-redispatch", "detection_ms") == 1866 and m("redispatch", "failed") == 0
    assert m("no-redispatch", "failed") == m("no-redispatch", "to_dead_server") > 0
    assert m("silent-death", "detection_ms") == 1866 + 3 * 2000
    assert m("vrrp-active-backup", "failover_ms") == 3354.375
    assert m("vrrp-active-backup", "lost_in_failover") == 335
    assert m("vrrp-active-backup", "detection_ms") == -1
    assert m("sticky-src", "sticky_clients_moved") == 10


# ---- RunLbFailover against closed forms and hand-worked request outcomes ----

def _failover(**keys):
    from routertwin import _core

    base = {"servers": 3, "kill_at_s": 7.3, "request_rate": 300, "duration_s": 14}
    return _core.run_lb_failover({**base, **keys})


def test_the_dying_servers_own_check_timers_set_its_detection_window():
    """Server 1 has its own timers (inter 1000, fastinter 250, fall 2; the
    others 3000/3000/3): the closed form (manual 5.2; a refused check fails
    at once) puts its DOWN mark in [(fall - 1) x fastinter, that + inter] =
    [250, 1250] ms after the death, wherever the death falls in its check
    cycle; server 0's timers would give [6000, 9000]."""
    timers = dict(inter_ms="3000,1000,3000", fastinter_ms="3000,250,3000", fall="3,2,3", kill_server=1)
    seen = []
    for j in range(8):  # deaths spread over one inter of the dying server
        r = _failover(**timers, kill_at_s=7.3 + j * 0.125, duration_s=14 + j * 0.125)
        assert (r["window_min_ms"], r["window_max_ms"]) == (250, 1250)
        assert 250 <= r["detection_ms"] <= 1250
        seen.append(r["detection_ms"])
    # the spread of the detections is the dying server's inter, not the others' 3000 ms
    assert 1000 * 6 / 8 <= max(seen) - min(seen) < 1000


def test_weights_give_the_dead_server_its_share():
    """Round robin 3:1:1, server 0 (weight 3) refuses, retries 0: until its
    DOWN mark 3 requests in 5 meet it and fail; with equal weights 1 in 3."""
    common = dict(inter_ms=2000, fastinter_ms=500, fall=3, kill_server=0, retries=0)
    heavy = _failover(**common, weights="3,1,1")
    even = _failover(**common, weights=1)
    assert heavy["detection_ms"] == even["detection_ms"] > 0
    seconds = heavy["detection_ms"] / 1000
    assert abs(heavy["to_dead_server"] - seconds * 300 * 3 / 5) <= 2
    assert abs(even["to_dead_server"] - seconds * 300 / 3) <= 1
    assert heavy["failed"] == heavy["to_dead_server"] and even["failed"] == even["to_dead_server"]


def test_timeout_check_gives_a_checks_connection_min_of_connect_and_inter():
    """A silent death (host gone): a check fails when its connection times
    out. With "timeout check" set, HAProxy gives that connection
    min(timeout connect, inter) = min(300, 2000) = 300 ms, so the window is
    fall x 300 + (fall - 1) x fastinter = 1900 ms, up to + inter; without
    it, inter: 3 x 2000 + 2 x 500 = 7000 ms."""
    common = dict(inter_ms=2000, fastinter_ms=500, fall=3, kill_server=1, kill_mode="silent",
                  connect_timeout_ms=300, duration_s=25)
    set_ = _failover(**common, check_timeout_ms=1000)
    unset = _failover(**common)
    assert (set_["window_min_ms"], set_["window_max_ms"]) == (1900, 3900)
    assert (unset["window_min_ms"], unset["window_max_ms"]) == (7000, 9000)
    assert 1900 <= set_["detection_ms"] <= 3900 and 7000 <= unset["detection_ms"] <= 9000


def test_a_silent_death_costs_the_configured_connect_timeout_per_attempt():
    """balance source (map-based, every third client on server 1), retries
    2, option redispatch, server 1 silent. A request to it at t times out
    at t + C and is retried at once (no turn-around after a timeout) on the
    same server (a hash: no early redispatch); the second failure, at
    t + 2C, is the last retry: redispatched, it reaches a live server only
    if the checks have taken server 1 out by then (the map then lacks it;
    before, map_get_server_hash ignores the server to avoid). So the
    requests of [kill, DOWN - 2C) fail: (detection - 2C) x 100/s."""
    for c in (300, 1000):
        r = _failover(scheduler="source", inter_ms=2000, fastinter_ms=500, fall=3, kill_server=1,
                      kill_mode="silent", connect_timeout_ms=c, retries=2, redispatch=True, duration_s=25)
        d = r["detection_ms"]
        assert abs(r["to_dead_server"] - d / 1000 * 100) <= 1
        assert abs(r["failed"] - (d - 2 * c) / 1000 * 100) <= 1, (c, r)


def test_redispatch_on_a_hash_waits_for_the_last_retry_and_the_map_keeps_the_dead_server():
    """Refused connections, retries 2, option redispatch. balance source
    map-based: the first retry stays on the server after the 1 s
    turn-around (a hash: no early redispatch); the second failure, 1 s
    after the first attempt, is the last retry and redispatched, but the
    map still holds server 1 until its DOWN mark (map_get_server_hash
    ignores the server to avoid): the requests of [kill, DOWN - 1 s) fail.
    source-consistent: the redispatch walks the ring past it, none fail.
    roundrobin: the first retry is redispatched at once, none fail."""
    common = dict(inter_ms=2000, fastinter_ms=500, fall=3, kill_server=1, retries=2, redispatch=True)
    m = _failover(scheduler="source", **common)
    d = m["detection_ms"]
    assert abs(m["failed"] - (d - 1000) / 1000 * 100) <= 1, m
    ring = _failover(scheduler="source-consistent", **common)
    assert ring["to_dead_server"] > 0 and ring["failed"] == 0
    rr = _failover(scheduler="roundrobin", **common)
    assert rr["failed"] == 0 and rr["redispatched"] == rr["to_dead_server"] > 0
    # without option redispatch every attempt goes back to the dead server
    off = _failover(scheduler="roundrobin", **dict(common, redispatch=False))
    assert off["failed"] == off["to_dead_server"] > 0 and off["redispatched"] == 0


def test_per_server_lists_must_match_the_pool():
    from routertwin import _core

    with pytest.raises(ValueError, match="key 'weights': has 2 values for 3 servers"):
        _core.run_lb_failover({"servers": 3, "weights": "3,1"})
    with pytest.raises(ValueError, match="key 'inter_ms'"):
        _core.run_lb_failover({"servers": 3, "inter_ms": "1000,fast,1000"})


def test_sched_pool_redispatch_replays_haproxy():
    """SchedPool.pick(avoid=...) on what Debian's haproxy 2.6.12 dealt with
    s1 refusing, retries 1 + option redispatch (core/tests/haproxy_record.py):
    roundrobin 1:1:1 "0 2 0 2 0 2 0 2 0"; balance source map-based: s1's
    clients fail ("2 0 -1 ..."), the map slot stands."""
    from routertwin import _core

    def run(algo, n, src=None):
        pool = _core.SchedPool(algo, [1, 1, 1], [False] * 3, 1, {})
        out = []
        for i in range(n):
            ip = src + i if src else 0
            s = pool.pick(ip)
            if s == 1:
                s = pool.pick(ip, avoid=1)
                s = -1 if s == 1 else s
            out.append(s)
        return " ".join(map(str, out))

    assert run("roundrobin", 9) == "0 2 0 2 0 2 0 2 0"
    assert run("source", 6, src=0xC6120101) == "2 0 -1 2 0 -1"
    with pytest.raises(ValueError, match="avoid"):
        _core.SchedPool("roundrobin", [1, 1], [False] * 2, 1, {}).pick(0, avoid=5)


def test_a_server_without_check_is_never_taken_out():
    """HAProxy never probes a server without `check` ("no check" in its
    stats): it stays up, so round robin keeps giving it every third request
    after its death (requests 2190..4199 at 300/s from 7.3 s to 14 s: 670)
    and each fails after its retries on it. With option redispatch (round
    robin, three servers up) the first retry goes elsewhere at once and
    takes the next server's turn, so every other request meets the dead one
    (the order Debian's haproxy was recorded dealing, "0 2 0 2":
    test_sched_pool_redispatch_replays_haproxy): 2010 / 2, none fails."""
    common = dict(checked="0,1,1", kill_server=0, inter_ms=2000, fastinter_ms=500, fall=3, retries=3)
    off = _failover(**common)
    assert off["detection_ms"] == -1 and (off["window_min_ms"], off["window_max_ms"]) == (-1, -1)
    assert off["to_dead_server"] == 670 and off["failed"] == 670 and off["served"] == 4200 - 670
    on = _failover(**common, redispatch=True)
    assert on["failed"] == 0 and on["redispatched"] == on["to_dead_server"] == 2010 // 2
    # the same pool with every server checked takes it out in its window
    checked = _failover(**dict(common, checked=1))
    assert 1000 <= checked["detection_ms"] <= 3000 and checked["failed"] == checked["to_dead_server"] < 670


def _first_redispatch(retries: int, after: int) -> int | None:
    """The first retry (1..retries) option redispatch <after> names, from
    configuration.txt's words: P > 0 every P-th retry; N < 0 the N-th retry
    before the last, i.e. retry retries + 1 + N (-1: the last); 0 none."""
    if after > 0:
        return after if after <= retries else None
    if after < 0:
        return retries + 1 + after
    return None


@pytest.mark.parametrize("retries, after", [(3, 1), (3, 2), (3, 3), (3, 4), (3, -1), (3, -2), (3, -3), (3, 0),
                                            (4, -2), (4, 2), (2, -1)])
def test_option_redispatch_interval_picks_the_retry_haproxy_does(retries, after):
    """A consistent source hash (never redispatched early), server 1 refusing
    and left up by slow checks (inter = fastinter = 20 s): a request of its
    clients is retried on it after each turn-around of min(timeout connect,
    1 s) = 300 ms until the retry the interval names, which goes past it on
    the ring at once. Hand computation: served after (first - 1) x 300 ms,
    none failed; with no such retry every request to it fails."""
    r = _failover(scheduler="source-consistent", kill_server=1, inter_ms=20000, fastinter_ms=20000, fall=3,
                  retries=retries, redispatch=True, redispatch_after=after, connect_timeout_ms=300)
    assert r["detection_ms"] == -1 and r["to_dead_server"] > 0
    first = _first_redispatch(retries, after)
    if first is None:
        assert r["failed"] == r["to_dead_server"] and r["redispatched"] == 0 and r["max_delay_ms"] == 0
    else:
        assert r["failed"] == 0 and r["redispatched"] == r["to_dead_server"]
        assert abs(r["max_delay_ms"] - (first - 1) * 300) < 0.01, r["max_delay_ms"]


def test_option_redispatch_interval_edges():
    """Silent: no turn-around after a connect timeout, so redispatch 2 serves
    after 2 x 300 ms of timeouts. "option redispatch 0" keeps PR_O_REDISP:
    a round robin with several servers up still redispatches the first retry
    at once (stream_choose_redispatch's third clause). -(retries + 2) makes
    HAProxy's divisor -1: every retry (a C remainder by -1 is 0).
    -(retries + 1) would be a remainder by 0: refused."""
    common = dict(kill_server=1, inter_ms=20000, fastinter_ms=20000, fall=3, retries=3, redispatch=True,
                  connect_timeout_ms=300)
    silent = _failover(scheduler="source-consistent", kill_mode="silent", redispatch_after=2, **common)
    assert silent["failed"] == 0 and abs(silent["max_delay_ms"] - 600) < 0.01
    rr0 = _failover(scheduler="roundrobin", redispatch_after=0, **common)
    assert rr0["failed"] == 0 and rr0["redispatched"] == rr0["to_dead_server"] > 0 and rr0["max_delay_ms"] == 0
    every = _failover(scheduler="source-consistent", redispatch_after=-5, **common)
    assert every["failed"] == 0 and every["max_delay_ms"] == 0
    from routertwin import _core

    with pytest.raises(ValueError, match="key 'redispatch_after': -4 with retries 3 names no retry"):
        _core.run_lb_failover({"servers": 3, "retries": 3, "redispatch": True, "redispatch_after": -4})


def test_client_addresses_start_at_client_ip_base():
    """One client at 198.18.2.1 on a map-based source hash: every request goes
    to the server SchedPool (the scheduler HAProxy's recorded orders check)
    gives that address, so killing it leaves every request after the death
    meeting it until its DOWN mark, and killing another leaves none; the
    default base (198.18.0.0) picks by its own address."""
    from routertwin import _core

    base = (198 << 24) | (18 << 16) | (2 << 8) | 1
    home = _core.SchedPool("source", [1, 1, 1], [False] * 3, 1, {}).pick(base)
    common = dict(scheduler="source", clients=1, client_ip_base=base, inter_ms=2000, fastinter_ms=500, fall=3)
    hit = _failover(kill_server=home, **common)
    assert hit["detection_ms"] > 0 and abs(hit["to_dead_server"] - hit["detection_ms"] / 1000 * 300) <= 1
    miss = _failover(kill_server=(home + 1) % 3, **common)
    assert miss["to_dead_server"] == 0 and miss["failed"] == 0
    default_home = _core.SchedPool("source", [1, 1, 1], [False] * 3, 1, {}).pick(0xC6120000)
    dflt = _failover(kill_server=default_home, **dict(common, client_ip_base=0xC6120000))
    assert dflt["to_dead_server"] > 0
