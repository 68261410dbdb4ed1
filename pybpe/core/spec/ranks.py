"""Rank-table byte-pair merging in pure Python: the specification of csrc/ranks.c.

`RankTable` encodes the pieces a pre-tokenizer cut from a text, the way
tiktoken does (repeatedly merge the adjacent pair whose concatenated bytes has
the lowest rank, leftmost on ties) or, given an explicit merge list, the way
GPT-2's vocab.bpe and Hugging Face's BPE model do (the adjacent pair with the
lowest *merge* rank, leftmost on ties).  pybpe.core.native.ranks has the
same names, arguments and results.  Pre-tokenization, special tokens and decoding live in
pybpe.encoding; this module knows only bytes and IDs.
"""
import functools
from array import array

from ... import _unicode, errors, patterns
from .common import COMPILED
from .merge import (HEAP_THRESHOLD, byte_pair_merge, few_runs, merge_by_rank, merge_heap, merge_linear,
                    merge_runs, merge_windows)

__all__ = ["HEAP_THRESHOLD", "PRESET_GPT2", "PRESET_CL100K", "PRESET_O200K", "COMPILED", "split", "RankTable",
           "PIECE_CACHE_DEFAULT_BYTES", "PIECE_CACHE_MIN_BYTES"]


# Pre-tokenizers the C core has built in (csrc/text.h); same values there.
PRESET_GPT2 = 1
PRESET_CL100K = 2
PRESET_O200K = 3

# The published pattern each preset stands for (the C scanner finds the same
# pieces as these; gpt2's possessive spelling cuts the same way).
_PRESET_PATTERNS = {PRESET_GPT2: patterns.GPT2, PRESET_CL100K: patterns.CL100K, PRESET_O200K: patterns.O200K}

# The C backend's piece cache that lives across calls (csrc/text.h): its
# default and smallest sizes, the same values here so pybpe.Encoding checks a
# size the same way on both backends.  This table needs no such object: it
# keeps one bounded dict (below) for every call, which the GIL protects.
PIECE_CACHE_DEFAULT_BYTES = 1048576
PIECE_CACHE_MIN_BYTES = 4096

# Distinct pieces remembered per table.  Text is Zipfian: on Shakespeare the
# 10,000 most frequent pieces cover over 90% of them.  When full, the cache is
# simply cleared (cheaper than LRU bookkeeping and just as good on real text).
_CACHE_SIZE = 65536

# array typecodes by item size (array's codes name C types, whose sizes vary).
_ARRAY_CODES = {size: next(c for c in "HILQ" if array(c).itemsize == size) for size in (2, 4)}


@functools.lru_cache(maxsize=None)
def _splitter(preset):
    try:
        pattern = _PRESET_PATTERNS[preset]
    except KeyError:
        raise ValueError("unknown pre-tokenizer preset %r" % (preset,)) from None
    return _unicode.preset_splitter(pattern)


def split(text, preset):
    """The pieces the pre-tokenizer `preset` cuts `text` into: tiktoken's
    character classes, ASCII parts cut by the pattern's `re` twin
    (pybpe/_asciisplit.py).

        >>> split("Hello world's", PRESET_GPT2)
        ['Hello', ' world', "'s"]
    """
    return _splitter(preset)(text)


