"""The command line, ``attention-geometry`` (the Makefile calls it)::

    attention-geometry book [--force] [--jobs N]     # execute (cached, parallel) + build HTML
    attention-geometry run layernorm d_max=128       # one parameterised run
    attention-geometry sweep recency grid.yaml       # a grid of runs on Dask
    attention-geometry paper jacobians [--device cuda] [--restart]   # a paper-scale run
    attention-geometry list                          # the chapters and their parameters

Exit codes: 0 success, 1 a failure (a chapter, a point, the HTML build),
2 bad input (unknown chapter, bad parameter, bad grid, bad device), 130
interrupted.
"""

import argparse
import fcntl
import signal
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from .execute import ChapterFailed
from .paper import PaperRunError, run_paper, stale_paper_runs
from .params import ParameterError
from .project import Project, ProjectNotFound
from .registry import Chapter
from .run import parse_assignments, resolve_parameters, run_chapter
from .schedule import execute_book
from .stage import HtmlBuildFailed, build_html
from .sweep import SweepError, load_grid, run_sweep

__all__ = ["main", "interrupt_on_sigterm"]


def _err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _print_chapters(project: Project, stream) -> None:
    for chapter in project.chapters.values():
        print(f"  {chapter.name:<21} {chapter.source}", file=stream)
        for pname, param in chapter.params.items():
            print(f"      {pname:<21} {param.allowed()} -- {param.doc}", file=stream)


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


def cmd_book(args, project: Project) -> int:
    start = time.perf_counter()
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
            _err(f"\nmake book FAILED: {len(failures)} chapter(s) did not execute; no HTML was built "
                 "and the previous good notebooks are unchanged.")
            for o in failures:
                _err(f"- {o.message}")
            return 1
        try:
            built = build_html(project, force=args.force)
        except HtmlBuildFailed as err:
            _err(f"\n{err}")
            return 1
    index = project.html / "index.html"
    print(f"\nbook {'built' if built else 'up to date'} in {time.perf_counter() - start:.1f} s: {index}")
    print("serve it with: make serve   (then open http://localhost:8000)")
    return 0


def cmd_run(args, project: Project) -> int:
    chapter = _chapter_or_list(project, args.chapter)
    if chapter is None:
        return 2
    try:
        parameters, name = resolve_parameters(chapter, parse_assignments(args.params), args.preset)
    except ParameterError as err:
        _err(f"error: {err}")
        return 2
    print(f"running {chapter.name} with {parameters or 'its defaults'} ...", flush=True)
    try:
        ex, html = run_chapter(project, chapter, parameters, name)
    except ChapterFailed as err:
        _err(f"error: {err}")
        return 1
    print(f"done in {ex.seconds:.1f} s\n  notebook: {ex.output}\n  HTML:     {html}")
    return 0


def cmd_sweep(args, project: Project) -> int:
    chapter = _chapter_or_list(project, args.chapter)
    if chapter is None:
        return 2
    try:
        sweep = load_grid(args.grid, chapter, name=args.name)
    except SweepError as err:
        _err(f"error: invalid grid: {err}")
        return 2
    out = Path(args.out) if args.out else project.runs / chapter.name / sweep.name
    print(f"sweep {sweep.name!r}: {len(sweep.points)} runs of {chapter.name} into {out}", flush=True)
    table = run_sweep(sweep, out, scheduler=args.scheduler, n_workers=args.workers, redo=args.redo,
                      project=project)
    runs = table.drop_duplicates("run")
    failed = runs[runs["status"] != "done"]
    print(f"\n{len(runs) - len(failed)} done, {len(failed)} failed\n  table:   {out / 'results.csv'}")
    if (out / "summary.png").exists():
        print(f"  figure:  {out / 'summary.png'}")
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
        _err(f"error: {err}\n  the checkpoints are kept: run the same command again to resume")
        return 1
    print(f"stored in {run.folder}: {', '.join(sorted(p.name for p in run.folder.iterdir() if p.is_file()))}")
    return 0


def cmd_list(args, project: Project) -> int:
    print("Chapters (use the name with `make run CHAPTER=<name>`):")
    _print_chapters(project, sys.stdout)
    return 0


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def interrupt_on_sigterm() -> None:
    """Make `kill` (SIGTERM) unwind like Ctrl-C, so no partial notebook is left."""
    signal.signal(signal.SIGTERM, _raise_interrupt)


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
    p = sub.add_parser("list", help="list the chapters and their parameters")
    p.set_defaults(func=cmd_list)
    return parser


def main(argv: list[str] | None = None, project: Project | None = None) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command == "run" and all("=" in e and not e.startswith("-") for e in extra):
        args.params += extra  # NAME=VALUE given after an option
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        project = project or Project.find()
    except ProjectNotFound as err:
        _err(f"error: {err}")
        return 2
    interrupt_on_sigterm()
    try:
        return args.func(args, project)
    except KeyboardInterrupt:
        _err("\ninterrupted: no partial notebook was kept; rerun to redo what was interrupted.")
        return 130


if __name__ == "__main__":
    sys.exit(main())
