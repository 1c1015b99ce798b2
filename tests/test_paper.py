"""Paper-scale runs: a killed run resumes from its checkpoints, other parameters
are refused, the stored files and their provenance, the freshness check that
fails the book, and bad input stopped before anything runs."""

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Literal

import pytest
from pydantic import Field

from attention_geometry.book import CHAPTERS, cli
from attention_geometry.book.context import run_context
from attention_geometry.book.paper import (
    PaperRunError, StalePaperRun, check_paper_run_fresh, load_paper_run, run_paper,
)
from attention_geometry.book.project import Project

from conftest import make_project, toy_chapter

TOY = """
# Toy at the paper's settings

```{code-cell} ipython3
:tags: [parameters]
n_items = 3
scale = 1
device = "cpu"
```

```{code-cell} ipython3
import json, time
from attention_geometry.book import glue, run_context
from attention_geometry.book.claims import glue_claim_records
from attention_geometry.checkpoint import resumable_map

ctx = run_context()

def work(i):
    with open("work.log", "a") as fh:  # the chapter's folder: book/
        fh.write(f"{i}\\n")
    time.sleep(0.7)
    return i * scale

results = resumable_map(work, range(n_items), store=ctx.checkpoints, name="toy",
                        key={"n_items": n_items, "scale": scale})
glue({"total": sum(results), "kind": ctx.kind, "device_used": device, "paper_note": "a toy run"})
out = ctx.output_path("toy-items.txt")  # stored beside the values by a paper run only
if out:
    out.write_text(" ".join(map(str, results)))
glue_claim_records([{"claim": "the sum", "value": sum(results)}])
```
"""

PARAMS = {"n_items": (int, Field(3, ge=1, le=100, description="items")),
          "scale": (int, Field(1, ge=1, le=10, description="scale")),
          "device": (Literal["cpu", "cuda"], Field("cpu", description="device"))}
PAPER = {"n_items": 6, "scale": 2, "device": "cuda"}


def toy_spec(**preset) -> dict:
    return {"toy": toy_chapter("toy", params=PARAMS, presets={"paper": {**PAPER, **preset}})}


def log_lines(project: Project) -> list[str]:
    path = project.root / "book" / "work.log"
    return path.read_text().split() if path.exists() else []


