"""The switchable decoder of chapter 9: each switch does what it says, each measurement is what it claims."""

import numpy as np
import pytest
import torch

import attention_geometry as ag
from attention_geometry.synthesis import (
    SynthConfig, cesaro_collapse_rate, decoder_forward, default_variants, influence_profile, init_weights,
    measure, rope, synth_inputs)

D, N = 8, 6


def _setup(seed=0, layers=3):
    w = init_weights(D, layers, generator=torch.Generator().manual_seed(seed))
    X = synth_inputs(4, N, D, 0.5, generator=torch.Generator().manual_seed(seed + 1))
    return w, X


def test_causal_mask_makes_outputs_independent_of_later_inputs():
    w, X = _setup()
    Y = X.clone()
    Y[:, 3:] += torch.randn(Y[:, 3:].shape, generator=torch.Generator().manual_seed(5), dtype=Y.dtype)
    cfg = SynthConfig(n_layers=3, n_heads=2)
    a, b = decoder_forward(X, w, cfg)[0], decoder_forward(Y, w, cfg)[0]
    torch.testing.assert_close(a[:, :3], b[:, :3])
    assert not torch.allclose(a[:, 3:], b[:, 3:])
    bidir = SynthConfig(n_layers=3, n_heads=2, mask="complete")
    assert not torch.allclose(decoder_forward(X, w, bidir)[0][:, :3], decoder_forward(Y, w, bidir)[0][:, :3])


def test_window_masks_scores_with_the_book_convention():
    w, X = _setup()
    S = decoder_forward(X, w, SynthConfig(n_layers=1, n_heads=2, mask="one_sided", window=2))[1][:, 0]
    i, j = torch.meshgrid(torch.arange(N), torch.arange(N), indexing="ij")
    allowed = (j <= i) & (j >= i - 2)  # a window of width 2: keys i-2, i-1, i
    assert torch.isinf(S[..., ~allowed]).all() and torch.isfinite(S[..., allowed]).all()


def test_residual_weight_one_removes_the_skip_path():
    w, X = _setup()
    cfg = SynthConfig(n_layers=1, n_heads=2, alpha=1.0)
    H = decoder_forward(X, w, cfg)[0]
    p = influence_profile(X[:1], w, cfg)
    assert p.shape == (1, N) and abs(float(p.sum()) - 1) < 1e-12
    H_half = decoder_forward(X, w, SynthConfig(n_layers=1, n_heads=2, alpha=0.5))[0]
    torch.testing.assert_close(H_half, 0.5 * X + 0.5 * H)  # (1 - alpha) X + alpha * attention


def test_rope_rotates_pairs_and_keeps_norms():
    X = torch.randn(2, 5, 4, dtype=torch.float64)
    R = rope(X)
    torch.testing.assert_close(R.norm(dim=-1), X.norm(dim=-1))
    torch.testing.assert_close(R[:, 0], X[:, 0])  # position 0: no rotation
    q, k = rope(X[:1]), rope(X[1:])
    # relative: scores depend on the offset only (shift both by one position)
    Xs = torch.cat([torch.zeros(2, 1, 4, dtype=X.dtype), X], dim=1)
    torch.testing.assert_close(q @ k.transpose(-1, -2), rope(Xs[:1])[:, 1:] @ rope(Xs[1:])[:, 1:].transpose(-1, -2))


def test_influence_profile_respects_the_receptive_field():
    w, X = _setup()
    p = influence_profile(X[:1], w, SynthConfig(n_layers=2, n_heads=2, mask="one_sided", window=2))[0]
    assert float(p[: N - 5].max()) == 0.0 and float(p[N - 5]) > 0.0  # 2 layers of window 2 reach back 4


@pytest.mark.parametrize("kwargs", [dict(norm="batchnorm"), dict(n_layers=0), dict(mask="one_sided"),
                                    dict(window=2), dict(alpha=0.0), dict(alpha=1.5), dict(n_heads=0)])
def test_bad_configs_are_refused(kwargs):
    with pytest.raises(ValueError):
        SynthConfig(**kwargs).check()


