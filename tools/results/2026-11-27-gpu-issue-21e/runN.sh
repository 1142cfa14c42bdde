#!/usr/bin/env bash
# Issue 21, call N (one H200): the finishing tiles (bundle f4) on the smaller meshes against
# main (m0): order 2 at 64222 and 258706 cells to t = 1, and order 1 from f4.
set -uo pipefail
M=gpu-bundle/m0; F=gpu-bundle/f4; out=/tmp/callN; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; timeout 120 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
{
bench X=1 $F/pycno bench --backend cuda --order 1 --cells 64052,257620 --t-end 1 --repeat 3
bench X=1 $M/pycno bench --backend cuda --order 2 --cells 64052,257620 --t-end 1 --repeat 3
bench X=1 $F/pycno bench --backend cuda --order 2 --cells 64052,257620 --t-end 1 --repeat 3
} 2>&1 | tee $out/bench.log
cd /tmp && tar czf "${OUT:-/tmp}/callN.tgz" callN
