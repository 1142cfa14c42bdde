#!/usr/bin/env bash
# Issue 20, call M (one GPU): a small mesh's batch of steps as one thread-block cluster's
# launch (kernels/cluster.cu): GPU tests (cluster = graphs = host loop bit for bit), a blow-up
# caught by the cluster, checksums, and its speed against the graphs (PYCNO_CLUSTER_CELLS=0)
# by mesh size, to set the threshold.
set -uo pipefail
B=${B:-gpu-bundle/c1}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; timeout 200 $B/pycno bench --backend cuda "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
{
S=4032,8040,16040,32040,64052
echo "=== graphs (PYCNO_CLUSTER_CELLS=0), then the cluster for every size"
PYCNO_CLUSTER_CELLS=0 bench --cells $S --repeat 7
PYCNO_CLUSTER_CELLS=100000000 bench --cells $S --repeat 7
PYCNO_CLUSTER_CELLS=0 bench --cells $S --repeat 7 --t-end 1
PYCNO_CLUSTER_CELLS=100000000 bench --cells $S --repeat 7 --t-end 1
echo "=== default threshold"
bench --cells 4032,1001898 --repeat 7
echo "=== f64"
PYCNO_CLUSTER_CELLS=0 bench --cells 4032,16040 --repeat 7 --precision f64
PYCNO_CLUSTER_CELLS=100000000 bench --cells 4032,16040 --repeat 7 --precision f64
} 2>&1 | tee $out/bench.log
{
W=$(mktemp -d)
cat >$W/blowup.json <<'JSON'
{ "name": "blowup", "domain": { "outer": [[0, 0], [100000, 0], [100000, 10000], [0, 10000]] }, "resolution": { "cells": 800 },
  "bathymetry": { "type": "constant", "depth": 1.0 },
  "initial": { "type": "layers", "layer1": { "thickness": 0.5, "velocity": [0, 0] }, "layer2": { "thickness": 0.5, "velocity": [0, 0] } },
  "physics": { "r": 0.5, "wind_stress": [1e307, 0] }, "time": { "end": 1e5 } }
JSON
for steps in 64 1; do for prec in f32 f64; do
  PYCNO_DEVICE_STEPS=$steps $B/pycno run $W/blowup.json --backend cuda --precision $prec -q --out $W/bl_${steps}_$prec 2>$W/err
  echo "blow-up steps=$steps $prec rc=$?: $(grep -c 'blew up at step 1 .*went unphysical.*last good state' $W/err) $(head -c 300 $W/err)"
done; done
echo "=== checksums: cluster, graphs, host loop"
for prec in f32 f64; do for n in 4032 16040; do
  for v in "PYCNO_CLUSTER_CELLS=100000000" "PYCNO_CLUSTER_CELLS=0" "PYCNO_DEVICE_STEPS=1"; do
    env $v $B/pycno run --backend cuda --precision $prec --cells $n -q --no-vtk --out $W/ck 2>&1 | tail -2
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(sys.argv[2], sys.argv[3], sys.argv[4], s["steps"], s["state_checksum"])' $W/ck/stats.json $prec $n "$v"
  done
done; done
} 2>&1 | tee $out/checks.log
for t in gpu kernels examples; do
  echo "=== $t"; timeout 300 $B/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked|cluster|k = " $out/test-$t.log | head -30
done 2>&1 | tee $out/tests.log
