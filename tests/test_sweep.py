"""Sweeps on Dask: grid expansion and validation, failures recorded per point
(a raising chapter, a killed worker, no worker left), keys covering every
parameter, a corrupt status file, and no figure left open."""

import json
import os
import re
from pathlib import Path
from typing import Literal

import pandas as pd
import pytest
from pydantic import Field

from attention_geometry.book import cli
from attention_geometry.book.sweep import (
    PointResult, SweepError, load_grid, parameters_digest, point_id, run_sweep, scalar,
)

from conftest import make_project, toy_chapter

TOY = """
# Toy

```{code-cell} ipython3
:tags: [parameters]
n = 3
x = 0.5
device = "cpu"
```

```{code-cell} ipython3
import os, signal
from myst_nb import glue
assert n < 50, "n too large"
if n == 13:  # the worker running this point dies
    os.kill(os.getppid(), signal.SIGKILL)
glue("double", 2 * n, display=False)
glue("scaled", n * x, display=False)
glue("label", "not a number", display=False)
```
"""

CHAPTER = toy_chapter("toy", params={"n": (int, Field(3, ge=0, le=100, description="n")),
                                     "x": (float, Field(0.5, ge=0.0, le=1.0, description="x")),
                                     "device": (Literal["cpu", "cuda"], Field("cpu", description="device"))})


@pytest.fixture
def project(tmp_path):
    return make_project(tmp_path / "p", {"toy": (TOY, CHAPTER)})


def runs(table) -> pd.DataFrame:
    return table.drop_duplicates("run").set_index("n")


def test_grid_forms_expand_and_validate():
    sweep = load_grid({"fixed": {"x": 0.25}, "grid": {"n": [1, 2]}, "runs": [{"n": 7, "x": 1.0}]}, CHAPTER)
    assert list(sweep.points) == [{"x": 0.25, "n": 1}, {"x": 0.25, "n": 2}, {"n": 7, "x": 1.0}]
    assert sweep.varying == ["n", "x"]
    two = load_grid({"grid": {"n": [1, 2], "x": [0.0, 0.5, 1.0]}}, CHAPTER)
    assert len(two.points) == 6
    assert len(load_grid({"grid": {"n": [1, 1]}}, CHAPTER).points) == 1  # duplicates once


@pytest.mark.parametrize("grid, message", [
    ({}, "grid: the grid is empty: give a non-empty 'grid' and/or 'runs'"),
    ({"grid": {"n": []}}, "grid: grid axis 'n' is an empty list"),
    ({"grid": {"m": [1]}}, "grid: point 0 {'m': 1}: unknown parameter 'm' = 1; known parameters: device, n, x"),
    ({"grid": {"n": [1, 500]}},
     "grid: point 1 {'n': 500}: parameter 'n' = 500 is out of range; allowed: an integer in [0, 100]"),
    ({"grid": {"x": ["a"]}},
     "grid: point 0 {'x': 'a'}: parameter 'x' = 'a' has the wrong type str; allowed: a finite number in [0.0, 1.0]"),
    ({"runs": [3]}, "grid: runs[0] must be a mapping of parameter: value, got 3"),
    ({"grid": {"n": [1]}, "extra": 1}, "grid: unknown grid key(s) ['extra']; allowed: name, fixed, grid, runs, plot"),
])
def test_invalid_grids_are_rejected_before_running(grid, message):
    with pytest.raises(SweepError) as err:
        load_grid(grid, CHAPTER)
    assert str(err.value) == message


def test_grid_file(tmp_path):
    f = tmp_path / "g.yaml"
    f.write_text("name: small\ngrid:\n  n: [1, 2]\n")
    sweep = load_grid(f, CHAPTER)
    assert sweep.name == "small" and len(sweep.points) == 2


