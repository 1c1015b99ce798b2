r"""Verdicts: the rules that turn a measurement and its uncertainty into a word.

Every row of a "Paper vs. this book" table is a :class:`Claim`: what a paper
says (in its own words, with where it says it and what kind of source that
is), what this book measured (with its uncertainty and the settings), and a
:class:`Verdict` returned by one of the rules below -- never a word typed into
a table. Each rule can return every one of its verdicts; the tests show it.

The vocabulary (:class:`Label`, whose members are these words; :data:`VERDICTS`
holds them as plain strings):

``reproduced``
    the measurement agrees with the claim, beyond its uncertainty;
``reproduced in a stand-in``
    the same, measured in a stand-in for the paper's setup (:func:`settle`);
``differs``
    a claimed *value* lies outside the measurement's interval (the effect may
    exist, its size is another);
``refuted``
    a claimed *direction* or *property* is contradicted beyond the uncertainty;
``not decided``
    the interval contains both outcomes: the evidence does not decide (the
    reason says what would: the sample size at which it would);
``uninformative``
    the test cannot tell the claim from its negation (an alternative that
    does not have the paper's mechanism passes it too): agreement means nothing;
``not tested``
    nothing here measures the claim (the reason says why).

Rules:

* :func:`value_verdict` -- a claimed value, with a tolerance band;
* :func:`sign_verdict` -- a claimed direction of an effect (a difference, a
  contrast, a slope);
* :func:`bound_verdict` -- a claimed bound (``at most``/``at least``);
* :func:`sign_and_size_verdict` -- a claimed closed-form value whose *sign* and
  *size* are judged separately (the sign can hold while the size is off);
* :func:`hypothesis_verdict` -- a claim that a null hypothesis is false (or
  true), judged by a test's p-value;
* :func:`property_verdict` -- a claimed exact property checked by a
  computation that either holds or fails (a proof-checking computation: exact
  arithmetic, an identity to rounding);
* :func:`ceiling_verdict` -- a claimed correlation (e.g. a Spearman between a
  measured profile and a model) read against what the data's reliability lets a
  perfect model reach (its square root);
* :func:`extreme_change_verdict` -- a claimed change of a profile's extreme ("deepens")
  between two noisy profiles, each extreme chosen on one half of the replicates and
  measured on the other (:func:`~attention_geometry.selection.split_half_extreme`);
* :func:`proportion_verdict` -- a claim about every case, read as a proportion of at
  least ``1 - tol`` with an exact binomial interval;
* :func:`range_verdict` -- a claimed range (the value stays within ``[low, high]``, or outside it);
* :func:`all_verdict` -- a claim made for every case, or of several parts: one verdict per case;
* :func:`heterogeneity_verdict` -- a claimed *mixed* effect (helps in some cases, not in others);
* :func:`values_verdict` -- several claimed values at once (a row of a table),
  each by :func:`value_verdict`;
* :func:`not_tested`.

Two helpers turn a verdict into what a reader sees: :func:`phrase` gives its
label, whatever the claim's source (shown in a column of its own), and
:func:`settle` combines the
verdict at the book's default settings with the one at the paper's settings
(a stored paper-scale run): the latter decides when it exists; a reproduced
verdict measured in a stand-in says so, and a decisive one resting on an
assumption that is not the paper's stands as ``not decided`` unless the book
shows the assumption does not matter.

Rules with a tolerance report the smallest departure they could have seen
(80 % power, :func:`~attention_geometry.power.detectable_effect`); rules given the
value of the claim's negation (``alternative``) return ``uninformative`` rather
than ``reproduced`` when that value passes too.
"""

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt

from ._checks import ArgumentTypeError, check_choice, check_float, check_int, fail
from .evidence import QUALIFIED, UnknownRule, decode, qualified_evidence, rule, rule_named
from .power import (detectable_effect, model_reference, projected_reliability, samples_for_reliability,
                    samples_to_decide)
from .stats import Estimate

__all__ = [
    "Label",
    "Source",
    "ClaimKind",
    "VERDICTS",
    "SOURCES",
    "CLAIM_KINDS",
    "Verdict",
    "Claim",
    "ClaimList",
    "value_verdict",
    "sign_verdict",
    "bound_verdict",
    "ratio_verdict",
    "censored_verdict",
    "part_evidence", "with_todays_policy", "POLICY_ARGUMENTS",
    "floor_verdict",
    "sign_and_size_verdict",
    "hypothesis_verdict",
    "property_verdict",
    "ceiling_verdict",
    "COMPARES",
    "extreme_change_verdict",
    "proportion_verdict",
    "range_verdict",
    "all_verdict",
    "heterogeneity_verdict",
    "not_tested",
    "values_verdict",
    "phrase",
    "verdict_words",
    "settle",
    "recompute",
]

class Label(StrEnum):
    """A verdict's word. A member *is* its string (``Label.REPRODUCED == "reproduced"``),
    so records compare with strings and are written to JSON as the word."""

    REPRODUCED = "reproduced"
    REPRODUCED_IN_STAND_IN = "reproduced in a stand-in"
    DIFFERS = "differs"
    REFUTED = "refuted"
    NOT_DECIDED = "not decided"
    UNINFORMATIVE = "uninformative"
    NOT_TESTED = "not tested"


class ClaimKind(StrEnum):
    """What a row tests: ``paper``, a claim the paper makes; ``reading``, the book's own
    reading of a paper or a control the paper never ran (not counted among the paper's
    refutations)."""

    PAPER = "paper"
    READING = "reading"


class Source(StrEnum):
    """Where a claim is read. ``full text``: the paper itself; ``abstract`` and
    ``figure caption``: the paper's own words, quoted; ``repository``: the
    authors' code (scripts, README); ``summary``: the AI-written summary, which
    warns that its numbers and claims can be wrong."""

    FULL_TEXT = "full text"
    ABSTRACT = "abstract"
    FIGURE_CAPTION = "figure caption"
    REPOSITORY = "repository"
    SUMMARY = "summary"


#: The verdict words, in order (plain strings: they name the choices in error messages).
VERDICTS = tuple(label.value for label in Label)
#: The kinds of source, in order (:class:`Source`).
SOURCES = tuple(source.value for source in Source)
#: The kinds of claim, in order (:class:`ClaimKind`).
CLAIM_KINDS = tuple(kind.value for kind in ClaimKind)

#: The labels that decide a claim either way: a shortfall of the setup turns them undecided.
_DECISIVE = (Label.REPRODUCED, Label.REPRODUCED_IN_STAND_IN, Label.DIFFERS, Label.REFUTED)
#: The labels that agree with the claim.
_AGREES = (Label.REPRODUCED, Label.REPRODUCED_IN_STAND_IN)


@dataclass(frozen=True)
class Verdict:
    """A verdict word (a :class:`Label`; a string from :data:`VERDICTS` is made one)
    and the one-line reason the rule gives."""

    label: Label
    reason: str
    #: What the rule computed it from (:mod:`.evidence`): ``{"rule": name, "args": {...}}``,
    #: set by the rule; ``None`` for a verdict no rule returned (:func:`settle`'s).
    evidence: dict | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "label", Label(check_choice("label", self.label, VERDICTS)))

    def __str__(self) -> str:
        return f"{self.label}: {self.reason}"


def _interval_text(est: Estimate, level: float) -> str:
    lo, hi = est.interval(level)
    return f"{100 * level:.3g}% interval [{lo:.3g}, {hi:.3g}]"


def _z(level: float) -> float:
    """The two-sided normal quantile of ``level`` (what projections to another sample size use)."""
    from scipy.stats import norm

    return float(norm.ppf(0.5 + level / 2))


def _to_decide(est: Estimate, margin: float, n: int | None, level: float) -> str:
    """What would decide a ``not decided``: the sample size at which the interval, centred where it
    is, would clear the nearest edge it straddles (``margin`` away), the se scaling as 1/sqrt(n);
    ``n`` defaults to the pairs of a :class:`~attention_geometry.stats.PairedDifference`."""
    if n is None and getattr(est, "n", 0):
        n = int(est.n)
    if margin <= 0 or est.se == 0:
        return "no sample size decides it while the measured value sits on the edge"
    factor = (_z(level) * est.se / margin) ** 2
    if n is not None:
        needed = samples_to_decide(est.se, margin, check_int("n", n, low=1), level=level)
        if needed <= n:  # on the verge: the interval's edge is within rounding of the claim's
            return f"a few more samples (now {n:,}) would decide it if the value stays at {est.value:.3g}"
        return f"about {needed:,.0f} samples (now {n:,}) would decide it if the value stays at {est.value:.3g}"
    if factor < 1.5:  # the interval is on the verge: a few more samples would clear the edge
        return f"a few more samples would decide it if the value stays at {est.value:.3g}"
    return f"about {factor:.2g} times as many samples would decide it if the value stays at {est.value:.3g}"


def _could_see(est: Estimate, level: float, beyond: str) -> str:
    """The smallest departure the measurement could have seen (80 % power), for a ``reproduced``."""
    return f"it would have seen a departure of {detectable_effect(est.se, level=level):.2g} {beyond} (80 % power)"


def _alternative_value(alternative) -> float | None:
    if alternative is None:
        return None
    return float(alternative.value if isinstance(alternative, Estimate) else check_float("alternative", alternative))


def recompute(record: dict[str, Any]) -> Verdict:
    """The verdict of a stored ``record`` (``{"label", "reason", "evidence"}``: a claim record's
    ``verdict``) computed again by today's rule from its evidence (:mod:`.evidence`), so that a
    stored run's verdict never comes from a rule that has changed. A record without evidence
    comes back as stored (the caller says whether that may stand); evidence naming a rule that
    no longer exists raises :class:`~attention_geometry.evidence.UnknownRule`."""
    evidence = record.get("evidence")
    if not evidence:
        return Verdict(record["label"], record["reason"])
    args = {k: decode(v, recompute) for k, v in evidence.get("args", {}).items()}
    return rule_named(evidence["rule"])(**args)


