"""The one process executor: independent tasks in spawned worker processes.

Every parallel run of the project goes through :class:`ProcessSlots`: the
trainings of separate models a chapter makes (:func:`map_processes`) and the
book build's chapters (:mod:`.book.schedule`). A slot is one spawned process
(torch and Jupyter kernels start clean there) running one task at a time, as a
:class:`concurrent.futures.Future`; the caller decides which task starts next
(longest first, in dependency order) when a slot is free. A worker that dies
fails only its own task (:meth:`ProcessSlots.exitcode` says how it died) and its
slot gets a new process. While a task runs, SIGINT and SIGTERM unwind it as
``KeyboardInterrupt`` (so a chapter shuts its kernel down and removes its partial
notebook); an idle worker ignores SIGINT and leaves on SIGTERM, when the slots
close, or when its parent is gone.

The modules a task imports in its worker are recorded in the parent
(:func:`worker_modules`): a chapter's kernel lists the library modules it used
for the book's cache (:mod:`.book.cache`), and a module that only the workers of
:func:`map_processes` import (a function's own imports) is one of them.

Sweeps run on Dask instead (:mod:`.book.sweep`): their points may go to a
cluster given by address and ask for a GPU, which a local pool cannot offer.
The book build does not: a local Dask cluster of two workers takes about 3.7 s
to start, run one task and stop on two cores (plus 1.1 s to import), twice what
these slots take for a whole no-op build of eight chapters; and the maths may
not import Dask at all.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import sysconfig
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Callable, Iterable, TypeVar

from ._checks import check_int

T = TypeVar("T")
R = TypeVar("R")

__all__ = ["ProcessSlots", "map_processes", "progress_bar", "worker_modules"]

# The source files of the modules the tasks of map_processes imported in their workers, as
# sys.modules holds those this process imported: what it used, for as long as it lives.
_WORKER_MODULES: set[str] = set()


def progress_bar(show: bool, total: int, initial: int, desc: str):
    """A tqdm bar (disabled unless ``show``) that redraws at most every 2 s."""
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=desc, mininterval=2.0, disable=not show)


def _ignore(signum, frame):
    """A handler that does nothing: SIG_IGN instead would make a signal already
    pending raise ``OSError: Signal 15 ignored due to race condition``."""


def _interrupt(signum, frame):
    # Ctrl-C reaches the worker, then the parent's SIGTERM: the second must not cut the clean-up short
    signal.signal(signal.SIGINT, _ignore)
    signal.signal(signal.SIGTERM, _ignore)
    raise KeyboardInterrupt


def _leave(signum, frame):
    raise SystemExit(0)


def _idle_worker() -> None:
    """Between tasks, Ctrl-C (sent to the whole process group) is the parent's
    business, and SIGTERM makes the worker leave."""
    signal.signal(signal.SIGINT, _ignore)
    signal.signal(signal.SIGTERM, _leave)


def _watch_parent(parent: int) -> None:
    """Send this worker SIGTERM once its parent is gone (killed, out of memory): a
    running task unwinds, an idle worker leaves."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGTERM)


def _start_worker() -> None:
    """A worker's initializer."""
    _idle_worker()
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()


def _run_task(task: bytes):
    """``fn(*args)``, pickled by :func:`_pickled`, in a worker, where SIGINT and SIGTERM
    unwind it like Ctrl-C."""
    import cloudpickle

    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        fn, args = cloudpickle.loads(task)
        return fn(*args)
    finally:
        _idle_worker()


def worker_modules() -> frozenset[str]:
    """The source files (real paths) of the modules that the units of :func:`map_processes`,
    run in worker processes, have imported there: those of the project, not the standard
    library's or the installed packages'. With ``sys.modules``, what this process used."""
    return frozenset(_WORKER_MODULES)


def _own_module_files() -> set[str]:
    """The source files of this process's imported modules, the installed ones and the
    standard library's left out."""
    installed = {sysconfig.get_path(kind) for kind in ("stdlib", "platstdlib", "purelib", "platlib")}
    installed = tuple(os.path.join(path, "") for path in installed if path)
    files = {getattr(module, "__file__", None) for module in list(sys.modules.values())}
    return {os.path.realpath(f) for f in files if f and not f.startswith(installed)}


def _recording(fn: Callable[[T], R], unit: T) -> tuple[R, set[str]]:
    """``fn(unit)`` in a worker, and the files of the modules the worker has imported."""
    return fn(unit), _own_module_files()


def _pickled(fn: Callable, args: tuple) -> bytes:
    """A task as bytes, as Dask sends one: classes made at run time (a test's toy
    chapter model) travel by value."""
    import cloudpickle

    return cloudpickle.dumps((fn, args))


