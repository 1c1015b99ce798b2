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
``differs``
    a claimed *value* lies outside the measurement's interval (the effect may
    exist, its size is another);
``refuted``
    a claimed *direction* or *property* is contradicted beyond the uncertainty;
``not decided``
    the interval contains both outcomes: the evidence does not decide;
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
  measured profile and a model) read against the data's own noise ceiling;
* :func:`range_verdict` -- a claimed range (the value stays within ``[low, high]``, or outside it);
* :func:`all_verdict` -- a claim made for every case, or of several parts: one verdict per case;
* :func:`heterogeneity_verdict` -- a claimed *mixed* effect (helps in some cases, not in others);
* :func:`values_verdict` -- several claimed values at once (a row of a table),
  each by :func:`value_verdict`;
* :func:`not_tested`.

Two helpers turn a verdict into what a reader sees: :func:`phrase` words it
for the claim's source (a row resting on an AI-written *summary* agrees or
disagrees "with the summary's reading"), and :func:`settle` combines the
verdict at the book's default settings with the one at the paper's settings
(a stored paper-scale run): the latter decides when it exists.
"""

import math
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from ._checks import ArgumentTypeError, check_choice, check_float, fail
from .stats import Estimate

__all__ = [
    "Label",
    "Source",
    "VERDICTS",
    "SOURCES",
    "Verdict",
    "Claim",
    "ClaimList",
    "value_verdict",
    "sign_verdict",
    "bound_verdict",
    "floor_verdict",
    "sign_and_size_verdict",
    "hypothesis_verdict",
    "property_verdict",
    "ceiling_verdict",
    "range_verdict",
    "all_verdict",
    "heterogeneity_verdict",
    "not_tested",
    "values_verdict",
    "phrase",
    "verdict_words",
    "settle",
]

class Label(StrEnum):
    """A verdict's word. A member *is* its string (``Label.REPRODUCED == "reproduced"``),
    so records compare with strings and are written to JSON as the word."""

    REPRODUCED = "reproduced"
    DIFFERS = "differs"
    REFUTED = "refuted"
    NOT_DECIDED = "not decided"
    NOT_TESTED = "not tested"


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

#: The labels that decide a claim either way: a shortfall of the setup turns them undecided.
_DECISIVE = (Label.REPRODUCED, Label.DIFFERS, Label.REFUTED)


@dataclass(frozen=True)
class Verdict:
    """A verdict word (a :class:`Label`; a string from :data:`VERDICTS` is made one)
    and the one-line reason the rule gives."""

    label: Label
    reason: str

    def __post_init__(self):
        object.__setattr__(self, "label", Label(check_choice("label", self.label, VERDICTS)))

    def __str__(self) -> str:
        return f"{self.label}: {self.reason}"


def _interval_text(est: Estimate, level: float) -> str:
    lo, hi = est.interval(level)
    return f"{level:.0%} interval [{lo:.3g}, {hi:.3g}]"


def value_verdict(est: Estimate, claimed: float, *, rtol: float = 0.0, atol: float = 0.0,
                  level: float = 0.95) -> Verdict:
    """A claimed value against a measured one.

    The claim is the band ``claimed ± tol`` with ``tol = atol + rtol * |claimed|``
    (a figure read by eye deserves a tolerance; an exact number none). The
    measurement is its ``level`` interval. Interval inside the band:
    ``reproduced``; interval and band disjoint: ``differs``; otherwise ``not
    decided``.
    """
    rtol = check_float("rtol", rtol, low=0.0)
    atol = check_float("atol", atol, low=0.0)
    tol = atol + rtol * abs(claimed)
    lo, hi = est.interval(level)
    band = (claimed - tol, claimed + tol)
    where = f"{_interval_text(est, level)} against the claim {claimed:.3g} ± {tol:.2g}"
    if band[0] <= lo and hi <= band[1]:
        return Verdict(Label.REPRODUCED, f"{where}: inside")
    if hi < band[0] or lo > band[1]:
        return Verdict(Label.DIFFERS, f"{where}: outside")
    return Verdict(Label.NOT_DECIDED, f"{where}: overlapping")


def sign_verdict(est: Estimate, claimed_sign: int, *, level: float = 0.95, what: str = "the effect") -> Verdict:
    """A claimed direction (``+1``: positive, ``-1``: negative) of an effect ``est``.

    ``reproduced`` when the whole ``level`` interval has the claimed sign,
    ``refuted`` when it has the opposite sign, ``not decided`` when it contains 0.
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
    return Verdict(Label.NOT_DECIDED, f"{text}; the interval contains 0")


