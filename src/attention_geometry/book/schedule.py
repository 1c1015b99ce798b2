"""Execute the book's chapters: cached ones skipped, the others in parallel.

Each chapter of ``_toc.yml`` whose key (:mod:`.cache`) matches its notebook in
``_build/executed/`` is reported ``cached``. The others execute in worker
processes (:class:`~attention_geometry._parallel.ProcessSlots`, the project's
one process executor: papermill never runs in threads), ``jobs`` at a time,
each kernel capped at ``cores // jobs`` threads (one on two cores; a kernel
that starts with nothing beside it and nothing queued, such as the last
chapter, gets every core), in the order of ``depends_on`` (a
:class:`graphlib.TopologicalSorter`): a chapter waits for the chapters it
depends on, and is skipped if one of them failed. Among the ready chapters the
longest (by their last run time, or in a clean clone their cost model) start
first.

A failing chapter does not stop the others, nor does a worker process that
dies (its chapter is reported failed and the worker replaced). The terminal
shows one line per chapter, as its outcome is known: ``cached``, its time,
``FAILED`` or ``skipped``.
"""

import os
from dataclasses import dataclass
from functools import partial
from graphlib import CycleError, TopologicalSorter
from pathlib import Path
from typing import Callable

from .._parallel import ProcessSlots
from .cache import dependency_keys, is_fresh, notebook_record
from .context import thread_env
from .execute import ChapterFailed, execute_chapter
from .project import Project
from .registry import Chapter
from .toc import book_chapters

__all__ = ["Outcome", "execute_book", "clean_partials", "default_jobs", "expected_seconds", "lone_threads"]


@dataclass(frozen=True)
class Outcome:
    chapter: str
    status: str  # "cached", "done", "failed" or "skipped"
    seconds: float = 0.0
    message: str = ""


def default_jobs(n_chapters: int) -> int:
    return max(1, min(os.cpu_count() or 1, n_chapters))


def clean_partials(folder: Path) -> list[Path]:
    """Remove what a run killed mid-chapter left in ``folder``; return what was removed."""
    removed = []
    for pattern in (".*.partial.ipynb", ".*.source.ipynb", ".*.tmp"):
        for stale in folder.glob(pattern):
            stale.unlink(missing_ok=True)
            removed.append(stale)
    return removed


def expected_seconds(project: Project, chapter: Chapter) -> float:
    """How long ``chapter`` should take at its defaults: its last run in the book, else (a
    clean clone) its cost model's calibration, else 0. The longest ready chapters start first."""
    last = (notebook_record(project.executed / f"{chapter.stem}.ipynb") or {}).get("seconds")
    return float(last or (chapter.cost.seconds if chapter.cost else 0.0))


def lone_threads(threads: int, busy: list, queued: list, cores: int | None = None) -> int:
    """Threads for the kernel about to start: ``threads`` (``cores // jobs``), or every
    core when it starts alone, nothing running beside it and nothing queued (the last
    chapter, which waits for all the others, and a rebuild of one chapter)."""
    return max(threads, cores or os.cpu_count() or 1) if not busy and not queued else threads


def _execute(project: Project, chapter: Chapter, dep_keys: dict, threads: int) -> Outcome:
    """One chapter, in a worker process (or in this one); never raises for a chapter error."""
    out = project.executed / f"{chapter.stem}.ipynb"
    try:
        ex = execute_chapter(project, chapter, out, {}, kind="book", env=thread_env(threads),
                             dep_keys=dep_keys, precheck=False,
                             record={"command": f"make run CHAPTER={chapter.name}"})
    except ChapterFailed as err:
        return Outcome(chapter.name, "failed", message=str(err))
    except Exception as err:  # noqa: BLE001 - reported with the chapter's name, the others go on
        return Outcome(chapter.name, "failed", message=f"chapter {chapter.name!r}: {type(err).__name__}: {err}")
    return Outcome(chapter.name, "done", seconds=ex.seconds)


def _line(chapter: Chapter, outcome: Outcome) -> str:
    status = {"cached": "cached", "done": f"{outcome.seconds:.1f} s", "failed": "FAILED"}.get(
        outcome.status, outcome.message)
    return f"  {chapter.name:<21} {chapter.source:<36} {status}"


