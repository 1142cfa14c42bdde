#!/usr/bin/env bash
# Issue 20, call D (two GPUs), bundle p2 (the kept kernels): 3e7 cells, one GPU against two
# (the ghost updates' limit leaves these ranks to the send kernel; the minimum is the new one).
set -uo pipefail
B=$PWD/${B:-gpu-bundle/p2}; out="${OUT:-/tmp}"; V=$PWD/tools/results/2026-11-27-gpu-issue-20i
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
date -u | tee $out/date.txt
nvidia-smi --query-gpu=index,name,driver_version --format=csv | tee $out/gpu.txt
W=/tmp/w8; mkdir -p $W
scen() { cat > $W/scen_$1.json <<J
{
  "name": "dambreak",
  "mesh": "mesh_$1.pmsh",
  "bathymetry": { "type": "constant", "depth": 5.0 },
  "initial": { "type": "circular_dam_break" },
  "physics": { "g": 9.81, "r": 0.998, "gamma": 0.9 },
  "time": { "end": 0.1 },
  "output": { "dir": "out" }
}
J
}
st() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]+"/stats.json")); print(s["cells"], s["steps"], "%.6f" % s["stepping_seconds"], "%.2f us/step" % (1e6*s["stepping_seconds"]/s["steps"]), s["state_checksum"])' "$1"; }
two() { # variant (base or a directory under $V), cells
  local kd=""; [ $1 != Q ] && kd=$V/$1
  rm -rf $W/two
  PYCNO_KERNEL_DIR=$kd timeout 45 mpirun --allow-run-as-root --bind-to none -x PYCNO_KERNEL_DIR -np 2 $B/pycno run $W/scen_$2.json --backend cuda --partition $W/part_$2 --gpu-exchange ipc --no-vtk -q \
    --out $W/two --overwrite 2>$W/err && echo "$2 $1 2 GPUs ipc: $(st $W/two) at ${SECONDS}s" || { echo "$2 $1 failed rc=$? at ${SECONDS}s"; head -c 600 $W/err; }
}
{
n=30000000
$B/pycno mesh --cells $n --out $W/mesh_$n.pmsh 2>&1 | tail -1; scen $n
$B/pycno partition $W/scen_$n.json --ranks 2 --out $W/part_$n --no-vtk 2>&1 | grep -E "imbalance"
echo "prepared $n at ${SECONDS}s"
$B/pycno run $W/scen_$n.json --backend cuda --no-vtk -q --out $W/one --overwrite 2>/dev/null && echo "$n 1 GPU: $(st $W/one) at ${SECONDS}s"
for r in 1 2; do [ $SECONDS -lt 330 ] && two Q $n; done
} 2>&1 | tee $out/speed.log
