#!/usr/bin/env bash
# Issue 21, call Z4 (one H200): call Z3 found r1 2% slower than s9 at 64222 cells to t = 1
# (one run each). Here r1 and s9 (PYCNO_DT_LIST_BLOCKS=1024) alternate, three runs each, at
# 64222 and 258706 cells to t = 1, 7 repeats; and order 1 at both.
set -uo pipefail
S=gpu-bundle/r1; B=gpu-bundle/s9; out=${OUT:-/tmp}/callZ4; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; timeout 100 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
{
bench X=1 $S/pycno bench --backend cuda --order 1 --cells 64052,257620 --repeat 7 --t-end 1
for k in 1 2 3; do
bench PYCNO_DT_LIST_BLOCKS=1024 $B/pycno bench --backend cuda --order 2 --cells 64052,257620 --repeat 7 --t-end 1
bench X=1 $S/pycno bench --backend cuda --order 2 --cells 64052,257620 --repeat 7 --t-end 1
done
bench X=1 $S/pycno bench --backend cuda --order 1 --cells 64052,257620 --repeat 7 --t-end 1
} 2>&1 | tee $out/bench.log
