#!/usr/bin/env bash
# Issue 21, call S (one H200): bundle s3 (the quiet cells' shortcut in the reconstruction, on
# the CPU too; the finishing tiles' L2 prefetch; the first stage's sums, all built in) against
# f5 (main at 58b0a50), and s3 with -DPYCNO_QUIET_WR (a quiet cell also skips its stencil's
# loads; a cell that is not loads it after its neighbours' states). The bench's dam break at
# 10^6 and 10^7 cells, --t-end 1 (busy: the waves reach the walls) at 64222, 258706 and 10^6;
# Nsight Compute durations of s3's resident kernels at 10^6.
set -uo pipefail
M=gpu-bundle/f5; S=gpu-bundle/s3; out=/tmp/callS; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; timeout 150 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
C=1001898; W=-DPYCNO_QUIET_WR
{
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench X=1 $M/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_NVRTC_FLAGS=$W $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 1 --cells 64052,257620,$C --repeat 3 --t-end 1
bench X=1 $M/pycno bench --backend cuda --order 2 --cells 64052,257620,$C --repeat 3 --t-end 1
bench X=1 $S/pycno bench --backend cuda --order 2 --cells 64052,257620,$C --repeat 3 --t-end 1
bench X=1 $S/pycno bench --backend cuda --order 1 --cells 10000000 --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells 10000000 --repeat 3
bench PYCNO_NVRTC_FLAGS=$W $S/pycno bench --backend cuda --order 2 --cells 10000000 --repeat 3
} 2>&1 | tee $out/bench.log
PYCNO_DEVICE_STEPS=4 timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum \
    -k 'regex:^(tile2|tile2_sums|tile2_finish|update2|dt)_resident_f32$' --launch-skip 100 --launch-count 20 --csv \
    $S/pycno bench --backend cuda --cells $C --repeat 1 --order 2 > $out/s3.csv 2> $out/s3.err; echo "ncu rc=$?"
cd /tmp && tar czf "${OUT:-/tmp}/callS.tgz" callS
