"""Parameter sweeps: a YAML grid of a chapter's parameters, run on Dask.

A grid file has either or both of two forms, plus optional constants::

    name: rp-d-alpha          # the sweep's name (default: the file's stem)
    fixed:                    # the same for every run
      n_samples: 20000
    grid:                     # Cartesian product of the lists
      d: [16, 64, 256]
      alpha: [0.0, 0.5]
    runs:                     # and/or an explicit list of runs
      - {d: 1024, alpha: 0.8}
    plot:                     # the summary figure (optional)
      x: d                    # its x axis: a parameter (default: the first that varies)
      y: [rp-l2]              # glued numbers, one panel each (default: the chapter's headline)

A parameter whose *value* is a list (e.g. ``eps_values``) is written as a list
of lists in ``grid``. Every point is validated against the chapter's
specification before anything runs: malformed YAML, an unknown name, a value
out of range or an empty grid stops the sweep with a :class:`SweepError`.

Each point is one papermill run of the chapter (:func:`.execute.execute_chapter`)
executed on a Dask cluster: by default a ``LocalCluster`` of one single-threaded
worker per core, or any running scheduler given by address (``--scheduler
tcp://host:port`` or ``AG_DASK_SCHEDULER``; its workers need this repository at
the same path and this venv's Python). Dask is the scheduler, not a file
exchange: a point's result (a :class:`PointResult`: glued values, status,
error; and the notebook) comes back as its future's value. Each kernel is
capped at one thread. A point whose ``device`` is ``"cuda"`` asks for a ``GPU``
resource. A failed point, or one
whose worker died (``KilledWorker``), is recorded with its error and the others
go on; if no worker is left for ``no_worker_timeout`` seconds the sweep stops
waiting, keeps what finished and says so.

Results land in ``runs/<chapter>/<sweep>/`` (or ``out_dir``; a sweep a chapter
shows is stored in ``results/<chapter>/sweeps/<sweep>/``, see
:mod:`.sweep_results`): one notebook per point, named by the values that vary
and a digest of *all* its parameters (``fixed`` ones included); ``status.json``
(each point's :class:`PointResult`: parameters, cache key, values, status, error, and
when and at which commit it was computed, which a rerun that reuses it keeps);
``results.csv`` (a tidy table: one row per point and glued number, for the
current grid only), ``summary.png`` (none when no point finished), ``provenance.json``
(a rerun that computed no point keeps the one of the run that did), one report per
point (the chapter rendered through the book's pipeline, :mod:`.report`) under
``html/<point>/`` and ``index.html``, a table of the points linking to them. A point is reused on a rerun
only if its parameters and its cache key (chapter source, library modules it
imported, requirements: see :mod:`.cache`) are unchanged; ``redo`` reruns all.
"""

import hashlib
import io
import itertools
import json
import logging
import math
import os
import re
import sys
import time
import uuid
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Callable

import yaml

from .cache import chapter_key, dependency_keys
from .context import thread_env
from .execute import ChapterFailed, execute_chapter, failed_path
from .files import read_json_or_recover, write_bytes_atomic, write_json_atomic, write_text_atomic
from .leftovers import clean_leftovers, point_dir
from .notebooks import glued_data, parse_glued
from .params import ParameterError, check_parameters
from .progress import stderr_line as _stderr
from .project import Project
from .provenance import Provenance, computed_by, git_state, now
from .registry import Chapter
from .report import ReportFailed, build_report, share_static, sweep_index
from .run import run_name

__all__ = ["SCHEDULER_ENV", "CONNECT_TIMEOUT", "SweepError", "SchedulerUnreachable", "Sweep", "PointJob",
           "PointResult", "load_grid", "parameters_digest", "point_id",
           "run_point",
           "run_sweep", "scalar"]

SCHEDULER_ENV = "AG_DASK_SCHEDULER"
CONNECT_TIMEOUT = 5.0  # seconds to reach a scheduler given by address


class SweepError(ValueError):
    """An invalid grid: malformed, empty, unknown parameter, or a value not allowed."""


class SchedulerUnreachable(ConnectionError):
    """The Dask scheduler given by address did not answer in time: nothing was run."""


