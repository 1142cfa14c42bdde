#!/usr/bin/env bash
# Issue 21, call H (one GPU): second order's reconstruction and edge pass as one kernel over
# tiles (tile2, kernels/order2.cu): the GPU tests, the order-2 check (tiles = two kernels,
# 1 rank = 3 ranks), and its speed against the two kernels (PYCNO_ORDER2_TILES=0) and first
# order, at 128 and 256 threads a tile.
set -uo pipefail
B=${B:-gpu-bundle/b7}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { timeout 150 $B/pycno bench --backend cuda "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
{
echo "=== 1e6, 1e7: order 1; order 2 tiles 256; two kernels; tiles 128"
bench --order 1 --cells 1001898,10000000 --repeat 3
bench --order 2 --cells 1001898,10000000 --repeat 3
PYCNO_ORDER2_TILES=0 bench --order 2 --cells 1001898,10000000 --repeat 3
PYCNO_TILE_THREADS=128 bench --order 2 --cells 1001898,10000000 --repeat 3
echo "=== profile 1e6: tiles 256, tiles 128"
bench --order 2 --cells 1001898 --repeat 3 --profile
PYCNO_TILE_THREADS=128 bench --order 2 --cells 1001898 --repeat 3 --profile
echo "=== small: order 1; order 2 tiles; two kernels"
bench --order 1 --cells 4032,64052,257620 --t-end 1 --repeat 5
bench --order 2 --cells 4032,64052,257620 --t-end 1 --repeat 5
PYCNO_ORDER2_TILES=0 bench --order 2 --cells 4032,64052,257620 --t-end 1 --repeat 5
} 2>&1 | tee $out/bench.log
for t in gpu kernels gpu_probes; do
  echo "=== $t"; timeout 200 $B/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked" $out/test-$t.log | head -12
done 2>&1 | tee $out/tests.log
timeout 200 $B/tools/order2-gpu-check.sh $B/pycno > $out/order2-gpu.log 2>&1; echo "order2 check rc $?"; grep -E 'FAIL|passed' $out/order2-gpu.log | tail -8
