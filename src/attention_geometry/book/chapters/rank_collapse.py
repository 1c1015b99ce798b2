"""Chapter 4, *Rank collapse under attention masks* (``book/04_rank_collapse.md``): its parameters."""

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..cost import CostModel
from ..params import ChapterParams, CorpusDir, Seed

__all__ = ["RankCollapseParams", "mask_family", "radius_table", "collapse_table", "temperature_table",
           "estimate_table", "spread_table", "holds_word", "holds_everywhere_words", "depth_words", "slack_words", "bound_fall_words", "skip_scale_words",
           "heads_words", "decades_words", "fraction_words", "late_rate_cell", "late_start_cell", "late_table",
           "late_roles", "late_roles_words", "docs_start_words", "docs_apart_words", "PUBLIC_GPT2",
           "public_table", "public_words"]


class RankCollapseParams(ChapterParams):
    """The parameters of chapter ``rank_collapse``; each default is the value in its ``parameters`` cell."""

    seed: Seed = 0
    corpus_dir: CorpusDir = None
    n_tokens: int = Field(128, ge=16, le=512, description="tokens per text window (N; the paper: 128)")
    d_model: int = Field(128, ge=8, le=576,
        description="width of the random networks; SmolLM2's 576-wide embeddings are projected to it (576: no "
                    "projection)")
    n_inputs: int = Field(16, ge=3, le=5000,
        description="text windows, each through its own random network (the paper: 3000)")
    n_layers: int = Field(64, ge=8, le=512, description="depth of the random attention networks (the paper: 128)")
    windows: list[Annotated[int, Field(ge=1, le=511)]] = Field([2, 8, 32], min_length=1, max_length=6,
        description="window widths w of the sliding-window masks (the middle one is the reference)")
    temperatures: list[Annotated[float, Field(gt=0.0, le=10000.0)]] = Field([0.015625, 64.0],
        min_length=1, max_length=4, description="d_QK / d values compared with d_QK = d (small: sharp)")
    n_heads: int = Field(8, ge=2, le=64, description="heads of the multi-head variant (must divide d_model)")
    paper_init_std: float = Field(0.02, ge=0.0001, le=1.0,
        description="weight standard deviation taken as the paper's initialisation (transformers' default "
                    "initializer_range)")
    device: Literal["cpu", "cuda"] = Field("cpu", description="where the dynamics run")

    @model_validator(mode="after")
    def _heads_fit_the_width(self):
        if self.d_model % self.n_heads:
            raise self.reject("n_heads", f"does not divide d_model = {self.d_model}", "a divisor of d_model")
        return self

    smoke = {"n_tokens": 32, "d_model": 32, "n_inputs": 3, "n_layers": 10, "windows": [2, 4],
             "temperatures": [0.015625, 64.0], "n_heads": 4}
    # the paper's sizes (N = 128, 128 layers, the embeddings' full width 576) on 128 of its
    # 3000 inputs: about 37 s of one CPU core per input (measured), 1.3 h; all 3000 would
    # take about 31 h on one core (a GPU run)
    presets = {
        "paper": {"n_tokens": 128, "n_layers": 128, "d_model": 576, "n_inputs": 128},
    }
    # the shares of the time at the defaults that scale with each group of parameters; the seconds: the
    # chapter at its defaults in the cold book build of a clean clone on 2026-12-03 (commit 11be456; two
    # kernels at a time on the 2-core reference machine, synthesis alone on both cores); a clean clone's
    # build starts the longest first by them
    cost = CostModel(43, (
        (0.8, {"n_inputs": 1, "n_layers": 1, "n_tokens": 2, "d_model": 1, "len:windows": 0.5,
               "len:temperatures": 0.5}),
    ))


# ---------------------------------------------------------------------------------------------
# What the chapter shows beside its mathematics: the masks it compares, its numbered tables and
# the words its sentences choose from the run's numbers (so that a rerun at other parameters
# reads true). The maths stays in attention_geometry.collapse; nothing here imports torch at
# module level (the tooling loads no torch).

