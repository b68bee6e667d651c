#!/usr/bin/env bash
# The test command: lint, type-check, then the test suite (unit, parity, CLI, browser) on 2 workers, but the tests
# marked slow (each has a fast twin): `bash scripts/test.sh -m slow` runs those, `-m ""` everything.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/python -m ruff check src tests benchmarks
.venv/bin/python -m mypy
.venv/bin/python -m pytest -n 2 --dist loadgroup -q -m "not slow" "$@"
