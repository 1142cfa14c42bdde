#!/usr/bin/env bash
# Issue 20, call D (two GPUs): is the update that sends the halo itself (update_peer, 53
# registers in f32 against update_resident's 45: 9 blocks of 128 threads a multiprocessor
# instead of 10) what costs 3e7 cells 2.4% over a rank's share run alone (call C)? Main's path
# (PYCNO_IPC_ONE_EDGE_KERNEL=0 in bundle g2) against a send kernel at each step's start and
# update_resident (PYCNO_IPC_UPDATE_SENDS=0) and against update_peer capped at 48 registers
# (var-lb/peer.cu: __launch_bounds__(128, 10), by PYCNO_KERNEL_DIR), interleaved; then the
# same at 2.6e5 cells.
set -uo pipefail
B=$PWD/${B:-gpu-bundle/g2}; out="${OUT:-/tmp}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYCNO_IPC_ONE_EDGE_KERNEL=0
nvidia-smi --query-gpu=index,name,driver_version --format=csv | tee $out/gpu.txt
W=/tmp/w4; mkdir -p $W
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
two() { # variant, cells
  local xs=()
  case $1 in
    sends0) export PYCNO_IPC_UPDATE_SENDS=0; xs=(-x PYCNO_IPC_UPDATE_SENDS) ;;
    lb) export PYCNO_KERNEL_DIR=$B/var-lb; xs=(-x PYCNO_KERNEL_DIR) ;;
  esac
  mpirun --allow-run-as-root --bind-to none -x PYCNO_IPC_ONE_EDGE_KERNEL "${xs[@]}" -np 2 $B/pycno run $W/scen_$2.json --backend cuda --partition $W/part_$2 --gpu-exchange ipc --no-vtk -q \
    --out $W/two --overwrite 2>/dev/null && echo "$2 $1 2 GPUs ipc: $(st $W/two) at ${SECONDS}s"
  unset PYCNO_IPC_UPDATE_SENDS PYCNO_KERNEL_DIR
}
{
for n in 30000000 257620; do
  $B/pycno mesh --cells $n --out $W/mesh_$n.pmsh 2>&1 | tail -1; scen $n
  $B/pycno partition $W/scen_$n.json --ranks 2 --out $W/part_$n --no-vtk 2>&1 | grep -E "imbalance"
  echo "prepared $n at ${SECONDS}s"
  $B/pycno run $W/scen_$n.json --backend cuda --no-vtk -q --out $W/one --overwrite 2>/dev/null && echo "$n 1 GPU: $(st $W/one) at ${SECONDS}s"
  rounds=2; [ $n = 257620 ] && rounds=4
  for r in $(seq $rounds); do
    for v in main sends0 lb; do
      [ $SECONDS -lt 540 ] || break 2
      two $v $n
    done
  done
done
} 2>&1 | tee $out/d.log
