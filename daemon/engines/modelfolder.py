"""Model folders for the vLLM engine: fetch the real LightOnOCR-2-1B, or write a dummy-weight copy.

Contract:
- ``write_dummy_model(folder)`` writes a folder shaped like ``lightonai/LightOnOCR-2-1B``
  (``config.json``, ``preprocessor_config.json``, ``processor_config.json``, tokenizer files with
  a chat template) and no weights. vLLM loads it with ``load_format="dummy"``: the real
  architecture filled with random weights, so the GPU cost per page is the real model's and the
  text is noise. Everything is written by code, no download; only the ``tokenizers`` library is
  needed (it comes with vLLM/transformers, i.e. the ``vllm`` extra). Idempotent; returns the folder.
- ``fetch_model(repo_id, folder)`` downloads the real weights with ``huggingface_hub`` where there
  is network, and raises ``FatalError(ExitCode.ENGINE)`` with a readable reason where there is none.
- ``DEFAULT_REPO`` and ``DEFAULT_DIR`` are ``ocr-daemon model {fetch,dummy}``'s defaults (the
  command: ``daemon.commands.model``).

The facts below (layer counts, head sizes, token ids) are the published LightOnOCR-2-1B ones:
Qwen3 text decoder, Pixtral vision encoder at 1540 px with 14 px patches and a 2x2 spatial
merge, image token ``<|image_pad|>`` = 151655.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from daemon.errors import ExitCode, FatalError

log = logging.getLogger(__name__)

DEFAULT_REPO = "lightonai/LightOnOCR-2-1B"
DEFAULT_DIR = Path("/var/lib/ocr-daemon/models/LightOnOCR-2-1B")

VOCAB_SIZE = 151936  # the embedding table; the tokenizer's own vocabulary ends at 151669
IMAGE_TOKEN = "<|image_pad|>"
IMAGE_TOKEN_ID = 151655

#: Qwen2/Qwen3 special tokens and their fixed ids.
SPECIAL_TOKENS: dict[str, int] = {
    "<|endoftext|>": 151643,
    "<|im_start|>": 151644,
    "<|im_end|>": 151645,
    "<|object_ref_start|>": 151646,
    "<|object_ref_end|>": 151647,
    "<|box_start|>": 151648,
    "<|box_end|>": 151649,
    "<|quad_start|>": 151650,
    "<|quad_end|>": 151651,
    "<|vision_start|>": 151652,
    "<|vision_end|>": 151653,
    "<|vision_pad|>": 151654,
    "<|image_pad|>": 151655,
    "<|video_pad|>": 151656,
    "<tool_call>": 151657,
    "</tool_call>": 151658,
    "<|fim_prefix|>": 151659,
    "<|fim_middle|>": 151660,
    "<|fim_suffix|>": 151661,
    "<|fim_pad|>": 151662,
    "<|repo_name|>": 151663,
    "<|file_sep|>": 151664,
    "<tool_response>": 151665,
    "</tool_response>": 151666,
    "<think>": 151667,
    "</think>": 151668,
}
FIRST_SPECIAL = 151643
LAST_SPECIAL = 151668

#: Chat template: Qwen's ChatML; an image content part becomes the image token, text parts their
#: text. vLLM's chat-template applier and our engine render one user message holding the image.
CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' -}}"
    "{%- if message['content'] is string -%}{{- message['content'] -}}"
    "{%- else -%}{%- for part in message['content'] -%}"
    "{%- if part['type'] == 'image' or part['type'] == 'image_url' -%}{{- '<|image_pad|>' -}}"
    "{%- elif part['type'] == 'text' -%}{{- part['text'] -}}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)


def model_config() -> dict[str, Any]:
    """``config.json`` of LightOnOCR-2-1B (vLLM architecture ``LightOnOCRForConditionalGeneration``)."""
    return {
        "architectures": ["LightOnOCRForConditionalGeneration"],
        "model_type": "mistral3",
        "image_token_index": IMAGE_TOKEN_ID,
        "multimodal_projector_bias": False,
        "projector_hidden_act": "gelu",
        "spatial_merge_size": 2,
        "vision_feature_layer": -1,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "text_config": {
            "model_type": "qwen3",
            "architectures": ["Qwen3ForCausalLM"],
            "hidden_size": 1024,
            "intermediate_size": 3072,
            "num_hidden_layers": 28,
            "num_attention_heads": 16,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "hidden_act": "silu",
            "attention_bias": False,
            "attention_dropout": 0.0,
            "max_position_embeddings": 16384,
            "rms_norm_eps": 1e-6,
            "rope_theta": 1000000.0,
            "vocab_size": VOCAB_SIZE,
            "tie_word_embeddings": True,
            "bos_token_id": 151643,
            "eos_token_id": 151645,
            "torch_dtype": "bfloat16",
        },
        "vision_config": {
            "model_type": "pixtral",
            "hidden_size": 1024,
            "intermediate_size": 4096,
            "num_hidden_layers": 24,
            "num_attention_heads": 16,
            "head_dim": 64,
            "num_channels": 3,
            "patch_size": 14,
            "image_size": 1540,
            "hidden_act": "silu",
            "rope_theta": 10000.0,
            "attention_dropout": 0.0,
            "torch_dtype": "bfloat16",
        },
    }


def preprocessor_config() -> dict[str, Any]:
    return {
        "image_processor_type": "PixtralImageProcessor",
        "processor_class": "PixtralProcessor",
        "do_resize": True,
        "size": {"longest_edge": 1540},
        "patch_size": 14,
        "resample": 3,
        "do_rescale": True,
        "rescale_factor": 1 / 255,
        "do_normalize": True,
        "image_mean": [0.48145466, 0.4578275, 0.40821073],
        "image_std": [0.26862954, 0.26130258, 0.27577711],
        "do_convert_rgb": True,
    }


def processor_config() -> dict[str, Any]:
    return {
        "processor_class": "PixtralProcessor",
        "patch_size": 14,
        "spatial_merge_size": 2,
        "image_token": IMAGE_TOKEN,
        # LightOnOCR uses neither; vLLM's LightOnOCR processor strips them, but they must exist.
        "image_break_token": "<|vision_pad|>",
        "image_end_token": "<|vision_end|>",
    }


def _byte_alphabet() -> list[str]:
    """GPT-2 byte-level alphabet: the 256 printable stand-ins for the 256 byte values."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def _vocab() -> dict[str, int]:
    """A byte-level vocabulary that gives every id outside the special range a decodable token.

    Dummy weights emit arbitrary ids in ``[0, VOCAB_SIZE)``; each must decode to some text, so the
    fillers are short byte-level strings ("Ġ" = a leading space), i.e. noise words.
    """
    alphabet = _byte_alphabet()
    vocab = {ch: i for i, ch in enumerate(alphabet)}
    letters = "abcdefghijklmnopqrstuvwxyz"
    ids = [i for i in range(len(alphabet), VOCAB_SIZE) if not FIRST_SPECIAL <= i <= LAST_SPECIAL]
    for k, i in enumerate(ids):
        # base-26 word, spaced every other token so output looks like words
        n, word = k, ""
        while True:
            word = letters[n % 26] + word
            n //= 26
            if n == 0:
                break
        tok = ("Ġ" + word) if k % 2 == 0 else word
        while tok in vocab:  # "Ġa" style collisions cannot happen, but stay safe
            tok += "a"
        vocab[tok] = i
    return vocab