@rule
def value_verdict(est: Estimate, claimed: float, *, rtol: float = 0.0, atol: float = 0.0,
                  level: float = 0.95, n: int | None = None, alternative: float | Estimate | None = None) -> Verdict:
    """A claimed value against a measured one.

    The claim is the band ``claimed ± tol`` with ``tol = atol + rtol * |claimed|``
    (a figure read by eye deserves a tolerance; an exact number none). The
    measurement is its ``level`` interval. Interval inside the band:
    ``reproduced`` (the reason gives the smallest departure beyond the band it could
    have seen); interval and band disjoint: ``differs``; otherwise ``not decided``
    (the reason gives the sample size that would decide it: ``n``, the number of
    samples behind ``est``, makes it absolute). ``alternative``: the value the claim's
    negation stands for (no effect, a competing mechanism); when it lies inside the
    band the band cannot tell the claim from its negation, and an interval inside the
    band is ``uninformative``, not ``reproduced``.
    """
    rtol = check_float("rtol", rtol, low=0.0)
    atol = check_float("atol", atol, low=0.0)
    tol = atol + rtol * abs(claimed)
    lo, hi = est.interval(level)
    band = (claimed - tol, claimed + tol)
    where = f"{_interval_text(est, level)} against the claim {claimed:.3g} ± {tol:.2g}"
    alt = _alternative_value(alternative)
    if band[0] <= lo and hi <= band[1]:
        if alt is not None and band[0] <= alt <= band[1]:
            return Verdict(Label.UNINFORMATIVE, f"{where}: inside, but so is the alternative {alt:.3g}: "
                                                 "the band cannot tell the claim from its negation")
        return Verdict(Label.REPRODUCED, f"{where}: inside; {_could_see(est, level, 'beyond the band')}")
    if hi < band[0] or lo > band[1]:
        return Verdict(Label.DIFFERS, f"{where}: outside")
    gap = abs(est.value - claimed)
    margin = abs(tol - gap)  # to fit inside the band (gap < tol) or to clear it (gap > tol)
    return Verdict(Label.NOT_DECIDED, f"{where}: overlapping; {_to_decide(est, margin, n, level)}")


@rule
def sign_verdict(est: Estimate, claimed_sign: int, *, level: float = 0.95, what: str = "the effect",
                 n: int | None = None) -> Verdict:
    """A claimed direction (``+1``: positive, ``-1``: negative) of an effect ``est``.

    ``reproduced`` when the whole ``level`` interval has the claimed sign,
    ``refuted`` when it has the opposite sign, ``not decided`` when it contains 0
    (the reason gives the sample size at which it would not: ``n``, the number of
    samples behind ``est``, makes it absolute).
    """
    if claimed_sign not in (1, -1):
        raise fail("claimed_sign", claimed_sign, "+1 or -1")
    lo, hi = est.interval(level)
    sign = "positive" if claimed_sign > 0 else "negative"
    text = f"{what} = {est.format()}, {_interval_text(est, level)}; claimed {sign}"
    if (lo > 0 and claimed_sign > 0) or (hi < 0 and claimed_sign < 0):
        return Verdict(Label.REPRODUCED, text)
    if (hi < 0 and claimed_sign > 0) or (lo > 0 and claimed_sign < 0):
        return Verdict(Label.REFUTED, text)
    return Verdict(Label.NOT_DECIDED, f"{text}; the interval contains 0; {_to_decide(est, abs(est.value), n, level)}")


@rule
def bound_verdict(est: Estimate, bound: float, *, at_most: bool, level: float = 0.95,
                  what: str = "the measurement", n: int | None = None,
                  alternative: float | Estimate | None = None) -> Verdict:
    """A claimed bound: ``est <= bound`` (``at_most=True``) or ``est >= bound``.

    ``reproduced`` when the whole interval satisfies it (the reason gives the
    smallest excess over the bound it could have seen), ``refuted`` when none of it
    does, ``not decided`` otherwise (with the sample size that would decide it).
    ``alternative``: what the claim's negation would measure (a competing profile, no
    effect); when it satisfies the bound too, the bound cannot tell the claim from its
    negation, and ``reproduced`` becomes ``uninformative``.
    """
    lo, hi = est.interval(level)
    rel = "at most" if at_most else "at least"
    text = f"{what} = {est.format()}, {_interval_text(est, level)}; claimed {rel} {bound:.3g}"
    holds = hi <= bound if at_most else lo >= bound
    fails = lo > bound if at_most else hi < bound
    alt = _alternative_value(alternative)
    if holds:
        if alt is not None and (alt <= bound if at_most else alt >= bound):
            return Verdict(Label.UNINFORMATIVE, f"{text}; holds, but so does the alternative {alt:.3g}: "
                                                 "the bound cannot tell the claim from its negation")
        return Verdict(Label.REPRODUCED, f"{text}; {_could_see(est, level, 'past the bound')}")
    if fails:
        return Verdict(Label.REFUTED, text)
    return Verdict(Label.NOT_DECIDED, f"{text}; the interval straddles the bound; "
                                      f"{_to_decide(est, abs(est.value - bound), n, level)}")


@rule
def floor_verdict(floor: float, claimed: float, *, atol: float = 0.0, what: str = "the model") -> Verdict:
    """A claimed value ``claimed ± atol`` against a ``floor`` that ``what`` cannot go
    below (an exact lower bound over its free parameters, e.g. the smallest
    peak-to-trough ratio of the scalar model over the residual weight).

    The whole band at or above the floor: ``reproduced`` (the model can produce
    the value); wholly below it: ``differs`` (no parameter of the model gives
    it); straddling: ``not decided``.
    """
    atol = check_float("atol", atol, low=0.0)
    lo, hi = claimed - atol, claimed + atol
    text = f"the claim {claimed:.3g} ± {atol:.2g} against {what}'s floor {floor:.3g}"
    if lo >= floor:
        return Verdict(Label.REPRODUCED, f"{text}: at or above it")
    if hi < floor:
        return Verdict(Label.DIFFERS, f"{text}: below it, out of the model's reach")
    return Verdict(Label.NOT_DECIDED, f"{text}: straddling it")


def _size_against(est: Estimate, closed_form: float, rtol: float, level: float) -> tuple[Label, Estimate, str]:
    """The size part of a closed-form claim: the ratio ``est / closed_form`` against ``1 ± rtol``."""
    ratio = Estimate(est.value / closed_form, est.se / abs(closed_form), est.df)
    lo, hi = ratio.interval(level)
    text = f"measured / closed form = {ratio.format()}, {level:.0%} interval [{lo:.3g}, {hi:.3g}] against 1 ± {rtol:.2g}"
    if 1 - rtol <= lo and hi <= 1 + rtol:
        return Label.REPRODUCED, ratio, text
    if hi < 1 - rtol or lo > 1 + rtol:
        return Label.DIFFERS, ratio, text
    return Label.NOT_DECIDED, ratio, text


@rule
def ratio_verdict(est: Estimate, closed_form: float, *, rtol: float, level: float = 0.95,
                  what: str = "the effect", note: str = "") -> Verdict:
    """The size of an effect ``est`` against a claimed closed form ``closed_form`` (finite, non-zero),
    its sign left to a row of its own (:func:`sign_verdict`): the ``level`` interval of
    ``est / closed_form`` inside ``1 ± rtol`` is ``reproduced`` (the reason names ``rtol``, the
    smallest relative miss it could have seen), disjoint from it ``differs``, overlapping ``not
    decided`` (with the samples that would decide it). ``note`` is appended to the reason."""
    if closed_form == 0 or not math.isfinite(closed_form):
        raise fail("closed_form", closed_form, "a finite non-zero number")
    rtol = check_float("rtol", rtol, low=0.0)
    label, ratio, text = _size_against(est, closed_form, rtol, level)
    text = f"{what} = {est.format()}; {text}"
    tail = f"; {note}" if note else ""
    if label == Label.REPRODUCED:
        return Verdict(label, f"{text}: size reproduced, a miss beyond ±{rtol:.2g} would have been seen{tail}")
    if label == Label.DIFFERS:
        return Verdict(label, f"{text}: off by a factor {ratio.value:.3g}{tail}")
    margin = min(abs(ratio.value - (1 - rtol)), abs(ratio.value - (1 + rtol)))
    return Verdict(label, f"{text}: the size is not decided; "
                          f"{_to_decide(ratio, margin, None, level)}{tail}")


@rule
def censored_verdict(lower: Estimate, claimed: float, *, censored: int, n: int, what: str, decide: str,
                     level: float = 0.95) -> Verdict:
    """A mean of which only a lower bound is measured: ``censored`` of ``n`` units never reached the
    event within the run and count at the most the run can show, so ``lower`` understates the mean.
    Against a claimed value ``claimed`` this decides nothing unless the bound already lies above it,
    which :func:`ratio_verdict` on the same estimate sees first: ``not decided``, the reason giving
    the bound and what would decide it (``decide``, e.g. a longer run)."""
    check_int("n", n, low=1)
    check_int("censored", censored, low=1, high=n)
    if not decide:
        raise fail("decide", decide, "a sentence saying what would decide it")
    lo, _ = lower.interval(level)
    return Verdict(Label.NOT_DECIDED, f"{what} at least {lower.format()} ({censored} of {n} never reach the level "
                                      f"within the run), {_interval_text(lower, level)} for the bound; claimed "
                                      f"{claimed:.3g}; {decide}")


@rule
def sign_and_size_verdict(est: Estimate, closed_form: float, *, rtol: float, level: float = 0.95,
                          what: str = "the effect", note: str = "") -> Verdict:
    """A claimed closed-form value ``closed_form`` (non-zero) of an effect measured as ``est``,
    judged as one claim; where a paper's sign and its closed form are separate claims, they get a
    row each, :func:`sign_verdict` and :func:`ratio_verdict`, and a stored run judged by this rule
    still gives both (:func:`part_evidence`).

    The sign is judged first (:func:`sign_verdict` with the closed form's sign):
    ``refuted`` or ``not decided`` end there. If the sign is reproduced, the size
    is judged on the ratio ``est / closed_form`` against the band ``1 ± rtol``:
    ratio interval inside the band: ``reproduced``; disjoint from it:
    ``differs`` ("sign reproduced, magnitude off by a factor ..."); overlapping:
    ``not decided``. ``note`` is appended to the reason (e.g. what the factor
    tends to, computed elsewhere).
    """
    if closed_form == 0 or not math.isfinite(closed_form):
        raise fail("closed_form", closed_form, "a finite non-zero number (its sign is the claim)")
    rtol = check_float("rtol", rtol, low=0.0)
    sign = sign_verdict(est, 1 if closed_form > 0 else -1, level=level, what=what)
    tail = f"; {note}" if note else ""
    if sign.label != Label.REPRODUCED:
        return Verdict(sign.label, sign.reason + tail)
    label, ratio, size = _size_against(est, closed_form, rtol, level)
    text = f"sign reproduced ({what} = {est.format()}); {size}"
    if label == Label.REPRODUCED:
        return Verdict(Label.REPRODUCED, f"{text}: size reproduced{tail}")
    if label == Label.DIFFERS:
        return Verdict(Label.DIFFERS, f"{text}: magnitude off by a factor {ratio.value:.3g}{tail}")
    return Verdict(Label.NOT_DECIDED, f"{text}: the size is not decided{tail}")


