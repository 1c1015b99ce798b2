"""Chapter 5's computed words flip with the numbers they describe, and its constructions check
out at small sizes (no chapter execution)."""

import numpy as np

from attention_geometry.book.chapters import layernorm_equilibria as ch


def test_proof_step_words():
    assert ch.proof_steps_words(True) == "hold on every run"
    assert ch.proof_steps_words(False) == "do not hold on every run"
    assert ch.heights_words(True) == "never" and ch.heights_words(False) == "sometimes"


def test_the_largest_centred_rank_against_d_minus_one():
    assert ch.max_rank_words(3, 4) == "= d − 1"
    assert ch.max_rank_words(2, 4) == "(d − 1 = 3)"


def test_the_rank_construction_passes_its_checks_with_and_without_centring():
    for centre in (False, True):
        _, rows = ch.rank_constructions(4, 3, centre)
        assert sorted(rows) == list(range(1, min(4, 3 - centre) + 1))
        assert all(r["ok"] and r["built"] == 2 ** k for k, r in rows.items())


def test_tables_show_no_nan_or_none():
    _, rows = ch.rank_constructions(3, 3, False)
    text = ch.constructions_table({"no centring": rows})
    text += ch.ranks_table({"a": np.array([1, 1, 2]), "b": np.array([1, 3, 3])})
    text += ch.final_mu_table({("s = 1", "causal"): 1e-9}, {("s = 1", "causal"): 1e-14})
    assert "nan" not in text.lower() and "None" not in text
    assert "| rank 3 | 0.000 | 0.667 |" in text


def _summary(stable, equilibria, below, above, radius=(2.0, 2.0), growth=None):
    return {"equilibria": equilibria, "stable": stable, "radius": radius, "stable directions": below,
            "unstable directions": above, "growth": growth}


def test_instability_words_name_what_each_rank_is():
    rows = {1: _summary(0, 2, (0, 0), (18, 18)), 2: _summary(0, 4, (5, 5), (13, 13)), 3: _summary(0, 8, (9, 9), (9, 9))}
    assert ch.instability_words(rows) == ("those of rank 1 are repellers, unstable in every direction; those of ranks "
                                          "2–3 are saddles, stable in some directions and unstable in others")
    rows = {1: _summary(1, 1, (18, 18), (0, 0), (0.5, 0.5), 1.0), 2: _summary(1, 2, (5, 18), (0, 13))}
    assert ch.instability_words(rows) == ("those of rank 1 are asymptotically stable; those of rank 2 are partly "
                                          "stable")
    assert ch.stable_words(True).startswith("exist at every rank")
    assert ch.stable_words(False).startswith("do not pass every check")
    assert ch.basin_words(0.005, 0.1).startswith("every basin is small")
    assert ch.basin_words(0.2, 0.1).startswith("not every basin")


def test_the_stable_construction_and_its_table_at_small_sizes():
    from attention_geometry import ln_dynamics as ld

    for centre in (False, True):
        rows = ch.stable_constructions(4, 3, centre)
        assert sorted(rows) == list(range(1, 3 - centre + 1)) and all(r["ok"] for r in rows.values())
    rows = ch.stable_constructions(3, 3, False)
    summary = ch.stability_summary({k: r["W"] for k, r in rows.items()}, {k: r["X"] for k, r in rows.items()},
                                   False, 50)
    assert all(s["stable"] == 1 and s["radius"][1] < 1 for s in summary.values())
    W = ld.rank_construction_wv(3, 3)
    unstable = ch.stability_summary(W, ch.by_rank(np.concatenate([ld.rank_k_equilibria(W, 3, k) for k in (1, 2)]), 3),
                                    False, 50)
    assert sorted(unstable) == [1, 2] and all(s["stable"] == 0 and s["growth"] is None for s in unstable.values())
    text = ch.stability_table({"(d)": summary, "(c)": unstable},
                              {"(d)": {k: ch.basin_share(np.r_[np.full(3, k), np.ones(97)], k) for k in summary}})
    assert "nan" not in text.lower() and "None" not in text
    assert "measure zero (none stable)" in text and "| (d) | 2 | 1 | 1 |" in text


def test_a_basin_share_of_none_or_a_few_inputs_stays_inside_zero_one():
    """0/n and 2/2000 (the basins of construction (d)): the exact interval starts at 0 or above, where
    a normal interval around the fraction went below 0; the table and the ledger's text show it."""
    none, few = ch.basin_share(np.ones(2000), 2), ch.basin_share(np.r_[2, 2, np.ones(1998)], 2)
    for est, k in ((none, 0), (few, 2)):
        lo, hi = est.interval()
        assert 0.0 <= lo <= est.value <= hi <= 1.0 and est.value == k / 2000 and est.se > 0
    assert none.interval()[0] == 0.0 and few.interval()[0] > 0.0
    assert ch.basin_share(np.full(10, 2), 2).interval()[1] == 1.0
    assert ch.share_text(few) == "2/2,000 = 0.001, exact 95 % interval [0.0001211, 0.003608]"
    assert "-" not in ch.share_text(none)
    table = ch.stability_table({"(d)": {2: _summary(1, 1, (3, 3), (0, 0), (0.5, 0.5), 1.0)}}, {"(d)": {2: none}})
    assert "| 0.0000 [0.0000, 0.0018] |" in table