@pytest.mark.parametrize("text, message", [
    ("grid:\n  n: [1, 2\n  x: 0.5\n", r"g\.yaml, line 3, column 4: not valid YAML: while parsing a flow sequence: expected ',' or '\]', but got ':'"),
    ("grid:\n  n: [1]\n   x: 2\n", r"g\.yaml, line 3, column 4: not valid YAML: while parsing a block mapping: expected <block end>"),
    ("", r"g\.yaml: must be a mapping with 'grid' and/or 'runs', got nothing"),
    ("grid:\n  n: [1, 500]\n", r"g\.yaml: point 1 \{'n': 500\}: parameter 'n' = 500 is out of range"),
])
def test_bad_grid_file_exits_2_with_file_line_and_problem(project, tmp_path, capsys, text, message):
    f = tmp_path / "g.yaml"
    f.write_text(text)
    assert cli.main(["sweep", "toy", str(f)], project=project) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: invalid grid: grid file {f}")
    assert re.search(message, err), err
    assert not project.runs.exists()


def test_scalar_parses_glued_reprs():
    assert scalar("0.5") == 0.5 and scalar("np.float64(0.25)") == 0.25 and scalar("3") == 3.0
    assert scalar("'text'") is None and scalar("True") is None


def test_point_names_cover_every_parameter():
    a = load_grid({"fixed": {"x": 0.25}, "grid": {"n": [1, 2]}}, CHAPTER)
    b = load_grid({"fixed": {"x": 0.75}, "grid": {"n": [1, 2]}}, CHAPTER)
    assert point_id(a, a.points[0]).startswith("n-1.")
    assert point_id(a, a.points[0]) != point_id(b, b.points[0])


def test_a_point_result_round_trips_through_status_json():
    done = PointResult(status="done", seconds=1.5, values={"double": 2, "label": "x"}, modules=["m"], key="k",
                       parameters={"n": 1}, notebook="n-1.abc.ipynb")
    failed = PointResult.failed("AssertionError: n too large", 0.5)
    for result in (done, failed):
        assert PointResult.from_json(json.loads(json.dumps(result.to_json()))) == result
    assert done.done and not failed.done and failed.values is None
    assert failed.to_json() == {"status": "failed", "error": "AssertionError: n too large", "seconds": 0.5,
                                "parameters": None, "notebook": None}  # unknown values, modules, key left out
    never = PointResult.failed("no worker")
    assert json.loads(json.dumps(never.to_json()))["seconds"] != never.seconds  # NaN: not timed
    assert PointResult.from_json({"values": {}, "future_key": 1}) == PointResult(status="missing", values={})


def test_failure_killed_worker_resume_and_fixed_change(project, tmp_path):
    """Two workers: a raising point and a point that kills its worker are recorded
    as failed, the others finish; a rerun reuses the done points; a change of a
    fixed value recomputes every point; no pyplot figure is left open."""
    import matplotlib.pyplot as plt

    out = tmp_path / "out"
    sweep = load_grid({"name": "t", "fixed": {"x": 0.5}, "grid": {"n": [1, 2, 13, 60]}}, CHAPTER)
    table = run_sweep(sweep, out, n_workers=2, project=project, progress=False, reports=False)
    by_n = runs(table)
    assert (by_n.loc[[1, 2], "status"] == "done").all()
    assert by_n.loc[60, "status"] == "failed" and by_n.loc[60, "error"] == "AssertionError: n too large"
    assert by_n.loc[13, "status"] == "failed" and "worker died" in by_n.loc[13, "error"]
    done = table[table["status"] == "done"]
    assert set(done["key"]) == {"double", "scaled"}  # non-numeric glue is left out of the table
    assert done.set_index(["n", "key"]).loc[(2, "scaled"), "value"] == 1.0
    assert (out / "results.csv").exists() and (out / "summary.png").exists()
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["done"] == 2 and provenance["failed"] == 2 and provenance["computed_now"] == 4
    assert provenance["scheduler"] == "local cluster of 2 workers" and provenance["wall_seconds"] > 0
    assert provenance["devices"] == ["cpu"] and provenance["command"].startswith("make sweep CHAPTER=")
    assert {"commit", "dirty", "date", "cpu_model", "torch"} <= set(provenance) and "device_name" not in provenance
    assert (out / "summary.png").stat().st_mode & 0o777 == 0o644
    assert len(pd.read_csv(out / "results.csv")) == len(table)
    status = json.loads((out / "status.json").read_text())
    assert status[parameters_digest(sweep.points[0])]["values"] == {"double": 2, "scaled": 0.5, "label": "not a number"}
    assert plt.get_fignums() == []
    mtimes = {p.name: p.stat().st_mtime_ns for p in out.glob("*.ipynb") if ".failed" not in p.name}
    assert len(mtimes) == 2

    # resume: the done points are reused
    again = load_grid({"name": "t", "fixed": {"x": 0.5}, "grid": {"n": [1, 2]}}, CHAPTER)
    run_sweep(again, out, n_workers=1, project=project, progress=False, reports=False)
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("*.ipynb") if ".failed" not in p.name} == mtimes

    # a fixed value changed: every point is recomputed, the table shows the new numbers
    changed = load_grid({"name": "t", "fixed": {"x": 0.25}, "grid": {"n": [1, 2]}}, CHAPTER)
    table = run_sweep(changed, out, n_workers=1, project=project, progress=False, reports=False)
    csv = pd.read_csv(out / "results.csv")
    assert set(csv["x"]) == {0.25}
    assert csv.set_index(["n", "key"]).loc[(2, "scaled"), "value"] == 0.5
    assert set(runs(table)["status"]) == {"done"}


