"""Build tooling: execute chapters with papermill, cache them, build the book.

The Makefile stays thin and calls this module::

    attention-geometry book                       # execute (cached) + build HTML
    attention-geometry run layernorm d_max=128    # one parameterised run
    attention-geometry list                       # the chapters and their parameters

Pipeline of ``book``:

1. Every page in ``_toc.yml`` whose source has code cells is a chapter. It is
   converted with Jupytext and executed with papermill into
   ``_build/executed/<stem>.ipynb`` -- unless a notebook is already there whose
   cache key matches. The key hashes the chapter source, its parameters, every
   file of the library in ``src/`` and ``requirements.txt`` (Jupyter Book's own
   cache ignores library changes, a known source of stale books).
2. Execution writes to a temporary file; only a complete, successful run
   replaces the cached notebook (an atomic rename). A failing chapter is named
   with its failing cell, its partial notebook is kept as
   ``_build/executed/<stem>.failed.ipynb`` for inspection, and the previous
   good notebook stays.
3. The executed notebooks and the other pages are staged into
   ``_build/stage/`` (files rewritten only when their bytes change, so Sphinx's
   incremental build stays incremental) and Jupyter Book builds the HTML with
   its own execution switched off and warnings as errors.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import yaml

from .appendices import GENERATED_PAGES, errata_page, parameters_page, reproducibility_page
from .registry import CHAPTERS, Chapter, get_chapter
from .params import ParameterError, check_parameters

__all__ = [
    "ROOT",
    "ChapterFailed",
    "cache_key",
    "execute_chapter",
    "glued_values",
    "parameters_cell",
    "toc_pages",
    "main",
]

ROOT = Path(os.environ.get("AG_ROOT", Path(__file__).resolve().parents[3]))
BUILD = ROOT / "_build"
EXECUTED = BUILD / "executed"
STAGE = BUILD / "stage"
RUNS = ROOT / "runs"
META_KEY = "attention_geometry"


class ChapterFailed(RuntimeError):
    """A chapter raised while executing; the message names the chapter and cell."""

    def __init__(self, message: str, *, ename: str = "", evalue: str = "", source: str = ""):
        super().__init__(message)
        self.ename, self.evalue, self.source = ename, evalue, source


# --------------------------------------------------------------------------- toc


def toc_pages(root: Path = ROOT) -> list[str]:
    """Every page of ``_toc.yml`` in reading order, as paths without suffix."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    pages = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                pages.append(entry["file"])
            walk(entry.get("sections"))
            for part in entry.get("parts", []) or []:
                walk(part.get("chapters"))
            walk(entry.get("chapters"))

    walk(toc.get("chapters"))
    for part in toc.get("parts", []) or []:
        walk(part.get("chapters"))
    return pages


def _source(page: str, root: Path = ROOT) -> Path:
    path = root / f"{page}.md"
    if not path.exists():
        raise FileNotFoundError(f"_toc.yml lists {page!r} but {path} does not exist")
    return path


def _has_code(path: Path) -> bool:
    return re.search(r"^```\{code-cell\}", path.read_text(), flags=re.M) is not None


def _chapter_for(source: Path, root: Path = ROOT) -> Chapter:
    rel = source.relative_to(root).as_posix()
    for chapter in CHAPTERS.values():
        if chapter.source == rel:
            return chapter
    raise KeyError(
        f"{rel} has code cells but no entry in attention_geometry.book.registry.CHAPTERS "
        "(its parameter specification and smoke set)"
    )


def book_chapters(root: Path = ROOT) -> list[Chapter]:
    """The executable chapters, in the order of ``_toc.yml``."""
    return [
        _chapter_for(src, root)
        for src in (_source(p, root) for p in toc_pages(root) if p not in GENERATED_PAGES)
        if _has_code(src)
    ]


# ------------------------------------------------------------------ parameters


def parameters_cell(chapter: Chapter, root: Path = ROOT) -> dict:
    """The defaults in the chapter's one ``parameters`` cell, evaluated."""
    import jupytext

    nb = jupytext.read(root / chapter.source)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"{chapter.source}: expected one 'parameters' cell, found {len(cells)}")
    namespace: dict = {}
    exec(compile(cells[0].source, f"{chapter.source}:parameters", "exec"), {}, namespace)
    return {k: v for k, v in namespace.items() if not k.startswith("_")}