@dataclass(frozen=True)
class Sweep:
    name: str
    chapter: Chapter
    points: tuple[dict, ...]  # validated parameter sets, in grid order
    x: str | None = None  # the summary figure's x axis (default: the first parameter that varies)
    y: tuple[str, ...] = ()  # its panels, glued numbers (default: the chapter's headline)

    @property
    def varying(self) -> list[str]:
        """The parameters that take more than one value across the points."""
        names = sorted({k for p in self.points for k in p})
        return [n for n in names if len({json.dumps(p.get(n)) for p in self.points}) > 1]


def _read_grid_file(path: Path):
    if not path.exists():
        raise SweepError(f"grid file {path} does not exist")
    try:
        return yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = ": ".join(filter(None, [getattr(err, "context", None), getattr(err, "problem", None)])) or str(err)
        raise SweepError(f"grid file {path}{where}: not valid YAML: {what}") from None


def load_grid(path: str | Path | dict, chapter: Chapter, name: str | None = None) -> Sweep:
    """Read and validate a grid (a YAML file or an already-loaded mapping)."""
    if isinstance(path, dict):
        data, stem, where = path, "sweep", "grid"
    else:
        path = Path(path)
        data, stem, where = _read_grid_file(path), path.stem, f"grid file {path}"
    if not isinstance(data, dict):
        got = "nothing" if data is None else f"a {type(data).__name__}"
        raise SweepError(f"{where}: must be a mapping with 'grid' and/or 'runs', got {got}")
    unknown_keys = set(data) - {"name", "fixed", "grid", "runs", "plot"}
    if unknown_keys:
        raise SweepError(f"{where}: unknown grid key(s) {sorted(unknown_keys)}; allowed: name, fixed, grid, runs, plot")
    x, y = _plot_spec(data.get("plot"), chapter, where)
    fixed = data.get("fixed") or {}
    grid = data.get("grid") or {}
    runs = data.get("runs") or []
    if not isinstance(fixed, dict) or not isinstance(grid, dict) or not isinstance(runs, list):
        raise SweepError(f"{where}: 'fixed' and 'grid' must be mappings and 'runs' a list of mappings")
    points: list[dict] = []
    if grid:
        axes = [(k, v if isinstance(v, list) else [v]) for k, v in grid.items()]
        for k, values in axes:
            if not values:
                raise SweepError(f"{where}: grid axis {k!r} is an empty list")
        for combo in itertools.product(*(values for _, values in axes)):
            points.append({**fixed, **dict(zip((k for k, _ in axes), combo))})
    for i, run in enumerate(runs):
        if not isinstance(run, dict):
            raise SweepError(f"{where}: runs[{i}] must be a mapping of parameter: value, got {run!r}")
        points.append({**fixed, **run})
    if not points:
        raise SweepError(f"{where}: the grid is empty: give a non-empty 'grid' and/or 'runs'")
    checked, seen = [], set()
    for i, point in enumerate(points):
        try:
            point = check_parameters(chapter.params, point)
        except ParameterError as err:
            raise SweepError(f"{where}: point {i} {point}: {err}") from None
        key = json.dumps(point, sort_keys=True)
        if key not in seen:
            seen.add(key)
            checked.append(point)
    sweep_name = name or data.get("name") or stem
    if not re.fullmatch(r"[A-Za-z0-9._-]+", str(sweep_name)):
        raise SweepError(f"{where}: sweep name {sweep_name!r}: use letters, digits, '.', '_' and '-'")
    return Sweep(name=str(sweep_name), chapter=chapter, points=tuple(checked), x=x, y=y)


def _plot_spec(plot, chapter: Chapter, where: str) -> tuple[str | None, tuple[str, ...]]:
    """The grid's ``plot: {x: <parameter>, y: [<glued number>, ...]}``, checked."""
    if plot is None:
        return None, ()
    if not isinstance(plot, dict) or set(plot) - {"x", "y"}:
        raise SweepError(f"{where}: 'plot' must be a mapping with 'x' (a parameter) and/or 'y' "
                         f"(glued numbers), got {plot!r}")
    x, y = plot.get("x"), plot.get("y", [])
    if x is not None and x not in chapter.params:
        raise SweepError(f"{where}: plot x {x!r} is not a parameter of {chapter.name}; parameters: "
                         + ", ".join(chapter.params))
    y = [y] if isinstance(y, str) else y
    if not isinstance(y, list) or not all(isinstance(k, str) and k for k in y):
        raise SweepError(f"{where}: plot y must be a glued number's name or a list of them, got {y!r}")
    return x, tuple(y)


