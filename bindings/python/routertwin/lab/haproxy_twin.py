"""The twin's side of `routertwin lab haproxy`: the imported CONFIG's pool
replayed with the lab's own workload, and the comparison under a criterion
fixed before measuring.

- requests: the pool's dp_sched scheduler (`routertwin._core.SchedPool`, the
  C core HAProxy's algorithms are modelled by) picks a server for each
  request of the workload: the same client addresses in the same order;
  with `concurrency` > 1 a discrete-event replay where each connection is
  held for its server's service delay.
- cookie: the first request of each client is scheduled as above; the
  later ones carry the cookie, and the failover model's cookie persistence
  (RunLbFailover, `persistence: cookie`, no server dying) says whether they
  stay.
- failover: the failover case the importer writes for the pool
  (RunLbFailover: each server's weight and check timers, timeout connect
  and check, retries, and a redispatch that avoids the server that failed,
  as HAProxy 2.6's does) with the lab's rate,
  length and kill time, run at ten check phases across one `inter`
  (the lab cannot choose where in its check cycle HAProxy is when the
  server dies).
"""

from __future__ import annotations

import heapq
from collections import Counter

# Schedulers whose choice does not depend on timing: the same workload in
# the same order gives the same picks, so the criterion is exact equality.
DETERMINISTIC = ("roundrobin", "static-rr", "first", "source", "source-consistent", "uri", "uri-consistent", "hdr",
                 "hdr-consistent")
# Timing-dependent schedulers: a stated tolerance on each server's share.
SHARE_TOLERANCE_PCT = {"leastconn": 5.0, "random": 8.0}
# failover: the stats socket is polled every 5 ms and HAProxy's check timers
# run on a loaded machine: measured detection may sit this far outside the
# closed-form window.
DETECTION_SLACK_MS = (20.0, 60.0)
FAILED_SLACK = 2
TWIN_PHASES = 10
# failover, silent: a request whose first attempt meets the silent server
# waits at least one timeout connect; one that took this fraction of it is
# counted as such (a served request on loopback takes a few ms).
SLOW_FRACTION = 0.9
# failover: the longest served request (the connect timeouts and turn-arounds
# of its failed attempts) beside the twin's longest over its phases. What it
# checks is the number of waits, so the upper slack is just under one more
# wait, 0.9 x min(timeout connect, 1 s) (the turn-around); a loaded machine
# adds its own and the client's time, which a fixed +150 ms did not always
# cover (one failed test run under load average 5).
DELAY_SLACK_LO_MS = 20.0
DELAY_SLACK_WAITS = 0.9
# The twin's per-request time besides the server's delay (connect, proxying,
# the client's turn-around) in the concurrent replay. assumption: 1 ms, the
# order of a loopback HTTP exchange through HAProxy on this machine.
REQUEST_OVERHEAD_MS = 1.0


def criterion(kind: str, scheduler: str | None, workload: dict) -> dict:
    """The pass criterion, from what the configuration and workload say,
    before anything is measured."""
    if kind in ("requests", "cookie") and scheduler is None:
        return {"type": "not modelled", "text": "the twin has no scheduler for this balance algorithm: "
                                                "not modelled in the twin (no comparison)"}
    if kind == "requests":
        if scheduler in DETERMINISTIC:
            return {"type": "exact", "text": f"{scheduler} is deterministic for a given order of requests: "
                                             "requests per server equal the twin's exactly"}
        tol = SHARE_TOLERANCE_PCT.get(scheduler, 5.0)
        return {"type": "share", "tolerance_pct": tol,
                "text": f"{scheduler} depends on timing: each server's share within {tol:g} points of the twin's"}
    if kind == "cookie":
        return {"type": "exact", "text": "cookie insert: every request carrying the cookie reaches the server it "
                                         "names (as in the twin); first requests per server equal the twin's "
                                         f"{scheduler} picks exactly; one Set-Cookie per client"}
    lo, hi = DETECTION_SLACK_MS
    text = (f"kill-to-DOWN within the twin's closed-form window (-{lo:g}/+{hi:g} ms), or never when the twin "
            f"never checks the killed server; failed requests within the twin's range over {TWIN_PHASES} check "
            f"phases (+-{FAILED_SLACK}); the longest served request within the twin's longest over its phases "
            f"(-{DELAY_SLACK_LO_MS:g} ms/+{DELAY_SLACK_WAITS:g} x min(timeout connect, 1 s): no extra wait)")
    if workload.get("kill_mode") == "silent":
        text += (f"; requests that took at least {SLOW_FRACTION:g} x timeout connect within the twin's range of "
                 f"requests whose first attempt met the silent server (+-{FAILED_SLACK})")
    return {"type": "range", "text": text}


