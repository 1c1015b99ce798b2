"""Interactive use and publishing: `make lab` opens the chapters as notebooks on the
project's kernel, a stray notebook beside a chapter stops the build with a message, the
downloaded executed notebook runs with the environment, the Pages workflow passes
actionlint and runs the README's two commands, and the licences and citation exist."""

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from attention_geometry.book import cli
from attention_geometry.book.project import Project
from attention_geometry.book.provenance import git_state
from attention_geometry.book.sphinx_pages import build_info, fold, fold_search_index

from conftest import make_project, toy_chapter

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_lab_opens_a_chapter_as_a_notebook_on_the_projects_kernel(tmp_path):
    token, port = secrets.token_hex(8), free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"), "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "ws")}
    proc = subprocess.Popen([str(BIN / "attention-geometry"), "lab", "--port", str(port), "--",
                             "--no-browser", f"--IdentityProvider.token={token}"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)

    def get(path):
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}",
                                         headers={"Authorization": f"token {token}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    try:
        deadline = time.time() + 90
        while True:
            try:
                get("/api/status")
                break
            except OSError:
                assert proc.poll() is None and time.time() < deadline, proc.stderr.read() if proc.poll() else "timeout"
                time.sleep(0.5)
        model = get("/api/contents/book/07_cesaro.md?type=notebook&content=1")
        cells = model["content"]["cells"]
        assert model["type"] == "notebook" and any("parameters" in c["metadata"].get("tags", []) for c in cells)
        spec = get("/api/kernelspecs")
        kernel = spec["kernelspecs"][model["content"]["metadata"]["kernelspec"]["name"]]["spec"]
        assert Path(kernel["argv"][0]).resolve().parent == BIN.resolve() or kernel["argv"][0] == "python", kernel
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
    settings = json.loads(cli.lab_settings_file().read_text())
    viewers = settings["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers["markdown"] == "Jupytext Notebook"


def test_a_stray_notebook_beside_a_chapter_stops_the_build_at_once(tmp_path, capsys):
    project = make_project(tmp_path, {"toy": ("\n# Toy\n\n```{code-cell} ipython3\n:tags: [parameters]\nn = 3\n```\n",
                                              toy_chapter("toy"))})
    subprocess.run([str(BIN / "jupytext"), "--to", "ipynb", "book/toy.md"], cwd=tmp_path, check=True,
                   capture_output=True)
    assert (tmp_path / "book" / "toy.ipynb").exists()
    assert cli.main(["book", "--jobs", "1"], project=project) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: book/toy.ipynb lies beside book/toy.md")
    assert "jupytext --to myst book/toy.ipynb -o book/toy.md" in err[0]
    assert not project.executed.exists()


@pytest.mark.book
def test_the_downloaded_executed_notebook_runs_with_the_environment(built_book, tmp_path):
    """A reader downloads a chapter's executed notebook from the book and runs it,
    anywhere, with this environment (no PYTHONPATH, no repository as working folder)."""
    downloaded = tmp_path / "01_layernorm.ipynb"
    downloaded.write_bytes((built_book / "_sources" / "book" / "01_layernorm.ipynb").read_bytes())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AG_ROOT")}
    done = subprocess.run([str(BIN / "jupyter"), "nbconvert", "--to", "notebook", "--execute", "--output",
                           "ran.ipynb", str(downloaded)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    ran = json.loads((tmp_path / "ran.ipynb").read_text())
    errors = [o for c in ran["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


def test_the_pages_workflow_passes_actionlint_and_runs_the_readme_commands():
    workflow = ROOT / ".github" / "workflows" / "book.yml"
    done = subprocess.run([str(BIN / "actionlint"), str(workflow)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    jobs = yaml.safe_load(workflow.read_text())["jobs"]
    runs = [step.get("run", "") for step in jobs["build"]["steps"]]
    assert "make book" in runs and "make test" in runs  # the README's two commands
    uses = [step.get("uses", "") for job in jobs.values() for step in job["steps"]]
    assert any(u.startswith("actions/deploy-pages@") for u in uses)
    assert any(u.startswith("actions/upload-pages-artifact@") for u in uses)
    cached = [step["with"]["path"] for step in jobs["build"]["steps"] if step.get("uses", "").startswith("actions/cache@")]
    assert cached == [".venv", "_build/executed"]
    readme = (ROOT / "README.md").read_text()
    assert "make book" in readme and "make test" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert [line for line in ci.splitlines() if line.startswith("make ")] == ["make book", "make test"]


def test_the_cache_key_covers_what_the_build_keys(tmp_path, capsys):
    project = make_project(tmp_path, {"toy": ("\n# Toy\n\n```{code-cell} ipython3\n:tags: [parameters]\nn = 3\n```\n",
                                              toy_chapter("toy"))}, library={"lib/m.py": "x = 1\n"})
    assert cli.main(["cache-key"], project=project) == 0
    first = capsys.readouterr().out.strip()
    (tmp_path / "src" / "lib" / "m.py").write_text("x = 2\n")
    assert cli.main(["cache-key"], project=project) == 0
    assert re.fullmatch(r"[0-9a-f]{64}", first) and capsys.readouterr().out.strip() != first


def test_licences_citation_and_copyright_holder():
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    assert "CC BY 4.0" in (ROOT / "LICENSE-TEXT").read_text()
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["authors"][0]["name"] == "The Attention Geometry authors"
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["copyright"].endswith("The Attention Geometry authors")


def test_search_index_gets_accent_folded_terms():
    assert fold("Cesàro") == "Cesaro"
    index = 'Search.setIndex({"terms":{"ces\\u00e0ro":[1,3],"cesaro":2,"sum":0},"titleterms":{"ces\\u00e0ro":4}})'
    data = json.loads(fold_search_index(index)[len("Search.setIndex("):-1])
    assert data["terms"]["cesaro"] == [1, 2, 3] and data["terms"]["cesàro"] == [1, 3]
    assert data["titleterms"]["cesaro"] == 4 and data["terms"]["sum"] == 0


def test_the_footer_and_stored_runs_read_the_same_git_state(tmp_path):
    """The page footer (build_info, from a folder inside the clone) and a stored run
    (git_state, from the project's root) see one commit; an edit counts as a change,
    one under results/ does not; outside git both are unknown."""
    for rel in ("a.txt", "book/page.md", "results/run.json"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("1")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-C", str(tmp_path)]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "toy"]):
        subprocess.run([*git, *args], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()

    def states():
        info = build_info(tmp_path / "book")
        return git_state(Project(tmp_path)), {"commit": info["commit"], "dirty": info["dirty"]}

    assert states() == ({"commit": commit, "dirty": False},) * 2
    (tmp_path / "results" / "run.json").write_text("2")
    assert states() == ({"commit": commit, "dirty": False},) * 2
    (tmp_path / "a.txt").write_text("2")
    assert states() == ({"commit": commit, "dirty": True},) * 2
    outside = tmp_path.parent / f"{tmp_path.name}-no-git"
    outside.mkdir()
    assert git_state(Project(outside)) == {"commit": None, "dirty": None}
    assert build_info(outside)["commit"] is None and build_info(outside)["dirty"] is None


@pytest.mark.book
def test_the_built_book_names_its_licences_and_states_its_provenance(built_book):
    """The footer's commit and date are text in the page (no script fills them)."""
    page = (built_book / "book" / "01_layernorm.html").read_text()
    assert "CC BY 4.0" in page and "The Attention Geometry authors" in page and "ag-build-info.js" not in page
    assert re.search(r'<span id="ag-build">Built \d{4}-\d\d-\d\d \d\d:\d\d UTC from commit '
                     r'<a href="appendix_reproducibility.html">[0-9a-f]{10}</a>', page)