def mask_family(n: int, windows) -> dict:
    """The chapter's masks for ``n`` tokens, labelled as in its tables: complete, causal, a
    two-sided and a one-sided window of each width in ``windows``, and two documents."""
    from ... import attention as mk

    out = {"complete": mk.make_mask("complete", n), "causal": mk.make_mask("causal", n)}
    out.update({f"window w={v}": mk.make_mask("window", n, v) for v in windows})
    out.update({f"one-sided w={v}": mk.make_mask("one_sided", n, v) for v in windows})
    return {**out, "two documents": mk.block_causal_mask(n, 2)}


def _num(x, fmt: str, missing: str = "none") -> str:
    """A table cell for a number that may be missing (NaN or None): the words ``missing``."""
    try:
        if x is None or x != x:
            return missing
    except TypeError:
        return missing
    return format(x, fmt)


def radius_table(radius: dict) -> str:
    """Markdown: the radius of every mask (no centre: the theorem does not apply)."""
    from ..tables import markdown_table

    return markdown_table(["mask", "radius r"], [(k, "no centre" if r is None else r) for k, r in radius.items()])


def collapse_table(summ: dict, radius: dict) -> str:
    """Markdown: each trajectory family summarised three ways (``collapse_summary`` per label)."""
    import numpy as np

    from ..tables import markdown_table

    rows = []
    for k, s in summ.items():
        rate = np.asarray(s["rate"], dtype=float)
        rate_cell = _num(float(np.nanmedian(rate)) if np.isfinite(rate).any() else None, ".3f", "too few layers to fit")
        r = radius.get(k.split(" + ")[0]) if k not in radius else radius[k]
        rows.append((k, "no centre" if r is None else r, f"{np.mean(s['depth']):.1f}", f"{np.mean(s['reached']):.2f}",
                     rate_cell, f"{np.median(s['points']):.0f}", f"{np.mean(s['mean_log_spread']):.3f}"))
    return markdown_table(["run", "radius r", "layers to 1e-4", "share reaching 1e-4", "fitted rate",
                           "layers in the fit", "mean log10 spread"], rows)


def temperature_table(ir: dict, effect: dict, taus) -> str:
    """Markdown: the mean initial rate per mask and ``d_QK/d``, and the paired effect of the
    sharpest temperature (rate at ``d_QK = d`` minus rate at the smallest ``d_QK``)."""
    import numpy as np

    from ..tables import markdown_table

    fams = list(effect)
    header = ["mask"] + [f"d_QK/d = {t:g}" for t in taus] + [f"effect of d_QK/d = {taus[0]:g}"]
    rows = [[k] + [f"{np.mean(ir[(k, t)]):.3f}" for t in taus] + [effect[k].format()] for k in fams]
    return markdown_table(header, rows)


def estimate_table(estimates: dict, header) -> str:
    """Markdown: one row per label with its estimate (value ± standard error)."""
    from ..tables import markdown_table

    return markdown_table(list(header), [(k, e.format()) for k, e in estimates.items()])


def spread_table(cmp: dict) -> str:
    """Markdown: the depth-averaged log10 spread of every run of the last section."""
    from ..tables import markdown_table

    return markdown_table(["run", "mean log10 spread"], [(k, f"{v:.3f}") for k, v in cmp.items()])


def holds_word(holds: bool) -> str:
    """``holds`` / ``fails``: whether a bound held on every run."""
    return "holds" if holds else "fails"


def holds_everywhere_words(holds: bool) -> str:
    """Whether a bound held on every run and layer, as a predicate."""
    return "holds on every run and every layer" if holds else "fails on at least one run and layer"


def depth_words(mean_depth: float, share: float) -> str:
    """How a relative spread reached 1e-4: after how many layers (``mean_depth``, the mean over
    runs of ``collapse_depth``) when every run did (``share`` = 1), else in which share of runs."""
    if share >= 1:
        return f"reaches 10⁻⁴ after {mean_depth:.1f} layers on average"
    if share <= 0:
        return "does not reach 10⁻⁴ within the depth in any run"
    return f"reaches 10⁻⁴ within the depth in a fraction {share:.2f} of the runs"


