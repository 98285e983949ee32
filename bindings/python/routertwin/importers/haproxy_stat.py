"""HAProxy's `show stat` CSV (the stats socket's answer, or the stats page's
`;csv`) -> calibration rows: what a running balancer measured, per server,
in validation/reference.csv's columns with role `calibrate`, so a scenario's
fits may read them (routertwin.validation.calibration.CalibrationData) and
nothing may treat them as predictions.

The columns are HAProxy's management guide, section 9.1 "CSV format"
(Debian's haproxy 2.6: /usr/share/doc/haproxy/management.txt.gz): the first
line is `# pxname,svname,...`; one row per frontend, server and backend
(svname FRONTEND, the server's name, BACKEND; column `type` 2 is a server).
Per server this keeps:

| metric | column | meaning (management guide 9.1) |
|---|---|---|
| sessions | stot | cumulative sessions (connections) sent to the server |
| picks | lbtot | times the server was selected (new sessions, redispatches) |
| pick_share | lbtot / the backend's lbtot | its share of the scheduler's picks, % |
| session_rate | rate | sessions per second over the last elapsed second |
| queue_ms, connect_ms, response_ms, total_ms | qtime, ctime, rtime, ttime | averages over the last 1024 sessions, ms |

A row is written only where HAProxy gave a value (an empty field, as for a
server that never served, writes nothing). Row ids are
`<prefix>-<backend>-<server>-<metric>`.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from routertwin.importers._lbcommon import ImportFileError, NotModelled, read_text
from routertwin.validation.reference import COLUMNS

KIND = "haproxy-stat"
HELP = ("HAProxy's `show stat` CSV as calibrate rows per server (picks, rates, response times; "
        'docs/import-lb.md)')

METRICS = (  # (metric, column, unit, what)
    ("sessions", "stot", "1", "cumulative sessions sent to the server"),
    ("picks", "lbtot", "1", "times the scheduler selected the server"),
    ("session_rate", "rate", "1/s", "sessions per second over the last second"),
    ("queue_ms", "qtime", "ms", "average queue time, last 1024 sessions"),
    ("connect_ms", "ctime", "ms", "average connect time, last 1024 sessions"),
    ("response_ms", "rtime", "ms", "average response time, last 1024 sessions"),
    ("total_ms", "ttime", "ms", "average total session time, last 1024 sessions"),
)
REQUIRED = ("pxname", "svname", "stot", "lbtot")


@dataclass
class StatRows:
    """The calibration rows of one `show stat` answer."""

    rows: list[dict]
    not_modelled: list[NotModelled] = field(default_factory=list)
    source: str = ""

    def text(self) -> str:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(self.rows)
        return buf.getvalue()


def _id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


def _header(path: str | Path, shown: str) -> tuple[list[str], list[str]]:
    """A `show stat` answer's lines and its header's column names."""
    lines = read_text(Path(path), shown)
    if not lines or not lines[0].startswith("# "):
        raise ImportFileError(shown, 1, "not a `show stat` answer: the first line must be '# pxname,svname,...'")
    return lines, next(csv.reader([lines[0][2:]]))


def import_file(path: str | Path, shown: str | None = None, prefix: str | None = None,
                condition: str = "") -> StatRows:
    shown = shown or str(path)
    lines, header = _header(path, shown)
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise ImportFileError(shown, 1, f"columns missing from the header: {', '.join(missing)}")
    prefix = prefix or "haproxy-" + _id(Path(path).stem)
    servers: list[tuple[int, dict]] = []
    backend_picks: dict[str, float] = {}
    for no, row in _rows(shown, lines, header):
        for col in ("stot", "lbtot") + tuple(m[1] for m in METRICS):
            v = row.get(col, "")
            if v != "" and not re.fullmatch(r"\d+(\.\d+)?", v):
                raise ImportFileError(shown, no, f"column '{col}': '{v}' is not a number")
        if row["svname"] == "BACKEND":
            backend_picks[row["pxname"]] = float(row["lbtot"] or 0)
        elif row.get("type", "2") == "2" and row["svname"] != "FRONTEND":
            servers.append((no, row))  # type: 0 frontend, 1 backend, 2 server, 3 listener (guide 9.1, field 32)
    out: list[dict] = []
    note = f"from HAProxy show stat ({Path(shown).name})"
    for no, row in servers:
        base = f"{prefix}-{_id(row['pxname'])}-{_id(row['svname'])}"
        system = f"HAProxy backend {row['pxname']}, server {row['svname']}"
        values = []
        for metric, col, unit, what in METRICS:
            if row.get(col, "") != "":
                values.append((metric, row[col], unit, what))
        total = backend_picks.get(row["pxname"])
        if total and row["lbtot"] != "":
            values.append(("pick_share", f"{100.0 * float(row['lbtot']) / total:.10g}", "%",
                           "share of the backend's scheduler picks"))
        for metric, value, unit, what in values:
            out.append({"id": f"{base}-{metric}", "seed": "", "system": system, "test": what,
                        "condition": condition or f"snapshot, line {no}", "metric": metric, "value": value,
                        "unit": unit, "role": "calibrate", "note": note})
    if not out:
        raise ImportFileError(shown, None, "no server rows (only FRONTEND/BACKEND aggregates, or none)")
    return StatRows(out, [], shown)


# ---------------------------------------------------------------- the timed what-if's workload

# `routertwin import haproxy CONFIG --stat STAT.csv`: the columns it reads per server
WORKLOAD_REQUIRED = ("pxname", "svname", "scur", "stot", "rate")
_NUMERIC = ("qcur", "scur", "stot", "lbtot", "rate", "qtime", "ttime", "weight")
# HAProxy's time averages (qtime, ttime) are a sliding sum over TIME_STATS_SAMPLES = 1024
# sessions of the server (src/stream.c stream_update_time_stats, swrate_add_dynamic):
# a plain mean of the first 1024, then an exponentially weighted one of weight 1/1024
STATS_SAMPLES = 1024


@dataclass
class Derived:
    """One workload value derived from `show stat`: the value, one standard
    deviation, how it was derived and the cells it came from
    (`FILE:LINE: column N 'name' = value (backend/server)`)."""

    value: float
    sd: float
    how: str
    sources: list[str]

    def record(self) -> dict:
        """The scenario's `calibrate` entry (runners/lb/schema.py CalibratedValue)."""
        return {"role": "calibrate", "value": self.value, "sd": self.sd, "how": self.how, "sources": self.sources}


