#!/usr/bin/env bash
# Issue 21, call J (one H200): is the finishing on in the device-resident steps, and where
# does the time go. (1) bundle f3 (f2 plus a PYCNO_BREAK_FINISH hook that scales the step of
# the tiles' own updates) compiled with -DPYCNO_BREAK_FINISH: the resident = host-driven test
# must FAIL if the tiles finish cells; (2) the host-driven kernel profile (--profile) of m0 and
# f3; (3) Nsight Compute durations of the resident kernels with 4-step batches.
set -uo pipefail
M=gpu-bundle/m0; F=gpu-bundle/f3; out=/tmp/callJ; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
echo "=== broken finishing (expect FAILED)"
PYCNO_NVRTC_FLAGS=-DPYCNO_BREAK_FINISH timeout 100 $F/tests/gpu --nocapture --test-threads 1 device_steps_equal_host_steps_at_order_2_f32 > $out/broken.log 2>&1; echo "rc=$?"
grep -E "^test result|panicked|k = " $out/broken.log | head -5
bench() { echo "--- $*"; timeout 120 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
{
bench X=1 $M/pycno bench --backend cuda --order 2 --cells 1001898 --repeat 3 --profile
bench X=1 $F/pycno bench --backend cuda --order 2 --cells 1001898 --repeat 3 --profile
} 2>&1 | tee $out/profile.log
prof() { # name bundle level
  echo "=== $1"
  PYCNO_DEVICE_STEPS=4 PYCNO_TILE_FINISH=$3 timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum \
    -k 'regex:^(tile2|update2|dt)_resident_f32$' --launch-skip 100 --launch-count 20 --csv \
    $2/pycno bench --backend cuda --cells 1001898 --repeat 1 --order 2 > $out/$1.csv 2> $out/$1.err
  echo "rc=$?"; tail -2 $out/$1.err
}
prof m0 $M 2
prof L0 $F 0
prof L2 $F 2
cd /tmp && tar czf "${OUT:-/tmp}/callJ.tgz" callJ
