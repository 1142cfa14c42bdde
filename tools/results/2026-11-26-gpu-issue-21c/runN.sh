#!/usr/bin/env bash
# Issue 21, calls N and O (two GPUs; O: after the fix of the tiles' empty range): second order from GPU to GPU by the GPUs' own stores (each
# stage's halo; mailbox copies alternating by exchange): the multi-GPU check (its new order-2
# section, and every first-order path again: the mailbox layout changed), the GPU tests, the
# order-2 check, and the order-2 speed on 1 and 2 GPUs (ipc against the host exchange).
set -uo pipefail
B=${B:-gpu-bundle/c3}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
MGPU_CELLS=64052 timeout 420 $B/tools/multi-gpu-check.sh $B/pycno > $out/multi-gpu.log 2>&1; echo "multi-gpu rc $?"
grep -E "FAIL|passed" $out/multi-gpu.log | tail -15
W=$(mktemp -d)
st() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]+"/stats.json")); print(s["steps"], "%.6f" % s["stepping_seconds"], s["state_checksum"], s.get("gpu_exchange"))' "$1"; }
{
for n in 257620 1001898; do
  cat > $W/o2.json <<JSON
{ "name": "o2", "domain": { "outer": [[-5, -5], [5, -5], [5, 5], [-5, 5]] }, "resolution": { "cells": $n },
  "bathymetry": { "type": "constant", "depth": 5.0 }, "initial": { "type": "circular_dam_break" },
  "physics": { "order": 2 }, "time": { "end": 0.1 } }
JSON
  for r in 1 2 3; do
    $B/pycno run $W/o2.json --backend cuda --no-vtk -q --out $W/one --overwrite && echo "order 2, $n cells, 1 GPU: $(st $W/one)"
    for gx in ipc host; do
      mpirun --allow-run-as-root --bind-to none -np 2 $B/pycno run $W/o2.json --backend cuda --gpu-exchange $gx --no-vtk -q --out $W/two_$gx --overwrite &&
        echo "order 2, $n cells, 2 GPUs $gx: $(st $W/two_$gx)"
    done
  done
done
} 2>&1 | tee $out/speed.log
for t in gpu kernels; do
  echo "=== $t"; timeout 200 $B/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked" $out/test-$t.log | head -12
done 2>&1 | tee $out/tests.log
timeout 200 $B/tools/order2-gpu-check.sh $B/pycno > $out/order2-gpu.log 2>&1; echo "order2 check rc $?"; grep -E 'FAIL|passed' $out/order2-gpu.log | tail -8