def slack_words(slack: float) -> str:
    """Where a bound lies against the measured value, ``slack`` decades apart (log10 bound/measured)."""
    if slack > 0:
        return f"lies {slack:.1f} decades above"
    if slack < 0:
        return f"lies {-slack:.1f} decades below"
    return "coincides with"


def bound_fall_words(fall_window: float, fall_complete: float) -> str:
    """How the window's bound falls over the depth against the complete mask's (factors, end/start)."""
    if fall_window == 1.0:
        return ("the window's bound does not fall at all: its δ_b^r is below float64's resolution of 1, and the "
                "guarantee is empty at this depth")
    if fall_window > fall_complete:
        return "the window's bound falls by less than the complete mask's"
    return "the window's bound falls at least as far as the complete mask's"


def skip_scale_words(log10_growth: float) -> str:
    """What ``X + A X W_V`` does to the scale, from the mean log10 growth of ``mu`` over the depth."""
    return "multiplies the scale by more than one per layer" if log10_growth > 0 else "does not grow the scale"


def heads_words(all_reached: bool) -> str:
    """Whether several heads collapsed every input within the depth."""
    return "collapse the tokens as well" if all_reached else "do not collapse every input within the depth"


def decades_words(diff: float, above: str = "above", below: str = "below", level: str = "level with",
                  tol: float = 0.05) -> str:
    """``"x decades above"`` / ``"x decades below"`` for a log10 difference ``diff``, and ``level``
    where it is within ``tol`` decades of 0 (what one decimal would show as 0.0)."""
    if diff >= tol:
        return f"{diff:.1f} decades {above}"
    if diff <= -tol:
        return f"{-diff:.1f} decades {below}"
    return level


def fraction_words(share: float, what: str) -> str:
    """``"in every run"`` / ``"in no run"`` / ``"in a fraction x of the runs"``, of ``what``."""
    if share >= 1:
        return f"{what} in every run"
    if share <= 0:
        return f"{what} in no run"
    return f"{what} in a fraction {share:.2f} of the runs"


def late_rate_cell(rate: float) -> str:
    """A table cell for a mask's late rate -ln|lambda_2| (``collapse.late_collapse_rate``)."""
    if rate == float("inf"):
        return "∞ (equal tokens after one uniform layer)"
    if rate == 0:
        return "0 (no collapse to one point)"
    return f"{rate:.4f}"


def late_start_cell(start, n_layers: int) -> str:
    """Where the late window begins (``start: (B,)``, ``collapse.late_window_start``; ``n_layers + 1``
    where it does not within the depth): the median over the inputs that reach it, and how many do."""
    import numpy as np

    start = np.asarray(start)
    inside = start <= n_layers
    if not inside.any():
        return "not within the depth"
    cell = f"{np.median(start[inside]):.0f}"
    return cell if inside.all() else f"{cell} ({inside.sum()} of {start.size} inputs)"


def late_table(rows: dict) -> str:
    """Markdown: per mask, ``|lambda_2|``, the predicted late rate, where the late window begins,
    the measured late rates (attention part and relative spread) and the onset. ``rows[mask]``:
    ``{"lam2", "rate", "start", "z", "x", "onset"}`` with the last three an Estimate or ``None``
    (no late window, or one too short to fit), ``start`` already a cell (:func:`late_start_cell`)."""
    from ..tables import markdown_table

    def est(e, start, digits=4):
        if e is not None:
            return e.format(digits)
        return "no late window" if start == "not within the depth" else "too few layers to fit"

    return markdown_table(
        ["mask", "|λ₂|", "predicted late rate −ln|λ₂|", "late window from layer", "late rate of μ(Z)",
         "late rate of μ(X)/‖X‖", "onset (layers)"],
        [(k, f"{r['lam2']:.4f}", late_rate_cell(r["rate"]), r["start"], est(r["z"], r["start"]),
          est(r["x"], r["start"], 3), "—" if r["onset"] is None else r["onset"].format(3)) for k, r in rows.items()])


