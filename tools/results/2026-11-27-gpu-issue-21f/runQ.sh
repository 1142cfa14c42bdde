#!/usr/bin/env bash
# Issue 21, call Q (one H200): bundle s1 (the first stage's tiles sum the cells they finish
# at the second and take their time steps; tile2_sums_resident) against f5 (main at 58b0a50).
# The resident = host-driven tests with it; order 2 at 10^6 cells with it, without it
# (PYCNO_TILE_SUMS=0) and with two prefetch variants compiled in by PYCNO_NVRTC_FLAGS
# (-DPYCNO_PF_FINISH: the second stage's finishing tiles ask the L2 for the finished cells'
# update words at their start; -DPYCNO_PF_AHEAD=396: each tile asks for the entries of the
# tile 396 blocks on); 10^7 cells; Nsight Compute durations of s1's resident kernels.
set -uo pipefail
M=gpu-bundle/f5; S=gpu-bundle/s1; out=/tmp/callQ; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
timeout 120 $S/tests/gpu device_steps --test-threads 1 > $out/gpu-device-steps.log 2>&1; echo "device_steps rc=$?"; grep "test result" $out/gpu-device-steps.log
bench() { echo "--- $*"; timeout 150 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
C=1001898
{
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench X=1 $M/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_TILE_SUMS=0 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_NVRTC_FLAGS=-DPYCNO_PF_FINISH $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_NVRTC_FLAGS=-DPYCNO_PF_AHEAD=396 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $M/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $M/pycno bench --backend cuda --order 2 --cells 10000000 --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells 10000000 --repeat 3
} 2>&1 | tee $out/bench.log
PYCNO_DEVICE_STEPS=4 timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum \
    -k 'regex:^(tile2|tile2_sums|tile2_finish|update2|dt)_resident_f32$' --launch-skip 100 --launch-count 20 --csv \
    $S/pycno bench --backend cuda --cells $C --repeat 1 --order 2 > $out/s1.csv 2> $out/s1.err; echo "ncu rc=$?"
cd /tmp && tar czf "${OUT:-/tmp}/callQ.tgz" callQ