def parse_assignments(items: list[str]) -> dict:
    """``["d=128", "alphas=[0.1, 0.5]"]`` -> ``{"d": 128, "alphas": [0.1, 0.5]}`` (YAML values)."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ParameterError(f"expected NAME=VALUE, got {item!r}")
        out[name.strip()] = yaml.safe_load(value) if value.strip() else ""
    return out


# ----------------------------------------------------------------------- cache


# The build tooling itself: changing it does not change what a chapter computes.
# (sweep.py is not in it: the synthesis chapter runs a sweep.)
TOOLING = {"build.py", "appendices.py", "sphinx_offline.py"}


def _library_files(root: Path) -> list[Path]:
    """Every file of the library a chapter can use (the build tooling excluded)."""
    return sorted(
        p
        for p in (root / "src").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and ".egg-info" not in str(p)
        and p.name not in TOOLING
    )


def cache_key(chapter: Chapter, parameters: dict, root: Path = ROOT) -> str:
    """Hash of everything an executed chapter depends on."""
    h = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        h.update(label.encode() + b"\0" + hashlib.sha256(data).digest())

    add("source", (root / chapter.source).read_bytes())
    add("parameters", json.dumps(parameters, sort_keys=True).encode())
    add("requirements", (root / "requirements.txt").read_bytes())
    nodeps = root / "requirements-nodeps.txt"
    if nodeps.exists():
        add("requirements-nodeps", nodeps.read_bytes())
    for path in _library_files(root):
        add(path.relative_to(root).as_posix(), path.read_bytes())
    return h.hexdigest()


def _cached_key(path: Path) -> str | None:
    if not path.exists():
        return None
    try:
        nb = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return nb.get("metadata", {}).get(META_KEY, {}).get("cache_key")


# ------------------------------------------------------------------- execution


def _kernel_manager_class(socket_dir: str):
    """Kernels talk to papermill over local IPC sockets in ``socket_dir``, not
    TCP on localhost (which ipykernel warns about on every start). One private
    folder per run: parallel runs (sweeps) never share a socket."""
    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.transport = "ipc"
            self.ip = os.path.join(socket_dir, "kernel")

    return IPCKernelManager


def execute_chapter(
    chapter: Chapter,
    output: Path,
    parameters: dict | None = None,
    *,
    root: Path = ROOT,
    progress: bool = True,
    record: dict | None = None,
    precheck: bool = True,
) -> float:
    """Execute ``chapter`` with papermill into ``output``, atomically.

    ``output`` appears only if every cell ran; on failure :class:`ChapterFailed`
    names the chapter and the failing cell, the partial notebook is kept beside
    ``output`` as ``<stem>.failed.ipynb`` and an existing ``output`` is left untouched. Returns
    the run time in seconds.
    """
    import jupytext
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    parameters = dict(parameters or {})
    if precheck:  # fail before even starting a kernel; the chapter checks again itself
        check_parameters(chapter.params, parameters)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=f".{output.stem}.", suffix=".partial.ipynb", dir=output.parent)
    os.close(fd)
    partial = Path(partial)
    source_nb = partial.with_suffix(".source.ipynb")
    socket_dir = tempfile.mkdtemp(prefix="ag-kernel-")
    start = time.perf_counter()
    try:
        nb = jupytext.read(root / chapter.source)
        nbformat.write(nb, source_nb)
        try:
            papermill.execute_notebook(
                str(source_nb),
                str(partial),
                parameters=parameters,
                cwd=str((root / chapter.source).parent),
                progress_bar=False,
                stderr_file=sys.stderr if progress else None,
                kernel_name="python3",
                kernel_manager_class=_kernel_manager_class(socket_dir),
            )
        except PapermillExecutionError as err:
            kept = output.with_suffix(".failed.ipynb")
            os.replace(partial, kept)
            first = (err.source or "").strip().splitlines()[:1]
            raise ChapterFailed(
                f"chapter {chapter.name!r} ({chapter.source}) failed in cell "
                f"In [{err.exec_count}] (code cell starting {first[0] if first else ''!r}): "
                f"{err.ename}: {err.evalue}\n  partial notebook kept at {kept}",
                ename=err.ename,
                evalue=err.evalue,
                source=err.source or "",
            ) from None
        seconds = time.perf_counter() - start
        done = nbformat.read(partial, as_version=4)
        done.metadata[META_KEY] = {
            "chapter": chapter.name,
            "parameters": parameters,
            "seconds": round(seconds, 2),
            **(record or {}),
        }
        nbformat.write(done, partial)
        os.replace(partial, output)  # atomic: a good notebook or none
        output.with_suffix(".failed.ipynb").unlink(missing_ok=True)
        return seconds
    finally:
        for leftover in (partial, source_nb):
            leftover.unlink(missing_ok=True)
        shutil.rmtree(socket_dir, ignore_errors=True)


def glued_values(notebook: Path | dict) -> dict[str, str]:
    """Every ``myst_nb.glue`` value of an executed notebook, as its text/plain form."""
    nb = json.loads(Path(notebook).read_text()) if not isinstance(notebook, dict) else notebook
    out = {}
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            scrapbook = output.get("metadata", {}).get("scrapbook", {})
            name = scrapbook.get("name")
            if name is not None:
                prefix = scrapbook.get("mime_prefix", "")
                text = output.get("data", {}).get(f"{prefix}text/plain", "")
                out[name] = "".join(text) if isinstance(text, list) else text
    return out


# ------------------------------------------------------------------------ book


def _sync(src: Path, dst: Path) -> None:
    """Copy ``src`` to ``dst`` only if the bytes differ (keeps Sphinx incremental)."""
    data = src.read_bytes()
    if dst.exists() and dst.read_bytes() == data:
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(data)


def execute_book(root: Path = ROOT, force: bool = False) -> list[str]:
    """Execute every chapter that is not cached; return the failures' messages."""
    failures = []
    EXECUTED.mkdir(parents=True, exist_ok=True)
    for stale in EXECUTED.glob(".*.ipynb"):  # left by a run that was killed mid-chapter
        stale.unlink()
    for chapter in book_chapters(root):
        defaults = parameters_cell(chapter, root)
        key = cache_key(chapter, {}, root)
        out = EXECUTED / f"{chapter.stem}.ipynb"
        label = f"{chapter.name:<21} {chapter.source:<36}"
        if not force and _cached_key(out) == key:
            print(f"{label} cached", flush=True)
            continue
        print(f"{label} executing ...", flush=True)
        command = f"papermill {chapter.source} (defaults: {json.dumps(defaults, sort_keys=True)})"
        try:
            seconds = execute_chapter(
                chapter, out, {}, root=root, record={"cache_key": key, "command": command}
            )
        except ChapterFailed as err:
            print(f"{label} FAILED", flush=True)
            failures.append(str(err))
            continue
        print(f"{label} {seconds:.1f} s", flush=True)
    return failures


