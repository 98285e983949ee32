"""Progress on stderr: a rich bar on a terminal; plain status lines otherwise.

Runners receive a `Progress` and call `set_total(n)` once they know how many
steps (cases, windows) they will run, then `advance()` after each. When stderr
is not a terminal (CI, pipes) a plain line is printed at most every
`interval` seconds and once at the end, so long jobs still show they are alive.
Progress never touches results: wall-clock time appears only on stderr.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(
        self,
        label: str = "",
        total: int | None = None,
        *,
        stream: TextIO | None = None,
        enabled: bool = True,
        interval: float = 10.0,
    ):
        self.label = label
        self.total = total
        self.done = 0
        self.status = ""
        self._stream = stream if stream is not None else sys.stderr
        self._enabled = enabled
        self._interval = interval
        self._last_line = time.monotonic()
        self._shown = 0  # `done` at the last plain line
        self._rich = None
        self._task = None
        if enabled and self._stream.isatty():
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, TextColumn,
                                       TimeElapsedColumn)
            from rich.progress import Progress as RichProgress

            self._rich = RichProgress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[status]}"),
                console=Console(file=self._stream),
                transient=True,
            )
            self._rich.start()
            self._task = self._rich.add_task(label, total=total, status="")

    def set_total(self, total: int) -> None:
        self.total = total
        if self._rich is not None:
            self._rich.update(self._task, total=total)

    def restart(self, total: int | None = None, status: str = "") -> None:
        """Count a new phase of the same work from 0 (e.g. preparing, then running)."""
        self.done = 0
        self._shown = 0
        self.total = total
        self.status = status
        if self._rich is not None:
            self._rich.update(self._task, completed=0, total=total, status=status)

    def advance(self, n: int = 1, status: str = "") -> None:
        self.done += n
        self.status = status
        if self._rich is not None:
            self._rich.update(self._task, advance=n, status=status)
        elif self._enabled and time.monotonic() - self._last_line >= self._interval:
            self._line()

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()
            self._rich = None
        elif self._enabled and self.done != self._shown:
            self._line()
        self._enabled = False

    def _line(self) -> None:
        total = f"/{self.total}" if self.total is not None else ""
        status = f" {self.status}" if self.status else ""
        print(f"{self.label}: {self.done}{total}{status}", file=self._stream, flush=True)
        self._last_line = time.monotonic()
        self._shown = self.done

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def silent() -> Progress:
    """A Progress that shows nothing (worker processes of a sweep, tests)."""
    return Progress(enabled=False)
