#!/usr/bin/env bash
# Issue 21, call Y (one H200): bundle s9 = d612e69 (main) with the first stage's time step
# over its list on as many blocks as the list fills, up to 2048 (PYCNO_DT_LIST_BLOCKS=1024:
# main's grid). Against s5 (13cfcbc: main's kernels). Bench at 10^6 and 10^7 cells; the GPU
# tests and the order-2 check of s9 (main's kernels as of d612e69, first run on a GPU).
set -uo pipefail
S=gpu-bundle/s9; B=gpu-bundle/s5; out=${OUT:-/tmp}/callY; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; timeout 150 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
C=1001898
{
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench X=1 $B/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_DT_LIST_BLOCKS=1024 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_DT_LIST_BLOCKS=4096 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 1 --cells 10000000 --repeat 3
bench PYCNO_DT_LIST_BLOCKS=1024 $S/pycno bench --backend cuda --order 2 --cells 10000000 --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells 10000000 --repeat 3
} 2>&1 | tee $out/bench.log
timeout 110 $S/tests/gpu --nocapture --test-threads 1 > $out/test-gpu.log 2>&1; echo "gpu rc=$?"; grep -E "^test result|FAILED|panicked" $out/test-gpu.log | head
timeout 150 $S/tools/order2-gpu-check.sh $S/pycno > $out/order2-gpu.log 2>&1; echo "order2 check rc $?"; grep -E 'FAIL|passed' $out/order2-gpu.log | tail -4
