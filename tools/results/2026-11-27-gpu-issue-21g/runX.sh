#!/usr/bin/env bash
# Issue 21, call X (one H200): bundle s8 = d612e69 with the finishing tiles loading each
# finished cell's update words (state, low parts, the step's start) before their last barrier
# (-DPYCNO_FINISH_LATE_LOADS: after it, as main; -DPYCNO_EARLY_START_ONLY: only the low parts
# and the start before it; -DPYCNO_EARLY_SYNCWARP: a __syncwarp before the loads). Against s5
# (13cfcbc: main's kernels). Bench at 10^6 cells; the GPU tests of s8.
set -uo pipefail
S=gpu-bundle/s8; B=gpu-bundle/s5; out=${OUT:-/tmp}/callX; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; timeout 100 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
C=1001898
{
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench X=1 $B/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_NVRTC_FLAGS=-DPYCNO_FINISH_LATE_LOADS $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_NVRTC_FLAGS=-DPYCNO_EARLY_START_ONLY $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_NVRTC_FLAGS=-DPYCNO_EARLY_SYNCWARP $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $B/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
} 2>&1 | tee $out/bench.log
timeout 120 $S/tests/gpu --nocapture --test-threads 1 > $out/test-gpu.log 2>&1; echo "gpu rc=$?"; grep -E "^test result|FAILED|panicked" $out/test-gpu.log | head
