#!/usr/bin/env bash
# Issue 20, call F (two GPUs): ghost updates (PYCNO_IPC_GHOSTS, the new default at first
# order: each rank updates its receive block from the words its owners' updates read, one
# cross-GPU wait a step) against the halo sent by the update (PYCNO_IPC_GHOSTS=0, the last
# commit's path), interleaved, at 257620 and 1001898 cells; then the multi-GPU check.
set -uo pipefail
B=$PWD/${B:-gpu-bundle/g3}; out="${OUT:-/tmp}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
date -u | tee $out/date.txt
nvidia-smi --query-gpu=index,name,driver_version --format=csv | tee $out/gpu.txt
W=/tmp/w5; mkdir -p $W
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
st() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]+"/stats.json")); print(s["cells"], s["steps"], "%.6f" % s["stepping_seconds"], "%.4g" % s["cell_updates_per_second"], s["state_checksum"])' "$1"; }
two() { # ghosts (1 or 0), cells
  PYCNO_IPC_GHOSTS=$1 mpirun --allow-run-as-root --bind-to none -x PYCNO_IPC_GHOSTS -np 2 $B/pycno run $W/scen_$2.json --backend cuda --partition $W/part_$2 --gpu-exchange ipc --no-vtk -q \
    --out $W/two --overwrite 2>/dev/null && echo "$2 ghosts=$1 2 GPUs ipc: $(st $W/two) at ${SECONDS}s"
}
{
for n in 257620 1001898; do
  $B/pycno mesh --cells $n --out $W/mesh_$n.pmsh 2>&1 | tail -1; scen $n
  $B/pycno partition $W/scen_$n.json --ranks 2 --out $W/part_$n --no-vtk 2>&1 | grep -E "imbalance"
  echo "prepared $n at ${SECONDS}s"
  for r in 1 2 3; do
    $B/pycno run $W/scen_$n.json --backend cuda --no-vtk -q --out $W/one --overwrite 2>/dev/null && echo "$n 1 GPU: $(st $W/one) at ${SECONDS}s"
  done
  rounds=5; [ $n = 1001898 ] && rounds=3
  for r in $(seq $rounds); do
    for g in 1 0; do two $g $n; done
  done
done
} 2>&1 | tee $out/speed.log
MGPU_CELLS=64052 timeout 330 $B/tools/multi-gpu-check.sh $B/pycno 2>&1 | tee $out/multi-gpu.log
