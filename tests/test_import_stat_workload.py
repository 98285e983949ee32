"""`routertwin import haproxy CONFIG --stat STAT.csv`: the drain-timed
case's workload (arrival rate, mean connection lifetime) from HAProxy's
`show stat`, written as calibrate records with the cells they came from.

Independent truth, live (root; Debian's haproxy 2.6 in a network namespace
this test creates, 198.18.0.1/16 on its loopback): a seeded Poisson client
opens RATE = 300 connections/s through `mode tcp`, `balance roundrobin`
over 2 servers, each connection held for an exponential lifetime of mean
MEAN_MS = 400 ms, for 29 s; `show stat` is read from the stats socket K = 4
times (at 22, 24, 26 and 28 s, when each server has taken over 3,000
sessions: HAProxy's 1024-session averages have forgotten the start), each
snapshot imported. The criterion, written before the first measurement
(4 standard deviations, so the 14 checks together fail by chance about
once in 1,000 runs):
  - rate (sum of the servers' `rate`): HAProxy's one-second freq_ctr is
    this second's count plus the last one's weighted by what is left of
    this second, whose variance under Poisson arrivals is at most RATE:
    each snapshot within 4 sqrt(300) = 69.3 of 300, their mean within
    4 sqrt(300 / 4) = 34.6 (the snapshots are 2 s apart: disjoint windows);
  - lifetime (ttime - qtime, the default): truth 400 ms plus the client's own
    timer lag (its mean actual hold minus the drawn one, measured by the
    client); each server's ttime averages its last 1024 sessions with weight
    1/1024, sd = 400 / sqrt(2047) = 8.84 ms, two servers of equal stot:
    6.25 ms; each snapshot within 4 x 6.25 + 5 ms (ttime is truncated to
    whole ms per session, and the close crosses haproxy to the server and
    back: a few ms at most) = 30 ms;
  - Little's law (sum scur / sum rate, reported beside): scur is Poisson
    with mean RATE x 0.4 = 120 (M/G/infinity), rate as above: relative sd
    sqrt(1/120 + 1/300) = 10.8 %: each snapshot within 43.2 %, the mean of
    the 4 within 21.6 %;
  - the written scenario loads, its timed case's rate and lifetime_mean_ms
    equal their calibrate records, and each record's sources name the CSV's
    lines and the columns where the header has `rate`, `ttime`.
"""

from __future__ import annotations

import csv
import heapq
import json
import math
import os
import random
import selectors
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import haproxy_command, in_namespace, one_line, run_cli
from routertwin.importers import haproxy, haproxy_stat
from routertwin.scenario_loader import load_scenario

HAPROXY = shutil.which("haproxy")
RATE, MEAN_MS, SEED = 300.0, 400.0, 20261123
SNAPSHOTS_S = (22.0, 24.0, 26.0, 28.0)
END_S = 29.0
FRONT, BACKENDS = 24100, (24101, 24102)

CONFIG = """\
global
  nbthread 1
  stats socket {sock} level admin
defaults
  mode tcp
  timeout connect 2s
  timeout client 30s
  timeout server 30s
frontend f
  bind 198.18.0.1:{front}
  default_backend pool
backend pool
  balance roundrobin
  server s0 198.18.0.1:{b0}
  server s1 198.18.0.1:{b1}
"""


def _config(tmp_path: Path, sock: str = "/run/unused.sock") -> Path:
    path = tmp_path / "live.cfg"
    path.write_text(CONFIG.format(sock=sock, front=FRONT, b0=BACKENDS[0], b1=BACKENDS[1]))
    return path


# ---------------------------------------------------------------- the arithmetic, on a hand-made CSV

HEAD = "# pxname,svname,qcur,qmax,scur,smax,slim,stot,status,weight,lbtot,type,rate,qtime,ttime,\n"


def _stat(tmp_path: Path, body: str, name: str = "stat.csv", head: str = HEAD) -> Path:
    path = tmp_path / name
    path.write_text(head + body)
    return path


