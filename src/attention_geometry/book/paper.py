"""Paper-scale runs: a chapter at its ``paper`` preset, stored with its provenance.

``make paper CHAPTER=<name> [DEVICE=cpu|cuda] [RESTART=1]`` (or
``attention-geometry paper <name> [--device ...] [--restart]``) executes the
chapter through the same papermill path as the book, with progress on stderr,
and stores in ``results/<chapter>/paper/`` (committed to the repository):

- ``<stem>.ipynb``: the executed notebook, figures as PNG (widget views and
  HTML duplicates stripped);
- ``values.json``: every glued value (numbers as numbers, strings as strings);
  the chapter's claim records (the structured output of
  :func:`~.claims.show_claims`) under ``"claims"``;
- ``parameters.json``: the parameters it ran with;
- the files the chapter wrote through :meth:`~.context.RunContext.output_path`
  (arrays too large to glue, e.g. ``.npz``), moved out of the checkpoints, each
  named with its SHA-256 under ``files`` in the provenance; a file of an earlier
  run that this run did not write again is removed (:meth:`PaperRun.file`);
- ``provenance.json`` (a :class:`~.provenance.Provenance`): commit, dirty
  flag, date, device, CPU model and cores, torch and numpy versions, wall time
  (summed over every part of a run that was killed and resumed: ``parts``,
  ``last_part_seconds``; a killed part counts up to its last checkpoint, and
  what a kill threw away is ``discarded_seconds``), and the chapter's ``paper_note``.

The device is CUDA when torch sees one, else the CPU; ``device`` overrides it
and becomes the chapter's ``device`` parameter if it has one. The ``device``
entry is ignored when a stored run is compared with the current preset.

Interruption: the kernel gets ``AG_RUN_KIND=paper`` and
``AG_CHECKPOINT_DIR=results/<chapter>/paper/checkpoints``, where the chapter's
heavy loops checkpoint (:func:`.context.run_context`). The in-progress run's
parameters are written there first; starting the run again resumes from the
checkpoints (where the run left none, it starts from the beginning and says so), and starting it with other parameters is refused (``--restart``
discards the checkpoints). The stored files are written, each atomically, only
when the run has finished; then the checkpoints are removed, so that no later
run reuses what older code computed.

An unfinished run can be carried to another clone or session: its checkpoints
(``*.pt``, ``parameters.json`` and ``parts.json``; the partial notebooks are
ignored by git) are committed like any file, and the run started there resumes
from them. Each part records the commit it ran at (``part_commits`` in the
provenance), so a run finished across commits says so.

A measurement only a GPU can afford (chapter 8's exact profile at the paper's
shape) is made by a script outside the book and stored, with the same
provenance, in ``results/<chapter>/device_check.json``
(:func:`store_device_check`); the chapter reads it (:func:`load_device_check`)
and says so when there is none.

The book never re-runs a paper run: it reads the stored one
(:func:`load_paper_run`), and its build fails if a stored run was made with
other parameters than the current preset (:func:`check_paper_run_fresh`).
"""

import json
import os
import shutil
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from .context import CHECKPOINT_ENV, OUTPUTS
from .execute import execute_chapter
from .files import read_json_or_recover, read_stored_json, write_bytes_atomic, write_json_atomic
from .notebooks import CLAIMS_KEY, glued_data, slim_notebook
from .params import ParameterError, check_parameters
from .progress import stderr_line as _stderr
from .project import Project, ProjectNotFound
from .provenance import Provenance, computed_by, device_name, git_state, now
from .registry import Chapter

__all__ = ["PRESET", "DEVICES", "PaperRun", "PaperRunError", "StalePaperRun", "chapters_with_paper_preset",
           "choose_device", "paper_parameters", "run_paper", "load_paper_run", "check_paper_run_fresh",
           "stale_paper_runs", "run_under_way", "checkpointed_parameters", "regenerate_command", "amend_stored_claims",
           "attach_evidence", "AMENDABLE",
           "DEVICE_CHECK", "store_device_check", "load_device_check", "checkpoint_files"]