def _ip(k: int) -> int:
    """Client k's source address as the lab assigns it (haproxy_inside.source_of), host order."""
    return (198 << 24 | 18 << 16 | 2 << 8 | 1) + k


def _pool(cfg, seed: int):
    from routertwin import _core
    from routertwin.runners.lb.balancer import Pool

    mine = [b for b in cfg.backends if b["pool"] == cfg.pool["name"]]
    options = Pool.model_validate(cfg.pool).sched_keys()  # uri/hdr: hash-type function, balance options
    sp = _core.SchedPool(cfg.pool["scheduler"], [b["weight"] for b in mine], [b["backup"] for b in mine], seed,
                         options)
    for i, b in enumerate(mine):
        if b["disabled"]:
            sp.set_state(i, "disabled")
    return sp, mine


def _target(cfg, i: int, path: str | None = None) -> str | None:
    """What a uri or hdr scheduler hashes for request i: its request target
    (haproxy_inside's `/p/<i mod paths>`), or the value of the header the
    pool names as the lab's client sends it (only `Host: lab`); a tcp-mode
    proxy has neither, and a request without it is round-robined."""
    if cfg.pool.get("mode") != "http":
        return None
    if (cfg.pool.get("scheduler") or "").startswith("hdr"):
        return "lab" if (cfg.pool.get("hdr_name") or "").lower() == "host" else None
    return path if path is not None else f"/p/{i % cfg.workload['paths']}"


def replay_requests(cfg) -> list[str | None]:
    """The server the twin gives each request of the workload, in request order."""
    w = cfg.workload
    sp, mine = _pool(cfg, w["seed"])
    n, conc, clients = w["requests"], w["concurrency"], w["clients"]
    picks: list[str | None] = [None] * n
    if conc == 1:
        t = 0.0
        for i in range(n):
            sid = sp.pick(_ip(i % clients), 0, 0, int(t), _target(cfg, i))
            if sid >= 0:
                sp.opened(sid)
                t += mine[sid]["delay_ms"] + REQUEST_OVERHEAD_MS
                sp.closed(sid)
                picks[i] = mine[sid]["name"]
        return picks
    # closed loop: `conc` connections, each opened again as soon as one ends
    events: list = []  # (time, order, request index, server)
    nxt = 0
    for _ in range(min(conc, n)):
        heapq.heappush(events, (0.0, 1, nxt, -2))
        nxt += 1
    while events:
        t, _order, i, sid = heapq.heappop(events)
        if sid >= 0:  # a request ends: its connection closes, the client sends the next
            sp.closed(sid)
            if nxt < n:
                heapq.heappush(events, (t, 1, nxt, -2))
                nxt += 1
            continue
        s = sp.pick(_ip(i % clients), 0, 0, int(t), _target(cfg, i))
        if s < 0:
            continue
        sp.opened(s)
        picks[i] = mine[s]["name"]
        heapq.heappush(events, (t + mine[s]["delay_ms"] + REQUEST_OVERHEAD_MS, 0, i, s))
    return picks


def _server_of(rec: dict) -> str | None:
    return rec["server"].split("/", 1)[1] if rec.get("server") else None


def _share_rows(names: list[str], measured: Counter, twin: Counter | None) -> list[dict]:
    total_m = sum(measured.values()) or 1
    total_t = sum(twin.values()) or 1 if twin is not None else 1
    rows = []
    for name in names:
        row = {"server": name, "measured": measured.get(name, 0), "measured_pct": 100 * measured.get(name, 0) / total_m}
        if twin is not None:
            row.update(twin=twin.get(name, 0), twin_pct=100 * twin.get(name, 0) / total_t)
        rows.append(row)
    return rows


def _compare_requests(cfg, measured: dict, crit: dict, twin: bool) -> dict:
    recs = sorted(measured["requests"], key=lambda r: r["i"])
    names = [b["name"] for b in cfg.backends if b["pool"] == cfg.pool["name"]]
    got = Counter(_server_of(r) for r in recs if _server_of(r))
    failed = sum(1 for r in recs if r["status"] != 200)
    out = {"failed": failed}
    if crit["type"] == "not modelled" or not twin:
        out.update(rows=_share_rows(names, got, None), verdict="not modelled" if twin else "measured only")
        return out
    picks = replay_requests(cfg)
    want = Counter(p for p in picks if p)
    rows = _share_rows(names, got, want)
    if crit["type"] == "exact":
        for r in rows:
            r["ok"] = r["measured"] == r["twin"]
        same = sum(1 for r, p in zip(recs, picks) if _server_of(r) == p)
        out["same_server_pct"] = 100 * same / len(recs) if recs else 0.0
    else:
        for r in rows:
            r["ok"] = abs(r["measured_pct"] - r["twin_pct"]) <= crit["tolerance_pct"]
    out.update(rows=rows, verdict="pass" if all(r["ok"] for r in rows) and failed == 0 else "FAIL")
    return out