class _Slot:
    """One single-process pool: its process, and its last task."""

    def __init__(self):
        self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"), initializer=_start_worker)
        self.future: Future | None = None
        self.process = None

    @property
    def broken(self) -> bool:
        return bool(self.pool._broken)  # its process died: the pool takes no more tasks

    def submit(self, fn: Callable, args: tuple) -> Future:
        self.future = self.pool.submit(_run_task, _pickled(fn, args))
        # the pool starts its process in submit(): kept to tell how it died
        self.process = next(iter(self.pool._processes.values()), self.process)
        return self.future

    def interrupt(self) -> Future | None:
        """Unwind the running task, if any (SIGTERM); the task, to wait for."""
        if self.future is None or self.future.done() or self.process is None:
            return None
        self.process.terminate()
        return self.future

    def close(self) -> None:
        """Let the worker leave once its task is done, and join it."""
        self.pool.shutdown(wait=True, cancel_futures=True)


class ProcessSlots:
    """``n`` worker processes, each running one task at a time (see the module).

    :meth:`submit` while :attr:`free` is positive; :meth:`wait_any` returns the
    tasks that finished, and frees their slots. On leaving the ``with`` block
    the workers leave; on an exception (Ctrl-C included) the running tasks are
    interrupted first."""

    def __init__(self, n: int):
        check_int("n", n, low=1)
        self.n = n
        self._slots: list[_Slot] = []
        self.pending: list[Future] = []  # submitted, not yet returned by wait_any

    @property
    def free(self) -> int:
        return self.n - len(self.pending)

    def submit(self, fn: Callable[..., R], *args) -> Future:
        """Start ``fn(*args)`` in an idle worker (a new one where none is idle and alive)."""
        if self.free <= 0:
            raise RuntimeError(f"all {self.n} slots are busy: wait_any() first")
        idle = [s for s in self._slots if s.future not in self.pending]
        for dead in [s for s in idle if s.broken]:
            dead.close()
            self._slots.remove(dead)
        slot = next((s for s in idle if not s.broken), None)
        if slot is None:
            slot = _Slot()
            self._slots.append(slot)
        future = slot.submit(fn, args)
        self.pending.append(future)
        return future

    def wait_any(self) -> list[Future]:
        """Block until a task finishes; every finished task, in start order."""
        if not self.pending:
            return []
        done, _ = wait(self.pending, return_when=FIRST_COMPLETED)
        finished = [f for f in self.pending if f in done]
        self.pending = [f for f in self.pending if f not in done]
        return finished

    def exitcode(self, future: Future) -> int | None:
        """The exit code of the worker that ran ``future``, if that worker died."""
        slot = next((s for s in self._slots if s.future is future), None)
        if slot is None or slot.process is None or not slot.broken:
            return None
        # the pool's own thread also joins it: its waitpid can reap the process just before this
        # one asks (ECHILD, read as "still running") and set the code a moment later
        deadline = time.monotonic() + 5
        while slot.process.exitcode is None and time.monotonic() < deadline:
            slot.process.join(0.05)
        return slot.process.exitcode

    def close(self, interrupt: bool = False) -> None:
        """Let every worker leave; ``interrupt``: unwind the running tasks first."""
        if interrupt:
            wait([f for f in (slot.interrupt() for slot in self._slots) if f is not None], timeout=30)
        for slot in self._slots:
            slot.close()
        self._slots, self.pending = [], []

    def __enter__(self) -> "ProcessSlots":
        return self

    def __exit__(self, kind, value, traceback) -> None:
        self.close(interrupt=kind is not None)


def map_processes(fn: Callable[[T], R], units: Iterable[T], workers: int, *, progress: bool = False,
                  desc: str = "units") -> list[R]:
    """``[fn(u) for u in units]``, up to ``workers`` units at once in spawned processes
    (``fn`` and the units must pickle). One worker, or one unit, runs in this
    process. A progress bar counts the finished units when ``progress``. A failed
    unit raises as soon as it fails: the units not yet started never start, and
    the running ones finish first. The modules the workers imported join
    :func:`worker_modules`."""
    check_int("workers", workers, low=1)
    units = list(units)
    if workers == 1 or len(units) <= 1:
        return [fn(u) for u in units]
    futures: list[Future] = []
    slots = ProcessSlots(min(workers, len(units)))
    bar = progress_bar(progress, len(units), 0, f"{desc}, {len(units)} units")
    try:
        for unit in units:
            if not slots.free:
                _count_finished(slots.wait_any(), bar)
            futures.append(slots.submit(_recording, fn, unit))
        while slots.pending:
            _count_finished(slots.wait_any(), bar)
    except Exception:
        slots.close()  # the running units finish
        raise
    finally:
        slots.close(interrupt=True)  # Ctrl-C: the running units unwind
        bar.close()
    results = [f.result() for f in futures]
    for _, files in results:
        _WORKER_MODULES.update(files)
    return [result for result, _ in results]


def _count_finished(futures: list[Future], bar) -> None:
    """Raise the first failure among ``futures``; else count them on ``bar``."""
    for future in futures:
        future.result()  # a failed unit raises here, at once
        bar.update(1)