def test_measure_returns_estimates_and_is_deterministic():
    kw = dict(d=D, n=10, batch=6, jac_batch=2, seed=3)
    m1, m2 = measure(SynthConfig(n_layers=2, n_heads=2), **kw), measure(SynthConfig(n_layers=2, n_heads=2), **kw)
    for key in ("rp", "mu_rel", "unselectable", "first_mid", "last_mid", "entropy"):
        assert isinstance(m1[key], ag.Estimate) and m1[key] == m2[key]
    assert 0 <= m1["rp"].value <= 1 and 0 <= m1["unselectable"].value <= 1 and m1["entropy"].value <= 1 + 1e-12
    win = measure(SynthConfig(n_layers=2, n_heads=2, mask="one_sided", window=2), **kw)
    assert win["first_mid"].value == 0.0  # beyond the receptive field: no influence at all


def test_weights_per_sequence_are_each_sequence_through_its_own_draw():
    (w1, X), (w2, _) = _setup(0), _setup(7)
    cfg = SynthConfig(n_layers=3, n_heads=2, rope=True)
    mixed = [tuple(torch.stack([a, a, b, b]) for a, b in zip(l1, l2)) for l1, l2 in zip(w1, w2)]
    out = decoder_forward(X, mixed, cfg)
    for got, first, second in zip(out, decoder_forward(X[:2], w1, cfg), decoder_forward(X[2:], w2, cfg)):
        torch.testing.assert_close(got, torch.cat([first, second]))
    p = influence_profile(X, mixed, cfg)
    torch.testing.assert_close(p, torch.cat([influence_profile(X[:2], w1, cfg), influence_profile(X[2:], w2, cfg)]))


def test_measure_spreads_the_sequences_over_weight_draws():
    """With n_draws the estimates are over the draws (each draw's mean over its sequences), and the
    first draw is the one-draw measurement's weights on the first sequences."""
    cfg = SynthConfig(n_layers=2, n_heads=2)
    kw = dict(d=D, n=10, batch=12, jac_batch=4, seed=3)
    one, many = measure(cfg, **kw), measure(cfg, n_draws=4, **kw)
    assert many["n_draws"] == 4 and many["samples"]["rp"].shape == (4,) and many["samples"]["first_mid"].shape == (4,)
    for key in ("rp", "mu_rel", "first_mid"):
        est = many[key]
        assert isinstance(est, ag.DrawEstimate) and est.n_draws == 4 and est.df == 3
        assert est.value == pytest.approx(many["samples"][key].mean())
        assert est.draw_means == pytest.approx(tuple(many["samples"][key]))
    assert one["rp"].n_draws == 1 and one["samples"]["rp"].shape == (12,)
    X0 = synth_inputs(12, 10, D, 0.5, generator=4)
    S = decoder_forward(X0[:3], init_weights(D, 2, generator=3), cfg)[1][:, -1]  # draw 0: the one-draw weights
    rp0 = ag.recency_fraction(S.reshape(-1, 10, 10), ag.triples(10)).reshape(3, -1).mean()
    assert many["samples"]["rp"][0] == pytest.approx(float(rp0)) == one["samples"]["rp"][:3].mean()
    assert many["log_last_mid"].value == pytest.approx(np.log(many["samples"]["last_mid"]).mean())
    change = ag.paired_change(measure(SynthConfig(n_layers=2, n_heads=2, rope=True), n_draws=4, **kw), many, "rp")
    assert change.n_draws == 4 and change.draw_means == pytest.approx(
        tuple(measure(SynthConfig(n_layers=2, n_heads=2, rope=True), n_draws=4, **kw)["samples"]["rp"]
              - many["samples"]["rp"]))
    with pytest.raises(ValueError, match="jac_batch"):
        measure(cfg, n_draws=5, **kw)


@pytest.mark.parametrize("alpha, H", [(0.1, 300), (0.5, 40), (1.0, 25)])
def test_cesaro_rate_is_the_second_eigenvalue_and_predicts_collapse(alpha, H):
    L = 12
    Nmat = ag.residual_cesaro_matrix(L, alpha)
    assert sorted(np.linalg.eigvals(Nmat).real)[-2] == pytest.approx(cesaro_collapse_rate(alpha))
    limit = np.outer(np.ones(L), np.eye(L)[0])  # every row e_1: collapse onto the first token
    gap = np.abs(np.linalg.matrix_power(Nmat, H) - limit).max()
    later = np.abs(np.linalg.matrix_power(Nmat, H + 10) - limit).max()
    assert later / gap == pytest.approx(cesaro_collapse_rate(alpha) ** 10, rel=0.05)