@dataclass
class PoolWorkload:
    """What one backend's `show stat` rows say about the workload it carried."""

    pool: str
    rate: Derived | None = None
    lifetime_mean_ms: Derived | None = None
    little_ms: Derived | None = None  # Little's law, shown beside the ttime-based lifetime
    ttime_ms: Derived | None = None


def _rows(shown: str, lines: list[str], header: list[str]):
    """(line number, {column: text}) of each data line of a show stat CSV."""
    for no, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        rec = next(csv.reader([line]))
        if len(rec) < len(header) - 1:  # the 2.6 header ends in a comma: one empty name
            raise ImportFileError(shown, no, f"{len(rec)} fields, the header has {len(header)}")
        yield no, dict(zip(header, rec))


def _number(shown: str, no: int, header: list[str], row: dict, col: str) -> float | None:
    v = row.get(col, "")
    if v == "":
        return None
    where = f"key '{col}' (column {header.index(col) + 1})"
    if re.fullmatch(r"-\d+(\.\d+)?", v):
        raise ImportFileError(shown, no, f"{where}: {v} is negative (a count or an average time)")
    if not re.fullmatch(r"\d+(\.\d+)?", v):
        raise ImportFileError(shown, no, f"{where}: '{v}' is not a number")
    return float(v)


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def workloads(path: str | Path, balancer: dict, shown: str | None = None) -> tuple[dict[str, PoolWorkload],
                                                                                   list[NotModelled]]:
    """The workload of each pool of `balancer` (an imported scenario's
    `balancer`) that the `show stat` answer at `path` measured, and notes on
    what the timed what-if does not take from it.

    - arrival rate: the sum over the pool's servers of `rate` (sessions in
      the last second, HAProxy's freq_ctr: this second's count plus the
      previous second's weighted by what is left of this one, whose variance
      under Poisson arrivals is at most the rate's: sd = sqrt(rate));
    - mean lifetime (the time a session holds a server slot): ttime - qtime
      per server (HAProxy's averages over the server's last 1024 sessions:
      sd = mean / sqrt(2 x 1024 - 1) for exponential lifetimes, mean /
      sqrt(n) over its first n < 1024), weighted by stot; without ttime,
      Little's law on the snapshot: sum(scur) / sum(rate) (Poisson counts:
      relative sd sqrt(1/scur + 1/rate)). ttime wins when present because it
      averages about 1024 sessions per server where Little's law divides two
      counts of about one second; both are reported.
    A server of the CSV that the configuration lacks, a missing column, a
    negative number: FILE:LINE: key ... (ImportFileError)."""
    shown = shown or str(path)
    name = Path(shown).name
    lines, header = _header(path, shown)
    for col in WORKLOAD_REQUIRED:
        if col not in header:
            raise ImportFileError(shown, 1, f"key '{col}': column missing from the header (the timed what-if's "
                                            f"workload needs {', '.join(WORKLOAD_REQUIRED)})")
    pools = {p["name"]: p for p in balancer.get("pools", [])}
    rows: dict[str, list[tuple[int, dict, dict]]] = {}
    backend_rows: dict[str, tuple[int, dict, dict]] = {}
    for no, row in _rows(shown, lines, header):
        values = {c: _number(shown, no, header, row, c) for c in _NUMERIC if c in header}
        px, sv = row["pxname"], row["svname"]
        if sv == "BACKEND":
            backend_rows[px] = (no, row, values)
        elif sv != "FRONTEND" and row.get("type", "2") == "2":
            if px not in pools:
                raise ImportFileError(shown, no, f"key 'pxname' (column {header.index('pxname') + 1}): backend "
                                                 f"'{px}' is not in the configuration (its backends: "
                                                 f"{', '.join(pools) or 'none'})")
            names = [s["name"] for s in pools[px]["servers"]]
            if sv not in names:
                raise ImportFileError(shown, no, f"key 'svname' (column {header.index('svname') + 1}): server "
                                                 f"'{sv}' of backend '{px}' is not in the configuration (its "
                                                 f"servers: {', '.join(names)})")
            rows.setdefault(px, []).append((no, row, values))
    col = {c: header.index(c) + 1 for c in header if c}
    notes: list[NotModelled] = []
    out: dict[str, PoolWorkload] = {}
    for px, servers in rows.items():
        def cell(no, row, c):
            return f"{name}:{no}: column {col[c]} '{c}' = {row[c]} ({px}/{row['svname']})"

        w = PoolWorkload(px)
        config = {s["name"]: s for s in pools[px]["servers"]}
        for no, row, v in servers:
            status = row.get("status", "")
            if status and not (status.startswith("UP") or status == "no check"):
                notes.append(NotModelled(shown, no, f"{px}/{row['svname']} status {status}",
                                         "the timed what-if starts with the configuration's servers, not the "
                                         "snapshot's states"))
            conf_weight = config[row["svname"]].get("weight", 1)
            if v.get("weight") is not None and v["weight"] != conf_weight:
                notes.append(NotModelled(shown, no, f"{px}/{row['svname']} weight {row['weight']}",
                                         f"a runtime weight: the what-if uses the configuration's ({conf_weight})"))
        rate = sum(v["rate"] or 0 for _, _, v in servers)
        scur = sum(v["scur"] or 0 for _, _, v in servers)
        queued = sum(v.get("qcur") or 0 for _, _, v in servers)
        if px in backend_rows:
            queued += backend_rows[px][2].get("qcur") or 0
        if queued:
            bno, brow, bv = backend_rows.get(px, (None, {}, {}))
            be_rate = f"; the BACKEND row's rate counts them as they enter: {brow['rate']}" \
                if bv.get("rate") is not None else ""
            notes.append(NotModelled(shown, bno or servers[0][0], f"{px}: {queued:.0f} requests queued",
                                     "the servers' rates count sessions served, so the arrival rate is a lower "
                                     f"bound{be_rate}"))
        if rate <= 0:
            notes.append(NotModelled(shown, servers[0][0], f"{px}: rate 0",
                                     "no session in the last second: the timed case keeps its assumed workload"))
            continue
        rate_cells = [cell(no, row, "rate") for no, row, _ in servers]
        w.rate = Derived(rate, round(math.sqrt(rate), 2), "sum of the servers' 'rate' (sessions over the last second); sd "
                         "sqrt(rate): a Poisson count of about one second", rate_cells)
        if scur > 0:
            little = 1000.0 * scur / rate
            w.little_ms = Derived(round(little, 1), round(little * math.sqrt(1 / scur + 1 / rate), 1),
                                  f"Little's law: sum of 'scur' ({scur:.0f}) / sum of 'rate' ({rate:.0f}) x 1000; "
                                  "sd from both as Poisson counts",
                                  [cell(no, row, "scur") for no, row, _ in servers] + rate_cells)
        timed = [(no, row, v) for no, row, v in servers
                 if "ttime" in header and v.get("ttime") is not None and (v["stot"] or 0) > 0]
        if timed:
            total = sum(v["stot"] for _, _, v in timed)
            mean = var = 0.0
            cells = []
            for no, row, v in timed:
                hold = max(0.0, v["ttime"] - (v.get("qtime") or 0))
                n = min(v.get("lbtot") or v["stot"], STATS_SAMPLES)
                sd = hold / math.sqrt(2 * n - 1 if n >= STATS_SAMPLES else n)
                share = v["stot"] / total
                mean += share * hold
                var += (share * sd) ** 2
                cells.append(cell(no, row, "ttime"))
                if v.get("qtime") is not None:
                    cells.append(cell(no, row, "qtime"))
                cells.append(cell(no, row, "stot"))
            w.ttime_ms = Derived(round(mean, 1), round(math.sqrt(var), 1),
                                 "'ttime' - 'qtime' per server (averages over its last 1024 sessions), weighted "
                                 "by 'stot'; sd mean / sqrt(2 x 1024 - 1) per server, as for exponential lifetimes",
                                 cells)
        w.lifetime_mean_ms = w.ttime_ms or w.little_ms
        if w.ttime_ms and w.little_ms:
            gap = abs(w.ttime_ms.value - w.little_ms.value)
            spread = math.hypot(w.ttime_ms.sd, w.little_ms.sd)
            w.ttime_ms.how += (f"; chosen over Little's law ({_fmt(w.little_ms.value)} ms, sd "
                               f"{_fmt(w.little_ms.sd)}), which divides two counts of about one second")
            if gap > 4 * spread:
                notes.append(NotModelled(shown, servers[0][0], f"{px}: lifetime {_fmt(w.ttime_ms.value)} ms from "
                                         f"ttime, {_fmt(w.little_ms.value)} ms from Little's law",
                                         f"they differ by {_fmt(gap)} ms, over 4 sd ({_fmt(4 * spread)}): the "
                                         "workload was not steady, or sessions hold more than one request"))
        out[px] = w
    return out, notes


def convert(path: Path, args) -> "Imported":
    """The registry's entry (routertwin.importers): FILE -> the calibration CSV."""
    from routertwin.importers._lbcommon import as_import

    return as_import(import_file(path, shown=str(path)), args, '.csv')
