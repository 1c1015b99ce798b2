"""The command line, ``attention-geometry`` (the Makefile calls it)::

    attention-geometry book [--force] [--jobs N]     # execute (cached, parallel) + build HTML
    attention-geometry run layernorm d_max=128       # one parameterised run
    attention-geometry sweep recency grid.yaml       # a grid of runs on Dask
    attention-geometry paper jacobians [--device cuda] [--restart]   # a paper-scale run
    attention-geometry list                          # the chapters and their parameters
    attention-geometry serve [--port 8000]           # serve the built book
    attention-geometry lab [--port 8888]             # JupyterLab on the chapters
    attention-geometry pdf                           # the book as a PDF (needs LaTeX)

Every error a user can reach is one line naming what is wrong (a parameter,
a file, an address, a port), the value and what is allowed, never a
traceback. Exit codes: 0 success, 1 a failure (a chapter, a point, the HTML
build), 2 bad input (unknown chapter, bad parameter, bad grid, bad device,
unreachable scheduler, port in use), 130 interrupted (Ctrl-C: "interrupted",
nothing else). A stored result under ``results/`` that is not valid JSON is a
failure (1), named with its fix, before anything that reads it runs.
"""

import argparse
import errno
import fcntl
import functools
import hashlib
import http.server
import json
import logging
import os
import shutil
import signal
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

from .cache import chapter_key
from .execute import ChapterFailed
from .files import StoredResultCorrupt, corrupt_stored_results, read_json_or_recover, write_json_atomic
from .paper import PaperRunError, checkpoint_files, run_paper, stale_paper_runs
from .params import ParameterError
from .progress import format_seconds, stderr_line as _err
from .project import Project, ProjectNotFound
from .provenance import now
from .registry import Chapter
from .report import ReportFailed
from .run import (check_run_name, device_assignment, estimate_seconds, parse_assignments, resolve_parameters,
                  run_chapter, run_command)
from .schedule import execute_book
from .stage import HtmlBuildFailed, build_html, build_pdf
from .sweep import SchedulerUnreachable, SweepError, load_grid, run_sweep
from .toc import book_chapters, stray_notebooks

__all__ = ["main", "entry", "interrupt_on_sigterm", "LONG_RUN", "LAST_BUILD"]

LONG_RUN = 600.0  # seconds: a run the cost model puts above this is announced first
LAST_BUILD = "last-build.json"  # in _build/: what the last `make book` left failed


def _print_chapters(project: Project, stream) -> None:
    for chapter in project.chapters.values():
        cost = estimate_seconds(project, chapter, {})
        about = f"about {format_seconds(cost)} at the defaults" if cost else ""
        print(f"  {chapter.name:<21} {chapter.source:<32} {about}", file=stream)
        for pname, param in chapter.params.items():  # from the chapter's parameter model
            print(f"      {pname:<21} default {json.dumps(param.default):<14} {param.allowed()} -- {param.doc}",
                  file=stream)
        for preset, values in {"smoke": chapter.smoke, **chapter.presets}.items():  # every chapter has a smoke set
            shown = " ".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in values.items())
            print(f"      PRESET={preset:<14} {shown}", file=stream)


def _chapter_or_list(project: Project, name: str) -> Chapter | None:
    """The chapter called ``name``; else print the chapters and return None."""
    try:
        return project.chapter(name)
    except KeyError:
        _err(f"error: unknown chapter {name!r}. Chapters:")
        _print_chapters(project, sys.stderr)
        return None


