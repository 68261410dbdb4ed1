"""What every spec module shares, as csrc/bpe.h and csrc/internal.h give every
C file: the "no symbol" ID, the count limit, COMPILED, and the argument checks
that raise the errors the C wrappers raise.
"""

__all__ = ["COMPILED", "NO_SYMBOL"]

# False: the spec holds the GIL throughout, so callers gain nothing from one
# big call or from threads (pybpe.core.native: True).  For speed choices
# only; both backends give the same results.
COMPILED = False
# The "unknown" symbol (BPE_NO_SYMBOL): it takes part in no pair, so it is
# never counted, never merged, and never created by the trainer.
NO_SYMBOL = 0xFFFFFFFF
# Frequencies and counts are uint64_t in C, where a count that would pass
# this is an error (BPE_EOVERFLOW), never a wrap-around; the checks
# raise the same OverflowError(COUNT_OVERFLOW) at the same points.
MAX_COUNT = 2**64 - 1


def check_ids(symbols, what):
    """`symbols` as a fresh list of ints in 0..NO_SYMBOL, or TypeError/ValueError."""
    ids = list(symbols)
    if not ids:
        return ids
    if set(map(type, ids)) != _JUST_INT:  # one C-level pass in the usual case
        for s in ids:
            if not isinstance(s, int):
                raise TypeError("%s must hold int symbol IDs, not %s" % (what, type(s).__name__))
        ids = [int(s) for s in ids]  # bool / IntEnum -> plain int
    if min(ids) < 0 or max(ids) > NO_SYMBOL:
        raise ValueError("%s holds a symbol ID outside 0..0xFFFFFFFF" % what)
    return ids


_JUST_INT = {int}


def check_count(value, name, low):
    if not isinstance(value, int):
        raise TypeError("%s must be an int, not %s" % (name, type(value).__name__))
    if value < low or value > MAX_COUNT:
        raise ValueError("%s must be in %d..2**64-1, got %d" % (name, low, value))
    return int(value)
