#!/usr/bin/env bash
# Run the Python test suite on an ASan + UBSan build of the C extension.
#
# The extension is rebuilt with sanitizers in a scratch copy of the tree (the
# working tree's own build is left alone), the sanitizer runtimes are
# preloaded into the interpreter, and pytest runs there.  Leak checking is off:
# CPython itself keeps memory alive at exit, which LeakSanitizer would report.
# Usage: tools/sanitize.sh [python] [pytest args...]
set -euo pipefail
PY=${1:-python3}; shift || true
case "$PY" in */*) PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")" ;; esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cp -r "$ROOT/csrc" "$ROOT/pybpe" "$ROOT/tests" "$ROOT/setup.py" "$ROOT/pyproject.toml" "$ROOT/README.md" "$WORK/"
rm -f "$WORK"/pybpe/_bpe_c*
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1"
(cd "$WORK" && CFLAGS="$SAN" LDFLAGS="$SAN" "$PY" pybpe/_build.py > build.log 2>&1) || { cat "$WORK/build.log"; exit 1; }
CC=${CC:-cc}
PRELOAD="$($CC -print-file-name=libasan.so):$($CC -print-file-name=libubsan.so)"
cd "$WORK"
LD_PRELOAD="$PRELOAD" ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
    PYBPE_SHARED_DATA="$ROOT/../shared/data" PYBPE_BACKEND=c \
    "$PY" -m pytest -q -p no:cacheprovider tests "$@"