def _compare_cookie(cfg, measured: dict, crit: dict, twin: bool) -> dict:
    from routertwin import _core

    recs = measured["requests"]
    names = [b["name"] for b in cfg.backends if b["pool"] == cfg.pool["name"]]
    by_cookie = {f"{cfg.pool['cookie']['name']}={s['cookie']}": s["name"] for s in cfg.pool["servers"]
                 if s.get("cookie")}
    got = Counter(_server_of(r) for r in recs if _server_of(r))
    with_cookie = [r for r in recs if r["sent_cookie"]]
    sticky = sum(1 for r in with_cookie if by_cookie.get(r["sent_cookie"]) == _server_of(r))
    set_cookies = sum(1 for r in recs if r["set_cookie"])
    failed = sum(1 for r in recs if r["status"] != 200)
    out = {"failed": failed, "measured_sticky_pct": 100 * sticky / len(with_cookie) if with_cookie else 0.0,
           "measured_set_cookies": set_cookies}
    if crit["type"] == "not modelled" or not twin:
        out.update(rows=_share_rows(names, got, None), verdict="not modelled" if twin else "measured only")
        return out
    w = cfg.workload
    sp, mine = _pool(cfg, w["seed"])
    first = []
    for k in range(w["clients"]):
        sid = sp.pick(_ip(k), 0, 0, 0, _target(cfg, k, "/"))  # the cookie client asks for /
        sp.opened(sid)
        sp.closed(sid)
        first.append(mine[sid]["name"])
    usable = [b for b in mine if not b["backup"] and not b["disabled"] and b["weight"] > 0]
    rounds = w["requests"]
    keys = {"servers": len(usable), "scheduler": cfg.pool["scheduler"], "persistence": "cookie",
            "clients": w["clients"], "request_rate": 100.0, "duration_s": max(1.0, w["clients"] * rounds / 100.0),
            "kill_at_s": 1e6}
    fo = _core.run_lb_failover(keys)
    twin_sticky = 100.0 * (1 - fo["sticky_moved"] / max(1, fo["requests"]))
    want = Counter({name: first.count(name) * rounds for name in set(first)})
    rows = _share_rows(names, got, want)
    for r in rows:
        r["ok"] = r["measured"] == r["twin"]
    out.update(rows=rows, twin_sticky_pct=twin_sticky, twin_set_cookies=w["clients"],
               twin_failover_keys=keys)
    ok = (all(r["ok"] for r in rows) and failed == 0 and out["measured_sticky_pct"] == twin_sticky == 100.0
          and set_cookies == w["clients"])
    out["verdict"] = "pass" if ok else "FAIL"
    return out


def failover_keys(cfg) -> tuple[dict, list[str]]:
    """The importer's failover case for the pool, with the lab's workload."""
    w = cfg.workload
    notes = []
    case = next((c for c in cfg.scenario["cases"] if c.get("method") == "failover"
                 and c["id"].endswith(cfg.pool["name"])), None)
    if case is None:
        return {}, ["the importer wrote no failover case for this pool (it needs two usable servers with check)"]
    keys = dict(case["failover"])
    mine = [b for b in cfg.backends if b["pool"] == cfg.pool["name"]]
    usable = [b["name"] for b in mine if not b["backup"] and not b["disabled"] and b["weight"] > 0]
    keys["kill_server"] = usable.index(w["kill"])
    if keys.get("persistence") == "cookie":
        del keys["persistence"]
        notes.append("the lab's failover client sends no cookie: the twin runs without cookie persistence")
    # the lab's clients, numbered from the lab's first address: a hash
    # scheduler (and a stick table on src) sees each request as HAProxy does
    keys.update(clients=w["clients"], request_rate=w["rate"], kill_mode=w.get("kill_mode", "refuse"),
                client_ip_base=_ip(0))
    return keys, notes


