#!/usr/bin/env bash
# Issue 21, call Z5 (one H200): is r1's update kernel what costs 2% at 64222 cells (call Z4)?
# r1 with its order2.cu replaced at run time (PYCNO_KERNEL_DIR; the kernels are compiled at
# run time): kv0 = main's update2 body (its list read at the cells' own index: right only
# where no cells are finished, as at 64222 cells), kv1 = r1's update with the first two words
# loaded before a listed cell's thread leaves the owned sweep. Against s9
# (PYCNO_DT_LIST_BLOCKS=1024). Then kv1 against r1 at 10^6 cells.
set -uo pipefail
S=gpu-bundle/r1; B=gpu-bundle/s9; out=${OUT:-/tmp}/callZ5; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; timeout 100 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
K="--backend cuda --order 2 --cells 64052 --repeat 7 --t-end 1"
{
for k in 1 2; do
bench PYCNO_DT_LIST_BLOCKS=1024 $B/pycno bench $K
bench X=1 $S/pycno bench $K
bench PYCNO_KERNEL_DIR=$PWD/gpu-bundle/kv0 $S/pycno bench $K
bench PYCNO_KERNEL_DIR=$PWD/gpu-bundle/kv1 $S/pycno bench $K
done
C=1001898
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_KERNEL_DIR=$PWD/gpu-bundle/kv1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_KERNEL_DIR=$PWD/gpu-bundle/kv1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
} 2>&1 | tee $out/bench.log