def test_default_variants_change_one_switch_each():
    v = default_variants()
    base = v.pop("baseline")
    for name, cfg in v.items():
        diff = [f for f in base.__dataclass_fields__ if getattr(cfg, f) != getattr(base, f)]
        assert diff and (len(diff) == 1 or set(diff) == {"mask", "window"}), name


ROLES = {"baseline": "b", "no_mask": "m", "window": "w", "no_norm": "n", "rmsnorm": "r", "no_residual": "a",
         "deeper": "h", "rope": "p"}


def _fake_results(flip: bool):
    """Results as synthesis_experiment returns them, with every effect in (or against) its claimed direction."""
    rng = np.random.default_rng(0)
    sign = -1.0 if flip else 1.0

    def res(first=1.0, last=1.0, mu=0.5, rp=0.6, window_first=0.0, unsel=0.1):
        samples = {"unselectable": unsel + 0.01 * rng.standard_normal(32),
                   "first_mid": np.exp(first + 0.01 * rng.standard_normal(32)),
                   "last_mid": np.exp(last + 0.01 * rng.standard_normal(32)),
                   "mu_rel": mu + 0.001 * rng.standard_normal(32), "rp": rp + 0.001 * rng.standard_normal(32)}
        out = {k: ag.mean_estimate(v) for k, v in samples.items()}
        out["samples"] = samples
        if window_first is not None:
            samples["first_mid"] = np.full(32, window_first)
            out["first_mid"] = ag.Estimate(window_first, 0.0)
        return out

    base = res(first=sign * 1.0, last=sign * 1.0, window_first=None)
    return {"b": base, "m": res(first=sign * 0.5, window_first=None),
            "w": res(window_first=0.0 if not flip else 0.3), "n": res(rp=0.6 - sign * 0.1, unsel=0.1 + sign * 0.2, window_first=None),
            "r": res(window_first=None), "a": res(last=sign * 0.5, mu=0.5 - sign * 0.1, window_first=None),
            "h": res(last=sign * 0.5, mu=0.5 - sign * 0.1, window_first=None),
            "p": res(rp=0.6 + sign * 0.1, window_first=None)}


def test_component_effects_follow_the_paired_changes():
    held = {e.key: e.verdict.label for e in ag.component_effects(_fake_results(False), ROLES)}
    flipped = {e.key: e.verdict.label for e in ag.component_effects(_fake_results(True), ROLES)}
    assert set(held) == {"mask-primacy", "residual-spike", "residual-collapse", "depth-spike", "depth-collapse",
                         "ln-recency", "norm-selectable", "rope-recency", "window-field"}
    assert set(held.values()) == {"reproduced"}
    assert flipped["mask-primacy"] == flipped["residual-spike"] == flipped["window-field"] == "refuted"
    assert flipped["norm-selectable"] == "refuted"


def test_synthesis_claims_can_hold_or_fail_and_name_their_sources():
    from attention_geometry.stats import Estimate

    held = ag.synthesis_claims(_fake_results(False), ROLES, Estimate(-0.69, 0.001), settings="toy")
    failed = ag.synthesis_claims(_fake_results(True), ROLES, Estimate(0.01, 0.001), settings="toy")
    by_id = {c.id: c for c in held}
    assert {c.verdict.label for c in held} == {"reproduced"}
    assert failed[0].verdict.label == "refuted" and failed[2].verdict.label == "differs"
    # a slow decay is not exponential collapse: its fitted log-rate misses the constant, which a sign cannot see
    slow = ag.synthesis_claims(_fake_results(False), ROLES, Estimate(-0.05, 0.001), settings="toy")[2]
    assert slow.verdict.label == "differs"
    assert by_id["kim-abstract-recency-full-decoder"].source == "abstract"
    assert not by_id["wu-abstract-pure-masked-collapse"].at_paper_settings  # the Cesàro model is not Wu's setup


