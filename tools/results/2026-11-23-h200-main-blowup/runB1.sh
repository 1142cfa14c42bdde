#!/usr/bin/env bash
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-$here}"; export PYCNO_ROOT=$here/root
B=$here/bmain; W=/tmp/blw; mkdir -p $W
sed -n '/^cat >"$W\/blowup.json"/,/^JSON$/p' $B/tools/multi-gpu-check.sh > $W/mk.sh; W=$W bash $W/mk.sh; cat $W/blowup.json
for steps in 64 1; do for prec in f32 f64; do
  PYCNO_DEVICE_STEPS=$steps $B/pycno run $W/blowup.json --backend cuda --precision $prec -q --out $W/bl_${steps}_$prec 2>$W/e; echo "steps $steps $prec rc=$?: $(cut -c1-260 $W/e)"
  grep -q "blew up at step 1 .*went unphysical.*last good state" $W/e && echo PASS || echo FAIL; done; done 2>&1 | tee $out/blowup.log
for t in gpu gpu_probes; do echo "=== $t"; timeout 200 $B/tests/$t --nocapture --test-threads 1 > $out/gpu-tests-$t.log 2>&1; echo "rc=$?"; grep -E "^test result|FAILED|panicked" $out/gpu-tests-$t.log | head -8; done
