"""The build pipeline on toy projects: atomic execution, failure reports, the
full book build (parallel, dependency order, failures), staging and the HTML."""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from attention_geometry.book import cli, run
from attention_geometry.book.execute import ChapterFailed, execute_chapter
from attention_geometry.book.params import ParameterError
from attention_geometry.book.project import Project, ProjectNotFound
from attention_geometry.book.registry import CostModel
from attention_geometry.book.schedule import execute_book, expected_seconds, lone_threads
from attention_geometry.book.stage import STAMP

from conftest import chapter_text, make_project, toy_chapter, write_toc

TOY = """
# Toy

```{code-cell} ipython3
:tags: [parameters]
n = 3
```

```{code-cell} ipython3
assert n < 50, "n too large"
value = n * 2
```
"""


@pytest.fixture
def toy(tmp_path) -> Project:
    return make_project(tmp_path, {"toy": (TOY, toy_chapter("toy"))})


def test_project_is_found_from_the_working_directory(tmp_path, monkeypatch):
    project = make_project(tmp_path, {"toy": (TOY, toy_chapter("toy"))})
    monkeypatch.delenv("AG_ROOT", raising=False)
    assert Project.find(tmp_path / "book").root == tmp_path.resolve()
    monkeypatch.chdir(tmp_path / "book")
    assert Project.find().root == tmp_path.resolve()
    assert project.executed == tmp_path.resolve() / "_build" / "executed"
    monkeypatch.setenv("AG_ROOT", str(tmp_path))
    monkeypatch.chdir("/")
    assert Project.find().root == tmp_path.resolve()
    monkeypatch.delenv("AG_ROOT")
    with pytest.raises(ProjectNotFound, match="no _toc.yml in / or any folder above"):
        Project.find()


def test_failure_names_chapter_and_cell_and_keeps_previous_good(toy):
    chapter = toy.chapter("toy")
    out = toy.root / "out" / "toy.ipynb"
    execute_chapter(toy, chapter, out, {})
    good = out.read_bytes()
    assert out.stat().st_mode & 0o777 == 0o644
    with pytest.raises(ChapterFailed) as err:
        execute_chapter(toy, chapter, out, {"n": 60})
    msg = str(err.value)
    assert "'toy'" in msg and "In [3]" in msg and "AssertionError: n too large" in msg
    assert out.read_bytes() == good  # the previous good notebook is untouched
    assert out.with_suffix(".failed.ipynb").exists()
    assert not list(out.parent.glob(".*"))
    execute_chapter(toy, chapter, out, {"n": 4})
    assert not out.with_suffix(".failed.ipynb").exists()  # a success removes the stale failure


def test_sigterm_mid_chapter_leaves_no_partial_notebook(tmp_path):
    slow = TOY + "\n```{code-cell} ipython3\nimport time\ntime.sleep(60)\n```\n"
    project = make_project(tmp_path, {"toy": (slow, toy_chapter("toy"))})
    out = tmp_path / "out" / "toy.ipynb"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from conftest import toy_chapter
        from attention_geometry.book.cli import interrupt_on_sigterm
        from attention_geometry.book.execute import execute_chapter
        from attention_geometry.book.project import Project
        interrupt_on_sigterm()
        project = Project({str(tmp_path)!r}, chapters={{"toy": toy_chapter("toy")}})
        print("started", flush=True)
        try:
            execute_chapter(project, project.chapter("toy"), {str(out)!r}, {{}})
        except KeyboardInterrupt:
            sys.exit(130)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "started"
    deadline = time.time() + 60
    while not list(out.parent.glob(".*partial*")) and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(3)  # let the kernel reach the slow cell
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 130
    assert not out.exists()
    assert not list(out.parent.glob(".*")), list(out.parent.iterdir())


def test_the_partial_notebook_is_rewritten_per_cell_only_for_the_progress_lines(tmp_path):
    """papermill's rewrite of the whole notebook around every cell stalls the kernel: the
    book build lets it write once; a run that shows its progress (which reads it) keeps it."""
    body = chapter_text("Saves", "n = 1", """
        import glob
        from myst_nb import glue
        glue("partials_on_disk", len(glob.glob("../out/.saves.*.partial.ipynb")), display=False)
    """)
    project = make_project(tmp_path, {"saves": (body, toy_chapter("saves"))})
    from attention_geometry.book.notebooks import glued_data

    out = tmp_path / "out" / "saves.ipynb"
    execute_chapter(project, project.chapter("saves"), out, {}, kind="book")
    assert glued_data(out)["partials_on_disk"] == 0
    execute_chapter(project, project.chapter("saves"), out, {}, kind="run", progress=True)
    assert glued_data(out)["partials_on_disk"] == 1


