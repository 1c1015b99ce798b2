"""A chapter's "Paper vs. this book" table, generated from its claims.

A chapter builds one :class:`~attention_geometry.verdicts.Claim` per row (the
paper's words, our measurement, a verdict returned by a rule) and calls
:func:`show_claims`. That glues

* the table, as MyST Markdown, which the chapter glues under its own key and shows with ::

      ```{glue:md} cesaro-claims
      :format: myst
      ```

  Its columns: the claim and where the paper makes it; what the paper says;
  this book's measurement and settings; the measurement **at the paper's
  settings**, read from the chapter's stored paper-scale run
  (``results/<chapter>/paper/``, :func:`~attention_geometry.book.paper.load_paper_run`)
  or "not run at the paper's settings"; and the verdict that stands
  (:func:`~attention_geometry.verdicts.settle`: the paper-settings verdict when
  there is one), worded for its source (:func:`~attention_geometry.verdicts.phrase`).
* one line of provenance of the stored run (commit, device, date, wall time), or a
  line saying there is none, glued by the chapter too (``cesaro-paper-run``).
* the box "What this chapter finds" (:func:`~.findings.findings`): a few of the rows in
  one sentence each, glued by the chapter (``cesaro-findings``) and shown at the top of
  the page in an admonition::

      ```{admonition} What this chapter finds
      :class: tip ag-findings

      ```{glue:md} cesaro-findings
      :format: myst
      ```
      ```
* :data:`~.notebooks.CLAIMS_KEY`: the records themselves, for the claims ledger
  (:func:`~.ledger.chapter_claims`) and for the stored paper-scale run of this
  chapter (:func:`~.paper.run_paper`): a structured output of mime type
  :data:`~.notebooks.CLAIMS_MIME`, which the notebook stores as JSON and the readers get
  back as a list of mappings (:func:`~.notebooks.glued_data`); like every glued
  value it is not shown on the page.

No verdict is typed into a chapter: every one comes from a rule.
"""

import os
from typing import Any, NamedTuple, Sequence

from ..evidence import core_evidence, core_rule
from ..verdicts import Claim, Verdict, draws_assumption, part_evidence, phrase, recompute, settle, with_todays_policy
from .findings import findings
from .glue import glue, glue_json
from .notebooks import CLAIMS_KEY, CLAIMS_MIME
from .provenance import Provenance
from .tables import markdown_table

__all__ = ["ClaimsShown", "show_claims", "glue_claim_records", "claims_markdown", "provenance_line",
           "device_check_line", "CLAIMS_KEY", "CLAIMS_MIME"]

_NOT_RUN = "not run at the paper's settings"


def _stored_claims(run) -> dict[str, dict]:
    if run is None:
        return {}
    return {c["id"]: c for c in (run.claims or [])}


def _paper_cell(claim: Claim, stored: dict | None, final: Verdict, this_is_the_run: bool, chapter: str) -> str:
    """The "at the paper's settings" cell; ``final``: the settled verdict, which is the
    stored run's whenever it can be computed from the run's evidence (:func:`settle`)."""
    if this_is_the_run:
        return "(this is the paper-scale run)"
    if claim.at_paper_settings:
        return "the same: these are the paper's settings"
    if stored is None:
        return _NOT_RUN
    if not _has_evidence(stored):
        return (f"{stored['measured']} ({stored['settings']}); no verdict: the stored run keeps no evidence "
                f"today's rules can read (`make paper CHAPTER={chapter}` measures it again)")
    if not _same_rule(claim, stored):
        return (f"{stored['measured']} ({stored['settings']}); no verdict: the stored run measured what "
                f"`{stored['verdict']['evidence']['rule']}` judges, and this row is judged by "
                f"`{claim.verdict.evidence['rule']}` (`make paper CHAPTER={chapter}` measures it again)")
    return f"{stored['measured']} ({stored['settings']}): *{phrase(final, claim.source)}*"


def _has_evidence(stored: dict) -> bool:
    """Whether a stored claim record's verdict can be computed again (:func:`recompute`)."""
    return bool(stored["verdict"].get("evidence"))


def _quantity(evidence: Any) -> str:
    """What the rule that read the measurement (``core_rule``) was told it read: its ``what``
    argument, or ``""`` where it has none. Two verdicts of one rule on different quantities (a sign
    of a level, a sign of its difference from a control) have different quantities."""
    what = core_evidence(evidence).get("args", {}).get("what", "")
    return what if isinstance(what, str) else ""


