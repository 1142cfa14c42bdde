#!/usr/bin/env bash
# The one command that runs pycno's whole test suite, installing what it needs first.
#
#   tools/test.sh                    # cargo test --workspace
#   tools/test.sh -- --nocapture     # extra arguments go to cargo test
#   tools/test.sh --test cli         # one test target
#
# Runs tools/setup.sh, puts the project's .venv first on PATH (the VTK read-back test runs
# `python3` and needs the `vtk` package there), checks the formatting (`cargo fmt --check`)
# and the lints (`cargo clippy --all-targets -- -D warnings`, rustdoc `-D warnings`), then runs
# `cargo test --workspace --no-fail-fast`, prints one closing line over all test binaries
# (`total: N passed, N failed, N skipped`) and exits non-zero if the tests, the formatting or
# the lints failed. PYCNO_NO_LINT=1 skips these checks (for quick local runs).
#
# Skipped: the `#[ignore]`d tests, and the tests that could not run here and returned early
# (the GPU tests without a GPU, the kernel compilation without NVRTC): each of those records
# its name in the file PYCNO_SKIPPED_TESTS names (tests/common/skip.rs), and is moved from
# cargo's "passed" to "skipped".
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash "$ROOT/tools/setup.sh"

# shellcheck source=tools/env.sh
source "$ROOT/tools/env.sh"

# All test binaries run even when one fails, so one run shows every failure.
args=(--workspace)
case " $* " in
*" --no-fail-fast "*) ;;
*) args+=(--no-fail-fast) ;;
esac

# NVRTC from the venv (tools/setup.sh), so that tests/kernels.rs compiles the CUDA kernels
# on machines without a GPU; a machine with CUDA finds its own after it.
nvrtc_dir="$(ls -d "$ROOT"/.venv/lib/python3*/site-packages/nvidia/cu13/lib 2>/dev/null | head -n 1 || true)"
if [ -n "$nvrtc_dir" ]; then
    export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$nvrtc_dir"
fi

lint=0
if [ "${PYCNO_NO_LINT:-}" != 1 ]; then
    echo "test: cargo fmt --check"
    if ! cargo fmt --all -- --check; then
        echo "test: FAILED: the code is not formatted; run cargo fmt" >&2
        lint=1
    fi
    # Clippy checks every target again (half an hour on a busy 2-core machine): a line per
    # finished target of this package says where it is. Targets: each one cargo metadata
    # lists (the build script aside), plus the unit-test builds of the library and binaries.
    total="$(cargo metadata --no-deps --format-version 1 | python3 -c 'import json, sys
t = [k for p in json.load(sys.stdin)["packages"] for x in p["targets"] for k in x["kind"]]
print(sum(k != "custom-build" for k in t) + sum(k in ("lib", "bin") for k in t))')"
    echo "test: cargo clippy --all-targets -- -D warnings ($total targets)"
    set +e
    cargo clippy --all-targets --quiet --message-format=json-diagnostic-rendered-ansi -- -D warnings |
        python3 -u "$ROOT/tools/cargo_progress.py" pycno "$total" "test: clippy"
    clippy=${PIPESTATUS[0]}
    set -e
    if [ "$clippy" -ne 0 ]; then
        echo "test: FAILED: clippy warnings (above)" >&2
        lint=1
    fi
    # The API docs' links: a renamed item leaves a doc comment pointing nowhere.
    echo "test: cargo doc --no-deps (rustdoc -D warnings)"
    if ! RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet; then
        echo "test: FAILED: rustdoc warnings (above)" >&2
        lint=1
    fi
fi

echo "test: python3 is $(command -v python3); cargo test ${args[*]} $*"
log="$(mktemp "${TMPDIR:-/tmp}/pycno-test.XXXXXX")"
skips="$(mktemp "${TMPDIR:-/tmp}/pycno-skipped.XXXXXX")"
trap 'rm -f "$log" "$skips"' EXIT
export PYCNO_SKIPPED_TESTS="$skips"
start=$SECONDS
set +e
cargo test "${args[@]}" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

# One closing line over all test binaries (cargo prints one `test result:` per binary).
if grep -q '^test result:' "$log"; then
    read -r passed failed ignored < <(awk '/^test result:/ {
        for (i = 2; i <= NF; i++) {
            if ($i == "passed;") p += $(i - 1)
            if ($i == "failed;") f += $(i - 1)
            if ($i == "ignored;") g += $(i - 1)
        }
    } END { print p + 0, f + 0, g + 0 }' "$log")
    # Tests that returned early because they could not run here passed in cargo's count.
    early=$(sort -u "$skips" | grep -c . || true)
    passed=$((passed - early))
    ignored=$((ignored + early))
    [ "$early" -eq 0 ] || echo "test: $early tests could not run here (no GPU, no NVRTC, ...) and count as skipped"
    [ "$status" -eq 0 ] || echo "test: cargo test exited $status"
    echo "test: $((SECONDS - start)) s"
    echo "total: $passed passed, $failed failed, $ignored skipped"
else
    echo "test: cargo test exited $status and ran no test binary"
fi
if [ "$status" -eq 0 ] && [ "$lint" -ne 0 ]; then
    echo "test: the tests passed, but the formatting or lint check failed (see above)"
    status=1
fi
exit "$status"
