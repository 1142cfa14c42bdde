#!/usr/bin/env bash
# Issue 21, call Z3 (one H200, the single-GPU kind): r1 (= 9f9d2eb's code) against s9 with
# PYCNO_DT_LIST_BLOCKS=1024 (main before it) once more on a machine of its own: the bench at
# 10^6 and 10^7 cells (to t = 0.1), interleaved; and to t = 1 (the waves reach the walls) at
# 64222, 258706 and 10^6 cells.
set -uo pipefail
S=gpu-bundle/r1; B=gpu-bundle/s9; out=${OUT:-/tmp}/callZ3; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; timeout 150 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
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
bench X=1 $S/pycno bench --backend cuda --order 1 --cells 10000000 --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 1 --cells 64052,257620,$C --repeat 3 --t-end 1
bench PYCNO_DT_LIST_BLOCKS=1024 $B/pycno bench --backend cuda --order 2 --cells 64052,257620,$C --repeat 3 --t-end 1
bench X=1 $S/pycno bench --backend cuda --order 2 --cells 64052,257620,$C --repeat 3 --t-end 1
} 2>&1 | tee $out/bench.log
