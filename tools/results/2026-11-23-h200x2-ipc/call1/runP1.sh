#!/usr/bin/env bash
# Issue 20, call P1: the GPUs' own stores (ipc) and programmatic dependent launch (PDL).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-$here}"; export PYCNO_ROOT=$here/root
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 NCCL_NVLS_ENABLE=0
B=$here/bpeer; M=$here/pycno_main
nvidia-smi -L > $out/gpus.txt
sum() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["state_checksum"], d["steps"], d.get("gpu_exchange",""), d["stepping_seconds"])' "$1/stats.json" 2>/dev/null || echo "missing: $(tail -3 $1.err | tr '\n' ' ' | cut -c1-600)"; }
echo "=== checksums 64052 f32/f64: 1 GPU dev PDL on/off, host-driven; 2 GPUs ipc/nccl/host"
for p in f32 f64; do for mode in dev nopdl host ipc nccl hostx ipchost; do d=/tmp/c_${p}_$mode; rm -rf $d
  case $mode in
    dev) CUDA_VISIBLE_DEVICES=0 timeout 60 $B/pycno run --cells 64052 --t-end 0.1 --precision $p --backend cuda --no-vtk -q --out $d 2>$d.err;;
    nopdl) CUDA_VISIBLE_DEVICES=0 PYCNO_PDL=0 timeout 60 $B/pycno run --cells 64052 --t-end 0.1 --precision $p --backend cuda --no-vtk -q --out $d 2>$d.err;;
    host) CUDA_VISIBLE_DEVICES=0 PYCNO_DEVICE_STEPS=1 timeout 60 $B/pycno run --cells 64052 --t-end 0.1 --precision $p --backend cuda --no-vtk -q --out $d 2>$d.err;;
    ipc) timeout 60 mpirun --bind-to none -np 2 $B/pycno run --cells 64052 --t-end 0.1 --precision $p --backend cuda --gpu-exchange ipc --no-vtk -q --out $d 2>$d.err;;
    nccl) timeout 60 mpirun --bind-to none -np 2 $B/pycno run --cells 64052 --t-end 0.1 --precision $p --backend cuda --gpu-exchange nccl --no-vtk -q --out $d 2>$d.err;;
    hostx) timeout 60 mpirun --bind-to none -np 2 $B/pycno run --cells 64052 --t-end 0.1 --precision $p --backend cuda --gpu-exchange host --no-vtk -q --out $d 2>$d.err;;
    ipchost) timeout 60 mpirun --bind-to none -np 2 -x PYCNO_DEVICE_STEPS=1 $B/pycno run --cells 64052 --t-end 0.1 --precision $p --backend cuda --gpu-exchange ipc --no-vtk -q --out $d 2>$d.err;;
  esac; echo "$p $mode $(sum $d)"; done; done 2>&1 | tee $out/checksums.log
echo "=== bench one GPU: main, new PDL on, new PDL off"
for b in main new nopdl; do case $b in main) bin=$M; e=;; new) bin=$B/pycno; e=;; nopdl) bin=$B/pycno; e=PYCNO_PDL=0;; esac
  echo "--- $b"; CUDA_VISIBLE_DEVICES=0 env $e timeout 120 $bin bench --backend cuda --cells 4032,64052,1001898 --repeat 5 2>&1 | tail -4
  CUDA_VISIBLE_DEVICES=0 env $e timeout 60 $bin bench --backend cuda --cells 4032,64052 --t-end 1 --repeat 5 2>&1 | tail -3
done 2>&1 | tee $out/bench1.log
for gx in ipc nccl; do
  echo "=== scaling $gx"
  GPU_EXCHANGE=$gx STRONG=256576,1001898 WEAK=none PYCNO=$B/pycno OUT=/tmp/sc_$gx timeout 150 $B/tools/scaling.sh 2 /tmp/scw > $out/scaling_$gx.log 2>&1
  echo "rc $?"; sed -n '/Strong/,/^$/p' /tmp/sc_$gx/scaling.md | head -8; cp /tmp/sc_$gx/scaling.csv $out/scaling_$gx.csv
done 2>&1 | tee $out/scaling.log
echo "=== ipc without PDL, repeated runs"
for n in 256576 1001898; do for v in PYCNO_PDL=1 PYCNO_PDL=0; do for rep in 1 2 3; do d=/tmp/v_$n; rm -rf $d
  env $v timeout 60 mpirun --bind-to none -np 2 -x ${v%%=*} $B/pycno run /tmp/scw/scen_$n.json --partition /tmp/scw/part_${n}_2 --backend cuda --no-vtk -q --gpu-exchange ipc --out $d 2>$d.err
  echo "$n $v $(sum $d)"; done; done
  for rep in 1 2 3; do d=/tmp/v1_$n; rm -rf $d; CUDA_VISIBLE_DEVICES=0 timeout 60 $B/pycno run /tmp/scw/scen_$n.json --backend cuda --no-vtk -q --out $d 2>$d.err; echo "$n 1gpu $(sum $d)"; done
done 2>&1 | tee $out/variants.log