def scalar(text: str) -> float | None:
    """A glued value's text/plain form as a float, if it is one number."""
    value = parse_glued(text)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def parameters_digest(parameters: dict) -> str:
    """A digest of every parameter of a point: its identity in ``status.json``."""
    return hashlib.sha256(json.dumps(parameters, sort_keys=True).encode()).hexdigest()[:12]


def point_id(sweep: Sweep, parameters: dict) -> str:
    """A point's file name: the values that vary, and the digest of every parameter."""
    return f"{run_name({k: parameters[k] for k in sweep.varying if k in parameters})}.{parameters_digest(parameters)}"


@dataclass(frozen=True)
class PointResult:
    """One point of a sweep, as ``status.json`` records it (under the digest of its
    parameters): ``"done"`` with its glued ``values``, the library ``modules`` its
    kernel imported and its cache ``key``; or ``"failed"`` with the ``error``.
    ``notebook``: the file name of its executed (or partial) notebook in the
    sweep's folder, if any. ``date``, ``commit`` and ``dirty``: when it was
    computed and from which code (a point reused by a later run keeps its own)."""

    status: str  # "done" or "failed" ("missing": a point of the grid not in status.json)
    error: str = ""
    seconds: float = math.nan
    values: dict | None = None
    modules: list | None = None
    key: str | None = None
    parameters: dict | None = None
    notebook: str | None = None
    date: str | None = None
    commit: str | None = None
    dirty: bool | None = None

    @classmethod
    def failed(cls, error: str, seconds: float = math.nan) -> "PointResult":
        return cls(status="failed", error=error, seconds=seconds)

    @property
    def done(self) -> bool:
        return self.status == "done"

    def to_json(self) -> dict[str, Any]:
        """The ``status.json`` entry (``values``, ``modules`` and ``key`` only when known)."""
        return {k: v for k, v in asdict(self).items() if v is not None or k in ("parameters", "notebook")}

    @classmethod
    def from_json(cls, data: dict) -> "PointResult":
        """An entry of ``status.json`` (keys this class does not know are ignored;
        an entry without a status reads as ``"missing"``)."""
        known = {f.name for f in fields(cls)}
        return cls(**{"status": "missing", **{k: v for k, v in data.items() if k in known}})


@dataclass(frozen=True)
class PointJob:
    """What a worker needs to run one point."""

    project: Project
    chapter: Chapter
    parameters: dict
    dep_keys: dict
    threads: int = 1


def run_point(job: PointJob) -> tuple[PointResult, str | None]:
    """Executed on a Dask worker: one papermill run, into a private folder.

    Returns the point's result and its executed (or partial) notebook as text
    (``None``: none was written); never raises for a chapter error.
    """
    start = time.perf_counter()
    with point_dir() as tmp:
        out = Path(tmp) / f"{job.chapter.stem}.ipynb"
        try:
            ex = execute_chapter(job.project, job.chapter, out, job.parameters, kind="sweep",
                                 env=thread_env(job.threads), dep_keys=job.dep_keys, precheck=False)
        except ChapterFailed as err:
            kept = failed_path(out)
            return (PointResult.failed(f"{err.ename}: {err.evalue}", time.perf_counter() - start),
                    kept.read_text() if kept.exists() else None)
        except Exception as err:  # noqa: BLE001 - a worker-side crash is a failed point, recorded
            return PointResult.failed(f"{type(err).__name__}: {err}", time.perf_counter() - start), None
        return (PointResult(status="done", seconds=ex.seconds, values=glued_data(out),
                            modules=list(ex.modules) if ex.modules is not None else None, key=ex.key),
                out.read_text())


def _is_current(project: Project, chapter: Chapter, record: PointResult | None, parameters: dict,
                dep_keys: dict, out_dir: Path) -> bool:
    """Whether ``record`` is a finished run of these parameters, still current, whose notebook is there."""
    return record is not None and record.done and record.parameters == parameters \
        and (out_dir / str(record.notebook)).is_file() \
        and record.key == chapter_key(project, chapter, parameters, record.modules, dep_keys)


