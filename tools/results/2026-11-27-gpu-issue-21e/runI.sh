#!/usr/bin/env bash
# Issue 21, call I (one H200): where the finishing tiles' time goes in the device-resident
# steps. Nsight Compute's kernel durations (gpu__time_duration, clocks not locked) of the
# resident order-2 kernels at 10^6 cells: main (m0) and bundle f2 with PYCNO_TILE_FINISH 0
# (nothing), 1 (slots summed at both stages) and 2 (summed, then updated at the second stage);
# then f2's bench at each level.
set -uo pipefail
M=gpu-bundle/m0; F=gpu-bundle/f2; out=/tmp/callI; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
prof() { # name bundle level
  echo "=== $1"
  PYCNO_TILE_FINISH=$3 timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum \
    -k 'regex:^(tile2|update2|dt)_resident_f32$' --launch-skip 200 --launch-count 30 --csv \
    $2/pycno bench --backend cuda --cells 1001898 --repeat 1 --order 2 > $out/$1.csv 2> $out/$1.err
  echo "rc=$?"; tail -2 $out/$1.err
}
prof m0 $M 2
prof L0 $F 0
prof L1 $F 1
prof L2 $F 2
bench() { echo "--- $*"; timeout 120 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
{
bench PYCNO_TILE_FINISH=2 $F/pycno bench --backend cuda --order 2 --cells 1001898 --repeat 3
bench PYCNO_TILE_FINISH=1 $F/pycno bench --backend cuda --order 2 --cells 1001898 --repeat 3
bench PYCNO_TILE_FINISH=0 $F/pycno bench --backend cuda --order 2 --cells 1001898 --repeat 3
bench PYCNO_TILE_FINISH=2 $M/pycno bench --backend cuda --order 2 --cells 1001898 --repeat 3
} 2>&1 | tee $out/bench.log
cd /tmp && tar czf "${OUT:-/tmp}/callI.tgz" callI
