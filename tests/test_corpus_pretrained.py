"""The default corpus and the offline pretrained decoder (SmolLM2-135M)."""

import re
from pathlib import Path

import pytest
import torch

from attention_geometry.models import corpus, pretrained
from attention_geometry.models.corpus import byte_batches, corpus_facts, load_corpus, token_batches
from attention_geometry.words import describe_corpus

ROOT = Path(__file__).resolve().parents[1]


def test_default_corpus_is_deterministic_english_prose():
    paragraphs = load_corpus()
    assert paragraphs == load_corpus() == list(corpus._extract_stdlib_corpus())  # the kept text is the extracted
    assert len(paragraphs) > 1000 and sum(map(len, paragraphs)) > 200_000
    assert len(set(paragraphs)) == len(paragraphs)
    text = " ".join(paragraphs).lower()
    words = re.findall(r"[a-z]+", text)
    common = {"the", "of", "and", "is", "to", "a", "in", "be", "that", "it"}
    assert sum(w in common for w in words) / len(words) > 0.15  # reads as English
    assert not any(p.lstrip().startswith(">>>") for p in paragraphs)
    assert "standard-library" in describe_corpus(corpus_facts())


def test_the_default_corpus_is_kept_on_disk_and_a_bad_file_is_extracted_again(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(corpus, "_extract_stdlib_corpus", lambda: calls.append(1) or ("First.", "Second."))
    monkeypatch.setenv("AG_CACHE_DIR", str(tmp_path))
    cached = corpus._corpus_cache_file()
    assert cached.parent == tmp_path and not cached.exists()

    def fresh():  # what a new process reads (the in-process cache cleared)
        corpus._stdlib_corpus.cache_clear()
        return corpus._stdlib_corpus()

    try:
        assert fresh() == ("First.", "Second.") and cached.exists() and len(calls) == 1  # extracted, then kept
        assert fresh() == ("First.", "Second.") and len(calls) == 1  # read from the file
        for bad in ["{not json", "[1, 2]", "[]", '{"a": 1}']:
            cached.write_text(bad)
            assert fresh() == ("First.", "Second."), bad
        assert len(calls) == 5 and fresh() and len(calls) == 5  # each bad file extracted again and replaced
        (tmp_path / "a-file").write_text("")
        monkeypatch.setenv("AG_CACHE_DIR", str(tmp_path / "a-file" / "cache"))  # cannot be made: skipped
        assert fresh() == ("First.", "Second.") and len(calls) == 6
        assert not list(tmp_path.rglob(".*.tmp"))
    finally:
        corpus._stdlib_corpus.cache_clear()


def test_the_cache_file_is_named_by_the_interpreter_and_the_extraction_code(monkeypatch):
    name = corpus._corpus_cache_file().name
    monkeypatch.setattr(corpus.sys, "version", corpus.sys.version + " (another build)")
    assert corpus._corpus_cache_file().name != name


def test_folder_corpus(tmp_path):
    (tmp_path / "b.txt").write_text("Second file.\n")
    (tmp_path / "a.txt").write_text("First paragraph,\nstill first.\n\n\nSecond paragraph.\n")
    assert load_corpus(str(tmp_path)) == ["First paragraph, still first.", "Second paragraph.", "Second file."]
    assert "2 .txt files" in describe_corpus(corpus_facts(str(tmp_path)))
    with pytest.raises(ValueError, match="is not a directory"):
        load_corpus(str(tmp_path / "nope"))


def test_byte_batches_shapes_determinism_and_errors():
    texts = load_corpus()[:50]
    a = byte_batches(texts, 8, 64, seed=3)
    assert a.shape == (8, 64) and a.dtype == torch.long and 0 <= a.min() and a.max() < 256
    assert torch.equal(a, byte_batches(texts, 8, 64, seed=3))
    assert not torch.equal(a, byte_batches(texts, 8, 64, seed=4))
    with pytest.raises(ValueError, match="longer than the corpus"):
        byte_batches(["short"], 2, 100, seed=0)
    with pytest.raises(ValueError, match="n_samples"):
        byte_batches(texts, 0, 10, seed=0)


def test_install_pins_agree_with_the_requirements_files():
    req = (ROOT / "requirements.txt").read_text()
    for name, version in pretrained.PINS.items():
        assert f"{name}=={version}" in req
    nodeps = (ROOT / "requirements-nodeps.txt").read_text()
    for name, version in pretrained.NODEPS_PINS.items():
        assert f"{name}=={version}" in nodeps


def test_unknown_model_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="smollm2-135m"):
        pretrained.load_pretrained("gpt-5")


@pytest.fixture(scope="session")
def smol():
    return pretrained.load_pretrained()


def test_loaded_model_is_cached(smol):
    model, tok = pretrained.load_pretrained("smollm2-135m")
    assert model is smol[0] and tok is smol[1]
    assert not model.training and next(model.parameters()).dtype == torch.float32


def test_token_batches(smol):
    _, tok = smol
    texts = load_corpus()[:200]
    a = token_batches(tok, texts, 4, 32, seed=0)
    assert a.shape == (4, 32) and a.dtype == torch.long
    assert torch.equal(a, token_batches(tok, texts, 4, 32, seed=0))
    assert 0 <= a.min() and a.max() < len(tok)
    with pytest.raises(ValueError, match="longer than the corpus"):
        token_batches(tok, ["A few words."], 1, 1000, seed=0)


def test_hidden_states_keys_and_the_norm_hook(smol):
    model, tok = smol
    facts = pretrained.model_facts(model)
    assert (facts["layers"], facts["width"], facts["heads"], facts["kv_heads"]) == (30, 576, 9, 3)
    ids = tok(["The cat sat on the mat because it was warm."], return_tensors="pt").input_ids
    seq = ids.shape[1]
    stream = pretrained.residual_stream(model, ids)
    normed = pretrained.layer_inputs(model, ids)
    assert len(stream) == 31 and len(normed) == 30
    assert all(h.shape == (1, seq, 576) for h in stream + normed)
    # the hook really captures layer l's input norm: RMSNorm(stream[l]) * gain
    for layer in (0, 7, 29):
        ln = model.model.layers[layer].input_layernorm
        x = stream[layer]
        expected = ln.weight * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + ln.variance_epsilon)
        torch.testing.assert_close(normed[layer], expected, rtol=1e-4, atol=1e-4)
    keys = pretrained.per_head_keys(model, 5, normed[5])
    assert keys.shape == (1, 3, seq, 64)
    torch.testing.assert_close(keys[0, 1], (normed[5][0] @ model.model.layers[5].self_attn.k_proj.weight.T)[:, 64:128])
    with pytest.raises(ValueError, match="layer = 30"):
        pretrained.per_head_keys(model, 30, normed[5])
