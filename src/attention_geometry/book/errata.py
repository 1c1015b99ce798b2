"""The papers' errata: one record per place where a paper's text is wrong as written.

Each record names the paper (its key in ``references.bib``), the chapter that
shows the error (its registry name), where in the paper it is, what the paper
writes, what is right, the evidence in the book and how much it matters:

- ``slip with no effect``: a misprint or a wrong index that nothing later uses;
- ``wrong number``: a value, a formula or a factor is wrong, but what the paper
  concludes from it still holds;
- ``wrong conclusion``: what the paper concludes does not hold as stated.

The evidence is one MyST cross-reference into the chapter: ``{ref}`` to a
section label, ``{eq}`` to an equation, ``{numref}`` to a figure or table, or
``{doc}`` to the chapter itself. A test keeps every target an existing label of
that chapter (:func:`labels`).

The book's own caveats, run settings and implementation notes are not errata:
they stay in each chapter's "Caveats" section, which :mod:`.appendices`
collects on a page of their own. The records state what is right without
numbers measured by a run, so that they hold at any parameters; a record that
needs one may glue it (``{glue:text}`key```), and the page then reads it from
the chapter that computed it.
"""

import re
from dataclasses import dataclass

from .._checks import check_choice

__all__ = ["SEVERITIES", "PAPERS", "Erratum", "ERRATA", "ROLES", "evidence_target", "labels", "cross_references"]

SEVERITIES = ("slip with no effect", "wrong number", "wrong conclusion")

#: the papers the book reproduces, in the order of its parts (keys of references.bib)
PAPERS = ("brody2023expressivity", "wu2024masks", "kim2025recency", "chowdhury2026lost")

#: the cross-reference roles an evidence may use, with the kind of label each needs
ROLES = {"ref": "section", "eq": "equation", "numref": "figure", "doc": "document"}

_ROLE = re.compile(r"\{(ref|eq|numref|doc|prf:ref)\}`(?:[^`<]*<)?([^`<>]+)>?`")


@dataclass(frozen=True)
class Erratum:
    """One error of one paper, as the book shows it."""

    paper: str  # key in references.bib
    chapter: str  # registry name of the chapter with the evidence
    location: str  # section, equation, figure, table or appendix of the paper
    written: str  # what the paper writes (quoted, or stated as the paper does)
    right: str  # what is right
    evidence: str  # one MyST cross-reference into the chapter
    severity: str  # one of SEVERITIES

    def __post_init__(self):
        check_choice("severity", self.severity, SEVERITIES)
        for name in ("paper", "chapter", "location", "written", "right", "evidence"):
            if not str(getattr(self, name)).strip():
                raise ValueError(f"{name} = {getattr(self, name)!r} is empty; allowed: a non-empty string")
        evidence_target(self.evidence)


def evidence_target(evidence: str) -> tuple[str, str]:
    """``(role, label)`` of an evidence: exactly one ``{ref}``, ``{eq}``, ``{numref}`` or ``{doc}``."""
    m = _ROLE.fullmatch(evidence.strip())
    if not m or m.group(1) not in ROLES:
        raise ValueError(f"evidence = {evidence!r} is not one cross-reference; allowed: "
                         + ", ".join(f"{{{r}}}`label`" for r in ROLES))
    return m.group(1), m.group(2)


def cross_references(text: str) -> list[tuple[str, str]]:
    """Every ``(role, label)`` of the cross-reference roles in ``text`` (``{prf:ref}`` included)."""
    return [(m.group(1), m.group(2)) for m in _ROLE.finditer(text)]


_HEADING = re.compile(r"^#{1,6}\s")