def late_roles(rates: dict, starts: dict, n_layers: int, reference: str = "causal", rtol: float = 0.01) -> dict:
    """What each mask does to the collapse against ``reference``, from the late rates (``rates``,
    exact) and the median layer where each late window begins (``starts``, ``n_layers + 1`` where
    it does not within the depth): ``"at once"`` (infinite rate), ``"no collapse"`` (rate 0),
    ``"slows"`` (a late rate below the reference's by more than ``rtol``), ``"speeds"`` (above it),
    ``"delays"`` (the same late rate, a later start), ``"same"`` (the same rate and start),
    ``"same rate"`` (the same rate, and the reference's late window not within the depth)."""
    ref = rates[reference]
    roles = {}
    for k, r in rates.items():
        if k == reference:
            continue
        if r == float("inf"):
            roles[k] = "at once"
        elif r == 0:
            roles[k] = "no collapse"
        elif r < ref * (1 - rtol):
            roles[k] = "slows"
        elif r > ref * (1 + rtol):
            roles[k] = "speeds"
        else:
            roles[k] = ("same rate" if starts[reference] > n_layers else
                        "delays" if starts[k] > starts[reference] else "same")
    return roles


def late_roles_words(roles: dict, reference: str = "causal") -> str:
    """A sentence: against ``reference``, which masks slow the collapse, which only delay it, and
    what the rest do (``roles``: :func:`late_roles`)."""
    parts = []
    for role, text in [("slows", "slow the late collapse (a smaller late rate)"),
                       ("delays", f"only delay it (the {reference} mask's late rate, a later late window)"),
                       ("same", f"collapse like the {reference} mask"),
                       ("same rate", f"share the {reference} mask's late rate (neither late window lies within the "
                                     "depth, so a delay cannot be seen)"),
                       ("speeds", "speed up the late collapse"),
                       ("at once", "collapse in one uniform layer"),
                       ("no collapse", "do not collapse to one point")]:
        named = ", ".join(k for k, v in roles.items() if v == role)
        if named:
            parts.append(f"{text}: {named}")
    if not any(v == "slows" for v in roles.values()):
        parts.insert(0, "slow the late collapse: none")
    return f"Against the {reference} mask, the masks that " + "; those that ".join(parts)


def _over_inputs(v):
    """The mean ± standard error over the inputs whose late window holds a fit (each input is its own
    weight draw); ``None`` where fewer than two do."""
    import numpy as np

    from ... import draws

    ok = np.isfinite(v)
    return draws.over_draws(v[ok]) if ok.sum() >= 2 else None


