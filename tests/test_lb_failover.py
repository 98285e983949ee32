"""The lb kind's failover method end to end (routertwin run -> C++
RunLbFailover -> dp_health): the detection time against the closed form
worked in model/lb/CMakeLists.txt (checks every 2 s, fastinter 500 ms,
fall 3, death 7.3 s after a check at 6.166 s: DOWN 1866 ms later), failed
requests with and without option redispatch, and bad keys as one line."""

from __future__ import annotations

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
