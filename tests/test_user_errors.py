"""Every error a user can reach is a one-line message, never a traceback: one test per
row of the table in issue 16 (section 4), each through the command line as a user
runs it."""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import tomllib
from pathlib import Path
from typing import Annotated, Literal

import pytest

from attention_geometry.book import cli
from attention_geometry.book.execute import execute_chapter
from pydantic import Field

from attention_geometry.book.progress import cell_durations, time_left
from attention_geometry.book.registry import CostModel
from attention_geometry.book.sweep import load_grid, point_id, run_sweep

from conftest import chapter_text, make_project, toy_chapter

TESTS = Path(__file__).parent

TOY = chapter_text("Toy", 'n = 3\nxs = [0.5]\ndevice = "cpu"', """
    import os, time
    from myst_nb import glue
    assert n < 50, "n too large"
    if n == 13:
        time.sleep(60)
    glue("double", 2 * n, display=False)
""")
PARAMS = {"n": (int, Field(3, ge=0, le=100, description="n")),
          "xs": (list[Annotated[float, Field(ge=0.0, le=1.0)]], Field([0.5], min_length=1, description="xs")),
          "device": (Literal["cpu", "cuda"], Field("cpu", description="device"))}
SPEC = toy_chapter("toy", params=PARAMS, cost=CostModel(100.0, ((1.0, {"n": 1}),)))


@pytest.fixture
def toy(tmp_path):
    return make_project(tmp_path / "p", {"toy": (TOY, SPEC)})


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def command(project, *args: str) -> list[str]:
    """The `attention-geometry` command (its real entry point, Ctrl-C handling included)
    on a toy project, in a fresh process."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(TESTS)!r})
        from test_user_errors import SPEC
        from attention_geometry.book.command import entry
        from attention_geometry.book.project import Project
        entry({list(args)!r}, Project({str(project.root)!r}, chapters={{"toy": SPEC}}))
    """)
    return [sys.executable, "-c", script]


# 1. malformed YAML grid -> file, line and what is wrong; exit 2
def test_malformed_grid_names_file_line_and_problem(toy, tmp_path, capsys):
    grid = tmp_path / "grid.yaml"
    grid.write_text("grid:\n  n: [1, 2\n  xs: 0.5\n")
    assert cli.main(["sweep", "toy", str(grid)], project=toy) == 2
    line = one_line(capsys.readouterr().err)
    assert str(grid) in line and "line 3, column 5" in line and "not valid YAML" in line


# 2. PARAMS="alphas=[0.1," -> a message naming the parameter
def test_unparsable_parameter_value_is_named(toy, capsys):
    assert cli.main(["run", "toy", "xs=[0.1,"], project=toy) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith("error: parameter 'xs' = '[0.1,' is not a value")
    assert not toy.runs.exists()


# 3. unreachable SCHEDULER= -> a message within 10 s naming the address
def test_unreachable_scheduler_is_a_message_within_ten_seconds(toy, tmp_path, capsys):
    grid = tmp_path / "grid.yaml"
    grid.write_text("grid:\n  n: [1]\n")
    address = f"tcp://127.0.0.1:{free_port()}"
    start = time.monotonic()
    assert cli.main(["sweep", "toy", str(grid), "--scheduler", address], project=toy) == 2
    assert time.monotonic() - start < 10
    line = one_line(capsys.readouterr().err)
    assert f"cannot reach the Dask scheduler at {address}" in line and "SCHEDULER=" in line