def test_each_cited_claim_measures_its_rows_quantity():
    """The component table's "proved or measured in" column: every cited claim carries its row's quantity
    tag, is in the book's ledger, and comes from a chapter that measures that quantity."""
    import json
    from pathlib import Path

    golden = json.loads((Path(__file__).parent / "golden_ledger.json").read_text())
    assert ag.cited_mismatches() == []
    rows = {e.key for e in ag.component_effects(_fake_results(False), ROLES)}
    assert rows == set(ag.COMPONENT_QUANTITY) == set(ag.COMPONENT_SOURCES)
    assert all(e.measures is ag.COMPONENT_QUANTITY[e.key] for e in ag.component_effects(_fake_results(False), ROLES))
    for cid, tag in ag.LEDGER_QUANTITY.items():
        assert cid in golden, cid
        assert golden[cid]["chapter"] in ag.QUANTITY_CHAPTERS[tag], (cid, tag)


def test_a_miscited_claim_is_caught(monkeypatch):
    monkeypatch.setitem(ag.verdicts.COMPONENT_SOURCES, "rope-recency", ("rope",))  # an influence claim
    monkeypatch.setitem(ag.verdicts.COMPONENT_SOURCES, "residual-collapse", ("skip-hurts",))  # absolute mu
    assert {(r, c) for r, c, *_ in ag.cited_mismatches()} == {("rope-recency", "rope"),
                                                             ("residual-collapse", "skip-hurts")}


def _exact_power(L, H):
    from attention_geometry.cesaro import cesaro_matrix_exact, matrix_power_exact

    return matrix_power_exact(cesaro_matrix_exact(L), H)


@pytest.mark.parametrize("L", [3, 6, 9])
@pytest.mark.parametrize("H", [1, 2, 3, 4])
def test_one_operator_paths_and_scores_without_a_norm_in_exact_arithmetic(L, H):
    """prop-syn-operator (1) and (2): rows of M^H are 1/i for H = 1 and strictly decreasing for H >= 2;
    the Gram rows of M^H M^H^T are 1/i for H = 1 and strictly decreasing in j < i for H >= 2."""
    from fractions import Fraction

    P = _exact_power(L, H)
    G = [[sum(P[i][t] * P[j][t] for t in range(L)) for j in range(L)] for i in range(L)]
    for i in range(L):
        row, gram = P[i][: i + 1], G[i][: i + 1]
        if H == 1:
            assert row == [Fraction(1, i + 1)] * (i + 1) and gram == [Fraction(1, i + 1)] * (i + 1)
        else:
            assert all(a > b for a, b in zip(row, row[1:]))
            assert all(a > b for a, b in zip(gram[:-1], gram[1:-1]))  # keys j < i
    c = 0.3  # the library's Gram matrix is c 11^T + (1 - c) M^H M^H^T
    expected = np.array([[c + (1 - c) * float(g) for g in r] for r in G])
    np.testing.assert_allclose(ag.uniform_gram(L, H, c, normalised=False), expected, rtol=1e-12)


@pytest.mark.parametrize("c", [0, "1/3", "7/8"])
def test_one_operator_scores_with_layernorm_closed_form_in_exact_arithmetic(c):
    """prop-syn-operator (3): (S^(2)_ij / sqrt d)^2 = (c + (1-c)/i) / (c + (1-c)/j) for j <= i, exactly,
    increasing in j; the library's uniform_scores agrees to rounding."""
    from fractions import Fraction

    L, c = 8, Fraction(c)
    MMt = [[sum(m[t] * n[t] for t in range(L)) for n in _exact_power(L, 1)] for m in _exact_power(L, 1)]
    G = [[c + (1 - c) * MMt[i][j] for j in range(L)] for i in range(L)]
    S = ag.uniform_scores(L, 1, float(c), normalised=True)
    for i in range(1, L + 1):
        for j in range(1, i + 1):
            cos2 = G[i - 1][j - 1] ** 2 / (G[i - 1][i - 1] * G[j - 1][j - 1])
            assert cos2 == (c + (1 - c) / i) / (c + (1 - c) / j)
            assert abs(S[i - 1, j - 1] ** 2 - float(cos2)) < 1e-12
        assert np.all(np.diff(S[i - 1, :i]) > 0) or i == 1


