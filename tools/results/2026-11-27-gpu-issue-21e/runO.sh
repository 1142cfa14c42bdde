#!/usr/bin/env bash
# Issue 21, call O (one H200): bundle f5 = f4 with the finishing from 200000 owned cells
# (FINISH_MIN_CELLS; PYCNO_TILE_FINISH=1 always, 0 never) and the tests asking for it: the
# resident = host-driven tests (tests/gpu.rs, set_tile_finish(true)) in f32 and f64 tiles, and
# the bench at 64222 and 258706 cells (off and on by the size) and 10^6 against main (m0).
set -uo pipefail
M=gpu-bundle/m0; F=gpu-bundle/f5; out=/tmp/callO; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
{
echo "=== gpu device_steps"; timeout 150 $F/tests/gpu --nocapture --test-threads 1 device_steps > $out/test-gpu.log 2>&1; echo "rc=$?"
grep -E "^test result|FAILED|panicked" $out/test-gpu.log | head -8
echo "=== gpu device_steps, order 2, PYCNO_ORDER2_TILES=1"
PYCNO_ORDER2_TILES=1 timeout 100 $F/tests/gpu --nocapture --test-threads 1 device_steps_equal_host_steps_at_order_2 > $out/test-gpu-tiles.log 2>&1; echo "rc=$?"
grep -E "^test result|FAILED|panicked" $out/test-gpu-tiles.log | head -8
} 2>&1 | tee $out/tests.log
bench() { echo "--- $*"; timeout 120 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
{
bench X=1 $M/pycno bench --backend cuda --order 2 --cells 64052,257620 --t-end 1 --repeat 3
bench X=1 $F/pycno bench --backend cuda --order 2 --cells 64052,257620 --t-end 1 --repeat 3
bench X=1 $M/pycno bench --backend cuda --order 2 --cells 1001898 --repeat 3
bench X=1 $F/pycno bench --backend cuda --order 2 --cells 1001898 --repeat 3
} 2>&1 | tee $out/bench.log
cd /tmp && tar czf "${OUT:-/tmp}/callO.tgz" callO
