#!/usr/bin/env bash
# Issue 21, call K (one H200): the second version of the finishing (bundle f4): only the
# second stage's tiles finish their cells, in a kernel of their own (tile2_finish_resident),
# the first stage's tile kernel is main's, and the update takes a list of the other cells.
# Order 2 at 10^6 and 10^7 cells against main (m0), order 1 from f4, f4 with the finishing
# off; Nsight Compute durations of f4's resident kernels (4-step batches).
set -uo pipefail
M=gpu-bundle/m0; F=gpu-bundle/f4; out=/tmp/callK; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; timeout 250 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
C=1001898,10000000
{
bench X=1 $F/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench X=1 $M/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $F/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_TILE_FINISH=0 $F/pycno bench --backend cuda --order 2 --cells 1001898 --repeat 3
} 2>&1 | tee $out/bench.log
PYCNO_DEVICE_STEPS=4 timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum \
    -k 'regex:^(tile2|tile2_finish|update2|dt)_resident_f32$' --launch-skip 100 --launch-count 20 --csv \
    $F/pycno bench --backend cuda --cells 1001898 --repeat 1 --order 2 > $out/f4.csv 2> $out/f4.err; echo "ncu rc=$?"
cd /tmp && tar czf "${OUT:-/tmp}/callK.tgz" callK