def test_tied_weights_are_kims_identity_weights_up_to_a_rotation():
    W = ag.init_weights(8, 2, generator=0, tied=True)
    for Wq, Wk, Wv, Wo in W:
        assert torch.equal(Wq, Wk)
        torch.testing.assert_close(Wq @ Wq.T, torch.eye(8, dtype=Wq.dtype))
        assert torch.equal(Wv, torch.eye(8, dtype=Wv.dtype)) and torch.equal(Wo, Wv)
    assert not torch.equal(W[0][0], ag.init_weights(8, 2, generator=1, tied=True)[0][0])


def test_gaussian_yardstick_is_zero_up_to_d_plus_one_keys():
    assert ag.gaussian_unselectable(9, 8, 32, 0).value == pytest.approx(2 / 36)  # no set: (0 + 2)/(32 + 4)
    assert ag.gaussian_unselectable(64, 8, 32, 0).value > 0.5


def _tied(rp_ln, rp_none, first):
    from attention_geometry.draws import over_draws

    def m(rp):
        return {"rp": over_draws(list(rp + 0.01 * np.arange(8))), "log_first_mid": over_draws(list(first + np.arange(8) / 10))}
    return {"layernorm": m(rp_ln), "none": m(rp_none)}


def test_one_operator_claim_can_hold_or_fail():
    held = ag.one_operator_claim(_tied(0.6, 0.4, 2.0), settings="s")
    assert held.verdict.label == "reproduced" and held.claim_kind == "reading"
    assert ag.one_operator_claim(_tied(0.4, 0.4, 2.0), settings="s").verdict.label == "refuted"


def test_learned_innate_claim_can_hold_fail_or_be_untested():
    """The trained decoder's replicate is its training seed: over eight seeds on their side the reading
    holds or fails; on five seeds, on noise, or from a stored run's plain estimate it is not decided."""
    from attention_geometry.draws import over_draws

    rng = np.random.default_rng(5)
    path = over_draws(list(1.0 + np.arange(8) / 10))
    seeds = lambda centre, sd, k=8: over_draws(centre + rng.normal(0, sd, k))
    before = seeds(0.4998, 0.0005)
    rule = lambda after, before=before: ag.learned_innate_claim(after, before, path, settings="s").verdict.label
    held = ag.learned_innate_claim(seeds(0.69, 0.03), before, path, settings="s")
    assert held.verdict.label == "reproduced" and held.claim_kind == "reading"
    assert rule(seeds(0.40, 0.03)) == "refuted"
    assert rule(seeds(0.69, 0.03), before=seeds(0.56, 0.005)) == "refuted"  # recency already at initialisation
    assert rule(seeds(0.69, 0.03, 5), before=seeds(0.4998, 0.0005, 5)) == "not decided"  # five seeds
    noise = [rule(seeds(0.5, 0.05)) for _ in range(200)]
    assert sum(lab != "not decided" for lab in noise) <= 4
    E = ag.Estimate  # a stored run of five seeds that kept only its means
    assert rule(E(0.69, 0.013, 4), before=E(0.4998, 0.0002, 4)) == "not decided"
    assert ag.learned_innate_claim(None, None, path, settings="s").verdict.label == "not tested"


def test_effective_alpha_is_alpha_at_unit_gain_and_grows_with_the_gain():
    assert ag.effective_alpha(0.5, 1.0) == pytest.approx(0.5)
    g = np.array([0.5, 1.0, 2.0])
    a = ag.effective_alpha(0.25, g)
    assert np.all(np.diff(a) > 0) and ag.effective_alpha(1.0, g) == pytest.approx(np.ones(3))


