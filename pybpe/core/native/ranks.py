"""Rank-table byte-pair merging in C: a thin cffi wrapper around csrc/ranks.c.

Same names, arguments and results as pybpe.core.spec.ranks (its specification).
This layer only converts (pieces -> one UTF-8 buffer and an array of piece
lengths), checks arguments Python-side, maps status codes to exceptions and
ties the C table's lifetime to the Python object.  One C call encodes all
the pieces of a text, and cffi releases the GIL for it, so encode_batch
threads really run in parallel.
"""
import functools
import marshal
import sys
from array import array
from itertools import accumulate

from ..._bpe_c import ffi, lib
from ..._unicode import _SIZE_T_CODE
from ...errors import byte_without_token, raise_for_status

try:  # optional, built beside the cffi module (csrc/pyext/pylists.c)
    from ... import _pylists
except ImportError:  # pragma: no cover - a build without it
    _pylists = None

HEAP_THRESHOLD = lib.BPE_RANKS_HEAP_THRESHOLD


def _check(status, what):
    # The one status -> exception map (shared with native.core); an encode's
    # status goes through RankTable._check_encode instead.
    return raise_for_status(status, what, lib, "invalid input")


def _u32(values):
    try:
        return array("I", values) if array("I").itemsize == 4 else array("L", values)
    except OverflowError:
        raise OverflowError("IDs must fit in 32 bits") from None


# array typecodes by item size (array's codes name C types, whose sizes vary).
_ARRAY_CODES = {size: next(c for c in "HILQ" if array(c).itemsize == size) for size in (2, 4)}

# The piece cache that lives across calls (csrc/piece_cache.c): the size
# pybpe.Encoding gives each thread, and the smallest there is.
PIECE_CACHE_DEFAULT_BYTES = lib.BPE_PIECE_CACHE_DEFAULT_BYTES
PIECE_CACHE_MIN_BYTES = lib.BPE_PIECE_CACHE_MIN_BYTES

PRESET_GPT2 = lib.BPE_PRETOK_GPT2
PRESET_CL100K = lib.BPE_PRETOK_CL100K
PRESET_O200K = lib.BPE_PRETOK_O200K

# The output buffer of a call is written by C before it is read, so it need
# not be zeroed first.
_new_uninit = ffi.new_allocator(should_clear_after_alloc=False)


def split(text, preset):
    """The pieces the C scanner cuts `text` into (for tests: they must equal
    regex.findall with the preset's pattern).

        >>> split("Hello world's", PRESET_GPT2)
        ['Hello', ' world', "'s"]
    """
    data = text.encode("utf-8")
    if not data:
        return []
    ends = ffi.new("size_t[]", len(data))
    n = lib.bpe_pretok_split(preset, ffi.from_buffer(data), len(data), ends)
    out, start = [], 0
    for end in ffi.unpack(ends, n):
        if not start < end <= len(data):  # a bug in the scanner: slicing would hide it
            raise RuntimeError("scanner %d cut at %d after %d in %d bytes" % (preset, end, start, len(data)))
        out.append(data[start:end].decode("utf-8"))
        start = end
    return out


# Python lists from the C output.  Where pybpe._pylists is built (it is
# optional), a RankTable makes them through its int table (_TABLE_MIN_IDS
# below), ~2.1-2.4 ns per ID; what follows is the way without it, and the way
# for a few IDs or sparse IDs.  Unpacking makes one int object per ID
# while holding the GIL (11-30 ns each, more as the output grows): on
# Shakespeare that was 40% of encode_ordinary_batch on one thread, and the
# part two threads cannot share.  From _MARSHAL_MIN_IDS IDs on, they go
# through csrc/idlists.c instead: a marshal stream, written without the GIL,
# in which each distinct ID is one int object shared by every place it
# occurs; marshal.loads holds the GIL for 6-9 ns per ID.  For one text the
# whole cost counts, and the stream's set-up only pays from ~10,000 IDs
# (measured, gpt2: 6,000 IDs 71 us unpacked vs 79 us; 31,000 IDs 494 vs
# 313 us; 630,000 IDs 12.1 vs 5.5 ms).  For a batch slice on threads what
# counts is the time holding the GIL, which the stream cuts at any size.
_MARSHAL_MIN_IDS = 16384
_MARSHAL_MIN_IDS_BATCH = 1024