def late_rate_rows(masks: dict, start: dict, fits: dict, n_layers: int, settings: str, claim) -> tuple[dict, list]:
    r"""Chapter 4's late rates measured against eq. ``rc-late-rate``: the table, the words and the two
    readings, ``late-rate`` (each mask's late rate is :math:`-\ln|\lambda_2|`) and ``late-rate-local``
    (paired by input against the causal mask: a smaller late rate where :math:`|\lambda_2|` is larger,
    the same rate and a later onset for a one-sided window).

    ``masks``: name -> mask; ``start``: name -> the first layer of each input's late window
    (``collapse.late_window_start``); ``fits``: ``{"z": ..., "x": ...}``, name ->
    ``collapse.fit_late_rate`` of :math:`\mu(Z)` and of the relative spread, per input. ``claim``: the
    chapter's ``Claim`` factory. Returns the glue values (the table and the Estimate of the causal
    mask's late rate of the relative spread included) and the two claims."""
    import numpy as np
    from IPython.display import Markdown

    from ... import collapse as cl, stats as st, verdicts as vd, words as wd

    late = {k: cl.late_collapse_rate(m) for k, m in masks.items()}
    fz, fx = fits["z"], fits["x"]
    zr, xr = {k: _over_inputs(fz[k]["rate"]) for k in masks}, {k: _over_inputs(fx[k]["rate"]) for k in masks}
    onset = {k: _over_inputs(fz[k]["onset"]) if 0 < late[k] < np.inf else None for k in masks}
    table = late_table({k: {"lam2": float(cl.uniform_attention_spectrum(m)[1]), "rate": late[k],
                            "start": late_start_cell(start[k], n_layers), "z": zr[k], "x": xr[k],
                            "onset": onset[k]} for k, m in masks.items()})
    roles = late_roles(late, {k: float(np.median(start[k])) for k in masks}, n_layers)
    band = {k: cl.LATE_RTOL * late[k] + cl.LATE_ATOL for k in masks}
    tested = {k: e for k, e in zr.items() if e is not None and np.isfinite(late[k])}
    unreached = ", ".join(k for k in masks if zr[k] is None)
    rate_claim = claim(
        id="late-rate", where="abstract (“the collapse rate”)", source="abstract", claim_kind="reading",
        section="sec-rc-late",
        statement="this book's derivation (eq. rc-late-rate): once the keys each query sees have converged, attention "
                  "is uniform on the mask, and μ of the attention part falls by |λ₂| of the mask's averaging matrix "
                  "per layer, a late rate −ln|λ₂|",
        measured="late rate of μ(Z) over each input's late window, against −ln|λ₂|: " + ", ".join(
            f"{k} {e.format(4)} vs {late[k]:.4f}" for k, e in tested.items())
                 + (f"; no late window of {cl.MIN_RATE_POINTS} layers within the depth: {unreached}" if unreached
                    else ""),
        settings=settings,
        verdict=vd.all_verdict({k: vd.draws_verdict(vd.value_verdict(e, late[k], rtol=cl.LATE_RTOL, atol=cl.LATE_ATOL),
                                                    e, reference=(late[k] - band[k], late[k] + band[k]))
                                for k, e in tested.items()}, what="every mask with a late window") if tested else
        vd.not_tested("no mask reaches its late window within the depth (more layers would)"))
    # the local masks against the causal one, paired by input: a smaller late rate, or the same one and a later onset
    paired, shown = {}, []
    for k, role in roles.items():
        if role not in ("slows", "delays", "same", "same rate", "speeds") or zr[k] is None or zr["causal"] is None:
            continue
        d_rate = _over_inputs(fz[k]["rate"] - fz["causal"]["rate"])
        if d_rate is None:
            continue
        shown.append(f"{k} ({role}): late rate minus causal {d_rate.format()}")
        if role in ("slows", "speeds"):
            paired[k] = vd.draws_verdict(vd.sign_verdict(d_rate, -1 if role == "slows" else +1,
                                                         what=f"late rate, {k} minus causal"), d_rate)
            continue
        b = band["causal"]
        paired[f"{k}, late rate"] = vd.draws_verdict(vd.value_verdict(d_rate, 0.0, atol=b), d_rate, reference=(-b, b))
        d_onset = _over_inputs(fz[k]["onset"] - fz["causal"]["onset"])
        if role == "delays" and d_onset is not None:
            shown[-1] += f", onset minus causal {d_onset.format()} layers"
            paired[f"{k}, onset"] = vd.draws_verdict(vd.sign_verdict(d_onset, +1, what=f"onset, {k} minus causal"),
                                                     d_onset)
    local_claim = claim(
        id="late-rate-local", where="abstract; theorem of the masked-attention section", source="abstract",
        claim_kind="reading", section="sec-rc-late",
        differs_from="the row 'bound' tests the proof and its bound; this row asks whether the measured late rate "
                     "differs between masks",
        statement="sparse or local masked attention can provably slow down the collapse rate (this book's reading "
                  "for the measured late rate: a local mask slows it where its |λ₂| is larger than the causal "
                  "mask's, and a one-sided window, whose λ₂ is the causal mask's 1/2, delays the collapse without "
                  "slowing it)",
        measured="paired over inputs against the causal mask (μ(Z) over the late window): " + "; ".join(shown),
        settings=settings,
        verdict=vd.all_verdict(paired, what="every local mask with a late window") if paired else
        vd.not_tested("no local mask reaches its late window within the depth (more layers would)"))
    x_causal = xr["causal"] or st.Estimate(float("nan"), float("nan"))
    values = {
        "rc-tab-late": Markdown(table), "rc-late-rate-causal": x_causal,  # the latter read by chapter 9
        "rc-late-roles-words": late_roles_words(roles), "rc-late-rtol": 100 * cl.LATE_RTOL,
        "rc-late-atol": cl.LATE_ATOL, "rc-late-floor": cl.LATE_FLOOR,
        "rc-late-x-words": "has no late window within the depth" if xr["causal"] is None else
        f"decays at {x_causal.format(3)} per layer in its late window, " + wd.trend_word(
            st.Estimate(x_causal.value - np.log(2), x_causal.se), above="faster than", below="slower than",
            neither="indistinguishable from") + f" ln 2 = {np.log(2):.4f}",
        "rc-late-verdict-words": vd.verdict_words(rate_claim.verdict, reproduced="equal", otherwise="do not all equal",
                                                  undecided="are not shown to equal"),
        "rc-late-local-words": vd.verdict_words(local_claim.verdict, reproduced="bear this out",
                                                otherwise="contradict it for at least one mask",
                                                undecided="do not decide it")}
    return values, [rate_claim, local_claim]