def labels(text: str) -> dict[str, str]:
    """The labels a MyST page defines, each with the kind of target it is:
    ``section`` (a ``(label)=`` before a heading), ``paragraph`` (one before anything
    else: ``{ref}`` needs an explicit title there), ``equation`` (``$$ (label)``),
    ``figure`` (a directive's ``:name:``, figures and tables) or ``directive``
    (a ``:label:``, theorems and definitions, for ``{prf:ref}``)."""
    found: dict[str, str] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if m := re.fullmatch(r"\(([^()\s]+)\)=\s*", line):
            after = next((ln for ln in lines[i + 1:] if ln.strip()), "")
            found[m.group(1)] = "section" if _HEADING.match(after) else "paragraph"
        elif m := re.search(r"\$\$\s*\(([^()\s]+)\)\s*$", line):
            found[m.group(1)] = "equation"
        elif m := re.fullmatch(r":name:\s*(\S+)\s*", line):
            found[m.group(1)] = "figure"
        elif m := re.fullmatch(r":label:\s*(\S+)\s*", line):
            found[m.group(1)] = "directive"
    return found


def _brody(chapter, location, written, right, evidence, severity):
    return Erratum("brody2023expressivity", chapter, location, written, right, evidence, severity)


def _kim(location, written, right, evidence, severity):
    return Erratum("kim2025recency", "recency", location, written, right, evidence, severity)


def _chowdhury(chapter, location, written, right, evidence, severity):
    return Erratum("chowdhury2026lost", chapter, location, written, right, evidence, severity)


_SLIP = "slip with no effect"