# One list of that many IDs or more that is mostly runs of one repeated ID
# (on average at least _RUN_LENGTH long) is built by list repetition instead
# (csrc/py/idlists.h, bpe_ids_runs): gpt2's million spaces are a million IDs
# of 220, 7.4 ms through the stream and 0.9 ms as runs (encode_ordinary
# 10.7 -> 6.2 ms).  Each run costs Python ~0.2 us, so short runs stay with
# the stream (a million IDs in runs of 1,000: 3.1 ms against 7.7; of 128:
# 6.9 against 7.7; of 64: 8.3 against 7.8); text without runs costs a scan of
# its first IDs (it stops at the first len / _RUN_LENGTH + 1 runs).
_RUN_LENGTH = 128


def _unpack_lists(out, ends, n_lists):
    unpack, result, start = ffi.unpack, [], 0
    for i in range(n_lists):
        result.append(unpack(out + start, ends[i] - start))
        start = ends[i]
    return result


def _marshal_lists(out, ends, n_lists):
    # None when the C side declines (an ID above BPE_IDLISTS_MAX_ID).
    total = ends[n_lists - 1] if n_lists else 0
    size = lib.bpe_idlists_bound(total, n_lists)
    if not size:
        return None
    stream = _new_uninit("unsigned char[]", size)
    length = ffi.new("size_t *")
    status = lib.bpe_idlists_marshal(out, ends, n_lists, stream, length)
    if status == lib.BPE_ETOOBIG:
        return None
    _check(status, "building the ID lists")
    return marshal.loads(ffi.buffer(stream, length[0]))


def _run_list(out, n):
    # out[0:n] as one list if it is mostly runs (see _RUN_LENGTH), else None.
    # The list starts as the longest run's ID repeated n times (list
    # repetition adds to the int's reference count once; extending a list
    # by a run costs an increment per item, 5.5 ms for a million), and the
    # other runs are written over it.
    max_runs = n // _RUN_LENGTH
    run_ids = _new_uninit("uint32_t[]", max(1, max_runs))
    run_ends = _new_uninit("size_t[]", max(1, max_runs))
    count = ffi.new("size_t *")
    if lib.bpe_ids_runs(out, n, max_runs, run_ids, run_ends, count) != lib.BPE_OK:
        return None
    if not count[0]:
        return []
    ids, ends = ffi.unpack(run_ids, count[0]), ffi.unpack(run_ends, count[0])
    starts = [0] + ends[:-1]
    longest = max(range(len(ids)), key=lambda k: ends[k] - starts[k])
    result = [ids[longest]] * n
    for k, (i, start, end) in enumerate(zip(ids, starts, ends)):
        if i != ids[longest]:
            result[start:end] = [i] * (end - start)
    return result


def _marshal_reads_idlists():
    # marshal's format is CPython's own; check once that this interpreter
    # reads idlists.c's stream as the lists it stands for.
    ids = [7, 300, 7, 2 ** 20, 0, 300]
    out = ffi.new("uint32_t[]", ids)
    ends = ffi.new("size_t[]", [3, 3, 6])
    try:
        return _marshal_lists(out, ends, 3) == [[7, 300, 7], [], [2 ** 20, 0, 300]]
    except (ValueError, EOFError, TypeError):
        return False


_USE_MARSHAL = _marshal_reads_idlists()


# Lists through pybpe._pylists (csrc/pyext/pylists.c): each ID's int taken
# from a table the RankTable keeps, 2.1-2.4 ns per ID holding the GIL where
# the marshal stream costs ~6 in all, ~5 of them holding it (gpt2, 1.2 MB of
# Shakespeare in 120 lists: 0.8 against 2.3 ms).  A call costs ~0.6 us,
# as much as unpacking 8 IDs (16 IDs: 0.62 against 0.70 us; 64: 0.73
# against 1.27).  The table has one pointer per ID up to the largest (IDs
# are any 32-bit values), so it is made only when the largest ID is below
# _TABLE_MAX_SIZE or twice the token count; sparser IDs keep the stream.
_TABLE_MIN_IDS = 16
_TABLE_MAX_SIZE = 1 << 22