def test_rate_and_lifetime_from_hand_made_rows(tmp_path):
    cfg = _config(tmp_path)
    # s0: 3000 sessions of ttime 500 ms, 100 ms of it queued; s1: 1000 of 300 ms, none queued
    stat = _stat(tmp_path, "f,FRONTEND,,,,,,4000,OPEN,,,0,100,,,\n"
                           "pool,s0,0,3,30,40,,3000,UP,1,3000,2,75,100,500,\n"
                           "pool,s1,0,0,10,20,,1000,UP,1,1000,2,25,0,300,\n"
                           "pool,BACKEND,0,3,40,60,,4000,UP,2,4000,1,100,75,450,\n")
    imported = haproxy.import_file(cfg)
    haproxy.apply_stat(imported, stat)
    timed = next(c for c in imported.scenario["cases"] if c["method"] == "timed")["timed"]
    assert timed["rate"] == 75 + 25
    # the slot is held from the dequeue on: (3000 x (500 - 100) + 1000 x 300) / 4000
    assert timed["lifetime_mean_ms"] == pytest.approx(375.0)
    cal = timed["calibrate"]
    assert {k: r["role"] for k, r in cal.items()} == {"rate": "calibrate", "lifetime_mean_ms": "calibrate"}
    assert cal["rate"]["sd"] == pytest.approx(10.0, abs=0.01)
    # sd per server 400 / sqrt(2047) and 300 / sqrt(1000) (s1 has fewer than 1024 sessions), weights 3/4 and 1/4
    assert cal["lifetime_mean_ms"]["sd"] == pytest.approx(math.hypot(0.75 * 400 / math.sqrt(2047),
                                                                     0.25 * 300 / math.sqrt(1000)), abs=0.05)
    # Little's law beside it: 40 open / 100 per second = 400 ms
    assert "Little's law (400 ms" in cal["lifetime_mean_ms"]["how"]
    cols = HEAD[2:].split(",")
    assert cal["rate"]["sources"] == [f"stat.csv:3: column {cols.index('rate') + 1} 'rate' = 75 (pool/s0)",
                                      f"stat.csv:4: column {cols.index('rate') + 1} 'rate' = 25 (pool/s1)"]
    assert f"stat.csv:3: column {cols.index('ttime') + 1} 'ttime' = 500 (pool/s0)" in \
        cal["lifetime_mean_ms"]["sources"]


def test_without_ttime_littles_law_sets_the_lifetime(tmp_path):
    head = "# pxname,svname,scur,stot,type,rate,\n"
    stat = _stat(tmp_path, "pool,s0,30,900,2,60,\npool,s1,18,700,2,40,\n", head=head)
    imported = haproxy.import_file(_config(tmp_path))
    haproxy.apply_stat(imported, stat)
    timed = next(c for c in imported.scenario["cases"] if c["method"] == "timed")["timed"]
    assert timed["rate"] == 100
    assert timed["lifetime_mean_ms"] == pytest.approx(480.0)  # 48 open / 100 per second
    assert timed["calibrate"]["lifetime_mean_ms"]["sd"] == pytest.approx(480 * math.sqrt(1 / 48 + 1 / 100), abs=0.05)


def test_what_the_snapshot_says_but_the_what_if_does_not_take_is_listed(tmp_path):
    stat = _stat(tmp_path, "pool,s0,5,9,30,40,,3000,UP,3,3000,2,75,100,500,\n"
                           "pool,s1,0,0,0,20,,1000,DOWN,1,1000,2,0,0,300,\n")
    imported = haproxy.import_file(_config(tmp_path))
    haproxy.apply_stat(imported, stat)
    listed = [str(n) for n in imported.not_modelled if n.file == str(stat)]
    assert any(":2: " in n and "weight 3" in n and "configuration's (1)" in n for n in listed), listed
    assert any(":3: " in n and "status DOWN" in n for n in listed), listed
    assert any("5 requests queued" in n and "lower bound" in n for n in listed), listed


def test_the_cli_writes_calibrate_records_and_an_edit_must_drop_them(tmp_path):
    stat = _stat(tmp_path, "pool,s0,0,0,61,70,,3000,UP,1,3000,2,152,0,402,\n"
                           "pool,s1,0,0,58,70,,3000,UP,1,3000,2,147,0,398,\n")
    out = tmp_path / "s.yaml"
    proc = run_cli("import", "haproxy", _config(tmp_path), "--stat", stat, "-o", out)
    assert proc.returncode == 0, proc.stderr
    timed = next(c for c in load_scenario(out).config.cases if c.method == "timed").timed
    assert (timed.rate, timed.lifetime_mean_ms) == (299, 400)
    assert timed.calibrate["rate"].value == 299 and timed.calibrate["lifetime_mean_ms"].value == 400
    # a rate edited without its record is refused at its line
    text = out.read_text()
    edited = tmp_path / "e.yaml"
    edited.write_text(text.replace("    rate: 299.0\n", "    rate: 150\n", 1))
    line = 1 + edited.read_text().splitlines().index("      rate:")
    err = one_line(run_cli("run", edited, "--out", tmp_path / "res"), tmp_path / "res")
    assert err.startswith(f"{edited}:{line}: key 'cases[3].timed.calibrate.rate': rate is 150 but its calibrate "
                          "record measured 299"), err


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("rate,qtime", "qtime", 1).replace(",152,0,", ",0,", 1).replace(",147,0,", ",0,", 1),
     "1: key 'rate': column missing from the header"),
    (lambda t: t.replace("pool,s1,0,0,58,", "pool,s1,0,0,-58,"), "3: key 'scur' (column 5): -58 is negative"),
    (lambda t: t.replace("pool,s1,", "pool,s7,"), "3: key 'svname' (column 2): server 's7' of backend 'pool' is "
                                                  "not in the configuration (its servers: s0, s1)"),
    (lambda t: t.replace("pool,s1,", "other,s1,"), "3: key 'pxname' (column 1): backend 'other' is not in the "
                                                   "configuration (its backends: pool)"),
    (lambda t: t.replace(",147,0,398,", ",1x7,0,398,"), "3: key 'rate' (column 13): '1x7' is not a number"),
])
def test_bad_stat_csv_is_refused_at_its_line(tmp_path, edit, message):
    stat = _stat(tmp_path, "pool,s0,0,0,61,70,,3000,UP,1,3000,2,152,0,402,\n"
                           "pool,s1,0,0,58,70,,3000,UP,1,3000,2,147,0,398,\n")
    stat.write_text(edit(stat.read_text()))
    out = tmp_path / "s.yaml"
    err = one_line(run_cli("import", "haproxy", _config(tmp_path), "--stat", stat, "-o", out), out)
    assert err.startswith(f"{stat}:{message}"), err