def stage_book(root: Path = ROOT) -> Path:
    """Lay out the book for Jupyter Book: config, pages, executed notebooks."""
    STAGE.mkdir(parents=True, exist_ok=True)
    for name in ("_config.yml", "_toc.yml", "references.bib"):
        _sync(root / name, STAGE / name)
    wanted = set()
    in_toc = {(root / f"{page}.md") for page in toc_pages(root)}
    for src in (root / "book").rglob("*"):
        if not src.is_file() or ".ipynb_checkpoints" in src.parts:
            continue
        rel = src.relative_to(root)
        if src.suffix == ".md" and _has_code(src):
            if src not in in_toc:  # a draft chapter not yet in _toc.yml
                continue
            chapter = _chapter_for(src, root)
            executed = EXECUTED / f"{chapter.stem}.ipynb"
            if not executed.exists():
                raise FileNotFoundError(f"{chapter.name}: no executed notebook at {executed}")
            rel = rel.with_suffix(".ipynb")
            _sync(executed, STAGE / rel)
        else:
            _sync(src, STAGE / rel)
        wanted.add(STAGE / rel)
    chapters = book_chapters(root)
    pages = toc_pages(root)
    for page, kind in GENERATED_PAGES.items():
        if page not in pages:
            continue
        if kind == "parameters":
            text = parameters_page(chapters, {c.name: parameters_cell(c, root) for c in chapters}, root)
        elif kind == "errata":
            text = errata_page(chapters, root)
        else:
            text = reproducibility_page(chapters, EXECUTED, root)
        target = STAGE / f"{page}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
        wanted.add(target)
    for old in (STAGE / "book").rglob("*"):  # pages removed from book/
        if old.is_file() and old not in wanted:
            old.unlink()
    return STAGE


