"""Execute one chapter with papermill, atomically, recording what it imported.

:func:`execute_chapter` is the one execution path of the book, of ``make run``,
of every sweep point and of paper-scale runs. It

- starts a kernel on local IPC sockets with the project's ``src/`` first on
  ``PYTHONPATH`` (a moved clone runs its own library), the run kind and any
  extra environment (thread caps, checkpoint folder; see :mod:`.context`), and
  runs :mod:`.kernel_startup` in it;
- appends a last cell that lists the library modules the kernel imported (its
  worker processes' included: :func:`attention_geometry._parallel.worker_modules`), and
  strips that cell from the saved notebook: the list goes into the notebook's
  metadata with the chapter's cache key (see :mod:`.cache`);
- writes the notebook only if every cell ran, with an atomic rename. On a
  failing cell :class:`ChapterFailed` names the chapter and the cell, the partial
  notebook is kept beside the output as ``<stem>.failed.ipynb`` and an existing
  good output is left untouched; the next success removes the ``.failed`` file.
  papermill writes the partial notebook after every cell only when the progress
  is shown (the progress lines read it); otherwise once, at the end or at the
  failing cell, so that the kernel does not wait for a rewrite of the whole
  notebook around every cell. Once the last cell has replied the kernel is
  stopped, not asked to tear itself down (every output is in by then).
- keeps this machine's absolute paths out of the notebooks it writes, which are
  published (the book's downloads, ``results/``): papermill's record of its input
  and output names the chapter's source and the output relative to the project,
  and a path in an output (a warning's file) is made relative or named
  (:func:`.notebooks.strip_machine_paths`).
"""

import json
import os
import shutil
import sys
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from .cache import META_KEY, chapter_key, library_snapshot
from .context import RUN_KIND_ENV, RUN_KINDS
from .files import FILE_MODE, write_bytes_atomic
from .leftovers import CONNECTION_FILE, KERNEL_PID, kernel_dir, partial_notebook
from .notebooks import strip_machine_paths, strip_tagged_cells
from .params import check_parameters
from .progress import CellProgress, cell_durations
from .project import Project
from .registry import Chapter

__all__ = ["ChapterFailed", "Execution", "execute_chapter", "failed_path"]

RECORD_TAG = "attention-geometry-record"
STARTUP_SCRIPT = Path(__file__).with_name("kernel_startup.py")


class ChapterFailed(RuntimeError):
    """A chapter raised while executing; the message names the chapter and cell."""

    def __init__(self, message: str, *, ename: str = "", evalue: str = "", source: str = ""):
        super().__init__(message)
        self.ename, self.evalue, self.source = ename, evalue, source

    def __reduce__(self):  # keep the fields across processes (Dask, process pools)
        return (_rebuild_failure, (str(self), self.ename, self.evalue, self.source))


def _rebuild_failure(message, ename, evalue, source):
    return ChapterFailed(message, ename=ename, evalue=evalue, source=source)


@dataclass(frozen=True)
class Execution:
    output: Path
    seconds: float
    modules: tuple[str, ...] | None  # library files (under src/) the kernel imported
    key: str  # the cache key stored in the notebook


def failed_path(output: Path) -> Path:
    return Path(output).with_suffix(".failed.ipynb")


def _record_cell_source(src: Path) -> str:
    """A cell printing, as JSON, the files under ``src`` of every module the kernel
    imported, and of those its worker processes imported
    (:func:`attention_geometry._parallel.worker_modules`)."""
    return (
        "import json as _ag_json, os as _ag_os, sys as _ag_sys\n"
        f"_ag_src = {str(src)!r} + _ag_os.sep\n"
        "_ag_files = [getattr(m, '__file__', None) for m in list(_ag_sys.modules.values())]\n"
        "_ag_files += getattr(_ag_sys.modules.get('attention_geometry._parallel'), 'worker_modules', list)()\n"
        "print(_ag_json.dumps(sorted({_ag_os.path.relpath(_ag_os.path.realpath(f), _ag_src)\n"
        "    for f in _ag_files if f and _ag_os.path.realpath(f).startswith(_ag_src)})))\n"
    )


def _take_recorded_modules(nb) -> tuple[str, ...] | None:
    cells = strip_tagged_cells(nb, RECORD_TAG)
    for output in (cells[0].get("outputs", []) if cells else []):
        if output.get("output_type") == "stream" and output.get("name") == "stdout":
            try:
                return tuple(json.loads(output["text"]))
            except (ValueError, TypeError):
                return None
    return None


