"""Turn `cargo ... --message-format=json-diagnostic-rendered-ansi` into what a person reads:
the compiler's messages as cargo would print them, and one progress line per target of
this package as it finishes, so that a long `cargo clippy --all-targets` (half an hour on a
busy two-core machine) says where it is.

    cargo clippy --all-targets --message-format=json-diagnostic-rendered-ansi -- -D warnings \
        | python3 tools/cargo_progress.py PACKAGE TOTAL LABEL
"""

import json
import sys
import time

package, total, label = sys.argv[1], int(sys.argv[2]), sys.argv[3]
start = time.monotonic()
done = 0
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        # Not JSON: cargo's own words (a build script's failure, say): pass them on.
        sys.stdout.write(line)
        continue
    reason = msg.get("reason")
    if reason == "compiler-message":
        sys.stdout.write(msg["message"].get("rendered") or "")
    elif reason == "compiler-artifact" and msg["target"]["kind"] != ["custom-build"]:
        name = msg["package_id"]
        if f"/{package}#" in name or name.startswith(f"{package} ") or f"#{package}@" in name:
            done += 1
            target = msg["target"]
            kind = "test" if msg.get("profile", {}).get("test") else target["kind"][0]
            print(f"{label}: {done}/{total} {kind} {target['name']} ({time.monotonic() - start:.0f} s)")
    sys.stdout.flush()
