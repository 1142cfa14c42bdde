#!/usr/bin/env bash
# Issue 21, call C (one H200): the tile kernel with few dependent loads (tiles at fixed
# places, a cell's entry carrying its neighbours, the edges' entries copied to shared memory
# while the block reconstructs) and the limiter's one division per side (bundle q1), against
# main (bundle p2); with float32 fast division in the reconstruction (-DPYCNO_RC_FAST_DIV) and
# four blocks a multiprocessor (-DPYCNO_TILE_BLOCKS=4) as compile-time variants. Then q1's GPU
# tests and the order-2 check.
set -uo pipefail
P=gpu-bundle/p2; Q=gpu-bundle/q1; out=/tmp/callC; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { local b=$1; shift; echo "--- $b ${PYCNO_NVRTC_FLAGS:-} $*"; timeout 200 $b/pycno bench --backend cuda "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
C=1001898,10000000
{
bench $P --order 1 --cells $C --repeat 3
bench $Q --order 1 --cells $C --repeat 3
bench $P --order 2 --cells $C --repeat 3
bench $Q --order 2 --cells $C --repeat 3
PYCNO_NVRTC_FLAGS="-DPYCNO_RC_FAST_DIV" bench $Q --order 2 --cells $C --repeat 3
PYCNO_NVRTC_FLAGS="-DPYCNO_TILE_BLOCKS=4" bench $Q --order 2 --cells 1001898 --repeat 3
PYCNO_NVRTC_FLAGS="-DPYCNO_RC_FAST_DIV -DPYCNO_TILE_BLOCKS=4" bench $Q --order 2 --cells 1001898 --repeat 3
bench $Q --order 2 --cells 1001898 --repeat 3 --profile
PYCNO_NVRTC_FLAGS="-DPYCNO_RC_FAST_DIV" bench $Q --order 2 --cells 1001898 --repeat 3 --profile
} 2>&1 | tee $out/bench.log
for t in gpu gpu_probes; do
  echo "=== $t"; timeout 200 $Q/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked" $out/test-$t.log | head -12
done 2>&1 | tee $out/tests.log
timeout 200 $Q/tools/order2-gpu-check.sh $Q/pycno > $out/order2-gpu.log 2>&1; echo "order2 check rc $?"; grep -E 'FAIL|passed' $out/order2-gpu.log | tail -8
cd /tmp && tar czf "${OUT:-/tmp}/callC.tgz" callC
