#!/usr/bin/env python3
# Owns turning a Hugging Face checkpoint directory into a GGUF file with
# llama.cpp's own convert_hf_to_gguf.py, from the llama.cpp source
# node-llama-cpp ships (node_modules/node-llama-cpp/llama/gitRelease.bundle),
# so the converter always matches the llama.cpp that will load the file.
# Works offline: nothing is fetched from any hub.
#
# Usage:
#   .cache/python-loaders/bin/python scripts/experiment/convert_to_gguf.py HF_DIR OUT_GGUF \
#     [--llama-cpp DIR] [--outtype f32]
# --llama-cpp: where the converter (convert_hf_to_gguf.py, conversion/,
# gguf-py/) is unpacked from the bundle, once; default
# .cache/llama.cpp/<first 16 hex of the bundle's sha256>/.
#
# OUT_GGUF is written whole or not at all; on success its path is the only
# stdout line. On failure the converter's full output is kept in
# OUT_GGUF.convert.log.

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "node_modules/node-llama-cpp/llama/gitRelease.bundle"
CONVERTER_PATHS = ["convert_hf_to_gguf.py", "conversion", "gguf-py"]

# What the converter imports on the Qwen2 path. sentencepiece is among them
# although Qwen2 has no tokenizer.model: Qwen2Model.set_vocab tries the
# SentencePiece vocab first and imports sentencepiece before it looks for the
# file, so only a FileNotFoundError (not an ImportError) falls back to BPE.
REQUIRED_MODULES = ["torch", "transformers", "numpy", "safetensors", "sentencepiece", "yaml", "tqdm", "requests"]


class Fail(Exception):
    pass


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def git(*args: str) -> None:
    result = subprocess.run(["git", *args], capture_output=True, text=True)
    if result.returncode != 0:
        detail = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise Fail(f"git {args[0]} failed on {BUNDLE}: {detail}; fix: npm ci to restore node-llama-cpp")


def unpack_converter(target: Path) -> None:
    """Unpacks the converter into target once; a complete target is reused."""
    if (target / "convert_hf_to_gguf.py").is_file():
        # The directory only ever appears by rename, so if the script is there, all of it is.
        return
    if shutil.which("git") is None:
        raise Fail(f"git is not installed; fix: install git (it unpacks llama.cpp's converter from {BUNDLE})")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        clone = staging / "clone"
        git("clone", "--quiet", "--no-checkout", str(BUNDLE), str(clone))
        git("-C", str(clone), "checkout", "HEAD", "--", *CONVERTER_PATHS)
        commit = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        tree = staging / "tree"
        tree.mkdir()
        for name in CONVERTER_PATHS:
            (clone / name).rename(tree / name)
        # Which llama.cpp commit the converter is, for whoever reads a GGUF's provenance.
        (tree / "COMMIT").write_text(commit + "\n")
        tree.chmod(0o755)
        try:
            tree.rename(target)
        except OSError:
            # Another run unpacked it first; theirs is as good as ours.
            if not (target / "convert_hf_to_gguf.py").is_file():
                raise Fail(f"could not move the unpacked converter to {target}; fix: remove {target} and rerun")
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description="Convert a Hugging Face checkpoint to GGUF with node-llama-cpp's llama.cpp converter.")
    parser.add_argument("hf_dir", type=Path)
    parser.add_argument("out_gguf", type=Path)
    parser.add_argument("--llama-cpp", type=Path, help="where the converter is unpacked (default: .cache/llama.cpp/<bundle sha256[:16]>)")
    parser.add_argument("--outtype", default="f32", choices=["f32", "f16", "bf16", "q8_0"])
    args = parser.parse_args()

    if not (args.hf_dir / "config.json").is_file():
        raise Fail(f"no config.json in {args.hf_dir}; fix: pass a Hugging Face checkpoint directory (e.g. one scripts/experiment/tiny_hf_checkpoint.py wrote)")
    if not BUNDLE.is_file():
        raise Fail(f"no llama.cpp source bundle at {BUNDLE}; fix: npm ci (node-llama-cpp ships it)")
    missing = [name for name in REQUIRED_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise Fail(
            f"{sys.executable} lacks {', '.join(missing)}, which llama.cpp's convert_hf_to_gguf.py imports; "
            "fix: add them to scripts/python-loaders.sh's packages and rerun it"
        )

    llama_cpp = args.llama_cpp or ROOT / ".cache/llama.cpp" / sha256_of(BUNDLE)[:16]
    unpack_converter(llama_cpp)

    out: Path = args.out_gguf
    out.parent.mkdir(parents=True, exist_ok=True)
    log = out.with_name(out.name + ".convert.log")
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    env = dict(os.environ)
    env.update(
        # The converter must use its own gguf-py (it knows this llama.cpp's
        # keys and tensor names), not the pip gguf.
        PYTHONPATH=str(llama_cpp / "gguf-py"),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
        # Keep the conversion light on a machine that may be training.
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
    )
    env.pop("NO_LOCAL_GGUF", None)
    command = [
        sys.executable,
        str(llama_cpp / "convert_hf_to_gguf.py"),
        str(args.hf_dir),
        "--outfile",
        str(partial),
        "--outtype",
        args.outtype,
    ]
    try:
        result = subprocess.run(command, env=env, capture_output=True, text=True)
        if result.returncode != 0 or not partial.is_file():
            log.write_text(result.stdout + result.stderr)
            lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
            last = lines[-1] if lines else f"exit code {result.returncode}, no output"
            hint = ""
            if "chkhsh" in result.stdout + result.stderr or "BPE pre-tokenizer was not recognized" in result.stderr:
                hint = " (the checkpoint's tokenizer is not one this llama.cpp knows; fix the tokenizer, not llama.cpp)"
            raise Fail(f"convert_hf_to_gguf.py failed: {last.strip()}{hint}; full output: {log}")
        partial.rename(out)
        log.unlink(missing_ok=True)
    finally:
        partial.unlink(missing_ok=True)
    print(out)


if __name__ == "__main__":
    try:
        main()
    except Fail as error:
        print(f"convert_to_gguf: {error}", file=sys.stderr)
        sys.exit(1)