def start_paper_run(project: Project) -> subprocess.Popen:
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_paper import toy_spec
        from attention_geometry.book import paper
        from attention_geometry.book.cli import main
        from attention_geometry.book.project import Project
        paper.HEARTBEAT_S = 0.2  # the killed part records its elapsed time often
        sys.exit(main(["paper", "toy", "--device", "cpu"], project=Project({str(project.root)!r}, chapters=toy_spec())))
    """)
    return subprocess.Popen([sys.executable, "-c", script], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Project:
    """A paper run killed (SIGKILL to the runner and its kernel) after three of its six
    items, refused with other parameters, then started again: it resumes."""
    project = make_project(tmp_path_factory.mktemp("paper"), {"toy": (TOY, toy_spec()["toy"])})
    proc = start_paper_run(project)
    deadline = time.time() + 120
    while len(log_lines(project)) < 4 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    killed_at = log_lines(project)
    assert len(killed_at) >= 4, (killed_at, proc.stderr.read())
    folder = project.root / "results" / "toy" / "paper"
    assert not (folder / "values.json").exists()  # nothing stored before the end
    assert json.loads((folder / "checkpoints" / "parameters.json").read_text())["n_items"] == 6

    other = Project(project.root, chapters=toy_spec(n_items=7))
    with pytest.raises(PaperRunError) as err:
        run_paper(other, other.chapter("toy"), device="cpu", progress=False)
    message = str(err.value)
    assert '"n_items": 6' in message and '"n_items": 7' in message and "--restart" in message

    run_paper(project, project.chapter("toy"), device="cpu", progress=False, report=lambda line: None)
    return project, killed_at


def test_a_killed_run_resumes_without_recomputing_finished_items(stored):
    project, killed_at = stored
    lines = log_lines(project)
    finished = [str(i) for i in range(len(killed_at) - 1)]  # items checkpointed before the kill
    for item in finished:
        assert lines.count(item) == 1, (item, lines)
    assert sorted(set(lines), key=int) == [str(i) for i in range(6)]
    # finished: the checkpoints are gone, so no later run reuses what this code computed
    assert not (project.root / "results" / "toy" / "paper" / "checkpoints").exists()


def test_stored_files_values_and_provenance(stored):
    project, _ = stored
    folder = project.root / "results" / "toy" / "paper"
    assert sorted(p.name for p in folder.iterdir() if p.is_file()) == [
        "parameters.json", "provenance.json", "toy-items.txt", "toy.ipynb", "values.json"]
    run = load_paper_run("toy", project)
    assert run.parameters == {"n_items": 6, "scale": 2, "device": "cpu"}
    assert run.values["total"] == 30 and run.values["kind"] == "paper" and run.values["device_used"] == "cpu"
    assert run.claims == [{"claim": "the sum", "value": 30}]
    assert "claims_json" not in run.values and "claims" not in run.values
    p = run.provenance
    assert p["device"] == "cpu" and p["device_name"] and p["cpu_cores"] == os.cpu_count()
    assert p["torch"] and p["numpy"] and p["wall_seconds"] > 0 and p["note"] == "a toy run"
    assert run.hours_for("n_items", 60) == pytest.approx(p["wall_seconds"] * 10 / 3600)  # 60 items: ten times 6
    assert p["resumed"] is True and p["date"] and "commit" in p and "dirty" in p
    # the killed part's time counts: it ran at least until three items were logged
    assert p["parts"] == 2 and p["wall_seconds"] > p["last_part_seconds"] + 0.1
    assert len(p["part_commits"]) == 2  # the commit each part ran at (None: the toy is no git repository)
    assert len(p["part_started"]) == 2 and p["started"] == p["part_started"][0] <= p["part_started"][1]
    assert not (folder / "checkpoints" / "parts.json").exists()
    assert (folder / "toy.ipynb").stat().st_size < 3_000_000
    assert all(f.stat().st_mode & 0o777 == 0o644 for f in folder.iterdir() if f.is_file())
    assert load_paper_run("toy", Project(project.root / "elsewhere", chapters=project.chapters)) is None


def test_reproducibility_appendix_lists_the_stored_run(stored):
    from attention_geometry.book.appendices import reproducibility_page
    from attention_geometry.book.toc import book_chapters

    project, _ = stored
    page = reproducibility_page(book_chapters(project), project)
    run = load_paper_run("toy", project)
    row = next(line for line in page.splitlines() if "`make paper CHAPTER=toy`" in line)
    assert run.provenance["device_name"] in row and f"{run.provenance['wall_seconds']:.0f}" in row
    assert "a toy run" in row and "| `make run CHAPTER=toy` | not executed |" in page


def test_a_changed_preset_makes_the_stored_run_stale_and_fails_the_book(stored, capsys):
    project, _ = stored
    check_paper_run_fresh("toy", project)
    check_paper_run_fresh("toy", Project(project.root, chapters=toy_spec(device="cpu")))  # device ignored
    changed = Project(project.root, chapters=toy_spec(scale=3))
    with pytest.raises(StalePaperRun) as err:
        check_paper_run_fresh("toy", changed)
    assert str(err.value) == (
        "the stored paper run of chapter 'toy' (results/toy/paper) does not match its 'paper' preset "
        "(scale: stored 2, preset 3); regenerate it with: make paper CHAPTER=toy")
    assert cli.main(["book", "--jobs", "1"], project=changed) == 1
    assert "make paper CHAPTER=toy" in capsys.readouterr().err
    assert not changed.executed.exists()  # failed before executing anything


def test_a_run_under_way_at_the_changed_preset_keeps_the_stored_run(stored):
    """A run longer than a session: the preset changes first, its checkpoints are committed part by
    part, and the last finished run stays stored and shown, its provenance line naming the run under
    way. Checkpoints at other settings than the preset do not excuse a stale run."""
    import shutil

    from attention_geometry.book.claims import provenance_line
    from attention_geometry.book.paper import run_under_way

    project, _ = stored
    changed = Project(project.root, chapters=toy_spec(scale=3))
    checkpoints = project.root / "results" / "toy" / "paper" / "checkpoints"
    assert run_under_way("toy", changed) is None
    checkpoints.mkdir()
    try:
        (checkpoints / "parameters.json").write_text(json.dumps({"n_items": 6, "scale": 3, "device": "cpu"}))
        assert run_under_way("toy", changed) == {"n_items": 6, "scale": 3, "device": "cpu"}
        check_paper_run_fresh("toy", changed)  # not stale: the run at the new preset is under way
        line = provenance_line(load_paper_run("toy", changed))
        assert "A run at new settings (scale 3) is under way" in line and "stored run of commit" in line
        with pytest.raises(StalePaperRun, match="scale: stored 2, preset 4"):
            check_paper_run_fresh("toy", Project(project.root, chapters=toy_spec(scale=4)))
        assert run_under_way("toy", project) is None  # the preset of the stored run: nothing under way for it
        from attention_geometry.book.paper import checkpointed_parameters
        assert checkpointed_parameters(checkpoints.parent) == {"n_items": 6, "scale": 3, "device": "cpu"}
        (checkpoints / "parameters.json").write_text("[1, 2")  # cut off: moved aside, read as none
        assert checkpointed_parameters(checkpoints.parent) is None and run_under_way("toy", changed) is None
        assert "under way" not in provenance_line(load_paper_run("toy", changed))
    finally:
        shutil.rmtree(checkpoints)
    assert "under way" not in provenance_line(load_paper_run("toy", project))


def test_a_parameter_the_chapter_gained_since_the_run_does_not_make_it_stale(stored):
    """The run's own measurements stand at its settings; the gained parameter's rows wait for a run."""
    project, _ = stored
    gained = {**PARAMS, "width": (int, Field(1, ge=1, le=10, description="width"))}
    grown = Project(project.root, chapters={"toy": toy_chapter("toy", params=gained,
                                                               presets={"paper": {**PAPER, "width": 4}})})
    check_paper_run_fresh("toy", grown)
    lost = Project(project.root, chapters={"toy": toy_chapter("toy", params={k: v for k, v in PARAMS.items()
                                                                            if k != "scale"},
                                                              presets={"paper": {"n_items": 6}})})
    with pytest.raises(StalePaperRun, match="scale: stored 2, preset null"):
        check_paper_run_fresh("toy", lost)


def test_restart_discards_checkpoints(stored, tmp_path):
    project, _ = stored
    checkpoints = project.root / "results" / "toy" / "paper" / "checkpoints"
    checkpoints.mkdir()  # an unfinished run's, as a clone would have it (a finished run removed its own)
    (checkpoints / "parameters.json").write_text(json.dumps({"n_items": 2}))  # another value: refused
    small = Project(project.root, chapters=toy_spec(n_items=1))
    with pytest.raises(PaperRunError):
        run_paper(small, small.chapter("toy"), device="cpu", progress=False)
    run = run_paper(small, small.chapter("toy"), device="cpu", restart=True, progress=False,
                    report=lambda line: None)
    assert run.values["total"] == 0 and run.provenance["resumed"] is False


def test_bad_chapter_preset_and_device_stop_before_anything_runs(capsys, tmp_path):
    assert cli.main(["paper", "no_such_chapter"]) == 2
    assert "unknown chapter 'no_such_chapter'" in capsys.readouterr().err
    assert cli.main(["paper", "layernorm"]) == 2
    assert capsys.readouterr().err == (
        "error: chapter 'layernorm' has no 'paper' preset; chapters with one: "
        + ", ".join(n for n, c in CHAPTERS.items() if "paper" in c.presets) + "\n")
    assert cli.main(["paper", "jacobians", "--device", "tpu"]) == 2
    assert capsys.readouterr().err == "error: device 'tpu' is unknown; allowed: cpu, cuda\n"
    import torch

    if not torch.cuda.is_available():
        assert cli.main(["paper", "jacobians", "--device", "cuda"]) == 2
        assert "torch sees no CUDA device here" in capsys.readouterr().err
    assert not (Path(__file__).parents[1] / "results" / "layernorm").exists()


def test_a_file_the_chapter_writes_is_stored_beside_the_run_with_its_digest(stored, tmp_path):
    """A file written through RunContext.output_path moves out of the checkpoints into the
    stored run, named with its SHA-256 in the provenance; PaperRun.file finds it, and
    refuses a file whose content is not the one stored."""
    import hashlib
    import shutil

    from attention_geometry.book.paper import _store_run

    project, _ = stored
    run = load_paper_run("toy", project)
    path = run.file("toy-items.txt")
    assert path.read_text() == " ".join(str(2 * i) for i in range(run.parameters["n_items"]))  # 1 item after a restart
    assert run.provenance["files"] == {"toy-items.txt": hashlib.sha256(path.read_bytes()).hexdigest()}
    assert run.file("other.npz") is None
    copy = tmp_path / "paper"
    shutil.copytree(run.folder, copy)
    (copy / "toy-items.txt").write_text("edited")
    with pytest.raises(PaperRunError, match="is not the file the run stored"):
        dataclasses.replace(run, folder=copy).file("toy-items.txt")
    # a later run that writes no such file: the earlier one goes with its name
    _store_run(copy, project.chapter("toy"), __import__("nbformat").v4.new_notebook(), {}, None, run.parameters,
               run.provenance.replace(files=None), [])
    assert not (copy / "toy-items.txt").exists() and (copy / "values.json").exists()
    ctx = run_context({"AG_RUN_KIND": "paper", "AG_CHECKPOINT_DIR": str(tmp_path / "ck")})
    assert ctx.output_path("a.npz") == tmp_path / "ck" / "outputs" / "a.npz" and (tmp_path / "ck" / "outputs").is_dir()
    assert run_context({}).output_path("a.npz") is None
    with pytest.raises(ValueError, match="a plain file name"):
        ctx.output_path("../a.npz")


def test_run_context_reads_the_kernel_environment(tmp_path):
    ctx = run_context({})
    assert ctx.kind == "book" and not ctx.checkpoints and not ctx.is_paper_run
    ctx = run_context({"AG_RUN_KIND": "paper", "AG_CHECKPOINT_DIR": str(tmp_path)})
    assert ctx.is_paper_run and ctx.checkpoints.folder == tmp_path
    assert not run_context({"AG_RUN_KIND": "sweep", "AG_CHECKPOINT_DIR": str(tmp_path)}).checkpoints
    with pytest.raises(ValueError, match="AG_RUN_KIND='nope' is not a run kind; allowed: book, run, paper"):
        run_context({"AG_RUN_KIND": "nope"})
    assert run_context({"AG_TORCH_THREADS": "1"}).cores == 1  # a book build's kernel on 2 cores
    assert run_context({}).cores == (os.cpu_count() or 1)  # a paper run, or a kernel started by hand
    with pytest.raises(ValueError, match="AG_TORCH_THREADS='0' is not a number of threads; allowed: an integer >= 1"):
        run_context({"AG_TORCH_THREADS": "0"})


def test_every_chapter_preset_is_a_valid_paper_run():
    """Every ``paper`` preset of the book passes its chapter's checks on either device."""
    from attention_geometry.book.paper import paper_parameters

    project = Project.find(Path(__file__).parent)
    for name in project.chapters:
        chapter = project.chapter(name)
        if "paper" in chapter.presets:
            for device in ("cpu", "cuda"):
                params = paper_parameters(project, chapter, device)
                assert params.get("device", device) == device


