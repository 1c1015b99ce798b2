"""Cache keys: a chapter is re-executed exactly when something it depends on changed.

A chapter's key hashes

- its source and the parameters it ran with;
- the requirements files (``requirements*.txt``);
- the library modules its kernel *actually imported*, as recorded when it
  executed (``modules`` in the notebook's metadata), plus any non-Python file
  under ``src/``. ``ag.<name>`` imports only the module that exports the name,
  in the subpackages too (``attention_geometry/_lazy.py``), so the list is what
  the chapter used, not the whole package. The modules its worker processes
  imported count (:func:`attention_geometry._parallel.worker_modules`: a
  function run there imports its own), and so do the library modules the
  tooling a chapter calls imports (:mod:`.claims` reads
  :mod:`attention_geometry.verdicts`), rightly.
  Before a chapter has ever run, every library file counts.
  A Python module counts by its *code* (:func:`code_digest`): its syntax tree
  without docstrings, so that editing a comment, a docstring or the layout
  re-executes nothing;
- the current keys of the chapters it declares in ``depends_on`` (chapter 9
  executes chapter 6 through a sweep), which chain their sources and modules;
- its stored results, if any: the paper-scale run and stored sweeps under
  ``results/<chapter>/`` (checkpoints left out), which the chapter reads.

The build tooling (``attention_geometry/book/``) is not part of the library:
editing it re-executes nothing, except the modules whose code writes what a chapter
shows: :mod:`.glue` (how its values are written into its notebook), :mod:`.claims`,
:mod:`.findings` and :mod:`.tables` (its verdict table and findings, verdicts computed
again from stored runs), :mod:`.paper` (how a stored run is read) and :mod:`.ledger`
(what chapter 9 reads of the others). A chapter's own module of bookkeeping,
``attention_geometry/book/chapters/<chapter>.py`` (its glue dictionaries, claim
records and wording), counts for that chapter alone: every kernel imports all the
chapter modules for their parameters, but only its own writes what it shows.

A key is compared with the one stored in the executed notebook: the recorded
module list of the last run is hashed as those files are *now*. A chapter that
starts importing a new module can only do so through a change to its source
or to a module it already imported, both of which change the key.
"""

import ast
import functools
import hashlib
import json
from pathlib import Path
from typing import Mapping, Sequence

from .project import Project
from .registry import Chapter

__all__ = ["META_KEY", "TOOLING", "chapter_module", "code_digest", "library_files", "library_snapshot", "is_tooling", "chapter_key",
           "notebook_record", "dependency_keys", "is_fresh"]

# The metadata entry of an executed notebook that the tooling writes.
META_KEY = "attention_geometry"

# The build tooling, relative to src/: not library code (but these write what a chapter shows).
TOOLING = "attention_geometry/book/"
TOOLING_KEPT = {f"attention_geometry/book/{name}.py"
                for name in ("glue", "claims", "findings", "paper", "ledger", "tables")}


def chapter_module(name: str) -> str:
    """The path under ``src/`` of chapter ``name``'s own module (glue, claims, wording)."""
    return f"{TOOLING}chapters/{name}.py"


def _rel_to_src(project: Project, path: Path) -> str:
    return path.relative_to(project.src).as_posix()


def is_tooling(rel: str) -> bool:
    """Whether ``rel`` (a path under ``src/``) is build tooling rather than library."""
    return rel.startswith(TOOLING) and rel not in TOOLING_KEPT


