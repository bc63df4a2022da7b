#!/usr/bin/env python3
# Owns writing a tiny, randomly initialised Hugging Face Qwen2ForCausalLM
# checkpoint with Qwen2's real tokenizer, so the Hugging Face → GGUF path
# (scripts/experiment/convert_to_gguf.py) can be exercised offline: nothing
# is downloaded from any hub.
#
# The tokenizer is rebuilt from llama.cpp's Qwen2 vocab file
# (ggml-vocab-qwen2.gguf, its tokenizer.ggml.* metadata) so its ids are
# llama.cpp's; the chat template is Qwen2.5-Instruct's. Same seed, same
# arguments → byte-identical files.
#
# Usage:
#   .cache/python-loaders/bin/python scripts/experiment/tiny_hf_checkpoint.py OUT_DIR \
#     [--layers 2 --hidden 64 --heads 4 --kv-heads 2 --ffn 128 --seed 0] \
#     [--vocab ggml-vocab-qwen2.gguf --template Qwen-Qwen2.5-7B-Instruct.jinja]
# Default --vocab/--template: .cache/tiny-model/vocab/<sha256 of node-llama-cpp's
# llama.cpp bundle>/, where scripts/tiny-model.sh unpacks them.
#
# OUT_DIR gets config.json, generation_config.json, model.safetensors,
# tokenizer.json, tokenizer_config.json. It is written whole or not at all.

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

# Set before transformers is imported: it reads them at import time.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Success prints only OUT_DIR; save_pretrained's progress bar would be noise on stderr.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "node_modules/node-llama-cpp/llama/gitRelease.bundle"
VOCAB_NAME = "ggml-vocab-qwen2.gguf"
TEMPLATE_NAME = "Qwen-Qwen2.5-7B-Instruct.jinja"
OUTPUT_FILES = {
    "config.json",
    "generation_config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
}

# Qwen2's pre-tokenizer regex, as in Qwen2's tokenizer.json and llama.cpp's
# LLAMA_VOCAB_PRE_TYPE_QWEN2.
QWEN2_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# gguf.TokenType values, spelled out so the tokenizer part does not depend on
# which gguf package version is installed.
NORMAL, CONTROL = 1, 3


class Fail(Exception):
    pass


def default_vocab_dir() -> Path:
    if not BUNDLE.is_file():
        raise Fail(f"no llama.cpp source bundle at {BUNDLE}; fix: npm ci, or pass --vocab and --template")
    digest = hashlib.sha256()
    with BUNDLE.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return ROOT / ".cache/tiny-model/vocab" / digest.hexdigest()


def read_vocab(path: Path) -> tuple[list[str], list[int], list[str]]:
    try:
        import gguf
    except ImportError:
        raise Fail("the Python package gguf is missing; fix: scripts/python-loaders.sh")
    reader = gguf.GGUFReader(str(path))

    def strings(key: str) -> list[str]:
        field = reader.fields.get(key)
        if field is None:
            raise Fail(f"{path} has no {key}; fix: pass llama.cpp's {VOCAB_NAME} as --vocab")
        return [bytes(field.parts[i]).decode("utf-8") for i in field.data]

    tokens = strings("tokenizer.ggml.tokens")
    merges = strings("tokenizer.ggml.merges")
    field = reader.fields.get("tokenizer.ggml.token_type")
    if field is None:
        raise Fail(f"{path} has no tokenizer.ggml.token_type; fix: pass llama.cpp's {VOCAB_NAME} as --vocab")
    types = [int(field.parts[i][0]) for i in field.data]
    model, pre = (
        bytes(reader.fields[key].parts[-1]).decode() if key in reader.fields else None
        for key in ("tokenizer.ggml.model", "tokenizer.ggml.pre")
    )
    if (model, pre) != ("gpt2", "qwen2"):
        raise Fail(f"{path} is a {model}/{pre} vocab, not gpt2/qwen2; fix: pass llama.cpp's {VOCAB_NAME} as --vocab")
    return tokens, types, merges


def build_tokenizer(tokens: list[str], types: list[int], merges: list[str]):
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import BPE

    vocab = {token: i for i, token in enumerate(tokens) if types[i] == NORMAL}
    specials = [(i, token) for i, token in enumerate(tokens) if types[i] == CONTROL]
    # The [PADnnnnn] entries (USER_DEFINED in this file) only pad the
    # embedding matrix to a round size; Qwen2's Hugging Face tokenizer has
    # no such tokens, and the converter writes them back from vocab_size.
    pairs = []
    for merge in merges:
        left, sep, right = merge.partition(" ")
        if not sep or " " in right:
            raise Fail(f"merge {merge!r} in the vocab file is not two byte-level pieces")
        pairs.append((left, right))
    tokenizer = Tokenizer(
        BPE(
            vocab=vocab,
            merges=pairs,
            dropout=None,
            unk_token=None,
            continuing_subword_prefix="",
            end_of_word_suffix="",
            fuse_unk=False,
            byte_fallback=False,
        )
    )
    # NFC is in Qwen2's own tokenizer.json, and transformers' Qwen2Tokenizer
    # applies it whatever the file says; llama.cpp does not, so the two differ
    # only on text that is not already NFC.
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
        ]
    )
    tokenizer.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    tokenizer.decoder = decoders.ByteLevel()
    # add_special_tokens appends in order, so the control tokens must be
    # contiguous right after the BPE vocab to keep llama.cpp's ids.
    for expected, (i, token) in enumerate(specials, start=len(vocab)):
        if i != expected:
            raise Fail(f"control token {token!r} has id {i}, not {expected} right after the BPE vocab")
    tokenizer.add_special_tokens(
        [AddedToken(token, special=True, normalized=False, lstrip=False, rstrip=False, single_word=False) for _, token in specials]
    )
    return tokenizer, specials


