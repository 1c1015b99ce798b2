"""Execute the book's chapters: cached ones skipped, the others in parallel.

Each chapter of ``_toc.yml`` whose key (:mod:`.cache`) matches its notebook in
``_build/executed/`` is reported ``cached``. The others execute in worker
processes (a spawn-context pool: papermill never runs in threads), ``jobs`` at
a time, each kernel capped at ``cores // jobs`` threads (one on two cores; a
kernel that starts with nothing beside it and nothing queued, such as the last
chapter, gets every core), in
an order that respects ``depends_on``: a chapter waits for the chapters it
depends on, and is skipped if one of them failed. Among the ready chapters
the longest (by their last run time, or in a clean clone their cost model)
start first.

A failing chapter does not stop the others, nor does a worker process that
dies (its chapter is reported failed and the worker replaced). The terminal
shows one line per chapter, as its outcome is known: ``cached``, its time,
``FAILED`` or ``skipped``.
"""

import multiprocessing
import os
import signal
from dataclasses import dataclass
from functools import partial
from multiprocessing.connection import wait
from pathlib import Path
from typing import Callable

from .cache import dependency_keys, is_fresh, notebook_record
from .context import thread_env
from .execute import ChapterFailed, execute_chapter
from .project import Project
from .registry import Chapter
from .toc import book_chapters

__all__ = ["Outcome", "execute_book", "clean_partials", "default_jobs", "expected_seconds"]


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


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def _serve(conn) -> None:
    """A worker process: execute the chapters sent through ``conn``, send back outcomes."""
    # terminate() sends SIGTERM: unwind like Ctrl-C so that the kernel is shut
    # down and the partial notebook removed
    signal.signal(signal.SIGTERM, _raise_interrupt)
    while True:
        try:
            job = conn.recv()
        except EOFError:  # the build is gone
            return
        if job is None:
            return
        conn.send(_execute(*job))


class _Worker:
    """A spawned process running :func:`_serve`, and the chapter it is executing."""

    def __init__(self):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(child,))
        self.process.start()
        child.close()
        self.chapter: str | None = None

    def submit(self, job: tuple, chapter: str) -> None:
        self.chapter = chapter
        self.conn.send(job)

    def outcome(self) -> Outcome:
        """The finished chapter's outcome, or a failure if the process died."""
        chapter, self.chapter = self.chapter, None
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.process.join(5)
            return Outcome(chapter, "failed", message=f"chapter {chapter!r}: the process executing it died "
                                                      f"(exit code {self.process.exitcode})")

    def stop(self, terminate: bool = False) -> None:
        if terminate:
            self.process.terminate()
        elif self.process.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass
        self.process.join(30)
        self.conn.close()


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


def lone_threads(threads: int, busy: list, queued: list, cores: int | None = None) -> int:
    """Threads for the kernel about to start: ``threads`` (``cores // jobs``), or every
    core when it starts alone, nothing running beside it and nothing queued (the last
    chapter, which waits for all the others, and a rebuild of one chapter)."""
    return max(threads, cores or os.cpu_count() or 1) if not busy and not queued else threads


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

    outcomes: dict[str, Outcome] = {}
    waiting = list(chapters)
    queued: list[tuple[Chapter, dict]] = []
    workers: list[_Worker] = []

    def settle(c: Chapter, outcome: Outcome) -> None:
        outcomes[c.name] = outcome
        report(_line(c, outcome))

    try:
        while waiting or queued or any(w.chapter for w in workers):
            before = len(waiting)
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
                    queued.append((c, dep_keys))
            queued.sort(key=lambda job: -expected_seconds(project, job[0]))
            busy = [w for w in workers if w.chapter]
            if not queued and not busy:
                if waiting and len(waiting) == before:
                    raise ValueError("depends_on forms a cycle among: " + ", ".join(c.name for c in waiting))
                continue
            if jobs == 1:
                c, dep_keys = queued.pop(0)
                settle(c, _execute(project, c, dep_keys, threads))
                continue
            while queued and len(busy) < jobs:
                worker = next((w for w in workers if not w.chapter and w.process.is_alive()), None)
                if worker is None:
                    worker = _Worker()
                    workers.append(worker)
                c, dep_keys = queued.pop(0)
                worker.submit((project, c, dep_keys, lone_threads(threads, busy, queued)), c.name)
                busy.append(worker)
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy])
            for worker in busy:
                if worker.conn in ready or worker.process.sentinel in ready:
                    settle(by_name[worker.chapter], worker.outcome())
            workers = [w for w in workers if w.process.is_alive() or w.chapter]
    except BaseException:
        for worker in workers:  # SIGTERM: each shuts its kernel down and removes its partial notebook
            worker.stop(terminate=True)
        workers = []
        raise
    finally:
        for worker in workers:
            worker.stop()
    return [outcomes[c.name] for c in chapters]