def _client(scheduler: str | None, n_workers: int | None, gpu: bool):
    import dask
    from dask.distributed import Client, LocalCluster

    scheduler = scheduler or os.environ.get(SCHEDULER_ENV)
    if scheduler:
        try:
            return Client(scheduler, timeout=CONNECT_TIMEOUT), None
        except (OSError, TimeoutError, ValueError) as err:
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise SchedulerUnreachable(
                f"cannot reach the Dask scheduler at {scheduler} within {CONNECT_TIMEOUT:.0f} s ({reason}); "
                f"check SCHEDULER= (or ${SCHEDULER_ENV}), or leave it empty for a local cluster") from None
    resources = None
    if gpu:
        from .paper import cuda_available

        resources = {"GPU": 1} if cuda_available() else None
    # a point that kills its worker twice is failed (KilledWorker), not retried forever; what
    # the workers and the cluster would log goes nowhere (a point's error comes back as its result)
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), _stderr_silenced():
        cluster = LocalCluster(n_workers=n_workers or os.cpu_count() or 1, threads_per_worker=1,
                               processes=True, dashboard_address=None, silence_logs=logging.CRITICAL,
                               resources=resources)
    return Client(cluster), cluster


@contextmanager
def _stderr_silenced():
    """File descriptor 2 on /dev/null meanwhile, and so for good in the processes started
    meanwhile (a local cluster's workers): Ctrl-C reaches the whole process group, and a
    worker that takes it while starting or running prints tracebacks as it dies."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _has_gpu_worker(client) -> bool:
    workers = client.scheduler_info(n_workers=-1).get("workers", {})
    return any(w.get("resources", {}).get("GPU", 0) >= 1 for w in workers.values())


def _result(future) -> tuple[PointResult, str | None]:
    from distributed.scheduler import KilledWorker

    try:
        return future.result()
    except KilledWorker as err:
        return PointResult.failed(f"its Dask worker died while running it (KilledWorker: {err})"), None
    except Exception as err:  # noqa: BLE001 - recorded for this point, the others go on
        return PointResult.failed(f"{type(err).__name__}: {err}"), None


def run_sweep(
    sweep: Sweep,
    out_dir: str | Path | None = None,
    *,
    scheduler: str | None = None,
    n_workers: int | None = None,
    redo: bool = False,
    project: Project | None = None,
    progress: bool = True,
    no_worker_timeout: float = 60.0,
    report: Callable[[str], None] = _stderr,
    reports: bool = True,
):
    """Run every point of ``sweep`` on Dask; return the tidy results table (see the module).

    ``reports``: render each finished point's report and the sweep's ``index.html``."""
    start = time.perf_counter()
    project = project or Project.find()
    git = git_state(project)  # the code as the sweep starts
    out_dir = Path(out_dir) if out_dir else project.runs / sweep.chapter.name / sweep.name
    out_dir.mkdir(parents=True, exist_ok=True)
    status = _SweepStatus(out_dir, report, git)
    clean_leftovers(out_dir)  # of an earlier sweep whose processes were killed
    dep_keys = dependency_keys(project, sweep.chapter)
    ids = [point_id(sweep, p) for p in sweep.points]
    todo = _points_to_run(project, sweep, ids, status.points, dep_keys, out_dir, redo)
    status.open_bar(sweep, len(ids), len(ids) - len(todo), progress)
    try:
        if todo:
            _run_points(project, sweep, todo, dep_keys, status, scheduler=scheduler, n_workers=n_workers,
                        no_worker_timeout=no_worker_timeout, report=report)
    except KeyboardInterrupt:
        status.close_bar(leave=False)  # the bar's line is cleared, for "interrupted" alone
        raise
    status.close_bar()
    table = _write_results(sweep, ids, status.points, out_dir, report)
    if reports:
        _write_reports(project, sweep, ids, status.points, out_dir, report, git)
    _write_provenance(project, sweep, table, [status.points.get(parameters_digest(p)) for p in sweep.points],
                      out_dir, git, computed_now=len(todo), scheduler=scheduler, n_workers=n_workers,
                      seconds=time.perf_counter() - start)
    return table


class _SweepStatus:
    """``status.json`` of a sweep's folder, as its points finish, and the progress bar."""

    def __init__(self, out_dir: Path, report: Callable[[str], None], git: dict):
        self.out_dir, self.path, self.git = out_dir, out_dir / "status.json", git
        stored, warning = read_json_or_recover(self.path, "sweep status file")
        if warning:
            report(warning)
        self.points = {digest: PointResult.from_json(entry) for digest, entry in stored.items()}
        self.bar = None

    def open_bar(self, sweep: Sweep, total: int, initial: int, progress: bool) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=total, initial=initial, desc=f"sweep {sweep.name}", unit="run", disable=not progress)

    def close_bar(self, leave: bool = True) -> None:
        self.bar.leave = self.bar.leave and leave
        self.bar.close()

    def record(self, pid: str, parameters: dict, result: PointResult, notebook: str | None = None) -> None:
        """Store a finished point: its notebook (``.failed.ipynb`` if it failed) and its entry."""
        name = f"{pid}{'.ipynb' if result.done else '.failed.ipynb'}" if notebook else None
        if name:
            write_text_atomic(self.out_dir / name, notebook)
        if result.done:
            (self.out_dir / f"{pid}.failed.ipynb").unlink(missing_ok=True)
        self.points[parameters_digest(parameters)] = replace(
            result, parameters=parameters, notebook=name, date=now(), commit=self.git.get("commit"),
            dirty=self.git.get("dirty"))
        write_json_atomic(self.path, {digest: r.to_json() for digest, r in self.points.items()})
        self.bar.update(1)