def test_stored_claims_gain_only_derived_fields_and_the_amendment_is_recorded(tmp_path):
    from attention_geometry.book.claims import provenance_line
    from attention_geometry.book.paper import amend_stored_claims

    (tmp_path / "_toc.yml").write_text("root: x\n")
    folder = tmp_path / "results" / "toy" / "paper"
    folder.mkdir(parents=True)
    record = {"id": "a", "verdict": {"label": "refuted", "reason": "r"}, "measured": "1", "settings": "s"}
    (folder / "values.json").write_text(json.dumps({"x": 1.0, "claims": [record, {**record, "id": "b"}]}))
    (folder / "parameters.json").write_text("{}")
    (folder / "provenance.json").write_text(json.dumps({"commit": "abc", "wall_seconds": 60}))
    project = Project(tmp_path, chapters={})
    run = amend_stored_claims(project, "toy", "shortfall", {"a": "trained 2 % of the steps"}, "added the shortfall")
    assert run.claims[0]["shortfall"] == "trained 2 % of the steps" and "shortfall" not in run.claims[1]
    assert run.claims[0]["measured"] == "1" and run.values == {"x": 1.0}
    (amendment,) = run.provenance["amendments"]
    assert amendment["field"] == "shortfall" and amendment["claims"] == ["a"] and amendment["date"]
    assert "mended" not in provenance_line(run)  # the page says what was measured, not how the file was kept
    for field, values, why, match in [("verdict", {"a": "x"}, "w", "cannot be amended"),
                                      ("shortfall", {"zz": "x"}, "w", "not in the stored run"),
                                      ("shortfall", {"a": "x"}, "", "why")]:
        with pytest.raises(PaperRunError, match=match):
            amend_stored_claims(project, "toy", field, values, why)
    with pytest.raises(PaperRunError, match="no stored paper run"):
        amend_stored_claims(project, "other", "shortfall", {"a": "x"}, "w")