# ---------------------------------------------------------------- live: a real haproxy under a known workload


def _live(workdir: Path) -> dict:
    """Run inside the namespace: haproxy, two backends that hold a
    connection until its client closes it, the seeded Poisson client (one
    selector loop for all of them) and the show stat snapshots."""
    sel = selectors.DefaultSelector()
    listeners = []
    for port in BACKENDS:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("198.18.0.1", port))
        s.listen(1024)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, "listen")
        listeners.append(s)
    sock_path = workdir / "stats.sock"
    cfg = _config(workdir, str(sock_path))
    proc = subprocess.Popen([HAPROXY, "-db", "-f", str(cfg)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    rng = random.Random(SEED)
    snapshots, opened, lags = [], 0, []
    try:
        for _ in range(100):
            if sock_path.exists():
                break
            time.sleep(0.05)
        t0 = time.monotonic()
        next_open = t0 + rng.expovariate(RATE)
        closes: list = []  # (scheduled close, tie, socket, actual open, drawn lifetime s)
        due = [t0 + s for s in SNAPSHOTS_S]
        while True:
            now = time.monotonic()
            while next_open <= now and next_open < t0 + END_S:
                c = socket.socket()
                c.setblocking(False)
                c.connect_ex(("198.18.0.1", FRONT))
                life = rng.expovariate(1000.0 / MEAN_MS)
                heapq.heappush(closes, (next_open + life, opened, c, time.monotonic(), life))
                opened += 1
                next_open += rng.expovariate(RATE)
            while closes and closes[0][0] <= now:
                _, _, c, opened_at, life = heapq.heappop(closes)
                c.close()
                lags.append(time.monotonic() - opened_at - life)
            if due and due[0] <= now:
                snapshots.append({"t_s": now - t0, "csv": haproxy_command(sock_path, "show stat")})
                due.pop(0)
            if now >= t0 + END_S and not closes:
                break
            wake = min([next_open if next_open < t0 + END_S else t0 + END_S + 30]
                       + ([closes[0][0]] if closes else []) + due[:1])
            for key, _ in sel.select(max(0.0, wake - time.monotonic())):
                if key.data == "listen":
                    try:
                        conn, _ = key.fileobj.accept()
                    except BlockingIOError:
                        continue
                    conn.setblocking(False)
                    sel.register(conn, selectors.EVENT_READ, "conn")
                else:  # the client closed: haproxy forwards the close, the server closes too
                    try:
                        data = key.fileobj.recv(4096)
                    except ConnectionError:
                        data = b""
                    if not data:
                        sel.unregister(key.fileobj)
                        key.fileobj.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        for s in listeners:
            s.close()
    return {"snapshots": snapshots, "opened": opened, "lag_ms": 1000.0 * sum(lags) / len(lags)}


@pytest.mark.skipif(HAPROXY is None, reason="Debian's haproxy is not installed")
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for its network namespace")
def test_show_stat_of_a_real_haproxy_gives_the_workload_it_carried(tmp_path):
    live = json.loads(in_namespace("stattest", "test_import_stat_workload",
                                   "json.dumps(t._live(Path(%r)))" % str(tmp_path)))
    assert len(live["snapshots"]) == len(SNAPSHOTS_S)
    truth_ms = MEAN_MS + live["lag_ms"]
    cfg = _config(tmp_path, str(tmp_path / "stats.sock"))
    rates, littles, report = [], [], []
    for k, snap in enumerate(live["snapshots"]):
        stat = tmp_path / f"stat{k}.csv"
        stat.write_text(snap["csv"])
        out = tmp_path / f"s{k}.yaml"
        proc = run_cli("import", "haproxy", cfg, "--stat", stat, "-o", out)
        assert proc.returncode == 0, proc.stderr
        timed = next(c for c in load_scenario(out).config.cases if c.method == "timed").timed
        rate, life = timed.calibrate["rate"], timed.calibrate["lifetime_mean_ms"]
        assert (timed.rate, timed.lifetime_mean_ms) == (rate.value, life.value)
        header = snap["csv"].splitlines()[0][2:].split(",")
        assert all(f"column {header.index('rate') + 1} 'rate'" in s for s in rate.sources)
        assert any(f"column {header.index('ttime') + 1} 'ttime'" in s for s in life.sources)
        found, _ = haproxy_stat.workloads(stat, haproxy.import_file(cfg).scenario["balancer"])
        little = found["pool"].little_ms.value
        rates.append(rate.value)
        littles.append(little)
        report.append(f"t={snap['t_s']:.2f}s rate {rate.value:g} lifetime {life.value:g} ms (sd {life.sd:g}) "
                      f"Little {little:g} ms")
        print(report[-1])
        assert abs(rate.value - RATE) <= 4 * math.sqrt(RATE), report
        assert abs(life.value - truth_ms) <= 4 * MEAN_MS / math.sqrt(2047) / math.sqrt(2) + 5, (report, truth_ms)
        assert life.sd == pytest.approx(truth_ms / math.sqrt(2047) / math.sqrt(2), rel=0.1)
        rel = math.sqrt(1 / (RATE * MEAN_MS / 1000) + 1 / RATE)
        assert abs(little - truth_ms) <= 4 * rel * MEAN_MS, report
    print(f"opened {live['opened']} connections in {END_S:g} s, client timer lag {live['lag_ms']:.2f} ms")
    assert abs(sum(rates) / len(rates) - RATE) <= 4 * math.sqrt(RATE / len(rates)), report
    assert abs(sum(littles) / len(littles) - truth_ms) <= 4 * rel * MEAN_MS / math.sqrt(len(littles)), report


def test_the_python_api_takes_the_stat_option(tmp_path):
    import routertwin as rt

    stat = _stat(tmp_path, "pool,s0,0,0,61,70,,3000,UP,1,3000,2,152,0,402,\n"
                           "pool,s1,0,0,58,70,,3000,UP,1,3000,2,147,0,398,\n")
    out = tmp_path / "s.yaml"
    rt.import_file("haproxy", _config(tmp_path), out, stat=stat)
    timed = next(c for c in rt.load(out).config.cases if c.method == "timed").timed
    assert (timed.rate, timed.lifetime_mean_ms) == (299, 400)  # 152 + 147; (3000 x 402 + 3000 x 398) / 6000
    assert set(timed.calibrate) == {"rate", "lifetime_mean_ms"}


_ROW = st.tuples(st.sampled_from(["pool"] * 6 + ["other", "f"]),  # mostly rows the configuration has
                 st.sampled_from(["s0", "s1"] * 3 + ["s9", "BACKEND", "FRONTEND"]),
                 st.lists(st.one_of(st.integers(0, 5000).map(str), st.just("")), min_size=12, max_size=12),
                 # a bad cell in about one row of four (an index past the 12 cells spoils nothing)
                 st.tuples(st.integers(0, 47), st.sampled_from(["-3", "x", "1e3", "-0.5"])))


@settings(max_examples=200, deadline=None)
@given(st.lists(_ROW, max_size=6))
def test_any_rows_give_a_workload_or_a_line_numbered_error(rows):
    """Hypothesis: whatever the rows hold, workloads() answers or raises
    ImportFileError naming the file and a line; when it answers, the rate is
    the sum of the pool's server rows' `rate`, summed here on its own."""
    import tempfile

    from routertwin.importers._lbcommon import ImportFileError

    lines = []
    for px, sv, cells, bad in rows:
        cells = list(cells)
        if bad[0] < len(cells):
            cells[bad[0]] = bad[1]
        kind = "2" if sv not in ("BACKEND", "FRONTEND") else "1"
        # HEAD: qcur..lbtot (9 cells), type, rate, qtime, ttime
        lines.append(",".join([px, sv, *cells[:9], kind, *cells[9:]]) + ",\n")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        stat = _stat(tmp, "".join(lines))
        balancer = haproxy.import_file(_config(tmp)).scenario["balancer"]
        try:
            found, _ = haproxy_stat.workloads(stat, balancer)
        except ImportFileError as exc:
            assert str(exc).startswith(f"{stat}:") and exc.line is not None, str(exc)
            return
        total = sum(float(c[9] or 0) for px, sv, c, _ in rows if px == "pool" and sv in ("s0", "s1"))
        assert (found["pool"].rate.value if "pool" in found and found["pool"].rate else 0.0) == total
