#!/usr/bin/env bash
# Issue 20, call E (two GPUs): where the update's own send (update_peer) stops paying. Call D:
# it gains 10% at 2.6e5 cells and loses 0.8% at 3e7. Here 10^7 cells, then 4e6, main's path
# (PYCNO_IPC_ONE_EDGE_KERNEL=0 in bundle g2) against a send kernel at each step's start
# (PYCNO_IPC_UPDATE_SENDS=0), interleaved, one GPU first.
set -uo pipefail
B=$PWD/${B:-gpu-bundle/g2}; out="${OUT:-/tmp}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYCNO_IPC_ONE_EDGE_KERNEL=0
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
{
for n in 10000000 4000000; do
  [ $SECONDS -lt 120 ] || break
  $B/pycno mesh --cells $n --out $W/mesh_$n.pmsh 2>&1 | tail -1; scen $n
  $B/pycno partition $W/scen_$n.json --ranks 2 --out $W/part_$n --no-vtk 2>&1 | grep -E "imbalance"
  echo "prepared $n at ${SECONDS}s"
  $B/pycno run $W/scen_$n.json --backend cuda --no-vtk -q --out $W/one --overwrite 2>/dev/null && echo "$n 1 GPU: $(st $W/one) at ${SECONDS}s"
  for r in 1 2; do
    for v in main sends0; do
      [ $SECONDS -lt 170 ] || break 2
      [ $v = sends0 ] && export PYCNO_IPC_UPDATE_SENDS=0 || export PYCNO_IPC_UPDATE_SENDS=1
      mpirun --allow-run-as-root --bind-to none -x PYCNO_IPC_ONE_EDGE_KERNEL -x PYCNO_IPC_UPDATE_SENDS -np 2 $B/pycno run $W/scen_$n.json --backend cuda --partition $W/part_$n --gpu-exchange ipc --no-vtk -q \
        --out $W/two --overwrite 2>/dev/null && echo "$n $v 2 GPUs ipc: $(st $W/two) at ${SECONDS}s"
    done
  done
done
} 2>&1 | tee $out/e.log