def _points_to_run(project: Project, sweep: Sweep, ids: list[str], status: dict, dep_keys: dict,
                   out_dir: Path, redo: bool) -> list[tuple[str, dict]]:
    """The points (id, parameters) without a current finished run; all of them with ``redo``."""
    return [(pid, p) for pid, p in zip(ids, sweep.points)
            if redo or not _is_current(project, sweep.chapter, status.get(parameters_digest(p)), p, dep_keys,
                                       out_dir)]


def _needs_gpu(parameters: dict) -> bool:
    return parameters.get("device") == "cuda"


def _run_points(project: Project, sweep: Sweep, todo: list[tuple[str, dict]], dep_keys: dict,
                status: _SweepStatus, *, scheduler: str | None, n_workers: int | None, no_worker_timeout: float,
                report: Callable[[str], None]) -> None:
    """Run ``todo`` on a Dask cluster, recording each point as it finishes."""
    client, cluster = _client(scheduler, n_workers, gpu=any(_needs_gpu(p) for _, p in todo))
    try:
        todo = _fail_gpu_points_without_gpu(client, todo, status)
        pending = _submit_points(client, project, sweep, todo, dep_keys)
        _collect_points(client, sweep, pending, status, no_worker_timeout, report)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
        clean_leftovers(status.out_dir)  # what workers that died left: partial notebooks, kernel sockets


def _fail_gpu_points_without_gpu(client, todo: list[tuple[str, dict]], status: _SweepStatus) -> list:
    """Record the points that need a GPU as failed when no worker has one; the others."""
    if not any(_needs_gpu(p) for _, p in todo) or _has_gpu_worker(client):
        return todo
    for pid, p in [(pid, p) for pid, p in todo if _needs_gpu(p)]:
        status.record(pid, p, PointResult.failed("needs a worker with a GPU (Dask resource GPU=1; start "
                                                 "workers with --resources GPU=1); no worker of this "
                                                 "cluster has one"))
    return [(pid, p) for pid, p in todo if not _needs_gpu(p)]


def _submit_points(client, project: Project, sweep: Sweep, todo: list[tuple[str, dict]], dep_keys: dict) -> dict:
    """One Dask future per point (a point that needs a GPU asks for one): future -> (id, parameters)."""
    return {
        client.submit(run_point, PointJob(project, sweep.chapter, p, dep_keys),
                      key=f"{sweep.name}-{pid}-{uuid.uuid4().hex[:8]}", pure=False, retries=1,
                      resources={"GPU": 1} if _needs_gpu(p) else None): (pid, p)
        for pid, p in todo
    }


