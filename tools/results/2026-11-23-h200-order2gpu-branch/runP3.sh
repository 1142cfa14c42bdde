#!/usr/bin/env bash
# Call P3: GPU tests of the merged branch (ipc + second order on the GPU), order-2 checks and
# step cost, ipc variants.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-$here}"; export PYCNO_ROOT=$here/root
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 NCCL_NVLS_ENABLE=0
B=$here/bpeer
sum() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["state_checksum"], d["steps"], d.get("gpu_exchange","")[:4], d["stepping_seconds"])' "$1/stats.json" 2>/dev/null || echo "missing: $(tail -3 $1.err | tr '\n' ' ' | cut -c1-600)"; }
for t in gpu gpu_probes examples kernels; do echo "=== $t"; CUDA_VISIBLE_DEVICES=0 timeout 150 $B/tests/$t --nocapture --test-threads 1 > $out/gpu-tests-$t.log 2>&1; echo "rc=$?"; grep -E "^test result|FAILED|panicked" $out/gpu-tests-$t.log | head -12; done
echo "=== order2-gpu-check"; CUDA_VISIBLE_DEVICES=0 timeout 150 $B/tools/order2-gpu-check.sh $B/pycno > $out/order2-gpu.log 2>&1; echo "rc=$?"; grep -E "PASS|FAIL|passed|failed" $out/order2-gpu.log | tail -20
echo "=== order 1 vs 2 step cost, one H200"
for o in 1 2; do CUDA_VISIBLE_DEVICES=0 timeout 120 $B/pycno bench --backend cuda --order $o --cells 1001898,10000000 --repeat 3 2>&1 | tail -3; done 2>&1 | tee $out/order2-bench.log
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then
echo "=== ipc variants (2.6e5, 1e6)"
mkdir -p /tmp/scw
GPU_EXCHANGE=ipc STRONG=256576,1001898 WEAK=none PYCNO=$B/pycno OUT=/tmp/sc timeout 100 $B/tools/scaling.sh 2 /tmp/scw > $out/scaling_prep.log 2>&1; echo "prep rc $?"
for n in 256576 1001898; do for v in PYCNO_PDL=1 PYCNO_KERNEL_DIR=$here/kv_trig PYCNO_IPC_SIDE_EDGES=0 PYCNO_PDL=0; do for rep in 1 2 3 4; do d=/tmp/v_$n; rm -rf $d
  env $v timeout 60 mpirun --bind-to none -np 2 -x ${v%%=*} $B/pycno run /tmp/scw/scen_$n.json --partition /tmp/scw/part_${n}_2 --backend cuda --no-vtk -q --gpu-exchange ipc --out $d 2>$d.err
  echo "$n ${v##*/} $(sum $d)"; done; done
  for v in PYCNO_PDL=1 PYCNO_KERNEL_DIR=$here/kv_trig; do for rep in 1 2 3; do d=/tmp/v1_$n; rm -rf $d; CUDA_VISIBLE_DEVICES=0 env $v timeout 60 $B/pycno run /tmp/scw/scen_$n.json --backend cuda --no-vtk -q --out $d 2>$d.err; echo "$n 1gpu ${v##*/} $(sum $d)"; done; done
done 2>&1 | tee $out/variants.log
fi
echo "=== 1 GPU small bench with trigger variant"; CUDA_VISIBLE_DEVICES=0 PYCNO_KERNEL_DIR=$here/kv_trig timeout 60 $B/pycno bench --backend cuda --cells 4032,64052,128288,500949 --repeat 5 2>&1 | tail -5 | tee $out/bench_trig.log
CUDA_VISIBLE_DEVICES=0 PYCNO_KERNEL_DIR=$here/kv_trig timeout 60 $B/pycno bench --backend cuda --cells 4032,64052 --t-end 1 --repeat 5 2>&1 | tail -3 | tee -a $out/bench_trig.log
CUDA_VISIBLE_DEVICES=0 timeout 60 $B/pycno bench --backend cuda --cells 4032,64052,128288,500949 --repeat 5 2>&1 | tail -5 | tee $out/bench_plain.log
CUDA_VISIBLE_DEVICES=0 timeout 60 $B/pycno bench --backend cuda --cells 4032,64052 --t-end 1 --repeat 5 2>&1 | tail -3 | tee -a $out/bench_plain.log
