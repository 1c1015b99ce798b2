"""Sweeps on Dask: grid expansion and validation, a failing point, resume."""

import textwrap

import pandas as pd
import pytest

from attention_geometry.book.registry import Chapter
from attention_geometry.book.params import Float, Int
from attention_geometry.book.sweep import SweepError, load_grid, run_sweep, scalar

from conftest import CHAPTER_HEADER as HEADER

TOY = """
# Toy

```{code-cell} ipython3
:tags: [parameters]
n = 3
x = 0.5
```

```{code-cell} ipython3
from myst_nb import glue
assert n < 50, "n too large"
glue("double", 2 * n, display=False)
glue("scaled", n * x, display=False)
glue("label", "not a number", display=False)
```
"""

CHAPTER = Chapter(
    name="toy", source="book/toy.md",
    params={"n": Int("n", low=0, high=100), "x": Float("x", low=0.0, high=1.0)}, smoke={"n": 1},
)


@pytest.fixture
def root(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "requirements.txt").write_text("")
    (tmp_path / "book" / "toy.md").write_text(HEADER + textwrap.dedent(TOY))
    return tmp_path


def test_grid_forms_expand_and_validate():
    sweep = load_grid({"fixed": {"x": 0.25}, "grid": {"n": [1, 2]}, "runs": [{"n": 7, "x": 1.0}]}, CHAPTER)
    assert list(sweep.points) == [{"x": 0.25, "n": 1}, {"x": 0.25, "n": 2}, {"n": 7, "x": 1.0}]
    assert sweep.varying == ["n", "x"]
    two = load_grid({"grid": {"n": [1, 2], "x": [0.0, 0.5, 1.0]}}, CHAPTER)
    assert len(two.points) == 6
    assert len(load_grid({"grid": {"n": [1, 1]}}, CHAPTER).points) == 1  # duplicates once


@pytest.mark.parametrize("grid, fragment", [
    ({}, "empty"),
    ({"grid": {"n": []}}, "empty list"),
    ({"grid": {"m": [1]}}, "unknown parameter 'm'"),
    ({"grid": {"n": [1, 500]}}, "parameter 'n' = 500 is out of range"),
    ({"grid": {"x": ["a"]}}, "wrong type str"),
    ({"runs": [3]}, "must be a mapping"),
    ({"grid": {"n": [1]}, "extra": 1}, "unknown grid key"),
])
def test_invalid_grids_are_rejected_before_running(grid, fragment):
    with pytest.raises(SweepError, match=fragment):
        load_grid(grid, CHAPTER)


def test_grid_file(tmp_path):
    f = tmp_path / "g.yaml"
    f.write_text("name: small\ngrid:\n  n: [1, 2]\n")
    sweep = load_grid(f, CHAPTER)
    assert sweep.name == "small" and len(sweep.points) == 2


def test_scalar_parses_glued_reprs():
    assert scalar("0.5") == 0.5 and scalar("np.float64(0.25)") == 0.25 and scalar("3") == 3.0
    assert scalar("'text'") is None


def test_sweep_on_a_two_worker_local_cluster_with_failure_and_resume(root, tmp_path):
    sweep = load_grid({"name": "t", "fixed": {"x": 0.5}, "grid": {"n": [1, 2, 3, 60]}}, CHAPTER)
    out = tmp_path / "out"
    table = run_sweep(sweep, out, n_workers=2, root=root, progress=False)
    runs = table.drop_duplicates("run").set_index("n")
    assert set(runs.index) == {1, 2, 3, 60}
    assert (runs.loc[[1, 2, 3], "status"] == "done").all()
    assert runs.loc[60, "status"] == "failed" and "n too large" in runs.loc[60, "error"]
    done = table[table["status"] == "done"]
    assert set(done["key"]) == {"double", "scaled"}  # non-numeric glue is left out
    assert len(done) == 3 * 2
    assert done.set_index(["n", "key"]).loc[(3, "double"), "value"] == 6
    assert (out / "results.csv").exists() and (out / "summary.png").exists()
    assert len(pd.read_csv(out / "results.csv")) == len(table)
    mtimes = {p.name: p.stat().st_mtime_ns for p in out.glob("*.ipynb") if ".failed" not in p.name}
    assert len(mtimes) == 3

    # resume: the three done points are skipped, the failed one is retried
    table2 = run_sweep(sweep, out, n_workers=1, root=root, progress=False)
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("*.ipynb") if ".failed" not in p.name} == mtimes
    assert table2.drop_duplicates("run")["status"].tolist() == table.drop_duplicates("run")["status"].tolist()


def test_sweep_against_a_scheduler_address(root, tmp_path):
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None) as cluster:
        sweep = load_grid({"runs": [{"n": 4, "x": 0.25}]}, CHAPTER, name="remote")
        table = run_sweep(sweep, tmp_path / "r", scheduler=cluster.scheduler_address, root=root,
                          progress=False)
    assert table.set_index("key").loc["scaled", "value"] == 1.0
