#!/usr/bin/env bash
# Issue 21, call I (one GPU): the tile kernel's register caps (var/t64, t80, t72:
# __launch_bounds__ on tile2 and tile2_resident in float32; same arithmetic) and tile sizes
# (PYCNO_TILE_THREADS), second order at 10^6 and 10^7 cells, against the two kernels.
set -uo pipefail
B=${B:-gpu-bundle/b7}; out="${OUT:-/tmp}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; timeout 150 $B/pycno bench --backend cuda --order 2 --repeat 3 "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
{
C=1001898,10000000
bench --cells $C
PYCNO_ORDER2_TILES=0 bench --cells $C
PYCNO_TILE_THREADS=128 bench --cells $C
PYCNO_TILE_THREADS=64 bench --cells $C
for v in t64 t80 t72; do
  PYCNO_KERNEL_DIR=$B/var/$v PYCNO_TILE_THREADS=128 bench --cells $C
done
PYCNO_KERNEL_DIR=$B/var/t64 PYCNO_TILE_THREADS=64 bench --cells $C
PYCNO_KERNEL_DIR=$B/var/t80 PYCNO_TILE_THREADS=256 bench --cells $C
echo "=== profiles"
PYCNO_KERNEL_DIR=$B/var/t72 PYCNO_TILE_THREADS=128 bench --cells 1001898 --profile
PYCNO_KERNEL_DIR=$B/var/t64 PYCNO_TILE_THREADS=128 bench --cells 1001898 --profile
} 2>&1 | tee $out/bench.log
