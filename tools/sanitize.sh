#!/usr/bin/env bash
# Run the Python test suite on an ASan + UBSan build of the C extensions.
#
# The extensions -- the cffi module (csrc/*.c), pybpe._pylists
# (csrc/pyext/pylists.c), which until 2026-12-06 ran uninstrumented here,
# pybpe._utf8 (csrc/pyext/utf8.c) and pybpe._ranks_file
# (csrc/pyext/ranks_file.c) --
# are rebuilt with sanitizers in a scratch copy of the tree (the
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
rm -f "$WORK"/pybpe/_bpe_c* "$WORK"/pybpe/_pylists* "$WORK"/pybpe/_utf8* "$WORK"/pybpe/_ranks_file*
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1"
(cd "$WORK" && CFLAGS="$SAN" LDFLAGS="$SAN" "$PY" pybpe/_build.py > build.log 2>&1) || { cat "$WORK/build.log"; exit 1; }
CC=${CC:-cc}
# pybpe._pylists: compiled directly, as setup.py's Extension would, under the
# name the interpreter looks for (the limited API's .abi3.so where it has one).
INCLUDE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
SUFFIX=$("$PY" -c 'import importlib.machinery as m; s = m.EXTENSION_SUFFIXES; print(".abi3.so" if ".abi3.so" in s else s[0])')
for ext in pylists utf8 ranks_file; do
    $CC $SAN -std=c99 -shared -fPIC -I"$INCLUDE" -o "$WORK/pybpe/_$ext$SUFFIX" "$WORK/csrc/pyext/$ext.c"
    nm -D "$WORK/pybpe/_$ext$SUFFIX" | grep -q __asan || { echo "sanitize: pybpe._$ext is not instrumented"; exit 1; }
done
PRELOAD="$($CC -print-file-name=libasan.so):$($CC -print-file-name=libubsan.so)"
cd "$WORK"
# Imported here first: a module that failed to load would only skip its tests.
LD_PRELOAD="$PRELOAD" ASAN_OPTIONS=detect_leaks=0 "$PY" -c "import pybpe._pylists, pybpe._utf8, pybpe._ranks_file, pybpe._bpe_c" \
    || { echo "sanitize: the instrumented extensions do not import"; exit 1; }
# PYTHONPATH: the programs the tests start (the pybpe console script, python
# -m pybpe) import this instrumented copy too, not an editable install of
# the working tree, which they found before (a tree edited during the run
# then failed test_cli here).
# Reports go to files: pytest captures each test's stderr, and a process the
# sanitizer stops never gives it back (the run failed with no report shown);
# child processes the tests start write theirs there too.
REPORTS="$WORK/reports"
mkdir "$REPORTS"
status=0
LD_PRELOAD="$PRELOAD" ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:log_path="$REPORTS/asan" \
    UBSAN_OPTIONS=print_stacktrace=1:log_path="$REPORTS/ubsan" \
    PYBPE_SHARED_DATA="$ROOT/../shared/data" PYBPE_BACKEND=c PYTHONPATH="$WORK${PYTHONPATH:+:$PYTHONPATH}" \
    "$PY" -m pytest -q -p no:cacheprovider tests "$@" || status=$?
if [ -n "$(ls -A "$REPORTS")" ]; then
    cat "$REPORTS"/*
    echo "sanitize: the sanitizers reported the errors above"
    [ "$status" -ne 0 ] || status=1
fi
exit "$status"