def test_the_kernel_is_stopped_once_the_last_cell_has_replied(tmp_path):
    """Every output is in when the last cell replies; asking the kernel to shut down makes it
    tear down its modules and memory first (2-3 s with torch and transformers), so it is
    stopped instead: its exit handlers do not run, and the notebook holds every output."""
    marker = tmp_path / "exit-handlers-ran"
    body = chapter_text("Stop", "n = 1", f"""
        import atexit, pathlib
        from myst_nb import glue
        atexit.register(pathlib.Path({str(marker)!r}).touch)
        glue("last", "all outputs in", display=False)
    """)
    project = make_project(tmp_path, {"stop": (body, toy_chapter("stop"))})
    from attention_geometry.book.notebooks import glued_data

    out = tmp_path / "out" / "stop.ipynb"
    execute_chapter(project, project.chapter("stop"), out, {}, kind="book")
    assert glued_data(out) == {"last": "all outputs in"}
    time.sleep(0.5)
    assert not marker.exists()


def test_kernel_environment_caps_torch_lazily_and_names_the_run_kind(tmp_path):
    body = chapter_text("Env", "n = 1", """
        import os, sys
        from myst_nb import glue
        glue("torch_preloaded", "torch" in sys.modules, display=False)
        import torch
        glue("threads", torch.get_num_threads(), display=False)
        glue("kind", os.environ["AG_RUN_KIND"], display=False)
    """)
    project = make_project(tmp_path, {"env": (body, toy_chapter("env"))})
    out = tmp_path / "env.ipynb"
    execute_chapter(project, project.chapter("env"), out, {}, kind="sweep", env={"AG_TORCH_THREADS": "1"})
    from attention_geometry.book.notebooks import glued_data

    assert glued_data(out) == {"torch_preloaded": False, "threads": 1, "kind": "sweep"}


def test_kernels_and_jupyter_book_import_the_projects_own_library_first(tmp_path, monkeypatch):
    """One PYTHONPATH for every child that imports the library: the project's src/, then the caller's."""
    from attention_geometry.book.execute import _kernel_env

    project, src = Project(tmp_path), str(tmp_path.resolve() / "src")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    assert project.pythonpath() == src
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    assert project.pythonpath() == os.pathsep.join([src, "/elsewhere"])
    assert _kernel_env(project, "run", None)["PYTHONPATH"] == project.pythonpath()


def timed(name: str, seconds: int, extra: str = "") -> str:
    """A toy chapter that glues when it started and ended, sleeping in between."""
    return chapter_text(name, "n = 1", f"""
        import time
        from myst_nb import glue
        glue("start", time.time(), display=False)
        {extra}
        time.sleep({seconds})
        glue("end", time.time(), display=False)
    """)


def glued(project: Project, stem: str) -> dict:
    from attention_geometry.book.notebooks import glued_data

    return glued_data(project.executed / f"{stem}.ipynb")


def test_the_longest_first_order_uses_the_last_run_else_the_cost_model(tmp_path):
    project = make_project(tmp_path, {"a": (timed("a", 0), toy_chapter("a", cost=CostModel(70.0))),
                                      "b": (timed("b", 0), toy_chapter("b"))})
    a, b = project.chapter("a"), project.chapter("b")
    assert expected_seconds(project, a) == 70.0 and expected_seconds(project, b) == 0.0  # a clean clone
    assert execute_book(project, jobs=1, report=lambda line: None)
    assert 0.0 < expected_seconds(project, a) < 70.0 and expected_seconds(project, b) > 0.0  # the last runs


def test_a_kernel_that_starts_alone_gets_every_core():
    """The last chapter (which waits for all the others) runs alone: it may use both cores;
    a kernel beside another, or with chapters queued behind it, keeps cores // jobs."""
    assert lone_threads(1, busy=[], queued=[], cores=2) == 2
    assert lone_threads(1, busy=["another kernel"], queued=[], cores=2) == 1
    assert lone_threads(1, busy=[], queued=["a chapter waiting for a core"], cores=2) == 1
    assert lone_threads(4, busy=[], queued=[], cores=2) == 4  # never fewer than it had