def bound_verdict(est: Estimate, bound: float, *, at_most: bool, level: float = 0.95,
                  what: str = "the measurement") -> Verdict:
    """A claimed bound: ``est <= bound`` (``at_most=True``) or ``est >= bound``.

    ``reproduced`` when the whole interval satisfies it, ``refuted`` when none of
    it does, ``not decided`` otherwise.
    """
    lo, hi = est.interval(level)
    rel = "at most" if at_most else "at least"
    text = f"{what} = {est.format()}, {_interval_text(est, level)}; claimed {rel} {bound:.3g}"
    holds = hi <= bound if at_most else lo >= bound
    fails = lo > bound if at_most else hi < bound
    if holds:
        return Verdict(Label.REPRODUCED, text)
    if fails:
        return Verdict(Label.REFUTED, text)
    return Verdict(Label.NOT_DECIDED, f"{text}; the interval straddles the bound")


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


def sign_and_size_verdict(est: Estimate, closed_form: float, *, rtol: float, level: float = 0.95,
                          what: str = "the effect", note: str = "") -> Verdict:
    """A claimed closed-form value ``closed_form`` (non-zero) of an effect measured as ``est``.

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
    ratio = Estimate(est.value / closed_form, est.se / abs(closed_form), est.df)
    lo, hi = ratio.interval(level)
    text = (f"sign reproduced ({what} = {est.format()}); measured / closed form = {ratio.format()}, "
            f"{level:.0%} interval [{lo:.3g}, {hi:.3g}] against 1 ± {rtol:.2g}")
    if 1 - rtol <= lo and hi <= 1 + rtol:
        return Verdict(Label.REPRODUCED, f"{text}: size reproduced{tail}")
    if hi < 1 - rtol or lo > 1 + rtol:
        return Verdict(Label.DIFFERS, f"{text}: magnitude off by a factor {ratio.value:.3g}{tail}")
    return Verdict(Label.NOT_DECIDED, f"{text}: the size is not decided{tail}")


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


def property_verdict(holds: bool, evidence: str) -> Verdict:
    """An exact property checked by a computation (exact arithmetic, an identity to rounding).

    ``reproduced`` if it holds, ``refuted`` if the computation found a counterexample.
    """
    if not isinstance(holds, bool):
        holds = bool(holds)
    return Verdict(Label.REPRODUCED if holds else Label.REFUTED, evidence)


def ceiling_verdict(est: Estimate, claimed: float, ceiling: Estimate, *, tol: float = 0.01,
                    level: float = 0.95, what: str = "the correlation") -> Verdict:
    """A claimed correlation (at least ``claimed - tol``) against a measured one, read
    against the *noise ceiling*: the correlation between two independent
    estimates of the same measured profile (what a perfect model could reach).

    ``reproduced``: the whole ``level`` interval of ``est`` is at or above
    ``claimed - tol``. ``differs``: the whole interval is below it *and* below
    the ceiling's interval (the shortfall is the model's, not the noise's).
    ``not decided``: anything else -- in particular a measurement below the claim
    whose ceiling is no higher (too few samples to reach the claimed value at all).
    """
    tol = check_float("tol", tol, low=0.0)
    lo, hi = est.interval(level)
    c_lo, c_hi = ceiling.interval(level)
    target = claimed - tol
    text = (f"{what} = {est.format()}, {_interval_text(est, level)}; noise ceiling {ceiling.format()}; "
            f"claimed {claimed:.3g} (at least {target:.3g} counts)")
    if lo >= target:
        return Verdict(Label.REPRODUCED, text)
    if hi < target and hi < c_lo:
        return Verdict(Label.DIFFERS, f"{text}: below the claim and below what the noise allows")
    if hi < target:
        return Verdict(Label.NOT_DECIDED, f"{text}: below the claim, but so is the noise ceiling")
    return Verdict(Label.NOT_DECIDED, f"{text}: the interval straddles the claim")
def range_verdict(est: Estimate, low: float, high: float, *, claimed_inside: bool = True, level: float = 0.95,
                  what: str = "the measurement") -> Verdict:
    """A claimed range: ``low <= est <= high`` (``claimed_inside``) or ``est`` outside it.

    Both sides count: "within a factor 10" on a log10 ratio is the range
    ``[-1, 1]``. With the claim *inside*: ``reproduced`` when the whole ``level``
    interval lies in the range, ``refuted`` when the interval misses the range,
    ``not decided`` otherwise; with the claim *outside* the two labels swap.
    """
    low = check_float("low", low)
    high = check_float("high", high, low=low)
    lo, hi = est.interval(level)
    inside, outside = low <= lo and hi <= high, hi < low or lo > high
    claim = f"claimed {'inside' if claimed_inside else 'outside'} [{low:.3g}, {high:.3g}]"
    text = f"{what} = {est.format()}, {_interval_text(est, level)}; {claim}"
    if inside or outside:
        holds = inside == claimed_inside
        return Verdict(Label.REPRODUCED if holds else Label.REFUTED,
                       f"{text}: the interval lies {'inside' if inside else 'outside'}")
    return Verdict(Label.NOT_DECIDED, f"{text}; the interval straddles a bound")


def all_verdict(verdicts, what: str = "every case") -> Verdict:
    """A claim for every case, from one verdict per case (``{name: Verdict}`` or a sequence).

    ``reproduced`` when every case reproduces it; ``refuted`` when some case
    refutes it (or ``differs``): one counterexample refutes a claim about every
    case; ``not decided`` otherwise. The reason lists each case.
    """
    items = list(verdicts.items()) if isinstance(verdicts, dict) else list(enumerate(verdicts))
    if not items or not all(isinstance(v, Verdict) for _, v in items):
        raise fail("verdicts", verdicts, "a non-empty collection of Verdict")
    labels = [v.label for _, v in items]
    parts = "; ".join(f"{k}: {v.label} ({v.reason})" for k, v in items)
    if all(lab == Label.REPRODUCED for lab in labels):
        return Verdict(Label.REPRODUCED, f"{what}: {parts}")
    if any(lab in (Label.REFUTED, Label.DIFFERS) for lab in labels):
        return Verdict(Label.REFUTED, f"{what}, not all: {parts}")
    return Verdict(Label.NOT_DECIDED, f"{what}, undecided: {parts}")


def heterogeneity_verdict(estimates, *, tol: float = 0.0, level: float = 0.95,
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


def not_tested(reason: str) -> Verdict:
    """Nothing here measures the claim; ``reason`` says why and what it would take."""
    if not reason:
        raise fail("reason", reason, "a non-empty explanation")
    return Verdict(Label.NOT_TESTED, reason)


def values_verdict(estimates, claimed, *, rtol: float = 0.0, atol: float = 0.0, level: float = 0.95,
                   labels=None) -> Verdict:
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
        return Verdict(Label.REPRODUCED, text)
    if any(v.label == Label.DIFFERS for v in each):
        return Verdict(Label.DIFFERS, text)
    return Verdict(Label.NOT_DECIDED, text)


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
    claimed variable), or ``""``; the verdict stands, and says so.
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

    def __post_init__(self):
        object.__setattr__(self, "source", Source(check_choice("source", self.source, SOURCES)))
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
    ``reproduced`` verdict, ``otherwise`` for ``differs`` or ``refuted``,
    ``undecided`` for ``not decided`` or ``not tested``, so that prose glued from
    it changes when a rerun changes the verdict (``verdict_words(v,
    reproduced="holds", otherwise="fails", undecided="is not resolved")``)."""
    if verdict.label not in VERDICTS:
        raise fail("verdict.label", verdict.label, ", ".join(VERDICTS))
    if verdict.label == Label.REPRODUCED:
        return reproduced
    return otherwise if verdict.label in (Label.DIFFERS, Label.REFUTED) else undecided


