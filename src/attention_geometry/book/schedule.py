"""Execute the book's chapters: cached ones skipped, the others in parallel.

Each chapter of ``_toc.yml`` whose key (:mod:`.cache`) matches its notebook in
``_build/executed/`` is reported ``cached``. The others execute in worker
processes (a spawn-context pool: papermill never runs in threads), ``jobs`` at
a time, each kernel capped at ``cores // jobs`` threads (one on two cores), in
an order that respects ``depends_on``: a chapter waits for the chapters it
depends on, and is skipped if one of them failed. Among the ready chapters
the longest (by their last run time) start first.

A failing chapter does not stop the others. The terminal shows one line per
chapter, as its outcome is known: ``cached``, its time, ``FAILED`` or
``skipped``.
"""

import multiprocessing
import os
import queue
import signal
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from .cache import dependency_keys, is_fresh, notebook_record
from .context import thread_env
from .execute import ChapterFailed, execute_chapter
from .project import Project
from .registry import Chapter
from .toc import book_chapters

__all__ = ["Outcome", "execute_book", "clean_partials", "default_jobs"]


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


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def _worker_init() -> None:
    # terminate() sends SIGTERM: unwind like Ctrl-C so the kernel is shut down
    # and the partial notebook removed
    signal.signal(signal.SIGTERM, _raise_interrupt)


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


def execute_book(
    project: Project,
    *,
    force: bool = False,
    jobs: int | None = None,
    report: Callable[[str], None] = partial(print, flush=True),
) -> list[Outcome]:
    """Bring every chapter's executed notebook up to date; one outcome per chapter, in toc order."""
    chapters = book_chapters(project)
    by_name = {c.name: c for c in chapters}
    for c in chapters:
        for dep in c.depends_on:
            if dep not in by_name:
                raise ValueError(f"chapter {c.name!r} depends on {dep!r}, which is not a chapter of _toc.yml")
    project.executed.mkdir(parents=True, exist_ok=True)
    clean_partials(project.executed)
    jobs = jobs or default_jobs(len(chapters))
    threads = max(1, (os.cpu_count() or 1) // jobs)

    def last_seconds(c: Chapter) -> float:
        return (notebook_record(project.executed / f"{c.stem}.ipynb") or {}).get("seconds") or 0.0

    outcomes: dict[str, Outcome] = {}
    waiting = list(chapters)
    running: set[str] = set()
    finished: "queue.SimpleQueue[Outcome]" = queue.SimpleQueue()
    pool = None

    def settle(c: Chapter, outcome: Outcome) -> None:
        outcomes[c.name] = outcome
        running.discard(c.name)
        report(_line(c, outcome))

    try:
        while waiting or running:
            ready, before = [], len(waiting)
            for c in list(waiting):
                if any(dep not in outcomes for dep in c.depends_on):
                    continue
                waiting.remove(c)
                bad = [d for d in c.depends_on if outcomes[d].status in ("failed", "skipped")]
                if bad:
                    settle(c, Outcome(c.name, "skipped", message=f"skipped: depends on {bad[0]}, which failed"))
                    continue
                dep_keys = dependency_keys(project, c)
                if not force and is_fresh(project, c, project.executed / f"{c.stem}.ipynb", {}, dep_keys):
                    settle(c, Outcome(c.name, "cached"))
                else:
                    ready.append((c, dep_keys))
            for c, dep_keys in sorted(ready, key=lambda r: -last_seconds(r[0])):
                running.add(c.name)
                if jobs == 1:
                    settle(c, _execute(project, c, dep_keys, threads))
                    continue
                if pool is None:
                    pool = multiprocessing.get_context("spawn").Pool(jobs, initializer=_worker_init)
                pool.apply_async(
                    _execute, (project, c, dep_keys, threads), callback=finished.put,
                    error_callback=lambda err, name=c.name: finished.put(
                        Outcome(name, "failed", message=f"chapter {name!r}: {type(err).__name__}: {err}")),
                )
            if not running and waiting and len(waiting) == before:
                raise ValueError("depends_on forms a cycle among: " + ", ".join(c.name for c in waiting))
            if running:
                while True:
                    try:
                        outcome = finished.get(timeout=0.5)
                        break
                    except queue.Empty:
                        continue
                settle(by_name[outcome.chapter], outcome)
    except BaseException:
        if pool is not None:
            pool.terminate()  # SIGTERM: each worker shuts its kernel down and removes its partial
            pool = None
        raise
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return [outcomes[c.name] for c in chapters]