ERRATA: tuple[Erratum, ...] = (
    # Brody, Alon, Yahav: only the abstract is available; the settings are the authors' repository's
    _brody("uniform_attention", "Figs. 2a and 3 (majority task); the authors' `majority_exp.py`, variant "
           "`WITHOUT_PROJ`",
           "The model \"without projection\" normalises by `normalize(x) / dim**0.5`, that is "
           "$x/(\\sqrt d\\,\\lVert x\\rVert)$, a vector of norm $1/\\sqrt d$; Fig. 2a: \"With projection, the model "
           "converges faster compared to the model without projection, which required 3x more steps\"; Fig. 3: "
           "\"With projection the model reaches high test accuracy faster compared to the model without "
           "projection.\"",
           "LayerNorm without its projection is $\\sqrt d\\,x/\\lVert x\\rVert$, of norm $\\sqrt d$. The "
           "original's variant also makes the scores $d^2$ and the values $d$ times smaller, so the gaps in "
           "loss and accuracy are not the projection's alone; the comparison that isolates the projection is "
           "LayerNorm against $\\sqrt d\\,x/\\lVert x\\rVert$, and the book measures what share of the "
           "accuracy gap that control closes.",
           "{ref}`sec-ua-confound`", "wrong conclusion"),
    _brody("selectability", "Abstract, (b); Tables 1–2 and their captions",
           "Scaling \"allows each key to potentially receive the highest attention, and prevents keys from being "
           "'un-select-able'\" (abstract). Tables 1–2 count the unselectable vectors among the inputs of attention, "
           "\"right before the attention mechanism\" (Table 1), and the caption of Table 2 concludes: \"LayerNorm "
           "solves the 'unselectable' keys problem using the scaling property.\"",
           "The scaling puts the normed states on a sphere, where no point is unselectable, but a head scores "
           "their images under its $W_K$, of width $d_h$. A $W_K$ with a kernel on $\\mathcal H$ flattens the "
           "sphere into a solid ellipsoid whose interior keys no query selects (an exact example with $d = 4$, "
           "$d_h = 2$). The guarantee carries over to a head only when $W_K$ is injective on $\\mathcal H$, which "
           "needs $d_h \\ge d - 1$; the paper's own GPT-2 has $d = 8$ and $h = 4$ heads of width 2. On short "
           "key sets of the book's decoder of that shape {glue:text}`sel-heads-ln:.1f` % of the per-head keys are "
           "unselectable with LayerNorm, and {glue:text}`sel-heads-proj:.1f` % without the scaling.",
           "{ref}`sel-multihead`", "wrong conclusion"),
    # Kim et al.: the full text with its appendix
    _kim("Theorem 1, Eq. 5; the closed forms of Propositions 2–3 (Eqs. 32–41)",
         "The closed forms replace each first-layer weight $e^{S^{(1)}_{ij}}$ by $e^{\\mathbb E S^{(1)}_{ij}}$ "
         "and give the size of the recency effect from that.",
         "$S^{(1)}_{ij}$ keeps a spread $1-c^2$ ($c$ is the tokens' correlation, the paper's $\\alpha$) that "
         "does not shrink as $d$ grows. The sign and the monotonicity of the closed forms are right, their "
         "size is not: the mean contrast is the closed form's times a factor that tends to $e$ for isotropic "
         "inputs and to $e^{(1-c^2)^2/2}$ for $c > 0$ (adjusted closed form: {eq}`eq-rec-adjusted`).",
         "{ref}`sec-rec-factor`", "wrong number"),
    _kim("Appendix A.1 (proof of Theorem 1), Eq. 7",
         "The denominator $(e^{\\sqrt d} + i - 1)(e^{\\sqrt d} + i - 1)$.",
         "$(e^{\\sqrt d} + i - 1)(e^{\\sqrt d} + j - 1)$.",
         "{eq}`eq-rec-thm1`", _SLIP),
    _kim("Definition 1 and Theorem 1 (and Propositions 2–3)",
         "Theorem 1: \"the attention score of the second layer $S^{(2)}$ exhibit a recency bias\", with "
         "recency bias as Definition 1 states it of one score matrix: $S_{ij} > S_{ik}$ for all "
         "$i \\ge j > k$.",
         "The proofs establish it for the large-$d$ limit of $S^{(2)}$, a mean over sequences. A sampled "
         "$S^{(2)}$ scatters with a standard deviation of order one around that mean and satisfies "
         "Definition 1 only when its noise happens to be ordered; per sequence the bias is the probability "
         "that the nearer of two keys wins, the recency probability.",
         "{numref}`fig-rec-rp-layers`", "wrong conclusion"),
    _kim("Appendix A.2 (proof of Proposition 1), Eq. 14",
         "$\\langle x^{(0)}_i, x^{(0)}_i\\rangle = \\sqrt d$ for inputs drawn from $\\mathcal N(0, I_d/d)$.",
         "The squared norm is 1, and the first-layer score $S^{(1)}_{ii}$ is $1/\\sqrt d$. (Eq. 18 uses the "
         "value 1, contradicting Eq. 14.)",
         "{eq}`eq-rec-noln`", "wrong number"),
    _kim("Appendix A.2 (proof of Proposition 1), Eq. 15",
         "The diagonal first-layer weight is $e^{\\sqrt d}$: "
         "$A^{(1)}_{ii} = e^{\\sqrt d}/(e^{\\sqrt d} + i - 1)$.",
         "With the squared norm 1 the diagonal weight is $e^{1/\\sqrt d}$, and the first layer is nearly "
         "uniform, not nearly diagonal. $e^{\\sqrt d}$ belongs to a squared norm $d$; Eq. 14 would give $e$.",
         "{eq}`eq-rec-noln`", "wrong number"),
    _kim("Appendix A.2 (proof of Proposition 1), Eq. 16",
         "$x^{(1)}_i = \\sum_j A^{(1)}_{ij}x^{(1)}_j$, with $x^{(1)}$ on both sides.",
         "$x^{(1)}_i = \\sum_j A^{(1)}_{ij}x^{(0)}_j$.",
         "{eq}`eq-rec-noln`", _SLIP),
    _kim("Appendix A.2 (proof of Proposition 1), Eqs. 17–19",
         "Eq. 17 sets $S^{(2)}_{ij} = \\langle x^{(1)}_i, x^{(1)}_j\\rangle$, without the $1/\\sqrt d$ of the "
         "scores, and Eq. 19 concludes $S^{(2)}_{ij} = 1/(e^{\\sqrt d} + i - 1)$ for $j < i$.",
         "$S^{(2)}_{ij} = 1/\\bigl(\\sqrt d\\,(e^{1/\\sqrt d} + i - 1)\\bigr)$, which the simulation matches; the "
         "paper's values are many times too small. The conclusion, the same score for every earlier key "
         "and so no recency without LayerNorm, holds.",
         "{numref}`rec-tab-noln`", "wrong number"),
    _kim("Appendix A.3, Eq. 22",
         "$\\lVert x_i\\rVert_2^2 = \\sqrt d/(1-c)$.",
         "$\\lVert x_i\\rVert^2 \\to 1 + c/(1-c) = 1/(1-c)$. The later steps use the right "
         "first-layer score $\\sqrt d\\,c$, so the error does not propagate by itself; the norm of $x_i$ "
         "is what fixes the weight of the residual (Eqs. 25–41).",
         "{ref}`sec-rec-corrected`", "wrong number"),
    _kim("Appendix A.3, Eq. 22 (superscript)",
         "$\\lVert x^{(1)}_i\\rVert_2^2$ for the norm of the input.",
         "$\\lVert x^{(0)}_i\\rVert^2$.",
         "{eq}`eq-rec-corrected`", _SLIP),
    _kim("Appendix A.3, Eq. 23",
         "$\\langle y_i, y_j\\rangle = \\sqrt d\\,c$.",
         "$\\langle y_i, y_j\\rangle \\to d\\,c$; $\\sqrt d\\,c$ is the first-layer score $S^{(1)}_{ij}$, "
         "which the later steps use.",
         "{ref}`sec-rec-corrected`", _SLIP),
    _kim("Appendix A.3, Eq. 23 (superscript)",
         "$\\langle y^{(0)}_i, y^{(0)}_j\\rangle$.",
         "$\\langle y^{(1)}_i, y^{(1)}_j\\rangle$, the superscript the rest of the appendix uses.",
         "{eq}`eq-rec-corrected`", _SLIP),
    _kim("Appendix A.3, Eq. 24",
         "$x^{(1)}_i = \\sum_j A^{(1)}_{ij}y^{(1)}_j + \\omega x^{(1)}_j$: the residual inside the sum over $j$.",
         "The residual is the single term $\\omega x^{(0)}_i$ ($\\omega$ is the residual weight, the paper's "
         "$\\gamma$): $x^{(1)}_i = \\sum_j A^{(1)}_{ij}y^{(1)}_j + \\omega x^{(0)}_i$.",
         "{eq}`eq-rec-corrected`", _SLIP),
    _kim("Appendix A.3, Eqs. 25–41",
         "The residual term is $\\sqrt d\\,\\omega\\lVert x_i\\rVert\\,y_i$ (Eq. 25), a weight $d\\omega$ relative "
         "to the attention weights (Eq. 26), and a weight $\\omega$ from Eq. 33 on.",
         "The model adds $\\omega x_i = \\omega\\,y_i/\\sqrt{d(1-c)}$: the weight is "
         "$\\theta = \\omega/\\sqrt{d(1-c)}$, which tends to 0 as $d$ grows. Eq. 41 is the key profile "
         "$\\kappa(j)$ (the paper's $h(j)$) of a model whose residual adds $\\omega\\,\\mathrm{LN}(x_i)$; with a "
         "residual its levels and contrasts are off. The qualitative statements of Propositions 2 and 3 hold "
         "for either weight.",
         "{numref}`rec-tab-level`", "wrong number"),
    _kim("Appendix A.3, Eq. 34",
         "Factors $d$ inside the bracket: $2d\\,c(\\omega D_j + e^{\\sqrt d})\\,d\\,e^{c\\sqrt d}(j-1)$ and "
         "$d\\,c\\,e^{2c\\sqrt d}(j-2)(j-1)$.",
         "No factor $d$ inside the bracket; Eq. 35 drops them again.",
         "{eq}`eq-rec-corrected`", _SLIP),
    _kim("Appendix A.3, Eq. 39",
         "$2\\omega e$.",
         "$2\\omega e^{\\sqrt d}$.",
         "{eq}`eq-rec-corrected`", _SLIP),
    _kim("Figures 2 and 5 (the authors' `concept/alpha.ipynb`, commit `9538cbf`)",
         "The key profile $\\kappa(j)$ computed as `1 / np.sqrt(num / denom)`, without Eq. 41's factor "
         "$1/\\sqrt d$.",
         "The plotted curves are $\\sqrt d$ times Eq. 41. Since $S^{(2)} = \\phi(i)\\,\\kappa(j)$ (the paper's "
         "$g(i)\\,h(j)$) fixes $\\kappa$ only up to a constant, their shape and the ratio $\\kappa(j)/\\kappa(1)$ "
         "are unaffected.",
         "{numref}`fig-rec-h`", _SLIP),
    # Chowdhury: the full text with its appendix
    _chowdhury("cesaro", "§3.2, §5 and Figure 1 (the densities of Eqs. 5–6 used at $L = 2048$, $H = 24$)",
               "The densities $\\rho_H$ of Eqs. 5–6, derived as $L \\to \\infty$, stand for the profile of the "
               "24-layer model at $L = 2048$: Figure 1 shows them as \"the exact topological solutions for pure "
               "Causal Primacy (Eq. 5), Hybrid Residual Recency (Eq. 6)\", and §5 fits them to the measured "
               "profile.",
               "The limit is accurate beyond the first positions when the expected number of jumps $\\alpha H$ is "
               "small against $\\ln L$. At $H = 24 > \\ln 2048$ and $\\alpha$ near 1 it misses the exact profile "
               "near the start, where the discrete walk is absorbed at position 1, and at $\\alpha = 1$ also at the "
               "end: at $j = L-1$ the exact entry is about $H\\cdot H!/(2^H-1)$ times the limit's cell mass at "
               "every $L$, so the limit is not uniform in $x$ even as $L \\to \\infty$. The shape, a decay and a "
               "final spike, is the same.",
               "{ref}`sec-cesaro-limit`", "wrong number"),
    _chowdhury("cesaro", "§4.2, §5 (Figure 1), §6",
               "A U-shaped profile: \"massive causal compounding at $x=0$, a dead zone in the middle, and a "
               "massive $\\mathcal O(1)$ gradient teleportation spike via the residual connections at exactly "
               "$x=1$\" (§5).",
               "For every $\\alpha \\in (0, 1]$ and $H \\ge 2$ the exact profile decreases strictly from $j = 1$ "
               "to $j = L-1$, and so does the part of the paper's density (Eq. 6) without the point mass: a "
               "monotone decay and a single-token spike, with no minimum in the middle.",
               "{eq}`eq-cesaro-paths`", "wrong conclusion"),
    _chowdhury("cesaro", "§1, §4.2, §6, §7",
               "The middle of the context is \"a literal $\\mathcal O(1/(H-1)!)$ dead zone\" between the "
               "primacy tail and the recency spike.",
               "Above the identity regime the two exclude each other at the paper's depth: the middle density "
               "is of order $1/(H-1)!$ only when almost every layer mixes, and then the spike $(1-\\alpha)^H$ is "
               "negligible. The $(r-1)!$ of Eq. 6 suppresses the terms with many jumps, not the middle.",
               "{numref}`cesaro-tab-thresholds`", "wrong conclusion"),
    _chowdhury("cesaro", "§6",
               "\"The gradient used to learn to attend to middle-context positions is attenuated by the same "
               "positional factor as the forward signal. The optimizer receives an effective per-position "
               "learning rate $\\eta(x)\\propto\\rho_{H}(x)$.\"",
               "$\\eta \\propto \\rho_H$ holds for parameters that act on the input at a position (an embedding). "
               "The gradient of an attention logit, which decides where to attend, is the key's value against "
               "the average: nothing in it decays with the profile.",
               "{ref}`sec-cesaro-eta`", "wrong conclusion"),
    _chowdhury("jacobians", "§4.1",
               "The logarithmic divergence of $\\rho_H$ as $x \\to 0$ \"mathematically proves the Primacy effect "
               "(and the true origin of 'Attention Sinks,' proving they are forced by geometry before they are "
               "utilized by the optimizer)\".",
               "An attention sink is an attention weight: a trained model puts a large share of every query's "
               "attention on the first token. The primacy of $\\rho_H$ is derived with every attention weight "
               "uniform, from the number of causal paths back to early tokens; it forces no attention weight, and "
               "a property of the Jacobian at initialisation cannot prove one of the weights a model learns.",
               "{ref}`jac-sinks`", "wrong conclusion"),
    _chowdhury("jacobians", "§5 (the fit of Eqs. 5–6 to the measured profile)",
               "\"Our continuous equations achieve a Spearman correlation of $\\rho=0.99$ and a Wasserstein "
               "distance of $\\mathcal{W}=0.02$, confirming that our idealized Cesàro operator accurately captures "
               "the discrete network topology.\"",
               "A rank correlation does not tell the forms apart (the paper's Spearman $\\rho$ is the book's "
               "$r_S$): the paper's $g\\,(N^H)_{L,j}$ and the expectation the value pathway really has both fall "
               "monotonically to a last-token spike, and fitted to each other they reach an $r_S$ of at least "
               "{glue:text}`jac-e4-sp-min:.4f` with an $\\alpha$ that is not the weight of a jump. An $r_S$ of "
               "0.99 shows that the measured profile decreases, not that the Cesàro form describes it.",
               "{numref}`jac-tab-e4`", "wrong conclusion"),
    _chowdhury("jacobians", "App. E.3",
               "\"$S_{ij}=q_i\\cdot k_j/\\sqrt{d_k}\\to 0$ as $d_k\\to\\infty$\", so the score pathway vanishes at "
               "initialisation: \"the formal justification for the Softmax linearisation used in the main "
               "text\".",
               "At the fixed $\\sigma_0 = 0.02$ of `transformers` and of the paper the scores' standard deviation "
               "is $\\sigma_0^2 d$ whatever the head width $d_h$ (the paper's $d_k$): it grows with the width $d$, "
               "and the score pathway does not vanish. The limit needs an initialisation whose $\\sigma_0^2 d$ "
               "goes to 0; with $\\sigma_0 \\propto 1/\\sqrt d$ it stays of order one.",
               "{ref}`jac-pathways`", "wrong conclusion"),
    _chowdhury("jacobians", "App. E.4",
               "$\\rho(j) \\approx g^{H}\\,(N^{H})_{L,j}$: $W_V$ \"provides a uniform scalar gain that is "
               "identical at every position\".",
               "The gain $g$ (the paper's $\\gamma$) is the same at every position, but with random $W_VW_O$ of "
               "mean zero the paths with different sets of jumps add in quadrature: "
               "$\\mathbb E\\lVert J_j\\rVert^2$ is a sum of squared path weights over the number of jumps. Fitted "
               "to it, the paper's form returns an $\\alpha$ that is not the jump weight. Both forms decay "
               "monotonically to a last-token spike.",
               "{numref}`jac-tab-e4`", "wrong number"),
    _chowdhury("jacobians", "§4.2 and App. E.5",
               "\"The empirical Jacobian norm converges to the theoretical prediction as "
               "$\\mathcal O(1/\\sqrt{H_{\\text{heads}}})$. Increasing the number of heads therefore tightens "
               "the architectural prior.\"",
               "With the same attention in every head the heads' value pathways add up to "
               "$\\sum_{a=1}^{h} W_V^{a}W_O^{a} = W_VW_O$, one head of the full width: at fixed width the number "
               "$h$ of heads (the paper's $H_{\\text{heads}}$) changes neither the expected profile nor its spread "
               "across initialisations; the width sets the spread.",
               "{ref}`jac-heads`", "wrong conclusion"),
)