def _kernel_manager_class(socket_dir: str, env: Mapping[str, str]):
    """A kernel manager on local IPC sockets in ``socket_dir`` (not TCP on
    localhost, which ipykernel warns about), started with ``env`` added to the
    environment and :mod:`.kernel_startup` run first. The kernel process's own
    output (not its cells') goes to ``socket_dir/kernel.log``: it is shown only
    if the kernel dies."""
    from jupyter_client.manager import AsyncKernelManager

    startup = (f"exec(compile(open({str(STARTUP_SCRIPT)!r}).read(), {str(STARTUP_SCRIPT)!r}, 'exec'), "
               "{'__name__': '__ag_kernel_startup__'})")

    class ChapterKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.transport = "ipc"
            self.ip = os.path.join(socket_dir, "kernel")
            # in the kernel's folder, not a tmpXXXX.json of its own: a killed run's goes with the folder
            self.connection_file = os.path.join(socket_dir, CONNECTION_FILE)

        async def start_kernel(self, **kw):
            kw["env"] = {**(kw.pop("env", None) or os.environ), **env}
            kw["extra_arguments"] = [*(kw.get("extra_arguments") or []),
                                     f"--IPKernelApp.exec_lines={startup}"]
            with open(os.path.join(socket_dir, "kernel.log"), "ab") as log:
                kw["stdout"] = kw["stderr"] = log
                started = await super().start_kernel(**kw)
            pid = getattr(self.provisioner, "pid", None)
            if pid:  # for the clean-up after a killed run (leftovers.py)
                with open(os.path.join(socket_dir, KERNEL_PID), "w") as fh:
                    fh.write(str(pid))
            return started

    return ChapterKernelManager


def _kernel_env(project: Project, kind: str, env: Mapping[str, str] | None) -> dict[str, str]:
    if kind not in RUN_KINDS:
        raise ValueError(f"kind {kind!r}; allowed: {', '.join(RUN_KINDS)}")
    return {"PYTHONPATH": project.pythonpath(), RUN_KIND_ENV: kind, **(env or {})}


def execute_chapter(
    project: Project,
    chapter: Chapter,
    output: str | os.PathLike,
    parameters: Mapping | None = None,
    *,
    kind: str = "run",
    env: Mapping[str, str] | None = None,
    dep_keys: Mapping[str, str] | None = None,
    progress: bool = False,
    precheck: bool = True,
    record: Mapping | None = None,
    reference: Path | None = None,
    estimate: float | None = None,
) -> Execution:
    """Execute ``chapter`` with ``parameters`` into ``output``, atomically.

    ``kind``: the run kind the kernel sees (:func:`.context.run_context`);
    ``env``: more environment for the kernel; ``dep_keys``: the current keys of
    the chapters it depends on (part of its cache key); ``progress``: show
    the cell progress with the time left (:mod:`.progress`; ``reference``: an
    executed notebook of the chapter whose cell times scale the estimate,
    ``estimate``: the cost model's seconds) and the kernel's stderr; ``precheck``:
    validate the parameters before starting a kernel (the chapter validates
    again itself); ``record``: more entries for the notebook's metadata.
    """
    parameters = dict(parameters or {})
    if precheck:
        check_parameters(chapter.params, parameters)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    snapshot = library_snapshot(project)  # the library as the kernel will import it
    partial = partial_notebook(output)
    source_nb = partial.with_suffix(".source.ipynb")
    socket_dir = kernel_dir()
    start = time.perf_counter()
    try:
        _write_source(project, chapter, source_nb)
        watch = (CellProgress(chapter.name, partial, estimate=estimate,
                              reference=cell_durations(reference) if reference and Path(reference).exists() else None)
                 if progress else nullcontext())
        with watch:
            _run_papermill(project, chapter, source_nb, partial, output, parameters,
                           env=_kernel_env(project, kind, env), socket_dir=socket_dir, progress=progress)
        return _save_executed(project, chapter, partial, output, parameters, seconds=time.perf_counter() - start,
                              kind=kind, dep_keys=dep_keys, snapshot=snapshot, record=record)
    finally:
        for leftover in (partial, source_nb):
            leftover.unlink(missing_ok=True)
        shutil.rmtree(socket_dir, ignore_errors=True)


def _write_source(project: Project, chapter: Chapter, source_nb: Path) -> None:
    """The chapter as a notebook, with the cell that lists the imported library modules last."""
    import jupytext
    import nbformat

    nb = jupytext.read(project.root / chapter.source)
    nb.cells.append(nbformat.v4.new_code_cell(_record_cell_source(project.src), metadata={"tags": [RECORD_TAG]}))
    nbformat.write(nb, source_nb)


