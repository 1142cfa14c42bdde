#!/usr/bin/env bash
# Build the user guide (docs/, an mdBook) into docs/book/, installing mdbook when it is
# missing. CI runs it (.ci/run); a missing chapter or include fails the build, and
# tests/docs.rs fails on a broken link or anchor and on an undocumented scenario key.
#
#   tools/book.sh            # mdbook build docs
#   tools/book.sh serve      # mdbook serve docs (read it at http://localhost:3000 while editing)
#
# Debian 12 has no mdbook package, so it comes from crates.io with `cargo install` into
# cargo's bin directory, where later runs on the same machine find it. Measured: the first
# build of mdbook 0.5.4 took 5.3 CPU minutes (user 4m53s, sys 25s) on a shared machine, so
# roughly 3 minutes of wall time on two idle cores (an estimate); later runs find it and add
# nothing. The book itself builds in 0.3 s.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=tools/env.sh
source "$ROOT/tools/env.sh"

MDBOOK_VERSION=0.5.4
if ! command -v mdbook >/dev/null 2>&1 || [ "$(mdbook --version 2>/dev/null)" != "mdbook v$MDBOOK_VERSION" ]; then
    start=$SECONDS
    echo "book: cargo install mdbook --version $MDBOOK_VERSION --locked (no server or file watcher)"
    cargo install mdbook --version "$MDBOOK_VERSION" --locked --no-default-features --features search --quiet
    hash -r
    echo "book: mdbook installed in $((SECONDS - start)) s"
fi
echo "book: $(mdbook --version)"
if [ "${1:-build}" = serve ]; then
    exec mdbook serve "$ROOT/docs"
fi
mdbook build "$ROOT/docs"
echo "book: built $ROOT/docs/book/index.html"
