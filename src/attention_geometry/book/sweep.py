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

A parameter whose *value* is a list (e.g. ``eps_values``) is written as a list
of lists in ``grid``. Every point is validated against the chapter's
specification before anything runs: an unknown name, a value out of range or
an empty grid stops the sweep with a :class:`SweepError`.

Each point is one papermill run of the chapter, executed on a Dask cluster: by
default a ``LocalCluster`` sized to the machine, or any running scheduler given
by address (``--scheduler tcp://host:port`` or ``AG_DASK_SCHEDULER``; its
workers must see this repository at the same path and run this venv's Python).
Results land in ``runs/<chapter>/<sweep>/``: one executed notebook per point,
``results.csv`` (a tidy table: one row per run and glued scalar, with the run's
parameters, status and error) and ``summary.png``. A failed point is recorded
with its error and does not stop the others; rerunning the same sweep skips the
points already done unless ``redo`` is asked for.
"""

import itertools
import logging
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from .build import ROOT, RUNS, ChapterFailed, execute_chapter, glued_values, run_name
from .registry import Chapter
from .params import ParameterError, check_parameters

__all__ = ["SweepError", "Sweep", "load_grid", "run_sweep", "scalar"]

SCHEDULER_ENV = "AG_DASK_SCHEDULER"


class SweepError(ValueError):
    """An invalid grid: empty, unknown parameter, or a value not allowed."""


@dataclass(frozen=True)
class Sweep:
    name: str
    chapter: Chapter
    points: tuple[dict, ...]  # validated parameter sets, in grid order

    @property
    def varying(self) -> list[str]:
        """The parameters that take more than one value across the points."""
        names = sorted({k for p in self.points for k in p})
        return [n for n in names if len({json.dumps(p.get(n)) for p in self.points}) > 1]


def load_grid(path: str | Path | dict, chapter: Chapter, name: str | None = None) -> Sweep:
    """Read and validate a grid (a YAML file or an already-loaded mapping)."""
    if isinstance(path, dict):
        data, stem = path, "sweep"
    else:
        path = Path(path)
        if not path.exists():
            raise SweepError(f"grid file {path} does not exist")
        data, stem = yaml.safe_load(path.read_text()), path.stem
    if not isinstance(data, dict):
        raise SweepError(f"grid must be a mapping with 'grid' and/or 'runs', got {type(data).__name__}")
    unknown_keys = set(data) - {"name", "fixed", "grid", "runs"}
    if unknown_keys:
        raise SweepError(
            f"unknown grid key(s) {sorted(unknown_keys)}; allowed: name, fixed, grid, runs"
        )
    fixed = data.get("fixed") or {}
    grid = data.get("grid") or {}
    runs = data.get("runs") or []
    if not isinstance(fixed, dict) or not isinstance(grid, dict) or not isinstance(runs, list):
        raise SweepError("'fixed' and 'grid' must be mappings and 'runs' a list of mappings")
    points: list[dict] = []
    if grid:
        axes = [(k, v if isinstance(v, list) else [v]) for k, v in grid.items()]
        for k, values in axes:
            if not values:
                raise SweepError(f"grid axis {k!r} is an empty list")
        for combo in itertools.product(*(values for _, values in axes)):
            points.append({**fixed, **dict(zip((k for k, _ in axes), combo))})
    for i, run in enumerate(runs):
        if not isinstance(run, dict):
            raise SweepError(f"runs[{i}] must be a mapping of parameter: value, got {run!r}")
        points.append({**fixed, **run})
    if not points:
        raise SweepError("the grid is empty: give a non-empty 'grid' and/or 'runs'")
    checked, seen = [], set()
    for i, point in enumerate(points):
        try:
            point = check_parameters(chapter.params, point)
        except ParameterError as err:
            raise SweepError(f"point {i} {point}: {err}") from None
        key = json.dumps(point, sort_keys=True)
        if key not in seen:
            seen.add(key)
            checked.append(point)
    sweep_name = name or data.get("name") or stem
    if not re.fullmatch(r"[A-Za-z0-9._-]+", str(sweep_name)):
        raise SweepError(f"sweep name {sweep_name!r}: use letters, digits, '.', '_' and '-'")
    return Sweep(name=str(sweep_name), chapter=chapter, points=tuple(checked))


def scalar(text: str) -> float | None:
    """A glued value's text/plain form as a float, if it is one number."""
    text = text.strip()
    m = re.fullmatch(r"(?:np|numpy)\.\w+\((.*)\)", text)  # numpy 2 reprs: np.float64(0.5)
    if m:
        text = m.group(1)
    try:
        return float(text)
    except ValueError:
        return None


def _run_point(chapter: Chapter, params: dict, out: str, root: str) -> dict:
    """Executed on a Dask worker: one papermill run; never raises for a chapter error."""
    out = Path(out)
    start = time.perf_counter()
    try:
        execute_chapter(chapter, out, params, root=Path(root), progress=False)
    except ChapterFailed as err:
        return {"status": "failed", "error": f"{err.ename}: {err.evalue}",
                "seconds": time.perf_counter() - start}
    except Exception as err:  # noqa: BLE001 - a worker-side crash is a failed point, recorded
        return {"status": "failed", "error": f"{type(err).__name__}: {err}",
                "seconds": time.perf_counter() - start}
    return {"status": "done", "error": "", "seconds": time.perf_counter() - start}


def _client(scheduler: str | None, n_workers: int | None):
    from dask.distributed import Client, LocalCluster

    scheduler = scheduler or os.environ.get(SCHEDULER_ENV)
    if scheduler:
        return Client(scheduler), None
    cluster = LocalCluster(
        n_workers=n_workers or os.cpu_count() or 1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    return Client(cluster), cluster


def run_sweep(
    sweep: Sweep,
    out_dir: str | Path | None = None,
    *,
    scheduler: str | None = None,
    n_workers: int | None = None,
    redo: bool = False,
    root: Path = ROOT,
    progress: bool = True,
):
    """Run every point of ``sweep`` on Dask; return the tidy results table."""
    import pandas as pd
    from dask.distributed import as_completed
    from tqdm import tqdm

    out_dir = Path(out_dir) if out_dir else RUNS / sweep.chapter.name / sweep.name
    out_dir.mkdir(parents=True, exist_ok=True)
    # a point is named by the values that distinguish it (the fixed ones are in results.csv)
    names = [run_name({k: p[k] for k in sweep.varying if k in p}) for p in sweep.points]
    status_path = out_dir / "status.json"
    status = json.loads(status_path.read_text()) if status_path.exists() and not redo else {}
    todo = [
        (n, p) for n, p in zip(names, sweep.points)
        if redo or status.get(n, {}).get("status") != "done" or not (out_dir / f"{n}.ipynb").exists()
    ]
    skipped = len(sweep.points) - len(todo)
    bar = tqdm(total=len(sweep.points), initial=skipped, desc=f"sweep {sweep.name}",
               unit="run", disable=not progress)
    counts = {"done": skipped, "failed": 0}
    bar.set_postfix(done=counts["done"], failed=0, remaining=len(todo))
    if todo:
        client, cluster = _client(scheduler, n_workers)
        try:
            futures = {
                client.submit(_run_point, sweep.chapter, p, str(out_dir / f"{n}.ipynb"), str(root),
                              key=f"{sweep.name}-{n}-{time.time_ns()}", pure=False): n
                for n, p in todo
            }
            for future in as_completed(futures):
                n = futures[future]
                status[n] = future.result()
                counts[status[n]["status"]] += 1
                status_path.write_text(json.dumps(status, indent=1, sort_keys=True))
                bar.update(1)
                bar.set_postfix(done=counts["done"], failed=counts["failed"],
                                remaining=len(sweep.points) - bar.n)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    bar.close()

    rows = []
    for n, p in zip(names, sweep.points):
        st = status.get(n, {"status": "missing", "error": "", "seconds": float("nan")})
        base = {"run": n, **{k: json.dumps(v) if isinstance(v, list) else v for k, v in p.items()},
                "status": st["status"], "error": st["error"], "seconds": st["seconds"]}
        values = {}
        if st["status"] == "done":
            values = {k: scalar(v) for k, v in glued_values(out_dir / f"{n}.ipynb").items()}
            values = {k: v for k, v in values.items() if v is not None}
        if values:
            rows += [{**base, "key": k, "value": v} for k, v in values.items()]
        else:
            rows.append({**base, "key": None, "value": None})
    table = pd.DataFrame(rows)
    table.to_csv(out_dir / "results.csv", index=False)
    if (table["status"] == "done").any():
        from ..figures.sweep import sweep_summary_figure

        fig = sweep_summary_figure(table, sweep.varying, title=f"{sweep.chapter.name}: {sweep.name}")
        fig.savefig(out_dir / "summary.png", dpi=110, bbox_inches="tight")
    return table
