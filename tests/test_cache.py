"""The cache is never stale, and never re-executes more than what changed:
end to end on a toy project whose chapters import different library modules."""

import json
import shutil

import pytest

from attention_geometry.book.cache import chapter_key, code_digest, dependency_keys, is_fresh, library_snapshot
from attention_geometry.book.files import read_json_or_recover, write_json_atomic
from attention_geometry.book.project import Project
from attention_geometry.book.schedule import execute_book

from conftest import ROOT, chapter_text, make_project, toy_chapter


def chapter_importing(*modules: str) -> str:
    return chapter_text("Toy", "n = 1", "\n".join(f"import {m}" for m in modules) or "pass")


LIBRARY = {
    "lib_a.py": "A = 1\n",
    "lib_b.py": "B = 2\n",
    "lib_c.py": "import lib_a\nC = lib_a.A + 1\n",  # imports lib_a itself
    "attention_geometry/book/tooling.py": "# stands for the build tooling\n",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The toy project, built once; each test works on a copy."""
    project = make_project(tmp_path_factory.mktemp("built"), {
        "uses_a": (chapter_importing("lib_a"), toy_chapter("uses_a")),
        "uses_b": (chapter_importing("lib_b"), toy_chapter("uses_b")),
        "uses_c": (chapter_importing("lib_c"), toy_chapter("uses_c")),
        "uses_none": (chapter_importing(), toy_chapter("uses_none")),
        "runs_b": (chapter_importing(), toy_chapter("runs_b", depends_on=("uses_b",))),
    }, library=LIBRARY)
    assert executed(build(project)) == set(project.chapters)
    return project


@pytest.fixture
def project(built, tmp_path):
    shutil.copytree(built.root, tmp_path, dirs_exist_ok=True)
    return Project(tmp_path, chapters=built.chapters)


def build(project) -> dict[str, str]:
    return {o.chapter: o.status for o in execute_book(project, jobs=1, report=lambda line: None)}


def stale(project) -> set[str]:
    """The chapters whose notebook is out of date (nothing is executed)."""
    return {c.name for c in project.chapters.values()
            if not is_fresh(project, c, project.executed / f"{c.stem}.ipynb", {}, dependency_keys(project, c))}


def executed(statuses: dict[str, str]) -> set[str]:
    return {name for name, status in statuses.items() if status == "done"}


def edit(path, extra="\n# a comment\n"):
    path.write_text(path.read_text() + extra)


def test_modules_are_recorded_and_the_record_cell_stripped(project):
    nb = json.loads((project.executed / "uses_c.ipynb").read_text())
    assert nb["metadata"]["attention_geometry"]["modules"] == ["lib_a.py", "lib_c.py"]
    assert not any("attention-geometry-record" in c["metadata"].get("tags", []) for c in nb["cells"])
    assert all("_ag_" not in "".join(c["source"]) for c in nb["cells"])


CODE_EDIT = "\nEXTRA = 1\n"


def test_editing_a_module_reexecutes_exactly_its_importers(project, tmp_path):
    assert executed(build(project)) == set()  # a copied project is still up to date
    edit(tmp_path / "src" / "lib_a.py", CODE_EDIT)
    assert executed(build(project)) == {"uses_a", "uses_c"}
    edit(tmp_path / "src" / "lib_c.py", CODE_EDIT)
    assert executed(build(project)) == {"uses_c"}


def test_a_comment_docstring_or_layout_edit_reexecutes_nothing(project, tmp_path):
    lib_a, lib_c = tmp_path / "src" / "lib_a.py", tmp_path / "src" / "lib_c.py"
    lib_a.write_text('"""Module A: its docstring."""\n\n# why A is 1\nA = (\n    1  # one\n)\n')
    edit(lib_c, '\n\ndef f():\n    """Does nothing."""\n    return 1\n')  # code: uses_c only
    assert executed(build(project)) == {"uses_c"}
    lib_c.write_text(lib_c.read_text().replace('"""Does nothing."""', '"""Returns one."""  # a comment'))
    assert executed(build(project)) == set()
    lib_a.write_text(lib_a.read_text().replace("1  # one", "2"))  # code again
    assert executed(build(project)) == {"uses_a", "uses_c"}


def test_code_digest_ignores_comments_docstrings_and_layout_only():
    base = code_digest(b'"""Doc."""\nimport os\n\ndef f(x):\n    """Doc."""\n    return x + 1\n')
    assert code_digest(b'import os  # why\ndef f(x):\n    return (x\n            + 1)\n') == base
    assert code_digest(b'import os\ndef f(x):\n    return x + 2\n') != base
    assert code_digest(b'import os\ndef f(x):\n    "first statement: a docstring"\n    return x + 1\n') == \
        code_digest(b'import os\ndef f(x):\n    "another"\n    return x + 1\n')  # a docstring all the same
    assert code_digest(b'def f(:\n') != code_digest(b'def f(:  # broken\n')  # unparsable: its bytes


def test_editing_a_dependency_chapter_reexecutes_its_dependant(project, tmp_path):
    edit(tmp_path / "book" / "uses_b.md", "\nMore prose.\n")
    assert executed(build(project)) == {"uses_b", "runs_b"}
    edit(tmp_path / "src" / "lib_b.py", CODE_EDIT)  # the dependency's modules chain too
    assert executed(build(project)) == {"uses_b", "runs_b"}


def test_editing_the_tooling_or_adding_a_module_reexecutes_nothing(project, tmp_path):
    edit(tmp_path / "src" / "attention_geometry" / "book" / "tooling.py")
    (tmp_path / "src" / "lib_new.py").write_text("NEW = 1\n")
    assert executed(build(project)) == set()


def test_requirements_and_stored_results_are_in_the_key(project, tmp_path):
    folder = project.paper_folder(project.chapter("uses_none"))
    write_json_atomic(folder / "checkpoints" / "parameters.json", {"x": 1})  # not a result
    assert stale(project) == set()
    write_json_atomic(folder / "values.json", {"x": 1})
    assert stale(project) == {"uses_none"}
    (project.results / "uses_a" / "sweeps" / "s").mkdir(parents=True)
    (project.results / "uses_a" / "sweeps" / "s" / "results.csv").write_text("run,key,value\n")
    assert stale(project) == {"uses_none", "uses_a"}
    edit(tmp_path / "requirements.txt", "scipy\n")
    assert stale(project) == set(project.chapters)


def test_key_unit(project, tmp_path):
    chapter = project.chapter("uses_a")
    key = chapter_key(project, chapter, {}, ["lib_a.py"])
    assert chapter_key(project, chapter, {"n": 2}, ["lib_a.py"]) != key
    assert chapter_key(project, chapter, {}, ["lib_a.py", "attention_geometry/book/tooling.py"]) == key
    snapshot = library_snapshot(project)
    assert "attention_geometry/book/tooling.py" not in snapshot and "lib_b.py" in snapshot
    assert chapter_key(project, chapter, {}, None) != key  # unknown modules: every file counts
    assert chapter_key(project, chapter, {}, ["lib_a.py"], {"dep": "k1"}) != \
        chapter_key(project, chapter, {}, ["lib_a.py"], {"dep": "k2"})


def recorded(project, stem: str) -> list[str]:
    return json.loads((project.executed / f"{stem}.ipynb").read_text())["metadata"]["attention_geometry"]["modules"]


@pytest.fixture(scope="module")
def with_the_maths(tmp_path_factory):
    """A toy project whose library is the book's mathematics (a copy under its src/),
    with chapters that use chapter 6's simulation, its closed forms (which import the
    simulation), and a function run in worker processes; built once."""
    root = tmp_path_factory.mktemp("maths")
    cells = {"uses_simulation": "from attention_geometry import RecencyModel",
             "uses_theory": "from attention_geometry import contrast_factor",
             "runs_in_workers": "from attention_geometry._parallel import map_processes\nimport lib_w\n"
                                "assert map_processes(lib_w.square, [1, 2], workers=2) == [1, 4]"}
    project = make_project(root, {name: (chapter_text("Toy", "n = 1", cell), toy_chapter(name))
                                  for name, cell in cells.items()}, library={
        "lib_w.py": "def square(x):\n    import lib_x  # in the worker only\n    return x * x + lib_x.ZERO\n",
        "lib_x.py": "ZERO = 0\n"})
    shutil.copytree(ROOT / "src" / "attention_geometry", root / "src" / "attention_geometry",
                    ignore=shutil.ignore_patterns("__pycache__", "book", "figures"))
    assert executed(build(project)) == set(project.chapters)
    return project


def test_a_code_edit_in_a_module_of_recency_makes_stale_only_the_chapters_that_use_it(with_the_maths, tmp_path):
    """The subpackage recency loads its modules on first use: a chapter that uses the
    simulation has not loaded the closed forms (theory) nor the real-layer additions."""
    shutil.copytree(with_the_maths.root, tmp_path, dirs_exist_ok=True)
    project = Project(tmp_path, chapters=with_the_maths.chapters)
    recency = tmp_path / "src" / "attention_geometry" / "recency"
    assert "attention_geometry/recency/simulation.py" in recorded(project, "uses_simulation")
    assert not {"attention_geometry/recency/theory.py", "attention_geometry/recency/extensions.py"} & \
        set(recorded(project, "uses_simulation"))
    edit(recency / "extensions.py", CODE_EDIT)  # used by neither
    assert stale(project) == set()
    edit(recency / "theory.py", CODE_EDIT)
    assert stale(project) == {"uses_theory"}
    edit(recency / "simulation.py", CODE_EDIT)  # the closed forms import the simulation
    assert stale(project) == {"uses_theory", "uses_simulation"}


def test_a_module_imported_only_in_worker_processes_is_recorded(with_the_maths, tmp_path):
    shutil.copytree(with_the_maths.root, tmp_path, dirs_exist_ok=True)
    project = Project(tmp_path, chapters=with_the_maths.chapters)
    assert {"lib_w.py", "lib_x.py", "attention_geometry/_parallel.py"} <= set(recorded(project, "runs_in_workers"))
    edit(tmp_path / "src" / "lib_x.py", CODE_EDIT)  # imported by the function the workers ran, not the kernel
    assert stale(project) == {"runs_in_workers"}


def test_corrupt_or_cut_off_notebook_is_reexecuted(project):
    path = project.executed / "uses_a.ipynb"
    path.write_text(path.read_text()[:100])
    assert executed(build(project)) == {"uses_a"}


def test_corrupt_json_is_kept_aside_and_read_as_empty(tmp_path):
    path = tmp_path / "status.json"
    path.write_text('{"a": {"status": "do')
    data, warning = read_json_or_recover(path, "sweep status file")
    assert data == {} and "is not valid JSON" in warning and str(path) in warning
    assert (tmp_path / "status.json.corrupt").read_text() == '{"a": {"status": "do'
    assert not path.exists()
    path.write_text("[1, 2]")
    assert read_json_or_recover(path, "x")[1].endswith("(what it recorded is recomputed)")
    write_json_atomic(path, {"b": 1})
    assert read_json_or_recover(path, "x") == ({"b": 1}, None)
    assert path.stat().st_mode & 0o777 == 0o644


def test_a_checkpoint_is_written_whole_or_not_at_all(tmp_path):
    """Checkpoints go through the one atomic writer, streamed by torch.save, and keep mode 0600."""
    from attention_geometry.checkpoint import CheckpointStore

    store, key = CheckpointStore(tmp_path), {"n": 1}
    store.save("loop", key, [1, 2])
    path = store.path("loop", key)
    assert store.load("loop", key) == [1, 2] and path.stat().st_mode & 0o777 == 0o600
    with pytest.raises(Exception):
        store.save("loop", key, [1, 2, lambda: 3])  # torch.save cannot pickle a lambda
    assert store.load("loop", key) == [1, 2] and [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_chapters_own_module_is_in_its_key_and_in_no_other(project, tmp_path):
    """The chapter's module of glue and wording (tooling for the others) re-executes that chapter
    alone when its code changes, and nothing when only a comment does."""
    from attention_geometry.book.cache import chapter_module

    module = tmp_path / "src" / chapter_module("uses_a")
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text("WORDS = 'flat'\n")
    assert stale(project) == {"uses_a"}
    build(project)
    edit(module)  # a comment
    assert stale(project) == set()
    edit(module, "\nWORDS = 'rising'\n")
    assert stale(project) == {"uses_a"}
