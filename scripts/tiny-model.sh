#!/usr/bin/env bash
# Builds the tiny local model the engine tests run through llama.cpp (issue 19):
# a qwen2-architecture GGUF trained on the scripted policy's episodes, with the
# real Qwen2 tokenizer and the Qwen2.5 chat template. Idempotent and
# reproducible: the model lands in .cache/tiny-model/<hash>/tiny-qwen2.gguf,
# where <hash> is the sha256 of every input (the corpus bytes, the training
# script, the hyperparameters, the vocab and template files); a second run
# finds it and only prints its path. The last stdout line is always that path,
# and .cache/tiny-model/current links to its directory.
# How it is built: scripts/tiny-model/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
root=.cache/tiny-model
venv=.cache/python-loaders
python=$venv/bin/python
bundle=node_modules/node-llama-cpp/llama/gitRelease.bundle
here=scripts/tiny-model
fail() { echo "tiny-model: $*" >&2; exit 1; }

[ -f "$bundle" ] || fail "no llama.cpp source bundle at $bundle; fix: npm ci (node-llama-cpp ships it)"
command -v git >/dev/null || fail "git is not installed; fix: install git (it unpacks llama.cpp's vocab file from $bundle)"
mkdir -p "$root"

# The Qwen2 vocab file and the Qwen2.5 chat template, from the llama.cpp source node-llama-cpp ships.
bundle_sha=$(sha256sum "$bundle" | cut -c1-64)
vocab_dir=$root/vocab/$bundle_sha
vocab=$vocab_dir/ggml-vocab-qwen2.gguf
template=$vocab_dir/Qwen-Qwen2.5-7B-Instruct.jinja
if [ ! -f "$template" ]; then
  checkout=$(mktemp -d "$root/llama.cpp.XXXXXX")
  git clone --quiet --no-checkout "$bundle" "$checkout" || fail "git could not clone $bundle; fix: npm ci to restore node-llama-cpp"
  mkdir -p "$vocab_dir"
  git -C "$checkout" show HEAD:models/ggml-vocab-qwen2.gguf >"$vocab.partial"
  git -C "$checkout" show HEAD:models/templates/Qwen-Qwen2.5-7B-Instruct.jinja >"$template.partial"
  rm -rf "$checkout"
  mv "$vocab.partial" "$vocab"
  mv "$template.partial" "$template"
fi

# The corpus is a pure function of the sources that make it (the factory, the
# lanes, the corpus scripts, the locked dependencies and the vocab), so it is
# keyed by them and built once.
corpus_key=$(
  {
    find src lanes -type f | LC_ALL=C sort | xargs sha256sum
    sha256sum package-lock.json "$here/build-corpus.ts" "$here/episode-turns.ts" "$here/config.json" "$vocab"
  } | sha256sum | cut -c1-64
)
corpus_dir=$root/corpus/$corpus_key
if [ ! -f "$corpus_dir/corpus.sha256" ]; then
  [ -d node_modules/tsx ] || fail "node_modules is missing; fix: npm ci"
  partial="$corpus_dir.partial"
  node --import tsx "$here/build-corpus.ts" "$here/config.json" "$vocab" "$partial" >&2
  sha256sum "$partial/corpus.jsonl" | cut -c1-64 >"$partial/corpus.sha256"
  rm -rf "$corpus_dir"
  mv "$partial" "$corpus_dir"
fi

# The model's hash: every input of training and of its check.
inputs=$(
  {
    echo "corpus $(cat "$corpus_dir/corpus.sha256")"
    sha256sum "$here/train.py" "$here/config.json" "$here/check-model.ts" "$here/episode-turns.ts" "$vocab" "$template"
  }
)
model_key=$(printf '%s\n' "$inputs" | sha256sum | cut -c1-64)
model_dir=$root/$model_key
if [ ! -f "$model_dir/tiny-qwen2.json" ]; then
  [ -x "$python" ] || fail "no Python environment at $venv; fix: scripts/python-loaders.sh"
  "$python" -c 'import torch, transformers, gguf' 2>/dev/null || fail "the Python environment at $venv lacks torch, transformers or gguf; fix: scripts/python-loaders.sh"
  partial="$model_dir.partial"
  rm -rf "$partial"
  mkdir -p "$partial"
  "$python" "$here/train.py" "$here/config.json" "$corpus_dir/corpus.jsonl" "$vocab" "$template" "$partial/tiny-qwen2.gguf" "$partial/train.json" >&2
  # The held-out records travel with the model, for the check and for tests that replay them.
  cp -r "$corpus_dir/heldout" "$partial/heldout"
  node --import tsx "$here/check-model.ts" "$partial/tiny-qwen2.gguf" "$partial/heldout" "$partial/check.json" >&2
  "$python" - "$partial" "$model_key" "$corpus_dir" "$here/config.json" "$((SECONDS - started))" "$inputs" <<'PY'
import json, os, sys
out, key, corpus_dir, config_path, seconds, inputs = sys.argv[1:7]
train = json.load(open(os.path.join(out, "train.json")))
check = json.load(open(os.path.join(out, "check.json")))
summary = json.load(open(os.path.join(corpus_dir, "corpus-summary.json")))
config = json.load(open(config_path))
meta = {
    "inputs_sha256": key,
    "inputs": inputs.splitlines(),
    "file": "tiny-qwen2.gguf",
    "bytes": os.path.getsize(os.path.join(out, "tiny-qwen2.gguf")),
    "corpus": {"lanes": summary["lanes"], **summary["splits"], "seeds": config["corpus"]},
    "model": config["model"],
    "train": {**config["train"], **train},
    "final_loss": train["final_loss"],
    "steps": train["steps"],
    "build_seconds": int(seconds),
    "eval": {k: v for k, v in check.items() if k != "turns"},
}
json.dump(meta, open(os.path.join(out, "tiny-qwen2.json"), "w"), indent=2)
PY
  rm -rf "$model_dir"
  mv "$partial" "$model_dir"
  echo "tiny-model: built in $((SECONDS - started))s" >&2
fi
ln -sfn "$model_key" "$root/current"
echo "$PWD/$model_dir/tiny-qwen2.gguf"
