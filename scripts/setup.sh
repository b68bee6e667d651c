#!/usr/bin/env bash
# Set up dialeval on a fresh Debian machine: system packages, a virtual environment, the package.
# Usage: bash scripts/setup.sh            (core + dev tools)
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(wordnet-base wordnet-sense-index)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