def test_book_build_parallel_in_dependency_order_with_a_failing_chapter(tmp_path, capsys):
    """Two kernels: independent chapters overlap, a dependant waits for its dependency,
    a failing chapter names its cell while the others still execute, its dependant is
    skipped, a chapter whose worker process dies is reported, and no HTML is announced."""
    failing = timed("bad", 0, extra='raise ValueError("broken on purpose")')
    project = make_project(tmp_path, {
        "a": (timed("a", 4), toy_chapter("a")),
        "b": (timed("b", 4), toy_chapter("b")),
        "c": (timed("c", 0), toy_chapter("c", depends_on=("a",))),
        "bad": (failing, toy_chapter("bad")),
        "d": (timed("d", 0), toy_chapter("d", depends_on=("bad",))),
        "killer": (timed("killer", 0, extra="import os, signal; os.kill(os.getppid(), signal.SIGKILL)"),
                   toy_chapter("killer")),
    })
    assert cli.main(["book", "--jobs", "2"], project=project) == 1
    out, err = capsys.readouterr()
    assert "FAILED" in out and "'bad' (book/bad.md) failed in cell In [2]" in err
    assert "ValueError: broken on purpose" in err and "skipped: depends on bad, which failed" in err
    assert "chapter 'killer': the process executing it died (exit code -9)" in err
    assert "book built" not in out and "no HTML was built" in err
    assert not project.html.exists()
    a, b, c = glued(project, "a"), glued(project, "b"), glued(project, "c")
    assert a["start"] < b["end"] and b["start"] < a["end"], "a and b did not run in parallel"
    assert c["start"] >= a["end"], "c ran before the chapter it depends on"
    assert not (project.executed / "d.ipynb").exists()
    assert (project.executed / "bad.failed.ipynb").exists()

    # fixed: the failure's partial notebook goes, the dependant runs, the others are cached
    (tmp_path / "book" / "bad.md").write_text((tmp_path / "book" / "bad.md").read_text().replace(
        'raise ValueError("broken on purpose")', "pass"))
    (tmp_path / "book" / "killer.md").write_text((tmp_path / "book" / "killer.md").read_text().replace(
        "os.kill(os.getppid(), signal.SIGKILL)", "pass"))
    outcomes = {o.chapter: o.status for o in execute_book(project, jobs=1, report=lambda line: None)}
    assert outcomes == {"a": "cached", "b": "cached", "c": "cached", "bad": "done", "d": "done", "killer": "done"}
    assert not (project.executed / "bad.failed.ipynb").exists()


def test_ctrl_c_during_a_parallel_build_leaves_no_partial_notebook(tmp_path):
    """Ctrl-C reaches the build and its two workers: each running chapter shuts its kernel
    down and removes its partial notebook, and the build exits 130."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from conftest import make_project, toy_chapter
        from test_build import timed
        from attention_geometry.book.cli import entry
        project = make_project(__import__("pathlib").Path({str(tmp_path)!r}),
                               {{s: (timed(s, 60, extra=f"open('../started-{{s}}', 'w').close()"), toy_chapter(s))
                                 for s in ("a", "b")}})
        entry(["book", "--jobs", "2"], project)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    executed = tmp_path / "_build" / "executed"
    deadline = time.time() + 120
    while len(list(tmp_path.glob("started-*"))) < 2 and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(1)  # both kernels are in their slow cell
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "interrupted", err
    assert not list(executed.iterdir()), list(executed.iterdir())


def quiet_lines(err: str) -> list[str]:
    """What a terminal keeps of stderr: the last redraw of each line, blank ones dropped."""
    return [line.split("\r")[-1] for line in err.splitlines() if line.split("\r")[-1].strip()]


def test_ctrl_c_while_jupyter_book_builds_the_html_prints_interrupted_alone(tmp_path):
    """Ctrl-C reaches Jupyter Book's process too (one process group): it leaves in silence
    (its traceback, printed in the quarter second before the build killed it, could follow
    the word), and the next build builds the HTML again."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from conftest import make_project, toy_chapter
        from test_build import TOY
        from attention_geometry.book.cli import entry
        project = make_project(__import__("pathlib").Path({str(tmp_path)!r}), {{"toy": (TOY, toy_chapter("toy"))}})
        entry(["book", "--jobs", "1"], project)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    for line in proc.stdout:
        if line.startswith("building HTML"):
            break
    time.sleep(0.5)  # Jupyter Book is importing Sphinx: its KeyboardInterrupt traceback came from there
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 130, err
    assert quiet_lines(err) == ["interrupted"], err
    assert not (tmp_path / "_build" / "html" / STAMP).exists()  # the next build builds the HTML again
    assert (tmp_path / "_build" / "executed" / "toy.ipynb").exists()  # what finished is kept


def test_stale_partial_notebooks_are_cleaned_up(toy):
    toy.executed.mkdir(parents=True)
    stale = [toy.executed / ".toy.abc123.partial.ipynb", toy.executed / ".toy.abc123.partial.source.ipynb"]
    for path in stale:
        path.write_text("{")
    execute_book(toy, jobs=1, report=lambda line: None)
    assert not any(p.exists() for p in stale)
    assert (toy.executed / "toy.ipynb").exists()


