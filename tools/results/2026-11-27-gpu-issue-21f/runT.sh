#!/usr/bin/env bash
# Issue 21, call T (one H200): bundle s4 = s3 with a quiet cell skipping its stencil's loads
# (-DPYCNO_WR_ALWAYS turns that off) and the order-2 update reading an unsummed cell's six
# slot words in one round (-DPYCNO_UPD_TWO_ROUNDS: the layer-2 words after the layer-1 ones,
# as before). The GPU tests, the probes and the order-2 check with it; the bench's dam break
# at 10^6 (each variant) and 10^7 cells, and --t-end 1 at 10^6 (busy).
set -uo pipefail
S=gpu-bundle/s4; out=/tmp/callT; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; timeout 150 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
C=1001898
{
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_NVRTC_FLAGS=-DPYCNO_UPD_TWO_ROUNDS $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_NVRTC_FLAGS=-DPYCNO_WR_ALWAYS $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3 --t-end 1
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3 --t-end 1
bench PYCNO_NVRTC_FLAGS=-DPYCNO_WR_ALWAYS $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3 --t-end 1
bench X=1 $S/pycno bench --backend cuda --order 1 --cells 10000000 --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells 10000000 --repeat 3
} 2>&1 | tee $out/bench.log
{
for t in gpu gpu_probes; do
  echo "=== $t"; timeout 200 $S/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked" $out/test-$t.log | head -12
done
} 2>&1 | tee $out/tests.log
timeout 240 $S/tools/order2-gpu-check.sh $S/pycno > $out/order2-gpu.log 2>&1; echo "order2 check rc $?"; grep -E 'FAIL|passed' $out/order2-gpu.log | tail -8
cd /tmp && tar czf "${OUT:-/tmp}/callT.tgz" callT
