#!/usr/bin/env bash
# Run pytest under valgrind's memcheck and fail on any error that touches pybpe's C code.
#
# This interpreter build reports a few dozen "uninitialised value" errors on
# its own, with pybpe not even imported (checked: a bare hypothesis test gives
# 37), so --error-exitcode alone cannot judge the C core.  Instead every error
# record is kept (with --track-origins, so an uninitialised value made in C
# and used later by CPython still names C as its origin) and the run fails if
# any record has a frame of pybpe's C (OURS below).
# Usage: tools/valgrind.sh PYTHON [pytest args...]   (slow: ~50x the normal run)
set -uo pipefail
# sys.executable, not the path as given: a pyenv shim is a shell script,
# which valgrind would trace instead of Python.  Not its realpath either: a
# virtual environment's python is a link, and resolving it would leave the
# environment (and its packages) behind.
PY=$(${1:-python3} -c 'import sys; print(sys.executable)'); shift || true
LOG=$(mktemp)
PYTHONMALLOC=malloc PYBPE_BACKEND=c valgrind --tool=memcheck --track-origins=yes --leak-check=no \
    --num-callers=40 --fullpath-after= --log-file="$LOG" "$PY" -m pytest -q -p no:cacheprovider "$@"
status=$?
# A frame of pybpe's C: a csrc/ source (valgrind prints full paths with
# --fullpath-after=; by default only a file's name, which matched none of
# these, so until 2026-12-07 an error in C reached through cffi was caught by
# its glue frame alone and one in pylists.c not at all), cffi's generated
# glue, or one of the extension objects where a frame has no line.
OURS='/csrc/|pybpe[.]_bpe_c[.]c|pybpe/_(bpe_c|pylists|utf8)[.]'
errors=$(grep -cE "^==[0-9]+== (Invalid|Conditional|Use of|Syscall param|Mismatched|Source and destination)" "$LOG")
ours=$(awk -v ours="$OURS" '/^==[0-9]+== [A-Z]/{if (rec ~ ours) n++; rec=""} {rec = rec $0} END{if (rec ~ ours) n++; print n+0}' "$LOG")
echo "valgrind: pytest exit $status; $errors error records in all, $ours touching pybpe's C code (log: $LOG)"
[ "$status" -eq 0 ] && [ "$ours" -eq 0 ]
