#!/usr/bin/env bash
# Call 3: the blow-up check's message (1 GPU, device-resident and host-driven), the multi-GPU
# check with both paths (one NCCL all-reduce a step now), scaling with NCCL and its variants,
# and 3e7 cells last (as far as the time allows).
set -uo pipefail
B=gpu-bundle/b20
export PYCNO_ROOT=$PWD OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
cat >/tmp/blowup.json <<'JSON'
{ "name": "blowup", "domain": { "outer": [[0, 0], [10, 0], [10, 1], [0, 1]] }, "resolution": { "cells": 800 },
  "bathymetry": { "type": "constant", "depth": 1.0 },
  "initial": { "type": "layers", "layer1": { "thickness": 0.001, "velocity": [40, 0] }, "layer2": { "thickness": 0.999, "velocity": [0, 0] } },
  "physics": { "g": 9.81, "r": 0.5, "gamma": 0.9 }, "time": { "end": 2.0 } }
JSON
for k in 64 1; do echo "=== blowup K=$k"; PYCNO_DEVICE_STEPS=$k $B/pycno run /tmp/blowup.json --backend cuda -q --out /tmp/bl$k 2>&1 | tail -4 | cut -c1-400; done 2>&1 | tee $OUT/blowup.log
# tools/scaling.sh prepares /tmp/scw (mesh + partition) for the sizes; 1 GPU and host rows too.
for gx in nccl; do
  echo "=== scaling $gx"
  GPU_EXCHANGE=$gx STRONG=256576,1001898 WEAK=none PYCNO=$B/pycno OUT=/tmp/sc_$gx timeout 50 $B/tools/scaling.sh 2 /tmp/scw > $OUT/scaling_$gx.log 2>&1
  echo "rc $?"; sed -n '/Strong/,/^$/p' /tmp/sc_$gx/scaling.md | head -8; cp /tmp/sc_$gx/scaling.csv $OUT/scaling_$gx.csv
done
(
for v in "NCCL_PROTO=LL" "NCCL_MAX_NCHANNELS=1" "PYCNO_DEVICE_STEPS=1" "PYCNO_NCCL_GRAPH=0"; do
  for n in 256576 1001898; do
    for ex in overlap; do
      d=/tmp/v_${n}_$ex; rm -rf $d
      env $v mpirun --allow-run-as-root --bind-to none -np 2 ${v:+-x ${v%%=*}} $B/pycno run /tmp/scw/scen_$n.json --partition /tmp/scw/part_${n}_2 --backend cuda --no-vtk -q --exchange $ex --gpu-exchange nccl --out $d >/dev/null 2>&1
      python3 -c "import json; s=json.load(open('$d/stats.json')); print('variant=${v:-default} n=$n $ex', s['steps'], s['stepping_seconds'], s['state_checksum'], s['gpu_exchange'], [round(x*1e3,3) for x in s['phases'].values()])"
    done
  done
done
) 2>&1 | tee $OUT/variants.log
echo "=== multi-gpu"; timeout 120 $B/tools/multi-gpu-check.sh $B/pycno > $OUT/multi-gpu.log 2>&1; echo "rc $?"; grep -v "^ok\|relative mass" $OUT/multi-gpu.log | head -20
echo "=== 3e7"; GPU_EXCHANGE=nccl STRONG=30000000 WEAK=none PYCNO=$B/pycno OUT=/tmp/sc_big timeout 85 $B/tools/scaling.sh 2 /tmp/scw > $OUT/scaling_3e7.log 2>&1; echo "rc $?"; tail -5 $OUT/scaling_3e7.log; cp /tmp/sc_big/scaling.csv $OUT/scaling_3e7.csv 2>/dev/null
