#!/usr/bin/env bash
# Issue 21, call P (four GPUs): the multi-GPU check on 2 and 4 GPUs (its order-2 section on
# both: second order from GPU to GPU with four ranks, each GPU's mailbox taking halos from
# several), and the order-2 speed on 1, 2 and 4 GPUs at 10^6 cells. Binary of call O.
set -uo pipefail
B=${B:-gpu-bundle/c3}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
nvidia-smi topo -m > $out/topo.txt 2>&1
MGPU_CELLS=64052 timeout 480 $B/tools/multi-gpu-check.sh $B/pycno > $out/multi-gpu.log 2>&1; echo "multi-gpu rc $?"
grep -E "FAIL|passed" $out/multi-gpu.log | tail -15
W=$(mktemp -d)
st() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]+"/stats.json")); print(s["steps"], "%.6f" % s["stepping_seconds"], s["state_checksum"], s.get("gpu_exchange"))' "$1"; }
cat > $W/o2.json <<JSON
{ "name": "o2", "domain": { "outer": [[-5, -5], [5, -5], [5, 5], [-5, 5]] }, "resolution": { "cells": 1001898 },
  "bathymetry": { "type": "constant", "depth": 5.0 }, "initial": { "type": "circular_dam_break" },
  "physics": { "order": 2 }, "time": { "end": 0.1 } }
JSON
{
for r in 1 2; do
  $B/pycno run $W/o2.json --backend cuda --no-vtk -q --out $W/one --overwrite 2>/dev/null && echo "order 2, 1001898 cells, 1 GPU: $(st $W/one)"
  for np in 2 4; do
    mpirun --allow-run-as-root --bind-to none -np $np $B/pycno run $W/o2.json --backend cuda --no-vtk -q --out $W/n$np --overwrite 2>/dev/null &&
      echo "order 2, 1001898 cells, $np GPUs: $(st $W/n$np)"
  done
done
} 2>&1 | tee $out/speed.log
