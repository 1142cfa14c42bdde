#!/usr/bin/env bash
# Issue 21, call U (two GPUs of one host): bundle s5 (the final code: s4 without its opt-out
# switches). The GPU tests on GPU 0; the order-2 section of tools/multi-gpu-check.sh (lines
# 1-61 and 146-193; it asks for the finishing, PYCNO_TILE_FINISH=1, on one GPU and on two):
# two GPUs = one bit for bit on every exchange path; order 1 and 2 at 10^6 cells on GPU 0,
# also with every kernel letting the next one start early (PYCNO_PDL_EARLY_CELLS).
set -uo pipefail
S=gpu-bundle/s5; out=/tmp/callU; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
CUDA_VISIBLE_DEVICES=0 timeout 150 $S/tests/gpu --nocapture --test-threads 1 > $out/test-gpu.log 2>&1; echo "gpu rc=$?"; grep -E "^test result|FAILED|panicked" $out/test-gpu.log | head
{ sed -n '1,61p;146,193p' $S/tools/multi-gpu-check.sh; echo 'echo "multi-gpu order 2: $pass passed, $fail failed"'; echo '[ "$fail" -eq 0 ]'; } > $out/mgpu-o2.sh
timeout 200 bash $out/mgpu-o2.sh $S/pycno > $out/mgpu-o2.log 2>&1; echo "check rc $?"; grep -E "FAIL|passed" $out/mgpu-o2.log | tail -6
bench() { echo "--- $*"; CUDA_VISIBLE_DEVICES=0 timeout 100 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
C=1001898
{
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_PDL_EARLY_CELLS=1000000000 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench PYCNO_PDL_EARLY_CELLS=1000000000 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
} 2>&1 | tee $out/bench.log
cd /tmp && tar czf "${OUT:-/tmp}/callU.tgz" callU
