"""Chapter 8, *Jacobians of real decoders* (``book/08_jacobians.md``): its parameters, and the words
and tables its prose glues (each comparing word computed from the numbers it stands beside)."""

import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from ..cost import CostModel
from ..params import ChapterParams, CorpusDir, Seed
from ..stored import STORED_RUN, THIS_IS_THE_RUN, stored_run_words

__all__ = ["JacobiansParams", "PAPER_SHAPE", "estimate_text", "fit_quality_words", "float32_words", "float64_words",
           "bracket_words", "gain_words", "monotone_words", "heads_flat_words", "heads_words", "late_rise_words", "paper_cost_words",
           "regime_words", "single_probe_words",
           "sizes_note", "table", "timing_words", "unbiased_words", "uniform_words",
           "fits_table", "fits_rows", "late_table", "pretrained_table", "estimator_table", "leading_number", "stored_figure", "stored_table_rows",
           "w_source_words", "prediction_words", "paper_shape_table", "shape_cells",
           "first_layer_words", "limit_words", "paper_gain_words", "profile_panels", "ends_misfit_words", "proxy_words",
           "embedding_meaning_words", "PROFILES_FILE", "stack_draws", "variance_shares", "variance_rows",
           "largest_level_words", "SETTING_WORDS", "verdict_count_words", "signed_root", "excess_words",
           "THIS_IS_THE_RUN", "STORED_RUN", "stored_run_words", "ptt_pretrained_words", "stored_ptt_words",
           "local_u_words", "stored_local_u_words", "stored_oos_words", "profiles_words", "variance_absent_words",
           "shape_words", "tolerance_words", "positions_scale_words", "pair_cosines", "alike_words",
           "markdown_table_rows", "figure_png", "stacked_png", "prediction_paper_glue"]