def library_files(project: Project) -> list[Path]:
    """Every file of the library under ``src/`` (tooling, caches and metadata excluded)."""
    if not project.src.is_dir():
        return []
    return sorted(
        p for p in project.src.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
        and not any(part.endswith(".egg-info") for part in p.parts)
        and not is_tooling(_rel_to_src(project, p))
    )


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@functools.lru_cache(maxsize=4096)  # by the source itself: a build keys every chapter on the same files
def code_digest(source: bytes) -> str:
    """The sha256 of a Python module's code: the dump of its syntax tree, docstrings
    removed. Comments, docstrings, blank lines and line breaks inside brackets do not
    count; anything that changes what runs does (a module that does not parse counts
    by its bytes). The dump leaves line numbers out, so a comment edit that shifts
    them re-executes nothing: a warning a cached chapter shows keeps its old line."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return _digest(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                node.body = node.body[1:] or [ast.Pass()]
    return _digest(ast.dump(tree).encode())


def _file_digest(path: Path) -> str:
    data = path.read_bytes()
    return code_digest(data) if path.suffix == ".py" else _digest(data)


def library_snapshot(project: Project) -> dict[str, str]:
    """``{path under src/: sha256}`` of every library file, as it is now (a Python
    module by its code: :func:`code_digest`)."""
    return {_rel_to_src(project, p): _file_digest(p) for p in library_files(project)}


def _stored_result_files(project: Project, chapter: Chapter) -> list[Path]:
    folder = project.results / chapter.name
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.is_file() and "checkpoints" not in p.relative_to(folder).parts)


def chapter_key(
    project: Project,
    chapter: Chapter,
    parameters: Mapping,
    modules: Sequence[str] | None,
    dep_keys: Mapping[str, str] | None = None,
    snapshot: Mapping[str, str] | None = None,
) -> str:
    """The key of ``chapter`` run with ``parameters`` (see the module docstring).

    ``modules``: the library files (paths under ``src/``) its kernel imported;
    ``None`` when unknown, which counts every library file. ``snapshot``: the
    library's digests to use (taken when the chapter started), default: now.
    """
    snapshot = library_snapshot(project) if snapshot is None else snapshot
    h = hashlib.sha256()

    def add(label: str, digest: str) -> None:
        h.update(f"{label}\0{digest}\n".encode())

    add("chapter " + chapter.source, _digest((project.root / chapter.source).read_bytes()))
    add("parameters", _digest(json.dumps(dict(parameters), sort_keys=True, default=str).encode()))
    for req in sorted(project.root.glob("requirements*.txt")):
        add(req.name, _digest(req.read_bytes()))
    data_files = {rel for rel in snapshot if not rel.endswith(".py")}
    used = set(snapshot) if modules is None else {m for m in modules if not is_tooling(m)} | data_files
    for rel in sorted(used):
        digest = snapshot.get(rel)
        if digest is None:
            path = project.src / rel
            digest = _file_digest(path) if path.is_file() else "missing"
        add("src/" + rel, digest)
    own = project.src / chapter_module(chapter.name)
    if own.is_file():  # the chapter's glue, claims and words (tooling for every other chapter)
        add("src/" + chapter_module(chapter.name), _file_digest(own))
    for dep, key in sorted((dep_keys or {}).items()):
        add("depends on " + dep, key)
    for path in _stored_result_files(project, chapter):
        add(path.relative_to(project.root).as_posix(), _digest(path.read_bytes()))
    return h.hexdigest()


def notebook_record(path: Path) -> dict | None:
    """The tooling's metadata of an executed notebook; ``None`` if missing or unreadable."""
    try:
        nb = json.loads(Path(path).read_text())
        record = nb["metadata"][META_KEY]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record if isinstance(record, dict) else None


def dependency_keys(project: Project, chapter: Chapter, _seen: tuple[str, ...] = ()) -> dict[str, str]:
    """``{dependency: its current key}``, from the dependencies' executed notebooks."""
    out = {}
    for name in chapter.depends_on:
        if name in _seen or name == chapter.name:
            raise ValueError(f"chapter {chapter.name!r}: depends_on forms a cycle through {name!r}")
        dep = project.chapter(name)
        record = notebook_record(project.executed / f"{dep.stem}.ipynb")
        if record is None:
            out[name] = "not executed"
            continue
        deps = dependency_keys(project, dep, (*_seen, chapter.name))
        out[name] = chapter_key(project, dep, record.get("parameters", {}), record.get("modules"), deps)
    return out


def is_fresh(project: Project, chapter: Chapter, notebook: Path, parameters: Mapping,
             dep_keys: Mapping[str, str]) -> bool:
    """Whether ``notebook`` is a complete run of ``chapter`` whose key is still current."""
    record = notebook_record(notebook)
    if record is None or record.get("parameters") != dict(parameters) or "cache_key" not in record:
        return False
    return record["cache_key"] == chapter_key(project, chapter, parameters, record.get("modules"), dep_keys)