# A text of up to this many bytes is encoded by one call of
# pybpe._pylists.encode_ids (the C encoder, then the list or the IDs'
# bytes), where the steps below cost ~2.3 us of Python per call
# (csrc/pyext/pylists.c).  Longer texts keep those steps: their cost is
# noise there, and a text of more IDs may be mostly runs (_run_list).
_ONE_CALL_MAX_BYTES = _MARSHAL_MIN_IDS
_encode_ids = getattr(_pylists, "encode_ids", None)
_ENCODE_CACHED = int(ffi.cast("uintptr_t", ffi.addressof(lib, "bpe_ranks_encode_cached")))
# pybpe._pylists.encode_piece_ids: one piece merged whole the same way
# (RankTable.encode_piece), through bpe_ranks_encode's address.
_encode_piece_ids = getattr(_pylists, "encode_piece_ids", None)
_ENCODE_PIECES = int(ffi.cast("uintptr_t", ffi.addressof(lib, "bpe_ranks_encode")))


def _table_lists(table, out, ends, n_lists):
    """_id_lists through a pybpe._pylists table (every ID of out below its
    size)."""
    return _pylists.id_lists(table, int(ffi.cast("uintptr_t", out)), int(ffi.cast("uintptr_t", ends)), n_lists)


def _id_lists(out, ends, n_lists, min_ids=None):
    """n_lists lists of IDs from C output: list i is out[ends[i-1]:ends[i]]
    (out: uint32_t[], ends: size_t[]); one long list of runs by repetition
    (_run_list), else through the marshal stream from min_ids IDs on
    (default _MARSHAL_MIN_IDS)."""
    if min_ids is None:
        min_ids = _MARSHAL_MIN_IDS
    if n_lists == 1 and ends[0] >= _MARSHAL_MIN_IDS:
        runs = _run_list(out, ends[0])
        if runs is not None:
            return [runs]
    if _USE_MARSHAL and n_lists and ends[n_lists - 1] >= min_ids:
        lists = _marshal_lists(out, ends, n_lists)
        if lists is not None:
            return lists
    return _unpack_lists(out, ends, n_lists)


# NumPy's names for the ID arrays pybpe._pylists.join_at reads in place:
# (width, signed), native byte order only.
_ORDER = "<" if sys.byteorder == "little" else ">"
_ARRAY_IDS = {_ORDER + "u4": (4, 0), _ORDER + "i4": (4, 1), _ORDER + "u8": (8, 0), _ORDER + "i8": (8, 1)}


def _join_array(table, tokens):
    # RankTable.bytes_decoder's join_array: a plain ndarray (not a subclass:
    # a masked array's mask would be ignored), one-dimensional, contiguous
    # (no strides), of a width join_at reads.
    if type(tokens).__name__ != "ndarray" or type(tokens).__module__ != "numpy":
        return None
    spec = tokens.__array_interface__
    kind = _ARRAY_IDS.get(spec["typestr"])
    data = spec.get("data")
    if kind is None or len(spec["shape"]) != 1 or spec.get("strides") is not None or type(data) is not tuple:
        return None
    return _pylists.join_at(table, data[0], spec["shape"][0], *kind)


class PieceCache:
    """A piece cache (RankTable.new_cache): `ptr`, the C object (freed with
    this handle), and `address`, that pointer as an int -- what
    pybpe._pylists.encode_ids takes, made once here: int(ffi.cast(...)) on
    every short call was ~0.15 us of a ~1.4 us encode."""

    __slots__ = ("ptr", "address")

    def __init__(self, ptr):
        self.ptr = ptr
        self.address = int(ffi.cast("uintptr_t", ptr))


