#!/usr/bin/env bash
# Issue 21, call E (one H200): the final tile kernel (bundle q2: call C's q1, plus one place a
# thread with no loop or sum kept through the flux, the edge's entry read again from shared
# memory for its stores, and float32's fast division in the reconstruction) against main (p2):
# order 1 and order 2 at 10^6 and 10^7 cells, smaller meshes at order 2, q2's kernel profile;
# then q2's GPU tests and the order-2 check.
set -uo pipefail
P=gpu-bundle/p2; Q=gpu-bundle/q2; out=/tmp/callE; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { local b=$1; shift; echo "--- $b $*"; timeout 200 $b/pycno bench --backend cuda "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
C=1001898,10000000
{
bench $P --order 1 --cells $C --repeat 3
bench $Q --order 1 --cells $C --repeat 3
bench $P --order 2 --cells $C --repeat 3
bench $Q --order 2 --cells $C --repeat 3
bench $Q --order 1 --cells 64052,257620 --t-end 1 --repeat 3
bench $P --order 2 --cells 64052,257620 --t-end 1 --repeat 3
bench $Q --order 2 --cells 64052,257620 --t-end 1 --repeat 3
bench $Q --order 2 --cells 1001898 --repeat 3 --profile
} 2>&1 | tee $out/bench.log
for t in gpu gpu_probes; do
  echo "=== $t"; timeout 200 $Q/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked" $out/test-$t.log | head -12
done 2>&1 | tee $out/tests.log
timeout 300 $Q/tools/order2-gpu-check.sh $Q/pycno > $out/order2-gpu.log 2>&1; echo "order2 check rc $?"; grep -E 'FAIL|passed' $out/order2-gpu.log | tail -8
cd /tmp && tar czf "${OUT:-/tmp}/callE.tgz" callE
