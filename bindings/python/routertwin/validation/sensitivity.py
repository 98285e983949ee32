"""Sensitivity of a study's rows to the assumed numbers of its profiles.

From the one-at-a-time assumption runs of `routertwin validate --intervals`
(routertwin.validation.intervals): per study, which assumption moves which
row by how much (in % of the row's twin value, at the low and at the high end
of the assumption's range), whether an end would change a row's pass/fail
(shown, never applied), and the assumption that moves predict rows most:
the next figure worth asking a lab to measure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from routertwin.validation.intervals import Effect

# A row counts as moved by an assumption when an end changes it by more than
# this (% of the twin value): below it, a change is rounding or noise-free
# numerical jitter, not an effect worth naming.
MOVED_PCT = 0.5


@dataclass
class RowEffect:
    row: object  # replay.RowResult
    effect: Effect

    @property
    def deltas(self) -> tuple[float | None, float | None]:
        return self.effect.delta_pct(self.row.twin)

    @property
    def swing(self) -> float:
        return self.effect.swing_pct(self.row.twin)

    def flips(self) -> list[str]:
        """The ends at which the row's pass/fail would differ from the nominal
        one (informative: the verdict stays the nominal value's)."""
        from routertwin.validation.replay import passes

        out = []
        for end, v in (("low", self.effect.low), ("high", self.effect.high)):
            if v is not None and passes(self.row.ref, self.row.mapped, v) != (self.row.status == "pass"):
                out.append(end)
        return out


@dataclass
class AssumptionSensitivity:
    name: str  # <profile>:<path>
    assumption: object  # routertwin.assumptions.Assumption
    rows: list[RowEffect] = field(default_factory=list)

    def _predict(self) -> list[RowEffect]:
        return [e for e in self.rows if e.row.ref.role == "predict"]

    @property
    def biggest(self) -> RowEffect | None:
        """The predict row it moves most (consistency checks included: they
        are replayed predictions of a number chosen knowing them)."""
        pred = self._predict()
        return max(pred, key=lambda e: (e.swing, e.row.ref.id)) if pred else None

    @property
    def swing(self) -> float:
        b = self.biggest
        return b.swing if b is not None else 0.0

    @property
    def moved(self) -> list[RowEffect]:
        return [e for e in self._predict() if e.swing > MOVED_PCT]

    @property
    def calibrate_moved(self) -> list[RowEffect]:
        """Calibrate rows it moves: after a refit these should stay put; one
        that moves says the fit does not pin that row (or no refit ran)."""
        return [e for e in self.rows if e.row.ref.role == "calibrate" and e.swing > MOVED_PCT]

    @property
    def flipping(self) -> list[tuple[str, list[str]]]:
        return [(e.row.ref.id, f) for e in self.rows if (f := e.flips())]


def study_sensitivity(rows) -> list[AssumptionSensitivity]:
    """Every assumption that reaches a row of the study, biggest predict swing first."""
    by: dict[str, AssumptionSensitivity] = {}
    for r in rows:
        if r.interval is None:
            continue
        for e in r.interval.effects:
            s = by.setdefault(e.assumption.name, AssumptionSensitivity(e.assumption.name, e.assumption))
            s.rows.append(RowEffect(r, e))
    return sorted(by.values(), key=lambda s: (-s.swing, s.name))


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:+.2g}%"


def _range(a) -> str:
    from routertwin.results import fmt

    return f"{fmt(a.low)}–{fmt(a.high)} (nominal {fmt(a.nominal)})"


def next_measurement(sens: list[AssumptionSensitivity]) -> AssumptionSensitivity | None:
    """The assumption whose range moves predict rows most, if any moves one."""
    return sens[0] if sens and sens[0].swing > 0 else None


def summary_lines(by_study: dict[str, list]) -> list[str]:
    """One line per study for the terminal."""
    out = []
    for study, rows in by_study.items():
        sens = study_sensitivity(rows)
        if not any(r.interval is not None for r in rows):
            continue
        top = next_measurement(sens)
        if top is None:
            out.append(f"{study}: no assumption of its profiles moves a predict row")
            continue
        b = top.biggest
        lo, hi = b.deltas
        out.append(f"{study}: {top.name} moves predict rows most: {b.row.ref.id} {_pct(lo)} at low / {_pct(hi)} at "
                   f"high ({len(top.moved)} rows moved > {MOVED_PCT:g}%); next measurement to ask a lab for")
    return out


def markdown_overview(by_study: dict[str, list]) -> list[str]:
    """The table naming, per study, the assumption whose range moves predict rows most."""
    out = ["## Sensitivity: the next measurement to ask for", "",
           "Per study, the assumed number whose plausible range moves the study's predict rows most "
           "(one at a time, each end of its range, fits redone; docs/validation.md \"Intervals\").", "",
           "| study | assumption | range | largest move (row: low / high end) | predict rows moved > "
           f"{MOVED_PCT:g}% | rows whose pass/fail an end would change |", "|---|---|---|---|---|---|"]
    for study, rows in by_study.items():
        if not any(r.interval is not None for r in rows):
            continue
        top = next_measurement(study_sensitivity(rows))
        if top is None:
            out.append(f"| {study} | none moves a predict row | | | 0 | |")
            continue
        b = top.biggest
        lo, hi = b.deltas
        flips = ", ".join(f"{rid} ({'/'.join(ends)})" for rid, ends in top.flipping) or "none"
        out.append(f"| {study} | `{top.name}` | {_range(top.assumption)} | {b.row.ref.id}: {_pct(lo)} / {_pct(hi)} | "
                   f"{len(top.moved)} | {flips} |")
    return out


def markdown_study(rows, top_n: int = 12) -> list[str]:
    """A study's sensitivity table: assumptions by their largest predict move."""
    sens = study_sensitivity(rows)
    if not sens:
        return []
    out = ["", f"Sensitivity (each assumption at the ends of its range, one at a time; the {top_n} that move "
                "predict rows most; calibrate rows should stay put after the refit):", "",
           "| assumption | range | why that range | largest move (row: low / high) | predict rows moved | "
           "calibrate rows moved | pass/fail changed at an end | refitted |", "|---|---|---|---|---|---|---|---|"]
    for s in sens[:top_n]:
        b = s.biggest
        move = "—" if b is None else f"{b.row.ref.id}: {_pct(b.deltas[0])} / {_pct(b.deltas[1])}"
        refit = sorted({st for e in s.rows for st in e.effect.refitted})
        flips = ", ".join(f"{rid} ({'/'.join(ends)})" for rid, ends in s.flipping) or "—"
        out.append(f"| `{s.name}` | {_range(s.assumption)} | {s.assumption.why.replace('|', '/')} | {move} | "
                   f"{len(s.moved)} | {len(s.calibrate_moved)} | {flips} | {', '.join(refit) or 'no'} |")
    rest = [s for s in sens[top_n:]]
    if rest:
        still = [s for s in rest if s.swing > 0]
        out += ["", f"{len(rest)} more assumptions reach this study's rows"
                    + (f"; the largest of them moves a predict row by {still[0].swing:.2g}%." if still
                       else " and move no predict row.")]
    return out