#: the rules that judge two claims at once, and how each part's rule reads the same measurement
_PARTS = {"sign_and_size_verdict": {
    "sign_verdict": lambda a: {"est": a["est"], "claimed_sign": 1 if decode(a["closed_form"], recompute) > 0 else -1,
                               **{k: a[k] for k in ("level", "what") if k in a}},
    "ratio_verdict": lambda a: {k: a[k] for k in ("est", "closed_form", "rtol", "level", "what", "note") if k in a}}}


def part_evidence(evidence: dict[str, Any], rule_name: str) -> dict[str, Any] | None:
    """The evidence of one part of a two-part rule's verdict (the sign or the size of a
    ``sign_and_size_verdict``) as the part's own rule ``rule_name`` reads it, so that a stored run
    that judged the two together gives each its row; ``None`` when ``evidence`` has no such part."""
    parts = _PARTS.get(evidence.get("rule", ""), {})
    if rule_name not in parts:
        return None
    return {"rule": rule_name, "args": parts[rule_name](evidence.get("args", {}))}


#: A rule's arguments that are policy, not measurement or claim: how wide a band the chapter
#: grants, at what level it decides, how many draws it asks for. Today's chapter sets them for
#: a stored run too.
POLICY_ARGUMENTS = ("tol", "rtol", "atol", "level", "min_draws")
#: Arguments that follow the policy but may hold a value of the run's settings (the side a
#: qualifying rule decides: a band, or a predicted value): kept as stored, dropped where today's
#: call leaves them at their default.
_FOLLOWS_POLICY = ("reference",)


def with_todays_policy(stored: dict[str, Any], today: dict[str, Any] | None) -> dict[str, Any]:
    """A stored run's evidence with the policy arguments (:data:`POLICY_ARGUMENTS`) of the
    evidence ``today``'s call gives the same claim, so that a tolerance or level the chapter has
    changed since the run judges the run's own measurements (its estimates, counts and claimed
    values stay as stored: they may depend on the run's settings). Applied rule by rule, through
    qualifying rules (``draws_verdict(verdict=...)``) while both name the same rules; a policy
    argument today's call leaves at its default is dropped, and so is a ``reference`` (the band
    a qualifying rule decides follows the inner rule's tolerance). Evidence whose rules differ
    from today's comes back as stored."""
    if not today or stored.get("rule") != today.get("rule"):
        return stored
    old, new = stored.get("args", {}), today.get("args", {})
    args = {k: v for k, v in old.items() if k not in POLICY_ARGUMENTS and (k not in _FOLLOWS_POLICY or k in new)}
    args.update({k: v for k, v in new.items() if k in POLICY_ARGUMENTS})
    inner_old, inner_new = old.get(QUALIFIED), new.get(QUALIFIED)
    if isinstance(inner_old, dict) and isinstance(inner_new, dict) and "__verdict__" in inner_old \
            and "__verdict__" in inner_new:
        nested_old, nested_new = inner_old["__verdict__"], inner_new["__verdict__"]
        if nested_old.get("evidence") and nested_new.get("evidence"):
            evidence = with_todays_policy(nested_old["evidence"], nested_new["evidence"])
            args[QUALIFIED] = {"__verdict__": {**nested_old, "evidence": evidence}}
    return {**stored, "args": args}


