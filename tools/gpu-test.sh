#!/usr/bin/env bash
# The GPU tests (tests/gpu.rs: CPU/GPU agreement, water at rest, mass, no NaN, every slot
# written; tests/gpu_probes.rs: the CUDA physics against the Rust physics function by
# function; tests/examples.rs: every example against its stored norms on the GPU;
# tests/kernels.rs: the kernels compile), second order on one GPU (tools/order2-gpu-check.sh: 3
# ranks = 1 rank and restarts bit for bit at physics.order = 2), the multi-GPU tests where there are
# several GPUs (tools/multi-gpu-check.sh: N GPUs equal one bit for bit, both exchange loops, f32
# and f64) and a short GPU benchmark (orders 1 and 2), in one command, on a machine with NVIDIA GPUs.
#
#   tools/gpu-test.sh                 build with cargo and run here (needs cargo and a GPU)
#   tools/gpu-test.sh --bundle DIR    build here, copy the binaries and a runner into DIR;
#                                     then `DIR/run.sh` on a GPU machine without cargo
set -euo pipefail
cd "$(dirname "$0")/.."

# The test binaries that need a GPU (their tests skip elsewhere).
GPU_TESTS=(gpu gpu_probes examples kernels)

# Build pycno and the GPU test binaries; print "NAME PATH" per test binary.
build() {
    cargo build --release --bin pycno >&2
    local args=()
    for t in "${GPU_TESTS[@]}"; do args+=(--test "$t"); done
    cargo test --release --no-run "${args[@]}" --message-format=json 2>/dev/null |
        python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["target"]["name"], m["executable"])'
}

if [[ "${1:-}" == "--bundle" ]]; then
    dir="${2:?usage: tools/gpu-test.sh --bundle DIR}"
    mkdir -p "$dir/tests"
    # Stripped: the bundle travels to the GPU machine.
    build | while read -r name exe; do strip -o "$dir/tests/$name" "$exe"; done
    strip -o "$dir/pycno" target/release/pycno
    mkdir -p "$dir/tools"
    cp tools/multi-gpu-check.sh tools/order2-gpu-check.sh tools/scaling.sh tools/scaling_table.py "$dir/tools/"
    cat > "$dir/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs the bundled GPU tests and a short benchmark; writes logs to ${OUT:-.}.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$here}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
# The examples' stored norms and scenarios are read from the repository the bundle sits in
# (PYCNO_ROOT, default: the bundle's parent directory).
export PYCNO_ROOT="${PYCNO_ROOT:-$(dirname "$here")}"
status=0
for t in "$here"/tests/*; do
    echo "=== $(basename "$t")"
    "$t" --nocapture --test-threads 1 2>&1 | tee "$out/gpu-tests-$(basename "$t").log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
"$here/tools/order2-gpu-check.sh" "$here/pycno" 2>&1 | tee "$out/order2-gpu.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
"$here/tools/multi-gpu-check.sh" "$here/pycno" 2>&1 | tee "$out/multi-gpu.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
"$here/pycno" bench --backend cuda --cells "${BENCH_CELLS:-4016,64052,1001898}" --repeat 3 2>&1 | tee "$out/gpu-bench.log"
"$here/pycno" bench --backend cuda --order 2 --cells "${BENCH_CELLS:-4016,64052,1001898}" --repeat 3 2>&1 | tee "$out/gpu-bench-order2.log"
exit "$status"
RUN
    chmod +x "$dir/run.sh"
    echo "bundle in $dir: run $dir/run.sh on a GPU machine"
    exit 0
fi

status=0
while read -r name exe; do
    echo "=== $name"
    "$exe" --nocapture --test-threads 1 || status=1
done < <(build)
tools/order2-gpu-check.sh target/release/pycno || status=1
tools/multi-gpu-check.sh target/release/pycno || status=1
target/release/pycno bench --backend cuda --cells "${BENCH_CELLS:-4016,64052,1001898}" --repeat 3
target/release/pycno bench --backend cuda --order 2 --cells "${BENCH_CELLS:-4016,64052,1001898}" --repeat 3
exit "$status"