def tokenizer_config(specials: list[tuple[int, str]], template: str) -> dict:
    # Qwen2.5-Instruct's tokenizer_config.json, with the control tokens this vocab has.
    return {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": {
            str(i): {
                "content": token,
                "lstrip": False,
                "normalized": False,
                "rstrip": False,
                "single_word": False,
                "special": True,
            }
            for i, token in specials
        },
        "additional_special_tokens": [t for _, t in specials if t not in ("<|endoftext|>", "<|im_end|>")],
        "bos_token": None,
        "chat_template": template,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 32768,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


def write_model(out: Path, args, vocab_size: int, ids: dict[str, int]) -> None:
    try:
        import torch
        from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM
    except ImportError as error:
        raise Fail(f"{error.name or error} is missing from this Python; fix: scripts/python-loaders.sh")
    # Why one thread: a training job may share the machine, and a single
    # thread keeps the random init order fixed.
    torch.set_num_threads(1)
    if args.hidden % args.heads or args.heads % args.kv_heads:
        raise Fail(f"--hidden {args.hidden} must divide by --heads {args.heads}, and --heads by --kv-heads {args.kv_heads}")
    config = Qwen2Config(
        vocab_size=vocab_size,
        hidden_size=args.hidden,
        intermediate_size=args.ffn,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        max_position_embeddings=32768,
        rope_theta=1000000.0,
        rms_norm_eps=1e-6,
        tie_word_embeddings=True,
        use_sliding_window=False,
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|im_end|>"],
        pad_token_id=ids["<|endoftext|>"],
        dtype="float32",
    )
    torch.manual_seed(args.seed)
    model = Qwen2ForCausalLM(config).to(torch.float32)
    model.generation_config = GenerationConfig(
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=[ids["<|im_end|>"], ids["<|endoftext|>"]],
        pad_token_id=ids["<|endoftext|>"],
        do_sample=False,
    )
    model.save_pretrained(out)


def main() -> None:
    parser = argparse.ArgumentParser(description="Write a tiny random Qwen2ForCausalLM checkpoint with Qwen2's tokenizer.")
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--kv-heads", type=int, default=2)
    parser.add_argument("--ffn", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vocab", type=Path, help=f"llama.cpp's {VOCAB_NAME}")
    parser.add_argument("--template", type=Path, help=f"llama.cpp's models/templates/{TEMPLATE_NAME}")
    args = parser.parse_args()

    if args.vocab is None or args.template is None:
        vocab_dir = default_vocab_dir()
        args.vocab = args.vocab or vocab_dir / VOCAB_NAME
        args.template = args.template or vocab_dir / TEMPLATE_NAME
    for path, what in ((args.vocab, "--vocab"), (args.template, "--template")):
        if not path.is_file():
            raise Fail(
                f"no file at {path}; fix: run scripts/tiny-model.sh (it unpacks {VOCAB_NAME} and {TEMPLATE_NAME} "
                f"from node-llama-cpp's llama.cpp bundle), or pass {what} PATH"
            )

    out: Path = args.out_dir
    if out.exists():
        if not out.is_dir():
            raise Fail(f"{out} exists and is not a directory; fix: choose another OUT_DIR")
        foreign = sorted(p.name for p in out.iterdir() if p.name not in OUTPUT_FILES)
        if foreign:
            raise Fail(f"{out} holds files this script did not write ({', '.join(foreign[:3])}); fix: choose an empty or new OUT_DIR")

    tokens, types, merges = read_vocab(args.vocab)
    tokenizer, specials = build_tokenizer(tokens, types, merges)
    ids = {token: i for i, token in specials}
    for needed in ("<|endoftext|>", "<|im_start|>", "<|im_end|>"):
        if needed not in ids:
            raise Fail(f"{args.vocab} has no control token {needed}; fix: pass llama.cpp's {VOCAB_NAME} as --vocab")
    template = args.template.read_text(encoding="utf-8")

    out.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        # vocab_size is the gguf's whole vocab, padding included, so the
        # embedding matrix has llama.cpp's shape and the converter restores
        # every [PADnnnnn] id.
        write_model(partial, args, len(tokens), ids)
        tokenizer.save(str(partial / "tokenizer.json"))
        with (partial / "tokenizer_config.json").open("w", encoding="utf-8") as handle:
            json.dump(tokenizer_config(specials, template), handle, indent=2, ensure_ascii=False)
            handle.write("\n")
        written = {p.name for p in partial.iterdir()}
        if written != OUTPUT_FILES:
            raise Fail(f"wrote {sorted(written)}, expected {sorted(OUTPUT_FILES)}; the installed transformers saves differently")
        # mkdtemp makes the directory owner-only; give it, and the files,
        # the modes anything else written here would get.
        umask = os.umask(0)
        os.umask(umask)
        partial.chmod(0o777 & ~umask)
        for path in partial.iterdir():
            path.chmod(0o666 & ~umask)
        if out.exists():
            shutil.rmtree(out)
        partial.rename(out)
    finally:
        if partial.exists():
            shutil.rmtree(partial)
    print(out)


if __name__ == "__main__":
    try:
        main()
    except Fail as error:
        print(f"tiny_hf_checkpoint: {error}", file=sys.stderr)
        sys.exit(1)
