#!/usr/bin/env bash
# Issue 21, call Z6 (two H200s of one host): bundle r2 = r1 with the update kernel's two cases
# as separate code (call Z5: one body cost 2% at 64222 cells) and slot 0's words loaded before
# the owned sweep's test of the bits. Against s9 (PYCNO_DT_LIST_BLOCKS=1024, main before r1)
# on GPU 0: 10^6 cells interleaved, 64222 cells to t = 1, 10^7 cells; r2's GPU tests on GPU 0
# and the order-2 section of tools/multi-gpu-check.sh.
set -uo pipefail
S=gpu-bundle/r2; B=gpu-bundle/s9; out=${OUT:-/tmp}/callZ6; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; CUDA_VISIBLE_DEVICES=0 timeout 100 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
C=1001898
K="--backend cuda --order 2 --cells 64052 --repeat 7 --t-end 1"
{
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench PYCNO_DT_LIST_BLOCKS=1024 $B/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_DT_LIST_BLOCKS=1024 $B/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench PYCNO_DT_LIST_BLOCKS=1024 $B/pycno bench $K
bench X=1 $S/pycno bench $K
bench PYCNO_DT_LIST_BLOCKS=1024 $B/pycno bench $K
bench X=1 $S/pycno bench $K
bench X=1 $S/pycno bench --backend cuda --order 2 --cells 10000000 --repeat 3
} 2>&1 | tee $out/bench.log
CUDA_VISIBLE_DEVICES=0 timeout 120 $S/tests/gpu --nocapture --test-threads 1 > $out/test-gpu.log 2>&1; echo "gpu rc=$?"; grep -E "^test result|FAILED|panicked" $out/test-gpu.log | head
{ sed -n '1,61p;146,193p' $S/tools/multi-gpu-check.sh; echo 'echo "multi-gpu order 2: $pass passed, $fail failed"'; echo '[ "$fail" -eq 0 ]'; } > $out/mgpu-o2.sh
timeout 170 bash $out/mgpu-o2.sh $S/pycno > $out/mgpu-o2.log 2>&1; echo "check rc $?"; grep -E "FAIL|passed" $out/mgpu-o2.log | tail -6
