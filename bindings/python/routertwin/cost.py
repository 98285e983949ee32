"""Where the twin's cycles come from: counter prices derived from the C core's
own instruction counts, measured on a board by the cost harness, fitted from
the seed rows, or assumed.

- `core/cost/insn_counts.csv` (written by `core/cost/count_insns.py`): the
  instructions each operation of `core/cost/dp_cost` executes on x86-64,
  mips64 and aarch64, with the dp_ops counters per call.
- `derive_instruction_prices`: per counter, instructions per unit by least
  squares over the harness's single operations (`_core.least_squares`, Eigen,
  with standard errors); the intercept is the instructions of one call.
- `derived_cycle_prices`: cycles = instructions x CPI (+ stall cycles per
  cache line), CPI and stall from `scenarios/platforms/core-types.yaml`
  (declared assumptions with ranges).
- `load_results` / `import_profile`: a `dp_cost` JSON document taken on a
  real board, checked field by field (bad input: `CostResultsError`, exit 2,
  nothing written), fitted into measured cycle prices, written as a
  platform profile whose every price says what it is and where it is from.
- `seed002_report`: for the seed-002 1-core rows, how much of each fitted
  per-packet cycle count the core's own code explains, and the packets/s
  the derived prices alone predict.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from routertwin.errors import UserError

COST_FORMAT = "routertwin-cost/1"
ISAS = ("x86_64", "mips64", "mips64-octeon", "aarch64")
TABLE = Path("core/cost/insn_counts.csv")
CORE_TYPES = Path("scenarios/platforms/core-types.yaml")
# Operations a path runs: the number of core calls (the fit's intercept is per call).
PATH_CALLS = {"path_ip4_fwd": 3, "path_l4_nat": 4, "path_dns": 1}
# Largest plausible figure per call: a harness operation is at most a few
# thousand instructions (csum_full_1480 is the longest); 1e6 is absurd.
ABSURD_PER_CALL = 1e6


class CostResultsError(UserError):
    """A cost-harness results file (dp_cost JSON) cannot be imported."""


def counter_names() -> tuple[str, ...]:
    """The dp_ops counters of the core this package was built with."""
    from routertwin import _core

    return tuple(_core.ops_counter_names())


# ------------------------------------------------------------------ table --

def read_insn_table(root: Path) -> list[dict]:
    path = root / TABLE
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def table_ops(rows: list[dict]) -> dict[str, dict[str, float]]:
    """{op: {counter: per call}} (the same on every ISA: count_insns checks it)."""
    out: dict[str, dict[str, float]] = {}
    for r in rows:
        out.setdefault(r["op"], {k[:-len("_per_call")]: float(v) for k, v in r.items()
                                 if k.endswith("_per_call") and k != "insns_per_call"})
    return out


def table_area(rows: list[dict]) -> dict[str, str]:
    return {r["op"]: r["area"] for r in rows}


def table_insns(rows: list[dict], isa: str) -> dict[str, float]:
    return {r["op"]: float(r["insns_per_call"]) for r in rows if r["isa"] == isa}


# ------------------------------------------------------------------ fits --

@dataclass
class Price:
    """One price: value per unit, its standard error, and what it is."""
    value: float
    stderr: float | None
    kind: str        # derived | measured | fitted | assumed | not identified
    source: str

    def shown(self, digits: int = 3) -> str:
        if self.kind == "not identified":
            return "-"
        v = f"{self.value:.{digits}g}"
        if self.stderr is not None and math.isfinite(self.stderr):
            v += f" ± {self.stderr:.2g}"
        return v


@dataclass
class PriceFit:
    """Least squares of y per call on [1, counters per call] over operations."""
    call: Price                       # per call (the intercept)
    per_counter: dict[str, Price]
    ops: list[str]
    residual_pct: dict[str, float] = field(default_factory=dict)  # per op, fitted vs observed

    def predict(self, counters: dict[str, float], calls: float) -> float:
        return self.call.value * calls + sum(p.value * counters.get(c, 0.0) for c, p in self.per_counter.items()
                                             if p.kind != "not identified")


def fit_prices(ys: dict[str, float], ops: dict[str, dict[str, float]], names: tuple[str, ...], kind: str,
               source: str) -> PriceFit:
    """Relative least squares (each operation weighted by 1/y, so that a
    1480-byte checksum does not drown a 10-instruction update) of y per call
    on an intercept and the counters per call; counters no operation
    exercises, or that the operations cannot tell apart, are 'not
    identified'. Standard errors from Eigen's covariance."""
    from routertwin import _core

    order = [o for o in ys if ys[o] > 0]
    A = np.array([[1.0] + [ops[o].get(c, 0.0) for c in names] for o in order])
    b = np.array([ys[o] for o in order])
    w = 1.0 / b
    fit = _core.least_squares(A * w[:, None], b * w)
    x, se, ident = fit["x"], fit["stderr"], fit["identified"]

    def price(i: int) -> Price:
        if not ident[i]:
            return Price(0.0, None, "not identified", "no harness operation separates it")
        return Price(float(x[i]), float(se[i]), kind, source)

    pf = PriceFit(price(0), {c: price(i + 1) for i, c in enumerate(names)}, order)
    for o in order:
        pf.residual_pct[o] = 100.0 * (pf.predict(ops[o], 1.0) - ys[o]) / ys[o]
    return pf


def derive_instruction_prices(rows: list[dict], isa: str = "mips64") -> PriceFit:
    """Instructions per unit of each counter, from the single operations of
    the table (paths are kept out: they are the held-out check)."""
    area = table_area(rows)
    ys = {o: v for o, v in table_insns(rows, isa).items() if area[o] != "path"}
    names = tuple(k[:-len("_per_call")] for k in rows[0] if k.endswith("_per_call") and k != "insns_per_call")
    return fit_prices(ys, table_ops(rows), names, "derived",
                      f"{TABLE} ({isa}), least squares over {len(ys)} operations")


def load_core_types(root: Path) -> dict:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load((root / CORE_TYPES).read_text(encoding="utf-8"))


def core_type_of(root: Path, platform: str) -> dict:
    ct = load_core_types(root)
    name = ct["platforms"].get(platform)
    if name is None:
        raise UserError(f"{CORE_TYPES}: platform '{platform}' has no core type")
    return {"name": name, **ct["core_types"][name]}


def derived_cycle_prices(insn: PriceFit, cpi: float, stall: float) -> dict[str, float]:
    """Cycles per unit: instructions per unit x CPI, plus the stall on cache_lines."""
    out = {"call": insn.call.value * cpi}
    for c, p in insn.per_counter.items():
        if p.kind == "not identified":
            continue
        out[c] = p.value * cpi + (stall if c == "cache_lines" else 0.0)
    return out


# --------------------------------------------------------------- results --

@dataclass
class Results:
    path: Path
    doc: dict
    emulated: bool
    cycles_per_call: dict[str, float]   # noop subtracted
    cycles_basis: str


def _err(path: Path, field_name: str, msg: str) -> CostResultsError:
    return CostResultsError(f"{path}: field '{field_name}': {msg}")


def load_results(path: Path, rows: list[dict], clock_hz: float | None = None) -> Results:
    """Reads and checks a dp_cost results file against this core (the
    table's operations and their counters); raises CostResultsError naming
    the file and the field."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CostResultsError(f"{path}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CostResultsError(f"{path}: not a JSON document ({e})") from None
    if not isinstance(doc, dict):
        raise _err(path, "(top)", "expected a JSON object")
    for key in ("format", "isa", "cpu", "environment", "compiler", "flags", "commit", "counters", "ops",
                "tick_register", "tick_hz", "cycles_per_tick"):
        if key not in doc:
            raise _err(path, key, "missing")
    if doc["format"] != COST_FORMAT:
        raise _err(path, "format", f"{doc['format']!r} is not {COST_FORMAT!r} (another harness version: "
                                   "rebuild dp_cost from this tree)")
    if doc["isa"] not in ISAS:
        raise _err(path, "isa", f"unknown ISA {doc['isa']!r} (known: {', '.join(ISAS)})")
    names = tuple(k[:-len("_per_call")] for k in rows[0] if k.endswith("_per_call") and k != "insns_per_call")
    if tuple(doc["counters"]) != names:
        raise _err(path, "counters", f"{doc['counters']} do not match this core's counters {list(names)}: "
                                     "the board ran another core version")
    expected = table_ops(rows)
    got = {}
    if not isinstance(doc["ops"], list):
        raise _err(path, "ops", "expected a list")
    for i, o in enumerate(doc["ops"]):
        where = f"ops[{i}]"
        if not isinstance(o, dict) or "name" not in o:
            raise _err(path, where, "expected an object with a name")
        where = f"ops[{i}] ({o['name']})"
        calls = o.get("calls")
        if not isinstance(calls, int) or isinstance(calls, bool) or calls < 1:
            raise _err(path, f"{where}.calls", f"{calls!r} is not a positive integer")
        for k in ("ticks", "cycles", "instructions"):
            v = o.get(k)
            if v is None:
                continue
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
                raise _err(path, f"{where}.{k}", f"{v!r} is not a non-negative number")
            if v / calls > ABSURD_PER_CALL * max(1, doc.get("cycles_per_tick") or 1):
                raise _err(path, f"{where}.{k}", f"{v / calls:.3g} per call is absurd (> {ABSURD_PER_CALL:g})")
        counts = o.get("ops")
        if not isinstance(counts, dict):
            raise _err(path, f"{where}.ops", "missing")
        if o["name"] in expected:
            for c in names:
                v = counts.get(c)
                if not isinstance(v, (int, float)) or v < 0:
                    raise _err(path, f"{where}.ops.{c}", f"{v!r} is not a non-negative count")
                want = expected[o["name"]][c]
                if not math.isclose(v / calls, want, rel_tol=1e-5, abs_tol=1e-9):
                    raise _err(path, f"{where}.ops.{c}", f"{v / calls:.6g} per call, this core counts {want:.6g}: "
                                                         "the counters do not match the core's version")
        got[o["name"]] = o
    for op in list(expected) + ["noop"]:
        if op not in got:
            raise _err(path, "ops", f"operation '{op}' is missing (run dp_cost without --only)")
    env = str(doc["environment"])
    emulated = any(w in env.lower() for w in ("qemu", "valgrind", "emulat"))
    # Cycles: perf's core cycles if the kernel gave them, else the tick
    # register scaled to core cycles where the hardware says how.
    if all(got[o].get("cycles") is not None for o in got):
        raw = {o: float(got[o]["cycles"]) for o in got}
        basis = "perf core cycles (PERF_COUNT_HW_CPU_CYCLES)"
    else:
        if any(got[o].get("ticks") is None for o in got):
            raise _err(path, "ops[*].ticks", "no cycles and no ticks: this target cannot be timed")
        cpt, hz = doc["cycles_per_tick"], doc["tick_hz"]
        for k, v in (("cycles_per_tick", cpt), ("tick_hz", hz)):
            if not isinstance(v, (int, float)) or v < 0 or not math.isfinite(v):
                raise _err(path, k, f"{v!r} is not a non-negative number")
        if cpt:
            raw = {o: float(got[o]["ticks"]) * cpt for o in got}
            basis = f"{doc['tick_register']} x {cpt} cycles per tick"
        elif hz:
            if not clock_hz:
                raise _err(path, "tick_hz", "ticks are timer ticks: the platform's clock is needed to convert")
            raw = {o: float(got[o]["ticks"]) / hz * clock_hz for o in got}
            basis = f"{doc['tick_register']} at {hz:g} Hz x core clock {clock_hz:g} Hz"
        else:
            raw = {o: float(got[o]["ticks"]) for o in got}
            basis = f"{doc['tick_register']} ticks taken as core cycles (assumption: constant-rate TSC at the core clock)"
    noop = raw["noop"] / got["noop"]["calls"]
    per_call = {o: raw[o] / got[o]["calls"] - noop for o in got if o != "noop"}
    for o, v in per_call.items():
        if o in expected and v <= 0:
            raise _err(path, f"ops ({o}).cycles", f"{v:.3g} cycles per call after the harness overhead: "
                                                  "not a plausible measurement")
    return Results(path, doc, emulated, per_call, basis)


# --------------------------------------------------------------- profile --

def import_profile(results: Results, rows: list[dict], platform_path: Path, out: Path | None, root: Path):
    """Fits measured cycle prices from a board's results; returns (table
    rows for display, the profile text). Writes out only when given."""
    from ruamel.yaml import YAML

    text = platform_path.read_text(encoding="utf-8")
    base = YAML(typ="safe").load(text)
    area = table_area(rows)
    names = tuple(k[:-len("_per_call")] for k in rows[0] if k.endswith("_per_call") and k != "insns_per_call")
    single = {o: v for o, v in results.cycles_per_call.items() if area.get(o) not in (None, "path")}
    label = "emulated (qemu/valgrind: NOT a hardware measurement)" if results.emulated else "measured"
    src = (f"{results.path.name}: dp_cost on {results.doc['cpu']} ({results.doc['isa']}, "
           f"{results.doc['environment']}, core {results.doc['commit']}), {results.cycles_basis}")
    measured = fit_prices(single, table_ops(rows), names, label, src)
    insn = derive_instruction_prices(rows, "mips64")
    try:
        ct = core_type_of(root, base.get("platform", ""))
        derived = derived_cycle_prices(insn, ct["cpi"], ct["stall_cycles_per_line"])
        derived_src = f"mips64 instructions x CPI {ct['cpi']} + {ct['stall_cycles_per_line']} per line ({ct['name']})"
    except UserError:
        derived, derived_src = {}, "no core type for this platform"
    current = base.get("counter_cycles") or {}
    table = []
    for c in ("call",) + names:
        p = measured.call if c == "call" else measured.per_counter[c]
        cur = current.get(c)
        table.append({"price": c,
                      "current": "-" if cur is None else f"{cur:g} (assumed)",
                      "derived": "-" if c not in derived else f"{derived[c]:.3g}",
                      "board": p.shown(),
                      "kind": p.kind})
    lines = [f"# Platform profile {base.get('platform')} with counter prices from a cost-harness run.",
             f"# Base profile: {platform_path}. Prices below: {label}, {src};",
             "# least squares of cycles per call over the harness's single operations (Eigen), +- one standard error.",
             "# `call` (cycles per core call) is not a counter: it is listed here as a comment only."]
    if results.emulated:
        lines.append("# EMULATED RUN: these figures come from an emulator, not hardware; do not plan with them.")
    lines.append(f"#   call: {measured.call.shown()}")
    body = []
    skip = False
    in_ranges = False
    for ln in text.splitlines():
        if ln.startswith("counter_cycles:"):
            skip = True
            continue
        if skip and (ln.startswith(" ") or not ln.strip()):
            continue
        skip = False
        if ln and not ln[0].isspace() and not ln.startswith("#"):
            in_ranges = ln.startswith("assumption_ranges:")
        if in_ranges and ln.lstrip().startswith("counter_cycles."):
            continue  # the prices are measured now: an assumed price's range no longer applies
        body.append(ln)
    body.append(f"counter_cycles:       # {label}: {results.path.name} ({results.doc['isa']}, core {results.doc['commit']})")
    for c in names:
        p = measured.per_counter[c]
        if p.kind == "not identified":
            body.append(f"  # {c}: not identified by the harness's operations (no price)")
            continue
        v = max(0.0, p.value)
        note = "" if p.value >= 0 else (f" (fit {p.value:.3g} < 0, clamped to 0; "
                                        + ("within 2 s.e. of 0)" if p.stderr is not None and -p.value < 2 * p.stderr
                                           else "NOT within 2 s.e. of 0: check the run)"))
        body.append(f"  {c}: {v:.6g}   # {label}: {p.shown()} cycles per unit{note}; derived "
                    f"{derived.get(c, float('nan')):.3g} ({derived_src})")
    profile = "\n".join(lines + body) + "\n"
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(profile, encoding="utf-8")
    return table, measured, profile


# ---------------------------------------------------------- seed 002 report --

# What the core does not model, per Octeon cost set (seed 002 workloads).
NOT_MODELLED = {
    "se": "SSO work scheduling (get_work, tag switch), WQE and buffer handling, PKO packet output and buffer "
          "free; PIP/IPD parse and check the headers in hardware, which the core redoes in software",
    "linux": "the Linux stack: NAPI receive, skb allocation, netfilter hooks, FIB, qdisc and driver transmit",
    "linux_offload": "the octeon-ethernet receive hook, per-core PKO transmit and the Linux softirq around it",
    "ipsec": "AES-128-CBC and HMAC-SHA1 (crypto unit), ESP encapsulation and SA lookup, plus work scheduling "
             "and packet output",
    "l2": "everything: L2 passthrough runs none of the core's IP code, only work scheduling and packet I/O",
}
# The core path that each cost set's per-packet work runs.
CORE_PATH = {"se": "path_ip4_fwd", "linux": "path_ip4_fwd", "linux_offload": "path_ip4_fwd",
             "ipsec": "path_ip4_fwd", "l2": None}
WORKLOAD = {"se": "ipfwd-se.yaml", "linux": "ipfwd-linux.yaml", "linux_offload": "ipfwd-linux-offload.yaml",
            "ipsec": "ipsec-esp-aes128-sha1.yaml", "l2": "l2-passthrough.yaml"}
ONE_CORE_ROWS = {
    ("cn68xx-1500-ddr3-1066", "se"): "cn68-se-64b-1c",
    ("cn78xx-1800-ddr4-1866", "se"): "cn78-se-64b-1c",
    ("cn68xx-1300-ddr3-1333", "linux"): "cn68-linux-64b-1c",
    ("cn68xx-1300-ddr3-1333", "linux_offload"): "cn68-linuxoff-64b-1c",
    ("cn78xx-1800-ddr4-1866", "l2"): "cn78-l2-64b-1c",
    ("cn68xx-1300-ddr3-1066", "ipsec"): "cn68-ipsec-64b-1c",
    ("cn78xx-1800-ddr4-2100", "ipsec"): "cn78-ipsec-64b-1c",
}


def seed002_report(root: Path) -> list[dict]:
    """Per seed-002 1-core (64-byte) calibrate row: the fitted cycles per
    packet (fixed + priced counters, as the twin runs it), the cycles the
    core's own code accounts for (the path's counters priced by the derived
    prices, at CPI low/mid/high), the share explained, and the packets/s the
    derived prices alone predict. Reads only calibrate rows' fitted costs;
    the reference figure is shown, never used."""
    from ruamel.yaml import YAML

    rows = read_insn_table(root)
    insn = derive_instruction_prices(rows, "mips64")
    ops = table_ops(rows)
    fitted = YAML(typ="safe").load((root / "scenarios/platforms/fitted/octeon.yaml").read_text())["params"]
    out = []
    for (platform, key), row in ONE_CORE_ROWS.items():
        prof = YAML(typ="safe").load((root / f"scenarios/platforms/{platform}.yaml").read_text())
        clock = float(prof["cores"]["clock_hz"])
        wl = YAML(typ="safe").load((root / f"scenarios/workloads/{WORKLOAD[key]}").read_text())
        per_packet = wl.get("ops_per_packet") or {}
        priced = sum(float(v) * float(per_packet.get(c, 0)) for c, v in (prof.get("counter_cycles") or {}).items())
        fixed = float(fitted[f"cost.{platform}.{key}.fixed_cycles"]["value"])
        total_fitted = fixed + priced
        if key == "ipsec":
            # 64-byte frames: 48 encrypted + 72 authenticated bytes (docs/octeon.md ESP table)
            total_fitted += 120 * float(fitted[f"cost.{platform}.{key}.crypto_byte_cycles"]["value"])
        ct = core_type_of(root, platform)
        path = CORE_PATH[key]
        res = {"row": row, "platform": platform, "cost": key, "fitted_cycles": total_fitted,
               "core_path": path or "-", "not_modelled": NOT_MODELLED[key], "core_type": ct["name"]}
        for tag, cpi, stall in (("low", ct["cpi_low"], ct["stall_low"]), ("mid", ct["cpi"], ct["stall_cycles_per_line"]),
                                ("high", ct["cpi_high"], ct["stall_high"])):
            if path is None:
                cyc = 0.0
            else:
                prices = derived_cycle_prices(insn, cpi, stall)
                c = ops[path]
                cyc = prices["call"] * PATH_CALLS[path] + sum(prices[k] * c.get(k, 0.0) for k in prices if k != "call")
            res[f"derived_cycles_{tag}"] = cyc
            res[f"explained_pct_{tag}"] = 100.0 * cyc / total_fitted
            res[f"derived_pps_{tag}"] = clock / cyc if cyc > 0 else math.inf
        res["fitted_pps"] = clock / total_fitted
        out.append(res)
    return out


def derived_cells(root: Path) -> dict[str, str]:
    """{row id: text} for the validation report's derived-only column: the
    1-core packets/s the derived prices alone predict (CPI low / mid /
    high) and the share of the fitted per-packet cycles they explain."""
    out = {}
    for x in seed002_report(root):
        if x["derived_cycles_mid"] == 0:
            out[x["row"]] = "core runs no code on this path (0%)"
            continue
        pps = " / ".join(f"{x[f'derived_pps_{k}'] / 1e6:.2f}" for k in ("low", "mid", "high"))
        expl = " / ".join(f"{x[f'explained_pct_{k}']:.0f}" for k in ("low", "mid", "high"))
        out[x["row"]] = f"{pps} Mpps; explains {expl}% of {x['fitted_cycles']:.0f} fitted cycles"
    return out