def build_html(root: Path = ROOT) -> None:
    stage = stage_book(root)
    cmd = [
        sys.executable, "-c", "import sys; from jupyter_book.cli.main import main; sys.exit(main())",
        "build", str(stage),
        "--path-output", str(root), "-W", "--keep-going", "-q",
    ]
    print("building HTML with Jupyter Book (warnings are errors) ...", flush=True)
    subprocess.run(cmd, check=True, cwd=root)


def cmd_book(args) -> int:
    start = time.perf_counter()
    failures = execute_book(force=args.force)
    if failures:
        print("\nmake book FAILED: the previous good notebooks are unchanged.", file=sys.stderr)
        for msg in failures:
            print(f"- {msg}", file=sys.stderr)
        return 1
    try:
        build_html()
    except subprocess.CalledProcessError as err:
        print(f"\nJupyter Book failed (exit {err.returncode}); see the warnings above.", file=sys.stderr)
        return 1
    index = BUILD / "html" / "index.html"
    print(f"\nbook built in {time.perf_counter() - start:.0f} s: {index}")
    print("serve it with: make serve   (then open http://localhost:8000)")
    return 0


# ------------------------------------------------------------------------- run


def run_name(parameters: dict) -> str:
    """A file name derived from the parameters: ``d_max-128_seed-3``."""
    if not parameters:
        return "defaults"
    parts = []
    for name in sorted(parameters):
        value = json.dumps(parameters[name]) if not isinstance(parameters[name], str) else parameters[name]
        parts.append(f"{name}-{re.sub(r'[^A-Za-z0-9.+-]+', '', value.replace(',', '+'))}")
    return "_".join(parts)


def _mathjax_dir() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("sphinx-mathjax-offline") or importlib.util.find_spec(
        "sphinx_mathjax_offline"
    )
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "static" / "mathjax"
    return path if path.exists() else None


def render_html(notebook: Path) -> Path:
    """An HTML rendering of an executed notebook whose math uses a local MathJax."""
    from nbconvert import HTMLExporter

    static = notebook.parent.parent / "_static" / "mathjax"
    mathjax = _mathjax_dir()
    url = None
    if mathjax is not None:
        if not static.exists():
            shutil.copytree(mathjax, static)
        url = os.path.relpath(static / "tex-chtml.js", notebook.parent) + "?config=TeX-AMS_CHTML"
    exporter = HTMLExporter(**({"mathjax_url": url} if url else {}))
    with warnings.catch_warnings():  # glue outputs have no HTML form of their own: expected
        warnings.simplefilter("ignore", UserWarning)
        body, _ = exporter.from_filename(str(notebook))
    html = notebook.with_suffix(".html")
    html.write_text(body)
    return html


def _chapter_or_list(name: str) -> Chapter | None:
    """The chapter called ``name``; else print the chapters and return None."""
    try:
        return get_chapter(name)
    except KeyError:
        print(f"unknown chapter {name!r}. Chapters:", file=sys.stderr)
        _print_chapters(sys.stderr)
        return None


def cmd_run(args) -> int:
    chapter = _chapter_or_list(args.chapter)
    if chapter is None:
        return 2
    try:
        given = check_parameters(chapter.params, parse_assignments(args.params))
        parameters = dict(given)
        if args.preset:
            if args.preset not in chapter.presets and args.preset != "smoke":
                raise ParameterError(
                    f"unknown preset {args.preset!r} for {chapter.name}; presets: "
                    + ", ".join(["smoke", *chapter.presets])
                )
            preset = chapter.smoke if args.preset == "smoke" else chapter.presets[args.preset]
            parameters = {**preset, **parameters}
        parameters = check_parameters(chapter.params, parameters)
    except ParameterError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    # named by the preset (which stands for its values) and the values given here
    name = "_".join(filter(None, [args.preset, run_name(given) if given or not args.preset else ""]))
    out = RUNS / chapter.name / f"{name}.ipynb"
    print(f"running {chapter.name} with {parameters or 'its defaults'} ...", flush=True)
    try:
        seconds = execute_chapter(chapter, out, parameters)
    except ChapterFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    html = render_html(out)
    print(f"done in {seconds:.1f} s\n  notebook: {out}\n  HTML:     {html}")
    return 0


