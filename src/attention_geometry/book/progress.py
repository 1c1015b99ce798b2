"""Progress of a chapter being executed, with an estimate of the time left.

Papermill saves its output notebook as each cell starts and ends, with the
cell's ``status`` and ``duration``. :class:`CellProgress` watches that file
from a background thread and prints a line now and then::

    cesaro: cell 9/31 (running 0:42), 1:05 elapsed, about 6 min left

The time left is measured, not guessed, as soon as the first chunk of work has
run: the cells done so far took ``scale`` times as long as in a reference run
of the same chapter (the book's executed notebook, at the defaults), and the
cells still to run are predicted at that scale -- or at the running cell's,
once it has run longer than its reference time that scale gives (at a paper
preset the setup cells scale little and the heavy ones much). Before that, it is the
chapter's cost model (:class:`~.registry.CostModel`) minus the time elapsed.
"""

import json
import sys
import threading
import time
from pathlib import Path
from typing import Callable

__all__ = ["cell_durations", "format_seconds", "time_left", "CellProgress", "stderr_line"]

INJECTED = "injected-parameters"
FIRST_CHUNK_SECONDS = 1.0  # reference work done before the measured scale is trusted
QUIET_SECONDS = 5.0  # at least this long between two lines announcing finished cells


def _code_cells(nb: dict) -> list[dict]:
    return [c for c in nb.get("cells", []) if c.get("cell_type") == "code"
            and INJECTED not in c.get("metadata", {}).get("tags", [])]


def cell_durations(notebook: Path | str | dict) -> list[float | None]:
    """Each code cell's papermill duration in seconds (``None`` if not run), injected cells left out."""
    nb = notebook if isinstance(notebook, dict) else json.loads(Path(notebook).read_text())
    out = []
    for cell in _code_cells(nb):
        meta = cell.get("metadata", {}).get("papermill", {})
        duration = meta.get("duration")
        out.append(float(duration) if isinstance(duration, (int, float)) and meta.get("status") == "completed"
                   else None)
    return out


def format_seconds(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def time_left(done: list[float], running: float, reference: list[float] | None,
              estimate: float | None, elapsed: float) -> float | None:
    """Seconds left, from the ``done`` cells' durations, the current one's time so far,
    the reference durations (one per cell), or else the cost model's ``estimate``."""
    if reference and len(reference) >= len(done):
        ref_done = sum(reference[:len(done)])
        if ref_done >= FIRST_CHUNK_SECONDS and sum(done) > 0:
            scale = sum(done) / ref_done
            rest = reference[len(done):]
            if rest and rest[0] > 0:  # a running cell already slower than that bounds the scale from below
                scale = max(scale, running / rest[0])
            current = scale * rest[0] - running if rest else 0.0
            return max(current, 0.0) + scale * sum(rest[1:])
    if estimate is not None:
        return max(estimate - elapsed, 0.0)
    return None


def stderr_line(line: str) -> None:
    """Print ``line`` to stderr at once: the default ``report`` of the long commands."""
    print(line, file=sys.stderr, flush=True)


class CellProgress:
    """Print the progress of papermill writing ``notebook`` (see the module).

    ``reference``: durations of the same chapter's code cells in an earlier run;
    ``estimate``: the cost model's total seconds; lines at most every
    ``quiet`` (default ``QUIET_SECONDS``) seconds when a cell finishes, and every ``heartbeat`` seconds
    while one runs. Use as a context manager around the execution."""

    def __init__(self, name: str, notebook: Path, *, reference: list[float] | None = None,
                 estimate: float | None = None, quiet: float | None = None, heartbeat: float = 30.0,
                 poll: float = 0.5, report: Callable[[str], None] = stderr_line):
        self.name, self.notebook = name, Path(notebook)
        self.reference = [d or 0.0 for d in reference] if reference else None
        self.estimate, self.heartbeat, self.poll, self.report = estimate, heartbeat, poll, report
        self.quiet = QUIET_SECONDS if quiet is None else quiet
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"progress {name}", daemon=True)
        self.lines: list[str] = []

    def __enter__(self) -> "CellProgress":
        self._start = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(5)

    def _state(self) -> tuple[list[float], int] | None:
        try:
            nb = json.loads(self.notebook.read_text())
        except (OSError, ValueError):  # not written yet, or being written
            return None
        cells = _code_cells(nb)
        done = []
        for cell in cells:
            meta = cell.get("metadata", {}).get("papermill", {})
            if meta.get("status") == "completed" and isinstance(meta.get("duration"), (int, float)):
                done.append(float(meta["duration"]))
            else:
                break
        return done, len(cells)

    def line(self, done: list[float], total: int, running_for: float, elapsed: float) -> str:
        left = time_left(done, running_for, self.reference, self.estimate, elapsed)
        where = f"cell {min(len(done) + 1, total)}/{total}" + (
            f" (running {format_seconds(running_for)})" if running_for >= 1 else "")
        tail = f", about {format_seconds(left)} left" if left is not None else ""
        return f"  {self.name}: {where}, {format_seconds(elapsed)} elapsed{tail}"

    def _watch(self) -> None:
        last_print = last_count = -1.0
        count_since = time.monotonic()
        while not self._stop.wait(self.poll):
            state = self._state()
            if state is None:
                continue
            done, total = state
            now = time.monotonic()
            if len(done) != last_count:
                last_count, count_since = len(done), now
                due = now - last_print >= self.quiet if last_print >= 0 else len(done) > 0
            else:
                due = now - max(last_print, count_since) >= self.heartbeat
            if due and total:
                text = self.line(done, total, now - count_since, now - self._start)
                self.lines.append(text)
                self.report(text)
                last_print = now