def test_corrupt_status_is_recovered_on_a_scheduler_given_by_address(project, tmp_path):
    from dask.distributed import LocalCluster

    out = tmp_path / "out"
    sweep = load_grid({"runs": [{"n": 4, "x": 0.25}]}, CHAPTER, name="c")
    out.mkdir()
    (out / "status.json").write_text('{"n-4": {"status": "do')
    messages = []
    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None) as cluster:
        table = run_sweep(sweep, out, scheduler=cluster.scheduler_address, project=project, progress=False,
                          report=messages.append, reports=False)
    assert table.set_index("key").loc["scaled", "value"] == 1.0
    assert any("is not valid JSON" in m and "status.json.corrupt" in m for m in messages), messages
    assert (out / "status.json.corrupt").exists()
    assert json.loads((out / "status.json").read_text())
    assert json.loads((out / "provenance.json").read_text())["scheduler"] == cluster.scheduler_address


def test_gpu_points_need_a_gpu_worker_and_no_worker_means_a_bounded_wait(project, tmp_path):
    """A point with device="cuda" asks for a GPU resource (none here: recorded as
    failed, not left waiting). With every worker gone the sweep stops waiting
    after the timeout, keeping the points already finished."""
    from dask.distributed import LocalCluster

    out = tmp_path / "out"
    first = load_grid({"name": "w", "grid": {"n": [1]}}, CHAPTER)
    run_sweep(first, out, n_workers=1, project=project, progress=False, reports=False)
    done_before = (out / f"{point_id(first, first.points[0])}.ipynb").stat().st_mtime_ns

    grid = {"name": "w", "runs": [{"n": 1}, {"n": 2}, {"n": 3, "device": "cuda"}]}
    sweep = load_grid(grid, CHAPTER)
    messages = []
    with LocalCluster(n_workers=0, dashboard_address=None) as cluster:
        table = run_sweep(sweep, out, scheduler=cluster.scheduler_address, project=project, progress=False,
                          no_worker_timeout=1.0, report=messages.append, reports=False)
    by_n = runs(table)
    assert by_n.loc[1, "status"] == "done"  # finished before: kept, not recomputed
    assert (out / f"{point_id(first, first.points[0])}.ipynb").stat().st_mtime_ns == done_before
    assert by_n.loc[2, "status"] == "failed" and "no Dask worker for 1 s" in by_n.loc[2, "error"]
    assert by_n.loc[3, "status"] == "failed" and "needs a worker with a GPU" in by_n.loc[3, "error"]
    assert any("1 point(s) left" in m for m in messages), messages


def test_plot_spec_is_checked():
    sweep = load_grid({"grid": {"n": [1, 2]}, "plot": {"x": "x", "y": "scaled"}}, CHAPTER)
    assert sweep.x == "x" and sweep.y == ("scaled",)
    with pytest.raises(SweepError, match="plot x 'nope' is not a parameter of toy"):
        load_grid({"grid": {"n": [1]}, "plot": {"x": "nope"}}, CHAPTER)
    with pytest.raises(SweepError, match="plot y must be a glued number's name or a list of them"):
        load_grid({"grid": {"n": [1]}, "plot": {"y": [1]}}, CHAPTER)


