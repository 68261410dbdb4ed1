"""The C WordPiece trainer (csrc/wordpiece.c, declared in csrc/bpe.h) through cffi: the twin of
pybpe/core/spec/wordpiece.py, same names, arguments and results.  This file
only checks arguments, converts and maps status codes (as core.py does for
the BPE trainer)."""
from ..._bpe_c import ffi, lib
from .core import _MAX_SIZE, _MAX_U64, SymbolTable, _check, _check_int, _words_ptr

__all__ = ["WordPieceTrainer"]

_RUN_CHUNK = 4096  # merges fetched per bpe_wp_trainer_run call


class WordPieceTrainer:
    """Learns the merges pybpe.reference.learn_wordpiece would, incrementally (wordpiece.c)."""

    __slots__ = ("_ptr", "_symtab", "__weakref__")

    def __init__(self, symtab, words, *, min_frequency=1, prefix=b"##"):
        if not isinstance(symtab, SymbolTable):
            raise TypeError("WordPieceTrainer needs a native.SymbolTable, not %s" % type(symtab).__name__)
        words_ptr = _words_ptr(words, "WordPieceTrainer")
        min_frequency = _check_int(min_frequency, "min_frequency", 1, _MAX_U64)
        if not isinstance(prefix, bytes):
            raise TypeError("prefix must be bytes, not %s" % type(prefix).__name__)
        status = ffi.new("int *")
        ptr = lib.bpe_wp_trainer_new(symtab._ptr, words_ptr, min_frequency, prefix, len(prefix), status)
        if status[0] == lib.BPE_EINVAL:  # the other arguments were checked above
            raise ValueError("WordPieceTrainer: a word holds a symbol ID that is not in the symbol table")
        _check(status[0], "WordPieceTrainer")
        self._ptr = ffi.gc(ptr, lib.bpe_wp_trainer_free)
        self._symtab = symtab  # the C trainer borrows it: keep it alive

    def run(self, target_size, max_steps):
        """Up to max_steps merges as (left, right, merged, count, count(left),
        count(right)) tuples; fewer means training is finished."""
        target_size = min(_check_int(target_size, "target_size", 0, _MAX_U64), _MAX_SIZE)
        max_steps = _check_int(max_steps, "max_steps", 0, _MAX_U64)
        chunk = min(max_steps, _RUN_CHUNK)
        out = ffi.new("bpe_wp_merge[]", max(chunk, 1))
        n = ffi.new("size_t *")
        done = []
        while len(done) < max_steps:
            want = min(chunk, max_steps - len(done))
            status = lib.bpe_wp_trainer_run(self._ptr, target_size, want, out, n)
            done += [(m.left, m.right, m.merged, m.count, m.left_count, m.right_count)
                     for m in ffi.unpack(out, n[0])]
            _check(status, "WordPieceTrainer.run")
            if n[0] < want:
                break
        return done