def test_stored_claims_gain_the_evidence_of_their_verdict_only_if_it_gives_the_stored_verdict(tmp_path):
    """A stored run made before verdicts kept evidence gets it rebuilt from its measurements, and the
    build then computes the verdict with today's rules; evidence that does not give the stored
    reason is refused."""
    from attention_geometry.book.paper import attach_evidence
    from attention_geometry.stats import Estimate
    from attention_geometry.verdicts import recompute, sign_verdict

    made = sign_verdict(Estimate(0.5, 0.2, df=30), 1)
    (tmp_path / "_toc.yml").write_text("root: x\n")
    folder = tmp_path / "results" / "toy" / "paper"
    folder.mkdir(parents=True)
    record = {"id": "a", "verdict": {"label": made.label, "reason": made.reason}, "measured": "1", "settings": "s"}
    (folder / "values.json").write_text(json.dumps({"claims": [record, {**record, "id": "b"}]}))
    (folder / "parameters.json").write_text("{}")
    (folder / "provenance.json").write_text(json.dumps({"commit": "abc", "wall_seconds": 60}))
    project = Project(tmp_path, chapters={})
    with pytest.raises(PaperRunError, match="is not the stored"):
        attach_evidence(project, "toy", {"a": sign_verdict(Estimate(0.6, 0.2, df=30), 1)}, "rebuilt")
    with pytest.raises(PaperRunError, match="not in the stored run"):
        attach_evidence(project, "toy", {"zz": made}, "rebuilt")
    changes = attach_evidence(project, "toy", {"a": sign_verdict(Estimate(0.5, 0.2, df=30), 1)}, "rebuilt")
    assert changes == {"a": ("reproduced", "reproduced")}
    stored = json.loads((folder / "values.json").read_text())["claims"]
    assert stored[0]["verdict"]["evidence"]["rule"] == "sign_verdict" and "evidence" not in stored[1]["verdict"]
    assert recompute(stored[0]["verdict"]) == made
    assert json.loads((folder / "provenance.json").read_text())["amendments"][0]["field"] == "evidence"
    # where the rule has changed since the run, the reason the run's own code gives is checked instead
    changes = attach_evidence(project, "toy", {"b": sign_verdict(Estimate(0.5, 0.2, df=30), 1, level=0.999)},
                              "rebuilt", as_stored={"b": made.reason})
    assert changes == {"b": ("reproduced", "not decided")}


