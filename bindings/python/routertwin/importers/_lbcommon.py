"""What the load-balancer importers share: the error they raise, the list of
what they did not model, and writing the scenario they build."""

from __future__ import annotations

import io
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ruamel.yaml import YAML

from routertwin.errors import UserError


class ImportFileError(UserError):
    """A configuration the importer cannot read: `FILE:LINE: message`."""

    def __init__(self, shown: str, line: int | None, message: str):
        super().__init__(f"{shown}:{line}: {message}" if line else f"{shown}: {message}")
        self.line = line


@dataclass(frozen=True)
class NotModelled:
    """A line of the configuration (or part of one) the scenario does not carry."""

    file: str
    line: int
    text: str  # the directive as written (whitespace collapsed)
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: not modelled: {self.text}  ({self.reason})"


@dataclass
class Imported:
    """An importer's result: the scenario (plain data, as YAML would load it)
    and every directive it does not carry, in file order."""

    scenario: dict
    not_modelled: list[NotModelled] = field(default_factory=list)
    source: str = ""  # what was imported, as the user named it

    def check_strict(self) -> None:
        """--strict: an unmodelled directive is an error (the first one, and how many)."""
        if self.not_modelled:
            first = self.not_modelled[0]
            more = len(self.not_modelled) - 1
            raise ImportFileError(first.file, first.line,
                                  f"not modelled (--strict): {first.text} ({first.reason})"
                                  + (f"; and {more} more" if more else ""))

    def text(self) -> str:
        """The scenario as YAML, headed by the list of what it does not carry."""
        head = [f"Imported from {self.source} by routertwin import.",
                "Edit freely: `routertwin run` checks every key when it loads the file."]
        if self.not_modelled:
            head.append(f"Not modelled ({len(self.not_modelled)} directives; --strict makes them errors):")
            head += [f"  {n.file}:{n.line}: {n.text}  ({n.reason})" for n in self.not_modelled]
        else:
            head.append("Every directive is modelled.")
        yaml = YAML()
        yaml.default_flow_style = None
        yaml.width = 120
        buf = io.StringIO()
        yaml.dump(self.scenario, buf)
        return "".join(f"# {h}\n" for h in head) + buf.getvalue()


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all (a temporary file renamed)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_text(path: Path, shown: str) -> list[str]:
    """The file's lines; a byte that is not UTF-8 is an error naming its line."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ImportFileError(shown, None, f"cannot read: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    out = []
    for i, raw in enumerate(lines, 1):
        try:
            out.append(raw.decode("utf-8").rstrip("\r"))
        except UnicodeDecodeError as exc:
            raise ImportFileError(shown, i, f"not UTF-8 text (byte {raw[exc.start]:#04x} at column {exc.start + 1})") \
                from None
    if out and out[-1] == "":
        out.pop()
    return out
