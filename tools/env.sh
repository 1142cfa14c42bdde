# shellcheck shell=bash
# Sourced by tools/demo.sh and tools/test.sh after tools/setup.sh: puts the toolchain and
# the Python virtual environment that setup installed first on PATH. Expects ROOT.
CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
if ! command -v cargo >/dev/null 2>&1 && [ -x "$CARGO_BIN/cargo" ]; then
    PATH="$CARGO_BIN:$PATH"
fi
if [ -x "$ROOT/.venv/bin/python3" ]; then
    PATH="$ROOT/.venv/bin:$PATH"
    export VIRTUAL_ENV="$ROOT/.venv"
fi
export PATH
hash -r
