#!/usr/bin/env bash
# Issue 20, call X (two GPUs): the exchange's stream (halo stores and receipt, communication
# edges) at the device's highest priority (the new default; PYCNO_EXCHANGE_PRIORITY=0: the
# default priority, as before), the same binary, interleaved with one GPU, five runs each
# (three at order 2); the checksums must agree; then the multi-GPU check with it on.
set -uo pipefail
B=${B:-gpu-bundle/x}; out="${OUT:-/tmp}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
W=$(mktemp -d)
st() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]+"/stats.json")); print(s["steps"], "%.6f" % s["stepping_seconds"], s["state_checksum"])' "$1"; }
{
for n in 257620 1001898; do
  for r in 1 2 3 4 5; do
    $B/pycno run --cells $n --t-end 0.1 --backend cuda --no-vtk -q --out $W/one --overwrite 2>/dev/null && echo "$n 1 GPU: $(st $W/one)"
    for j in 0 1; do
      PYCNO_EXCHANGE_PRIORITY=$j mpirun --allow-run-as-root --bind-to none -x PYCNO_EXCHANGE_PRIORITY -np 2 $B/pycno run --cells $n --t-end 0.1 --backend cuda --gpu-exchange ipc --no-vtk -q \
        --out $W/two --overwrite 2>/dev/null && echo "$n 2 GPUs ipc priority=$j: $(st $W/two)"
    done
  done
done
for n in 257620 1001898; do
  cat > $W/o2.json <<JSON
{ "name": "o2", "domain": { "outer": [[-5, -5], [5, -5], [5, 5], [-5, 5]] }, "resolution": { "cells": $n },
  "bathymetry": { "type": "constant", "depth": 5.0 }, "initial": { "type": "circular_dam_break" },
  "physics": { "order": 2 }, "time": { "end": 0.1 } }
JSON
  for r in 1 2 3; do
    $B/pycno run $W/o2.json --backend cuda --no-vtk -q --out $W/one --overwrite 2>/dev/null && echo "$n order 2 1 GPU: $(st $W/one)"
    for j in 0 1; do
      PYCNO_EXCHANGE_PRIORITY=$j mpirun --allow-run-as-root --bind-to none -x PYCNO_EXCHANGE_PRIORITY -np 2 $B/pycno run $W/o2.json --backend cuda --gpu-exchange ipc --no-vtk -q \
        --out $W/two --overwrite 2>/dev/null && echo "$n order 2 2 GPUs ipc priority=$j: $(st $W/two)"
    done
  done
done
} 2>&1 | tee $out/speed.log
unset PYCNO_EXCHANGE_PRIORITY
MGPU_CELLS=64052 timeout 330 $B/tools/multi-gpu-check.sh $B/pycno > $out/multi-gpu.log 2>&1; echo "multi-gpu (highest priority) rc=$?"
grep -E "FAIL|passed" $out/multi-gpu.log | tail -15