class RankTable:
    """Encodes pre-tokenized pieces to IDs.

    tokens / ids: token `tokens[k]` (bytes) has ID `ids[k]`.
    merges: None for tiktoken's rule (the ID of a token is its rank), or a
        list of (left_id, right_id, result_id) by merge rank for merge-list
        semantics.
    whole_piece: look the whole piece up before merging (tiktoken does; GPT-2
        and Hugging Face's BPE, unless `ignore_merges`, do not).

        >>> t = RankTable([b"a", b"b", b"ab"], [0, 1, 2])
        >>> t.encode_pieces(["ab", "ba", "aab"])
        [2, 1, 0, 0, 2]
        >>> m = RankTable([b"a", b"b", b"ab"], [0, 1, 2], merges=[(0, 1, 2)], whole_piece=False)
        >>> m.encode_pieces(["aab"])
        [0, 2]
    """

    def __init__(self, tokens, ids, merges=None, whole_piece=True):
        self._encoder = dict(zip(tokens, ids))
        self._whole_piece = whole_piece
        self._cache = {}
        self._pairs = None
        if merges is None:
            encoder = self._encoder

            def rule(a, b):
                ab = a + b
                r = encoder.get(ab)
                return None if r is None else (r, ab)

            self._rule = rule
            self._byte_parts = [bytes([b]) for b in range(256)]
            self._finish = self._ids_of_bytes
            self._merge_short = lambda parts: merge_by_rank(parts, encoder.get)
            self._width = len
            self._concatenate = True
        else:
            pairs = {}
            for rank, (left, right, result) in enumerate(merges):
                pairs.setdefault((left, right), (rank, result))
            self._pairs = pairs
            self._rule = lambda a, b: pairs.get((a, b))
            self._byte_parts = [self._encoder.get(bytes([b])) for b in range(256)]
            self._finish = None
            self._merge_short = lambda parts: merge_linear(parts, self._rule)
            # A part's width is its token's length when every merge result is
            # its halves' bytes joined (csrc/ranks.c: results_concatenate).
            decoder = dict(zip(ids, tokens))
            self._width = lambda part: len(decoder[part])

            def joins(left, right, result):
                found = [decoder.get(i) for i in (left, right, result)]
                return None not in found and found[0] + found[1] == found[2]
            self._concatenate = all(joins(*m) for m in merges)

    def _ids_of_bytes(self, parts):
        try:
            return [self._encoder[p] for p in parts]
        except KeyError:
            raise self._byte_without_token() from None

    def _byte_without_token(self):
        return errors.byte_without_token(b for b in range(256) if bytes([b]) not in self._encoder)

    def encode_piece(self, piece):
        """IDs of one piece (bytes).

            >>> RankTable([b"a", b"b", b"ab"], [0, 1, 2]).encode_piece(b"abab")
            [2, 2]
        """
        if self._whole_piece:
            found = self._encoder.get(piece)
            if found is not None:
                return [found]
        parts = [self._byte_parts[b] for b in piece]
        if self._finish is None:  # merge list: parts are IDs
            if None in parts:
                raise self._byte_without_token()
            if len(parts) >= HEAP_THRESHOLD:
                return self._merge_long(piece, parts)
            return byte_pair_merge(parts, self._rule)
        if len(parts) < HEAP_THRESHOLD:
            return self._finish(merge_by_rank(parts, self._encoder.get))
        return self._finish(self._merge_long(piece, parts))

    def _merge_long(self, piece, parts):
        # A piece of at least HEAP_THRESHOLD bytes, the way csrc/ranks_merge.c's
        # rk_merge_piece does it: few runs ("a" * 1,000,000) by merge_runs;
        # else in windows (merge_windows) when every merge result is the
        # concatenation of its halves; the heap when that gives up.
        if few_runs(parts):
            return merge_runs(parts, self._rule)
        if self._concatenate:
            merged = merge_windows(piece, parts, self._rule, self._merge_short, self._width)
            if merged is not None:
                return merged
        return merge_heap(parts, self._rule)

    @property
    def pair_count(self):
        """Entries of the pair table csrc/ranks_build.c builds: with a merge list,
        its distinct pairs; with tiktoken's rule, one per token of two bytes
        or more that merging its own bytes makes (that merge's last pair,
        the only one of the token's splits merging ever uses: ranks_build.c,
        REACHED PAIRS).  Computed on demand (O(L^2) per token of L bytes):
        the Python twin merges with the rank dict, not a pair table."""
        if self._pairs is not None:
            return len(self._pairs)
        encoder = self._encoder
        return sum(1 for t in encoder
                   if len(t) >= 2 and merge_by_rank([t[i:i + 1] for i in range(len(t))], encoder.get) == [t])

    def bytes_decoder(self, by_id):
        """None: Encoding decodes in Python on this backend (the C twin
        returns C functions that join the tokens' bytes)."""
        return None

    def new_cache(self, max_bytes):
        """None: this table's own dict serves every call (the C twin returns
        a cache object of at most max_bytes).  ValueError below
        PIECE_CACHE_MIN_BYTES, as in C."""
        if max_bytes < PIECE_CACHE_MIN_BYTES:
            raise ValueError("making a piece cache of %d bytes (the smallest is %d): invalid input"
                             % (max_bytes, PIECE_CACHE_MIN_BYTES))
        return None

    def cache_info(self, cache):
        """The C twin's counters of a cache; all 0 here (no cache object)."""
        return {"bytes": 0, "token_lookups": 0, "merges": 0, "unit_merges": 0}

    def encode_text(self, text, preset):
        """IDs of a whole text (str without surrogates), cut by the
        pre-tokenizer `preset` (see split), merged."""
        return self.encode_pieces(split(text, preset))

    def encode_utf8(self, data, preset, cache=None):
        """encode_text of a text given as its UTF-8 bytes (`cache`: for the
        C twin; ignored)."""
        return self.encode_text(data.decode("utf-8"), preset)

    def split_text(self, text, preset):
        """The pieces encode_text cuts `text` into (a list of str)."""
        return split(text, preset)

    def encode_texts(self, texts, preset):
        """[encode_text(t, preset) for t in texts] (the C twin does it in
        one C call)."""
        return [self.encode_text(t, preset) for t in texts]

    def encode_texts_split(self, encoded, preset, cache=None):
        """One ID list per UTF-8 text (bytes): encode_texts on the decoded
        texts (the C twin: one C call without the GIL)."""
        return [self.encode_text(data.decode("utf-8"), preset) for data in encoded]

    def encode_joined(self, data, starts, n, preset, cache=None):
        """encode_texts_split of n texts given joined: their UTF-8 end to end
        in `data`, and `starts`, a buffer of n + 1 native size_t (0, then
        where each text ends), as pybpe._unicode.joined makes them; the
        texts are all of `data` (ValueError otherwise, as the C twin)."""
        if not n:
            return []
        at = memoryview(starts).cast("B").cast("N")
        if len(at) <= n or at[n] != len(data) or any(at[i] > at[i + 1] for i in range(n)):
            raise ValueError("encoding: invalid input")
        return self.encode_texts_split([data[at[i]:at[i + 1]] for i in range(n)], preset, cache)

    def encode_text_into(self, data, preset, out, cache=None):
        """Encodes UTF-8 `data` (one text) into `out`, a writable buffer of
        at least len(data) uint32 items (a text never has more IDs than
        bytes), and returns the number of IDs written."""
        if not data:
            return 0
        target = memoryview(out).cast("B").cast(_ARRAY_CODES[4])
        try:
            if len(target) < len(data):
                raise ValueError("the output buffer holds %d IDs; a text of %d bytes may need %d"
                                 % (len(target), len(data), len(data)))
            ids = self.encode_text(bytes(data).decode("utf-8"), preset)
            target[:len(ids)] = array(_ARRAY_CODES[4], ids)
            return len(ids)
        finally:
            target.release()  # the caller may resize `out` once this view is gone

    def encode_array(self, data, preset, numpy, cache=None):
        """The IDs of UTF-8 `data` (one text) as a NumPy uint32 array.
        `numpy`: the module (the caller imports it)."""
        ids = self.encode_text(bytes(data).decode("utf-8"), preset) if data else []
        return numpy.array(ids, dtype=numpy.uint32)

    def encode_to_buffer(self, data, preset, itemsize=4, cache=None):
        """IDs of UTF-8 `data` (one text) as an array of 4- or 2-byte
        unsigned ints (for encode_file).  OverflowError if itemsize is 2 and
        an ID does not fit."""
        ids = self.encode_text(bytes(data).decode("utf-8"), preset) if data else []
        if itemsize == 2 and any(i > 0xFFFF for i in ids):
            raise OverflowError("narrowing IDs to 16 bits: " + errors.TOO_BIG)
        return array(_ARRAY_CODES[itemsize], ids)

    def encode_joined_to_buffer(self, data, starts, n, preset, itemsize=4, cache=None):
        """encode_joined's IDs end to end as an array of 4- or 2-byte unsigned
        ints (OverflowError if itemsize is 2 and an ID does not fit), and a
        list of where each text's IDs end in it (for encode_file)."""
        rows = self.encode_joined(data, starts, n, preset, cache)
        ids = [i for row in rows for i in row]
        if itemsize == 2 and any(i > 0xFFFF for i in ids):
            raise OverflowError("narrowing IDs to 16 bits: " + errors.TOO_BIG)
        ends, at = [], 0
        for row in rows:
            at += len(row)
            ends.append(at)
        return array(_ARRAY_CODES[itemsize], ids), ends

    def encode_pieces(self, pieces):
        """IDs of many pieces (str), concatenated; empty pieces give nothing."""
        cache = self._cache
        out = []
        for piece in pieces:
            ids = cache.get(piece)
            if ids is None:
                if not piece:
                    continue
                ids = self.encode_piece(piece.encode("utf-8"))
                if len(cache) >= _CACHE_SIZE:
                    cache.clear()
                cache[piece] = ids
            out.extend(ids)
        return out
