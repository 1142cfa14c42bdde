#!/usr/bin/env bash
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-$here}"; export PYCNO_ROOT=$here/root
B=$here/bo2
for v in "PYCNO_NVRTC_FLAGS=--prec-div=true --prec-sqrt=true" "PYCNO_NVRTC_FLAGS=--prec-div=true --prec-sqrt=true --fmad=false"; do echo "=== lakes f32 with $v"
  env "$v" timeout 120 $B/tests/gpu gpu_lakes_stay_exactly_at_rest_at_order_2_f32 --nocapture --test-threads 1 2>&1 | grep -E "GPU order 2|test result|panicked|error" | head -8
  env "$v" timeout 120 $B/tests/gpu_probes probe_edge_flux_f32 --nocapture --test-threads 1 2>&1 | grep -E "boundary kind 2|test result" | head -4
done 2>&1 | tee $out/order2-prec.log
