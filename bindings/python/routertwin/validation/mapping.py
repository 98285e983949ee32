"""validation/mapping/<study>.yaml: which reference rows a study replays, from
which scenario case and metric, within which tolerance and why; plus the
scaling plots the study wants in the report. Format: docs/validation.md.

Every mistake is one MappingError line naming file, line and key: unknown row
id (with the closest id), row mapped twice, missing tolerance or reason,
scenario file not found, percentage tolerance on a zero reference.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

import pydantic
from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, model_validator

from routertwin.errors import MappingError
from routertwin.project import display_path
from routertwin.scenario_loader import Locator, parse_yaml, plain
from routertwin.validation.reference import ReferenceRow, load_reference, reference_path

NAME = r"^[a-z0-9][a-z0-9_-]*$"


class RowSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scenario: str  # scenario file, relative to the project root
    case: str  # CaseResult.case of that scenario
    metric: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$")  # default: the row's metric
    tolerance_pct: NonNegativeFloat | None = None  # |twin - ref| / |ref| * 100 must not exceed it
    tolerance_abs: NonNegativeFloat | None = None  # or |twin - ref| must not exceed it (zero references)
    reason: str = Field(min_length=1)  # why this tolerance
    # True when a number the twin uses to replay this row was chosen knowing
    # the row's value (a predict row that informed the model): the row is
    # still judged, but reported as a consistency check and kept out of the
    # predict statistics, which must measure predictions only.
    consistency_check: bool = False
    # The same cases on another engine (e.g. scenarios/nctu/ns3/ beside an
    # MVA row): run beside the row's scenario, never judged; its case of the
    # row's id gives the distribution behind the row's mean in the report's
    # distribution table and plots, where the row's own engine has none.
    distribution_scenario: str | None = None

    @model_validator(mode="after")
    def _one_tolerance(self):
        if (self.tolerance_pct is None) == (self.tolerance_abs is None):
            raise ValueError("give exactly one of 'tolerance_pct' and 'tolerance_abs'")
        return self


class RefPoint(BaseModel):
    """A point of a reference line: x from a row's value, y from a row's
    value or a number given here (a figure the seed states in a row's
    condition, cited beside it)."""

    model_config = ConfigDict(extra="forbid")

    x_row: str
    y_row: str | None = None
    y: float | None = None

    @model_validator(mode="after")
    def _one_y(self):
        if (self.y_row is None) == (self.y is None):
            raise ValueError("give exactly one of 'y_row' and 'y'")
        return self


class RefLine(BaseModel):
    """The reference's own line through its points (least squares; two points:
    the line through them), drawn from x = 0 to the largest point: e.g. a
    report's extrapolation of CPU % to 100 %."""

    model_config = ConfigDict(extra="forbid")

    label: str
    points: list[RefPoint] = Field(min_length=2)