def test_an_unfinished_runs_checkpoints_can_be_committed_but_not_its_partial_notebooks():
    """An unfinished run is carried to another clone by committing its checkpoints; git
    ignores only the scratch notebooks (the repository's own .gitignore)."""
    root = Path(__file__).resolve().parents[1]
    checkpoints = "results/jacobians/paper/checkpoints"
    paths = [f"{checkpoints}/{name}" for name in (
        "profiles-0123abcd.pt", "parameters.json", "parts.json", "08_jacobians.ipynb",
        ".08_jacobians.42.ea5814fd.partial.ipynb", ".08_jacobians.42.ea5814fd.partial.source.ipynb")]
    done = subprocess.run(["git", "check-ignore", "--no-index", *paths], cwd=root, capture_output=True, text=True)
    if done.returncode == 128:
        pytest.skip(f"not a git checkout: {done.stderr.strip()}")
    assert sorted(done.stdout.split()) == sorted(paths[3:])


def test_a_device_check_is_stored_with_its_provenance_and_shown_by_the_chapter_line(tmp_path, monkeypatch):
    """The GPU check of chapter 8, run tiny on the CPU with --out: stored in
    results/jacobians/device_check.json with its provenance, read back by
    load_device_check and worded by device_check_line (or the line says it is not
    measured yet)."""
    from attention_geometry.book.claims import device_check_line
    from attention_geometry.book.paper import load_device_check, store_device_check

    (tmp_path / "_toc.yml").write_text("root: x\n")
    line = dict(what="the exact profile", command="python benchmarks/gpu_check_jacobians.py --out")
    assert load_device_check("jacobians", tmp_path) is None
    assert "not measured yet: the exact profile needs a GPU" in device_check_line(None, **line)
    with pytest.raises(ValueError, match="measured"):
        store_device_check(Project(tmp_path), "jacobians", {"k": 4}, command="x", device="cpu")
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_check_jacobians.py"
    done = subprocess.run(
        [sys.executable, str(script), "--device", "cpu", "--layers", "1", "--width", "8", "--heads", "2",
         "--kv-heads", "1", "--seq-len", "8", "--sequences", "4", "--exact-dirs", "8", "--k", "2", "--n-boot", "10",
         "--out"], env={**os.environ, "AG_ROOT": str(tmp_path)}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    check = load_device_check("jacobians", tmp_path)
    assert check["width"] == 8 and check["k"] == 2 and len(check["exact_rho2"]) == 8
    assert 0 <= check["median_rel_error"] <= check["max_rel_error"]
    assert f"median relative error of rho {check['median_rel_error']:.2%}" in check["measured"]
    p = check["provenance"]
    assert p["device"] == "cpu" and p["device_name"] and p["date"] and "--width 8" in p["command"]
    shown = device_check_line(check, **line)
    assert shown.startswith("*On a GPU* (stored device check, ") and check["measured"] in shown


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(Project.find(__file__).root), *args], capture_output=True, text=True)


