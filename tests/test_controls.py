"""The controls do what the README says (issue 32, item 5): every `make` variable reaches
the command, `DEVICE=` is checked as the `device` parameter is, `make chapters` lists the
presets, a rule joining parameters and a parameter given twice stop a run before any cell
(exit 2), `make help` prints the help and nothing else, and Ctrl-C under make prints
`interrupted` and nothing else (issue 32, item 2)."""

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from attention_geometry.book import CHAPTERS, cli
from attention_geometry.book.params import ParameterError
from attention_geometry.book.project import Project
from attention_geometry.book.run import parse_assignments

from test_user_errors import console_script, handles_sigterm, one_line, serve_toy, toy  # noqa: F401 - the toy project fixture

ROOT = Path(__file__).resolve().parents[1]


def make_dry_run(*args: str) -> str:
    """The commands `make` would run (-n), the virtual environment taken as up to date."""
    done = subprocess.run(["make", "-n", *args, "STAMP=Makefile"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_make_variable_reaches_the_command():
    run = make_dry_run("run", "CHAPTER=cesaro", "PARAMS=L=512", "PRESET=smoke", "DEVICE=cpu", "NAME=mine")
    assert re.search(r"attention-geometry run cesaro L=512 --preset smoke\s*\\?\s*--device cpu --name mine", run), run
    sweep = make_dry_run("sweep", "CHAPTER=recency", "GRID=g.yaml", "SCHEDULER=tcp://h:1", "OUT=o", "WORKERS=3",
                         "REDO=1", "NAME=s", "NO_REPORTS=1")
    assert re.search(r"attention-geometry sweep recency g.yaml --scheduler tcp://h:1 --out o\s*\\?\s*"
                     r"--workers 3 --redo --name s --no-reports", sweep), sweep
    assert "attention-geometry book --jobs 2 --force" in make_dry_run("book", "JOBS=2", "FORCE=1")
    assert "attention-geometry paper jacobians --device cuda --restart" in make_dry_run(
        "paper", "CHAPTER=jacobians", "DEVICE=cuda", "RESTART=1")
    # each variable the help names is one the Makefile uses
    help_text = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True).stdout
    makefile = (ROOT / "Makefile").read_text()
    for var in set(re.findall(r"\b([A-Z_]+)=", help_text)):
        assert f"$({var})" in makefile, var


def test_a_sweep_refuses_run_only_variables():
    done = subprocess.run(["make", "-s", "sweep", "CHAPTER=recency", "GRID=g.yaml", "DEVICE=cuda", "STAMP=Makefile"],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0].startswith("error: PARAMS, PRESET and DEVICE are not sweep options")


def test_make_help_is_the_help_and_nothing_else():
    done = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert len(lines) >= 10 and lines[0].startswith("  make book")
    # a command, or the continuation of the one above it
    assert all(line.startswith("  make ") or line.startswith("      ") for line in lines), lines
    assert not any(token in done.stdout for token in ("?=", ":=", "$(", "PYTHON"))


def test_device_is_checked_as_the_device_parameter(toy, capsys):  # noqa: F811
    import torch

    assert cli.main(["run", "toy", "--device", "tpu"], project=toy) == 2
    assert one_line(capsys.readouterr().err).startswith("error: parameter 'device' = 'tpu'")
    if not torch.cuda.is_available():
        assert cli.main(["run", "toy", "--device", "cuda"], project=toy) == 2
        assert one_line(capsys.readouterr().err) == (
            "error: parameter 'device' = 'cuda' is not available: torch sees no CUDA device on this machine; "
            "allowed here: 'cpu'")
    # given twice, in PARAMS and as DEVICE: which one was meant is not guessed
    assert cli.main(["run", "toy", "device=cpu", "--device", "cpu"], project=toy) == 2
    assert "parameter 'device' is given twice" in one_line(capsys.readouterr().err)
    # a chapter without a device parameter runs on the CPU
    layernorm = Project(ROOT)
    assert cli.main(["run", "layernorm", "--device", "cuda"], project=layernorm) == 2
    assert one_line(capsys.readouterr().err) == (
        "error: DEVICE = 'cuda' is not available for layernorm: it has no device parameter and runs on the CPU; "
        "allowed: cpu, or no DEVICE")
    assert not toy.runs.exists() and not (ROOT / "runs" / "layernorm").exists()


def test_a_run_name_names_the_folder(toy, capsys):  # noqa: F811
    assert cli.main(["run", "toy", "n=4", "--name", "../x"], project=toy) == 2
    assert "run name '../x' is not allowed" in one_line(capsys.readouterr().err)
    assert cli.main(["run", "toy", "n=4", "--name", "first-try"], project=toy) == 0
    notebook = toy.runs / "toy" / "first-try" / "toy.ipynb"
    meta = json.loads(notebook.read_text())["metadata"]["attention_geometry"]
    assert meta["command"] == 'make run CHAPTER=toy PARAMS="n=4" NAME=first-try'  # the command that remakes it
    assert not (toy.runs / "toy" / "n-4").exists()


def test_a_parameter_given_twice_is_an_error(toy, capsys):  # noqa: F811
    with pytest.raises(ParameterError, match=r"^parameter 'L' is given twice \('abc' and '512'\); allowed: once$"):
        parse_assignments(["L=abc", "L=512"])
    with pytest.raises(ParameterError, match="given twice"):
        parse_assignments(["L=512", "L=512"])
    assert cli.main(["run", "toy", "n=abc", "n=4"], project=toy) == 2
    assert one_line(capsys.readouterr().err) == "error: parameter 'n' is given twice ('abc' and '4'); allowed: once"
    assert not toy.runs.exists()


def test_a_rule_joining_parameters_stops_run_and_sweep_before_any_cell(tmp_path, capsys):
    """Chapter 9's width d must be a multiple of 2 n_heads: checked with the parameters, exit 2."""
    project = Project(ROOT)
    assert cli.main(["run", "synthesis", "d=30", "n_heads=4"], project=project) == 2
    assert one_line(capsys.readouterr().err) == (
        "error: parameter 'd' = 30 is not a multiple of 2 n_heads = 8; allowed: a multiple of 2 n_heads")
    grid = tmp_path / "grid.yaml"
    grid.write_text("grid:\n  n_heads: [2, 4]\nfixed:\n  d: 12\n")
    assert cli.main(["sweep", "synthesis", str(grid), "--out", str(tmp_path / "out")], project=project) == 2
    assert "'d' = 12 is not a multiple of 2 n_heads = 8" in one_line(capsys.readouterr().err)
    assert not (tmp_path / "out").exists() and not (ROOT / "runs" / "synthesis" / "d-30_n_heads-4").exists()


def test_make_chapters_lists_each_chapters_presets(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    blocks = {block.split()[0]: block for block in re.split(r"\n  (?=\S)", out)[1:]}  # one per chapter
    assert set(blocks) == set(CHAPTERS)
    for name, chapter in CHAPTERS.items():
        presets = {line.split()[0]: line for line in blocks[name].splitlines() if line.strip().startswith("PRESET=")}
        assert set(presets) == {f"PRESET={p}" for p in ["smoke", *chapter.presets]}, name
        for preset, values in chapter.presets.items():
            for key, value in values.items():  # with its values
                assert f" {key}={json.dumps(value, separators=(',', ':'))}" in presets[f"PRESET={preset}"]


def make_serve(toy, tmp_path) -> subprocess.Popen:  # noqa: F811
    """`make serve` on the toy project's book, through the command pip installs (in
    tmp_path/bin), with the virtual environment taken as up to date."""
    console_script(tmp_path / "bin")
    stamp = tmp_path / "stamp"
    stamp.touch()  # newer than the requirements: nothing to install
    toy.html.mkdir(parents=True, exist_ok=True)
    (toy.html / "index.html").write_text("<html></html>")
    return subprocess.Popen(["make", "serve", f"BIN={tmp_path / 'bin'}", f"STAMP={stamp}", "PORT=0"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**{k: v for k, v in os.environ.items() if k not in MAKE_ENV},  # as from a shell,
                                 "AG_ROOT": str(toy.root)})                              # not from `make test`


#: what an enclosing make (`make test`) passes down: it would make this make a sub-make, which
#: prints "make[1]: Entering directory" first
MAKE_ENV = ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")


@pytest.mark.parametrize("when", ["serving", "importing"])
def test_ctrl_c_under_make_prints_interrupted_and_no_line_of_make(toy, tmp_path, when):  # noqa: F811
    """make adds "make: *** [Makefile:NN: serve] Error 130" for a command that exits 130;
    the recipe hands make the interrupt instead, and make stops as interrupted."""
    proc = make_serve(toy, tmp_path)
    if when == "serving":
        assert proc.stdout.readline().startswith("serving the book on http://localhost:")
    else:  # the command is starting (importing), its first handler in place
        deadline = time.monotonic() + 30
        while not any(_has_started(int(pid), proc.pid) for pid in os.listdir("/proc") if pid.isdigit()):
            assert time.monotonic() < deadline and proc.poll() is None, "the command never started"
            time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
    out, err = proc.communicate(timeout=30)
    assert (err, proc.returncode) == ("interrupted\n", -signal.SIGINT)  # make itself stopped by the interrupt


def test_a_command_interrupted_alone_still_fails_its_make_target(toy, tmp_path):  # noqa: F811
    """An exit status 130 that make did not see an interrupt for (the command's process
    was sent SIGINT alone) is a failure, which make reports."""
    proc = make_serve(toy, tmp_path)
    assert proc.stdout.readline().startswith("serving the book")
    command = next(int(pid) for pid in os.listdir("/proc") if pid.isdigit() and _is_console_script(int(pid), proc.pid))
    os.kill(command, signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert re.fullmatch(r"interrupted\nmake: \*\*\* \[Makefile:\d+: serve\] Error 130\n", err), err
    assert proc.returncode == 2


def _has_started(pid: int, group: int) -> bool:
    """Whether ``pid`` is the command in process group ``group``, its first handler in place."""
    try:
        return _is_console_script(pid, group) and handles_sigterm(pid)
    except OSError:  # it has just left
        return False


def _is_console_script(pid: int, group: int) -> bool:
    """Whether ``pid`` is the `attention-geometry` process in process group ``group``."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        return os.getpgid(pid) == group and len(argv) > 1 and argv[1].endswith(b"/attention-geometry")
    except (OSError, ProcessLookupError):
        return False
