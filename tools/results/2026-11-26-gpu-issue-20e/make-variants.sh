#!/usr/bin/env bash
# Kernel-source variants for calls Y and Z (PYCNO_KERNEL_DIR), made here from git into the
# bundle DIR (gitignored, carried to the GPU machine):
#   base: the kernels of main at 1c55087 (before this change) for every file it touched;
#   one:  only the one flux call per edge (1c55087's eigen.cuh and flux.cuh: no interleaved
#         Newton roots);
#   lb7:  the bundle's kernels with the first-order edge kernels' registers capped for 7
#         blocks of 128 threads a multiprocessor (__launch_bounds__(128, 7));
#   o2base: the bundle's kernels with 1c55087's second-order edge (order2.cu,
#         reconstruct.cuh: a boundary edge's flux and an interior edge's inlined apart).
set -euo pipefail
dir=${1:?usage: make-variants.sh BUNDLE_DIR}
root=$(git rev-parse --show-toplevel)
mkdir -p "$dir/var/base" "$dir/var/one" "$dir/var/lb7" "$dir/var/o2base"
for f in boundary.cuh solver.cu reconstruct.cuh order2.cu eigen.cuh flux.cuh; do
  git -C "$root" show "1c55087:kernels/$f" > "$dir/var/base/$f"
done
for f in eigen.cuh flux.cuh; do git -C "$root" show "1c55087:kernels/$f" > "$dir/var/one/$f"; done
for f in order2.cu reconstruct.cuh; do git -C "$root" show "1c55087:kernels/$f" > "$dir/var/o2base/$f"; done
sed 's/extern "C" __global__ void edge_resident_/extern "C" __global__ void __launch_bounds__(128, 7) edge_resident_/' \
  "$root/kernels/resident.cu" > "$dir/var/lb7/resident.cu"
sed 's/extern "C" __global__ void edge_##SUFFIX/extern "C" __global__ void __launch_bounds__(128, 7) edge_##SUFFIX/' \
  "$root/kernels/solver.cu" > "$dir/var/lb7/solver.cu"
grep -c "__launch_bounds__(128, 7)" "$dir/var/lb7/resident.cu" "$dir/var/lb7/solver.cu"