def test_every_commit_a_stored_run_names_is_in_the_history():
    """A reader checks out the commit a stored run was made at: each one its provenance names
    (the run's and every part's) must be reachable from HEAD, not left on a squash-merged branch."""
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() != "false":
        pytest.skip("not a full git clone: the history is not here to check")
    project = Project.find(__file__)
    missing = {}
    stored = sorted(project.results.glob("*/paper/provenance.json"))
    assert stored, f"no stored run under {project.results}"
    for provenance in stored:
        p = json.loads(provenance.read_text())
        for commit in {p["commit"], *p.get("part_commits", [])}:
            if _git("merge-base", "--is-ancestor", commit, "HEAD").returncode != 0:
                missing.setdefault(provenance.parent.parent.name, []).append(commit[:10])
    assert not missing, f"stored runs name commits that are not in HEAD's history: {missing}"


@pytest.mark.parametrize("name", ["values.json", "provenance.json"])
def test_a_corrupt_stored_result_is_one_line_naming_the_file_and_the_fix(tmp_path, capsys, name):
    """A cut-off values.json or provenance.json: each reader (the book build, its appendix, a
    chapter's claims through load_paper_run, a run, a stored sweep, a device check) says which
    file and how to get it back, in one line, before anything executes; never a JSONDecodeError."""
    from attention_geometry.book.appendices import reproducibility_page
    from attention_geometry.book.files import StoredResultCorrupt
    from attention_geometry.book.paper import load_device_check
    from attention_geometry.book.sweep_results import load_sweep_results
    from attention_geometry.book.toc import book_chapters

    project = make_project(tmp_path, {"toy": (TOY, toy_spec()["toy"])})
    folder = tmp_path / "results" / "toy" / "paper"
    folder.mkdir(parents=True)
    stored = {"values.json": {"total": 30, "claims": []}, "parameters.json": {**PAPER, "device": "cpu"},
              "provenance.json": {"commit": "abc", "wall_seconds": 60}}
    for file, data in stored.items():
        (folder / file).write_text(json.dumps(data, indent=1))
    load_paper_run("toy", project)  # intact: read
    (folder / name).write_text(json.dumps(stored[name], indent=1)[:15])  # a copy cut off
    expected = (f"the stored result results/toy/paper/{name} is not valid JSON (")
    fix = (f"restore it from git (git checkout -- results/toy/paper/{name}), or compute it again with: "
           "make paper CHAPTER=toy")

    def one_error_line(err: str) -> str:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in err and "JSONDecodeError" not in err, err
        assert lines[0].startswith(f"error: {expected}") and lines[0].endswith(fix), lines[0]
        return lines[0]

    assert cli.main(["book", "--jobs", "1"], project=project) == 1
    one_error_line(capsys.readouterr().err)
    assert not project.executed.exists()  # before executing anything
    assert cli.main(["run", "toy", "n_items=2"], project=project) == 1
    one_error_line(capsys.readouterr().err)
    assert not project.runs.exists()
    for read in (lambda: load_paper_run("toy", project), lambda: reproducibility_page(book_chapters(project), project)):
        with pytest.raises(StoredResultCorrupt) as err:
            read()
        assert str(err.value).startswith(expected) and str(err.value).endswith(fix)
    assert (folder / name).read_text() == json.dumps(stored[name], indent=1)[:15]  # left as it is, for git

    sweep = tmp_path / "results" / "toy" / "sweeps" / "grid"
    sweep.mkdir(parents=True)
    (sweep / "results.csv").write_text("run,status,key,value\n")
    (sweep / "provenance.json").write_text('{"commit": ')
    with pytest.raises(StoredResultCorrupt, match=r"results/toy/sweeps/grid/provenance.json is not valid JSON .*"
                       r"make sweep CHAPTER=toy GRID=sweeps/grid.yaml OUT=results/toy/sweeps/grid$"):
        load_sweep_results("toy", "grid", project)
    (tmp_path / "results" / "toy" / "device_check.json").write_text('{"measured": "x"')
    with pytest.raises(StoredResultCorrupt, match="results/toy/device_check.json is not valid JSON"):
        load_device_check("toy", project)