def build_tokenizer_json() -> str:
    """Serialise a Qwen-style byte-level BPE tokenizer (``tokenizer.json``) built with ``tokenizers``."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    vocab = _vocab()
    # Special tokens live in the model vocabulary too, at their Qwen ids: ``tokenizers`` gives an
    # added token the id the model already has for it, else the next free id after the vocabulary.
    vocab.update(SPECIAL_TOKENS)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    specials = sorted(SPECIAL_TOKENS.items(), key=lambda kv: kv[1])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t, _ in specials])
    return str(tok.to_str())


def tokenizer_config() -> dict[str, Any]:
    added = {
        str(i): {"content": t, "lstrip": False, "rstrip": False, "normalized": False, "single_word": False, "special": True}
        for t, i in SPECIAL_TOKENS.items()
    }
    return {
        "tokenizer_class": "Qwen2Tokenizer",
        "added_tokens_decoder": added,
        "bos_token": None,
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "unk_token": None,
        "model_max_length": 16384,
        "clean_up_tokenization_spaces": False,
        "split_special_tokens": False,
        "errors": "replace",
        "chat_template": CHAT_TEMPLATE,
    }


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) if not isinstance(data, str) else data, encoding="utf-8")
    tmp.replace(path)


def write_dummy_model(folder: Path) -> Path:
    """Write the LightOnOCR-2-1B-shaped folder (no weights) for ``load_format="dummy"``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    _write_json(folder / "config.json", model_config())
    _write_json(folder / "preprocessor_config.json", preprocessor_config())
    _write_json(folder / "processor_config.json", processor_config())
    _write_json(folder / "tokenizer_config.json", tokenizer_config())
    _write_json(folder / "special_tokens_map.json", {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"})
    _write_json(folder / "generation_config.json", {"eos_token_id": [151645, 151643], "pad_token_id": 151643})
    (folder / "chat_template.jinja").write_text(CHAT_TEMPLATE, encoding="utf-8")
    _write_json(folder / "tokenizer.json", build_tokenizer_json())
    (folder / "DUMMY_WEIGHTS").write_text(
        "Written by ocr-daemon model dummy: architecture of LightOnOCR-2-1B without weights.\n"
        "Load with engine.vllm.load_format: dummy (random weights; output is noise).\n",
        encoding="utf-8",
    )
    log.info("wrote dummy LightOnOCR-2-1B model folder %s", folder)
    return folder


def fetch_model(repo_id: str = DEFAULT_REPO, folder: Path | None = None) -> Path:
    """Download ``repo_id`` into ``folder`` (or the HF cache when None). Needs network."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise FatalError(
            "huggingface_hub is not installed; install the vllm extra (pip install 'ocr-daemon[vllm]')",
            ExitCode.ENGINE,
        ) from None
    try:
        path = snapshot_download(repo_id=repo_id, local_dir=str(folder) if folder else None)
    except Exception as e:  # network errors come in many classes (requests, httpx, OSError)
        where = f" into {folder}" if folder else ""
        raise FatalError(
            f"cannot download {repo_id}{where}: {type(e).__name__}: {e}. Without network, copy the model "
            f"folder to this machine and set engine.model to that folder.",
            ExitCode.ENGINE,
        ) from e
    return Path(path)