def test_effective_residual_matches_measure_and_the_nominal_operator():
    cfg = ag.SynthConfig(norm="none", alpha=0.5, n_layers=2, n_heads=2)
    kw = dict(d=8, n=10, batch=8, anisotropy=0.5, seed=3, n_draws=2)
    eff = ag.effective_residual(cfg, max_layers=4, **kw)
    m = ag.measure(cfg, jac_batch=2, max_layers=4, **kw)
    assert eff["mu_rel"].value == pytest.approx(m["mu_rel"].value, rel=1e-10)
    assert len(eff["alpha_eff"]) == 2 and 0 < eff["skip"].value < 1
    # without a residual the weight is 1 whatever the gain, and N(alpha_eff) is N(1) = M
    pure = ag.effective_residual(ag.SynthConfig(norm="none", alpha=1.0, n_layers=2, n_heads=2), max_layers=4, **kw)
    assert all(a.value == pytest.approx(1.0) for a in pure["alpha_eff"])
    assert pure["mu_effective"].value == pytest.approx(pure["mu_nominal"].value, rel=1e-10)


def test_effective_spike_claim_can_agree_or_differ():
    """The predicted and measured spike changes are paired by weight draw: a draw effect they share
    cancels; over eight draws they agree or differ, on five or on noise nothing is decided."""
    from attention_geometry._checks import ArgumentTypeError
    from attention_geometry.draws import over_draws

    rng = np.random.default_rng(6)

    def rule(gap, sd=0.05, k=8):
        draw = 2.0 + rng.normal(0, 0.5, k)  # what the draw does to both: larger than the gap's noise
        pred, meas = over_draws(draw), over_draws(draw + gap + rng.normal(0, sd, k))
        return ag.effective_spike_claim(pred, meas, settings="s").verdict.label

    assert rule(0.01) == "reproduced" and rule(1.5) == "differs"
    assert rule(0.01, k=5) == "not decided"
    noise = [rule(0.5, sd=0.5) for _ in range(200)]  # at the tolerance, noisy: no side
    assert sum(lab != "not decided" for lab in noise) <= 4
    with pytest.raises(ArgumentTypeError, match="paired by draw"):
        ag.effective_spike_claim(ag.Estimate(2.0, 0.03), ag.Estimate(2.01, 0.05), settings="s")


def test_design_responses_pair_the_cells_of_one_width_by_draw_and_resume(tmp_path):
    from dataclasses import replace

    from attention_geometry.checkpoint import CheckpointStore

    base = ag.SynthConfig(n_layers=2, n_heads=2)

    def cell(alpha, d):
        return replace(base, alpha=alpha), d

    kw = dict(n=8, batch=2, jac_batch=2, seed=3, n_draws=3)
    store = CheckpointStore(tmp_path)
    Y = ag.design_responses([[0.5, 1.0], [8, 16]], cell, store=store, **kw)
    assert set(Y) == set(ag.DESIGN_RESPONSES)
    assert all(v.shape == (3, 2, 2) for v in Y.values())
    assert np.all((Y["first_share"] >= 0) & (Y["first_share"] <= 1))
    # the cells of one width share each draw's weights and inputs: the same draw measured twice agrees
    again = ag.design_responses([[0.5], [8]], cell, **kw)
    np.testing.assert_allclose(again["mu_rel"][:, 0, 0], Y["mu_rel"][:, 0, 0])
    # resumed from the checkpoint without computing anything
    mark = store.mark()
    resumed = ag.design_responses([[0.5, 1.0], [8, 16]], cell, store=store, **kw)
    assert store.since(mark)[0] == 0
    np.testing.assert_array_equal(resumed["rp_visible"], Y["rp_visible"])


def test_the_window_keeps_the_first_input_out_of_reach_in_every_design_cell():
    from dataclasses import replace

    def cell(mask):
        return replace(ag.SynthConfig(n_layers=2, n_heads=2), mask=mask, window=2 if mask == "one_sided" else None), 8

    Y = ag.design_responses([["causal", "one_sided"]], cell, n=12, batch=2, jac_batch=2, n_draws=2)
    assert np.all(Y["first_share"][:, 1] == 0.0) and np.all(Y["first_share"][:, 0] > 0.0)  # H w = 4 < L - 1 = 11


def test_the_stored_design_is_read_back_from_a_paper_runs_values():
    from attention_geometry.book.chapters import synthesis as chapter

    data = {"nrm": {"factors": [], "Y": {}}, "dw": {"factors": [], "Y": {}}}
    assert chapter.stored_design({"syn-design-data": data}) is data
    assert chapter.stored_design(None) is None and chapter.stored_design({"syn-design-data": "text"}) is None