def test_a_run_that_left_no_checkpoints_starts_again_and_a_kill_throws_away_time(tmp_path):
    """An unfinished run (its parameters and 50 s of a killed part recorded) that left no
    checkpoint starts from the beginning and says so, not "resuming"; its earlier part is
    not the run's time. One that left a checkpoint 3 s into the killed part resumes, and
    counts those 3 s only: the 47 s after the checkpoint were thrown away by the kill."""
    from datetime import datetime, timezone

    project = make_project(tmp_path, {"toy": (TOY, toy_spec(n_items=1)["toy"])})
    chapter = project.chapter("toy")
    checkpoints = tmp_path / "results" / "toy" / "paper" / "checkpoints"
    killed_at = int(time.time()) - 3600  # whole seconds, as a part's start is recorded
    started = datetime.fromtimestamp(killed_at, timezone.utc).isoformat(timespec="seconds")

    def unfinished(*kept: str) -> None:
        checkpoints.mkdir(parents=True, exist_ok=True)
        (checkpoints / "parameters.json").write_text(json.dumps({**PAPER, "n_items": 1, "device": "cpu"}))
        (checkpoints / "parts.json").write_text(json.dumps({"parts": [50.0], "commits": ["c0ffee"],
                                                            "starts": [started]}))
        (checkpoints / "toy.ipynb").write_text("{}")  # the killed part's scratch notebook: not a checkpoint
        for name in kept:
            (checkpoints / name).write_bytes(b"state")
            os.utime(checkpoints / name, (killed_at + 3, killed_at + 3))

    unfinished()
    messages = []
    run = run_paper(project, chapter, device="cpu", progress=False, report=messages.append)
    assert "from the beginning: the unfinished run left no checkpoints to resume from" in messages[0]
    assert "resuming" not in " ".join(messages)
    p = run.provenance
    assert p["resumed"] is False and p["parts"] == 1 and p["discarded_seconds"] == 50.0
    assert p["wall_seconds"] == p["last_part_seconds"] and p["started"] != started

    unfinished("other-0123456789abcdef.pt")  # a checkpoint written 3 s into the killed part
    messages = []
    run = run_paper(project, chapter, device="cpu", progress=False, report=messages.append)
    assert "resuming from its checkpoints" in messages[0]
    p = run.provenance
    assert p["resumed"] is True and p["parts"] == 2 and p["started"] == started
    assert p["discarded_seconds"] == 47.0
    assert p["wall_seconds"] == pytest.approx(3.0 + p["last_part_seconds"], abs=0.15)