def test_each_point_gets_a_report_and_the_sweep_an_index(project, tmp_path, monkeypatch):
    """The summary plots the grid's y quantities (else the chapter's headline) against
    its x; every finished point is rendered as a report, linked from index.html. The
    output folder is given relative to the working directory, as `--out results/...` is."""
    from dataclasses import replace

    from attention_geometry.book.sweep import plotted

    chapter = replace(CHAPTER, headline="double")
    monkeypatch.chdir(tmp_path)
    out = Path("out")
    sweep = load_grid({"name": "r", "grid": {"n": [1, 2, 60]}, "fixed": {"x": 0.5}}, chapter)
    assert plotted(sweep, ["double", "scaled"]) == ("n", ["double"])
    assert plotted(load_grid({"grid": {"n": [1, 2]}, "plot": {"x": "n", "y": ["scaled"]}}, chapter), ["double"]) \
        == ("n", ["scaled"])
    run_sweep(sweep, out, n_workers=2, project=project, progress=False)
    index = (out / "index.html").read_text()
    links = re.findall(r'<a href="(html/[^"]+)">report</a>', index)
    assert len(links) == 2 and "failed" in index  # the point n = 60 failed: no report
    for link in links:
        page = (out / link).read_text()
        assert "A rerun of this chapter" in page and "{glue" not in page
    assert "summary.png" in index and (out / "summary.png").exists()
    first, second = ((out / link).parents[1] / "_static" / "basic.css" for link in links)
    assert os.path.samefile(first, second)  # the static files are stored once per sweep


def test_a_rerun_keeps_the_points_provenance_and_no_finished_point_leaves_no_figure(project, tmp_path):
    """A rerun that only reuses points says when, and from which code, they were computed (in
    their reports and the sweep's provenance.json), not the rerun's date and commit; a grid
    of which no point finishes drops the earlier grid's summary.png, and index.html says so."""
    out = tmp_path / "out"
    sweep = load_grid({"name": "p", "grid": {"n": [1, 2]}}, CHAPTER)
    run_sweep(sweep, out, n_workers=1, project=project, progress=False, reports=False)
    status = json.loads((out / "status.json").read_text())
    assert all(entry["date"] for entry in status.values())  # and its commit, in a git checkout
    # as if computed long ago, at another commit (the toy project is no git checkout)
    made = {"date": "2001-02-03T04:05:06+00:00", "commit": "c0ffee0123456789", "dirty": False}
    (out / "status.json").write_text(json.dumps({d: {**e, **made} for d, e in status.items()}))
    stored = json.loads((out / "provenance.json").read_text())
    (out / "provenance.json").write_text(json.dumps({**stored, **made, "wall_seconds": 77.0}))

    run_sweep(sweep, out, project=project, progress=False)  # reuses both points; renders their reports
    provenance = json.loads((out / "provenance.json").read_text())
    assert {k: provenance[k] for k in made} == made and provenance["wall_seconds"] == 77.0
    assert provenance["point_commits"] == ["c0ffee0123456789"] and provenance["done"] == 2
    index = (out / "index.html").read_text()
    for link in re.findall(r'<a href="(html/[^"]+)">report</a>', index):
        page = (out / link).read_text()
        assert "2001-02-03 04:05 UTC" in page and "c0ffee0123" in page, link
    assert (out / "summary.png").exists() and "No point of this sweep finished" not in index

    nothing = load_grid({"name": "p", "grid": {"n": [60, 61]}}, CHAPTER)  # both fail
    table = run_sweep(nothing, out, n_workers=1, project=project, progress=False)
    assert set(runs(table)["status"]) == {"failed"}
    assert not (out / "summary.png").exists()  # the earlier grid's figure is not this one's
    index = (out / "index.html").read_text()
    assert "No point of this sweep finished" in index and "summary.png" not in index
    assert "AssertionError: n too large" in index
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["done"] == 0 and provenance["computed_now"] == 2 and provenance["point_commits"] == []