def _collect_points(client, sweep: Sweep, pending: dict, status: _SweepStatus, no_worker_timeout: float,
                    report: Callable[[str], None]) -> None:
    """Record each point as its future finishes; with no worker left for
    ``no_worker_timeout`` seconds, cancel the rest and record them as not run."""
    from dask.distributed import as_completed

    completed = as_completed(list(pending))
    last_worker_seen = time.monotonic()
    while pending:
        batch = completed.next_batch(block=False)
        for future in batch:
            pid, p = pending.pop(future)
            status.record(pid, p, *_result(future))
        if batch:
            continue
        if client.nthreads():
            last_worker_seen = time.monotonic()
        elif time.monotonic() - last_worker_seen > no_worker_timeout:
            message = (f"no Dask worker for {no_worker_timeout:.0f} s: not run; rerun the sweep "
                       "to run it (finished points are kept)")
            report(f"sweep {sweep.name}: {message}; {len(pending)} point(s) left")
            client.cancel(list(pending))
            for pid, p in pending.values():
                status.record(pid, p, PointResult.failed(message))
            return
        time.sleep(0.2)


def _write_provenance(project: Project, sweep: Sweep, table, points: list[PointResult | None], out_dir: Path,
                      git: dict, *, computed_now: int, scheduler: str | None, n_workers: int | None,
                      seconds: float) -> None:
    """``provenance.json``: who computed the sweep, where, and how many points came out of it;
    ``point_commits``: the commits its finished points were computed at. A run that computed
    no point keeps the stored command, commit, date, machine and wall time: those of the run
    that computed them."""
    runs = table.drop_duplicates("run")
    done = [p for p in points if p is not None and p.done]
    counts = {"sweep": sweep.name, "points": len(sweep.points), "varying": sweep.varying,
              "done": int((runs["status"] == "done").sum()), "failed": int((runs["status"] != "done").sum()),
              "point_commits": sorted({p.commit for p in done if p.commit}),
              "devices": sorted({str(p.get("device", "cpu")) for p in sweep.points})}
    stored, _ = read_json_or_recover(out_dir / "provenance.json", "sweep provenance file")
    if not computed_now and stored:
        provenance = Provenance.from_json(stored).replace(**counts)
    else:
        provenance = computed_by(
            project, command=f"make sweep CHAPTER={sweep.chapter.name} (sweep {sweep.name})", device=None,
            git=git, chapter=sweep.chapter.name, wall_seconds=round(seconds, 1),
            extra={**counts, "computed_now": computed_now, "scheduler": scheduler
                   or os.environ.get(SCHEDULER_ENV) or f"local cluster of {n_workers or os.cpu_count()} workers"})
    write_json_atomic(out_dir / "provenance.json", provenance.to_json())


def _write_results(sweep: Sweep, ids: list[str], status: dict, out_dir: Path,
                   report: Callable[[str], None] = _stderr):
    """``results.csv`` and ``summary.png`` of the current grid's points only."""
    import pandas as pd

    rows = []
    for pid, p in zip(ids, sweep.points):
        rec = status.get(parameters_digest(p))
        if rec is None or rec.parameters != p:
            rec = PointResult(status="missing", seconds=None)
        base = {"run": pid, **{k: json.dumps(v) if isinstance(v, list) else v for k, v in p.items()},
                "status": rec.status, "error": rec.error, "seconds": rec.seconds}
        numbers = {k: v for k, v in (rec.values or {}).items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool)} if rec.done else {}
        rows += [{**base, "key": k, "value": float(v)} for k, v in numbers.items()] or [
            {**base, "key": None, "value": None}]
    table = pd.DataFrame(rows)
    write_text_atomic(out_dir / "results.csv", table.to_csv(index=False))
    _write_summary(sweep, table, out_dir, report)
    return table


def plotted(sweep: Sweep, keys) -> tuple[str | None, list[str]]:
    """The summary figure's x axis and y quantities: the grid's ``plot``, else the
    first parameter that varies against the chapter's headline quantity."""
    x = sweep.x or (sweep.varying[0] if sweep.varying else None)
    y = list(sweep.y) or ([sweep.chapter.headline] if sweep.chapter.headline in set(keys) else [])
    return x, y


