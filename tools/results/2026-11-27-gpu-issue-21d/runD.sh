#!/usr/bin/env bash
# Issue 21, call D (one H200): (1) whether call C's "two kernels = the tile kernel" mismatch
# is ptxas's contraction of separate multiplies and adds into fused ones (which depends on
# the code around them): the order-2 check's dam break with and without --fmad=false, two
# kernels and tiles, f32 and f64; (2) Nsight Compute on bundle q1's tile kernel (host-driven,
# 10^6 cells), SASS-level samples.
set -uo pipefail
Q=gpu-bundle/q1; out=/tmp/callD; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
cat > $out/dambreak.json <<'JSON'
{ "name": "dambreak2", "domain": { "outer": [[-5, -5], [5, -5], [5, 5], [-5, 5]] }, "resolution": { "cells": 64052 },
  "bathymetry": { "type": "constant", "depth": 5.0 }, "initial": { "type": "circular_dam_break" },
  "physics": { "order": 2 }, "time": { "end": 0.1, "output_interval": 0.05 } }
JSON
sum() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]+"/stats.json")); print(s["state_checksum"], s["steps"])' $1; }
{
for fl in "" "--fmad=false"; do
  for prec in f32 f64; do
    for tiles in 0 1; do
      d=$out/run_${prec}_${tiles}_$(echo "$fl" | tr -dc a-z)
      PYCNO_NVRTC_FLAGS="$fl" PYCNO_ORDER2_TILES=$tiles timeout 100 $Q/pycno run $out/dambreak.json --backend cuda --precision $prec --no-vtk -q --out $d > $d.log 2>&1
      echo "flags '$fl' $prec tiles=$tiles: $(sum $d)"
    done
  done
done
} 2>&1 | tee $out/fma.log
export PYCNO_NVRTC_FLAGS="-lineinfo"
timeout 240 env PYCNO_DEVICE_STEPS=1 ncu --clock-control none --set full -k "regex:^tile2_f32$" \
    --launch-skip 40 --launch-count 2 -f -o $out/q1 \
    $Q/pycno bench --backend cuda --cells 1001898 --repeat 1 --order 2 2>&1 | grep -vE '^==PROF==' | tail -3
ncu -i $out/q1.ncu-rep --page details > $out/q1-details.txt 2>&1
ncu -i $out/q1.ncu-rep -k tile2_f32 --launch-count 1 --page source --csv --print-source sass > $out/tile2_f32-sass.csv 2>&1
rm -rf $out/run_*/
cd /tmp && tar czf "${OUT:-/tmp}/callD.tgz" callD
