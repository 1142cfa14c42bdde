#!/usr/bin/env bash
# Issue 20, call D (one GPU): which change made the device-resident steps differ from the
# host-driven ones (C1): kernel-source variants by PYCNO_KERNEL_DIR, early trigger and
# programmatic launch on and off; host-driven and device checksums of main and the new binary.
set -uo pipefail
B=${B:-gpu-bundle/b3}; BASE=gpu-bundle/base/pycno; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
sum() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["state_checksum"], d["steps"])' "$1/stats.json" 2>/dev/null || echo "missing"; }
{
for v in none oldedge oldupdate oldboth; do for e in 16384 0; do for p in 1 0; do
  kd=""; [ $v != none ] && kd=gpu-bundle/var/$v
  r=$(PYCNO_KERNEL_DIR=$kd PYCNO_PDL_EARLY_CELLS=$e PYCNO_PDL=$p timeout 120 $B/tests/gpu device_steps_equal_host_steps_f64 --exact --nocapture 2>&1 | grep -E '^test |differs|steps, dt' | tr '\n' ' ')
  echo "$v early=$e pdl=$p: $r"
done; done; done
for c in 16040 257620; do for bin in base new; do for ds in 1 64; do
  x=$B/pycno; [ $bin = base ] && x=$BASE
  d=/tmp/ck_${c}_${bin}_$ds; PYCNO_FUSED_DT_CELLS=0 PYCNO_DEVICE_STEPS=$ds timeout 60 $x run --cells $c --t-end 0.1 --backend cuda --no-vtk -q --out $d 2>/dev/null
  echo "$c $bin device_steps=$ds $(sum $d)"
done; done; done
for v in oldedge oldupdate oldboth; do d=/tmp/ckv_$v; PYCNO_KERNEL_DIR=gpu-bundle/var/$v timeout 60 $B/pycno run --cells 257620 --t-end 0.1 --backend cuda --no-vtk -q --out $d 2>/dev/null; echo "257620 new+$v device $(sum $d)"; done
} 2>&1 | tee $out/variants.log