@rule
def hypothesis_verdict(p_value: float, *, claim_rejects_null: bool, alpha: float = 0.01,
                       what: str = "the null hypothesis") -> Verdict:
    """A claim about a null hypothesis judged by a test's ``p_value`` at level ``alpha``.

    ``claim_rejects_null=True`` (the paper says the null is false, e.g. "the
    scores are not a function of i - j"): ``p < alpha`` gives ``reproduced``,
    otherwise ``not decided`` (no rejection is no proof). ``claim_rejects_null=False``
    (the paper says the null holds): ``p < alpha`` gives ``refuted``, otherwise
    ``not decided``.
    """
    p = check_float("p_value", p_value, low=0.0, high=1.0)
    alpha = check_float("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    if not isinstance(claim_rejects_null, bool):
        raise fail("claim_rejects_null", claim_rejects_null, "True or False")
    rejected = p < alpha
    text = f"{what}: p = {p:.3g} ({'rejected' if rejected else 'not rejected'} at {alpha:g})"
    if rejected:
        return Verdict(Label.REPRODUCED if claim_rejects_null else Label.REFUTED, text)
    return Verdict(Label.NOT_DECIDED, text)


@rule
def property_verdict(holds: bool, evidence: str) -> Verdict:
    """An exact property checked by a computation (exact arithmetic, an identity to rounding).

    ``reproduced`` if it holds, ``refuted`` if the computation found a counterexample.
    """
    if not isinstance(holds, bool):
        holds = bool(holds)
    return Verdict(Label.REPRODUCED if holds else Label.REFUTED, evidence)


#: What a correlation compares, for :func:`ceiling_verdict`: a noiseless ``model`` with one
#: average (reference sqrt(r)), or two independent ``averages`` of the same size (reference r).
COMPARES = ("model", "averages")


@rule
def ceiling_verdict(est: Estimate, claimed: float, ceiling: Estimate, *, tol: float = 0.01,
                    level: float = 0.95, what: str = "the correlation", compares: str = "model",
                    n: int | None = None, paper_n: int | None = None,
                    alternative: Estimate | None = None) -> Verdict:
    r"""A claimed correlation (at least ``claimed - tol``) against a measured one, read
    against what the data's noise lets a perfect comparison reach.

    ``ceiling`` is the *reliability* :math:`r` of the measured average profile: the
    expected correlation between two independent averages of the same size, as
    :func:`~attention_geometry.jacobian_stats.noise_ceiling_estimate` returns it (the
    split-half Spearman stepped up to the full sample by Spearman--Brown). The
    reference it implies depends on what ``est`` compares (``compares``):

    * ``"model"`` (default): a noiseless model with one average. A model equal to the
      true profile correlates with it at about :math:`\sqrt r`, not :math:`r` (only the
      average carries noise): the reference is :math:`\sqrt r`
      (:func:`~attention_geometry.power.model_reference`);
    * ``"averages"``: two independent averages of this size (e.g. two configurations
      measured on their own sequences): the reference is :math:`r` itself.

    ``reproduced``: the whole ``level`` interval of ``est`` is at or above ``claimed -
    tol``. ``differs``: the whole interval is below it *and* below the reference's
    interval (the shortfall is the model's, not the noise's). ``not decided``: anything
    else; when the reference itself is below the claim, the reason gives the number of
    samples (``n``: those behind ``est``) at which the projected reference
    (:func:`~attention_geometry.power.projected_reliability`) would reach it.

    ``uninformative``: with ``n``, ``paper_n`` (the paper's own sample size) and ``alternative``
    (the correlation a plausible *other* profile -- one without the paper's mechanism
    -- reaches against the same average), the alternative projected to the paper's
    sample size, :math:`a\,\mathrm{ref}(r_\text{paper})/\mathrm{ref}(r)`, reaches the
    claim too: the paper's statistic would be near-certain for either profile, so it
    cannot discriminate. It replaces ``reproduced`` and ``not decided``, never
    ``differs``.
    """
    tol = check_float("tol", tol, low=0.0)
    check_choice("compares", compares, COMPARES)
    reference = model_reference(ceiling) if compares == "model" else ceiling
    lo, hi = est.interval(level)
    c_lo, _ = reference.interval(level)
    target = claimed - tol
    name = "sqrt(reliability)" if compares == "model" else "reliability"
    text = (f"{what} = {est.format()}, {_interval_text(est, level)}; noise ceiling (reliability) {ceiling.format()}, "
            f"reference {name} = {reference.format()}; claimed {claimed:.3g} (at least {target:.3g} counts)")
    if hi < target and hi < c_lo:
        return Verdict(Label.DIFFERS, f"{text}: below the claim and below what the noise allows")
    if paper_n is not None and alternative is not None and n is not None and ceiling.value > 0:
        r_paper = projected_reliability(min(ceiling.value, 1.0), check_int("n", n, low=1),
                                        check_int("paper_n", paper_n, low=1))
        ref_now = reference.value
        ref_paper = math.sqrt(r_paper) if compares == "model" else r_paper
        projected = alternative.value * ref_paper / ref_now if ref_now > 0 else math.nan
        if projected >= target:
            return Verdict(Label.UNINFORMATIVE, f"{text}; at the paper's {paper_n:,} samples the alternative "
                                                 f"({alternative.format()} here) would reach {projected:.3g}: "
                                                 "the claimed value cannot tell the two apart")
    if lo >= target:
        return Verdict(Label.REPRODUCED, text)
    if hi < target:
        need = target**2 if compares == "model" else target  # the reliability whose reference is the target
        more = (samples_for_reliability(min(ceiling.value, 1.0), check_int("n", n, low=1), need)
                if n is not None else math.inf)
        if math.isfinite(more):
            return Verdict(Label.NOT_DECIDED, f"{text}: below the claim, but so is the reference; the noise "
                                              f"would allow it from about {more:,.0f} samples (now {n:,})")
        return Verdict(Label.NOT_DECIDED, f"{text}: below the claim, but so is the reference")
    return Verdict(Label.NOT_DECIDED, f"{text}: the interval straddles the claim; "
                                      f"{_to_decide(est, abs(est.value - target), n, level)}")


@rule
def extreme_change_verdict(first: npt.ArrayLike, second: npt.ArrayLike, claimed_sign: int = 1, *,
                           extreme: str = "log max/min",
                           level: float = 0.95, what: str = "the change of the log peak-to-trough",
                           seed: int = 0) -> Verdict:
    """A claimed change of a profile's extreme between two independent sets of replicates
    (``first, second: (n, L)``): ``claimed_sign = +1``, the extreme grows from ``first`` to
    ``second`` ("deepens", for the log max/min ratio); ``-1``, it shrinks; ``0``, it
    differs either way.

    Each extreme is :func:`~attention_geometry.selection.split_half_extreme` (positions
    chosen on one half, measured on the other), so noise alone does not make the noisier
    profile look deeper; their difference (independent errors added in quadrature) is
    judged by :func:`sign_verdict`, or for ``0`` is ``reproduced`` when its interval
    excludes 0 and ``not decided`` otherwise. ``seed`` draws the halves, so that the
    verdict computed again from its evidence is the same.
    """
    from .selection import split_half_extreme
    from .stats import difference_estimate

    if claimed_sign not in (1, -1, 0):
        raise fail("claimed_sign", claimed_sign, "+1 (grows), -1 (shrinks) or 0 (differs)")
    rng = np.random.default_rng(check_int("seed", seed, low=0))  # the halves: the same at every recomputation
    a = split_half_extreme(first, extreme, rng=rng)
    b = split_half_extreme(second, extreme, rng=rng)
    d = difference_estimate(b, a)
    d = Estimate(d.value, d.se, min(a.df, b.df))
    text = f"{extreme}: {a.format()} then {b.format()} (split-half: chosen on one half, measured on the other)"
    if claimed_sign:
        v = sign_verdict(d, claimed_sign, level=level, what=what)
        return Verdict(v.label, f"{text}; {v.reason}")
    lo, hi = d.interval(level)
    where = f"{text}; {what} = {d.format()}, {_interval_text(d, level)}"
    if lo > 0 or hi < 0:
        return Verdict(Label.REPRODUCED, f"{where}: they differ")
    return Verdict(Label.NOT_DECIDED, f"{where}: the interval contains 0")


@rule
def proportion_verdict(successes: int, n: int, *, at_least: float, level: float = 0.95,
                       what: str = "the proportion") -> Verdict:
    """A claim made of every case ("every window is full rank") read as a proportion with a
    stated tolerance: at least ``at_least`` (``1 - tol``) of the ``n`` cases, judged by the
    exact (Clopper--Pearson) ``level`` interval of ``successes / n``: ``reproduced`` when it
    lies at or above ``at_least``, ``refuted`` when it lies below, ``not decided`` otherwise.
    Not a minimum over the cases, which turns from "all" to "not all" as ``n`` grows."""
    from .ratios import clopper_pearson

    at_least = check_float("at_least", at_least, low=0.0, high=1.0, high_open=True)
    lo, hi = clopper_pearson(successes, n, level=level)
    text = (f"{what} = {successes:,}/{n:,} = {successes / n:.3g}, exact {level:.0%} interval "
            f"[{lo:.3g}, {hi:.3g}]; claimed at least {at_least:.3g}")
    if lo >= at_least:  # the true proportion it would have seen below the tolerance (80 % power)
        seen = at_least - detectable_effect(math.sqrt(at_least * (1 - at_least) / n), level=level)
        return Verdict(Label.REPRODUCED, f"{text}; it would have seen a true proportion of {seen:.3g} "
                                         "(80 % power)")
    if hi < at_least:
        return Verdict(Label.REFUTED, text)
    p = successes / n
    se = math.sqrt(max(p * (1 - p), at_least * (1 - at_least)) / n)
    return Verdict(Label.NOT_DECIDED, f"{text}: the interval straddles it; "
                                      f"{_to_decide(Estimate(p, se), abs(p - at_least), n, level)}")


@rule
def range_verdict(est: Estimate, low: float, high: float, *, claimed_inside: bool = True, level: float = 0.95,
                  what: str = "the measurement", n: int | None = None) -> Verdict:
    """A claimed range: ``low <= est <= high`` (``claimed_inside``) or ``est`` outside it.

    Both sides count: "within a factor 10" on a log10 ratio is the range
    ``[-1, 1]``. With the claim *inside*: ``reproduced`` when the whole ``level``
    interval lies in the range, ``refuted`` when the interval misses the range,
    ``not decided`` otherwise; with the claim *outside* the two labels swap. A
    ``reproduced`` says the smallest departure past the nearer bound it could have
    seen, a ``not decided`` the sample size that would decide it (``n``: the samples
    behind ``est``).
    """
    low = check_float("low", low)
    high = check_float("high", high, low=low)
    lo, hi = est.interval(level)
    inside, outside = low <= lo and hi <= high, hi < low or lo > high
    claim = f"claimed {'inside' if claimed_inside else 'outside'} [{low:.3g}, {high:.3g}]"
    text = f"{what} = {est.format()}, {_interval_text(est, level)}; {claim}"
    margin = min(abs(est.value - low), abs(est.value - high))  # to the nearer bound
    if inside or outside:
        holds = inside == claimed_inside
        seen = f"; {_could_see(est, level, 'past the nearer bound')}" if holds else ""
        return Verdict(Label.REPRODUCED if holds else Label.REFUTED,
                       f"{text}: the interval lies {'inside' if inside else 'outside'}{seen}")
    return Verdict(Label.NOT_DECIDED, f"{text}; the interval straddles a bound; {_to_decide(est, margin, n, level)}")


@rule
def all_verdict(verdicts: dict[str, Verdict] | Sequence[Verdict], what: str = "every case") -> Verdict:
    """A claim for every case, from one verdict per case (``{name: Verdict}`` or a sequence).

    ``reproduced`` when every case reproduces it (an intersection of tests: each at its
    own level keeps the whole at that level); ``refuted`` when some case refutes it (or
    ``differs``): one counterexample refutes a claim about every case. A counterexample
    is looked for among ``k`` cases, so each case's refutation is checked again at the
    Bonferroni level ``1 - (1 - level) / k`` (its rule run again on its evidence,
    :mod:`.evidence`, when the rule takes a ``level``): noise alone then refutes no more
    often than one case would. ``not decided`` otherwise. The reason lists each case.
    """
    items = list(verdicts.items()) if isinstance(verdicts, dict) else list(enumerate(verdicts))
    if not items or not all(isinstance(v, Verdict) for _, v in items):
        raise fail("verdicts", verdicts, "a non-empty collection of Verdict")
    labels = [v.label for _, v in items]
    parts = "; ".join(f"{k}: {v.label} ({v.reason})" for k, v in items)
    if all(lab in _AGREES for lab in labels):
        return Verdict(Label.REPRODUCED, f"{what}: {parts}")
    against = [(k, _familywise(v, len(items))) for k, v in items if v.label in (Label.REFUTED, Label.DIFFERS)]
    held = [(k, v) for k, v in against if v.label in (Label.REFUTED, Label.DIFFERS)]
    if held:
        return Verdict(Label.REFUTED, f"{what}, not all: {parts}")
    if against:
        cases = ", ".join(str(k) for k, _ in against)
        return Verdict(Label.NOT_DECIDED, f"{what}, undecided: {parts}; {cases} against the claim at its own level "
                                          f"but not at the level of {len(items)} cases (Bonferroni)")
    return Verdict(Label.NOT_DECIDED, f"{what}, undecided: {parts}")


def _familywise(verdict: Verdict, k: int) -> Verdict:
    """``verdict`` judged again at the Bonferroni level for ``k`` cases, where its evidence
    names a rule that takes a ``level`` (otherwise as it is: an exact check has no level);
    through a rule that qualifies another's verdict, that verdict is judged again."""
    import inspect

    evidence = verdict.evidence
    if k == 1 or not evidence:
        return verdict
    rule_fn = rule_named(evidence["rule"])
    params = inspect.signature(rule_fn).parameters
    args = {name: decode(v, recompute) for name, v in evidence["args"].items()}
    if qualified_evidence(evidence) is not None:  # a rule that qualifies another's verdict (draws_verdict)
        return rule_fn(**{**args, QUALIFIED: _familywise(args[QUALIFIED], k)})
    if "level" not in params:
        return verdict
    level = float(args.get("level", params["level"].default))
    return rule_fn(**{**args, "level": 1 - (1 - level) / k})


@rule
def heterogeneity_verdict(estimates: dict[str, Estimate], *, tol: float = 0.0, level: float = 0.95,
                          what: str = "the effect") -> Verdict:
    """A claimed *mixed* effect: it differs in kind between cases (``{name: Estimate}``).

    Each case is classed by its ``level`` interval: *positive* (above ``tol``),
    *negative* (below ``-tol``), *null* (inside ``[-tol, tol]``, only when
    ``tol > 0``), or *undecided*. ``reproduced`` when two different decided
    classes occur; ``refuted`` when every case is decided and all fall in one
    class (a uniform effect); ``not decided`` otherwise.
    """
    tol = check_float("tol", tol, low=0.0)
    if not isinstance(estimates, dict) or not estimates:
        raise fail("estimates", estimates, "a non-empty {name: Estimate} mapping")
    classes = {}
    for name, est in estimates.items():
        lo, hi = est.interval(level)
        if lo > tol:
            classes[name] = "positive"
        elif hi < -tol:
            classes[name] = "negative"
        elif tol > 0 and -tol <= lo and hi <= tol:
            classes[name] = "null"
        else:
            classes[name] = "undecided"
    parts = "; ".join(f"{k}: {estimates[k].format()} ({c})" for k, c in classes.items())
    decided = {c for c in classes.values() if c != "undecided"}
    if len(decided) >= 2:
        return Verdict(Label.REPRODUCED, f"{what} differs in kind between cases: {parts}")
    if "undecided" not in classes.values():
        return Verdict(Label.REFUTED, f"{what} is the same in every case: {parts}")
    return Verdict(Label.NOT_DECIDED, f"{what}: {parts}")


@rule
def not_tested(reason: str) -> Verdict:
    """Nothing here measures the claim; ``reason`` says why and what it would take."""
    if not reason:
        raise fail("reason", reason, "a non-empty explanation")
    return Verdict(Label.NOT_TESTED, reason)


@rule
def values_verdict(estimates: Sequence[Estimate], claimed: Sequence[float], *, rtol: float = 0.0, atol: float = 0.0,
                   level: float = 0.95, labels: Sequence[str] | None = None) -> Verdict:
    """Several claimed values (e.g. one per layer of a table) against their estimates.

    Each pair is judged by :func:`value_verdict`; ``reproduced`` when every one
    is, ``differs`` when any one is, ``not decided`` otherwise. ``labels`` name
    the items in the reason (default: 1, 2, ...).
    """
    estimates, claimed = list(estimates), list(claimed)
    if len(estimates) != len(claimed) or not estimates:
        raise fail("claimed", claimed, f"{len(estimates)} values, one per estimate (at least one)")
    labels = list(labels) if labels is not None else [str(i + 1) for i in range(len(claimed))]
    each = [value_verdict(e, c, rtol=rtol, atol=atol, level=level) for e, c in zip(estimates, claimed)]
    tol = atol + rtol * max(abs(c) for c in claimed)
    text = "; ".join(f"{lab}: {e.format()} vs {c:.3g} ({v.label})" for lab, e, c, v in zip(labels, estimates, claimed,
                                                                                          each))
    text = f"{text} (tolerance ±{tol:.2g}, {level:.0%} intervals)"
    if all(v.label == Label.REPRODUCED for v in each):
        widest = max(estimates, key=lambda e: e.se)
        return Verdict(Label.REPRODUCED, f"{text}; {_could_see(widest, level, 'beyond the band on every item')}")
    if any(v.label == Label.DIFFERS for v in each):
        return Verdict(Label.DIFFERS, text)
    open_items = [(lab, e, c) for lab, e, c, v in zip(labels, estimates, claimed, each) if v.label == Label.NOT_DECIDED]
    lab, e, c = max(open_items, key=lambda t: t[1].se / max(abs(tol - abs(t[1].value - t[2])), 1e-300))
    return Verdict(Label.NOT_DECIDED, f"{text}; for {lab}, the hardest item, "
                                      f"{_to_decide(e, abs(tol - abs(e.value - c)), None, level)}")


@dataclass(frozen=True)
class Claim:
    """One row of a "Paper vs. this book" table and one record of the claims ledger.

    ``paper``: the bibliography key; ``where``: section, equation, figure or
    table; ``source``: one of :data:`SOURCES`; ``statement``: the claim as the
    source states it (MyST markup allowed); ``measured``: this book's number(s)
    with their uncertainty; ``settings``: what they were measured at;
    ``at_paper_settings``: True when those *are* the paper's settings (no
    stored paper-scale run is needed then); ``section``: the label of the
    chapter section that shows it; ``shortfall``: how the measurement falls
    short of the paper's setup even where the rest is the paper's (say, a model
    trained for a small part of the original's steps), or ``""``. A decisive
    verdict with a shortfall stands as ``not decided`` (:func:`settle`).
    ``stand_in``: what the measurement puts in place of the paper's setup even
    in the paper-scale run (a stand-in model, a smaller decoder swept over the
    claimed variable), or ``""``; a ``reproduced`` verdict then stands as
    ``reproduced in a stand-in``. ``claim_kind``: ``paper`` (the paper's claim)
    or ``reading`` (the book's reading, a control the paper never ran:
    :class:`ClaimKind`). ``assumption``: an assumption of the measurement that
    is not the paper's (an assumed sigma, float32, a one-head stand-in for an
    unspecified model), or ``""``; ``assumption_checked``: the evidence that it
    does not matter, or ``""``. A decisive verdict resting on an unchecked
    assumption stands as ``not decided`` (:func:`settle`).
    ``differs_from``: where another row quotes the same sentence of the paper,
    how this row's claim differs from that one (``""``: it does not; the ledger
    then requires the two verdicts to agree). ``measured_as``: the id of the row
    whose stored measurement this row reads, where a stored run judged it under
    another row (the size of a claim whose sign keeps the old id) and holds no
    row of this row's own id; ``""``: its own.
    """

    id: str
    paper: str
    where: str
    source: Source
    statement: str
    measured: str
    settings: str
    verdict: Verdict
    at_paper_settings: bool = False
    section: str = ""
    shortfall: str = ""
    stand_in: str = ""
    extra: dict = field(default_factory=dict)
    claim_kind: ClaimKind = ClaimKind.PAPER
    assumption: str = ""
    assumption_checked: str = ""
    differs_from: str = ""
    measured_as: str = ""

    def __post_init__(self):
        object.__setattr__(self, "source", Source(check_choice("source", self.source, SOURCES)))
        object.__setattr__(self, "claim_kind", ClaimKind(check_choice("claim_kind", self.claim_kind, CLAIM_KINDS)))
        if not self.id or any(c.isspace() for c in self.id):
            raise fail("id", self.id, "a non-empty identifier without spaces")
        if not isinstance(self.verdict, Verdict):
            raise fail("verdict", self.verdict, "a Verdict returned by a rule of attention_geometry.verdicts",
                       "has the wrong type", kind=ArgumentTypeError)

    def record(self) -> dict[str, Any]:
        """A JSON-able dict (the verdict as ``{"label", "reason"}``)."""
        return asdict(self)


class ClaimList(list):
    """The rows of one chapter's table about one paper: ``claims.add(id, where, statement,
    measured, settings, verdict, source="full text", ...)`` appends a :class:`Claim`
    with ``paper`` filled in and returns it."""

    def __init__(self, paper: str):
        super().__init__()
        if not paper:
            raise fail("paper", paper, "a bibliography key")
        self.paper = paper

    def add(self, id: str, where: str, statement: str, measured: str, settings: str, verdict: Verdict, *,
            source: str = Source.FULL_TEXT, **kw) -> Claim:
        c = Claim(id, self.paper, where, source, statement, measured, settings, verdict, **kw)
        self.append(c)
        return c


def verdict_words(verdict: Verdict, *, reproduced: str, otherwise: str, undecided: str) -> str:
    """The words a sentence about ``verdict`` may use: ``reproduced`` for a
    ``reproduced`` (or ``reproduced in a stand-in``) verdict, ``otherwise`` for
    ``differs`` or ``refuted``, ``undecided`` for ``not decided``,
    ``uninformative`` or ``not tested``, so that prose glued from
    it changes when a rerun changes the verdict (``verdict_words(v,
    reproduced="holds", otherwise="fails", undecided="is not resolved")``)."""
    if verdict.label not in VERDICTS:
        raise fail("verdict.label", verdict.label, ", ".join(VERDICTS))
    if verdict.label in _AGREES:
        return reproduced
    return otherwise if verdict.label in (Label.DIFFERS, Label.REFUTED) else undecided


def phrase(verdict: Verdict, source: str) -> str:
    """The verdict as a reader sees it: its label, whatever the claim's source (one of
    :data:`VERDICTS`, never a compound of a label and a source). The source has a column
    of its own in the tables and the ledger; a row resting on the AI-written summary is
    marked "(summary)" there, and its verdict judges the summary's reading."""
    check_choice("source", source, SOURCES)
    return str(verdict.label)


def settle(at_defaults: Verdict, at_paper: Verdict | None, *, defaults_are_paper: bool = False,
           shortfall: str = "", stand_in: str = "", assumption: str = "",
           assumption_checked: str = "", paper_claim: bool = False) -> Verdict:
    """The verdict that stands: at the paper's settings when measured there.

    ``at_paper``: the verdict of the stored paper-scale run (``None``: not run);
    ``defaults_are_paper``: the default settings already are the paper's. A
    ``reproduced``/``refuted``/``differs`` measured only at smaller settings is
    kept, with a reason that says so. ``shortfall`` (the :class:`Claim`'s, of
    the run that measured the verdict): what that run still lacks of the
    paper's setup; a decisive verdict then becomes ``not decided``, with the
    label it would have had in its reason. ``stand_in`` (the :class:`Claim`'s):
    what the measurement puts in place of the paper's setup; a ``reproduced``
    then stands as ``reproduced in a stand-in``, and a stored verdict is said to
    be measured "in the paper-scale run, with ...", not "at the paper's
    settings". ``assumption``: an assumption of the measurement that is not the
    paper's (``"an assumed sigma"``); a decisive verdict then becomes ``not
    decided`` unless ``assumption_checked`` gives the evidence that it does not
    matter (which the reason then quotes). Evidence gathered at the default sizes
    (``at_defaults`` decisive) checks the assumption of a stored verdict only when
    the two point the same way -- both agree with the claim, or both disagree:
    draws that agree with each other on the opposite verdict show that the stored
    one may rest on its draw, so it is then ``not decided``. ``paper_claim``: the row
    is a claim of the paper (not the book's reading); a ``differs`` or ``refuted``
    measured in a ``stand_in`` then says nothing of the paper's setup and is ``not
    decided`` too (``assumption_checked`` is about ``assumption``, not the stand-in).
    Every ``not decided`` made here says what would decide it.
    """
    if at_paper is not None:
        where = f"in the paper-scale run, with {stand_in}" if stand_in else "at the paper's settings"
        settled = Verdict(at_paper.label, f"{where}: {at_paper.reason}")
    elif defaults_are_paper or at_defaults.label not in _DECISIVE:
        settled = at_defaults
    else:
        settled = Verdict(at_defaults.label, f"at the book's smaller settings only: {at_defaults.reason}")
    if stand_in and settled.label == Label.REPRODUCED:
        reason = settled.reason if at_paper is not None else f"with {stand_in}: {settled.reason}"
        settled = Verdict(Label.REPRODUCED_IN_STAND_IN, reason)
    if shortfall and settled.label in _DECISIVE:
        return Verdict(Label.NOT_DECIDED, f"{settled.label} as measured, but {shortfall}; a run without that "
                                          f"shortfall would decide it ({settled.reason})")
    if paper_claim and stand_in and settled.label in (Label.DIFFERS, Label.REFUTED):
        return Verdict(Label.NOT_DECIDED, f"{settled.label} in the stand-in ({stand_in}), which is not the "
                                          f"paper's setup; the paper's own setup, or evidence that the stand-in "
                                          f"does not matter, would decide it ({settled.reason})")
    if assumption and settled.label in _DECISIVE:
        if not assumption_checked:
            return Verdict(Label.NOT_DECIDED, f"{settled.label} as measured, but it rests on {assumption}, "
                                              f"not the paper's; a measurement without it, or evidence that it "
                                              f"does not matter, would decide it ({settled.reason})")
        if (at_paper is not None and at_defaults.label in _DECISIVE
                and (at_defaults.label in _AGREES) != (settled.label in _AGREES)):
            return Verdict(Label.NOT_DECIDED, f"{settled.label} as measured, but it rests on {assumption}, and "
                                              f"at the default sizes the evidence points the other way, "
                                              f"{at_defaults.label} ({settled.reason})")
        return Verdict(settled.label, f"{settled.reason}; it rests on {assumption}, which does not matter: "
                                      f"{assumption_checked}")
    return settled


# ------------------------------------------------------------------------------------------
# The rules of single chapters, and the claims they build (moved here from the mathematics:
# the modules there return numbers; these decide what the numbers say about a claim).

__all__ += ["angle_verdict", "table_verdict", "after_norm_verdict", "layernorm_claims", "Effect",
            "component_effects", "synthesis_claims", "Quantity", "COMPONENT_QUANTITY", "LEDGER_QUANTITY",
            "QUANTITY_CHAPTERS", "COMPONENT_SOURCES", "cited_mismatches", "one_operator_claim",
            "learned_innate_claim", "effective_spike_claim"]


@rule
def angle_verdict(final_angles: npt.ArrayLike, last_step: int, claimed: float, claimed_step: int,
                  atol: float = 3.0, level: float = 0.95) -> Verdict:
    """A value the paper's Fig. 2b shows (``claimed`` degrees near ``claimed_step``) against
    a run's final angles (one per seed, ``final_angles``; their mean with its t interval),
    reached at step ``last_step`` (chapter 2: ``run.final["angle"]`` and ``run.steps[-1]`` of a
    :class:`~attention_geometry.majority.MajorityRun`).

    Compared with :func:`value_verdict` (tolerance
    ``atol`` degrees for a value read from a figure) only when the run reached at
    least 80 % of ``claimed_step``; otherwise ``not tested``: the angle keeps
    changing during training, so values at different step counts are not comparable.
    """
    from .stats import mean_estimate

    last = check_int("last_step", last_step, low=0)
    if last < 0.8 * claimed_step:
        return not_tested(f"the paper's value is at about {claimed_step:,} steps; this run stops at {last:,}")
    return value_verdict(mean_estimate(final_angles), claimed, atol=atol, level=level)


@rule
def table_verdict(estimates: Sequence[Estimate], claimed: Sequence[float], measured_n: tuple[int, int],
                  paper_n: tuple[int, int], *, atol: float = 5.0, labels: Sequence[str] | None = None) -> Verdict:
    """A row of Brody et al.'s Tables 1-3 (% unselectable per layer) against estimates (chapter 3).

    The fraction of unselectable keys grows steeply with the number of keys, so
    values are compared (:func:`values_verdict`,
    tolerance ``atol`` percentage points) only when the ranges of key counts
    ``measured_n`` and ``paper_n`` (``(low, high)`` each) overlap; otherwise
    ``not tested``.
    """
    (m_lo, m_hi), (p_lo, p_hi) = measured_n, paper_n
    if m_hi < p_lo or p_hi < m_lo:
        return not_tested(f"the paper's sets have {p_lo}-{p_hi} keys, these {m_lo}-{m_hi}: the fraction depends "
                          "steeply on the number of keys")
    return values_verdict(estimates, claimed, atol=atol, labels=labels)


@rule
def after_norm_verdict(normed_max: float, sphere_max: float, smallest_radius: float, *, eps: float) -> Verdict:
    r"""The claim "no key is unselectable after LayerNorm" (Brody et al., Table 2, "after"; chapter 3).

    ``normed_max``: the largest % of unselectable keys in any set and layer of
    the model's own normed states (with its :math:`\varepsilon`); ``sphere_max``:
    the same for the residual normed with :math:`\varepsilon = 0`;
    ``smallest_radius``: the smallest :math:`\lVert N_1(x)\rVert/\sqrt d` seen.

    * ``reproduced`` when no normed state is unselectable;
    * ``not decided`` when some are even on the sphere: every one of a finite
      set of distinct points on a sphere is a vertex of their hull (Cor.
      sel-cor-sphere), so these can only be ties (duplicates, or margins below
      the tolerance), which the claim does not cover and which are no
      counterexample;
    * ``not decided`` when they are unselectable only with :math:`\varepsilon`:
      the two sets differ only by the :math:`\varepsilon` term, which pulls the
      states with short centred residual inside the sphere (radius
      ``smallest_radius``). Its size depends on the residual norms, that is on
      the model and its training, so this measurement cannot decide the claim
      about the paper's trained model.
    """
    for name, v in [("normed_max", normed_max), ("sphere_max", sphere_max)]:
        check_float(name, v, low=0.0, high=100.0)
    check_float("smallest_radius", smallest_radius, low=0.0)
    if normed_max == 0:
        return Verdict("reproduced", "no normed state is unselectable in any set and layer")
    if sphere_max > 0:
        return Verdict("not decided", f"up to {sphere_max:.2f} % unselectable even with epsilon = 0, on the sphere, "
                                      "where distinct states are all vertices: ties (duplicates or margins below "
                                      "the tolerance), not a counterexample")
    return Verdict("not decided", f"up to {normed_max:.2f} % unselectable with epsilon = {eps:g}, none with epsilon = 0: "
                                  f"the epsilon term pulls states inside the sphere (smallest radius "
                                  f"{smallest_radius:.4f} of sqrt(d)); its size depends on the residual norms, "
                                  "so on the model's training")


_ABSTRACT = dict(paper="brody2023expressivity", where="abstract", source="abstract", at_paper_settings=True)


def layernorm_claims(check: dict, aff: dict, lowvar: dict, *, tol: float, eps_ref: float) -> list[Claim]:
    r"""The claims of Brody et al.'s abstract about LayerNorm's geometry, with their verdicts (chapter 1).

    ``check``: :func:`~attention_geometry.layernorm_checks.decomposition_errors` over all
    inputs; ``aff``: :func:`~attention_geometry.layernorm_checks.affine_checks`; ``lowvar``:
    :func:`~attention_geometry.layernorm_checks.low_variance_key` at :math:`\varepsilon` =
    ``eps_ref``. Each verdict is :func:`property_verdict` of "the largest error is at most
    ``tol``" (a violation would be of order 1).
    """
    import numpy as np

    n = len(check["mean"])
    mean_max, norm_max, err_max = (float(np.max(check[k])) for k in ("mean", "norm", "torch64"))
    settings = f"{n} inputs, d from 2 to {int(np.max(check['d']))}, float64, eps = 0"

    def holds(value, what):
        return property_verdict(value <= tol, f"{what} {value:.1e} {'<=' if value <= tol else '>'} {tol:.0e}")

    selected = aff["selected"] == 1.0
    return [
        Claim(id="brody-ln-projection", **_ABSTRACT,
              statement="(a) projection of the input vectors to a $d-1$ space that is orthogonal to the "
                        "$[1,1,\\dots,1]$ vector",
              measured=f"largest $\\lvert\\mu(y)\\rvert$ = {mean_max:.1e}", settings=settings,
              verdict=holds(mean_max, "largest |mu(y)|"), section="prop-ln-decomposition"),
        Claim(id="brody-ln-scaling", **_ABSTRACT,
              statement="(b) scaling of all vectors to the same norm of $\\sqrt d$",
              measured=f"largest relative deviation of the norm from $\\sqrt d$ = {norm_max:.1e}",
              settings=settings, verdict=holds(norm_max, "largest relative norm deviation"),
              section="prop-ln-decomposition"),
        Claim(id="brody-ln-two-components", **_ABSTRACT,
              statement="LayerNorm consists of two components, (a) and (b)",
              measured=f"$\\sqrt d\\,Px/\\lVert Px\\rVert$ against PyTorch: largest error {err_max:.1e}",
              settings=settings, verdict=holds(err_max, "largest entrywise error"),
              section="prop-ln-decomposition"),
        Claim(id="brody-ln-uniform-query", **_ABSTRACT,
              statement="(a) projection allows the attention mechanism to create an attention query that "
                        "attends to all keys equally",
              measured=f"spread of the scores of the query $\\mathbf 1/\\gamma$ with $\\gamma, \\beta$: "
                       f"{aff['uniform_spread']:.1e} (relative)",
              settings="random $\\gamma, \\beta$, eps = 0", verdict=holds(aff["uniform_spread"], "relative spread"),
              differs_from="chapter 2's row on the same sentence checks the query c·1 of the norm without gain "
                           "and bias; this one the query 1/γ of the norm with a learned gain and bias",
              section="prop-ln-affine"),
        Claim(id="brody-ln-selectable", **_ABSTRACT,
              statement="(b) scaling allows each key to potentially receive the highest attention",
              measured=f"outputs that are the unique maximiser of their own query: {aff['selected']:.1%}; "
                       f"with eps = {eps_ref:g} a key of variance eps/100 wins {lowvar['wins_eps']:.1%} "
                       f"of queries (without eps: {lowvar['wins_exact']:.1%})",
              settings="random $\\gamma, \\beta$, eps = 0; d = 3 pentagon with eps > 0",
              verdict=property_verdict(selected, f"{aff['selected']:.1%} of outputs selectable at eps = 0; "
                                                 "needs sigma^2 >> eps for every key when eps > 0"),
              section="prop-ln-affine"),
    ]


class Quantity(StrEnum):
    r"""What a measurement is of: the tag by which a row of chapter 9's component table and the
    claims of other chapters it cites are matched (:data:`COMPONENT_SOURCES`). A cited claim must
    measure its row's quantity, not a neighbour of it (the absolute :math:`\mu` mixes the growth of
    the norm into the collapse that the relative :math:`\mu` measures)."""

    INFLUENCE = "influence profile"  # the Jacobian (or (N^H)_{L,j}) profile over input positions: Chowdhury
    SCORE_RECENCY = "score recency"  # the ordering of one query's scores by key position: Kim et al.
    RELATIVE_COLLAPSE = "relative collapse"  # mu(X)/||X||, or its rate: Wu et al.
    ABSOLUTE_COLLAPSE = "absolute collapse"  # mu(X) itself, norm growth included
    UNSELECTABLE = "unselectable keys"  # keys that never win an argmax: Brody et al.


#: The quantity each row of the component table measures (:func:`component_effects`' keys).
COMPONENT_QUANTITY = {
    "mask-primacy": Quantity.INFLUENCE, "residual-spike": Quantity.INFLUENCE,
    "residual-collapse": Quantity.RELATIVE_COLLAPSE, "depth-spike": Quantity.INFLUENCE,
    "depth-collapse": Quantity.RELATIVE_COLLAPSE, "ln-recency": Quantity.SCORE_RECENCY,
    "norm-selectable": Quantity.UNSELECTABLE, "rope-recency": Quantity.SCORE_RECENCY,
    "window-field": Quantity.INFLUENCE,
}

#: The quantity each cited claim of another chapter measures (ledger id -> tag), read from the claim's
#: ``measured`` field in its chapter: ``skip-hurts``/``skip-ln`` are log10 mu(X_T)/mu(X_0) (absolute),
#: ``bound`` is mu of the attention output, ``exponential``/``local-helps`` the relative spread, ``rope``
#: Spearman's r between two influence profiles.
LEDGER_QUANTITY = {
    "power-formula": Quantity.INFLUENCE, "binomial": Quantity.INFLUENCE, "limit-shape": Quantity.INFLUENCE,
    "rope": Quantity.INFLUENCE, "local-u": Quantity.INFLUENCE,
    "theorem-1": Quantity.SCORE_RECENCY, "prop-1-no-recency": Quantity.SCORE_RECENCY,
    "fig-1-row-1": Quantity.SCORE_RECENCY, "fig-1-row-3": Quantity.SCORE_RECENCY,
    "nope-trained": Quantity.SCORE_RECENCY,
    "exponential": Quantity.RELATIVE_COLLAPSE, "local-helps": Quantity.RELATIVE_COLLAPSE,
    "ln-helps": Quantity.RELATIVE_COLLAPSE,
    "skip-hurts": Quantity.ABSOLUTE_COLLAPSE, "skip-ln": Quantity.ABSOLUTE_COLLAPSE,
    "bound": Quantity.ABSOLUTE_COLLAPSE,
    "sel-fig1d": Quantity.UNSELECTABLE, "sel-table2-after": Quantity.UNSELECTABLE,
}

#: The chapters whose claims may carry each tag (a check on :data:`LEDGER_QUANTITY`).
QUANTITY_CHAPTERS = {
    Quantity.INFLUENCE: ("cesaro", "jacobians"), Quantity.SCORE_RECENCY: ("recency",),
    Quantity.RELATIVE_COLLAPSE: ("rank_collapse", "layernorm_equilibria"),
    Quantity.ABSOLUTE_COLLAPSE: ("rank_collapse", "layernorm_equilibria"),
    Quantity.UNSELECTABLE: ("layernorm", "selectability"),
}

#: The claims of other chapters that measure each row's quantity in their own model (ledger ids). An
#: empty tuple: no other chapter measures it, and the row is measured in chapter 9 only (the residual's
#: effect on the relative collapse: Prop. 9.1; RoPE and the scores; the window's receptive field: its
#: proposition).
COMPONENT_SOURCES = {
    "mask-primacy": ("power-formula", "limit-shape"), "residual-spike": ("binomial", "limit-shape"),
    "residual-collapse": (), "depth-spike": ("binomial",), "depth-collapse": ("exponential",),
    "ln-recency": ("theorem-1", "prop-1-no-recency", "fig-1-row-3"),
    "norm-selectable": ("sel-fig1d", "sel-table2-after"), "rope-recency": (), "window-field": (),
}


def cited_mismatches() -> list[tuple[str, str, str | None, Quantity]]:
    """The cited claims whose quantity is not their row's: ``(row, claim id, its tag or None, the
    row's tag)``; empty when every citation of :data:`COMPONENT_SOURCES` measures its row's quantity."""
    return [(row, cid, LEDGER_QUANTITY.get(cid), COMPONENT_QUANTITY[row])
            for row, ids in COMPONENT_SOURCES.items() for cid in ids
            if LEDGER_QUANTITY.get(cid) != COMPONENT_QUANTITY[row]]


@dataclass(frozen=True)
class Effect:
    """One row of the component table: switching ``component`` changes ``quantity`` as ``effect`` says;
    ``change`` is the paired change from the baseline (a log-ratio for ratios), ``verdict`` the rule's;
    ``key`` names the row; ``measures`` is its :class:`Quantity` tag (:data:`COMPONENT_QUANTITY`)."""

    key: str
    component: str
    effect: str
    quantity: str
    change: Estimate
    verdict: object

    @property
    def measures(self) -> Quantity:
        return COMPONENT_QUANTITY[self.key]


def component_effects(results: dict, names: dict[str, str]) -> list[Effect]:
    """What each component does on this model, each as a paired change from the baseline with a
    sign rule. ``results``: :func:`~attention_geometry.synthesis.synthesis_experiment`;
    ``names``: role -> variant name for the roles ``baseline``, ``no_mask``, ``window``, ``no_norm``, ``rmsnorm``, ``no_residual``,
    ``deeper``, ``rope``."""
    import numpy as np

    from .synthesis import paired_change

    base = results[names["baseline"]]

    def change(role, key, log=False):
        return paired_change(results[names[role]], base, key, log=log)

    rows = []

    def add(key, component, effect, quantity, est, sign, what):
        rows.append(Effect(key, component, effect, quantity, est, sign_verdict(est, sign, what=what)))

    add("mask-primacy", "causal mask", "makes the first input dominate the attention path (primacy)",
        "log first/middle", change("no_mask", "first_mid", log=True), -1,
        "change of log(first/middle) when the mask is removed")
    add("residual-spike", "residual connection", "makes the last input dominate (the final spike, the (1 - alpha)^H path)",
        "log last/middle", change("no_residual", "last_mid", log=True), -1,
        "change of log(last/middle) without the residual")
    add("residual-collapse", "residual connection", "slows rank collapse (relative mu stays larger)",
        "mu(X)/||X||", change("no_residual", "mu_rel"), -1, "change of the relative mu without the residual")
    add("depth-spike", "depth", "shrinks the final spike (does not create it)", "log last/middle",
        change("deeper", "last_mid", log=True), -1, "change of log(last/middle) at twice the depth")
    add("depth-collapse", "depth", "collapses the tokens further", "mu(X)/||X||", change("deeper", "mu_rel"), -1,
        "change of the relative mu at twice the depth")
    add("ln-recency", "LayerNorm (vs none)", "recency of the last layer's scores (Kim et al.'s quantity)",
        "recency probability", change("no_norm", "rp"), -1, "change of the recency probability without a norm")
    add("norm-selectable", "LayerNorm (vs none)", "puts the keys' inputs on a sphere: fewer key sets with an "
        "unselectable key (Brody et al.'s scaling; per head W_K has a kernel)", "sets with an unselectable key", change("no_norm", "unselectable"), +1,
        "change of the fraction of key sets with an unselectable key without a norm")
    add("rope-recency", "RoPE", "recency of the last layer's scores", "recency probability", change("rope", "rp"), +1,
        "change of the recency probability with RoPE")
    window = results[names["window"]]
    rows.append(Effect("window-field", "sliding window", "no influence from beyond the receptive field (first input: none)",
                       "first/middle", window["first_mid"],
                       property_verdict(bool(np.all(window["samples"]["first_mid"] == 0.0)),
                                        f"first/middle is exactly 0 in {len(window['samples']['first_mid'])} "
                                        "of as many sequences")))
    return rows


#: What chapter 9's rows on the papers' abstracts are measured on, in place of the papers' models.
SYNTHESIS_STAND_IN = "the book's switchable decoder at random initialisation, in place of the papers' models"


def synthesis_claims(results: dict, names: dict[str, str], cesaro_rate_fit: Estimate, *,
                     alpha_pure: float = 1.0, settings: str) -> list[Claim]:
    """The papers' central claims, tested on the switchable decoder (chapter 9's verdict table)."""
    import numpy as np

    from .stats import mean_estimate
    from .synthesis import cesaro_collapse_rate

    base = results[names["baseline"]]
    first, last = (mean_estimate(np.log(base["samples"][k])) for k in ("first_mid", "last_mid"))
    ushape = all_verdict({"primacy": sign_verdict(first, +1, what="mean log(first/middle)"),
                            "recency": sign_verdict(last, +1, what="mean log(last/middle)")})
    rp = base["rp"]
    rp_gap = Estimate(rp.value - 0.5, rp.se, rp.df)
    rate = math.log(cesaro_collapse_rate(alpha_pure))
    return [
        Claim(id="chowdhury-abstract-ushape-full-decoder", paper="chowdhury2026lost", where="abstract",
              source="abstract",
              statement="the U-shape is already present at initialization, before any training or positional "
                        "encoding takes effect. It is an inherent geometric property of the causal decoder "
                        "with residual connections.",
              measured=f"mean log(first/middle) = {first.format()}, mean log(last/middle) = {last.format()}",
              settings=settings, verdict=ushape, section="sec-syn-switches", stand_in=SYNTHESIS_STAND_IN),
        Claim(id="kim-abstract-recency-full-decoder", paper="kim2025recency", where="abstract",
              source="abstract",
              statement="stacked causal self-attention layers combined with LayerNorm induce recency bias",
              measured=f"last-layer recency probability {rp.format()} (1/2: no bias)", settings=settings,
              verdict=sign_verdict(rp_gap, +1, what="recency probability - 1/2"), section="sec-syn-switches",
              stand_in=SYNTHESIS_STAND_IN,
              differs_from="chapter 6's rows on the abstract test the paper's own layer (W_Q = W_K = I, no MLP) "
                           "and its additions one at a time; this one a whole random-init decoder with random "
                           "projections, MLPs and a residual stream"),
        Claim(id="wu-abstract-pure-masked-collapse", paper="wu2024masks", where="abstract", source="abstract",
              statement="pure masked attention still suffers from exponential collapse to a rank one subspace",
              measured=f"uniform causal attention, identity values: fitted log-rate of the relative "
                       f"collapse {cesaro_rate_fit.format()} per layer (the proposition's asymptotic rate: "
                       f"log(1/2) = {rate:.4f})",
              settings="exact matrix powers",
              stand_in="the Cesàro model (uniform causal attention, identity values) in place of the paper's "
                       "random networks",
              differs_from="chapter 4's row on the same sentence measures random networks; this one the "
                           "uniform-attention limit, whose rate is known exactly",
              # exponential, not merely decaying: the fitted log-rate is the proposition's constant, not 0
              verdict=value_verdict(cesaro_rate_fit, rate, atol=0.01, alternative=0.0),
              section="sec-syn-wu-cesaro"),
    ]



def one_operator_claim(tied: dict, *, settings: str) -> Claim:
    """Chapter 9's reading "one operator, three effects", on the tied decoder (Kim et al.'s identity
    weights up to a rotation, no residual) with LayerNorm and without a norm: ``tied[norm]`` is
    :func:`~attention_geometry.synthesis.measure` with ``tied=True`` for ``norm`` in ``"layernorm"``,
    ``"none"``. Score recency with the norm, score primacy without (recency probability above, below
    1/2) and path primacy with both (log first/middle above 0), each over the weight draws."""
    parts, shown = {}, []
    for norm, side in (("layernorm", +1), ("none", -1)):
        rp, first = tied[norm]["rp"], tied[norm]["log_first_mid"]
        parts[f"scores, {norm}"] = draws_verdict(sign_verdict(Estimate(rp.value - 0.5, rp.se, rp.df), side,
                                                              what=f"RP - 1/2 ({norm})"), rp, reference=0.5)
        parts[f"paths, {norm}"] = draws_verdict(sign_verdict(first, +1, what=f"mean log(first/middle) ({norm})"),
                                                first)
        shown.append(f"{norm}: RP {rp.format()}, mean log(first/middle) {first.format()}")
    return Claim(id="syn-one-operator", paper="kim2025recency", where="Section 3, Figure 1 rows 1 and 3",
                 source=Source.FULL_TEXT, claim_kind=ClaimKind.READING,
                 statement="this book's reading: uniform causal averaging M gives path primacy (Chowdhury et al.), "
                           "score primacy without LayerNorm and score recency with it (Kim et al.'s rows 1 and 3)",
                 measured="; ".join(shown), settings=settings,
                 verdict=all_verdict(parts, what="the three effects, with and without the norm"),
                 section="sec-syn-operator")


def _over_seeds(est: Estimate) -> Any:
    """What :func:`draws_verdict` reads of an estimate over training seeds or weight draws: the
    :class:`~attention_geometry.draws.DrawEstimate` itself where it holds the draws' values, else the
    number of them (a plain estimate's degrees of freedom plus one; one without degrees of freedom:
    one)."""
    from .draws import DrawEstimate

    if isinstance(est, DrawEstimate) and est.draw_means:
        return est
    return 1 if est.df is None else int(est.df) + 1


#: The band around 1/2 within which chapter 9 reads a recency probability as no preference.
_LEARNED_BAND = 0.01


def learned_innate_claim(nope: Estimate | None, nope_before: Estimate | None, log_last_mid: Estimate, *,
                         settings: str) -> Claim:
    """Chapter 9's reading "score recency is learned, path recency is innate": the trained NoPE decoder's
    recency probability within 0.01 of 1/2 at initialisation (``nope_before``) and above 1/2 after training
    (``nope``, over its training seeds: chapter 6), and the random-init decoder's last input above the
    middle (``log_last_mid``, mean log(last/middle) over weight draws). ``None``: chapter 6's values
    are not available (not tested).

    The replicate of the trained decoder is its training seed: ``nope`` and ``nope_before`` are
    :class:`~attention_geometry.draws.DrawEstimate` over the seeds (each seed's value in
    ``draw_means``), and each part decides only through :func:`draws_verdict` (at least
    :data:`MIN_DRAWS` seeds on its side of 1/2, or of the band 1/2 ± 0.01). A plain estimate (a stored
    run that kept no per-seed values) counts as its degrees of freedom plus one seeds, without their
    sides."""
    path = draws_verdict(sign_verdict(log_last_mid, +1, what="mean log(last/middle) at birth"), log_last_mid)
    kw = dict(id="syn-learned-innate", paper="kim2025recency", where="Section 1", source=Source.FULL_TEXT,
              claim_kind=ClaimKind.READING, settings=settings, section="sec-syn-learned",
              statement="this book's reading: score recency is learned (absent at initialisation, present after "
                        "training), path recency is innate (present at initialisation)")
    if nope is None or nope_before is None:
        return Claim(**kw, measured=f"at birth: mean log(last/middle) {log_last_mid.format()}",
                     verdict=not_tested("chapter 6's trained NoPE decoder is not available in this run "
                                        "(its stored paper run or executed notebook)"))
    verdict = all_verdict({
        "scores at initialisation": draws_verdict(value_verdict(nope_before, 0.5, atol=_LEARNED_BAND),
                                                  _over_seeds(nope_before),
                                                  reference=(0.5 - _LEARNED_BAND, 0.5 + _LEARNED_BAND)),
        "scores after training": draws_verdict(sign_verdict(Estimate(nope.value - 0.5, nope.se, nope.df), +1,
                                                            what="trained RP - 1/2"), _over_seeds(nope),
                                               reference=0.5),
        "paths at initialisation": path}, what="the three")
    return Claim(**kw, measured=f"NoPE decoder RP {nope_before.format()} at initialisation, {nope.format()} after "
                                f"training; random-init decoder mean log(last/middle) {log_last_mid.format()}",
                 verdict=verdict)



def effective_spike_claim(predicted: Estimate, measured: Estimate, *, settings: str, tol: float = 0.5) -> Claim:
    """Chapter 9's reading "Chowdhury et al.'s alpha is an effective, norm-dependent weight": the change of
    log(last/middle) when the norm is removed, ``measured`` on the decoder, against ``predicted`` from the
    weights of the residual-only path, twice the log-ratio of prod(1 - alpha_eff) without and with the norm.
    Agreement within ``tol`` (a factor e^tol in the ratio; 0.5: the tolerance of chapter 9's rule of no
    change of the same quantity).

    Both are :class:`~attention_geometry.draws.DrawEstimate` over the same weight draws (draw ``i`` of
    both on the same weights): their gap is paired by draw
    (:func:`~attention_geometry.draws.draw_difference`), and the verdict decides only through
    :func:`draws_verdict` (at least :data:`MIN_DRAWS` draws on its side of the band ``(-tol, tol)``)."""
    from .draws import DrawEstimate, draw_difference

    for name, est in (("predicted", predicted), ("measured", measured)):
        if not isinstance(est, DrawEstimate):
            raise fail(name, est, "a DrawEstimate over the weight draws (over_draws), paired by draw with the other",
                       "has the wrong type", kind=ArgumentTypeError)
    gap = draw_difference(measured, predicted)
    return Claim(id="syn-effective-spike", paper="chowdhury2026lost", where="§3.1", source=Source.FULL_TEXT,
                 claim_kind=ClaimKind.READING,
                 statement="this book's reading: with pre-norm the residual weight alpha of "
                           "“(N^H)_{L,j} = (1-α)^H δ_{L,j} + …” is an effective, norm-dependent weight, and the "
                           "path weight prod(1 - alpha_eff) predicts the norm's effect on the last-token spike",
                 measured=f"change of log(last/middle) without the norm {measured.format()}, predicted "
                          f"{predicted.format()}, difference paired by draw {gap.format()}", settings=settings,
                 verdict=draws_verdict(value_verdict(gap, 0.0, atol=tol), gap, reference=(-tol, tol)),
                 differs_from="chapter 7's binomial row checks the quoted expansion itself, exactly, at a constant "
                              "alpha; this row tests whether an effective, norm-dependent alpha in it predicts a "
                              "measured spike in randomly initialised decoders",
                 section="sec-syn-effective")


# ------------------------------------------------------------------------------------------
# Randomly initialised models: the replicate is the weight draw (attention_geometry.draws).

__all__ += ["MIN_DRAWS", "draws_verdict", "draws_assumption"]

#: The fewest independent weight draws on which a verdict about a randomly initialised model may decide.
MIN_DRAWS = 8


@rule
def draws_verdict(verdict: Verdict, draws: Any, *, reference: float | tuple[float, float] = 0.0,
                  min_draws: int = MIN_DRAWS, level: float = 0.95) -> Verdict:
    """A verdict about a randomly initialised model, decisive only when it rests on at least
    ``min_draws`` independent weight draws and its sign is the same across them.

    ``verdict``: what a rule returned from an estimate over the draws
    (:func:`~attention_geometry.draws.over_draws`, whose interval includes the within-draw
    error). ``draws``: the :class:`~attention_geometry.draws.DrawEstimate` behind it, or a
    sequence of them (every part of an :func:`all_verdict`), or only the number of draws
    (an estimate that is itself a spread across draws, where no draw has a sign of its
    own). ``reference``: the value whose side the verdict decides, in the units of the
    draw means: 0 for a sign, the bound of :func:`bound_verdict`, 1/2 for a recency
    probability, ``(low, high)`` for a band or a range.

    A decisive verdict (``reproduced``, ``differs``, ``refuted``) becomes ``not decided``

    * when it rests on fewer than ``min_draws`` draws (one draw's interval is over its
      input sequences only: another draw of the weights can move the value by more);
    * when its sign is not stable across the draws: of the ``k`` draws, ``n`` have their
      mean on the estimate's side of ``reference``
      (:func:`~attention_geometry.draws.sign_stability`), and the exact
      (Clopper--Pearson) ``level`` interval of ``n/k`` does not lie above 1/2 -- the side
      is not shared by a majority beyond chance (at 8 draws: not by every draw). Not a
      requirement that all draws agree, which more draws would break ever more often.

    The reason says what would decide it. Otherwise the verdict stands, its reason
    saying over how many draws. Other verdicts pass unchanged.
    """
    from .draws import DrawEstimate, side_shared, sign_stability
    from .ratios import clopper_pearson

    if not isinstance(verdict, Verdict):
        raise fail("verdict", verdict, "a Verdict returned by a rule", "has the wrong type", kind=ArgumentTypeError)
    min_draws = check_int("min_draws", min_draws, low=2)
    if isinstance(draws, DrawEstimate):
        parts = [draws]
    elif isinstance(draws, Sequence) and draws and all(isinstance(d, DrawEstimate) for d in draws):
        parts = list(draws)
    else:
        parts = []
        count = check_int("draws", draws, low=1)
    if parts:
        count = min(p.n_draws for p in parts)
    if verdict.label not in _DECISIVE:
        return verdict
    needs = f"needs at least {min_draws} draws with a stable sign"
    if count < min_draws:
        word = "draw" if count == 1 else "draws"
        return Verdict(Label.NOT_DECIDED, f"{verdict.label} as measured, but on {count} weight {word} of a randomly "
                                          f"initialised model; {needs} ({verdict.reason})")
    sides = [sign_stability(p, reference) for p in parts]
    for same, k in sides:
        if not side_shared(same, k, level=level):
            lo, _ = clopper_pearson(same, k, level=level)
            more = next((n for n in range(k + 1) if side_shared(n, k, level=level)), None)
            would = (f"{more} of {k} would decide it: more sequences per draw, or more draws" if more is not None
                     else f"no share of {k} draws can decide it: more draws")
            return Verdict(Label.NOT_DECIDED, f"{verdict.label} as measured, but its sign is not stable across the "
                                              f"weight draws: {same} of {k} on its side (exact {level:.0%} interval "
                                              f"of the share from {lo:.2f}, not above 1/2); {would} ({verdict.reason})")
    if not parts:
        return Verdict(verdict.label, f"{verdict.reason}; over {count} weight draws")
    agree = ", ".join(f"{same}/{k}" for same, k in sides)
    return Verdict(verdict.label, f"{verdict.reason}; over {count} weight draws, on its side in {agree}")


def draws_assumption(paper_draws: int | None, at_defaults: Verdict, *, min_draws: int = MIN_DRAWS) -> dict[str, str]:
    """The :class:`Claim` fields ``assumption`` and ``assumption_checked`` of a row whose stored
    paper-scale run measured a randomly initialised model on ``paper_draws`` weight draws, fewer
    than ``min_draws`` (``None``: no stored run; then, or with enough draws, ``{}``).

    The assumption: that one draw (or those few) at the paper's scale stands for the
    distribution of the weights. It counts as checked only when ``at_defaults`` -- the same
    measurement at the default sizes, through :func:`draws_verdict` over at least ``min_draws``
    draws -- is decisive: there the draws agree with each other on the verdict's side, so that
    another draw would not flip it (the sentence names the verdict they agree on, which may
    differ from the stored run's where the size matters). Otherwise the check is empty, and
    :func:`settle` does not let a decisive stored verdict decide."""
    if paper_draws is None or check_int("paper_draws", paper_draws, low=1) >= min_draws:
        return {}
    what = "a single draw" if paper_draws == 1 else f"{paper_draws} draws"
    checked = ""
    if at_defaults.label in _DECISIVE:
        checked = (f"at the default sizes the weight draws agree with each other, on {at_defaults.label} "
                   f"({at_defaults.reason})")
    return {"assumption": f"{what} of the weights standing for all of them at the paper's scale",
            "assumption_checked": checked}
