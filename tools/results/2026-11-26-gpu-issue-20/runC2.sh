#!/usr/bin/env bash
# Issues 20 and 21, call C2 (two GPUs): the multi-GPU check at 64052 cells (every exchange
# path, both loops, f32 and f64, restarts, gauges, blow-up), the order-2 lakes at rest, the
# final strong scaling at 2.6e5 and 1e6 cells (5 runs each), then 3e7 cells if time is left.
set -uo pipefail
B=${B:-gpu-bundle/b5}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD; start=$SECONDS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name --format=csv,noheader | tee $out/gpus.txt
CUDA_VISIBLE_DEVICES=0 timeout 60 $B/tests/gpu gpu_lakes_at_rest_at_order_2 --nocapture --test-threads 1 > $out/test-gpu-rest2.log 2>&1; echo "order-2 rest rc $?"; grep -E 'test result|order 2,' $out/test-gpu-rest2.log
MGPU_CELLS=64052 timeout 240 $B/tools/multi-gpu-check.sh $B/pycno > $out/multi-gpu.log 2>&1; echo "multi-gpu rc $? at $((SECONDS-start)) s"; grep -E 'FAIL|passed' $out/multi-gpu.log | tail -12
sum() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["state_checksum"], d["steps"], d.get("gpu_exchange","")[:4], d["stepping_seconds"])' "$1/stats.json" 2>/dev/null || echo "missing: $(tail -3 $1.err | tr '\n' ' ' | cut -c1-300)"; }
GPU_EXCHANGE=ipc STRONG=256576,1001898 WEAK=none PYCNO=$B/pycno OUT=/tmp/sc timeout 120 $B/tools/scaling.sh 2 /tmp/scw > $out/scaling.log 2>&1; echo "scaling rc $?"; grep -E '^\| [0-9]' /tmp/sc/scaling.md | head -4
{
for n in 256576 1001898; do
  for rep in 1 2 3 4 5; do d=/tmp/v_$n; rm -rf $d; timeout 60 mpirun --bind-to none -np 2 $B/pycno run /tmp/scw/scen_$n.json --partition /tmp/scw/part_${n}_2 --backend cuda --no-vtk -q --gpu-exchange ipc --out $d 2>$d.err; echo "$n ipc $(sum $d)"; done
  for rep in 1 2 3 4 5; do d=/tmp/v1_$n; rm -rf $d; CUDA_VISIBLE_DEVICES=0 timeout 60 $B/pycno run /tmp/scw/scen_$n.json --backend cuda --no-vtk -q --out $d 2>$d.err; echo "$n 1gpu $(sum $d)"; done
done
} 2>&1 | tee $out/variants.log | awk '{print $1, $2, $3, $NF}'
echo "at $((SECONDS-start)) s"
if [ $((SECONDS-start)) -lt 290 ]; then
  GPU_EXCHANGE=ipc STRONG=30000000 WEAK=none PYCNO=$B/pycno OUT=/tmp/sc3 timeout $((440-(SECONDS-start))) $B/tools/scaling.sh 2 /tmp/scw3 > $out/scaling3e7.log 2>&1
  echo "3e7 rc $?"; grep -E '^\| [0-9]' /tmp/sc3/scaling.md 2>/dev/null | head -3; cp /tmp/sc3/scaling.csv $out/scaling3e7.csv 2>/dev/null
else echo "3e7 skipped: no time left"; fi