@contextmanager
def _build_lock(project: Project):
    """One ``book`` command at a time per project (a second one waits)."""
    project.build.mkdir(parents=True, exist_ok=True)
    with open(project.build / ".lock", "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _err(f"another build of {project.root} is running; waiting for it ...")
            fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def _record_build(project: Project, failed: list[dict], html: str) -> None:
    write_json_atomic(project.build / LAST_BUILD, {"date": now(), "failed": failed, "html": html})


def _corrupt_results(project: Project, chapter: str | None = None, rewritten: Path | None = None) -> bool:
    """Say which stored results (of ``chapter``; default: all; but those in the folder
    ``rewritten``) are not valid JSON, one line each."""
    messages = corrupt_stored_results(project.root, chapter, rewritten)
    for message in messages:
        _err(f"error: {message}")
    return bool(messages)


def cmd_book(args, project: Project) -> int:
    start = time.perf_counter()
    strays = stray_notebooks(project)
    if strays:
        for message in strays:
            _err(f"error: {message}")
        return 2
    if _corrupt_results(project):
        return 1
    stale = stale_paper_runs(project)
    if stale:
        _err("make book FAILED before executing anything: stored paper-scale runs are stale.")
        for message in stale:
            _err(f"- {message}")
        return 1
    with _build_lock(project):
        outcomes = execute_book(project, force=args.force, jobs=args.jobs)
        failures = [o for o in outcomes if o.status in ("failed", "skipped")]
        if failures:
            _record_build(project, [{"chapter": o.chapter, "message": o.message} for o in failures], "not built")
            _err(f"\nmake book FAILED: {len(failures)} chapter(s) did not execute; no HTML was built "
                 "and the previous good notebooks are unchanged.")
            for o in failures:
                _err(f"- {o.message}")
            return 1
        try:
            built = build_html(project, force=args.force)
        except HtmlBuildFailed as err:
            _record_build(project, [], "failed")
            _err(f"\n{err}")
            return 1
        _record_build(project, [], "built" if built else "up to date")
    index = project.html / "index.html"
    print(f"\nbook {'built' if built else 'up to date'} in {time.perf_counter() - start:.1f} s: {index}")
    print("serve it with: make serve   (then open http://localhost:8000)")
    return 0


def last_build_problems(project: Project) -> list[str]:
    """What the last ``make book`` could not do, one line each (none if it succeeded)."""
    record, _ = read_json_or_recover(project.build / LAST_BUILD, "the last build's record")
    failed = record.get("failed") or []
    lines = []
    if failed:
        names = ", ".join(f["chapter"] for f in failed)
        lines.append(f"note: the last `make book` ({record.get('date', '?')}) failed: {names} did not execute; "
                     "these pages are from the last good build. `make book` says why.")
    elif record.get("html") == "failed":
        lines.append(f"note: the last `make book` ({record.get('date', '?')}) could not build the HTML; "
                     "these pages are from the build before. `make book` says why.")
    return lines


def cmd_run(args, project: Project) -> int:
    chapter = _chapter_or_list(project, args.chapter)
    if chapter is None:
        return 2
    try:
        given = parse_assignments(args.params + (device_assignment(chapter, args.device) if args.device else []))
        parameters, name = resolve_parameters(chapter, given, args.preset)
        name = check_run_name(args.name) if args.name else name
    except ParameterError as err:
        _err(f"error: {err}")
        return 2
    if _corrupt_results(project, chapter.name):
        return 1
    estimate = estimate_seconds(project, chapter, parameters)
    if estimate is not None and estimate > LONG_RUN:
        print(f"estimated run time: about {format_seconds(estimate)} (the cost model of {chapter.name}, calibrated "
              "on its defaults; Ctrl-C stops the run)", flush=True)
    print(f"running {chapter.name} with {parameters or 'its defaults'} ...", flush=True)
    try:
        result = run_chapter(project, chapter, parameters, name, estimate=estimate,
                             command=run_command(chapter, given, args.preset, args.name))
    except (ChapterFailed, ReportFailed) as err:  # a failing cell; a report Jupyter Book could not build
        _err(f"error: {err}")
        return 1
    print(f"done in {result.execution.seconds:.1f} s\n  report:   {result.report.index}\n"
          f"  notebook: {result.notebook}")
    return 0


def cmd_sweep(args, project: Project) -> int:
    chapter = _chapter_or_list(project, args.chapter)
    if chapter is None:
        return 2
    try:
        sweep = load_grid(args.grid, chapter, name=check_run_name(args.name) if args.name else None)
    except SweepError as err:
        _err(f"error: invalid grid: {err}")
        return 2
    except ParameterError as err:
        _err(f"error: {err}")
        return 2
    if args.workers is not None and args.workers < 1:
        _err(f"error: --workers = {args.workers} is not allowed; allowed: at least 1 (WORKERS=<n>)")
        return 2
    out = Path(args.out) if args.out else project.runs / chapter.name / sweep.name
    if _corrupt_results(project, chapter.name, rewritten=out):
        return 1
    print(f"sweep {sweep.name!r}: {len(sweep.points)} runs of {chapter.name} into {out}", flush=True)
    try:
        table = run_sweep(sweep, out, scheduler=args.scheduler, n_workers=args.workers, redo=args.redo,
                          project=project, reports=not args.no_reports)
    except SchedulerUnreachable as err:
        _err(f"error: {err}")
        return 2
    runs = table.drop_duplicates("run")
    failed = runs[runs["status"] != "done"]
    print(f"\n{len(runs) - len(failed)} done, {len(failed)} failed\n  table:   {out / 'results.csv'}")
    if (out / "summary.png").exists():
        print(f"  figure:  {out / 'summary.png'}")
    if (out / "index.html").exists():
        print(f"  reports: {out / 'index.html'}")
    for _, row in failed.iterrows():
        _err(f"  FAILED {row['run']}: {row['error']}")
    return 1 if len(failed) else 0


def cmd_paper(args, project: Project) -> int:
    chapter = _chapter_or_list(project, args.chapter)
    if chapter is None:
        return 2
    try:
        run = run_paper(project, chapter, device=args.device or None, restart=args.restart)
    except PaperRunError as err:
        _err(f"error: {err}")
        return 2
    except ChapterFailed as err:
        if checkpoint_files(project.paper_folder(chapter) / "checkpoints"):
            _err(f"error: {err}\n  the checkpoints are kept: run the same command again to resume")
        else:
            _err(f"error: {err}\n  it left no checkpoints: the same command runs it again from the beginning")
        return 1
    print(f"stored in {run.folder}: {', '.join(sorted(p.name for p in run.folder.iterdir() if p.is_file()))}")
    return 0


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def cmd_serve(args, project: Project) -> int:
    if not (project.html / "index.html").exists():
        _err("error: no book yet at _build/html: run `make book` first")
        return 1
    for line in last_build_problems(project):
        _err(line)
    handler = functools.partial(_QuietHandler, directory=str(project.html))
    try:
        server = http.server.ThreadingHTTPServer((args.host, args.port), handler)
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            _err(f"error: port {args.port} is already in use (another `make serve`?); "
                 f"pick another with: make serve PORT={args.port + 1}")
        else:
            _err(f"error: cannot serve on {args.host}:{args.port}: {err.strerror or err}; "
                 "pick another port with: make serve PORT=<number>")
        return 2
    print(f"serving the book on http://localhost:{server.server_address[1]} (Ctrl-C stops)", flush=True)
    with server:
        server.serve_forever()
    return 0


# JupyterLab opens the chapters (Jupytext MyST Markdown) as notebooks by default.
LAB_SETTINGS = {"@jupyterlab/docmanager-extension:plugin": {
    "defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}}}


def lab_settings_file(prefix: str | os.PathLike = sys.prefix) -> Path:
    """JupyterLab's overrides of its default settings, in this environment."""
    return Path(prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"


def cmd_lab(args, project: Project) -> int:
    jupyter = Path(sys.executable).with_name("jupyter")
    if not jupyter.exists():
        _err(f"error: JupyterLab is not installed in {sys.prefix}: run `make lab` (it installs requirements.txt)")
        return 1
    settings = lab_settings_file()
    current, _ = read_json_or_recover(settings, "JupyterLab's settings overrides")
    if any(current.get(k) != v for k, v in LAB_SETTINGS.items()):
        write_json_atomic(settings, {**current, **LAB_SETTINGS})
    argv = [str(jupyter), "lab", f"--ServerApp.root_dir={project.root}", f"--ServerApp.ip={args.host}",
            f"--ServerApp.port={args.port}", "--ServerApp.port_retries=0",
            *(["--allow-root"] if os.geteuid() == 0 else []),  # containers and CI run as root
            *args.extra]
    print(f"JupyterLab on the chapters of {project.root} (kernel: {sys.executable}); Ctrl-C twice stops it",
          flush=True)
    os.execv(argv[0], argv)


def cmd_pdf(args, project: Project) -> int:
    missing = [tool for tool in ("latexmk", "xelatex") if shutil.which(tool) is None]
    if missing:
        _err(f"error: make pdf needs LaTeX ({', '.join(missing)} not found); on Debian/Ubuntu: sudo apt-get "
             "install latexmk texlive-xetex texlive-latex-extra texlive-fonts-recommended fonts-freefont-otf")
        return 1
    if (project.executed.exists() and not any(project.executed.glob("*.ipynb"))) or not project.executed.exists():
        _err("error: no executed chapters yet: run `make book` first")
        return 1
    try:
        pdf = build_pdf(project)
    except HtmlBuildFailed as err:
        _err(f"error: {err}")
        return 1
    print(f"PDF: {pdf}")
    return 0


def cmd_cache_key(args, project: Project) -> int:
    """One digest of what every chapter's cache key covers (CI caches by it)."""
    h = hashlib.sha256()
    for chapter in book_chapters(project):
        h.update(f"{chapter.name} {chapter_key(project, chapter, {}, None)}\n".encode())
    print(h.hexdigest())
    return 0


def cmd_where(args, project: Project) -> int:
    """Where each glued key is computed: the chapter, the line of its literal, the cell's library calls."""
    from .where import describe, find_key

    code = 0
    for key in args.keys:
        site = find_key(key, project)
        if site is None:
            _err(f"error: no chapter glues {key!r}: a key is the name in {{glue:text}}`name` (`make chapters` "
                 "lists the chapters)")
            code = 2
        else:
            print(describe(site, project))
    return code


def cmd_golden(args, project: Project) -> int:
    """Write tests/golden_ledger.json from the built book's claims.json, and say what moved."""
    from .golden import GOLDEN_FILE, golden_of, read_golden, verdict_changes, write_golden

    ledger = project.html / "claims.json"
    if not ledger.exists():
        _err(f"error: no {ledger.relative_to(project.root)}: run `make book` first")
        return 2
    rows = json.loads(ledger.read_text())
    changes = verdict_changes(read_golden(project), golden_of(rows))
    write_golden(rows, project)
    print(f"{GOLDEN_FILE}: {len(rows)} verdicts, {len(changes)} changed" + (":" if changes else ""))
    for line in changes:
        print(f"  {line}")
    return 0


def cmd_list(args, project: Project) -> int:
    print("Chapters (use the name with `make run CHAPTER=<name>`; each parameter's default and allowed values):")
    _print_chapters(project, sys.stdout)
    return 0


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def interrupt_on_sigterm() -> None:
    """Make `kill` (SIGTERM) unwind like Ctrl-C, so no partial notebook is left."""
    signal.signal(signal.SIGTERM, _raise_interrupt)


def _quiet_interrupt(signum, frame):
    """Ctrl-C or SIGTERM: unwind (removing partial files, stopping the kernel) in
    silence; what the libraries would log while their sockets and event loops are
    torn down is of no use to anyone who pressed Ctrl-C."""
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    sys.unraisablehook = lambda unraisable: None
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
    raise KeyboardInterrupt


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="attention-geometry",
        description="Execute the chapters of Attention Geometry and build the book.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("book", help="execute changed chapters (cached, in parallel) and build the HTML book")
    p.add_argument("--force", action="store_true", help="re-execute every chapter, ignoring the cache")
    p.add_argument("--jobs", type=int, help="chapters executed at once (default: one per CPU core)")
    p.set_defaults(func=cmd_book)
    p = sub.add_parser(
        "run",
        help="execute one chapter with other parameters into runs/<chapter>/",
        description="Execute one chapter with parameters NAME=VALUE (YAML values) into "
        "runs/<chapter>/<run>/: the notebook and html/, its report rendered like the book. "
        "Never touches the book's cache.",
    )
    p.add_argument("chapter", help="chapter name (see `list`)")
    p.add_argument("params", nargs="*", metavar="NAME=VALUE", help="e.g. d_max=128 seed=3")
    p.add_argument("--preset", help="start from a named parameter set (e.g. smoke)")
    p.add_argument("--device", help="cpu or cuda: the chapter's device parameter, checked like the others "
                   "(a chapter without one runs on the CPU)")
    p.add_argument("--name", help="the run's folder under runs/<chapter>/ (default: from the parameters)")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser(
        "sweep",
        help="run a chapter over a YAML grid of parameters on Dask",
        description="Expand a YAML grid (lists -> Cartesian product, or an explicit "
        "'runs' list) into papermill runs of one chapter, executed in parallel on Dask, "
        "into runs/<chapter>/<sweep>/ with results.csv and summary.png. "
        "Rerunning skips the points already done whose inputs did not change.",
    )
    p.add_argument("chapter", help="chapter name (see `list`)")
    p.add_argument("grid", help="YAML grid file")
    p.add_argument("--scheduler", help="address of a running Dask scheduler, e.g. tcp://host:8786 "
                   "(default: $AG_DASK_SCHEDULER, else a local cluster)")
    p.add_argument("--workers", type=int, help="local cluster size (default: one per CPU core)")
    p.add_argument("--redo", action="store_true", help="rerun the points already done")
    p.add_argument("--name", help="sweep name (default: the grid's 'name', else the file's stem)")
    p.add_argument("--out", help="output folder (default: runs/<chapter>/<sweep>)")
    p.add_argument("--no-reports", action="store_true", help="skip the points' HTML reports and index.html")
    p.set_defaults(func=cmd_sweep)
    p = sub.add_parser(
        "paper",
        help="run a chapter at its 'paper' preset into results/<chapter>/paper/ (resumable)",
        description="Execute a chapter with its 'paper' preset on the best device present "
        "(CUDA, else the CPU) into results/<chapter>/paper/: the notebook, values.json, "
        "parameters.json and provenance.json. A killed run resumes from its checkpoints.",
    )
    p.add_argument("chapter", help="chapter name (see `list`)")
    p.add_argument("--device", help="cpu or cuda (default: cuda if available, else cpu)")
    p.add_argument("--restart", action="store_true", help="discard the checkpoints of an unfinished run")
    p.set_defaults(func=cmd_paper)
    p = sub.add_parser("list", help="list the chapters and their parameters (default, allowed values)")
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("serve", help="serve the built book (_build/html) on localhost")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.set_defaults(func=cmd_serve)
    p = sub.add_parser("lab", help="JupyterLab on the project, chapters opening as notebooks (jupytext)")
    p.add_argument("--port", type=int, default=8888, help="port (default: 8888)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("extra", nargs="*", metavar="--JupyterOption=value", help="passed to `jupyter lab`")
    p.set_defaults(func=cmd_lab)
    p = sub.add_parser("pdf", help="the book as a PDF through Jupyter Book's LaTeX builder (needs TeX Live)")
    p.set_defaults(func=cmd_pdf)
    p = sub.add_parser("where", help="where a glued number is computed: chapter, line, library functions")
    p.add_argument("keys", nargs="+", metavar="KEY", help="a glue key, as in {glue:text}`KEY`")
    p.set_defaults(func=cmd_where)
    p = sub.add_parser("golden", help="write tests/golden_ledger.json (every verdict) from the built book")
    p.set_defaults(func=cmd_golden)
    p = sub.add_parser("cache-key", help="a digest of everything the chapters' cache keys cover")
    p.set_defaults(func=cmd_cache_key)
    return parser


def main(argv: list[str] | None = None, project: Project | None = None) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command == "run" and all("=" in e and not e.startswith("-") for e in extra):
        args.params += extra  # NAME=VALUE given after an option
    elif extra and args.command == "lab":
        args.extra += extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        project = project or Project.find()
    except ProjectNotFound as err:
        _err(f"error: {err}")
        return 2
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        interrupt_on_sigterm()
    try:
        return args.func(args, project)
    except StoredResultCorrupt as err:  # read while the command ran (another chapter's, a device check)
        _err(f"error: {err}")
        return 1
    except KeyboardInterrupt:
        _err("interrupted")
        return 130


def entry(argv: list[str] | None = None, project: Project | None = None) -> None:
    """The ``attention-geometry`` command: :func:`main`, quiet on Ctrl-C (the console
    script starts in :func:`.command.entry`, which is quiet while this module imports)."""
    try:
        signal.signal(signal.SIGINT, _quiet_interrupt)
        signal.signal(signal.SIGTERM, _quiet_interrupt)
        code = main(argv, project)
    except KeyboardInterrupt:  # outside main's own handler: parsing the arguments, finding the project
        _err("interrupted")
        code = 130
    sys.stdout.flush()
    sys.stderr.flush()
    if code == 130:  # skip the interpreter's teardown: it only prints library noise after an interrupt
        os._exit(130)
    sys.exit(code)


if __name__ == "__main__":  # python -m attention_geometry.book.cli (quiet on Ctrl-C once imported)
    entry()
