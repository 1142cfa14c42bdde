#!/usr/bin/env bash
# Issue 21, call R (one H200): bundle s2 = s1 plus the quiet cells' shortcut in the
# reconstruction, compiled in by PYCNO_NVRTC_FLAGS=-DPYCNO_QUIET (a cell whose three
# neighbours hold its thicknesses and no momentum, like itself, skips the limiter: its
# gradients are +0 and its faces its stored numbers, the same bits), against f5 (main at
# 58b0a50); with and without the first stage's sums (PYCNO_TILE_SUMS=0) and the finishing
# tiles' L2 prefetch (-DPYCNO_PF_FINISH). The bench's dam break (t_end 0.1) leaves most of the
# basin at rest; --t-end 1 (the waves reach the walls) is the busy case.
set -uo pipefail
M=gpu-bundle/f5; S=gpu-bundle/s2; out=/tmp/callR; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; timeout 150 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
C=1001898; Q=-DPYCNO_QUIET; P="-DPYCNO_QUIET -DPYCNO_PF_FINISH"
{
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench X=1 $M/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_NVRTC_FLAGS="$Q" $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_NVRTC_FLAGS="$Q" PYCNO_TILE_SUMS=0 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_NVRTC_FLAGS="$P" $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_NVRTC_FLAGS="$P" PYCNO_TILE_SUMS=0 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3 --t-end 1
bench X=1 $M/pycno bench --backend cuda --order 2 --cells $C --repeat 3 --t-end 1
bench PYCNO_NVRTC_FLAGS="$P" PYCNO_TILE_SUMS=0 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3 --t-end 1
bench X=1 $S/pycno bench --backend cuda --order 1 --cells 10000000 --repeat 3
bench X=1 $M/pycno bench --backend cuda --order 2 --cells 10000000 --repeat 3
bench PYCNO_NVRTC_FLAGS="$P" PYCNO_TILE_SUMS=0 $S/pycno bench --backend cuda --order 2 --cells 10000000 --repeat 3
} 2>&1 | tee $out/bench.log
cd /tmp && tar czf "${OUT:-/tmp}/callR.tgz" callR
