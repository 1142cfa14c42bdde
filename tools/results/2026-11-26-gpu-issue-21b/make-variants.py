#!/usr/bin/env python3
"""The kernel-source variants of call I (issue 21): second order's tile kernel with another
register cap in float32 (__launch_bounds__ on tile2 and tile2_resident), as order2.cu and
resident.cu in OUT/<name> for PYCNO_KERNEL_DIR. SRC holds kernels/order2.cu and
kernels/resident.cu as from e55a9eb on, whose cap is t80's (256, 3); "none" removes it (the
tile kernel of call H).

Usage: make-variants.py SRC_DIR OUT_DIR
"""
import os
import sys

KEPT = "__launch_bounds__(256, 3)"
VARIANTS = {"t64": "__launch_bounds__(256, 4)", "t80": KEPT, "t72": "__launch_bounds__(128, 7)", "none": ""}


def main():
    src, out = sys.argv[1], sys.argv[2]
    for name, bounds in VARIANTS.items():
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        for f, define in [("order2.cu", "PYCNO_ORDER2_KERNELS"), ("resident.cu", "PYCNO_RESIDENT2")]:
            text = open(os.path.join(src, f)).read()
            kept = f"{define}(float, f32, {KEPT})"
            assert kept in text, f"{f}: no {kept}"
            open(os.path.join(d, f), "w").write(text.replace(kept, f"{define}(float, f32, {bounds})"))


if __name__ == "__main__":
    main()