def _run_papermill(project: Project, chapter: Chapter, source_nb: Path, partial: Path, output: Path,
                   parameters: dict, *, env: Mapping[str, str], socket_dir: str, progress: bool) -> None:
    """Execute ``source_nb`` into ``partial`` in a kernel started with ``env``; a failing
    cell or a kernel that stopped raises :class:`ChapterFailed`."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    try:
        papermill.execute_notebook(
            str(source_nb),
            str(partial),
            parameters=parameters,
            cwd=str((project.root / chapter.source).parent),
            progress_bar=False,
            # papermill rewrites the whole notebook before and after every cell, markdown
            # included, while the kernel waits: only the progress lines read those writes
            request_save_on_cell_execute=progress,
            # every output is in once the last cell replied: the kernel is stopped, not asked to
            # tear down its modules and memory (2-3 s for a chapter with torch and transformers)
            shutdown_kernel="immediate",
            stderr_file=sys.stderr if progress else None,
            kernel_name="python3",
            kernel_manager_class=_kernel_manager_class(socket_dir, env),
        )
    except PapermillExecutionError as err:
        first = (err.source or "").strip().splitlines()[:1]
        raise _failure(project, chapter, partial, output,
                       f"failed in cell In [{err.exec_count}] (code cell starting "
                       f"{first[0] if first else ''!r}): {err.ename}: {err.evalue}",
                       ename=err.ename, evalue=err.evalue, source=err.source or "") from None
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as err:  # the kernel died (killed, out of memory) or did not start
        log = Path(socket_dir, "kernel.log")
        tail = log.read_text(errors="replace").strip().splitlines()[-5:] if log.exists() else []
        raise _failure(project, chapter, partial, output,
                       f"its kernel stopped: {type(err).__name__}: {err}"
                       + "".join(f"\n  kernel: {line}" for line in tail),
                       ename=type(err).__name__, evalue=str(err)) from None


def _save_executed(project: Project, chapter: Chapter, partial: Path, output: Path, parameters: dict, *,
                   seconds: float, kind: str, dep_keys: Mapping[str, str] | None, snapshot,
                   record: Mapping | None) -> Execution:
    """Move the executed notebook to ``output`` atomically, the record cell stripped and
    its module list, cache key and run record in the metadata; drop a stale failure."""
    import nbformat

    done = nbformat.read(partial, as_version=4)
    modules = _take_recorded_modules(done)
    _publishable(project, chapter, done, output)
    key = chapter_key(project, chapter, parameters, modules, dep_keys, snapshot)
    done.metadata[META_KEY] = {
        "chapter": chapter.name,
        "parameters": parameters,
        "kind": kind,
        "seconds": round(seconds, 2),
        "modules": list(modules) if modules is not None else None,
        "depends_on": dict(dep_keys or {}),
        "cache_key": key,
        **(record or {}),
    }
    write_bytes_atomic(output, nbformat.writes(done).encode())
    failed_path(output).unlink(missing_ok=True)
    return Execution(output=output, seconds=seconds, modules=modules, key=key)


def _relative(project: Project, path: Path) -> str:
    """``path`` relative to the project if it is inside it, else its name."""
    try:
        return Path(path).absolute().relative_to(project.root.absolute()).as_posix()
    except ValueError:
        return Path(path).name


def _publishable(project: Project, chapter: Chapter, nb, output: Path) -> None:
    """Take this machine's paths out of ``nb`` (see the module docstring), and the record
    cell (which names ``src/``) out of a failed one."""
    nb["cells"] = [c for c in nb.get("cells", []) if RECORD_TAG not in c.get("metadata", {}).get("tags", [])]
    papermill = nb.get("metadata", {}).get("papermill")
    if isinstance(papermill, dict):
        papermill["input_path"], papermill["output_path"] = chapter.source, _relative(project, output)
    strip_machine_paths(nb, project.root)


def _failure(project: Project, chapter: Chapter, partial: Path, output: Path, what: str,
             **fields) -> ChapterFailed:
    kept = failed_path(output)
    message = f"chapter {chapter.name!r} ({chapter.source}) {what}"
    if partial.exists() and partial.stat().st_size:
        try:  # a notebook kept for reading, and maybe stored (a sweep's failed point): no machine paths either
            nb = json.loads(partial.read_text())
            _publishable(project, chapter, nb, kept)
            write_bytes_atomic(partial, (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode())
        except (OSError, ValueError):
            pass  # cut off mid-write: kept as it is
        os.chmod(partial, FILE_MODE)
        os.replace(partial, kept)
        message += f"\n  partial notebook kept at {kept}"
    return ChapterFailed(message, **fields)