def _same_rule(claim: Claim, stored: dict) -> bool:
    """Whether the stored run's verdict comes from the rule that judges the row today (a row whose
    rule, or the quantity its rule reads, was replaced needs the measurements the new rule reads: a
    new run). A rule that only qualifies another rule's verdict (``draws_verdict``) is looked
    through: the rule and quantity compared are those of the rule that read the measurement."""
    today = claim.verdict.evidence
    if today is None or core_rule(today) == "not_tested":  # the defaults cannot measure it; the stored run did
        return True
    then = stored["verdict"]["evidence"]
    quantities = _quantity(then), _quantity(today)  # the same rule on another quantity is another rule
    return core_rule(then) == core_rule(today) and (quantities[0] == quantities[1] or not all(quantities))


#: The assumption under which a stored verdict judged without the weight draw as its replicate stands
#: for a row that today's rule judges over draws (:func:`_stored_draws_assumption`).
STORED_WITHOUT_DRAWS = ("the stored run's measurement, judged without its weight draws (or training seeds) as "
                        "the replicate, standing for every draw")


def _judged_over_draws(evidence: Any) -> bool:
    """Whether ``draws_verdict`` judged this evidence anywhere (outside, or inside one part of an
    ``all_verdict``): whether its verdict is decisive only where the draws agree."""
    if isinstance(evidence, dict):
        return evidence.get("rule") == "draws_verdict" or any(_judged_over_draws(v) for v in evidence.values())
    if isinstance(evidence, (list, tuple)):
        return any(_judged_over_draws(v) for v in evidence)
    return False


def _stored_draws_assumption(claim: Claim, at_paper: dict | None) -> tuple[str, str]:
    """The claim's ``assumption`` and ``assumption_checked``, with one more where today's rule judges
    the row over weight draws (``draws_verdict``) and the stored run's verdict was not: the stored run
    cannot show that its sign is shared by the draws, so it stands only as far as this run's verdict,
    over its draws, is decisive (:func:`~attention_geometry.verdicts.draws_assumption`'s check;
    :func:`settle` then lets it decide only where the two point the same way)."""
    if (claim.assumption or at_paper is None or not _has_evidence(at_paper)
            or not _judged_over_draws(claim.verdict.evidence)
            or _judged_over_draws(at_paper["verdict"]["evidence"])):
        return claim.assumption, claim.assumption_checked
    return STORED_WITHOUT_DRAWS, draws_assumption(1, claim.verdict).get("assumption_checked", "")


def _as_judged_today(claim: Claim, stored: dict | None) -> dict | None:
    """The stored claim record, with its evidence narrowed to the part today's row judges where the
    stored run judged a two-part claim at once (a sign and a size: :func:`part_evidence`), and
    judged with today's policy arguments (tolerance, level, draws: :func:`with_todays_policy`)."""
    if stored is None or not _has_evidence(stored):
        return stored
    evidence = stored["verdict"]["evidence"]
    if not _same_rule(claim, stored):
        evidence = part_evidence(evidence, core_rule(claim.verdict.evidence))
        if evidence is None:
            return stored
    # today's tolerance, level and draw count judge the run's own measurements
    evidence = with_todays_policy(evidence, claim.verdict.evidence)
    return {**stored, "verdict": {**stored["verdict"], "evidence": evidence}}


def claims_markdown(claims: Sequence[Claim], run=None, *, this_is_the_run: bool = False) -> tuple[str, list[dict]]:
    """The table as MyST Markdown, and the records (each with its settled verdict)."""
    stored = _stored_claims(run)
    rows = []
    records = []
    ids = set()
    for c in claims:
        if c.id in ids:
            raise ValueError(f"claim id {c.id!r} appears twice in one table; ids must be unique")
        ids.add(c.id)
        # a stored row under the claim's own id is its own judgment; measured_as only stands in for a run
        # that judged it under another row's id
        at_paper = _as_judged_today(c, stored.get(c.id) if c.id in stored else stored.get(c.measured_as or c.id))
        # a stored verdict stands only as today's rule computes it from the run's evidence; a row measured
        # at the paper's settings by default is judged on this run's measurement
        usable = (at_paper is not None and _has_evidence(at_paper) and _same_rule(c, at_paper)
                  and not (this_is_the_run or c.at_paper_settings))
        paper_verdict = recompute(at_paper["verdict"]) if usable else None
        shortfall = at_paper.get("shortfall", "") if paper_verdict is not None else c.shortfall
        assumption, checked = _stored_draws_assumption(c, at_paper) if usable else (c.assumption,
                                                                                   c.assumption_checked)
        final = settle(c.verdict, paper_verdict, defaults_are_paper=c.at_paper_settings or this_is_the_run,
                       shortfall=shortfall, stand_in=at_paper.get("stand_in", "") if paper_verdict else c.stand_in,
                       assumption=assumption, assumption_checked=checked,
                       paper_claim=c.claim_kind == "paper")
        where = f"{{cite:t}}`{c.paper}`, {c.where}" + ("" if c.where == c.source else f" ({c.source})")
        rows.append((
            where,
            c.statement,
            f"{c.measured} ({c.settings})",
            _paper_cell(c, at_paper, final, this_is_the_run, getattr(run, "chapter", "<chapter>")),
            f"**{phrase(final, c.source)}**: {final.reason}",
        ))
        record = c.record()
        record["final_verdict"] = {"label": final.label, "reason": final.reason, "phrase": phrase(final, c.source)}
        record["at_paper_settings_record"] = at_paper
        record["paper_run_verdict"] = paper_verdict is not None  # the stored run's measurement is the one judged
        records.append(record)
    header = ("Claim", "The paper says", "This book", "At the paper's settings", "Verdict")
    return markdown_table(header, rows), records