PRESET = "paper"
DEVICES = ("cpu", "cuda")
NOTE_GLUE = "paper_note"  # free text the chapter glues for the provenance


class PaperRunError(ValueError):
    """Bad input to a paper run (chapter, device, parameters): nothing was run."""


class StalePaperRun(RuntimeError):
    """A stored paper run was made with other parameters than the current preset."""


@dataclass(frozen=True)
class PaperRun:
    chapter: str
    folder: Path
    parameters: dict
    values: dict  # glued values, "claims" left out
    claims: Any  # the claim records (a list of mappings), or None
    provenance: Provenance

    def file(self, name: str) -> Path | None:
        """The stored file ``name`` that the run wrote beside its values
        (:meth:`~.context.RunContext.output_path`), or ``None`` if it stored none by that
        name; a file whose content is not the one its provenance names is refused."""
        digest = (self.provenance.extra.get("files") or {}).get(name)
        path = self.folder / name
        if digest is None or not path.is_file():
            return None
        if _sha256(path) != digest:
            raise PaperRunError(f"{path} is not the file the run stored (SHA-256 {digest}); regenerate it with: "
                                f"{regenerate_command(self.chapter)}")
        return path

    def notebook(self) -> Path | None:
        """The run's executed notebook, or ``None`` if it stored none."""
        notebooks = sorted(self.folder.glob("*.ipynb"))
        return notebooks[0] if notebooks else None

    def figure(self, name: str) -> bytes | None:
        """The PNG of the figure the run glued as ``name``, or ``None`` if it has none."""
        from .notebooks import glued_png

        nb = self.notebook()
        return glued_png(nb, name) if nb else None

    def text(self, name: str) -> str | None:
        """The value the run glued as ``name``, as the book shows it (a Markdown table or clause as
        its source), or ``None`` if it glued none by that name."""
        from .stored import glued_text_of

        nb = self.notebook()
        return glued_text_of(nb).get(name) if nb else None

    def hours_for(self, parameter: str, total: int) -> float:
        """The wall time, in hours, of ``total`` units of ``parameter`` (inputs, windows) at
        this run's rate: its whole wall time scaled by ``total / parameters[parameter]``, so
        an upper bound where part of the run does not scale with that parameter."""
        return self.provenance.wall_seconds * total / self.parameters[parameter] / 3600


def _sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def regenerate_command(name: str) -> str:
    return f"make paper CHAPTER={name}"


def chapters_with_paper_preset(project: Project) -> list[str]:
    return [name for name, c in project.chapters.items() if PRESET in c.presets]


def _preset(project: Project, chapter: Chapter) -> dict:
    if PRESET not in chapter.presets:
        have = chapters_with_paper_preset(project)
        raise PaperRunError(
            f"chapter {chapter.name!r} has no {PRESET!r} preset; chapters with one: "
            + (", ".join(have) or "none")
        )
    return check_parameters(chapter.params, chapter.presets[PRESET])


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def choose_device(requested: str | None) -> str:
    """``requested`` if it is usable, else the best device present (CUDA, else the CPU)."""
    if requested is None or requested == "":
        return "cuda" if cuda_available() else "cpu"
    if requested not in DEVICES:
        raise PaperRunError(f"device {requested!r} is unknown; allowed: {', '.join(DEVICES)}")
    if requested == "cuda" and not cuda_available():
        raise PaperRunError("device 'cuda' was asked for but torch sees no CUDA device here; "
                            "allowed here: cpu")
    return requested


def paper_parameters(project: Project, chapter: Chapter, device: str) -> dict:
    """The ``paper`` preset, with the chapter's ``device`` parameter (if any) set to ``device``."""
    parameters = _preset(project, chapter)
    if "device" in chapter.params:
        parameters["device"] = device
    try:
        return check_parameters(chapter.params, parameters)
    except ParameterError as err:
        raise PaperRunError(f"chapter {chapter.name!r}, {PRESET!r} preset: {err}") from None


def _comparable(parameters: dict) -> dict:
    return {k: v for k, v in parameters.items() if k != "device"}