class JacobiansParams(ChapterParams):
    """The parameters of chapter ``jacobians``; each default is the value in its ``parameters`` cell."""

    seed: Seed = 0
    corpus_dir: CorpusDir = None
    n_layers: int = Field(24, ge=1, le=128, description="depth H of the Qwen2-shaped decoders (the paper: 24)")
    width: int = Field(64, ge=8, le=4096, description="width d of the Qwen2-shaped decoders (the paper: 896)")
    n_heads: int = Field(4, ge=1, le=64, description="query heads of the Qwen2-shaped decoders (the paper: 14)")
    n_kv_heads: int = Field(2, ge=1, le=64, description="key/value heads of the Qwen2-shaped decoders (the paper: 2)")
    seq_len: int = Field(256, ge=8, le=32_768,
        description="sequence length L of the Qwen2-shaped profiles (the paper: 2048)")
    init_stds: list[Annotated[float, Field(gt=0.0, le=1.0)]] = Field([0.02], min_length=1, max_length=4,
        description="initialisation scales sigma of the Qwen2-shaped decoders (transformers' default: 0.02; the "
                    "paper gives no value)")
    width_standin: bool = Field(True,
        description="add the stand-in sigma = 0.02 sqrt(896/d) (768 for GPT-2), which gives a width-d decoder the "
                    "paper's score spread")
    gpt2_layers: int = Field(12, ge=1, le=128, description="depth of the GPT-2-shaped decoder (GPT-2 small: 12)")
    gpt2_width: int = Field(64, ge=8, le=4096, description="width of the GPT-2-shaped decoder (GPT-2 small: 768)")
    gpt2_heads: int = Field(4, ge=1, le=64, description="heads of the GPT-2-shaped decoder (GPT-2 small: 12)")
    gpt2_seq_len: int = Field(256, ge=8, le=1024,
        description="sequence length of the GPT-2-shaped profiles (GPT-2: 1024)")
    gpt2_sequences: int = Field(16, ge=4, le=10_000, description="sequences of the GPT-2-shaped profiles")
    gpt2_probes: int = Field(2, ge=1, le=4096, description="orthogonal probes per sequence of the GPT-2-shaped profiles")
    n_sequences: int = Field(16, ge=4, le=10_000, description="sequences per random-init profile (the paper: 200)")
    probes: int = Field(2, ge=1, le=4096, description="orthogonal probes per sequence (the estimator's k)")
    batch_size: int = Field(16, ge=1, le=1024,
        description="sequences per forward/backward pass (memory against speed)")
    n_boot: int = Field(40, ge=10, le=100_000, description="bootstrap replicates over sequences for every interval")
    mc_draws: int = Field(4000, ge=10, le=1_000_000,
        description="Monte Carlo draws of the linear model (derived expectation check)")
    est_layers: int = Field(4, ge=1, le=24, description="depth of the small decoder of the estimator study")
    est_width: int = Field(32, ge=8, le=256, description="width of the small decoder of the estimator study")
    est_seq_len: int = Field(64, ge=8, le=1024, description="sequence length of the estimator study")
    est_k: int = Field(8, ge=1, le=256, description="probes per orthogonal estimate in the estimator study")
    n_probe_draws: int = Field(200, ge=8, le=100_000,
        description="Gaussian probes / orthogonal draws in the estimator study")
    pathway_widths: list[Annotated[int, Field(ge=8, le=4096)]] = Field([16, 32, 64, 128], min_length=1, max_length=8,
        description="widths of the score-pathway study (multiples of 8; at least 3 for a slope)")
    pathway_layers: int = Field(4, ge=1, le=48, description="depth of the score-pathway study")
    pathway_seq_len: int = Field(64, ge=8, le=4096, description="sequence length of the score-pathway study")
    heads_list: list[Annotated[int, Field(ge=1, le=64)]] = Field([1, 2, 4, 8], min_length=1, max_length=8,
        description="head counts of the heads study (each dividing heads_width; at least 3)")
    heads_width: int = Field(32, ge=8, le=1024, description="width of the heads study")
    heads_layers: int = Field(4, ge=1, le=48, description="depth of the heads study")
    heads_seq_len: int = Field(32, ge=4, le=1024, description="sequence length of the heads study")
    n_inits: int = Field(8, ge=3, le=1000, description="initialisations per head count (verdicts decide on 8 or more)")
    pretrained_sequences: int = Field(16, ge=4, le=1024,
        description="text windows fed to SmolLM2 and its random-init twin")
    pretrained_seq_len: int = Field(48, ge=16, le=8192, description="tokens per window for SmolLM2 (the paper: 2048)")
    pretrained_probes: int = Field(1, ge=1, le=1024,
        description="orthogonal probes per window for SmolLM2 and its twin")
    chunk_len: int = Field(12, ge=4, le=4096, description="tokens per chunk of the chunked windows (the paper: 300)")
    toy_layers: int = Field(4, ge=1, le=48, description="depth of the toy decoder trained for the paper's Fig. 3")
    toy_width: int = Field(64, ge=8, le=1024, description="width of the toy decoder (a multiple of 8)")
    toy_seq_len: int = Field(64, ge=8, le=4096, description="bytes per training and held-out window of the toy")
    toy_steps: int = Field(100, ge=1, le=100_000, description="training steps of the toy (the paper: 100)")
    toy_eval_sequences: int = Field(8, ge=2, le=1024,
        description="held-out windows measured during training (the paper: 10)")
    device: Literal["cpu", "cuda"] = Field("cpu", description="where the decoders run")
    n_draws: int = Field(8, ge=2, le=1024,
        description="independent weight draws of every random-init decoder (and of SmolLM2's twin), the sequences "
                    "spread over them; verdicts decide on 8 or more")

    @model_validator(mode="after")
    def _heads_fit_the_widths(self):
        # the Qwen2-shaped decoders: whole heads, each of even width (the rotary embedding turns pairs of
        # coordinates), and whole groups of query heads per key/value head
        if self.width % (2 * self.n_heads):
            raise self.reject("width", f"is not a multiple of 2 n_heads = {2 * self.n_heads}", "a multiple of 2 n_heads")
        if self.n_heads % self.n_kv_heads:
            raise self.reject("n_heads", f"is not a multiple of n_kv_heads = {self.n_kv_heads}",
                              "a multiple of n_kv_heads")
        if self.gpt2_width % self.gpt2_heads:
            raise self.reject("gpt2_width", f"is not a multiple of gpt2_heads = {self.gpt2_heads}",
                              "a multiple of gpt2_heads")
        if any(self.heads_width % h for h in self.heads_list):
            raise self.reject("heads_list", "holds a head count that does not divide heads_width = "
                              f"{self.heads_width}", "head counts that divide heads_width")
        if any(w % 8 for w in self.pathway_widths):
            raise self.reject("pathway_widths", "holds a width that is not a multiple of 8", "multiples of 8")
        if self.toy_width % 8:
            raise self.reject("toy_width", "is not a multiple of 8", "a multiple of 8")
        # the sequences are spread over the draws, and the draws left in when one is left out (the
        # jackknife over draws) keep 4 sequences for the noise ceiling and the late minimum
        if self.n_draws > min(self.n_sequences, self.pretrained_sequences, self.gpt2_sequences):
            raise self.reject("n_draws", "is more than n_sequences, gpt2_sequences or pretrained_sequences",
                              "at most min(n_sequences, gpt2_sequences, pretrained_sequences)")
        for field in ("n_sequences", "gpt2_sequences"):
            n = getattr(self, field)
            if n - -(-n // self.n_draws) < 4:
                raise self.reject("n_draws", f"leaves fewer than 4 of {field} = {n} when one draw is left out",
                                  "a number of draws that leaves 4 sequences when one is left out")
        return self

    # smoke: width = 256 is above a quarter of the paper's 896, so its score spread sigma_0^2 d at
    # sigma_0 = 0.02 is no longer "far" below the paper's, as the defaults' d = 64 is
    # (tests/test_chapters.py); at 16 tokens and 2 layers the width costs little
    smoke = {"n_layers": 2, "width": 256, "n_heads": 2, "n_kv_heads": 1, "seq_len": 16, "gpt2_layers": 2,
             "gpt2_width": 16, "gpt2_heads": 2, "gpt2_seq_len": 16, "n_sequences": 8, "gpt2_sequences": 8, "gpt2_probes": 1, "probes": 1,
             "batch_size": 4, "n_boot": 10, "mc_draws": 50, "est_layers": 1, "est_width": 8,
             "est_seq_len": 8, "est_k": 2, "n_probe_draws": 8, "pathway_widths": [16, 32, 64],
             "pathway_layers": 1, "pathway_seq_len": 8, "heads_list": [1, 2, 4], "heads_width": 16,
             "heads_layers": 1, "heads_seq_len": 8, "n_inits": 3, "pretrained_sequences": 4,
             "pretrained_seq_len": 24, "pretrained_probes": 1, "chunk_len": 8, "toy_layers": 1,
             "toy_width": 16, "toy_seq_len": 16, "toy_steps": 4, "toy_eval_sequences": 2, "n_draws": 2}
    # The paper's shapes (Qwen2-0.5B; GPT-2 small), sigma = 0.02: 200 sequences (the paper's number) x
    # 2 orthogonal probes, spread over 8 weight draws (25 each), RoPE on and off with the same inputs
    # and probes, checkpointed per sequence (batch_size 1). On the 2-core reference machine (both
    # cores, one forward pass and batched cotangents per sequence) the 2 x 200 profiles with and without
    # RoPE took about 15,300 s in three parts (2026-12-05), about 38 s per profile of 2 probes; the 200
    # with embeddings of RMS 1 take about as long again per profile, then the residual streams, the L/2
    # profiles of the out-of-sample test and the rest of the chapter (1.5 h in the stored run of 16
    # sequences x 4 probes): a run across sessions, resumed from committed checkpoints. GPT-2 and
    # SmolLM2 keep the sizes of that run (16 sequences; 4 and 2 probes).
    presets = {
        "paper": {"n_layers": 24, "width": 896, "n_heads": 14, "n_kv_heads": 2, "seq_len": 2048,
                  "init_stds": [0.02], "width_standin": True, "gpt2_layers": 12,
                  "gpt2_width": 768, "gpt2_heads": 12, "gpt2_seq_len": 1024, "n_sequences": 200,
                  "probes": 2, "gpt2_sequences": 16, "gpt2_probes": 4, "n_draws": 8,
                  "batch_size": 1, "n_boot": 200, "mc_draws": 20_000,
                  "pathway_widths": [64, 128, 256, 512, 896], "n_inits": 16,
                  "pretrained_sequences": 16, "pretrained_seq_len": 2048, "pretrained_probes": 2,
                  "chunk_len": 300, "toy_layers": 12, "toy_width": 128, "toy_seq_len": 512,
                  "toy_steps": 100, "toy_eval_sequences": 10},
    }
    # the shares of the time at the defaults that scale with each group of parameters; the seconds: the
    # chapter at its defaults in the cold book build of a clean clone on 2026-12-03 (commit 11be456; two
    # kernels at a time on the 2-core reference machine, synthesis alone on both cores); a clean clone's
    # build starts the longest first by them
    cost = CostModel(69, (
        (0.4, {"n_layers": 1, "width": 2, "seq_len": 2, "n_sequences": 1, "probes": 1}),
        (0.2, {"pretrained_sequences": 1, "pretrained_seq_len": 2, "pretrained_probes": 1}),
        (0.1, {"toy_steps": 1, "toy_width": 2}),
        (0.1, {"n_probe_draws": 1, "est_seq_len": 1}),
    ))


# ---------------------------------------------------------------------------------------------
# The chapter's words and tables: each sentence that compares or concludes beside a glued number
# takes its words from one of these functions, so that it holds at any parameters.

#: The paper's model at initialisation, as it states it: Qwen2-0.5B, L = 2048, H = 24, sigma_0 = 0.02,
#: its profile averaged over 200 sequences; GPT-2 small's width (App. H) for its stand-in scale.
PAPER_SHAPE = dict(L=2048, H=24, width=896, std=0.02, sequences=200, gpt2_width=768)


def estimate_text(e, digits: int = 3) -> str:
    """An :class:`~attention_geometry.stats.Estimate` as ``value ± se`` (for tables and claim records)."""
    return f"{e.value:.{digits}f} ± {e.se:.{digits}f}"


def single_probe_words(rel_sd: float) -> str:
    """How good one Gaussian probe is, from its relative standard deviation on rho(j)^2."""
    return "one probe is a rough estimate" if rel_sd > 0.1 else "even one probe is within 10 % on average"


def float32_words(err: float) -> str:
    """The float32 profile's largest relative error against the float64 reference, in words."""
    return ("below 1e-3, invisible on the log scales plotted here" if err < 1e-3
            else "above 1e-3, not negligible next to what is plotted")


def float64_words(err: float) -> str:
    """What the unpatched float64 model's error says about a float64 check in ``transformers``."""
    if err > 1e-10:
        return "float32 accuracy, not float64: without the patch a \"float64 check\" only checks float32 against itself"
    return "float64 accuracy: this version of transformers keeps float64 without the patch"


def uniform_words(ours: float, theirs: float) -> str:
    """How uniform this chapter's attention at sigma_0 = 0.02 is next to the paper's (score spreads)."""
    if ours < theirs / 4:
        return "far more uniform than the paper's"
    return "more uniform than the paper's" if ours < theirs else "no more uniform than the paper's"


def regime_words(ours: float, theirs: float) -> str:
    """Whether measurements at sigma_0 = 0.02 and this width describe the paper's score regime."""
    return ("measurements at that scale describe a regime the paper's model is not in" if ours < theirs / 2
            else "that scale is close to the paper's regime")


def gain_words(covers: bool) -> str:
    """Whether the fitted first-layer gain's interval covers the value the initialisation predicts."""
    return ("within its 95 % interval, as the initialisation predicts" if covers
            else "outside its 95 % interval (or the fit is degenerate): the initialisation does not predict it")


def monotone_words(monotone: float, floor: float, claimed: float = 0.99, tol: float = 0.01) -> str:
    """What the paper's two Spearman values can tell apart: ``monotone``, the Spearman a curve with
    no U reaches against the average profile (``monotone_spearman``); ``floor``, the Spearman
    the monotone trends of the profiles with and without positions guarantee
    (``monotone_floor``); each read against the claimed value less ``tol``, the verdicts'
    threshold."""
    target = claimed - tol
    fit = (f"so a Spearman of {claimed:g} with the paper's form could come from primacy or recency alone"
           if monotone >= target else f"so a Spearman of {claimed:g} says more than that the profile falls or rises")
    rope = (f"and the two profiles' trends alone would give RoPE against no RoPE a Spearman of {claimed:g}"
            if floor >= target else f"while their trends alone do not force the RoPE comparison to {claimed:g}")
    return f"{fit}, {rope}"


def late_rise_words(rising: list[str]) -> tuple[str, str]:
    """The configurations whose rise before the last token is significant, and what that means."""
    listed = ", ".join(rising) or "none of them"
    if rising:
        return listed, ("Where such a rise is found, it is a real-decoder effect that contradicts, for that "
                        "decoder,")
    return listed, "No configuration shows a rise resolved by its interval, which would contradict"


def fit_quality_words(misfit: float, noise: float) -> str:
    """A fit of the paper's form read against the noise level of the profile it fits."""
    if misfit > 2 * noise:
        return "a poor fit (its misfit is more than twice the noise level), so its α describes no profile"
    return "a fit within twice the noise level"


def heads_words(label: str) -> str:
    """How the spread across initialisations falls with the number of heads, from the verdict's label."""
    return {"reproduced": "falls like", "differs": "does not fall like"}.get(label, "is not resolved against")


def heads_flat_words(label: str) -> str:
    """Whether the spread stays flat in the number of heads where attention is uniform, from the
    verdict of the slope against 0."""
    return {"reproduced": "flat, as the algebra predicts",
            "differs": "not flat, against the algebra's prediction for exactly uniform attention"}.get(
        label, "not resolved against the algebra's flat prediction")


def unbiased_words(share_within_2se: float) -> str:
    """The share of positions whose estimate lies within 2 SE of the exact value, against the 95 % of an
    unbiased estimator."""
    return ("consistent with an unbiased estimator (which gives about 0.95)" if share_within_2se >= 0.85
            else "fewer than an unbiased estimator would give (about 0.95)")


def sizes_note(is_paper_run: bool) -> str:
    """Which sizes the chapter's numbers are from."""
    return "the paper-scale run, at the paper's shapes" if is_paper_run else "the book's small sizes"


def paper_cost_words(per_profile: dict, preset: dict, wall_seconds: float | None) -> str:
    """The stored paper-scale run's cost, from the time of each of its parts on its own
    (``per_profile``: the Qwen2- and GPT-2-shaped parts' seconds per profile, each its own
    part's time over its own profiles; NaN or missing where the run did not time a part),
    and what exact profiles of 200 Qwen2-shaped sequences would cost on it."""
    import math

    qwen = per_profile.get("qwen2", math.nan)
    if not math.isfinite(qwen) or wall_seconds is None:
        return "the line under the table gives the cost of a run"
    k, d = preset["probes"], preset["width"]
    n = PAPER_SHAPE["sequences"]
    hours = qwen * d / k * n / 3600
    gpt = per_profile.get("gpt2", math.nan)
    probes = lambda n: f"{n} probe{'s' if n != 1 else ''}"
    gpt_text = (f" and {gpt:.3g} s per GPT-2-shaped profile ({probes(preset['gpt2_probes'])})"
                if math.isfinite(gpt) and "gpt2_probes" in preset else "")
    return (f"the stored run took {qwen:.3g} s per Qwen2-shaped profile ({probes(k)}, one forward pass){gpt_text}, "
            f"each part timed on its own profiles, so {n} exact profiles ({d} cotangents each) would take at most about "
            f"{hours:.0f} hours on the same two CPU cores (cost taken as proportional to the cotangents, which "
            f"overcounts the forward pass they share); the whole chapter took {wall_seconds / 3600:.1f} hours")


def table(rows: list[dict]):
    """Rows of a table as glued Markdown (``{glue:md}`` in a ``{table}`` directive); a value that could
    not be computed reads "not defined", never NaN."""
    import math

    from IPython.display import Markdown

    from ..tables import markdown_table

    def text(x):
        if x is None or isinstance(x, float) and not math.isfinite(x):
            return "not defined"
        s = str(x)
        return "not defined" if s.lower() in ("nan", "none", "nan ± nan") else s

    header = list(rows[0]) if rows else []
    return Markdown(markdown_table(header, [[text(r[h]) for h in header] for r in rows]))


def timing_words(parts: dict) -> str:
    """How long this execution's random-init profiles took, part by part (``parts``: a part's
    name -> (profiles it computed, seconds), not counting those taken from checkpoints)."""
    timed = {name: (n, t) for name, (n, t) in parts.items() if n}
    if not timed:
        return "This execution took every random-init profile from its checkpoints, so it timed none."
    listed = "; ".join(f"{name}: {t / n:.3g} s per profile ({n} timed)" for name, (n, t) in timed.items())
    return (f"In this run, each part's random-init profiles took (its own time over its own profiles, with and "
            f"without positions; a resumed run takes the others from its checkpoints) {listed}.")


def signed_root(x: float) -> float:
    r""":math:`\operatorname{sign}(x)\sqrt{|x|}`: an estimated mean square (which noise can make
    negative) as an rms."""
    return math.copysign(math.sqrt(abs(x)), x)


def excess_words(excess, tol: float) -> str:
    """Where a prediction's excess ``b²`` (an Estimate) stands against ``tol`` (an rms in ln ρ), from
    its 95 % interval: the words after "the predicted profile is"."""
    lo, hi = excess.interval()
    if hi <= tol**2:
        return f"within {tol:.0%} rms of the measured one"
    if lo > tol**2:
        return f"further than {tol:.0%} from the measured one"
    return f"not resolved against {tol:.0%} at this number of draws"


def fits_table(stats: dict, over: dict, name: dict, score_sd: dict, widths: dict):
    """Each random-init configuration's average profile against both models (``jac-tab-fits``): ``stats[c]``
    from ``profile_statistics``, ``over[c]`` from ``draw_profile_statistics``, ``widths[c]`` its width."""
    return table(fits_rows(stats, over, name, score_sd, widths))


def fits_rows(stats: dict, over: dict, name: dict, score_sd: dict, widths: dict) -> list[dict]:
    """The rows of :func:`fits_table`, as text."""
    from ... import attention_score_std

    return ([
        {"model": name[c], "score SD (measured)": round(float(score_sd[c].mean()), 3),
         "score SD $\\sigma_0^2 d$": round(attention_score_std(widths[c], c[1]), 3),
         "$r_S$ with $g^H N^H$": estimate_text(over[c]["spearman"]), "noise ceiling": estimate_text(over[c]["ceiling"]),
         "$W_1$": estimate_text(over[c]["wasserstein"], 4),
         "$W_1$ between halves": estimate_text(over[c]["noise_wasserstein"], 4), "α of $g^H N^H$": str(st.cesaro.alpha),
         "rms ln-misfit $g^H N^H$": round(st.cesaro.log_rmse, 3),
         "rms ln-misfit derived ($g$)": round(st.derived.log_rmse, 3),
         "rms ln-misfit derived ($g$, ζ)": round(st.derived_layers.log_rmse, 3),
         "gain $g$; growth ζ": f"{st.derived_layers.gain}; {st.derived_layers.growth}",
         "noise level": round(st.noise_log_rmse, 3), "log10 peak/trough": estimate_text(over[c]["log10_ptt"], 2)}
        for c, st in stats.items()])


def late_table(stats: dict, over: dict, name: dict):
    """The late minimum of each configuration and the rise after it (``jac-tab-late``)."""
    return table([{"model": name[c], "$j_{\\min}/L$ (even sequences)": round(stats[c].late_minimum.x_min, 3),
                   "rise to $L-1$, relative (odd sequences)": estimate_text(o["rise"]),
                   "95 % interval": "[{:.3f}, {:.3f}]".format(*o["rise"].interval())} for c, o in over.items()])


def pretrained_table(pst: dict, pends: dict):
    """SmolLM2 and its twin against the paper's form (``jac-tab-pretrained``)."""
    return table([
        {"model": k, "α of $g^H N^H$": str(s.cesaro.alpha), "$r_S$ with fit": estimate_text(s.spearman),
         "ceiling": estimate_text(s.ceiling), "log10 peak/trough": estimate_text(s.log10_ptt, 2),
         "log10 min(ends)/middle": estimate_text(pends[k], 2), "rms ln-misfit $g^H N^H$": round(s.cesaro.log_rmse, 3),
         "noise level": round(s.noise_log_rmse, 3)} for k, s in pst.items()])


def estimator_table(ratio_gauss: float, ratio_orth: float, k: int, within2: float, zmax: float,
                    exact_vs_blocks: float, full_orth_err: float):
    """The estimator on the small decoder against its exact profile (``jac-tab-estimator``)."""
    return table([
        {"quantity": "measured over derived variance, one Gaussian probe (median over positions)",
         "value": f"{ratio_gauss:.3f}"},
        {"quantity": f"measured over derived variance, {k} orthogonal probes", "value": f"{ratio_orth:.3f}"},
        {"quantity": "share of positions with $\\lvert z\\rvert < 2$, Gaussian probes", "value": f"{within2:.2f}"},
        {"quantity": "largest $\\lvert z\\rvert$", "value": f"{zmax:.2f}"},
        {"quantity": "exact profile ($d$ backward passes) against the blocks, largest relative difference",
         "value": f"{exact_vs_blocks:.1e}"},
        {"quantity": "$d$ orthogonal probes against the exact profile, largest relative difference (float32)",
         "value": f"{full_orth_err:.1e}"}])


def leading_number(text) -> float | None:
    """The number a fitted parameter's text starts with (``"370 [362, 379]"`` -> 370.0); ``None`` for a
    degenerate fit (``"degenerate (...)"``), a missing value or anything else."""
    if isinstance(text, (int, float)):
        return float(text)
    try:
        return float(str(text).split()[0])
    except (ValueError, IndexError):
        return None


def stored_figure(run, name: str) -> bytes | None:
    """The PNG of the figure glued as ``name`` in a stored paper run's notebook (``run``: a
    :class:`~attention_geometry.book.paper.PaperRun`), or ``None`` if it has none."""
    return run.figure(name) if run is not None else None


def w_source_words(w_all: float, w_without_last: float) -> str:
    """Where the distance W between a profile and its fitted paper form comes from: the last position
    or the rest."""
    if w_without_last < 0.25 * w_all:
        return "most of it comes from the last position alone"
    if w_without_last > 0.75 * w_all:
        return "little of it comes from the last position"
    return "the last position and the rest both contribute"


def prediction_words(misfit: float, noise: float) -> str:
    """A predicted (unfitted) profile read against the noise level of the measured one."""
    if misfit <= 2 * noise:
        return "within twice the noise level: the forward pass predicts the profile"
    return "more than twice the noise level: something the prediction leaves out shapes the profile too"


def bracket_words(measured, independent: float, shared: float) -> str:
    """Where a measured log10 peak-to-trough (an estimate) lies against the two ends of the MLP step of
    the prediction: its Jacobians independent across positions, and one matrix at every position."""
    lo, hi = measured.interval()
    low, high = sorted((independent, shared))
    if hi < low or lo > high:
        return "the measurement lies outside the two ends, so the MLP's cross-position term does not explain the gap"
    near = min((abs(measured.value - independent), "independent"), (abs(measured.value - shared), "shared"))[1]
    if near == "independent":
        return "the measurement sits nearer the end where the MLP's Jacobians are independent across positions"
    return "the measurement sits nearer the end where the MLP's Jacobian is the same matrix at every position"


def _column(row: dict, *words: str):
    """The cell of ``row`` whose column name holds all ``words`` (the stored run's names or today's)."""
    for key, value in row.items():
        if all(w in key for w in words):
            return value
    return None


def shape_cells(row: dict) -> dict:
    """A row of the fits table (today's column names or a stored run's) as the cells the paper-shape
    table and the prediction read: ``model, sp, ceiling, w, alpha, misfit_paper, misfit_derived, noise,
    ptt, gain, growth`` (``gain`` and ``growth`` as numbers, ``None`` if degenerate)."""
    gains, depth, cut = str(_column(row, "gain") or ""), 0, None
    for i, ch in enumerate(gains):  # the ';' between the two parameters, not one inside a degenerate label
        depth += ch in "([" and 1 or (-1 if ch in ")]" else 0)
        if ch == ";" and depth == 0:
            cut = i
            break
    g, k = (gains, "") if cut is None else (gains[:cut], gains[cut + 1:])
    w = row.get("W", row.get("$W_1$"))
    return {"model": row.get("model"), "sp": _column(row, "with g") or _column(row, "$r_S$ with"),
            "ceiling": _column(row, "ceiling"), "w": w, "alpha": _column(row, "α of"),
            "misfit_paper": _column(row, "misfit", "N^H"), "misfit_derived": _column(row, "derived", ","),
            "noise": _column(row, "noise level"), "ptt": _column(row, "peak/trough"),
            "gain": leading_number(g), "growth": leading_number(k)}


def paper_shape_table(cells: list[dict], rope: list):
    """The random-init decoders at the paper's shapes (``jac-tab-paper-shape``): ``cells`` from
    :func:`shape_cells`, ``rope`` the text of each one's RoPE on/off Spearman."""
    if not cells:
        return table([{"model": "not run at the paper's settings (no stored run)"}])
    return table([{"model": c["model"], "$r_S$ with $g^H N^H$": c["sp"], "noise ceiling": c["ceiling"],
                   "$W_1$": c["w"], "α of $g^H N^H$": c["alpha"], "rms ln-misfit $g^H N^H$": c["misfit_paper"],
                   "rms ln-misfit derived ($g$, ζ)": c["misfit_derived"], "noise level": c["noise"],
                   "log10 peak/trough": c["ptt"], "$r_S$ positions on/off": r} for c, r in zip(cells, rope)])


def stored_table_rows(text: str) -> list[dict]:
    """The rows of a table a stored run glued, as ``[{column: text}]``: its Markdown source (a pipe
    table, :func:`table`) or, in runs that glued a ``pandas`` frame, the frame's plain text (columns
    wrapped in blocks, cells apart by two spaces or more)."""
    import re

    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    if lines and lines[0].startswith("|"):
        def cells(line):
            return [c.strip() for c in line.strip("|").split("|")]

        header = cells(lines[0])
        return [dict(zip(header, cells(line))) for line in lines[2:] if line.startswith("|")]
    rows: dict[int, dict] = {}
    for block in re.split(r"\n\s*\n", str(text).strip("\n")):
        lines = [ln.rstrip().removesuffix("\\").rstrip() for ln in block.splitlines() if ln.strip()]
        if len(lines) < 2:
            continue
        header = re.split(r"\s{2,}", lines[0].strip())
        for line in lines[1:]:
            cells = re.split(r"\s{2,}", line.strip())
            if len(cells) != len(header) + 1 or not cells[0].isdigit():
                continue
            rows.setdefault(int(cells[0]), {}).update(zip(header, cells[1:]))
    return [rows[i] for i in sorted(rows)]


def first_layer_words(first: float, rest_max: float) -> str:
    """What the predicted attention gains say each layer does at initialisation: ``first`` the first
    layer's gain, ``rest_max`` the largest of the others (means over positions)."""
    if first > 1 and first > 4 * rest_max:
        return ("the first layer's attention outweighs the residual stream it reads, so more paths jump there "
                "than stay, and its output then dominates the stream, so each later layer adds a correction at "
                "most a quarter as large")
    if first <= 1 and rest_max <= 1:
        return ("every layer's branch is smaller than the residual stream it reads, so more paths stay in "
                "place than jump at every layer")
    return "several layers' branches are as large as the residual stream they read"


def profile_panels(samples: dict, stats: dict, name: dict, score_sd: dict) -> dict:
    """The panels of the profile figure (``plot_profile_bands``), one per configuration ``c`` of
    ``samples`` (``(on, off)`` profile samples): the average profile with positions, its band and
    both fits (``stats[c]``), titled with ``name[c]`` and the measured score SD."""
    return {f"{name[c]}, score SD {score_sd[c].mean():.3f}": dict(
        rho=on.profile(), band=on.band(), cesaro=stats[c].cesaro.theory, derived=stats[c].derived_layers.theory)
        for c, (on, _) in samples.items()}


def limit_words(L: int, H: int, alpha: Any, rtol: float = 0.01) -> str:
    """Where the paper's continuous density stands for the discrete row :math:`(N^H)_{L,j}` that
    this chapter fits, at the fitted ``alpha`` (a ``FittedParameter``): the first position from
    which the two agree within ``rtol`` (:func:`~attention_geometry.cesaro.limit_accurate_from`)."""
    from ...cesaro import limit_accurate_from

    if alpha.degenerate:
        return "the fitted α lies on a bound of its search, so which continuous density the fit stands for is not defined"
    j0 = limit_accurate_from(L, H, alpha.value, rtol=rtol)
    where = f"at L = {L}, H = {H} and the fitted α = {alpha.value:.3g}"
    if j0 >= L:
        return (f"{where} the continuous density is not within {rtol * 100:g} % of the discrete row over any stretch before "
                "the last position, so the discrete row is the form to test")
    if j0 <= max(2, L // 10):
        return (f"{where} the continuous density is within {rtol * 100:g} % of the discrete row from position {j0} of {L} on, "
                "so the two forms differ only at the first positions")
    return (f"{where} the continuous density is within {rtol * 100:g} % of the discrete row only from position {j0} of {L} "
            "on, so before it the discrete row is the form to test")


def paper_gain_words(values: Mapping[str, Any] | None) -> str:
    """What a run's predicted per-layer gains (its glued ``jac-pred-*`` values: means over positions)
    say each layer does at initialisation, as a sentence: this run's in the prediction section, the
    stored paper-scale run's in the paper-shape section."""
    keys = ("jac-pred-g1", "jac-pred-m1", "jac-pred-g2", "jac-pred-gH", "jac-pred-layer-words")
    if not values or not all(k in values for k in keys):
        return f"{STORED_RUN.capitalize()} does not hold the layers' predicted gains."
    g1, m1, g2, gh, words = (values[k] for k in keys)
    trend = "falls" if gh < g2 else ("rises" if gh > g2 else "stays")
    return (f"Read off the forward pass, layer 1's attention gain is {g1:.3g} and its MLP's {m1:.3g}; from layer 2 "
            f"the attention gain {trend} from {g2:.3g} to {gh:.3g} at the last layer. At initialisation {words}.")


def ends_misfit_words(rms: float, first: float, last: float) -> str:
    """Where a fit's misfit lies: at the end positions (an end more than three times the rms) or spread."""
    if max(abs(first), abs(last)) > 3 * rms:
        return "the misfit is largest at the ends"
    return "the misfit is spread over the positions"


def proxy_words(misfit: float | None, noise: float | None) -> str:
    """Whether the derived form at a run's fitted gains can stand in for the measured profile it was fitted to."""
    if misfit is None or noise is None:
        return "is not available (no stored run at the paper's shape)"
    if misfit <= 2 * noise:
        return "misses the measured profile by less than twice its noise level, so it can stand in for it"
    return "misses the measured profile by more than twice its noise level, so it stands in for it only roughly"


def embedding_meaning_words(changed: bool) -> str:
    """What the embedding scale's effect on the valley's depth means for "lost in the middle at birth"."""
    if changed:
        return ("So the depth of the valley \"at birth\" is not fixed by the causal mask and the residual "
                "connections alone: it depends on how large the embeddings are against what the first layer "
                "writes, which is an initialisation choice.")
    return ("At this size the valley's depth does not measurably depend on the embeddings' scale: the mask and "
            "the residual connections set it.")


#: The stored run's per-probe profiles, beside its values (``results/jacobians/paper/profiles.npz``).
PROFILES_FILE = "profiles.npz"


def stack_draws(parts: list) -> "np.ndarray":
    """``(draws, sequences, probes, L)`` float32 from one ``(sequences, probes, L)`` array per
    weight draw, each draw cut to the fewest sequences of any draw (the presets spread the
    sequences evenly, so nothing is cut there)."""
    import numpy as np

    m = min(len(p) for p in parts)
    return np.stack([np.asarray(p[:m], dtype=np.float32) for p in parts])


def variance_shares(arrays: dict, prefix: str) -> dict:
    """How the variance of :math:`\\log_{10}\\hat\\rho^2` per probe splits between weight draws,
    sequences and probes (:func:`~attention_geometry.draws.nested_variance`, components
    averaged over the positions, negative ones set to 0) for ``prefix-on``, ``prefix-off``
    and their paired difference: ``{setting: (draws, sequences, probes, total)}`` (shares of
    the total; ``None`` where the design cannot split it: one draw, one sequence per draw or
    one probe)."""
    import numpy as np

    from ...draws import nested_variance

    on, off = (np.log10(np.asarray(arrays[f"{prefix}-{s}"], dtype=np.float64)) for s in ("on", "off"))
    out = {}
    for setting, y in {"on": on, "off": off, "on minus off": on - off}.items():
        if min(y.shape[:3]) < 2:
            out[setting] = None
            continue
        nv = nested_variance(y)
        parts = np.maximum([float(np.mean(nv.draws)), float(np.mean(nv.sequences)), float(np.mean(nv.probes))], 0.0)
        total = float(parts.sum())
        out[setting] = (*(parts / total if total > 0 else parts * np.nan), total)
    return out


SETTING_WORDS = {"on": "positions on", "off": "positions off", "on minus off": "on minus off (paired)"}


def variance_rows(shares: dict[str, dict | None], missing: str = "not run at the paper's settings") -> list[dict]:
    """The rows of ``jac-tab-variance``: ``shares`` maps a run's name to :func:`variance_shares`
    of it (``None``: not measured in that run, ``missing`` says why)."""
    rows = []
    for run, by_setting in shares.items():
        if by_setting is None:
            rows.append({"run": run, "setting": missing, "draws": None, "sequences": None,
                         "probes": None, "variance of log10 ρ̂²": None})
            continue
        for setting, v in by_setting.items():
            cells = [None] * 4 if v is None else [f"{v[0]:.2f}", f"{v[1]:.2f}", f"{v[2]:.2f}", f"{v[3]:.3g}"]
            rows.append({"run": run, "setting": SETTING_WORDS[setting], "draws": cells[0], "sequences": cells[1],
                         "probes": cells[2], "variance of log10 ρ̂²": cells[3]})
    return rows


def largest_level_words(shares) -> str:
    """Which level holds most of a measurement's variance, from ``(draws, sequences, probes, ...)``
    shares (``None``: not split)."""
    import math

    if shares is None or not all(math.isfinite(x) for x in shares[:3]):
        return "cannot be split with this design (it needs two draws, two sequences per draw and two probes)"
    names = ("the weight draws", "the sequences within a draw", "the probes within a sequence")
    i = max(range(3), key=lambda j: shares[j])
    return (f"comes mostly from {names[i]}" if shares[i] > 0.5
            else f"is spread over the levels, the largest part from {names[i]}")



def verdict_count_words(labels: list[str]) -> str:
    """How many comparisons of a prediction with a measurement each verdict got, in words."""
    n = len(labels)
    if not n:
        return "no comparison was made"
    agree, differ = labels.count("reproduced"), labels.count("differs")
    rest = n - agree - differ
    return (f"{agree} of the {n} measured numbers lie inside the prediction's tolerance band, {differ} outside it"
            + (f", and {rest} are not decided" if rest else ""))


# ---------------------------------------------------------------------------------------------
# This run and the stored paper-scale run: a sentence on a quantity names the run its numbers are
# from, and the stored run's words for the same quantity stand beside this run's (or a sentence
# says the stored run does not hold them). ``stored`` is a PaperRun or ``None``; ``this_is_the_run``
# is True where this execution is the paper-scale run itself (then there is no other stored run).

def ptt_pretrained_words(pretrained, init) -> str:
    """Whether the valley is deeper after pretraining, from the log10 peak-to-trough pretrained and at
    initialisation (Estimates, independent): by the 95 % interval of their difference."""
    from ...stats import Estimate
    from ...words import trend_word

    return trend_word(Estimate(pretrained.value - init.value, math.hypot(pretrained.se, init.se)),
                      above="the valley is deeper after pretraining than at initialisation",
                      below="the valley is shallower after pretraining than at initialisation",
                      neither="pretraining leaves the valley's depth unresolved against initialisation")


def stored_ptt_words(stored, *, this_is_the_run: bool) -> str:
    """The stored run's log10 peak-to-trough of SmolLM2 pretrained and at initialisation, in the words
    of :func:`ptt_pretrained_words`."""
    from ...stats import Estimate

    def say(p, p_se, t, t_se):
        windows = (stored.parameters or {}).get("pretrained_seq_len")
        at = f" (windows of {windows} tokens)" if windows else ""
        return (f"the log10 peak-to-trough{at} is {p:.2f} ± {p_se:.2f} pretrained and {t:.2f} ± {t_se:.2f} at "
                f"initialisation: {ptt_pretrained_words(Estimate(p, p_se), Estimate(t, t_se))}")

    return stored_run_words(stored, ("jac-pre-lptt", "jac-pre-lptt-se", "jac-twin-lptt", "jac-twin-lptt-se"), say,
                            "the peak-to-trough of SmolLM2 pretrained and at initialisation",
                            this_is_the_run=this_is_the_run)


def local_u_words(local_u) -> str:
    """Whether the profile inside the chunks of the chunked windows is U-shaped, from log10 of a chunk's
    lesser end over its median (an Estimate), by its 95 % interval. Whether the U is the chunks' own is
    the vanilla control's to say (the ``local-u`` row)."""
    from ...words import trend_word

    return trend_word(local_u, above="the profile inside the chunks is U-shaped (its lesser end stands above its median)",
                      below="the profile inside the chunks is not U-shaped (its lesser end lies below its median)",
                      neither="a U inside the chunks is not resolved")


def stored_local_u_words(stored, *, this_is_the_run: bool) -> str:
    """The stored run's local U inside the chunks, in the words of :func:`local_u_words`, and against the
    vanilla windows at the same positions where that run holds the control."""
    from ...stats import Estimate
    from ...words import trend_word

    control = ("jac-local-u-control", "jac-local-u-control-se")
    has_control = stored is not None and all((stored.values or {}).get(k) is not None for k in control)

    def say(u, u_se, *diff):
        shape = f"log10 of the chunk's lesser end over its median is {u:+.2f} ± {u_se:.2f}: {local_u_words(Estimate(u, u_se))}"
        if not diff:
            return shape
        word = trend_word(Estimate(*diff), above="deeper than", below="shallower than", neither="not measurably different from")
        return f"{shape}; against the vanilla windows at the same positions it is {diff[0]:+.2f} ± {diff[1]:.2f}, {word} theirs"

    return stored_run_words(stored, ("jac-local-u", "jac-local-u-se") + (control if has_control else ()), say,
                            "the local U inside the chunks", this_is_the_run=this_is_the_run)


def stored_oos_words(stored, *, this_is_the_run: bool) -> str:
    """The verdicts of the stored run's out-of-sample rows (claim ids ``oos-*``), counted in the words of
    :func:`verdict_count_words`, or that the stored run has none."""
    if this_is_the_run:
        return THIS_IS_THE_RUN
    if stored is None:
        return "No paper-scale run is stored, so the prediction out of sample is not tested at the paper's settings."
    labels = [str((c.get("verdict") or {}).get("label")) for c in (stored.claims or [])
              if str(c.get("id", "")).startswith("oos-")]
    if not labels:
        return "The stored paper-scale run has no out-of-sample rows: not in the stored run."
    return f"In {STORED_RUN}, {verdict_count_words(labels)}."


def profiles_words(stored, has_file: bool, *, this_is_the_run: bool) -> str:
    """Where the per-probe profiles that :func:`variance_shares` splits are kept: with this run (the
    paper-scale run), with the stored paper-scale run, or nowhere at the paper's settings."""
    what = "The per-probe profiles of every sequence, with positions and without them"
    if this_is_the_run:
        return f"{what}, are kept with this run ({PROFILES_FILE}, float32, every position)."
    if stored is None:
        return "No paper-scale run is stored, so the split at the paper's shape is not measured."
    if has_file:
        return f"{what}, are kept with {STORED_RUN} ({PROFILES_FILE}, float32, every position)."
    return ("The stored paper-scale run kept only averaged profiles, so the split of the variance at the paper's "
            "shape is not in the stored run.")


def variance_absent_words(stored) -> str:
    """What stands for the split of the variance at the paper's shape where it is not measured (after
    "the variance ... per probe")."""
    return "is not in the stored run" if stored is not None else "is not measured (no paper-scale run is stored)"


def shape_words(p: dict, arch: str, std: float | None = None, standin: float | None = None) -> str:
    """A decoder's shape from a run's parameters ``p`` (a preset or a stored run's), as the prose gives
    it: ``arch`` ``"qwen2"`` (with ``std``, its sigma_0; ``standin``: the stand-in scale at its width,
    named when it is the same) or ``"gpt2"``."""
    if arch == "gpt2":
        return f"{p['gpt2_layers']} layers, width {p['gpt2_width']}, {p['gpt2_heads']} heads, L = {p['gpt2_seq_len']}"
    words = (f"{p['n_layers']} layers, d = {p['width']}, {p['n_heads']} query and {p['n_kv_heads']} key/value heads, "
             f"L = {p['seq_len']}")
    if std is not None:
        words += f", σ₀ = {std:.3g}"
        if standin is not None and math.isclose(std, standin, rel_tol=1e-6):
            words += ", which is also the stand-in scale at that width"
    return words


def tolerance_words(tol: dict, names: dict) -> str:
    """The tolerances of the out-of-sample verdicts (``tol[q] = (rtol, atol)``; ``names[q] = (name,
    unit)``, the quantity's plain-text name and the unit of its absolute tolerance), as the table's
    caption gives them."""
    parts = []
    for q, (rtol, atol) in tol.items():
        name, unit = names[q]
        bits = ([f"{rtol:.0%}".replace("%", " %")] if rtol else []) + ([f"{atol:g}{unit}"] if atol else [])
        parts.append(f"{name} within {' + '.join(bits) or '0'}")
    return ", ".join(parts)


def positions_scale_words(ratio: float) -> str:
    """How large a GPT-2-shaped decoder's learned positions are against its token embeddings, from the
    ratio of their RMS (positions over tokens)."""
    if ratio > 1.25:
        return "larger than the token embeddings"
    if ratio < 0.8:
        return "smaller than the token embeddings"
    return "about as large as the token embeddings"


def pair_cosines(cosines) -> "np.ndarray":
    """``(H,)``: per block, the mean cosine between the MLP inputs at two different positions (the
    strict lower triangle of :func:`~attention_geometry.jacobians.decoders.mlp_input_cosines`'
    ``(H, L, L)``)."""
    import numpy as np

    c = np.asarray(cosines, dtype=np.float64)
    rows, cols = np.tril_indices(c.shape[-1], k=-1)
    return c[:, rows, cols].mean(-1)


def alike_words(first: float, later: float) -> str:
    """How alike two positions' MLP inputs are, from the mean cosine in the first block (``first``)
    and over the later ones (``later``): what sharing of the MLP's gain that leaves."""
    if later >= 0.5:
        level = "alike"
    elif later >= 0.1:
        level = "partly alike"
    else:
        level = "nearly at right angles, as the embeddings are"
    trend = ("more alike than in the first block" if later > first + 0.05
             else "less alike than in the first block" if later < first - 0.05 else "as alike as in the first block")
    return f"after the first layer they are {level} ({trend})"


def markdown_table_rows(text: str) -> list[dict]:
    """The rows of a Markdown pipe table (as :func:`table` glues one and a stored run keeps it), as
    ``[{column: cell}]``; ``[]`` for anything else."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip().startswith("|")]
    if len(lines) < 2:
        return []
    cells = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    header = cells[0]
    return [dict(zip(header, row)) for row in cells[2:] if len(row) == len(header)]


def figure_png(fig, dpi: int = 110) -> bytes:
    """A matplotlib figure as PNG bytes (at the notebooks' ``figure.dpi``)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


def stacked_png(top: bytes, bottom: bytes) -> bytes:
    """Two PNG images one above the other on white (the narrower one centred), as one PNG."""
    import io

    import numpy as np
    from matplotlib import image as mpimg

    a, b = (mpimg.imread(io.BytesIO(png), format="png")[..., :3] for png in (top, bottom))
    width = max(a.shape[1], b.shape[1])

    def pad(x):
        left = (width - x.shape[1]) // 2
        return np.pad(x, ((0, 0), (left, width - x.shape[1] - left), (0, 0)), constant_values=1.0)

    buf = io.BytesIO()
    mpimg.imsave(buf, np.concatenate([pad(a), pad(b)]), format="png")
    return buf.getvalue()


def prediction_paper_glue(stored, figure, rows: list[dict], *, this_is_the_run: bool) -> dict:
    """The unfitted prediction's figure and table with the stored paper-scale run's beside this run's:
    ``jac-fig-prediction`` (this run's ``figure``, with the stored run's PNG drawn under it where it
    holds one), ``jac-fig-prediction-source`` (which run each part is), ``jac-tab-prediction`` (this
    run's ``rows`` and the stored run's, each marked by its run) and ``jac-pred-paper-words``, the
    sentence that says which run the figure and the table show."""
    from IPython.display import Image

    from ..stored import stored_figure, stored_text

    name, tab = "jac-fig-prediction", "jac-tab-prediction"  # the stored run's, read under the keys glued below
    shown = stored_figure(stored, name, None, this_is_the_run=this_is_the_run)[0]
    png = shown.data if shown is not None else None
    text = stored_text(stored, [tab], this_is_the_run=this_is_the_run)
    mine = [{"run": "this run", **r} for r in rows]
    theirs = [{**{h: r.get(h) for h in mine[0]}, "run": STORED_RUN} for r in markdown_table_rows(text[tab])] \
        if text and mine else []
    if this_is_the_run:
        source, words = "This run, the paper-scale run itself", THIS_IS_THE_RUN
    elif png is not None:
        source = f"Above: this run; below: {STORED_RUN}"
        words = (f"The figure draws this run above {STORED_RUN}, and the table's rows marked \"{STORED_RUN}\" are "
                 "that run's" + ("." if theirs else " (its table: not in the stored run)."))
    elif stored is None:
        source = "This run (no paper-scale run is stored)"
        words = "No paper-scale run is stored, so the figure and the table show this run alone."
    else:
        source = "This run (the stored paper-scale run does not hold this figure)"
        words = ("The stored paper-scale run does not hold the unfitted prediction (not in the stored run), so the "
                 "figure and the table show this run alone" + (", with the stored run's rows." if theirs else "."))
    return {"jac-fig-prediction": Image(stacked_png(figure_png(figure), png)) if png is not None else figure,
            "jac-fig-prediction-source": source, "jac-tab-prediction": table(mine + theirs),
            "jac-pred-paper-words": words}