def chapter_order(chapters: list[Chapter]) -> TopologicalSorter:
    """The chapters' ``depends_on`` graph, prepared: each unknown dependency or a cycle
    stops the build before any chapter runs."""
    names = {c.name for c in chapters}
    for c in chapters:
        for dep in c.depends_on:
            if dep not in names:
                raise ValueError(f"chapter {c.name!r} depends on {dep!r}, which is not a chapter of _toc.yml")
    order = TopologicalSorter({c.name: c.depends_on for c in chapters})
    try:
        order.prepare()
    except CycleError as err:
        raise ValueError("depends_on forms a cycle among: " + ", ".join(dict.fromkeys(err.args[1]))) from None
    return order


class _BookBuild:
    """The state of one build: the chapters' outcomes, those ready to execute, the
    graph that says which come next."""

    def __init__(self, project: Project, chapters: list[Chapter], force: bool, report: Callable[[str], None]):
        self.project, self.force, self.report = project, force, report
        self.by_name = {c.name: c for c in chapters}
        self.order = chapter_order(chapters)
        self.outcomes: dict[str, Outcome] = {}
        self.queued: list[tuple[Chapter, dict]] = []  # to execute, the longest first

    def settle(self, outcome: Outcome) -> None:
        """Record and show a chapter's outcome; the chapters waiting for it may become ready."""
        self.outcomes[outcome.chapter] = outcome
        self.report(_line(self.by_name[outcome.chapter], outcome))
        self.order.done(outcome.chapter)

    def take_ready(self) -> None:
        """Settle the chapters whose dependencies are settled when they need no run (a
        dependency failed: skipped; their notebook is current: cached), queue the others."""
        for name in self.order.get_ready():
            c = self.by_name[name]
            bad = [d for d in c.depends_on if self.outcomes[d].status in ("failed", "skipped")]
            if bad:
                self.settle(Outcome(c.name, "skipped", message=f"skipped: depends on {bad[0]}, which failed"))
                continue
            dep_keys = dependency_keys(self.project, c)
            if not self.force and is_fresh(self.project, c, self.project.executed / f"{c.stem}.ipynb", {}, dep_keys):
                self.settle(Outcome(c.name, "cached"))
            else:
                self.queued.append((c, dep_keys))
        self.queued.sort(key=lambda job: -expected_seconds(self.project, job[0]))


def _run_here(build: _BookBuild, threads: int) -> None:
    """``jobs=1``: every chapter in this process, one after the other."""
    while build.order.is_active():
        build.take_ready()
        if build.queued:
            c, dep_keys = build.queued.pop(0)
            build.settle(_execute(build.project, c, dep_keys, threads))


def _run_in_workers(build: _BookBuild, jobs: int, threads: int) -> None:
    """``jobs`` chapters at a time in worker processes, the longest ready one first."""
    with ProcessSlots(jobs) as slots:
        running = {}  # future -> chapter
        while build.order.is_active():
            build.take_ready()
            while build.queued and slots.free:
                c, dep_keys = build.queued.pop(0)
                threads_now = lone_threads(threads, slots.pending, build.queued)
                running[slots.submit(_execute, build.project, c, dep_keys, threads_now)] = c
            for future in slots.wait_any():
                build.settle(_worker_outcome(slots, future, running.pop(future)))


def _worker_outcome(slots: ProcessSlots, future, c: Chapter) -> Outcome:
    """The finished chapter's outcome, or a failure if its worker process died."""
    code = slots.exitcode(future)
    if code is not None:
        return Outcome(c.name, "failed", message=f"chapter {c.name!r}: the process executing it died "
                                                 f"(exit code {code})")
    return future.result()


def execute_book(
    project: Project,
    *,
    force: bool = False,
    jobs: int | None = None,
    report: Callable[[str], None] = partial(print, flush=True),
) -> list[Outcome]:
    """Bring every chapter's executed notebook up to date; one outcome per chapter, in toc order."""
    chapters = book_chapters(project)
    build = _BookBuild(project, chapters, force, report)
    project.executed.mkdir(parents=True, exist_ok=True)
    clean_partials(project.executed)
    jobs = jobs or default_jobs(len(chapters))
    threads = max(1, (os.cpu_count() or 1) // jobs)
    if jobs == 1:
        _run_here(build, threads)
    else:
        _run_in_workers(build, jobs, threads)
    return [build.outcomes[c.name] for c in chapters]
