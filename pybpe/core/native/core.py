"""The C backend: a thin cffi wrapper around csrc/ (module pybpe._bpe_c).

Same names, arguments and results as its pure-Python twin, pybpe.core.spec (docs/backends.md); this
file only converts, validates and maps errors.  Arguments are checked here,
before C sees them (the C core never trusts Python to be careful, but a
clear TypeError/ValueError naming the bad item is Python's job); C status
codes become exceptions in one place, errors.raise_for_status (through
`_check`); C objects are freed by
`ffi.gc`.  Lists cross the boundary in one conversion each
(`ffi.new("uint32_t[]", list)`, `ffi.unpack`), never element by element.
cffi releases the GIL around every C call, so long encodes and training
runs let other threads work.
"""
from array import array
from itertools import accumulate, chain

from ..._bpe_c import ffi, lib
from ...errors import raise_for_status

__all__ = [
    "NO_SYMBOL", "SymbolTable", "WordTable", "count_pairs", "find_best_pair",
    "merge_pair", "Trainer", "Merger", "WordCounter", "UNITS", "COMPILED",
]

# True: a call runs compiled, without the GIL, so one big call and threads pay
# (pybpe.core.spec: False).  For speed choices only; both
# cores give the same results.
COMPILED = True
NO_SYMBOL = 0xFFFFFFFF
_MAX_U64 = 2**64 - 1
_MAX_SIZE = 2**(8 * ffi.sizeof("size_t")) - 1
_SIZE_T_CODE = next(c for c in "ILQ" if array(c).itemsize == ffi.sizeof("size_t"))  # array's size_t
_RUN_CHUNK = 4096  # merges fetched per bpe_trainer_run call


