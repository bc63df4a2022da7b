#!/usr/bin/env bash
# Builds the Python environment the loader test uses to open datasets the way
# training teams do (Hugging Face datasets, pyarrow, pandas, DuckDB). Idempotent.
# Uses the machine's local package index when it has one, PyPI otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.cache/python-loaders
if "$venv/bin/python" -c 'import datasets, pyarrow, pandas, duckdb' 2>/dev/null; then
  echo "python loaders: ready in $venv"
  exit 0
fi
python3 -m venv "$venv"
index=()
if [ -d /opt/pypi/simple ]; then
  index=(--index-url file:///opt/pypi/simple)
  [ -d /opt/pypi-more/simple ] && index+=(--extra-index-url file:///opt/pypi-more/simple)
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check --retries 1 --timeout 30 "${index[@]}" pyarrow datasets pandas duckdb
"$venv/bin/python" -c 'import datasets, pyarrow, pandas, duckdb; print("python loaders: datasets", datasets.__version__, "pyarrow", pyarrow.__version__, "pandas", pandas.__version__, "duckdb", duckdb.__version__)'
