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
