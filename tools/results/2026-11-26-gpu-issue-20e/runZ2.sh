#!/usr/bin/env bash
# Issue 20, call Z2 (two GPUs): strong scaling at 3e7 cells with the edge pass's one flux call
# (bundle z), GPUs' own stores (tools/scaling.sh: meshed and partitioned once, then one GPU
# and two, the state checksums compared).
set -uo pipefail
B=${B:-gpu-bundle/z}; out="${OUT:-/tmp}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
GPU_EXCHANGE=ipc STRONG=30000000 WEAK=none PYCNO=$B/pycno OUT=$out/sc timeout 560 $B/tools/scaling.sh 2 /tmp/scw3 > $out/scaling3e7.log 2>&1
echo "3e7 rc $?"; cat $out/sc/scaling.md 2>/dev/null | head -20
