#!/usr/bin/env bash
# Issue 20, call G (two GPUs): ghost updates with the time-step kernel's fence after its cells'
# minima (bundle g4: every thread fences; call H then kept only the storing threads' fence) against the fence right after the stores (call F's
# kernels: var-ff/peer.cu by PYCNO_KERNEL_DIR) and against no ghost updates
# (PYCNO_IPC_GHOSTS=0: the halo sent by the update, or by a send kernel above 3e6 cells a
# rank), interleaved, at 257620, 1001898 and 3e7 cells (and 1e7 if time is left).
set -uo pipefail
B=$PWD/${B:-gpu-bundle/g4}; out="${OUT:-/tmp}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
date -u | tee $out/date.txt
nvidia-smi --query-gpu=index,name,driver_version --format=csv | tee $out/gpu.txt
W=/tmp/w6; mkdir -p $W
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
  local env=(PYCNO_IPC_GHOSTS=1)
  case $1 in
    ff) env+=(PYCNO_KERNEL_DIR=$B/var-ff) ;;
    noghost) env=(PYCNO_IPC_GHOSTS=0) ;;
  esac
  local xs=(); for e in "${env[@]}"; do xs+=(-x "${e%%=*}"); done
  env "${env[@]}" mpirun --allow-run-as-root --bind-to none "${xs[@]}" -np 2 $B/pycno run $W/scen_$2.json --backend cuda --partition $W/part_$2 --gpu-exchange ipc --no-vtk -q \
    --out $W/two --overwrite 2>/dev/null && echo "$2 $1 2 GPUs ipc: $(st $W/two) at ${SECONDS}s"
}
{
for n in 257620 1001898 30000000 10000000; do
  [ $n = 10000000 ] && [ $SECONDS -gt 420 ] && break
  $B/pycno mesh --cells $n --out $W/mesh_$n.pmsh 2>&1 | tail -1; scen $n
  $B/pycno partition $W/scen_$n.json --ranks 2 --out $W/part_$n --no-vtk 2>&1 | grep -E "imbalance"
  echo "prepared $n at ${SECONDS}s"
  ones=3; [ $n -ge 10000000 ] && ones=1
  for r in $(seq $ones); do
    $B/pycno run $W/scen_$n.json --backend cuda --no-vtk -q --out $W/one --overwrite 2>/dev/null && echo "$n 1 GPU: $(st $W/one) at ${SECONDS}s"
  done
  rounds=5; [ $n = 1001898 ] && rounds=3; [ $n -ge 10000000 ] && rounds=2
  vs="ghost ff noghost"; [ $n -ge 10000000 ] && vs="ghost noghost"
  for r in $(seq $rounds); do
    for v in $vs; do [ $SECONDS -lt 560 ] && two $v $n; done
  done
  rm -f $W/mesh_$n.pmsh; rm -rf $W/part_$n
done
} 2>&1 | tee $out/speed.log
