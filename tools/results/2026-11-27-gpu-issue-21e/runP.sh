#!/usr/bin/env bash
# Issue 21, call P (two GPUs of one host): bundle f5's tools/multi-gpu-check.sh, its order-2
# section alone (lines 1-61 and 146-193; it now asks for the finishing, PYCNO_TILE_FINISH=1,
# on one GPU and on two): two GPUs = one bit for bit on every exchange path.
set -uo pipefail
Q=gpu-bundle/f5; out=/tmp/callP; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
{ sed -n '1,61p;146,193p' $Q/tools/multi-gpu-check.sh; echo 'echo "multi-gpu order 2: $pass passed, $fail failed"'; echo '[ "$fail" -eq 0 ]'; } > $out/mgpu-o2.sh
timeout 200 bash $out/mgpu-o2.sh $Q/pycno > $out/mgpu-o2.log 2>&1; echo "check rc $?"; grep -E "FAIL|passed" $out/mgpu-o2.log | tail -6
cd /tmp && tar czf "${OUT:-/tmp}/callP.tgz" callP
