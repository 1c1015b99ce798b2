"""Words: how the book phrases a measurement, chosen from its numbers.

The mathematics returns numbers; :mod:`.verdicts` decides what a measurement
says about a claim; this module turns numbers and records into the words a
sentence of a chapter needs, so that the prose changes when a rerun changes
the numbers. Every function here is pure (numbers or records in, a string
out) and tested on each of its outcomes.

* :func:`trend_word` -- one of three words, by where an estimate's interval lies;
* :func:`relative_words` -- "more than" / "fewer than" / "as many as" (chapter 3);
* :func:`share_words` -- how much of a gap a share closes (chapter 2);
* :func:`share_of_words` -- the same from the share's numerator and denominator, refusing
  a share word when the denominator's interval contains 0 (the share is then no number);
* :func:`differences_in_words` -- a set-up's differences from the original's (chapter 2);
* :func:`training_shortfall` -- what a training lacks of the original's (chapter 3);
* :func:`describe_corpus` -- one sentence on the text corpus (chapters 3 and 8).
"""

import math
from typing import Any, Mapping, Sequence

from .stats import Estimate

__all__ = [
    "trend_word",
    "relative_words",
    "share_words",
    "share_of_words",
    "differences_in_words",
    "training_shortfall",
    "describe_corpus",
]


def trend_word(est: Estimate, *, above: str, below: str, neither: str, reference: float = 0.0,
               level: float = 0.95) -> str:
    """``above`` when the whole ``level`` interval of ``est`` (an
    :class:`~attention_geometry.stats.Estimate`) lies above ``reference``, ``below``
    when it lies below, ``neither`` otherwise: the word a sentence about the estimate
    may use (``trend_word(slope, above="grows", below="falls", neither="does not
    change measurably")``)."""
    lo, hi = est.interval(level)
    if lo > reference:
        return above
    if hi < reference:
        return below
    return neither


def relative_words(est: Estimate, level: float = 0.95) -> str:
    """How a difference ``est`` (trained minus Gaussian) reads: ``"more than"`` when its
    ``level`` interval lies above 0, ``"fewer than"`` below, ``"as many as"`` when
    it contains 0 (to within the interval)."""
    return trend_word(est, above="more than", below="fewer than", neither="as many as", level=level)


def share_words(low: float, high: float, fair_beats_layernorm: bool | None = None, *,
                whole: tuple[float, float] | None = None) -> str:
    """Words for a share known to lie in ``[low, high]`` (e.g. the interval of
    :func:`~attention_geometry.majority.confound_share`).

    ``"more than entirely"`` (low > 1: the fair control even beats LayerNorm; when
    ``fair_beats_layernorm`` is given, only if it is true, i.e. the paired interval
    of LayerNorm minus the fair control lies wholly below 0, and ``"entirely"``
    otherwise: the two are then not told apart),
    ``"almost entirely"`` (low >= 0.8), ``"mostly"`` (low >= 0.5), ``"not at all"``
    (high <= 0.2), ``"partly"`` (low > 0.2, or high < 0.8), and ``"to an
    undetermined extent"`` when the interval reaches from 0.2 or below to 0.8 or
    above, or is not finite. ``whole``: the interval of the share's denominator (the
    whole gap); when it contains 0 the share is no number and no share word applies
    ("to an undetermined extent", whatever the share's own interval).
    """
    if whole is not None and whole[0] <= 0 <= whole[1]:
        return "to an undetermined extent"
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        return "to an undetermined extent"
    if low > 1:
        return "entirely" if fair_beats_layernorm is not None and not fair_beats_layernorm else "more than entirely"
    if low >= 0.8:
        return "almost entirely"
    if low >= 0.5:
        return "mostly"
    if high <= 0.2:
        return "not at all"
    if low > 0.2 or high < 0.8:
        return "partly"
    return "to an undetermined extent"


def share_of_words(part: Estimate, whole: Estimate, *, level: float = 0.95,
                   fair_beats_layernorm: bool | None = None) -> str:
    """:func:`share_words` for the share ``part / whole`` of two independent estimates, over its
    Fieller interval (:func:`~attention_geometry.ratios.fieller_interval`). When the whole's
    ``level`` interval contains 0 that interval is unbounded: the share is no number and
    no share word applies; the words say so ("to an undetermined extent: the whole is not
    distinguishable from 0")."""
    from .ratios import fieller_interval

    interval = fieller_interval(part, whole, level=level)
    if interval is None:
        return "to an undetermined extent: the whole is not distinguishable from 0"
    return share_words(*interval, fair_beats_layernorm=fair_beats_layernorm)


def differences_in_words(rows: Sequence[tuple]) -> str:
    """``[(field, ours, original), ...]`` (e.g. :func:`~attention_geometry.majority.run_differences`)
    as "steps 1,500 (the original: 14,000), ..."; no rows: "none: the original's settings"."""
    return ", ".join(f"{k} {ours:,} (the original: {orig:,})" for k, ours, orig in rows) if rows \
        else "none: the original's settings"


def training_shortfall(training: Any, original: Any = None) -> str:
    """What ``training`` (a :class:`~attention_geometry.models.tiny_decoder.TinyTraining`)
    lacks of the ``original``'s (default: ``TinyTraining()``, the original's settings),
    for a claim's ``shortfall``: ``""`` when it runs the original's steps, schedule,
    batch, length and learning rate."""
    if original is None:
        from .models.tiny_decoder import TinyTraining

        original = TinyTraining()
    lacks = [f"{getattr(training, n):,} of the original's {getattr(original, n):,} {what}"
             for n, what in [("steps", "steps"), ("seq_len", "tokens per sequence"), ("batch", "sequences per step")]
             if getattr(training, n) < getattr(original, n)]
    if training.lr != original.lr or training.schedule_steps != original.schedule_steps:
        lacks.append(f"learning rate {training.lr:g} decaying to 0 at step {training.schedule_steps:,} (the original: "
                     f"{original.lr:g} at step {original.schedule_steps:,})")
    return "the tiny decoders trained " + "; ".join(lacks) if lacks else ""


def describe_corpus(facts: Mapping) -> str:
    """One sentence that says what the text is, for the book, from
    :func:`~attention_geometry.models.corpus.corpus_facts`."""
    if facts["folder"] is None:
        return (
            f"English prose from the docstrings of {facts['n_modules']} Python {facts['python']} "
            f"standard-library modules (doctests and code removed): {facts['paragraphs']:,} "
            f"paragraphs, {facts['characters']:,} characters."
        )
    return (
        f"The text of the {facts['n_files']} .txt files in {facts['folder']}: {facts['paragraphs']:,} paragraphs, "
        f"{facts['characters']:,} characters."
    )
