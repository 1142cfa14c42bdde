#!/usr/bin/env bash
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-$here}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 NCCL_NVLS_ENABLE=0
B=$here/bint
sum() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["state_checksum"], d["steps"], d.get("gpu_exchange",""))' "$1/o/stats.json" 2>/dev/null || echo "missing: $(tail -3 $1/err | tr '\n' ' ')"; }
echo "=== kernel variants, 16040 cells (main GPU: f32 4d6b763e66ef86c7, f64 d655e2f866c3e3bc)"
for v in none kv_a kv_b; do for p in f32 f64; do d=$(mktemp -d)
  if [ $v = none ]; then CUDA_VISIBLE_DEVICES=0 PYCNO_DEVICE_STEPS=1 $B/pycno run --cells 16040 --precision $p --backend cuda --no-vtk --out $d/o -q >/dev/null 2>$d/err
  else CUDA_VISIBLE_DEVICES=0 PYCNO_DEVICE_STEPS=1 PYCNO_KERNEL_DIR=$here/$v $B/pycno run --cells 16040 --precision $p --backend cuda --no-vtk --out $d/o -q >/dev/null 2>$d/err; fi
  echo "$v $p $(sum $d)"; rm -rf $d; done; done 2>&1 | tee $out/variants.log
echo "=== 3 ranks on one GPU (NCCL must not be taken)"
d=$(mktemp -d); CUDA_VISIBLE_DEVICES=0 mpirun -np 3 $B/pycno run --cells 16040 --precision f32 --backend cuda --no-vtk --out $d/o -q >/dev/null 2>$d/err; echo "np3 one GPU f32 $(sum $d)"; rm -rf $d
d=$(mktemp -d); CUDA_VISIBLE_DEVICES=0 mpirun -np 3 $B/pycno run --cells 16040 --precision f64 --backend cuda --no-vtk --out $d/o -q >/dev/null 2>$d/err; echo "np3 one GPU f64 $(sum $d)"; rm -rf $d
echo "=== multi-gpu-check"
cd $here/root && timeout 480 bash tools/multi-gpu-check.sh $B/pycno > $out/multi-gpu-check.log 2>&1; echo "rc=$?"
grep -E "FAIL|passed|failed" $out/multi-gpu-check.log | tail -15