# ----------------------------------------------------------------------- sweep


def cmd_sweep(args) -> int:
    from .sweep import SweepError, load_grid, run_sweep

    chapter = _chapter_or_list(args.chapter)
    if chapter is None:
        return 2
    try:
        sweep = load_grid(args.grid, chapter, name=args.name)
    except SweepError as err:
        print(f"error: invalid grid {args.grid}: {err}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else RUNS / chapter.name / sweep.name
    print(f"sweep {sweep.name!r}: {len(sweep.points)} runs of {chapter.name} into {out}", flush=True)
    table = run_sweep(sweep, out, scheduler=args.scheduler, n_workers=args.workers, redo=args.redo)
    runs = table.drop_duplicates("run")
    failed = runs[runs["status"] != "done"]
    print(f"\n{len(runs) - len(failed)} done, {len(failed)} failed\n  table:   {out / 'results.csv'}")
    if (out / "summary.png").exists():
        print(f"  figure:  {out / 'summary.png'}")
    for _, row in failed.iterrows():
        print(f"  FAILED {row['run']}: {row['error']}", file=sys.stderr)
    return 1 if len(failed) else 0


# ------------------------------------------------------------------------ list


def _print_chapters(stream=sys.stdout) -> None:
    for chapter in CHAPTERS.values():
        print(f"  {chapter.name:<14} {chapter.source}", file=stream)
        for pname, param in chapter.params.items():
            print(f"      {pname:<14} {param.allowed()} -- {param.doc}", file=stream)


def cmd_list(args) -> int:
    print("Chapters (use the name with `make run CHAPTER=<name>`):")
    _print_chapters()
    return 0


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def interrupt_on_sigterm() -> None:
    """Make `kill` (SIGTERM) unwind like Ctrl-C, so no partial notebook is left."""
    signal.signal(signal.SIGTERM, _raise_interrupt)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="attention-geometry",
        description="Execute the chapters of Attention Geometry and build the book.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("book", help="execute changed chapters (cached) and build the HTML book")
    p.add_argument("--force", action="store_true", help="re-execute every chapter, ignoring the cache")
    p.set_defaults(func=cmd_book)
    p = sub.add_parser(
        "run",
        help="execute one chapter with other parameters into runs/<chapter>/",
        description="Execute one chapter with parameters NAME=VALUE (YAML values) into "
        "runs/<chapter>/<name>.ipynb and .html. Never touches the book's cache.",
    )
    p.add_argument("chapter", help="chapter name (see `list`)")
    p.add_argument("params", nargs="*", metavar="NAME=VALUE", help="e.g. d_max=128 seed=3")
    p.add_argument("--preset", help="start from a named parameter set (e.g. smoke)")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser(
        "sweep",
        help="run a chapter over a YAML grid of parameters on Dask",
        description="Expand a YAML grid (lists -> Cartesian product, or an explicit "
        "'runs' list) into papermill runs of one chapter, executed in parallel on Dask, "
        "into runs/<chapter>/<sweep>/ with results.csv and summary.png. "
        "Rerunning skips the points already done.",
    )
    p.add_argument("chapter", help="chapter name (see `list`)")
    p.add_argument("grid", help="YAML grid file")
    p.add_argument("--scheduler", help="address of a running Dask scheduler, e.g. tcp://host:8786 "
                   "(default: $AG_DASK_SCHEDULER, else a local cluster)")
    p.add_argument("--workers", type=int, help="local cluster size (default: one per CPU core)")
    p.add_argument("--redo", action="store_true", help="rerun the points already done")
    p.add_argument("--name", help="sweep name (default: the grid's 'name', else the file's stem)")
    p.add_argument("--out", help="output folder (default: runs/<chapter>/<sweep>)")
    p.set_defaults(func=cmd_sweep)
    p = sub.add_parser("list", help="list the chapters and their parameters")
    p.set_defaults(func=cmd_list)
    args, extra = parser.parse_known_args(argv)
    if extra and args.command == "run" and all("=" in e and not e.startswith("-") for e in extra):
        args.params += extra  # NAME=VALUE given after an option
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    interrupt_on_sigterm()
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("\ninterrupted: no partial notebook was kept; rerun to redo the chapter.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