def test_the_ablation_stand_in_trains_measures_and_tabulates():
    import types

    import torch

    from attention_geometry.models import tiny_decoder as td

    texts = ["the quick brown fox jumps over the lazy dog " * 20] * 3
    P = types.SimpleNamespace(ablation_steps=2, seq_len=16)
    training = ch.ablation_training(P)
    assert (training.steps, training.schedule_steps, training.seq_len, training.batch) == (2, 2, 16, 16)
    wins = torch.stack(td.byte_windows(texts, 4, 16, 16, 0))
    runs = {norm: [ch.ablation_geometry(norm, texts, wins, training, s) for s in (0, 1)] for norm in ("layernorm", "none")}
    for r in runs["none"] + runs["layernorm"]:
        assert set(r) == {"full", "sigma", "mu", "cos", "loss", "layers"} and 0 <= r["full"] <= 1 and r["loss"] > 0
        assert set(r["layers"]) == set(ch.ABLATION_STATISTICS) and r["layers"]["rel_mu"].shape == (5, 4)
    text = ch.ablation_table(runs)
    assert "nan" not in text.lower() and "| none | 2 |" in text
    effects = ch.ablation_effects(runs)
    assert len(effects["per_layer"]["sigma_min"]) == 5
    layers = ch.ablation_layer_table(runs, effects)
    assert "nan" not in layers.lower() and layers.count("\n") == 6  # header, rule, five layers


def _fake_ablation(rng, shift, n_seeds=8, n_windows=12):
    """Per-seed ablation records whose LayerNorm decoder's statistics sit ``shift`` above the other's."""
    def record(delta):
        layers = {k: rng.normal(1.0 + delta, 0.1, (5, n_windows)) for k in ch.ABLATION_STATISTICS}
        return {"layers": layers}
    return {"layernorm": [record(shift) for _ in range(n_seeds)], "none": [record(0.0) for _ in range(n_seeds)]}


def test_ablation_effects_see_a_real_difference_either_way_and_none_in_noise():
    import attention_geometry.verdicts as vd

    rng = np.random.default_rng(0)

    def label(shift, key):
        e = ch.ablation_effects(_fake_ablation(rng, shift))[key]
        return vd.draws_verdict(vd.sign_verdict(e, +1), e).label

    for key in ("mu", "sigma"):
        assert label(0.2, key) == "reproduced" and label(-0.2, key) == "refuted"
    # pure noise: the worst layer, chosen on the other half of the windows, is not pulled down by it
    noise = [ch.ablation_effects(_fake_ablation(rng, 0.0)) for _ in range(200)]
    worst = [e["sigma"].value for e in noise]
    assert abs(np.mean(worst)) < 3 * np.std(worst) / np.sqrt(200)
    # the null simulation: on 200 pure-noise data sets the rule decides no more often than its 5 % level
    decisive = [vd.draws_verdict(vd.sign_verdict(e[k], +1), e[k]).label != "not decided"
                for e in noise for k in ("mu", "sigma")]
    assert np.mean(decisive) <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / len(decisive))


def test_causal_over_draws_pairs_each_input_under_both_masks_and_replicates_over_draws():
    import types

    import torch

    from attention_geometry import ln_dynamics as ld

    P = types.SimpleNamespace(seed=0, d_a=4, n_tokens_a=6, n_steps_a=10, qk_scales=[0.0625, 10.0])
    X0 = ld.hemisphere_inputs(16, 6, 4, torch.Generator().manual_seed(1))
    est = ch.causal_over_draws(X0, P, 8)
    assert set(est) == {"s = 0.0625", "s = 10"}
    assert all(e.n_draws == 8 and np.isfinite(e.value) for e in est.values())
    assert ch.causal_over_draws(X0[:3], P, 8)["s = 10"].n_draws == 3  # one draw per input when inputs are few
    # the same seed gives the same draws: the estimate is reproducible
    assert ch.causal_over_draws(X0, P, 8)["s = 10"].value == est["s = 10"].value


def test_the_ablation_sentence_says_what_its_rows_decide():
    rng = np.random.default_rng(4)
    assert "further from rank one than those without" in ch.ablation_words(ch.ablation_verdicts(ch.ablation_effects(_fake_ablation(rng, 0.2))))
    assert "nearer rank one" in ch.ablation_words(ch.ablation_verdicts(ch.ablation_effects(_fake_ablation(rng, -0.2))))
    few = ch.ablation_words(ch.ablation_verdicts(ch.ablation_effects(_fake_ablation(rng, 0.2, n_seeds=4))))
    assert "do not agree" in few and "they do not agree" in few