def _compare_failover(cfg, measured: dict, crit: dict, twin: bool) -> dict:
    from routertwin import _core

    recs = measured["requests"]
    ev = measured["events"]
    w = cfg.workload
    names = [b["name"] for b in cfg.backends if b["pool"] == cfg.pool["name"]]
    got = Counter(_server_of(r) for r in recs if _server_of(r))
    failed = sum(1 for r in recs if r["status"] != 200)
    detection = ev["down_ms"] - ev["kill_ms"] if "down_ms" in ev and "kill_ms" in ev else None
    out = {"failed": failed, "requests": len(recs), "measured_detection_ms": detection,
           "measured_failed_at_ms": [round(r["t0_ms"] - ev["start_ms"], 1) for r in recs if r["status"] != 200],
           "kill_at_ms": round(ev["kill_ms"] - ev["start_ms"], 1) if "kill_ms" in ev else None,
           "down_at_ms": round(ev["down_ms"] - ev["start_ms"], 1) if "down_ms" in ev else None,
           "rows": _share_rows(names, got, None)}
    keys, notes = failover_keys(cfg)
    out["notes"] = notes
    if not twin or not keys:
        out["verdict"] = "measured only" if not twin else "not modelled"
        return out
    runs = []
    # the killed server's own inter (a per-server key is "V1,V2,...": lb-failover.h)
    inter = int(str(keys["inter_ms"]).split(",")[keys["kill_server"]] if "," in str(keys["inter_ms"])
                else keys["inter_ms"])
    for j in range(TWIN_PHASES):
        phase_s = inter * j / TWIN_PHASES / 1000
        k = dict(keys, kill_at_s=w["kill_at_s"] + phase_s, duration_s=w["seconds"] + phase_s)
        r = _core.run_lb_failover(k)
        # the lab offers its requests from 0 to `seconds`; the twin's run is shifted by the phase
        runs.append(dict(r, phase_ms=inter * j / TWIN_PHASES))
    failed_twin = [r["failed"] for r in runs]
    det_twin = [r["detection_ms"] for r in runs]
    lo, hi = DETECTION_SLACK_MS
    wmin, wmax = runs[0]["window_min_ms"], runs[0]["window_max_ms"]
    out.update(twin_failover_keys=keys, twin_window_ms=[wmin, wmax], twin_detection_ms=[min(det_twin), max(det_twin)],
               twin_failed=[min(failed_twin), max(failed_twin)], twin_runs=runs,
               twin_redispatched=[min(r["redispatched"] for r in runs), max(r["redispatched"] for r in runs)])
    if wmin < 0:  # the killed server has no check: the twin never takes it out, nor must HAProxy
        det_ok = detection is None
    else:
        det_ok = detection is not None and wmin - lo <= detection <= wmax + hi
    fail_ok = min(failed_twin) - FAILED_SLACK <= failed <= max(failed_twin) + FAILED_SLACK
    served_ms = [r["t1_ms"] - r["t0_ms"] for r in recs if r["status"] == 200]
    longest = max(served_ms, default=0.0)
    delay_twin = [r["max_delay_ms"] for r in runs]
    wait_ms = min(keys.get("connect_timeout_ms", 5000), 1000)  # the turn-around (manual 4.2 "retries")
    delay_ok = min(delay_twin) - DELAY_SLACK_LO_MS <= longest <= max(delay_twin) + DELAY_SLACK_WAITS * wait_ms
    out.update(measured_longest_served_ms=round(longest, 1), twin_max_delay_ms=[min(delay_twin), max(delay_twin)],
               delay_ok=delay_ok)
    slow_ok = True
    if keys["kill_mode"] == "silent":
        connect_ms = keys.get("connect_timeout_ms", 5000)  # the model's assumption when the file has none
        slow = sum(1 for r in recs if r["t1_ms"] - r["t0_ms"] >= SLOW_FRACTION * connect_ms)
        to_dead = [r["to_dead_server"] for r in runs]
        slow_ok = min(to_dead) - FAILED_SLACK <= slow <= max(to_dead) + FAILED_SLACK
        out.update(measured_slow=slow, twin_to_dead_server=[min(to_dead), max(to_dead)], slow_ok=slow_ok)
    out.update(detection_ok=det_ok, failed_ok=fail_ok,
               verdict="pass" if det_ok and fail_ok and slow_ok and delay_ok else "FAIL")
    return out


def compare(cfg, measured: dict, twin: bool = True) -> dict:
    kind = cfg.workload["kind"]
    crit = cfg.criterion or criterion(kind, cfg.pool.get("scheduler"), cfg.workload)
    if kind == "requests":
        out = _compare_requests(cfg, measured, crit, twin)
    elif kind == "cookie":
        out = _compare_cookie(cfg, measured, crit, twin)
    else:
        out = _compare_failover(cfg, measured, crit, twin)
    out.setdefault("notes", [])
    # what the twin does not do at all first, then what it will read once modelled (timeouts, ...)
    proxies = sorted((x for x in cfg.not_modelled if "(global section" not in x), key=lambda x: "not modelled yet" in x)
    if proxies and out["verdict"] == "FAIL":
        out["notes"].append(f"{len(proxies)} directive(s) of the proxies are not modelled by the twin, e.g. "
                            + "; ".join(proxies[:3]) + " (the results JSON lists them all)")
    return {"kind": kind, "scheduler": cfg.pool.get("scheduler"), "criterion": crit, **out}