def test_a_parameter_gained_since_does_not_stop_a_resumption_a_changed_one_does(tmp_path):
    """A chapter that gained a measurement (and its parameter) since its paper run was
    interrupted resumes the run; a parameter whose value changed refuses it."""
    from attention_geometry.book.paper import _claim_checkpoints
    chapter = SimpleNamespace(name="toy")
    checkpoints = tmp_path / "checkpoints"
    checkpoints.mkdir()
    (checkpoints / "parameters.json").write_text(json.dumps({"n_items": 6}))
    lines = []
    assert _claim_checkpoints(chapter, checkpoints, {"n_items": 6, "width_dims": [3, 4]}, False, lines.append)
    assert lines == ["resuming with the parameters the chapter gained (width_dims)"]
    assert json.loads((checkpoints / "parameters.json").read_text())["width_dims"] == [3, 4]
    with pytest.raises(PaperRunError, match="--restart"):
        _claim_checkpoints(chapter, checkpoints, {"n_items": 7, "width_dims": [3, 4]}, False, lines.append)


def test_a_stored_run_keeps_a_glued_markdown_table_as_its_source():
    """values.json holds a Markdown glue (a table) as the Markdown it shows, not its text/plain form,
    which is only the repr of the display object; numbers and strings stay as they are."""
    from attention_geometry.book.notebooks import glued_data

    def glued(name, data):
        return {"output_type": "display_data", "data": data, "metadata": {"scrapbook": {"name": name, "mime_prefix": ""}}}

    table = "| a | b |\n|---|---|\n| 1 | 2 |"
    nb = {"cells": [{"cell_type": "code", "outputs": [
        glued("tab", {"text/markdown": table, "text/plain": "<IPython.core.display.Markdown object>"}),
        glued("x", {"text/plain": "0.25"}), glued("s", {"text/plain": "'words'"})]}]}
    assert glued_data(nb) == {"tab": table, "x": 0.25, "s": "words"}