def test_html_holds_exactly_the_toc_pages_and_a_no_op_rebuild_is_fast(tmp_path, capsys):
    chapter = TOY + "\nThe value is {glue:text}`twice`.\n\n```{code-cell} ipython3\n" \
                    "from myst_nb import glue\nglue('twice', value, display=False)\n```\n"
    project = make_project(tmp_path, {"toy": (chapter, toy_chapter("toy"))},
                           pages={"intro": "# Intro\n\nHello.\n", "extra": "# Extra\n\nMore.\n"})
    assert cli.main(["book", "--jobs", "1"], project=project) == 0
    assert "book built" in capsys.readouterr().out
    for page in ("book/intro", "book/extra", "book/toy"):
        assert (project.html / f"{page}.html").exists(), page
    text = re.sub(r"<[^>]+>", " ", (project.html / "book" / "toy.html").read_text())
    assert re.search(r"The value is\s+6\s*\.", text)

    start = time.perf_counter()
    assert cli.main(["book", "--jobs", "1"], project=project) == 0
    assert time.perf_counter() - start < 5
    out = capsys.readouterr().out
    assert "cached" in out and "book up to date" in out

    write_toc(tmp_path, ["intro", "toy"])  # 'extra' leaves the book
    assert cli.main(["book", "--jobs", "1"], project=project) == 0
    assert not (project.html / "book" / "extra.html").exists()
    assert not (project.stage / "book" / "extra.md").exists()
    assert not list((project.html / "_sources" / "book").glob("extra.*"))
    assert (project.html / "book" / "toy.html").exists()


def test_run_name_is_derived_from_parameters():
    assert run.run_name({}) == "defaults"
    assert run.run_name({"seed": 3, "d_max": 128}) == "d_max-128_seed-3"
    assert run.run_name({"eps_values": [1e-05, 0.1]}) == "eps_values-1e-05+0.1"


def test_parse_assignments_reads_yaml_values():
    assert run.parse_assignments(["d=128", "xs=[1, 2.5]", "mode=paper", "flag=true"]) == {
        "d": 128, "xs": [1, 2.5], "mode": "paper", "flag": True,
    }
    with pytest.raises(ParameterError, match="NAME=VALUE"):
        run.parse_assignments(["d128"])


def test_run_unknown_chapter_lists_chapters(capsys):
    assert cli.main(["run", "no_such_chapter"]) == 2
    err = capsys.readouterr().err
    assert "unknown chapter 'no_such_chapter'" in err and "layernorm" in err


def test_run_bad_parameter_stops_before_executing(capsys, toy):
    assert cli.main(["run", "toy", "n=-1"], project=toy) == 2
    assert "parameter 'n' = -1 is out of range; allowed: an integer in [0, 100]" in capsys.readouterr().err
    assert not toy.runs.exists()


def test_run_writes_notebook_and_report(capsys, toy):
    assert cli.main(["run", "toy", "n=4"], project=toy) == 0
    out = capsys.readouterr().out
    nb = toy.runs / "toy" / "n-4" / "toy.ipynb"
    report = toy.runs / "toy" / "n-4" / "html" / "index.html"
    assert str(nb) in out and str(report) in out
    meta = json.loads(nb.read_text())["metadata"]["attention_geometry"]
    assert meta["parameters"] == {"n": 4} and meta["kind"] == "run"
    assert meta["command"] == 'make run CHAPTER=toy PARAMS="n=4"'
    assert (report.parent / "book" / "toy.html").exists()


def test_make_chapters_shows_defaults_and_ranges(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.strip().startswith("H "))
    assert "default 24" in line and "an integer in [2, 400]" in line


def test_make_clean_keeps_runs_and_clean_runs_says_what_it_removes(tmp_path):
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    (tmp_path / "Makefile").write_text((root / "Makefile").read_text())
    (tmp_path / "_build" / "html").mkdir(parents=True)
    (tmp_path / "runs" / "cesaro" / "L-512").mkdir(parents=True)
    subprocess.run(["make", "-s", "clean"], cwd=tmp_path, check=True, capture_output=True)
    assert not (tmp_path / "_build").exists() and (tmp_path / "runs" / "cesaro" / "L-512").exists()
    done = subprocess.run(["make", "-s", "clean-runs"], cwd=tmp_path, check=True, capture_output=True, text=True)
    assert done.stdout.startswith("removing runs/ (your reruns and sweeps") and "runs/cesaro/L-512" in done.stdout
    assert not (tmp_path / "runs").exists()
