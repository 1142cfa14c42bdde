#!/usr/bin/env bash
# The GPU tests (tests/gpu.rs: CPU/GPU agreement, water at rest, mass, no NaN, every slot
# written), the multi-GPU tests where there are several GPUs (tools/multi-gpu-check.sh: N GPUs
# equal one bit for bit, both exchange loops, f32 and f64) and a short GPU benchmark, in one
# command, on a machine with NVIDIA GPUs.
#
#   tools/gpu-test.sh                 build with cargo and run here (needs cargo and a GPU)
#   tools/gpu-test.sh --bundle DIR    build here, copy the binaries and a runner into DIR;
#                                     then `DIR/run.sh` on a GPU machine without cargo
set -euo pipefail
cd "$(dirname "$0")/.."

build() {
    cargo build --release --bin pycno
    cargo test --release --no-run --test gpu --message-format=json 2>/dev/null |
        python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "gpu":
        print(m["executable"])' | tail -n 1
}

if [[ "${1:-}" == "--bundle" ]]; then
    dir="${2:?usage: tools/gpu-test.sh --bundle DIR}"
    exe="$(build)"
    mkdir -p "$dir"
    # Stripped: the bundle travels to the GPU machine.
    strip -o "$dir/gpu-tests" "$exe"
    strip -o "$dir/pycno" target/release/pycno
    mkdir -p "$dir/tools"
    cp tools/multi-gpu-check.sh tools/scaling.sh tools/scaling_table.py "$dir/tools/"
    cat > "$dir/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs the bundled GPU tests and a short benchmark; writes logs to ${OUT:-.}.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$here}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
"$here/gpu-tests" --nocapture --test-threads 1 2>&1 | tee "$out/gpu-tests.log"
status=${PIPESTATUS[0]}
"$here/tools/multi-gpu-check.sh" "$here/pycno" 2>&1 | tee "$out/multi-gpu.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
"$here/pycno" bench --backend cuda --cells "${BENCH_CELLS:-4016,64052,1001898}" --repeat 3 2>&1 | tee "$out/gpu-bench.log"
exit "$status"
RUN
    chmod +x "$dir/run.sh"
    echo "bundle in $dir: run $dir/run.sh on a GPU machine"
    exit 0
fi

exe="$(build)"
status=0
"$exe" --nocapture --test-threads 1 || status=1
tools/multi-gpu-check.sh target/release/pycno || status=1
target/release/pycno bench --backend cuda --cells "${BENCH_CELLS:-4016,64052,1001898}" --repeat 3
exit "$status"