class RankTable:
    """Encodes pre-tokenized pieces to IDs; see pybpe.core.spec.ranks.RankTable.

        >>> t = RankTable([b"a", b"b", b"ab"], [0, 1, 2])
        >>> t.encode_pieces(["ab", "ba", "aab"])
        [2, 1, 0, 0, 2]
    """

    # encode_utf8 (and encode_array) encode a text of up to this many bytes
    # through a piece cache in one call of pybpe._pylists.encode_ids.
    ONE_CALL_MAX_BYTES = _ONE_CALL_MAX_BYTES

    def __init__(self, tokens, ids, merges=None, whole_piece=True):
        tokens = list(tokens)
        ids = _u32(ids)
        if len(ids) != len(tokens):
            raise ValueError("tokens and ids differ in length")
        blob = b"".join(tokens)
        offsets = list(accumulate(map(len, tokens), initial=0))  # a loop of appends was ~20 ms for o200k
        flags = lib.BPE_RANKS_WHOLE_PIECE if whole_piece else 0
        lefts = rights = results = ffi.NULL
        n_merges = 0
        if merges is not None:
            # The C table speaks token indices (positions in `tokens`), not IDs.
            index = {i: k for k, i in enumerate(ids)}
            try:
                lefts = _u32(index[m[0]] for m in merges)
                rights = _u32(index[m[1]] for m in merges)
                results = _u32(index[m[2]] for m in merges)
            except KeyError as exc:
                raise ValueError("merge names unknown token ID %r" % (exc.args[0],)) from None
            n_merges = len(lefts)
            flags |= lib.BPE_RANKS_MERGE_LIST
            lefts, rights, results = (ffi.from_buffer("uint32_t[]", a) for a in (lefts, rights, results))
        status = ffi.new("int *")
        table = lib.bpe_ranks_new(ffi.from_buffer(blob), ffi.new("size_t[]", offsets),
                                  ffi.from_buffer("uint32_t[]", ids), len(tokens),
                                  lefts, rights, results, n_merges, flags, status)
        _check(status[0], "building the rank table")
        self._table = ffi.gc(table, lib.bpe_ranks_free)
        # The int objects encode results are made of (see _lists): one
        # table per RankTable, shared by its threads (only ever used
        # holding the GIL).
        size = max(ids, default=0) + 1
        self._ints = (_pylists.new_table(size)
                      if _pylists is not None and size <= max(_TABLE_MAX_SIZE, 2 * len(ids)) else None)
        self._address = int(ffi.cast("uintptr_t", self._table))  # for encode_utf8's one call

    def _check_encode(self, status):
        # _check for an encode, whose BPE_EINVAL means a text byte without a
        # token (or, from this module's private calls, a cache made for
        # another table): the error the Python backend raises too, naming
        # the bytes with no one-byte token (asked of C a byte at a time,
        # only ever after this error).  A table with every byte has no such
        # text, so its EINVAL is the plain one.
        lacking = []
        if status == lib.BPE_EINVAL:
            out, n_out, one = ffi.new("uint32_t[1]"), ffi.new("size_t *"), ffi.new("uint32_t[1]", [1])
            lacking = [b for b in range(256)
                       if lib.bpe_ranks_encode(self._table, bytes([b]), 1, one, 1, 0, out, n_out) < 0]
        if lacking:
            raise byte_without_token(lacking)
        return _check(status, "encoding")

    def _lists(self, out, ends, n_lists, min_ids=None):
        # n_lists ID lists from C output (as _id_lists): one long list of
        # runs by repetition, else through the int table when there is one.
        n_ids = ends[n_lists - 1] if n_lists else 0
        if self._ints is None or n_ids < _TABLE_MIN_IDS:
            return _id_lists(out, ends, n_lists, min_ids)
        if n_lists == 1 and n_ids >= _MARSHAL_MIN_IDS:
            runs = _run_list(out, n_ids)
            if runs is not None:
                return [runs]
        return _table_lists(self._ints, out, ends, n_lists)

    def bytes_decoder(self, by_id):
        """(join, each, join_array) for decoding IDs through pybpe._pylists'
        bytes table, made from `by_id` (the bytes of the token with each ID,
        None in the gaps), or None where that module is not built.
        join(ids) gives the tokens' bytes end to end, each(ids) a list of each
        token's bytes (by_id's own objects), join_array(array) join for a
        NumPy array of IDs read in place.  Each gives None for what it does
        not take -- anything but a list or tuple of plain ints that all name
        tokens (csrc/pyext/pylists.c); for join_array anything but a
        one-dimensional contiguous ndarray of 4- or 8-byte integers in native
        order, all naming tokens -- for the caller to take its own way.
        Tokens of more than 4 GB in all get None here."""
        if _pylists is None or not hasattr(_pylists, "join_at"):
            return None
        try:
            table = _pylists.new_bytes_table(by_id)
        except ValueError:
            return None
        return (functools.partial(_pylists.join_bytes, table), functools.partial(_pylists.token_bytes, table),
                functools.partial(_join_array, table))

    def new_cache(self, max_bytes):
        """A piece cache (a PieceCache) for this table's encode calls (the `cache` argument
        of encode_utf8, encode_text_into, encode_texts_split and
        encode_to_buffer): piece bytes -> IDs, kept from call to call, at
        most max_bytes (>= PIECE_CACHE_MIN_BYTES) in all.  The calls write
        it, so it must have one user at a time (pybpe.Encoding keeps one
        per thread); it answers for this table only."""
        status = ffi.new("int *")
        cache = lib.bpe_piece_cache_new(max_bytes, status)
        _check(status[0], "making a piece cache of %d bytes (the smallest is %d)"
               % (max_bytes, PIECE_CACHE_MIN_BYTES))
        return PieceCache(ffi.gc(cache, lib.bpe_piece_cache_free, size=lib.bpe_piece_cache_bytes(cache)))

    def cache_info(self, cache):
        """{"bytes": memory held, "token_lookups": pieces the cache did not
        know that were whole tokens, "merges": pieces it did not know that
        were merged, "unit_merges": units of such long pieces merged (the
        C cuts long pieces where merging cannot cross and asks the cache
        about each unit)} of a cache from new_cache, counted since it was
        made."""
        ptr = cache.ptr
        return {"bytes": lib.bpe_piece_cache_bytes(ptr),
                "token_lookups": lib.bpe_piece_cache_stat(ptr, lib.BPE_PIECE_CACHE_TOKEN_LOOKUPS),
                "merges": lib.bpe_piece_cache_stat(ptr, lib.BPE_PIECE_CACHE_MERGES),
                "unit_merges": lib.bpe_piece_cache_stat(ptr, lib.BPE_PIECE_CACHE_UNIT_MERGES)}

    @property
    def pair_count(self):
        """Entries in the C pair table (one per mergeable adjacent pair)."""
        return lib.bpe_ranks_pair_count(self._table)

    def encode_piece(self, piece):
        """IDs of one piece (bytes).

            >>> RankTable([b"a", b"b", b"ab"], [0, 1, 2]).encode_piece(b"abab")
            [2, 2]
        """
        piece = bytes(piece)
        if _encode_piece_ids is not None and self._ints is not None:
            # One call of pybpe._pylists (the C merge, then the list from the
            # int table): ~0.6 us, where the steps of _encode took ~3.
            ids = _encode_piece_ids(_ENCODE_PIECES, self._address, self._ints, piece)
            if type(ids) is list:
                return ids
            self._check_encode(ids)  # the encoder's status: raises
        return self._encode(piece, _u32([len(piece)]), False)

    def encode_pieces(self, pieces):
        """IDs of many pieces (str), concatenated, in one C call."""
        text = "".join(pieces)
        data = text.encode("utf-8")
        lengths = _u32(map(len, pieces))
        # ASCII: characters are bytes.  Otherwise C walks the UTF-8 to turn
        # character counts into byte counts (cheaper than encoding pieces one
        # by one in Python).
        return self._encode(data, lengths, len(data) != len(text))

    def encode_text(self, text, preset):
        """IDs of a whole text (str without surrogates): cut by the C scanner
        `preset` (PRESET_GPT2 / PRESET_CL100K / PRESET_O200K), merged, in one
        C call."""
        return self.encode_utf8(text.encode("utf-8"), preset)

    def encode_utf8(self, data, preset, cache=None):
        """encode_text of a text given as its UTF-8 bytes (what
        Encoding.encode_ordinary passes: pybpe._unicode.utf8 encodes once),
        through `cache` (from new_cache) when one is given."""
        if not data:
            return []
        # _one_call and _encode_short written out: this is every short
        # encode's path, and each Python call on it costs ~0.05-0.1 us.
        if (cache is not None and len(data) <= _ONE_CALL_MAX_BYTES and self._ints is not None
                and _encode_ids is not None):
            ids = _encode_ids(_ENCODE_CACHED, self._address, cache.address, preset, self._ints, data)
            if ids.__class__ is not int:
                return ids
            self._raise_status(ids)
        out = _new_uninit("uint32_t[]", len(data))
        ends = self._encode_one(data, preset, cache, out)
        return self._lists(out, ends + 1, 1)[0]

    def _encode_one(self, data, preset, cache, out):
        # One text into `out`; returns size_t[2] {len(data), number of IDs}
        # (ends + 1 is the one-list `ends` _id_lists takes).
        ends = ffi.new("size_t[2]", [len(data), 0])
        if cache is None:
            status = lib.bpe_ranks_encode_batch(self._table, preset, ffi.from_buffer(data), len(data),
                                                ends, 1, out, ends + 1)
        else:
            status = lib.bpe_ranks_encode_cached(self._table, cache.ptr, preset, ffi.from_buffer(data), len(data),
                                                 ends, 1, out, ends + 1)
        self._check_encode(status)
        return ends

    @staticmethod
    def _one_call(data, cache):
        # Whether encode_utf8 / encode_array take pybpe._pylists.encode_ids.
        return cache is not None and _encode_ids is not None and len(data) <= _ONE_CALL_MAX_BYTES

    def _encode_short(self, data, preset, cache, ints):
        # One encode_ids call on a short text: its list of `ints`' int
        # objects, or with ints None its IDs' bytes.  The encoder's status,
        # returned in their place when it failed, is raised here.
        ids = _encode_ids(_ENCODE_CACHED, self._address, cache.address, preset, ints, data)
        if ids.__class__ is int:
            self._raise_status(ids)
        return ids

    def _raise_status(self, status):
        # The error encode_ids returned in place of the IDs, raised.
        self._check_encode(status)
        raise SystemError("encode_ids returned status %d" % status)  # _check raises for every failure

    def encode_array(self, data, preset, numpy, cache=None):
        """The IDs of UTF-8 `data` (one text) as a NumPy uint32 array of its
        own memory, written by C (no Python int is made): through encode_ids
        for a short text, else encode_text_into an array of len(data) items
        shrunk to fit.  `numpy`: the module (the caller imports it).
        `cache`: as for encode_utf8."""
        if self._one_call(data, cache):
            raw = self._encode_short(data, preset, cache, None)
            # writable, owning its memory; the dtype given by position: as a
            # keyword it cost ~0.1 us more (NumPy's argument parsing)
            return numpy.frombuffer(raw, numpy.uint32).copy()
        ids = numpy.empty(len(data), dtype=numpy.uint32)  # a text has at most one ID per byte
        n = self.encode_text_into(data, preset, ids, cache)
        # realloc to the IDs written; nothing else refers to `ids` (the C
        # call's view of it is released).
        ids.resize(n, refcheck=False)
        return ids

    def split_text(self, text, preset):
        """The pieces encode_text cuts `text` into (a list of str): the C
        scanner's."""
        return split(text, preset)

    def encode_text_into(self, data, preset, out, cache=None):
        """Encodes UTF-8 `data` (one text) into `out`, a writable buffer of
        at least len(data) uint32 items (a text never has more IDs than
        bytes), and returns the number of IDs written.  Encoding.encode_to_numpy
        passes a NumPy array's own memory, so no Python int is ever made.
        `cache`: as for encode_utf8."""
        if not data:
            return 0
        target = ffi.from_buffer("uint32_t[]", out, require_writable=True)
        try:
            if len(target) < len(data):
                raise ValueError("the output buffer holds %d IDs; a text of %d bytes may need %d"
                                 % (len(target), len(data), len(data)))
            return self._encode_one(data, preset, cache, target)[1]
        finally:
            ffi.release(target)  # the caller may resize `out` once this view is gone

    def encode_texts(self, texts, preset):
        """IDs of each text of a list (str without surrogates), in one C call
        without the GIL: the texts' UTF-8 laid end to end, one flat ID array
        back, cut into one list per text.  Each text is encoded exactly as
        encode_text would encode it alone.

            >>> from pybpe.registry import get_encoding
            >>> get_encoding("gpt2", backend="c")._table.encode_texts(["hello", "world"], PRESET_GPT2)
            [[31373], [6894]]
        """
        return self.encode_texts_split([t.encode("utf-8") for t in texts], preset)

    def encode_texts_split(self, encoded, preset, cache=None):
        """One ID list per UTF-8 text (bytes), all in one C call without the
        GIL; the lists are made by _id_lists.  `cache`: as for encode_utf8."""
        if not encoded:
            return []
        return self.encode_joined(b"".join(encoded), _starts(encoded), len(encoded), preset, cache)

    def encode_joined(self, data, starts, n, preset, cache=None):
        """encode_texts_split of n texts given joined: their UTF-8 end to end
        in `data`, and `starts`, a buffer of n + 1 native size_t (0, then
        where each text ends), as pybpe._unicode.joined makes them; the
        texts are all of `data` (ValueError otherwise)."""
        if not n:
            return []
        out, out_ends = self._encode_joined_raw(data, starts, n, preset, cache)
        return self._lists(out, out_ends, n, _MARSHAL_MIN_IDS_BATCH)

    def _encode_joined_raw(self, data, starts, n, preset, cache):
        # encode_joined's C call (n > 0): the IDs end to end in a uint32_t
        # array, and where each text's end.
        if memoryview(starts).nbytes < (n + 1) * ffi.sizeof("size_t"):
            raise ValueError("encode_joined: starts holds fewer than n + 1 ends")
        text_ends = ffi.from_buffer("size_t[]", starts) + 1
        out = _new_uninit("uint32_t[]", max(1, len(data)))
        out_ends = _new_uninit("size_t[]", n)
        if cache is None:
            status = lib.bpe_ranks_encode_batch(self._table, preset, ffi.from_buffer(data), len(data),
                                                text_ends, n, out, out_ends)
        else:
            status = lib.bpe_ranks_encode_cached(self._table, cache.ptr, preset, ffi.from_buffer(data), len(data),
                                                 text_ends, n, out, out_ends)
        self._check_encode(status)
        return out, out_ends

    def encode_joined_to_buffer(self, data, starts, n, preset, itemsize=4, cache=None):
        """encode_joined's IDs end to end as an array of 4- or 2-byte unsigned
        ints (OverflowError if itemsize is 2 and an ID does not fit), and a
        list of where each text's IDs end in it: encode_file's documents,
        many per C call, without a Python int per ID (the C call writes the
        texts' IDs end to end already)."""
        code = _ARRAY_CODES[itemsize]
        if not n:
            return array(code), []
        out, out_ends = self._encode_joined_raw(data, starts, n, preset, cache)
        return _to_array(out, out_ends[n - 1], itemsize), ffi.unpack(out_ends, n)

    def _shared_batch(self, encoded, preset, n_workers, static=False):
        """A SharedBatch of UTF-8 texts (bytes) for n_workers threads, cut by
        the C scanner `preset`; `static`: the fixed shares (worker w takes
        runs w, w + n_workers, ...) even where the C has atomics."""
        return SharedBatch(self, b"".join(encoded), _starts(encoded), len(encoded), preset, n_workers, static)

    def _shared_batch_joined(self, data, starts, n, preset, n_workers, static=False):
        """_shared_batch of n texts given joined (see encode_joined)."""
        return SharedBatch(self, data, starts, n, preset, n_workers, static)

    def encode_to_buffer(self, data, preset, itemsize=4, cache=None):
        """IDs of UTF-8 `data` (one text) as an array of 4- or 2-byte
        unsigned ints, without making a Python int per ID (for encode_file).
        OverflowError if itemsize is 2 and an ID does not fit.  `cache`: as
        for encode_utf8."""
        code = _ARRAY_CODES[itemsize]
        if not data:
            return array(code)
        buf = _new_uninit("uint32_t[]", len(data))
        return _to_array(buf, self._encode_one(data, preset, cache, buf)[1], itemsize)

    def _encode(self, data, lengths, in_chars):
        if not data:
            return []
        out = _new_uninit("uint32_t[]", len(data))
        n_out = ffi.new("size_t *")
        status = lib.bpe_ranks_encode(self._table, ffi.from_buffer(data), len(data),
                                      ffi.from_buffer("uint32_t[]", lengths), len(lengths),
                                      1 if in_chars else 0, out, n_out)
        self._check_encode(status)
        return ffi.unpack(out, n_out[0])