def docs_start_words(same: int, full: int, both: int, n: int) -> str:
    """How the windows whose two documents start with the same token (``same`` of ``n``) match those
    that collapse fully (``full``; ``both``: in both groups)."""
    if same == 0 and full == 0:
        return f"In none of the {n} windows do the two documents start with the same token, and none collapses fully"
    if same == full == both:
        return (f"In {same} of the {n} windows the two documents start with the same token, and exactly "
                + ("this window collapses fully" if same == 1 else "these windows collapse fully"))
    return (f"In {same} of the {n} windows the two documents start with the same token, and {full} collapse "
            f"fully, {both} of them among the former")


def docs_apart_words(same: int, label: str | None) -> str:
    """The two-document check again without the ``same`` windows whose documents start with the same
    token (``label``: its verdict there; ``None``: too few windows left)."""
    if same == 0:
        return "No window has two documents that start with the same token"
    if label is None:
        return (f"Without the {same} windows whose two documents start with the same token, too few windows are "
                "left to judge it")
    one = same == 1
    return (f"Without the {same} {'window' if one else 'windows'} whose two documents start with the same token, "
            f"which {'collapses' if one else 'collapse'} as under a connected mask, the same rule gives *{label}*")


# The public random-init model of the Fig. 2 section: GPT-2's configuration and initialisation
# (transformers' GPT2Config, initializer_range 0.02), deepened to GPT-2 XL's 48 blocks, at width
# 128 with GPT-2's head width 64 (GPT-2 small's 768 would take about 40 s of one core per draw
# instead of about 1 s), on 64 random token ids.
PUBLIC_GPT2 = {"n_layers": 48, "width": 128, "heads": 2, "seq_len": 64}


def public_table(est: dict) -> str:
    """Markdown: per (LayerNorm, precision), the log10 mu at the embeddings and at the output and
    the log10 relative mu at the output, each ``mean ± SE`` over the weight draws. ``est``: a
    dict ``{row label: (first, last, last_rel)}`` of estimates."""
    from ..tables import markdown_table

    return markdown_table(["model", "log10 μ, embeddings", "log10 μ, output", "log10 relative μ, output"],
                          [(k, *(e.format(3) for e in v)) for k, v in est.items()])


def public_words(collapses: bool) -> str:
    """Whether the public model without LayerNorm collapses within its depth, as the sentence's end."""
    if collapses:
        return "collapses within its depth, so the comparison can see the caption's claim"
    return ("does not collapse within its depth: its blocks add little to the residual stream, which keeps "
            "the embeddings' relative spread, so the comparison cannot see the caption's claim")
