#!/usr/bin/env bash
# Issue 21, call Z1 (two H200s of one host): bundle r1 = c350ddb (main) plus the listed cells'
# words in the list's order (RestArrays: the tiles put the words of the cells they neither sum
# nor finish at the cell's index in the list; the time step and the updates read them in
# order). Against s9 with PYCNO_DT_LIST_BLOCKS=1024 (d612e69 = main's code and kernels).
# Bench on GPU 0 at 10^6 and 10^7 cells, interleaved; r1's GPU tests on GPU 0; the order-2
# section of tools/multi-gpu-check.sh (lines 1-61 and 146-193, finishing asked for) with r1.
set -uo pipefail
S=gpu-bundle/r1; B=gpu-bundle/s9; out=${OUT:-/tmp}/callZ1; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; CUDA_VISIBLE_DEVICES=0 timeout 100 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
C=1001898
{
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench PYCNO_DT_LIST_BLOCKS=1024 $B/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_DT_LIST_BLOCKS=1024 $B/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 1 --cells 10000000 --repeat 3
bench PYCNO_DT_LIST_BLOCKS=1024 $B/pycno bench --backend cuda --order 2 --cells 10000000 --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells 10000000 --repeat 3
} 2>&1 | tee $out/bench.log
CUDA_VISIBLE_DEVICES=0 timeout 120 $S/tests/gpu --nocapture --test-threads 1 > $out/test-gpu.log 2>&1; echo "gpu rc=$?"; grep -E "^test result|FAILED|panicked" $out/test-gpu.log | head
{ sed -n '1,61p;146,193p' $S/tools/multi-gpu-check.sh; echo 'echo "multi-gpu order 2: $pass passed, $fail failed"'; echo '[ "$fail" -eq 0 ]'; } > $out/mgpu-o2.sh
timeout 170 bash $out/mgpu-o2.sh $S/pycno > $out/mgpu-o2.log 2>&1; echo "check rc $?"; grep -E "FAIL|passed" $out/mgpu-o2.log | tail -6