class PlotSpec(BaseModel):
    """A scaling curve: a case metric (y) against a case parameter (x), one
    line per value of `series`, with this study's mapped reference rows of
    the same scenario and metric drawn on top."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME)  # file: <study>-<name>.png
    scenario: str  # relative to the project root
    x: str  # CaseResult.params key
    y: str  # CaseResult.metrics key
    series: str | None = None  # CaseResult.params key
    where: dict[str, str | int | float | bool] = {}  # only cases whose params have these values
    title: str | None = None
    log_x: bool = False
    log_y: bool = False
    reference_line: RefLine | None = None


class MappingFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    study: str = Field(pattern=NAME)
    rows: dict[str, RowSpec] = {}
    plots: list[PlotSpec] = []


@dataclass(frozen=True)
class MappedRow:
    study: str
    id: str
    scenario: Path  # absolute
    case: str
    metric: str
    tolerance_pct: float | None
    tolerance_abs: float | None
    reason: str
    where: str  # "FILE:LINE" of the row in the mapping
    metric_where: str  # "FILE:LINE" of its metric (or of the row when defaulted)
    consistency_check: bool = False  # see RowSpec.consistency_check
    distribution_scenario: Path | None = None  # absolute; see RowSpec.distribution_scenario

    def tolerance_text(self) -> str:
        if self.tolerance_pct is not None:
            return f"{self.tolerance_pct:g}%"
        return f"±{self.tolerance_abs:g}"


@dataclass(frozen=True)
class Plot:
    study: str
    spec: PlotSpec
    scenario: Path  # absolute
    where: str


@dataclass
class Mapping:
    study: str
    path: Path
    rows: dict[str, MappedRow] = field(default_factory=dict)
    plots: list[Plot] = field(default_factory=list)


def mapping_dir(root: Path) -> Path:
    return Path(root) / "validation" / "mapping"


def load_mapping(path: Path, root: Path, reference: dict[str, ReferenceRow]) -> Mapping:
    path = Path(path)
    shown = display_path(path, root)
    doc = parse_yaml(path.read_text(encoding="utf-8"), shown, MappingError)
    if doc is None:
        raise MappingError(f"{shown}:1: empty mapping file")
    where = Locator(doc, shown)
    try:
        spec = MappingFile.model_validate(plain(doc))
    except pydantic.ValidationError as exc:
        raise MappingError(where.explain(exc, MappingFile)) from None
    if spec.study != path.stem:
        raise MappingError(where.line_of(("study",)) + f"key 'study': must be the file's name '{path.stem}'")

    def scenario_file(rel: str, loc: tuple) -> Path:
        p = (Path(root) / rel).resolve()
        if not p.is_file():
            key = ".".join(str(x) for x in loc)
            raise MappingError(where.line_of(loc) + f"key '{key}': scenario file not found: {rel}")
        return p

    out = Mapping(spec.study, path)
    declared: dict[Path, frozenset[str] | None] = {}
    for rid, row in spec.rows.items():
        loc = ("rows", rid)
        if rid not in reference:
            close = difflib.get_close_matches(rid, list(reference), n=1, cutoff=0.6)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise MappingError(where.line_of(loc) + f"key 'rows.{rid}': unknown reference row id{hint}")
        if row.tolerance_pct is not None and reference[rid].value == 0:
            raise MappingError(where.line_of((*loc, "tolerance_pct")) + f"key 'rows.{rid}.tolerance_pct': "
                               "the reference value is 0, so a percentage means nothing; use tolerance_abs")
        metric_loc = (*loc, "metric") if row.metric is not None else loc
        scenario = scenario_file(row.scenario, (*loc, "scenario"))
        metric = row.metric or reference[rid].metric
        if scenario not in declared:
            declared[scenario] = _declared_metrics(scenario)
        known = declared[scenario]
        if known is not None and metric not in known:
            close = difflib.get_close_matches(metric, sorted(known), n=1, cutoff=0.6)
            hint = f"; did you mean '{close[0]}'?" if close else f" (it reports: {', '.join(sorted(known))})"
            raise MappingError(where.line_of(metric_loc) + f"key 'rows.{rid}.metric': unknown metric '{metric}' "
                               f"for the runner of {row.scenario}{hint}")
        out.rows[rid] = MappedRow(
            study=spec.study, id=rid, scenario=scenario,
            case=row.case, metric=metric,
            tolerance_pct=row.tolerance_pct, tolerance_abs=row.tolerance_abs, reason=row.reason,
            where=f"{shown}:{where.line(loc)}", metric_where=f"{shown}:{where.line(metric_loc)}",
            consistency_check=row.consistency_check,
            distribution_scenario=(scenario_file(row.distribution_scenario, (*loc, "distribution_scenario"))
                                   if row.distribution_scenario is not None else None),
        )
    for i, plot in enumerate(spec.plots):
        loc = ("plots", i)
        out.plots.append(Plot(spec.study, plot, scenario_file(plot.scenario, (*loc, "scenario")),
                              f"{shown}:{where.line(loc)}"))
    return out


def _declared_metrics(scenario: Path) -> frozenset[str] | None:
    """The metric names the scenario's runner declares (module attribute
    METRICS), or None when it declares none or the scenario cannot be read
    (running it reports that, with its own file and line)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from routertwin import runners

    try:
        doc = YAML(typ="safe").load(scenario.read_text(encoding="utf-8"))
        module = runners.get(doc.get("kind") if isinstance(doc, dict) else None)
    except (OSError, YAMLError, runners.UnknownKind):  # the replay names the problem
        return None
    names = getattr(module, "METRICS", None)
    return frozenset(names) if names is not None else None


def load_mappings(root: Path, reference: dict[str, ReferenceRow] | None = None) -> dict[str, Mapping]:
    """Every mapping under validation/mapping/, by study; a row mapped by two
    studies is an error."""
    reference = reference if reference is not None else load_reference(reference_path(root))
    out: dict[str, Mapping] = {}
    first: dict[str, MappedRow] = {}
    for path in sorted(mapping_dir(root).glob("*.yaml")):
        m = load_mapping(path, root, reference)
        for rid, row in m.rows.items():
            if rid in first:
                raise MappingError(f"{row.where}: key 'rows.{rid}': row already mapped at {first[rid].where}")
            first[rid] = row
        out[m.study] = m
    return out
