#!/usr/bin/env bash
# Integration of this session (issues 18, 20, 21, 22): GPU tests, checksums, beta-plane and
# strait on the GPU, speed against main. Writes logs to $OUT.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-$here}"; export PYCNO_ROOT=$here/root
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 NCCL_NVLS_ENABLE=0
B=$here/bint
nvidia-smi -L > $out/gpus.txt
for t in gpu gpu_probes examples kernels; do echo "=== $t"; CUDA_VISIBLE_DEVICES=0 timeout 240 $B/tests/$t --nocapture --test-threads 1 > $out/gpu-tests-$t.log 2>&1; echo "rc=$?"; grep -E "^test result|FAILED|panicked" $out/gpu-tests-$t.log | head -8; done
sum() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["state_checksum"], d["steps"], d.get("gpu_exchange",""))' "$1/stats.json" 2>/dev/null || echo "missing $(tail -2 $1/err)"; }
echo "=== paper benchmark checksums (main GPU: 16040 f32 4d6b763e66ef86c7, f64 d655e2f866c3e3bc)"
for cells in 16040 1001898; do for p in f32 f64; do line="$cells $p"
  for mode in dev host np3; do d=$(mktemp -d)
    case $mode in
      dev) CUDA_VISIBLE_DEVICES=0 $B/pycno run --cells $cells --precision $p --backend cuda --no-vtk --out $d/o -q >/dev/null 2>"$d/err";;
      host) CUDA_VISIBLE_DEVICES=0 PYCNO_DEVICE_STEPS=1 $B/pycno run --cells $cells --precision $p --backend cuda --no-vtk --out $d/o -q >/dev/null 2>"$d/err";;
      np3) CUDA_VISIBLE_DEVICES=0 mpirun -np 3 $B/pycno run --cells $cells --precision $p --backend cuda --no-vtk --out $d/o -q >/dev/null 2>"$d/err";;
    esac; line="$line | $mode $(sum $d/o)"; rm -rf $d; done; echo "$line"; done; done 2>&1 | tee $out/checksums.log
cat > $here/beta.json <<'JSON'
{ "name": "beta", "domain": { "outer": [[-200, -200], [200, -200], [200, 200], [-200, 200]] }, "resolution": { "cells": 20000 },
  "bathymetry": { "type": "gaussian_bump", "depth": 5, "height": 2, "center": [30, 10], "width": 40 },
  "initial": { "type": "dam_break_x", "x0": 0, "interface_left": -1, "interface_right": -1.5, "surface": 0 },
  "physics": { "r": 0.98, "manning": 0.02, "coriolis": { "f0": 0.3, "beta": 0.002, "y0": 0 } }, "time": { "end": 10 } }
JSON
echo "=== beta-plane, walls only, GPU: device-resident = host-driven = 3 ranks"
for p in f32 f64; do line="beta $p"; for mode in dev host np3; do d=$(mktemp -d)
    case $mode in
      dev) CUDA_VISIBLE_DEVICES=0 $B/pycno run $here/beta.json --precision $p --backend cuda --no-vtk --out $d/o -q >/dev/null 2>"$d/err";;
      host) CUDA_VISIBLE_DEVICES=0 PYCNO_DEVICE_STEPS=1 $B/pycno run $here/beta.json --precision $p --backend cuda --no-vtk --out $d/o -q >/dev/null 2>"$d/err";;
      np3) CUDA_VISIBLE_DEVICES=0 mpirun -np 3 $B/pycno run $here/beta.json --precision $p --backend cuda --no-vtk --out $d/o -q >/dev/null 2>"$d/err";;
    esac; line="$line | $mode $(sum $d/o)"; rm -rf $d; done; echo "$line"; done 2>&1 | tee -a $out/checksums.log
echo "=== strait_exchange, first 6 h, GPU 1 rank = 2 ranks (2 GPUs), f64; and 3 days f32 on 1 GPU"
for np in 1 2; do d=$(mktemp -d); mpirun -np $np $B/pycno run $here/root/meshes/scenarios/strait_exchange.json --t-end 21600 --precision f64 --backend cuda --no-vtk --out $d/o -q >/dev/null 2>"$d/err"; echo "strait np$np $(sum $d/o)"; cp $d/o/stats.json $out/strait_np$np.json 2>/dev/null; rm -rf $d; done 2>&1 | tee -a $out/checksums.log
d=$(mktemp -d); CUDA_VISIBLE_DEVICES=0 timeout 200 $B/pycno run $here/root/meshes/scenarios/strait_exchange.json --backend cuda --no-vtk --out $d/o -q > $out/strait3d.log 2>&1; echo "rc=$?"; cp $d/o/stats.json $out/strait3d_stats.json; cp $d/o/gauges.csv $out/strait3d_gauges.csv; rm -rf $d
echo "=== bench main / new, f32 and f64"
for p in f32 f64; do for b in $here/pycno_main $B/pycno; do echo "$b $p"; CUDA_VISIBLE_DEVICES=0 $b bench --backend cuda --precision $p --cells 1001898,10035528 --repeat 5 2>&1 | tail -3; done; done | tee $out/bench.log