def provenance_line(run) -> str:
    """One line on the stored paper-scale run, or a line saying there is none."""
    if run is None:
        return ("*At the paper's settings:* no stored run of this chapter; every verdict above was "
                "measured at the book's default settings.")
    p = Provenance.from_json(run.provenance)
    dirty = " (uncommitted changes)" if p.dirty else ""
    note = f" {p.note}" if p.note else ""
    wall = float("nan") if p.wall_seconds is None else float(p.wall_seconds)
    commits = list(dict.fromkeys(c for c in p.part_commits or [] if c))
    across = (f" in {p.parts or len(commits)} parts, at commits " + ", ".join(f"`{c[:10]}`" for c in commits)
              if len(commits) > 1 else "")
    return (f"*At the paper's settings:* stored run of commit `{str(p.commit or '?')[:10]}`{dirty}, "
            f"on {p.device_name or '?'}, {p.date or '?'}, wall time {wall / 60:.1f} min{across} "
            f"(`make paper CHAPTER={run.chapter}` regenerates it).{note}{_under_way(run)}")


def _under_way(run) -> str:
    """A sentence on an unfinished run at other settings whose checkpoints sit beside ``run``, if any."""
    import json

    from .paper import checkpointed_parameters

    newer = checkpointed_parameters(run.folder) if getattr(run, "folder", None) else None
    if newer is None:
        return ""
    changed = [f"{k} {json.dumps(newer[k])}" for k in sorted(newer) if k != "device"
               and k in run.parameters and newer[k] != run.parameters[k]]
    if not changed:
        return ""
    return (f" A run at new settings ({', '.join(changed)}) is under way from committed checkpoints; "
            "this stored run is shown until it finishes.")


def device_check_line(check: dict | None, *, what: str, command: str) -> str:
    """One line on a stored device check (:func:`~.paper.load_device_check`): what it
    measured and where, or that ``what`` is not measured yet and the ``command`` that
    measures it."""
    if not check:
        return f"*On a GPU:* not measured yet: {what} needs a GPU (`{command}`)."
    p = Provenance.from_json(check.get("provenance"))
    dirty = " (uncommitted changes)" if p.dirty else ""
    return (f"*On a GPU* (stored device check, {p.device_name or '?'}, "
            f"{str(p.date or '?')[:10]}, commit `{str(p.commit or '?')[:10]}`{dirty}): "
            f"{check['measured']} (`{p.command or command}`).")


def glue_claim_records(records: list[dict]) -> list[dict]:
    """Glue ``records`` under :data:`CLAIMS_KEY` as a structured output of mime type
    :data:`CLAIMS_MIME` (JSON in the notebook, hidden from the page); returns them
    as stored (plain JSON: labels as their words)."""
    return glue_json(CLAIMS_KEY, records, mime=CLAIMS_MIME)


class ClaimsShown(NamedTuple):
    """What :func:`show_claims` returns: the table, the provenance line and the box of
    findings (Markdown, for the chapter to glue under its own literal keys) and the records."""

    table: Any
    provenance: Any
    records: list[dict]
    findings: Any


def show_claims(chapter: str, claims: Sequence[Claim]) -> ClaimsShown:
    """Store the chapter's claim records for the ledger and the paper-scale run; return them with
    the verdict table, the provenance line and the box of findings, which the chapter glues:
    ``glue({"cesaro-claims": shown.table, "cesaro-paper-run": shown.provenance,
    "cesaro-findings": shown.findings})``."""
    from IPython.display import Markdown

    from .paper import load_paper_run

    this_is_the_run = os.environ.get("AG_RUN_KIND") == "paper"
    run = None if this_is_the_run else load_paper_run(chapter)
    table, records = claims_markdown(claims, run, this_is_the_run=this_is_the_run)
    records = glue_claim_records(records)
    return ClaimsShown(Markdown(table), Markdown(provenance_line(run) if not this_is_the_run else
                                                 "*This is the chapter's paper-scale run.*"), records,
                       Markdown(findings(records)))
