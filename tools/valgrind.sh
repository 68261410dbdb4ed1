#!/usr/bin/env bash
# Run pytest under valgrind's memcheck and fail on any error that touches pybpe's C code.
#
# This interpreter build reports a few dozen "uninitialised value" errors on
# its own, with pybpe not even imported (checked: a bare hypothesis test gives
# 37), so --error-exitcode alone cannot judge the C core.  Instead every error
# record is kept (with --track-origins, so an uninitialised value made in C
# and used later by CPython still names C as its origin) and the run fails if
# any record mentions an extension (_bpe_c, _pylists, _utf8) or a csrc/ file.
# Usage: tools/valgrind.sh PYTHON [pytest args...]   (slow: ~50x the normal run)
set -uo pipefail
# sys.executable, not the path as given: a pyenv shim is a shell script,
# which valgrind would trace instead of Python.  Not its realpath either: a
# virtual environment's python is a link, and resolving it would leave the
# environment (and its packages) behind.
PY=$(${1:-python3} -c 'import sys; print(sys.executable)'); shift || true
LOG=$(mktemp)
PYTHONMALLOC=malloc PYBPE_BACKEND=c valgrind --tool=memcheck --track-origins=yes --leak-check=no \
    --num-callers=40 --log-file="$LOG" "$PY" -m pytest -q -p no:cacheprovider "$@"
status=$?
errors=$(grep -cE "^==[0-9]+== (Invalid|Conditional|Use of|Syscall param|Mismatched|Source and destination)" "$LOG")
ours=$(awk '/^==[0-9]+== [A-Z]/{if (rec ~ /_bpe_c|_pylists|_utf8|csrc\//) n++; rec=""} {rec = rec $0} END{if (rec ~ /_bpe_c|_pylists|_utf8|csrc\//) n++; print n+0}' "$LOG")
echo "valgrind: pytest exit $status; $errors error records in all, $ours touching pybpe's C code (log: $LOG)"
[ "$status" -eq 0 ] && [ "$ours" -eq 0 ]