def _merge_layout():
    """How to read an array of bpe_merge as numbers: (record size, left,
    right and merged as uint32 indices, count as a uint64 index), each index
    counted in its own item size -- or None when the fields do not sit on
    those boundaries (then each merge is read as a cdata struct, ~15x
    slower: that was ~5% of training Shakespeare)."""
    size = ffi.sizeof("bpe_merge")
    u32 = [ffi.offsetof("bpe_merge", f) for f in ("left", "right", "merged")]
    count = ffi.offsetof("bpe_merge", "count")
    if (array("I").itemsize != 4 or array("Q").itemsize != 8 or size % 8 or count % 8
            or any(o % 4 for o in u32)):
        return None
    return (size, *(o // 4 for o in u32), count // 8)


_MERGE_LAYOUT = _merge_layout()


def _merges_from(out, n):
    """The first n bpe_merge records of `out` as (left, right, merged, count)."""
    if _MERGE_LAYOUT is None or n == 0:
        return [(m.left, m.right, m.merged, m.count) for m in ffi.unpack(out, n)]
    size, left, right, merged, count = _MERGE_LAYOUT
    raw = memoryview(ffi.buffer(out, n * size))
    u32, u64, step32, step64 = raw.cast("I"), raw.cast("Q"), size // 4, size // 8
    return list(zip(u32[left::step32].tolist(), u32[right::step32].tolist(),
                    u32[merged::step32].tolist(), u64[count::step64].tolist()))


def _ids_from(out, n):
    """The first n bpe_merge records of `out` as ([(left, right, merged)],
    [count]): _merges_from's tuples without the count."""
    if _MERGE_LAYOUT is None or n == 0:
        got = ffi.unpack(out, n)
        return [(m.left, m.right, m.merged) for m in got], [m.count for m in got]
    size, left, right, merged, count = _MERGE_LAYOUT
    raw = memoryview(ffi.buffer(out, n * size))
    u32, u64, step32, step64 = raw.cast("I"), raw.cast("Q"), size // 4, size // 8
    return (list(zip(u32[left::step32].tolist(), u32[right::step32].tolist(),
                     u32[merged::step32].tolist())), u64[count::step64].tolist())


def _check(status, what):
    """Turn a C status into an exception (errors.raise_for_status, shared with native.ranks)."""
    return raise_for_status(status, what, lib)


def _check_int(value, name, low, high):
    if not isinstance(value, int):
        raise TypeError("%s must be an int, not %s" % (name, type(value).__name__))
    if not low <= value <= high:  # (spelt as the spec spells the uint64 bound)
        raise ValueError("%s must be in %d..%s, got %d"
                         % (name, low, "2**64-1" if high == _MAX_U64 else high, value))
    return int(value)


def _explain_ids(ids, what):
    """Raise the TypeError/ValueError that cffi's conversion of `ids` hit."""
    for k, s in enumerate(ids):
        if not isinstance(s, int):
            raise TypeError("%s must hold int symbol IDs, not %s (item %d)"
                            % (what, type(s).__name__, k))
        if not 0 <= s <= NO_SYMBOL:
            raise ValueError("%s holds symbol ID %d (item %d), outside 0..0xFFFFFFFF"
                             % (what, s, k))
    raise TypeError("%s must hold int symbol IDs" % what)


# array('I') converts (and range-checks) a list about twice as fast as
# ffi.new("uint32_t[]", list); cffi then reads it in place.
_ARRAY_U32 = "I" if array("I").itemsize == 4 else None


def _uint32_array(ids, what, explain=None):
    """A uint32_t[] holding the ints of `ids`, or a clear TypeError/ValueError.

    `ids` is a sequence, or an iterator with an `explain()` that raises the
    error naming the bad item (the iterator is spent by then).
    """
    try:
        if _ARRAY_U32:
            return ffi.from_buffer("uint32_t[]", array(_ARRAY_U32, ids))
        return ffi.new("uint32_t[]", list(ids))
    except (OverflowError, TypeError):
        if explain is not None:
            explain()
        _explain_ids(list(ids), what)


def _frequency_array(freqs, what):
    try:
        return ffi.new("uint64_t[]", freqs)
    except (OverflowError, TypeError):
        for k, f in enumerate(freqs):
            _check_int(f, "%s %d frequency" % (what, k), 0, _MAX_U64)
        raise


def _flatten(words, what):
    """(uint32_t[] of every symbol, size_t[] of n + 1 offsets, n, total) for words."""
    words = words if isinstance(words, list) else list(words)
    try:
        lengths = list(map(len, words))
    except TypeError:  # some word is an iterator
        words = [list(w) for w in words]
        lengths = list(map(len, words))
    offsets = [0]
    offsets += accumulate(lengths)
    def explain():
        for k, word in enumerate(words):
            _uint32_array(word, "%s, word %d," % (what, k))
    return (_uint32_array(chain.from_iterable(words), what, explain),
            ffi.new("size_t[]", offsets), len(words), offsets[-1])


# ---------------------------------------------------------------------------
# Symbol table and word table.
# ---------------------------------------------------------------------------

class SymbolTable:
    """Byte strings <-> dense int IDs, in first-interned order (bpe_symtab)."""

    __slots__ = ("_ptr", "__weakref__")

    def __init__(self, tokens=()):
        ptr = lib.bpe_symtab_new()
        if ptr == ffi.NULL:
            raise MemoryError("SymbolTable: out of memory")
        self._ptr = ffi.gc(ptr, lib.bpe_symtab_free)
        for token in tokens:
            self.intern(token)

    @staticmethod
    def _bytes(token):
        if type(token) is bytes:
            return token
        if isinstance(token, bytes):
            return bytes(token)
        raise TypeError("symbols are bytes, not %s" % type(token).__name__)

    def intern(self, token):
        """The ID of `token`, adding it with the next free ID when absent."""
        token = self._bytes(token)
        out = ffi.new("uint32_t *")
        _check(lib.bpe_symtab_intern(self._ptr, token, len(token), out), "SymbolTable.intern")
        return out[0]

    def lookup(self, token):
        """The ID of `token`, or -1 when it was never interned."""
        token = self._bytes(token)
        found = lib.bpe_symtab_lookup(self._ptr, token, len(token))
        return -1 if found == NO_SYMBOL else found

    def __len__(self):
        return lib.bpe_symtab_size(self._ptr)

    def token(self, id):
        """The bytes of symbol `id`; IndexError when out of range."""
        if not isinstance(id, int):
            raise TypeError("symbol ID must be an int, not %s" % type(id).__name__)
        size = lib.bpe_symtab_size(self._ptr)
        if not 0 <= id < size:
            raise IndexError("symbol ID %d out of range (table has %d)" % (id, size))
        n = ffi.new("size_t *")
        p = lib.bpe_symtab_bytes(self._ptr, id, n)
        return ffi.buffer(p, n[0])[:]

    def tokens(self):
        """Every symbol's bytes, in ID order (one C call copies them all)."""
        ptr = self._ptr
        n, total = lib.bpe_symtab_size(ptr), lib.bpe_symtab_export(ptr, ffi.NULL, ffi.NULL)
        blob, lengths = ffi.new("char[]", max(total, 1)), ffi.new("size_t[]", max(n, 1))
        lib.bpe_symtab_export(ptr, blob, lengths)
        data = ffi.buffer(blob, total)[:]
        ends = list(accumulate(ffi.unpack(lengths, n)))
        return list(map(data.__getitem__, map(slice, [0] + ends[:-1], ends)))


class WordTable:
    """The distinct words of a corpus, in first-appearance order (bpe_words)."""

    __slots__ = ("_ptr", "__weakref__")

    def __init__(self, words=()):
        ptr = lib.bpe_words_new()
        if ptr == ffi.NULL:
            raise MemoryError("WordTable: out of memory")
        self._ptr = ffi.gc(ptr, lib.bpe_words_free)
        pairs = list(words)
        if pairs:
            try:
                symbols, freqs = zip(*[(s, f) for s, f in pairs])
            except (TypeError, ValueError):
                raise TypeError("WordTable needs (symbols, frequency) pairs") from None
            self.add_many(symbols, freqs)

    def add(self, symbols, frequency):
        """Append one word (the symbols are copied); it may be empty."""
        where = "word %d" % len(self)
        symbols = symbols if isinstance(symbols, (list, tuple)) else list(symbols)
        frequency = _check_int(frequency, where + " frequency", 0, _MAX_U64)
        arr = _uint32_array(symbols, where)
        _check(lib.bpe_words_add(self._ptr, arr, len(symbols), frequency), "WordTable.add")

    def add_many(self, words, frequencies):
        """Append words[i] with frequencies[i] for every i (all or nothing)."""
        words, frequencies = list(words), list(frequencies)
        if len(words) != len(frequencies):
            raise ValueError("add_many: %d words but %d frequencies" % (len(words), len(frequencies)))
        where = "add_many (table had %d words)" % len(self)
        syms, offsets, n, _ = _flatten(words, where)
        freqs = _frequency_array(frequencies, "word")
        _check(lib.bpe_words_add_many(self._ptr, syms, offsets, freqs, n), "WordTable.add_many")

    def __len__(self):
        return lib.bpe_words_count(self._ptr)

    def _index(self, i):
        if not isinstance(i, int):
            raise TypeError("word index must be an int, not %s" % type(i).__name__)
        size = lib.bpe_words_count(self._ptr)
        if not 0 <= i < size:
            raise IndexError("word index %d out of range (table has %d)" % (i, size))
        return i

    def symbols(self, i):
        """The current segmentation of word i (a copy)."""
        n = ffi.new("size_t *")
        p = lib.bpe_words_symbols(self._ptr, self._index(i), n)
        return ffi.unpack(p, n[0])

    def frequency(self, i):
        return lib.bpe_words_frequency(self._ptr, self._index(i))


def _words_ptr(words, what):
    if not isinstance(words, WordTable):
        raise TypeError("%s needs a native.WordTable, not %s" % (what, type(words).__name__))
    return words._ptr


# ---------------------------------------------------------------------------
# The chapter's literal helpers (listings 063-064).
# ---------------------------------------------------------------------------

def count_pairs(words):
    """Every adjacent pair with its weighted count; dict order = first encountered."""
    ptr = _words_ptr(words, "count_pairs")
    out, n = ffi.new("bpe_pair_count **"), ffi.new("size_t *")
    _check(lib.bpe_count_pairs(ptr, out, n), "count_pairs")
    pairs = out[0]
    try:
        return {(p.left, p.right): p.count for p in ffi.unpack(pairs, n[0])} if n[0] else {}
    finally:
        lib.bpe_free(pairs)


def find_best_pair(words):
    """((left, right), count) of the most frequent pair (first encountered on a tie), or None."""
    ptr = _words_ptr(words, "find_best_pair")
    best = ffi.new("bpe_pair_count *")
    if _check(lib.bpe_find_best_pair(ptr, best), "find_best_pair") == 0:
        return None
    return (best.left, best.right), best.count


def merge_pair(words, left, right, merged):
    """Rewrite every word left to right, skip-two; returns how many words changed."""
    ptr = _words_ptr(words, "merge_pair")
    for name, value in (("left", left), ("right", right), ("merged", merged)):
        _check_int(value, "merge_pair " + name, 0, NO_SYMBOL)
    changed = ffi.new("size_t *")
    _check(lib.bpe_merge_pair(ptr, left, right, merged, changed), "merge_pair")
    return changed[0]


# ---------------------------------------------------------------------------
# Incremental trainer and ranked application.
# ---------------------------------------------------------------------------

class Trainer:
    """Learns the merges find_best_pair + merge_pair would, incrementally (trainer.c)."""

    __slots__ = ("_ptr", "_symtab", "__weakref__")

    def __init__(self, symtab, words, *, min_frequency=1, max_token_units=0):
        if not isinstance(symtab, SymbolTable):
            raise TypeError("Trainer needs a native.SymbolTable, not %s" % type(symtab).__name__)
        words_ptr = _words_ptr(words, "Trainer")
        min_frequency = _check_int(min_frequency, "min_frequency", 1, _MAX_U64)
        max_token_units = _check_int(max_token_units, "max_token_units", 0, NO_SYMBOL)
        status = ffi.new("int *")
        ptr = lib.bpe_trainer_new(symtab._ptr, words_ptr, min_frequency, max_token_units, status)
        if status[0] == lib.BPE_EINVAL:  # the arguments were checked above
            raise ValueError("Trainer: a word holds a symbol ID that is not in the symbol table")
        _check(status[0], "Trainer")
        self._ptr = ffi.gc(ptr, lib.bpe_trainer_free)
        self._symtab = symtab  # the C trainer borrows it: keep it alive

    @classmethod
    def _adopt(cls, ptr, symtab):
        """A Trainer around a bpe_trainer the C made (WordCounter.trainer)."""
        self = cls.__new__(cls)
        self._ptr = ffi.gc(ptr, lib.bpe_trainer_free)
        self._symtab = symtab  # the C trainer borrows it: keep it alive
        return self

    def _run_ids(self, target_size, max_steps):
        """run() as ([(left, right, merged)], [count]), for
        BPETokenizer._run, which keeps the two apart: 4-tuples sliced to
        3 were ~16k more tuples in an 8,000-token run, each one an object
        for the cyclic GC to track (~20 more young collections)."""
        target_size = _check_int(target_size, "target_size", 0, _MAX_U64)
        max_steps = _check_int(max_steps, "max_steps", 0, _MAX_U64)
        target_size = min(target_size, _MAX_SIZE)
        out = ffi.new("bpe_merge[]", max(min(max_steps, _RUN_CHUNK), 1))
        n = ffi.new("size_t *")
        ids, counts = [], []
        while len(ids) < max_steps:
            want = min(len(out), max_steps - len(ids))
            status = lib.bpe_trainer_run(self._ptr, target_size, want, out, n)
            got_ids, got_counts = _ids_from(out, n[0])
            ids += got_ids
            counts += got_counts
            _check(status, "Trainer.run")
            if n[0] < want:
                break
        return ids, counts

    def run(self, target_size, max_steps):
        """Up to max_steps merges as (left, right, merged, count) tuples.

        Stops early when the symbol table has target_size entries, when no
        pair is left, or when the best count is below min_frequency.
        """
        target_size = _check_int(target_size, "target_size", 0, _MAX_U64)
        max_steps = _check_int(max_steps, "max_steps", 0, _MAX_U64)
        target_size = min(target_size, _MAX_SIZE)  # a table never gets that big
        chunk = min(max_steps, _RUN_CHUNK)
        out = ffi.new("bpe_merge[]", max(chunk, 1))
        n = ffi.new("size_t *")
        done = []
        while len(done) < max_steps:
            want = min(chunk, max_steps - len(done))
            status = lib.bpe_trainer_run(self._ptr, target_size, want, out, n)
            done += _merges_from(out, n[0])
            _check(status, "Trainer.run")
            if n[0] < want:
                break
        return done


class Merger:
    """Ranked application of any merge list (merger.c, listing 065)."""

    __slots__ = ("_ptr", "__weakref__")

    def __init__(self, merges):
        lefts, rights, results = [], [], []
        for r, item in enumerate(merges):
            try:
                left, right, result = item
            except (TypeError, ValueError):
                raise TypeError("merge %d must be a (left, right, result) triple" % r) from None
            lefts.append(left)
            rights.append(right)
            results.append(result)
        status = ffi.new("int *")
        ptr = lib.bpe_merger_new(_uint32_array(lefts, "merges (left)"),
                                 _uint32_array(rights, "merges (right)"),
                                 _uint32_array(results, "merges (result)"),
                                 len(lefts), status)
        _check(status[0], "Merger")
        self._ptr = ffi.gc(ptr, lib.bpe_merger_free)

    def apply_merges(self, symbols):
        """The word after applying merge 0, then 1, ... each skip-two."""
        symbols = symbols if isinstance(symbols, (list, tuple)) else list(symbols)
        arr = _uint32_array(symbols, "apply_merges")
        n = ffi.new("size_t *", len(symbols))
        _check(lib.bpe_apply_merges(self._ptr, arr, n), "apply_merges")
        return ffi.unpack(arr, n[0])

    def encode_words(self, words):
        """apply_merges on each word, in one C call."""
        syms, offsets, n, total = _flatten(words, "encode_words")
        out = ffi.new("uint32_t[]", max(total, 1))
        out_offsets = ffi.new("size_t[]", n + 1)
        _check(lib.bpe_encode_words(self._ptr, syms, offsets, n, out, out_offsets), "encode_words")
        flat = ffi.unpack(out, out_offsets[n])
        ends = ffi.unpack(out_offsets, n + 1)
        return [flat[ends[k]:ends[k + 1]] for k in range(n)]

    def encode_text(self, symtab, units, marker, unk, text, *, split=True):
        """Text -> IDs in one C call (encode_text.c's bpe_encode_text): words as
        text.split() cuts them (split=False: the whole text is one word, none
        when empty), each turned into its initial symbols in `symtab` as
        WordCounter.word_table does (NO_SYMBOL when absent), merged, with
        NO_SYMBOL replaced by `unk`; all words' IDs concatenated."""
        if not isinstance(symtab, SymbolTable):
            raise TypeError("encode_text needs a native.SymbolTable, not %s" % type(symtab).__name__)
        mode, mark = _units_marker(units, marker)
        unk = _check_int(unk, "unk", 0, NO_SYMBOL)
        data = _utf8(text, "text")
        cap = len(data) if units == "bytes" else len(text)
        if units == "symbol":
            cap += len(text) // 2 + 1 if split else 1  # one marker per word
        out = ffi.new("uint32_t[]", max(cap, 1))
        n = ffi.new("size_t *")
        _check(lib.bpe_encode_text(self._ptr, symtab._ptr, mode, mark, len(mark), unk, 1 if split else 0,
                                   data, len(data), out, cap, n), "Merger.encode_text")
        return ffi.unpack(out, n[0])


# ---------------------------------------------------------------------------
# Word counting and the initial word table (counter.c).
# ---------------------------------------------------------------------------

# How a word becomes its initial symbols (WordCounter.word_table).
UNITS = {"bytes": lib.BPE_UNITS_BYTES, "chars": lib.BPE_UNITS_CHARS,
         "suffix": lib.BPE_UNITS_SUFFIX, "symbol": lib.BPE_UNITS_SYMBOL}


def _units_marker(units, marker):
    """(C units mode, marker bytes) for a units name, checked."""
    if units not in UNITS:
        raise ValueError("units must be one of %s, not %r" % (", ".join(map(repr, UNITS)), units))
    mark = b""
    if units in ("suffix", "symbol"):
        mark = _utf8(marker, "marker")
        if not mark:
            raise ValueError("units %r needs a non-empty marker" % units)
    return UNITS[units], mark


def _utf8(text, what):
    if not isinstance(text, str):
        raise TypeError("%s must be str, not %s" % (what, type(text).__name__))
    return text.encode("utf-8", "surrogatepass")


_PRESETS = (lib.BPE_PRETOK_GPT2, lib.BPE_PRETOK_CL100K, lib.BPE_PRETOK_O200K)


def _check_preset(preset):
    # The spec's check (spec.counter._check_preset), word for word.
    if isinstance(preset, bool) or not isinstance(preset, int):
        raise TypeError("preset must be an int (PRESET_GPT2, PRESET_CL100K or PRESET_O200K), not %s"
                        % type(preset).__name__)
    if preset not in _PRESETS:
        raise ValueError("unknown pre-tokenizer preset %r" % (preset,))


class WordCounter:
    """Distinct words with 64-bit counts, in first-appearance order (counter.c)."""

    __slots__ = ("_ptr", "__weakref__")

    def __init__(self):
        ptr = lib.bpe_counter_new()
        if ptr == ffi.NULL:
            raise MemoryError("WordCounter: out of memory")
        self._ptr = ffi.gc(ptr, lib.bpe_counter_free)

    def add_text(self, text):
        """Count the words of text.split() (one C pass; the GIL is released).
        `text` may also be bytes holding UTF-8 (surrogates allowed, as
        str.encode("utf-8", "surrogatepass") writes them): a file's bytes
        are counted with no str between (UnicodeDecodeError when not UTF-8)."""
        data = text if isinstance(text, bytes) else _utf8(text, "text")
        status = lib.bpe_counter_add_text(self._ptr, data, len(data))
        if status == lib.BPE_EINVAL and data is text:
            text.decode("utf-8", "surrogatepass")  # raises: the C check found bad UTF-8
        _check(status, "WordCounter.add_text")

    def add_utf8(self, buffer, end):
        """add_text(bytes(buffer[:end])) without the copy: `buffer` is any
        writable or read-only buffer of bytes (a bytearray a file is read into)
        holding UTF-8 up to `end`."""
        data = ffi.from_buffer(buffer)
        end = _check_int(end, "end", 0, len(data))
        status = lib.bpe_counter_add_text(self._ptr, data, end)
        if status == lib.BPE_EINVAL:
            ffi.buffer(data, end)[:].decode("utf-8", "surrogatepass")  # raises: the C check found bad UTF-8
        _check(status, "WordCounter.add_utf8")

    def add_words(self, words, frequencies=None):
        """Count each of `words` (a list of str) once, or frequencies[i] times."""
        words = words if isinstance(words, list) else list(words)
        try:
            data = "".join(words).encode("utf-8", "surrogatepass")
        except TypeError:
            for k, w in enumerate(words):
                _utf8(w, "words[%d]" % k)
            raise
        lengths = ffi.new("size_t[]", list(map(len, words)))
        freqs = ffi.NULL
        if frequencies is not None:
            frequencies = frequencies if isinstance(frequencies, list) else list(frequencies)
            if len(frequencies) != len(words):
                raise ValueError("add_words: %d words but %d frequencies" % (len(words), len(frequencies)))
            freqs = _frequency_array(frequencies, "word")
        _check(lib.bpe_counter_add_words(self._ptr, data, len(data), lengths, len(words), freqs),
               "WordCounter.add_words")

    def add_pieces(self, texts, preset):
        """Count the pieces the pre-tokenizer `preset` (PRESET_GPT2, PRESET_CL100K
        or PRESET_O200K) cuts from each of `texts` (a list of str), each text cut
        alone: a piece never spans two texts (one C pass; the GIL is released)."""
        _check_preset(preset)
        texts = texts if isinstance(texts, list) else list(texts)
        try:
            data = "".join(texts).encode("utf-8", "surrogatepass")
        except TypeError:
            for k, t in enumerate(texts):
                _utf8(t, "texts[%d]" % k)
            raise
        # An array of size_t straight from the lengths: no list of ints between.
        lengths = ffi.from_buffer("size_t[]", array(_SIZE_T_CODE, map(len, texts)))
        _check(lib.bpe_counter_add_pieces(self._ptr, preset, data, len(data), lengths, len(texts)),
               "WordCounter.add_pieces")

    def __len__(self):
        return lib.bpe_counter_size(self._ptr)

    def items(self):
        """[(word, count)] in first-appearance order."""
        n = lib.bpe_counter_size(self._ptr)
        nbytes = lib.bpe_counter_bytes(self._ptr)
        blob = ffi.new("char[]", max(nbytes, 1))
        lengths = ffi.new("size_t[]", max(n, 1))
        counts = ffi.new("uint64_t[]", max(n, 1))
        _check(lib.bpe_counter_export(self._ptr, blob, lengths, counts), "WordCounter.items")
        text = ffi.buffer(blob, nbytes)[:].decode("utf-8", "surrogatepass")
        ends = list(accumulate(ffi.unpack(lengths, n)))
        starts = [0] + ends[:-1]
        return list(zip(map(text.__getitem__, map(slice, starts, ends)), ffi.unpack(counts, n)))

    def characters(self):
        """The distinct characters of all words, sorted (str of length 1)."""
        out, n = ffi.new("uint32_t **"), ffi.new("size_t *")
        _check(lib.bpe_counter_characters(self._ptr, out, n), "WordCounter.characters")
        try:
            return list(map(chr, ffi.unpack(out[0], n[0]))) if n[0] else []
        finally:
            lib.bpe_free(out[0])

    def trainer(self, symtab, units, marker=None, *, min_frequency=1, max_token_units=0):
        """Trainer(symtab, self.word_table(symtab, units, marker), ...) in one
        C call: the words' initial symbols go straight into the trainer, no
        word table between (~7 MB less fresh memory on Shakespeare)."""
        if not isinstance(symtab, SymbolTable):
            raise TypeError("trainer needs a native.SymbolTable, not %s" % type(symtab).__name__)
        mode, mark = _units_marker(units, marker)
        min_frequency = _check_int(min_frequency, "min_frequency", 1, _MAX_U64)
        max_token_units = _check_int(max_token_units, "max_token_units", 0, NO_SYMBOL)
        status = ffi.new("int *")
        ptr = lib.bpe_counter_trainer(self._ptr, symtab._ptr, mode, mark, len(mark), min_frequency,
                                      max_token_units, status)
        _check(status[0], "Trainer")  # (its failures are the trainer's, named as Trainer names them)
        return Trainer._adopt(ptr, symtab)

    def word_table(self, symtab, units, marker=None):
        """A WordTable of every word's initial symbols (IDs in symtab, NO_SYMBOL
        when absent) with its count; units is "bytes", "chars", "suffix" or "symbol"."""
        if not isinstance(symtab, SymbolTable):
            raise TypeError("word_table needs a native.SymbolTable, not %s" % type(symtab).__name__)
        mode, mark = _units_marker(units, marker)
        table = WordTable()
        _check(lib.bpe_counter_word_table(self._ptr, symtab._ptr, mode, mark, len(mark),
                                          table._ptr), "WordCounter.word_table")
        return table
