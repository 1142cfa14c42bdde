#!/usr/bin/env bash
# Issue 21, call G (one H200): tiles that finish their cells (bundle f1, branch fused-stage2)
# against main a9f0f65 (bundle m0): order 2 at 10^6 and 10^7 cells (order 1, whose kernels
# did not change, from f1), f1 with the finishing off (PYCNO_TILE_FINISH=0), f1's kernel
# profile (host-driven: it finishes nothing, so this is the tile kernel's cost with the new
# code around it).
set -uo pipefail
M=gpu-bundle/m0; F=gpu-bundle/f1; out=/tmp/callG; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { local b=$1; shift; echo "--- $b $*"; timeout 250 $b/pycno bench --backend cuda "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
C=1001898,10000000
{
bench $F --order 1 --cells $C --repeat 3
bench $M --order 2 --cells $C --repeat 3
bench $F --order 2 --cells $C --repeat 3
PYCNO_TILE_FINISH=0 bench $F --order 2 --cells 1001898 --repeat 3
bench $F --order 2 --cells 64052,257620 --t-end 1 --repeat 3
bench $M --order 2 --cells 64052,257620 --t-end 1 --repeat 3
} 2>&1 | tee $out/bench.log
cd /tmp && tar czf "${OUT:-/tmp}/callG.tgz" callG