def _write_summary(sweep: Sweep, table, out_dir: Path, report: Callable[[str], None]) -> None:
    done = table[(table["status"] == "done") & table["key"].notna()]
    if done.empty:  # an earlier grid's figure would pass for this one's
        (out_dir / "summary.png").unlink(missing_ok=True)
        return
    from ..figures.sweep import sweep_summary_figure

    x, y = plotted(sweep, done["key"].unique())
    missing = [k for k in y if k not in set(done["key"])]
    if missing:
        report(f"sweep {sweep.name}: no point glued {', '.join(missing)} (plot y); glued numbers: "
               + ", ".join(sorted(done["key"].unique())[:20]))
    y = [k for k in y if k not in missing]
    varying = ([x] if x else []) + [v for v in sweep.varying if v != x]
    # with y chosen, only those quantities are plotted, one panel each (else: those that vary most)
    part = table[table["key"].isin(y) | (table["status"] != "done")] if y else table
    fig = sweep_summary_figure(part, varying, title=f"{sweep.chapter.name}: {sweep.name}",
                               max_panels=max(len(y), 1) if y else 4)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    fig.clear()
    write_bytes_atomic(out_dir / "summary.png", buffer.getvalue())


def _write_reports(project: Project, sweep: Sweep, ids: list[str], status: dict, out_dir: Path,
                   report: Callable[[str], None], git: dict) -> None:
    """Each finished point's report (``html/<point>/``, rebuilt only when its notebook
    changed) and the sweep's ``index.html``."""
    import hashlib
    from concurrent.futures import ThreadPoolExecutor

    jobs, rows = [], []
    for pid, p in zip(ids, sweep.points):
        rec = status.get(parameters_digest(p)) or PointResult(status="missing")
        notebook = out_dir / str(rec.notebook)
        page = out_dir / "html" / pid / f"{sweep.chapter.source.removesuffix('.md')}.html"
        row = {"run": pid, "parameters": p, "status": rec.status, "error": rec.error,
               "headline": (rec.values or {}).get(sweep.chapter.headline, ""), "report": None}
        rows.append(row)
        if not rec.done or not notebook.is_file():
            continue
        digest = hashlib.sha256(notebook.read_bytes()).hexdigest()
        stamp = out_dir / "html" / pid / ".notebook-digest"
        row["report"] = page.relative_to(out_dir).as_posix()
        if not (page.exists() and stamp.exists() and stamp.read_text() == digest):
            jobs.append((pid, p, notebook, digest, row))

    def build(job):
        pid, p, notebook, digest, row = job
        rec = status[parameters_digest(p)]
        # when and from which code the point was computed: a point reused by this run keeps its own
        made = {k: getattr(rec, k) for k in ("date", "commit", "dirty") if getattr(rec, k) is not None}
        try:
            build_report(project, sweep.chapter, notebook, out_dir / "html" / pid, parameters=p,
                         provenance=computed_by(project, command=f"make sweep CHAPTER={sweep.chapter.name} "
                                                f"(sweep {sweep.name}, point {pid})", device=None, git=git,
                                                wall_seconds=rec.seconds
                                                ).replace(device=p.get("device", "cpu"), **made),
                         title=f"{sweep.chapter.name}: sweep {sweep.name}, point {pid}")
            write_text_atomic(out_dir / "html" / pid / ".notebook-digest", digest)
        except ReportFailed as err:
            report(f"sweep {sweep.name}: {err}")
            row["report"] = None

    if jobs:
        report(f"sweep {sweep.name}: rendering {len(jobs)} report(s) ...")
        with ThreadPoolExecutor(max_workers=max(1, min(len(jobs), os.cpu_count() or 1))) as pool:
            list(pool.map(build, jobs))
    built = [out_dir / row["report"] for row in rows if row.get("report")]
    for page in built[1:]:  # the reports' static files (MathJax, theme) stored once
        share_static(built[0].parents[1], page.parents[1])
    summary = "summary.png" if (out_dir / "summary.png").exists() else None
    sweep_index(out_dir, f"{sweep.chapter.name}: sweep {sweep.name}", rows, sweep.varying, summary,
                headline=sweep.chapter.headline or "headline")