#: How often a running paper run records its elapsed time (``checkpoints/parts.json``).
HEARTBEAT_S = 5.0


class _WallClock:
    """The wall time of a run that may be killed and resumed: every part (one
    start of the run) records its elapsed time in ``path`` every
    :data:`HEARTBEAT_S` seconds. What a kill threw away is not the run's time
    (``discarded``): a killed part counts up to its newest checkpoint among
    ``kept`` (the chapter's checkpoints this part resumes from), and with none
    kept the earlier parts do not count at all (the run starts again)."""

    def __init__(self, path: Path, commit: str | None = None, started: str | None = None,
                 kept: list[Path] | None = None):
        import threading

        earlier, _ = read_json_or_recover(path, "the paper run's elapsed time")
        earlier = earlier or {}
        self.path, self.earlier = path, [float(x) for x in earlier.get("parts", [])]
        self.discarded = float(earlier.get("discarded", 0.0))

        def per_part(field):  # older files recorded no commits, and no start times
            known = list(earlier.get(field, []))
            return [*([None] * (len(self.earlier) - len(known))), *known[:len(self.earlier)]]

        commits, starts = per_part("commits"), per_part("starts")
        if self.earlier and not kept:  # nothing of the earlier parts is in this run
            self.discarded += sum(self.earlier)
            self.earlier, commits, starts = [], [], []
        elif self.earlier and starts[-1]:  # the killed part counts up to its newest checkpoint
            since = max(p.stat().st_mtime for p in kept) - datetime.fromisoformat(starts[-1]).timestamp()
            useful = min(self.earlier[-1], max(0.0, since))
            self.discarded += self.earlier[-1] - useful
            self.earlier[-1] = round(useful, 1)
        self.commits, self.starts = [*commits, commit], [*starts, started]
        self.start, self._stop, self._end = time.perf_counter(), threading.Event(), None
        self._beat()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        write_json_atomic(self.path, {"parts": [*self.earlier, round(self.seconds(), 1)], "commits": self.commits,
                                      "starts": self.starts, "discarded": round(self.discarded, 1)})

    def _run(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            self._beat()

    def seconds(self) -> float:
        """This part's time so far; once stopped, up to the stop."""
        return (self._end or time.perf_counter()) - self.start

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._end = time.perf_counter()
        self._beat()

    def total(self) -> float:
        return sum(self.earlier) + self.seconds()


def run_paper(
    project: Project,
    chapter: Chapter,
    *,
    device: str | None = None,
    restart: bool = False,
    progress: bool = True,
    report: Callable[[str], None] = _stderr,
) -> PaperRun:
    """Run ``chapter`` at its ``paper`` preset into ``results/<chapter>/paper/`` (see the module)."""
    paper_parameters(project, chapter, "cpu")  # bad preset: before looking for a device
    device = choose_device(device)
    parameters = paper_parameters(project, chapter, device)
    folder = project.paper_folder(chapter)
    checkpoints = folder / "checkpoints"
    unfinished = _claim_checkpoints(chapter, checkpoints, parameters, restart, report)
    kept = checkpoint_files(checkpoints)
    resumed = unfinished and bool(kept)
    started, git = now(), git_state(project)  # the code as the run starts
    how = (", resuming from its checkpoints" if resumed else
           ", from the beginning: the unfinished run left no checkpoints to resume from" if unfinished else "")
    report(f"paper run of {chapter.name} on {device} ({device_name(device)}){how}: "
           f"{json.dumps(parameters, sort_keys=True)}")
    scratch = checkpoints / f"{chapter.stem}.ipynb"
    clock = _execute_timed(project, chapter, scratch, parameters, progress, git, started, kept)
    nb, values, claims = _read_run(scratch, chapter, report)
    outputs = sorted(p for p in (checkpoints / OUTPUTS).glob("*") if p.is_file() and not p.name.startswith("."))
    provenance = computed_by(
        project, command=f"{regenerate_command(chapter.name)} DEVICE={device}", device=device, git=git,
        chapter=chapter.name,
        started=next(t for t in clock.starts if t),  # the first part's start (the first one recorded)
        part_started=clock.starts, wall_seconds=round(clock.total(), 1), parts=len(clock.earlier) + 1,
        last_part_seconds=round(clock.seconds(), 1), part_commits=clock.commits, resumed=resumed,
        discarded_seconds=round(clock.discarded, 1), note=values.get(NOTE_GLUE, ""),
        **({"files": {p.name: _sha256(p) for p in outputs}} if outputs else {}))
    _store_run(folder, chapter, nb, values, claims, parameters, provenance, outputs)
    report(f"paper run of {chapter.name} done in {clock.total():.0f} s"
           + (f" ({clock.seconds():.0f} s in this part)" if clock.earlier else "") + f": {folder}")
    return PaperRun(chapter=chapter.name, folder=folder, parameters=parameters, values=values,
                    claims=claims, provenance=provenance)


def _claim_checkpoints(chapter: Chapter, checkpoints: Path, parameters: dict, restart: bool,
                       report: Callable[[str], None]) -> bool:
    """Make ``checkpoints`` this run's: discarded first with ``restart``; refused if an
    unfinished run left them with another value of a parameter this run has. A parameter the
    chapter gained (or lost) since does not stop the resumption: each loop's checkpoints are
    keyed by its own settings, so a new measurement starts afresh and the finished ones are
    kept. Whether the run resumes."""
    in_progress = checkpoints / "parameters.json"
    if restart and checkpoints.exists():
        shutil.rmtree(checkpoints)
        report(f"--restart: discarded the checkpoints in {checkpoints}")
    previous, warning = read_json_or_recover(in_progress, "the in-progress paper run's parameters")
    if warning:
        report(warning)
    changed = sorted(k for k in (previous or {}).keys() & parameters.keys() if previous[k] != parameters[k])
    if changed:
        raise PaperRunError(
            f"an unfinished paper run of {chapter.name!r} with parameters {json.dumps(previous, sort_keys=True)} "
            f"has checkpoints in {checkpoints}; this run's parameters are {json.dumps(parameters, sort_keys=True)}. "
            f"Run it with the same parameters to resume it, or pass --restart "
            f"(make paper CHAPTER={chapter.name} RESTART=1) to discard its checkpoints"
        )
    if previous and previous != parameters:
        gained, lost = sorted(parameters.keys() - previous.keys()), sorted(previous.keys() - parameters.keys())
        report("resuming with the parameters the chapter " + "; ".join(
            part for part in (f"gained ({', '.join(gained)})" if gained else "",
                              f"lost ({', '.join(lost)})" if lost else "") if part))
    write_json_atomic(in_progress, parameters)
    return bool(previous)


def checkpoint_files(checkpoints: Path) -> list[Path]:
    """The chapter's own checkpoints in ``checkpoints``: not the run's records
    (``parameters.json``, ``parts.json``), its notebooks or a file being written."""
    if not checkpoints.is_dir():
        return []
    return [p for p in checkpoints.iterdir() if p.is_file() and not p.name.startswith(".")
            and p.name not in ("parameters.json", "parts.json") and p.suffix != ".ipynb"]


def _execute_timed(project: Project, chapter: Chapter, scratch: Path, parameters: dict, progress: bool,
                   git: dict, started: str, kept: list[Path]) -> _WallClock:
    """Execute the chapter into ``scratch`` (beside its checkpoints), timing this part of the run."""
    checkpoints = scratch.parent
    clock = _WallClock(checkpoints / "parts.json", git.get("commit"), started, kept)
    reference = project.executed / f"{chapter.stem}.ipynb"  # the book's run: its cell times scale the estimate
    try:
        execute_chapter(project, chapter, scratch, parameters, kind="paper",
                        env={CHECKPOINT_ENV: str(checkpoints)}, progress=progress,
                        reference=reference if reference.exists() else None,
                        record={"command": regenerate_command(chapter.name)})
    finally:
        clock.stop()
    return clock


def _read_run(scratch: Path, chapter: Chapter, report: Callable[[str], None]):
    """The executed notebook slimmed, its glued values, and its claim records (``None``: none)."""
    import nbformat

    nb = nbformat.read(scratch, as_version=4)
    slim_notebook(nb)
    values = glued_data(nb)
    claims = values.pop(CLAIMS_KEY, None)
    if claims is not None and not isinstance(claims, list):
        report(f"warning: the claim records of {chapter.name} are not a structured output "
               f"(show_claims); stored as glued: {type(claims).__name__}")
    return nb, values, claims


def _store_run(folder: Path, chapter: Chapter, nb, values: dict, claims, parameters: dict,
               provenance: Provenance, outputs: list[Path] = ()) -> None:
    """Write the run's files, each atomically, and move its ``outputs`` beside them (those of
    an earlier run that this one did not write again go), then remove its checkpoints:
    nothing is in progress, and no later run reuses what this code computed."""
    import nbformat

    earlier, _ = read_json_or_recover(folder / "provenance.json", "the earlier stored run's provenance")
    for name in Provenance.from_json(earlier).extra.get("files") or {}:
        if name not in {p.name for p in outputs} and name == Path(name).name:
            (folder / name).unlink(missing_ok=True)
    for path in outputs:
        os.replace(path, folder / path.name)
    stored_values = {**values, "claims": claims} if claims is not None else values
    write_bytes_atomic(folder / f"{chapter.stem}.ipynb", nbformat.writes(nb).encode())
    write_json_atomic(folder / "values.json", stored_values)
    write_json_atomic(folder / "parameters.json", parameters)
    write_json_atomic(folder / "provenance.json", provenance.to_json())
    shutil.rmtree(folder / "checkpoints", ignore_errors=True)


def load_paper_run(chapter_name: str, project: Project | str | os.PathLike | None = None) -> PaperRun | None:
    """The stored paper run of ``chapter_name`` (``results/<name>/paper/``), or ``None``
    if there is none. ``project``: a :class:`Project`, its root folder, or (default)
    the project found from the working directory."""
    try:
        project = Project.of(project)
    except ProjectNotFound:  # a notebook run away from any clone of the book: nothing stored
        return None
    folder, root = project.results / chapter_name / "paper", project.root
    if not (folder / "values.json").is_file() or not (folder / "parameters.json").is_file():
        return None
    values = read_stored_json(folder / "values.json", root)  # a corrupt file: one line, and its fix
    parameters = read_stored_json(folder / "parameters.json", root)
    provenance_file = folder / "provenance.json"
    provenance = Provenance.from_json(read_stored_json(provenance_file, root) if provenance_file.is_file() else {})
    claims = values.pop("claims", None)
    return PaperRun(chapter=chapter_name, folder=folder, parameters=parameters, values=values,
                    claims=claims, provenance=provenance)


#: Claim-record fields a stored run may gain after the fact: descriptions derived from its
#: stored parameters, never a measurement, a verdict or the settings it states.
AMENDABLE = ("shortfall", "stand_in")


def amend_stored_claims(project: Project, chapter_name: str, field: str, values: dict, why: str) -> PaperRun:
    """Give the stored claim records of ``chapter_name`` a field added to :class:`~attention_geometry.verdicts.Claim`
    after the run was made (``values``: claim id -> value), and record it under
    ``"amendments"`` in ``provenance.json`` (date, commit, field, claims, ``why``).

    Only fields in :data:`AMENDABLE` can be amended, only on claims the run
    stored; the measurements stay as the run made them."""
    if field not in AMENDABLE:
        raise PaperRunError(f"field {field!r} cannot be amended; allowed: {', '.join(AMENDABLE)} "
                            "(a measurement is changed only by running it again)")
    if not why:
        raise PaperRunError("why = '' is not allowed; allowed: a sentence saying what was amended and why")
    run = _run_with_claims(project, chapter_name, values)
    claims = [{**c, field: values[c["id"]]} if c["id"] in values else c for c in run.claims]
    _write_amended(project, run, claims, field, sorted(values), why)
    return load_paper_run(chapter_name, project)


def _run_with_claims(project: Project, chapter_name: str, ids) -> PaperRun:
    """The stored run of ``chapter_name``, which must hold claim records with every id in ``ids``."""
    run = load_paper_run(chapter_name, project)
    if run is None or not run.claims:
        raise PaperRunError(f"chapter {chapter_name!r} has no stored paper run with claim records to amend")
    known = {c["id"] for c in run.claims}
    unknown = sorted(set(ids) - known)
    if unknown:
        raise PaperRunError(f"claim ids {unknown} are not in the stored run of {chapter_name!r}; "
                            f"allowed: {', '.join(sorted(known))}")
    return run


def _write_amended(project: Project, run: PaperRun, claims: list, field: str, ids: list, why: str) -> None:
    """Write ``claims`` into the stored run, and the amendment into its provenance."""
    amendment = {"date": now(), "commit": git_state(project)["commit"], "field": field, "claims": ids, "why": why}
    provenance = run.provenance.replace(amendments=[*(run.provenance.amendments or []), amendment])
    write_json_atomic(run.folder / "values.json", {**run.values, "claims": claims})
    write_json_atomic(run.folder / "provenance.json", provenance.to_json())


def attach_evidence(project: Project, chapter_name: str, verdicts: dict, why: str,
                    as_stored: dict | None = None) -> dict[str, tuple[str, str]]:
    """Give stored claim records made before verdicts kept their evidence (:mod:`~attention_geometry.evidence`)
    the evidence of their verdict, rebuilt from the run's own stored measurements; ``verdicts``:
    claim id -> the :class:`~attention_geometry.verdicts.Verdict` the rule returns on them.

    Each rebuilt verdict must carry evidence, and the rule that made the stored verdict must
    word its reason exactly as stored when given that evidence: today's reason, or, where the
    rule has changed since, ``as_stored[id]``, the reason the stored run's own code gives on it
    (run from that commit). Otherwise nothing is written.
    Only the evidence is added (the stored label and reason stay, as the run made them); the
    build then computes each verdict with today's rules (:func:`~attention_geometry.verdicts.recompute`).
    Recorded under ``"amendments"`` in ``provenance.json`` (field ``evidence``).
    Returns claim id -> (stored label, label by today's rules) for the ids given."""
    from ..verdicts import recompute

    if not why:
        raise PaperRunError("why = '' is not allowed; allowed: a sentence saying how the evidence was rebuilt")
    run = _run_with_claims(project, chapter_name, verdicts)
    stored = {c["id"]: c for c in run.claims}
    for cid, verdict in verdicts.items():
        old = stored[cid]["verdict"]
        if not verdict.evidence:
            raise PaperRunError(f"claim {cid!r}: the verdict given has no evidence; allowed: a verdict a rule returned")
        reason = (as_stored or {}).get(cid, verdict.reason)
        if reason != old["reason"]:
            raise PaperRunError(f"claim {cid!r}: the rebuilt verdict's reason {reason!r} is not the stored "
                                f"{old['reason']!r}; the evidence must be the measurements that made it")
    claims = [{**c, "verdict": {**c["verdict"], "evidence": verdicts[c["id"]].evidence}} if c["id"] in verdicts
              else c for c in run.claims]
    _write_amended(project, run, claims, "evidence", sorted(verdicts), why)
    return {c["id"]: (c["verdict"]["label"], str(recompute(c["verdict"]).label)) for c in claims if c["id"] in verdicts}


def checkpointed_parameters(folder: str | os.PathLike) -> dict | None:
    """The parameters a paper run wrote into ``folder/checkpoints/parameters.json`` as it started
    (``folder``: a chapter's paper-run folder), while its checkpoints are kept: the run that a
    command resumes, finished or not. ``None`` when there is none (a file that is not a JSON
    object is moved aside, :func:`~.files.read_json_or_recover`)."""
    path = Path(folder) / "checkpoints" / "parameters.json"
    if not path.is_file():
        return None
    data, _ = read_json_or_recover(path, "the in-progress paper run's parameters")
    return data or None


def run_under_way(chapter: Chapter | str, project: Project | None = None) -> dict | None:
    """The parameters of an unfinished paper run of ``chapter`` whose values are today's ``paper``
    preset (``device`` ignored): the run its committed checkpoints resume. ``None`` when there is
    none, or when its parameters are not the preset's.

    A run longer than a session changes the preset first and finishes over several sessions; until
    it does, the last finished run stays stored and shown (:func:`check_paper_run_fresh` accepts it,
    and its provenance line names the run under way)."""
    project = project or Project.find()
    chapter = project.chapter(chapter) if isinstance(chapter, str) else chapter
    under_way = checkpointed_parameters(project.paper_folder(chapter))
    if PRESET not in chapter.presets or under_way is None:
        return None
    return under_way if _comparable(under_way) == _comparable(_preset(project, chapter)) else None


def check_paper_run_fresh(chapter: Chapter | str, project: Project | None = None) -> None:
    """Raise :class:`StalePaperRun` if ``chapter``'s stored run no longer matches its
    ``paper`` preset (``device`` ignored): a parameter the run has whose preset value changed, or
    that the chapter lost. A parameter the chapter gained since does not make it stale, nor does a
    changed preset while a run at it is under way (:func:`run_under_way`); nothing to check without
    a stored run."""
    project = project or Project.find()
    chapter = project.chapter(chapter) if isinstance(chapter, str) else chapter
    run = load_paper_run(chapter.name, project)
    if run is None:
        return
    where = run.folder.relative_to(project.root)
    if PRESET not in chapter.presets:
        raise StalePaperRun(
            f"chapter {chapter.name!r} has a stored paper run in {where} but no {PRESET!r} preset any more; "
            f"delete {where} or restore the preset")
    stored, current = _comparable(run.parameters), _comparable(_preset(project, chapter))
    # a parameter the chapter gained since the run is a measurement the run does not have: its rows
    # say "not run at the paper's settings"; the run's own measurements still stand at its settings
    current = {k: v for k, v in current.items() if k in stored}
    if stored != current and run_under_way(chapter, project) is None:
        diffs = ", ".join(
            f"{k}: stored {json.dumps(stored.get(k))}, preset {json.dumps(current.get(k))}"
            for k in sorted(set(stored) | set(current)) if stored.get(k) != current.get(k)
        )
        raise StalePaperRun(
            f"the stored paper run of chapter {chapter.name!r} ({where}) does not match its "
            f"{PRESET!r} preset ({diffs}); regenerate it with: {regenerate_command(chapter.name)}")


def stale_paper_runs(project: Project) -> list[str]:
    """The messages of every stored paper run that is stale."""
    messages = []
    for chapter in project.chapters.values():
        try:
            check_paper_run_fresh(chapter, project)
        except StalePaperRun as err:
            messages.append(str(err))
    return messages


#: A stored device check of a chapter: ``results/<chapter>/device_check.json``.
DEVICE_CHECK = "device_check.json"


def store_device_check(project: Project, chapter: str, record: dict, *, command: str, device: str) -> Path:
    """Store ``record`` (what a script measured; it must hold a ``"measured"``
    sentence, composed by that script from its numbers) as ``chapter``'s device
    check, with its provenance: the command, commit, dirty flag, date, device and
    machine. Written atomically; returns the path."""
    if not isinstance(record.get("measured"), str) or not record["measured"]:
        raise ValueError(f"record['measured'] = {record.get('measured')!r} is not allowed; "
                         "allowed: a non-empty sentence saying what was measured")
    provenance = computed_by(project, command=command, device=device)
    return write_json_atomic(project.results / chapter / DEVICE_CHECK, {**record, "provenance": provenance.to_json()})


def load_device_check(chapter: str, project: Project | os.PathLike | str | None = None) -> dict | None:
    """``chapter``'s stored device check (its ``"provenance"`` a :class:`~.provenance.Provenance`),
    or ``None`` when there is none."""
    try:
        project = Project.of(project)
    except ProjectNotFound:  # away from any clone of the book: nothing stored
        return None
    path = project.results / chapter / DEVICE_CHECK
    data = read_stored_json(path, project.root) if path.is_file() else None
    return {**data, "provenance": Provenance.from_json(data.get("provenance"))} if data else None
