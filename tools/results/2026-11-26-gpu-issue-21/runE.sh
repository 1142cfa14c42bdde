#!/usr/bin/env bash
# Issues 20 and 21, call E (one GPU): the GPU tests (second order's included), the order-2
# check (3 ranks = 1 rank on one GPU with two rings, restarts), second order's step cost
# against first order's (and per kernel), and the first order's speed after issue 20's changes.
set -uo pipefail
B=${B:-gpu-bundle/b4}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
for t in gpu gpu_probes kernels; do
  echo "=== $t"; timeout 240 $B/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked" $out/test-$t.log | head -12
done 2>&1 | tee $out/tests.log
timeout 150 $B/tools/order2-gpu-check.sh $B/pycno > $out/order2-gpu.log 2>&1; echo "order2 check rc $?"; grep -E 'FAIL|passed' $out/order2-gpu.log | tail -8
bench() { timeout 150 $B/pycno bench --backend cuda "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
{
echo "=== order 1 / order 2, 1e6 and 1e7"
bench --order 1 --cells 1001898,10000000 --repeat 3
bench --order 2 --cells 1001898,10000000 --repeat 3
echo "=== profile 1e6"; bench --order 2 --cells 1001898 --repeat 3 --profile
bench --order 1 --cells 1001898 --repeat 3 --profile
echo "=== order 1 small, graph warm-up on / off"
bench --cells 4032,64052 --repeat 7; bench --cells 4032,64052 --t-end 1 --repeat 7
PYCNO_GRAPH_WARMUP=0 bench --cells 4032,64052 --repeat 7
} 2>&1 | tee $out/bench.log
echo "=== examples"; timeout 200 $B/tests/examples --nocapture --test-threads 1 > $out/test-examples.log 2>&1; echo "rc=$?"; grep -E "^test result|FAILED|panicked" $out/test-examples.log | head