# 4. `make serve` twice -> the port and how to pick another
def test_serving_twice_names_the_port_and_PORT(toy, capsys):
    (toy.html).mkdir(parents=True)
    (toy.html / "index.html").write_text("<html></html>")
    port = free_port()
    first = subprocess.Popen(command(toy, "serve", "--port", str(port)), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert "serving the book on http://localhost" in first.stdout.readline()
        assert cli.main(["serve", "--port", str(port)], project=toy) == 2
        line = one_line(capsys.readouterr().err)
        assert f"port {port} is already in use" in line and f"make serve PORT={port + 1}" in line
    finally:
        os.killpg(first.pid, signal.SIGINT)
        assert first.wait(30) == 130


# 5. Ctrl-C -> "interrupted", nothing else
def test_ctrl_c_prints_interrupted_and_nothing_else(toy):
    proc = subprocess.Popen(command(toy, "run", "toy", "n=13"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    folder = toy.runs / "toy" / "n-13"
    deadline = time.time() + 120
    while not list(folder.glob(".*.partial.ipynb")) and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(4)  # the kernel is in the slow cell
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.strip().splitlines()[-1] == "interrupted"
    noise = [line for line in err.splitlines() if line.strip() and not line.startswith("  toy: cell")]
    assert noise == ["interrupted"], err
    assert not list(folder.glob(".*")) and not (folder / "toy.ipynb").exists()
    assert not list(Path(tempfile.gettempdir()).glob(f"ag-kernel-{proc.pid}-*"))


def console_script(folder: Path) -> Path:
    """``folder/attention-geometry``, the script pip writes for pyproject.toml's entry point
    (the console script imports its entry point's module first, then calls it)."""
    scripts = tomllib.loads((TESTS.parent / "pyproject.toml").read_text())["project"]["scripts"]
    module, function = scripts["attention-geometry"].split(":")
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "attention-geometry"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import {function}\n"
                      f"if __name__ == '__main__':\n    sys.exit({function}())\n")
    script.chmod(0o755)
    return script


def handles_sigterm(pid: int) -> bool:
    """Whether process ``pid`` catches SIGTERM: the command's first handler is in place
    (Python itself catches SIGINT only)."""
    status = Path(f"/proc/{pid}/status").read_text()
    caught = int(next(line for line in status.splitlines() if line.startswith("SigCgt:")).split()[1], 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


def serve_toy(toy, script: Path) -> subprocess.Popen:
    """``attention-geometry serve`` on the toy project's (hand-made) book."""
    toy.html.mkdir(parents=True, exist_ok=True)
    (toy.html / "index.html").write_text("<html></html>")
    return subprocess.Popen([str(script), "serve", "--port", str(free_port())], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "AG_ROOT": str(toy.root)})


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads a process's signal handlers in /proc")
@pytest.mark.parametrize("when", ["first handler", 0.3], ids=["as-the-handler-is-installed", "0.3s-in"])
def test_ctrl_c_while_the_command_starts_prints_interrupted_and_nothing_else(toy, tmp_path, when):
    """The command imports for about a second before it does anything; a Ctrl-C then
    printed the traceback of whichever import it hit. The interrupt goes out as soon as
    the command's first handler is in place (a few hundredths of a second in), or 0.3 s in
    (or then, where starting Python took longer)."""
    start = time.monotonic()
    proc = serve_toy(toy, console_script(tmp_path / "bin"))
    while not handles_sigterm(proc.pid):
        time.sleep(0.002)
    time.sleep(max(0.0, start + (0 if when == "first handler" else when) - time.monotonic()))
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
    out, err = proc.communicate(timeout=30)
    if out.startswith("serving") and when != "first handler":
        # on a loaded machine the command may have finished starting before the interrupt went out:
        # then it stops as a started server does, still with one line and no traceback
        out = ""
    assert (proc.returncode, out, err) == (130, "", "interrupted\n")


def test_the_command_handles_ctrl_c_before_it_imports_anything_but_the_standard_library():
    """What the console script imports before its entry point runs: the standard library
    and the package's ``__init__`` modules, no more (a Ctrl-C in those few hundredths of a
    second, as in Python's own start-up, is a traceback)."""
    code = ("import sys; before = set(sys.modules); from attention_geometry.book.command import entry; "
            "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] not in sys.stdlib_module_names))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str(["attention_geometry", "attention_geometry.book",
                                       "attention_geometry.book.command"])


def test_ctrl_c_during_a_sweep_prints_interrupted_and_nothing_else(toy, tmp_path):
    """Ctrl-C reaches the local cluster's workers too (one process group): while they start,
    each printed two tracebacks as it died, and the cluster logged their deaths."""
    grid = tmp_path / "grid.yaml"
    grid.write_text("runs:\n  - {n: 13, xs: [0.5]}\n  - {n: 13, xs: [0.25]}\n")
    proc = subprocess.Popen(command(toy, "sweep", "toy", str(grid), "--workers", "2"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert proc.stdout.readline().startswith("sweep 'grid': 2 runs of toy")
    time.sleep(2)  # the cluster's workers are starting
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 130, err
    # the progress bar's line is cleared: what a terminal shows is the last redraw of each line
    shown = [line.split("\r")[-1] for line in err.splitlines() if line.split("\r")[-1].strip()]
    assert [line for line in shown if not line.startswith("sweep grid:")] == ["interrupted"], err
    assert shown[-1] == "interrupted", err
    assert not list((toy.runs / "toy" / "grid").glob(".*partial*"))


# 6. device=cuda without CUDA -> rejected by parameter validation before any work
def test_cuda_without_cuda_is_rejected_before_any_work(toy, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert cli.main(["run", "toy", "device=cuda"], project=toy) == 2
    line = one_line(capsys.readouterr().err)
    assert line == ("error: parameter 'device' = 'cuda' is not available: torch sees no CUDA device on this "
                    "machine; allowed here: 'cpu'")
    assert not toy.runs.exists()


# 7. huge parameters -> the cost model's estimate first, then progress with the time left
def test_a_long_run_announces_its_estimate_first(toy, capsys):
    assert SPEC.cost.estimate({"n": 30}, {"n": 3, "xs": [0.5], "device": "cpu"}) == pytest.approx(1000.0)
    assert cli.main(["run", "toy", "n=30"], project=toy) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("estimated run time: about 16 min 40 s (the cost model of toy")
    assert out[1].startswith("running toy")


def test_progress_gives_the_time_left_from_the_first_chunk(tmp_path, capfd, monkeypatch):
    from attention_geometry.book import progress

    # time_left alone, on made-up reference durations (a parameters cell, five of 0.8 s)
    ref = [0.01] + [0.8] * 5
    assert time_left([0.0], 0.0, ref, 100.0, 5.0) == 95.0  # before the first chunk: the cost model
    # after it, measured: the cells done took twice the reference's time, so will the others
    scale = (ref[0] + 2 * ref[1] + 2 * ref[2]) / sum(ref[:3])
    assert time_left([ref[0], 2 * ref[1], 2 * ref[2]], 0.5, ref, None, 9.0) == pytest.approx(
        scale * ref[3] - 0.5 + scale * sum(ref[4:]), rel=1e-9)
    assert time_left(ref[:2], 0.0, ref, 100.0, 5.0) == 95.0  # 0.81 s of reference work: not yet a chunk
    # a cell running ten times its reference time: the cells after it are predicted at least that slow
    assert time_left(ref[:3], 10 * ref[3], ref, None, 9.0) == pytest.approx(10 * sum(ref[4:]), rel=1e-6)
    # end to end: a reference run, then one twice as slow, announced after every cell
    body = chapter_text("Slow", "n = 1", *["import time\ntime.sleep(0.8 * n)"] * 5)
    project = make_project(tmp_path, {"slow": (body, toy_chapter("slow"))})
    reference = tmp_path / "reference.ipynb"
    execute_chapter(project, project.chapter("slow"), reference, {"n": 1})
    ref = cell_durations(reference)
    assert len(ref) == 6 and sum(ref) > 3.5
    monkeypatch.setattr(progress, "QUIET_SECONDS", 0.0)
    capfd.readouterr()
    execute_chapter(project, project.chapter("slow"), tmp_path / "run.ipynb", {"n": 2}, progress=True,
                    reference=reference)
    lines = [line for line in capfd.readouterr().err.splitlines() if line.startswith("  slow: cell")]
    announced = {}  # cells finished -> seconds left, from the lines that give them
    for line in lines:
        if " s left" in line:
            announced[int(line.split("cell ")[1].split("/")[0])] = int(line.split("about ")[1].split(" s left")[0])
    # "cell k/7" runs the k-th of 7 cells (parameters, 5 sleeps, the module record): 7 - k sleeping
    # cells still to run, at twice the reference's 0.8 s (at the reference's own pace, half that)
    cell, left = min(announced.items())
    assert cell <= 4 and abs(left - 1.6 * (7 - cell)) <= 1.2, lines


# 8. a sweep whose last Dask worker dies -> a message after a bounded wait, finished
#    points kept, partial files and kernel socket folders cleaned up
def test_a_sweep_whose_last_worker_dies_stops_waiting_and_cleans_up(toy, tmp_path):
    from dask.distributed import LocalCluster

    out = tmp_path / "out"
    first = load_grid({"name": "w", "runs": [{"n": 1}]}, SPEC)
    run_sweep(first, out, n_workers=1, project=toy, progress=False, reports=False)
    done = out / f"{point_id(first, first.points[0])}.ipynb"
    kept = done.stat().st_mtime_ns
    sweep = load_grid({"name": "w", "runs": [{"n": 1}, {"n": 13}]}, SPEC)
    messages = []
    with LocalCluster(n_workers=0, dashboard_address=None) as cluster:
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", cluster.scheduler_address,
                                   "--nthreads", "1", "--no-nanny", "--no-dashboard"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

        def kill_when_running():
            deadline = time.time() + 120
            while not list(Path(tempfile.gettempdir()).glob(f"ag-kernel-{worker.pid}-*")) and time.time() < deadline:
                time.sleep(0.2)
            time.sleep(3)
            os.killpg(worker.pid, signal.SIGKILL)

        import threading

        killer = threading.Thread(target=kill_when_running)
        killer.start()
        start = time.monotonic()
        table = run_sweep(sweep, out, scheduler=cluster.scheduler_address, project=toy, progress=False,
                          no_worker_timeout=3.0, report=messages.append, reports=False)
        killer.join()
        worker.wait(30)
    assert time.monotonic() - start < 90
    by_n = table.drop_duplicates("run").set_index("n")
    assert by_n.loc[1, "status"] == "done" and done.stat().st_mtime_ns == kept
    assert by_n.loc[13, "status"] == "failed" and "no Dask worker for 3 s" in by_n.loc[13, "error"]
    assert any("1 point(s) left" in m for m in messages), messages
    assert not list(out.glob(".*partial*"))
    tmp = Path(tempfile.gettempdir())
    assert not list(tmp.glob(f"ag-kernel-{worker.pid}-*")) and not list(tmp.glob(f"ag-point-{worker.pid}-*"))


# 9. a stale .failed.ipynb -> removed on the next success
def test_the_next_success_removes_a_stale_failed_notebook(toy, capsys):
    assert cli.main(["run", "toy", "n=60"], project=toy) == 1
    folder = toy.runs / "toy" / "n-60"
    assert (folder / "toy.failed.ipynb").exists()
    assert "AssertionError: n too large" in capsys.readouterr().err
    source = toy.root / "book" / "toy.md"
    source.write_text(source.read_text().replace('assert n < 50, "n too large"', "pass"))
    assert cli.main(["run", "toy", "n=60"], project=toy) == 0
    assert not (folder / "toy.failed.ipynb").exists() and (folder / "toy.ipynb").exists()


# 10. `make serve` after a failed build -> which chapters failed in the last build
def test_serve_after_a_failed_build_names_the_failed_chapters(toy, capsys):
    assert cli.main(["book", "--jobs", "1"], project=toy) == 0
    source = toy.root / "book" / "toy.md"
    source.write_text(source.read_text().replace("assert n < 50", "assert n < 2"))
    assert cli.main(["book", "--jobs", "1"], project=toy) == 1
    capsys.readouterr()
    proc = subprocess.Popen(command(toy, "serve", "--port", str(free_port())), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        line = proc.stderr.readline()
        assert "serving the book" in proc.stdout.readline()
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(30)
    assert line.startswith("note: the last `make book`") and "failed: toy did not execute" in line
    assert json.loads((toy.build / "last-build.json").read_text())["failed"][0]["chapter"] == "toy"