def phrase(verdict: Verdict, source: str) -> str:
    """The verdict as a reader sees it: for a row resting on the AI-written summary,
    agreement or disagreement *with the summary's reading*."""
    check_choice("source", source, SOURCES)
    if source != Source.SUMMARY:
        return str(verdict.label)
    return {
        Label.REPRODUCED: "agrees with the summary's reading",
        Label.DIFFERS: "disagrees with the summary's reading",
        Label.REFUTED: "disagrees with the summary's reading",
    }.get(verdict.label, str(verdict.label))


def settle(at_defaults: Verdict, at_paper: Verdict | None, *, defaults_are_paper: bool = False,
           shortfall: str = "", stand_in: str = "") -> Verdict:
    """The verdict that stands: at the paper's settings when measured there.

    ``at_paper``: the verdict of the stored paper-scale run (``None``: not run);
    ``defaults_are_paper``: the default settings already are the paper's. A
    ``reproduced``/``refuted``/``differs`` measured only at smaller settings is
    kept, with a reason that says so. ``shortfall`` (the :class:`Claim`'s, of
    the run that measured the verdict): what that run still lacks of the
    paper's setup; a decisive verdict then becomes ``not decided``, with the
    label it would have had in its reason. ``stand_in`` (the :class:`Claim`'s, of
    the stored run): what that run puts in place of the paper's setup; the
    stored verdict then stands as measured "in the paper-scale run, with ...",
    not "at the paper's settings".
    """
    if at_paper is not None:
        where = f"in the paper-scale run, with {stand_in}" if stand_in else "at the paper's settings"
        settled = Verdict(at_paper.label, f"{where}: {at_paper.reason}")
    elif defaults_are_paper or at_defaults.label in (Label.NOT_DECIDED, Label.NOT_TESTED):
        settled = at_defaults
    else:
        settled = Verdict(at_defaults.label, f"at the book's smaller settings only: {at_defaults.reason}")
    if shortfall and settled.label in _DECISIVE:
        return Verdict(Label.NOT_DECIDED, f"{settled.label} as measured, but {shortfall} ({settled.reason})")
    return settled
