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


def import_file(path: str | Path, shown: str | None = None, prefix: str | None = None,
                condition: str = "") -> StatRows:
    shown = shown or str(path)
    lines = read_text(Path(path), shown)
    if not lines or not lines[0].startswith("# "):
        raise ImportFileError(shown, 1, "not a `show stat` answer: the first line must be '# pxname,svname,...'")
    header = next(csv.reader([lines[0][2:]]))
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise ImportFileError(shown, 1, f"columns missing from the header: {', '.join(missing)}")
    prefix = prefix or "haproxy-" + _id(Path(path).stem)
    servers: list[tuple[int, dict]] = []
    backend_picks: dict[str, float] = {}
    for no, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        rec = next(csv.reader([line]))
        if len(rec) < len(header) - 1:  # the 2.6 header ends in a comma: one empty name
            raise ImportFileError(shown, no, f"{len(rec)} fields, the header has {len(header)}")
        row = dict(zip(header, rec))
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


def convert(path: Path, args) -> "Imported":
    """The registry's entry (routertwin.importers): FILE -> the calibration CSV."""
    from routertwin.importers._lbcommon import as_import

    return as_import(import_file(path, shown=str(path)), args, '.csv')
