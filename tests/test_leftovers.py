"""What killed runs leave is removed by the next one (issue 32 item 8): a report's build
folder, a kernel's folder with its connection file, connection files that older kernels
left in the temporary directory; and run reports share their static files."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from attention_geometry.book import cli
from attention_geometry.book.leftovers import clean_leftovers

from conftest import chapter_text, make_project, toy_chapter


def dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


@pytest.fixture
def private_tmp(monkeypatch):
    """A temporary directory of the test's own: clean_leftovers sees only what the test left
    (and touches nothing of other runs on the machine). A short path: kernel sockets live there."""
    folder = Path(tempfile.mkdtemp(prefix="agt-"))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("TMPDIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_killed_runs_kernel_folder_and_connection_file_are_removed(tmp_path, private_tmp):
    project = make_project(tmp_path / "p", {"toy": (chapter_text("Toy", "n = 3", "import time\ntime.sleep(60)"),
                                                     toy_chapter("toy"))})
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from conftest import toy_chapter
        from attention_geometry.book.execute import execute_chapter
        from attention_geometry.book.project import Project
        project = Project({str(project.root)!r}, chapters={{"toy": toy_chapter("toy")}})
        execute_chapter(project, project.chapter("toy"), {str(tmp_path / "out.ipynb")!r})
    """)
    runner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and not list(private_tmp.glob("ag-kernel-*/kernel.pid")):
        time.sleep(0.2)
    [folder] = list(private_tmp.glob("ag-kernel-*"))
    kernel = int((folder / "kernel.pid").read_text())
    assert (folder / "kernel.json").is_file()  # the connection file lives in the kernel's folder
    os.kill(runner.pid, signal.SIGKILL)
    runner.wait()
    assert not list(private_tmp.glob("tmp*.json"))  # and nowhere else
    try:
        removed = clean_leftovers()
        assert folder in removed and not folder.exists()
        for _ in range(50):  # the orphaned kernel is stopped
            try:
                os.kill(kernel, 0)
            except ProcessLookupError:
                break
            if Path(f"/proc/{kernel}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"kernel {kernel} still runs")
    finally:
        try:
            os.kill(kernel, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_connection_files_older_kernels_left_are_removed_only_for_dead_owners(private_tmp):
    def connection_file(owner: int) -> Path:
        fd, name = tempfile.mkstemp(".json")
        os.write(fd, json.dumps({"ip": f"{private_tmp}/ag-kernel-{owner}-abcd1234/kernel", "transport": "ipc"}).encode())
        os.close(fd)
        return Path(name)

    dead, alive = connection_file(dead_pid()), connection_file(os.getpid())
    other = private_tmp / "tmpother.json"
    other.write_text('{"ip": "127.0.0.1"}')
    assert dead.name.startswith("tmp")
    assert clean_leftovers() == [dead]
    assert alive.exists() and other.exists()


def test_a_report_build_folder_left_by_a_killed_run_is_removed(tmp_path, private_tmp):
    folder = tmp_path / "runs" / "toy" / "n-5"
    stale, old_style, live = (folder / f".report-{dead_pid()}-x1", folder / ".report-abc123",
                              folder / f".report-{os.getpid()}-x2")
    for path in (stale, old_style, live):
        (path / "html").mkdir(parents=True)
    assert sorted(clean_leftovers(folder)) == sorted([stale, old_style])
    assert live.exists()


TOY = chapter_text("Toy", "n = 3", "from myst_nb import glue\nglue('square', n * n, display=False)") + \
    "\nThe square is {glue:text}`square`.\n"


def test_run_reports_share_their_static_files_and_clean_a_killed_reports_folder(tmp_path, private_tmp):
    project = make_project(tmp_path, {"toy": (TOY, toy_chapter("toy"))})
    assert cli.main(["run", "toy", "n=5"], project=project) == 0
    stale = project.runs / "toy" / "n-6" / f".report-{dead_pid()}-x"
    (stale / "html" / "_static").mkdir(parents=True)
    assert cli.main(["run", "toy", "n=6"], project=project) == 0
    assert not stale.exists()
    first, second = (project.runs / "toy" / name / "html" / "_static" for name in ("n-5", "n-6"))
    files = [p for p in second.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    shared = sum(p.stat().st_size for p in files if os.path.samefile(p, first / p.relative_to(second)))
    assert size > 1_000_000 and shared > 0.95 * size, (shared, size)
    assert (project.runs / "toy" / "n-6" / "html" / "index.html").is_file()
    assert [p.name for p in (project.runs / "toy" / "n-6").iterdir() if p.name.startswith(".")] == []
