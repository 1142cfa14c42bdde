#!/usr/bin/env bash
# Issue 21, call B (one H200; call A profiled no-op launches of the device-resident kernels): where the order-2 step's time goes. Nsight Compute on the
# host-driven kernels (PYCNO_DEVICE_STEPS=1) at 10^6 cells: order 2 (tile2, update2, dt), order 1 (edge, update,
# dt) and order 2's two kernels (reconstruct, edge2), full set with SASS-level sampling.
set -uo pipefail
B=${B:-gpu-bundle/p2}; out=/tmp/callB; mkdir -p $out; export PYCNO_ROOT=$PWD
export PYCNO_NVRTC_FLAGS="-lineinfo"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
which ncu; ncu --version | tail -1
prof() { # name regex VAR=value bench-args...
  local name=$1 re=$2 var=$3; shift 3
  echo "=== $name"
  timeout 240 env $var ncu --clock-control none --set full --import-source yes -k "regex:$re" \
    --launch-skip 40 --launch-count 4 -f -o $out/$name \
    $B/pycno bench --backend cuda --cells 1001898 --repeat 1 "$@" 2>&1 | grep -vE '^==PROF==' | tail -5
  ncu -i $out/$name.ncu-rep --page details > $out/$name-details.txt 2>&1
  ncu -i $out/$name.ncu-rep --page raw --csv > $out/$name-raw.csv 2>&1
}
prof o2 '^(tile2_f32|update2_f32|dt_f32)$' PYCNO_DEVICE_STEPS=1 --order 2
prof o1 '^(edge_f32|update_f32|dt_f32)$' PYCNO_DEVICE_STEPS=1 --order 1
prof o2k '^(reconstruct_f32|edge2_f32)$' "PYCNO_ORDER2_TILES=0 PYCNO_DEVICE_STEPS=1" --order 2
for k in tile2_f32:o2 edge_f32:o1 reconstruct_f32:o2k edge2_f32:o2k; do
  n=${k%%:*}; r=${k##*:}
  ncu -i $out/$r.ncu-rep -k $n --launch-count 1 --page source --csv --print-source sass > $out/$n-sass.csv 2>&1
  ncu -i $out/$r.ncu-rep -k $n --launch-count 1 --page source --csv --print-source cuda > $out/$n-cuda.csv 2>&1
  ls -la $out/$n-sass.csv $out/$n-cuda.csv
done
cd /tmp && tar czf "${OUT:-/tmp}/callB.tgz" callB
