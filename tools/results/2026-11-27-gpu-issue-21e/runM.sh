#!/usr/bin/env bash
# Issue 21, call M (two GPUs of one host): bundle f4 (the second-stage tiles finishing their cells) on several ranks. The
# order-2 section of tools/multi-gpu-check.sh alone (its lines 1-61 and 146-190: the
# dam break and the lock exchange with dry cells, two GPUs = one bit for bit on every
# exchange path at order 2; the rest of the check runs first-order code this change leaves
# alone), and order 2 at 10^6 cells on one and two GPUs.
set -uo pipefail
Q=gpu-bundle/f4; out=/tmp/callM; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
{ sed -n '1,61p;146,190p' $Q/tools/multi-gpu-check.sh; echo 'echo "multi-gpu order 2: $pass passed, $fail failed"'; echo '[ "$fail" -eq 0 ]'; } > $out/mgpu-o2.sh
timeout 200 bash $out/mgpu-o2.sh $Q/pycno > $out/mgpu-o2.log 2>&1; echo "check rc $?"; grep -E "FAIL|passed" $out/mgpu-o2.log | tail -6
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
cat > $out/b.json <<'JSON'
{ "name": "paper", "domain": { "outer": [[-5, -5], [5, -5], [5, 5], [-5, 5]] }, "resolution": { "cells": 1001898 },
  "bathymetry": { "type": "constant", "depth": 5.0 }, "initial": { "type": "circular_dam_break" },
  "physics": { "order": 2 }, "time": { "end": 0.1 } }
JSON
s() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]+"/stats.json")); print(s["stepping_seconds"], s["state_checksum"], s["steps"])' $1; }
for r in 1; do
  timeout 120 $Q/pycno run $out/b.json --backend cuda --no-vtk -q --out $out/b1_$r > /dev/null 2>&1; echo "1 GPU: $(s $out/b1_$r)"
  timeout 120 mpirun --allow-run-as-root --bind-to none -np 2 $Q/pycno run $out/b.json --backend cuda --no-vtk -q --out $out/b2_$r > /dev/null 2>&1; echo "2 GPUs: $(s $out/b2_$r)"
done 2>&1 | tee $out/bench2.log
rm -rf $out/b1_* $out/b2_*
cd /tmp && tar czf "${OUT:-/tmp}/callM.tgz" callM
