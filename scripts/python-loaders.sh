#!/usr/bin/env bash
# Builds the Python environment the loader test uses to open datasets the way
# training teams do (Hugging Face datasets, pyarrow, pandas, DuckDB), and the
# training stack examples/train uses to prove a tiny model learns from them
# (TRL, transformers, accelerate, a CPU-only torch), gguf, which
# scripts/tiny-model.sh writes llama.cpp model files with, and websockets, the
# library OpenEnv's client speaks to `env serve`'s /ws with, and sentencepiece,
# which llama.cpp's convert_hf_to_gguf.py imports (experiment --base). Idempotent.
#
# Indexes: PIP_INDEX_URL / PIP_EXTRA_INDEX_URL, when set, are used for
# everything (pip reads them itself). Otherwise the machine's local index
# (/opt/pypi/simple, /opt/pypi-more/simple, wheels in /opt/wheels) when it has
# one, with torch pinned to its CPU build; otherwise PyPI, with torch from
# PyTorch's CPU index.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.cache/python-loaders
imports='import datasets, pyarrow, pandas, duckdb, trl, transformers, accelerate, torch, gguf, websockets, sentencepiece'
# datasets >= 4.7 reads the card's Json() features (tool-call arguments and tool parameters as objects).
recent='assert tuple(int(x) for x in datasets.__version__.split(".")[:2]) >= (4, 7), datasets.__version__'
if "$venv/bin/python" -c "$imports; $recent" 2>/dev/null; then
  echo "python loaders: ready in $venv"
  exit 0
fi
python3 -m venv "$venv"
pip=("$venv/bin/pip" install --quiet --disable-pip-version-check --retries 1 --timeout 30)
if [ -n "${PIP_INDEX_URL:-}" ]; then
  where="PIP_INDEX_URL=$PIP_INDEX_URL${PIP_EXTRA_INDEX_URL:+ PIP_EXTRA_INDEX_URL=$PIP_EXTRA_INDEX_URL}"
  index=()
  torch_index=()
  torch=torch
elif [ -d /opt/pypi/simple ]; then
  where="the local index /opt/pypi/simple"
  index=(--index-url file:///opt/pypi/simple)
  [ -d /opt/pypi-more/simple ] && index+=(--extra-index-url file:///opt/pypi-more/simple)
  [ -d /opt/wheels ] && index+=(--find-links file:///opt/wheels)
  torch_index=("${index[@]}")
  torch="torch==2.13.0+cpu"
else
  where="PyPI (torch from https://download.pytorch.org/whl/cpu)"
  index=()
  torch_index=(--index-url https://download.pytorch.org/whl/cpu)
  torch=torch
fi
fix="set PIP_INDEX_URL (and PIP_EXTRA_INDEX_URL) to an index this machine can reach that has these packages, then rerun scripts/python-loaders.sh"
# torch first, from its CPU index, so the packages after it find it installed and never pull a CUDA build.
if ! "${pip[@]}" "${torch_index[@]}" "$torch"; then
  echo "python loaders: pip could not install $torch from $where; $fix" >&2
  exit 1
fi
packages=(pyarrow "datasets>=4.7" pandas duckdb trl transformers accelerate gguf websockets sentencepiece)
if ! "${pip[@]}" "${index[@]}" "${packages[@]}"; then
  echo "python loaders: pip could not install ${packages[*]} from $where; $fix" >&2
  exit 1
fi
"$venv/bin/python" -c "$imports, importlib.metadata; $recent; print('python loaders: datasets', datasets.__version__, 'pyarrow', pyarrow.__version__, 'pandas', pandas.__version__, 'duckdb', duckdb.__version__, 'trl', trl.__version__, 'transformers', transformers.__version__, 'accelerate', accelerate.__version__, 'torch', torch.__version__, 'gguf', importlib.metadata.version('gguf'), 'websockets', websockets.__version__)"