def _to_array(buf, n, itemsize):
    """The first n IDs of C array `buf` (uint32_t) as an array of 4- or
    2-byte unsigned ints (OverflowError when one does not fit 2 bytes)."""
    if itemsize == 2:
        narrow = _new_uninit("uint16_t[]", max(1, n))
        _check(lib.bpe_ids_to_u16(buf, n, narrow), "narrowing IDs to 16 bits")
        buf = narrow
    out = array(_ARRAY_CODES[itemsize])
    out.frombytes(ffi.buffer(buf, itemsize * n))
    return out


def _starts(encoded):
    """The starts buffer of encode_joined for a list of bytes: 0, then where
    each ends once they are joined."""
    return array(_SIZE_T_CODE, [0, *accumulate(map(len, encoded))])


class SharedBatch:
    """One batch of UTF-8 texts encoded by several threads at once, each
    making one C call (bpe_ranks_encode_shared, csrc/ranks.c) that takes
    runs of texts from a cursor the calls share, so a faster thread takes
    more.  Each text's IDs land in its own region of one output array, so
    the lists can be built (`lists`) for the texts done so far (`ready`)
    while the other threads still encode.  Made by RankTable._shared_batch.

        >>> from pybpe.registry import get_encoding
        >>> table = get_encoding("gpt2", backend="c")._table
        >>> batch = table._shared_batch([b"hello", b"", b"world"], PRESET_GPT2, 2)
        >>> batch.work(0, table.new_cache(PIECE_CACHE_MIN_BYTES)), batch.work(1, table.new_cache(PIECE_CACHE_MIN_BYTES))
        (False, False)
        >>> batch.lists(0, batch.ready(0))
        [[31373], [], [6894]]
    """

    def __init__(self, table, data, starts, n, preset, n_workers, static=False):
        # data, starts, n: the texts joined (RankTable.encode_joined).
        self._table, self._preset = table, preset
        self._data, self._starts_buffer = data, starts  # kept alive for the views below
        self.n, self.n_bytes = n, len(data)
        self._text = ffi.from_buffer(data)
        # starts[i]: where text i starts, in the text and in out alike.
        self._starts = ffi.from_buffer("size_t[]", starts)
        self._text_ends = self._starts + 1
        self._out = _new_uninit("uint32_t[]", max(1, len(data)))
        self._ends = _new_uninit("size_t[]", max(1, n))
        self._share = ffi.new("bpe_batch_share *")
        self._positions = ffi.new("size_t[]", n_workers)
        _check(lib.bpe_batch_share_init(self._share, len(data), n, n_workers,
                                        lib.BPE_BATCH_STATIC if static else 0, self._ends),
               "setting up a shared batch")
        self.dynamic = bool(self._share.dynamic)

    def work(self, worker, cache, budget=0):
        """Encodes runs of texts as worker `worker` (< n_workers) through
        `cache` (one per worker) without the GIL, until none is left
        (returns False) or, with a budget, until this call has encoded that
        many bytes (returns True: call again)."""
        status = lib.bpe_ranks_encode_shared(self._table._table, cache.ptr, self._preset, self._text,
                                             len(self._data), self._text_ends, self.n, self._share,
                                             worker, self._positions + worker, budget, self._out, self._ends)
        return self._table._check_encode(status) == lib.BPE_BATCH_MORE

    def ready(self, first):
        """The first text at or after `first` that is not done yet (n if
        all are), as far as this thread may tell; after every work() call
        has returned, n."""
        return lib.bpe_batch_ready(self._share, self._ends, first)

    def arrays(self, numpy):
        """Once every work() call has returned: all texts' IDs as one NumPy
        uint32 array, end to end, and an int64 array of n + 1 offsets (text
        i's IDs are ids[offsets[i]:offsets[i + 1]]), both made by C
        (bpe_batch_compact closes the gaps between the texts' regions of the
        output) without a Python int per ID.  `numpy`: the module."""
        offsets = numpy.empty(self.n + 1, dtype=numpy.int64)
        _check(lib.bpe_batch_compact(self._out, self._starts, self._ends, self.n,
                                     ffi.from_buffer("int64_t[]", offsets)),
               "closing up a shared batch")
        total = int(offsets[-1])
        ids = numpy.frombuffer(ffi.buffer(self._out, 4 * total), numpy.uint32).copy()
        return ids, offsets

    def lists(self, first, stop):
        """The ID lists of texts first .. stop - 1, all done (see ready)."""
        ints = self._table._ints
        if ints is not None:
            address = lambda a: int(ffi.cast("uintptr_t", a))  # noqa: E731
            return _pylists.id_spans(ints, address(self._out), address(self._starts), address(self._ends),
                                     first, stop)
        out, starts, ends, unpack = self._out, self._starts, self._ends, ffi.unpack
        return [unpack(out + starts[i], ends[i] - starts[i]) for i in range(first, stop)]
