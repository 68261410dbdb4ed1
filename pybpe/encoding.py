"""pybpe.Encoding: a drop-in for tiktoken.Encoding, with the same IDs.

An Encoding is a byte-level BPE: a regex cuts the text into pieces, each
piece's UTF-8 bytes are merged by rank (the backend's RankTable: pybpe.core,
C or Python -- identical results), and special tokens such as <|endoftext|> are
matched only where the caller allows them.  Loading rank files and the
registry of named encodings live in pybpe.formats and pybpe.registry.  Every
public method of tiktoken.Encoding is here, and its underscored ones that
users call (_encode_bytes, _encode_single_piece, _encode_only_native_bpe).

    >>> from pybpe import get_encoding
    >>> enc = get_encoding("gpt2")
    >>> enc.encode("hello world")
    [31373, 995]
    >>> enc.decode([31373, 995])
    'hello world'
"""
import bisect
import functools
import itertools
import operator
from array import array
import regex

from . import _batch, _bounded, _unicode, _workers, core, patterns
from .core.spec.merge import byte_pair_merge
from ._encode_file import encode_file as _encode_file, typecode as _typecode
from .errors import InvalidTokenError, byte_without_token
from .flavours import ByteJoiner, StreamDecoder, byte_offsets
from .specials import check_disallowed, raise_disallowed, special_regex, special_sets

_ALL = "all"
_NONE = frozenset()
# Idle piece caches an Encoding keeps (see Encoding.piece_cache): as many as
# encode_batch's default number of threads, so the threads of one batch find
# theirs warm in the next.
_KEEP_CACHES = 8
# encode_ordinary_batch's last slice: this share of the batch's characters
# (see _slice_bounds).
_TAIL_SHARE = 0.1
# encode_ordinary_batch on threads (_encode_shared): worker 0 comes back
# from C to build the lists of the texts done so far this many times per
# batch (by its bytes).
_LEAD_SHARES = 8


def _slice_bounds(lengths, num_threads):
    """Where to cut a batch of texts (their lengths) into slices for
    num_threads threads: [0, ..., len(lengths)].

    One slice per thread, consecutive texts, each about (1 - _TAIL_SHARE) /
    num_threads of the characters, then the rest as one last slice that the
    first thread to finish takes.  Why so few: each slice is a C call and
    then its result lists, built holding the GIL (pybpe/core/native/ranks.py);
    between the two the lists push the piece cache and the rank tables out
    of the core's cache, and each slice makes its own int objects, so every
    slice costs ~0.2 ms more CPU (gpt2, 1 MB of Shakespeare in 96 documents,
    serial: 11 slices 13.5 ms against one slice 11.2 ms).  Why a tail: the
    threads then do not all build their lists at the end, where the GIL
    lets only one at a time.  On 2 threads (tools/bench_batch_threads.py,
    real-time priority on the shared machine) 2 slices gave 1.41-1.52x one
    thread, this 1.45-1.59x, the guided schedule of 11 shrinking slices this
    replaced 1.32-1.46x (with the helper threads of pybpe/_workers.py; 1.28-1.30x
    with a thread pool made per call).

        >>> _slice_bounds([10] * 20, 2)
        [0, 9, 18, 20]
    """
    total = sum(lengths)
    share = total * (1 - _TAIL_SHARE) / num_threads
    bounds, acc = [0], 0
    for i, n in enumerate(lengths):
        acc += n
        if len(bounds) <= num_threads and acc >= share * len(bounds) and i + 1 < len(lengths):
            bounds.append(i + 1)
    bounds.append(len(lengths))
    return bounds


# tiktoken's surrogate rule (pairs -> the character, lone ones -> U+FFFD),
# shared with every other byte-level path of the library.
_fix_surrogates = _unicode.fix_surrogates


def _checked(text, index):
    """`text` (item `index` of a batch) with surrogates fixed; TypeError for a
    non-str."""
    if not isinstance(text, str):
        raise TypeError("text[%d] must be a str, not %s" % (index, type(text).__name__))
    return _fix_surrogates(text)


# encode_batch checks a batch for disallowed special tokens this many
# characters of texts at a time (_check_batch).
_CHECK_GROUP_CHARS = 1 << 22


def _check_batch(texts, disallowed):
    """tiktoken's check for `disallowed` special tokens (a frozenset) over a
    batch: ValueError for the first text holding one (as it is, before its
    surrogates are fixed: tiktoken's encode_batch), TypeError for the first
    item that is not a str, whichever comes first.

    The texts are checked a group (~4 M characters) at a time, joined by NUL,
    which no special token holds, so no token spans two of them: one pass of
    check_disallowed's filters per group, where a surrogate fix and a regex
    search per text held the GIL before any thread could start.  cl100k, ~1
    MB of unseen Shakespeare a batch, the two ways in alternating processes:
    4,782 texts of 200 characters 10.3 -> 8.8 ms on one thread, 7.4 -> 6.0 on
    two; 96 of 10,000 characters 6.5 -> 6.2 and 4.2 -> 3.9.  A group with a
    token in it, or with an item that is not a str, is checked again text by
    text, which raises the error.
    """
    search = special_regex(disallowed).search

    def one_by_one(first, group):
        for i, t in enumerate(group, first):
            if not isinstance(t, str):
                _checked(t, i)  # the TypeError
            match = search(t)
            if match:
                raise_disallowed(match.group())

    if any("\0" in token for token in disallowed):
        one_by_one(0, texts)
        return
    try:
        one_group = sum(map(len, texts)) < _CHECK_GROUP_CHARS
    except TypeError:
        one_group = False  # an item without a length: the groups below find it
    bounds = [0, len(texts)] if one_group else _check_groups(texts)
    for start, stop in zip(bounds, bounds[1:]):
        group = texts[start:stop]
        try:
            check_disallowed("\0".join(group), disallowed)
        except (TypeError, ValueError):
            one_by_one(start, group)


def _check_groups(texts):
    # Where _check_batch's groups of texts start and end: each ends at the
    # first text that brings it to _CHECK_GROUP_CHARS characters.
    bounds, size = [0], 0
    for stop, t in enumerate(texts, 1):
        size += len(t) if t.__class__ is str else 0
        if size >= _CHECK_GROUP_CHARS:
            bounds.append(stop)
            size = 0
    if bounds[-1] != len(texts):
        bounds.append(len(texts))
    return bounds


def _texts(texts):
    """A batch of texts as a list; TypeError for a single str or bytes (it
    is not a list of str: its characters would be the texts)."""
    if isinstance(texts, (str, bytes)):
        raise TypeError("a batch must be a list of str, not a single %s (wrap it: [text])" % type(texts).__name__)
    return list(texts)


def _numpy(method):
    """The numpy module, imported late: pybpe does not require it, only the
    methods that return arrays do."""
    try:
        import numpy
    except ImportError:
        raise ImportError("%s needs NumPy, which pybpe itself does not require; install numpy, "
                          "or use the method that returns lists" % method) from None
    return numpy


def _flat(rows, numpy):
    """ID lists as encode_batch_to_numpy's two arrays (the way without a
    shared C batch)."""
    offsets = numpy.zeros(len(rows) + 1, dtype=numpy.int64)
    if rows:
        numpy.cumsum([len(r) for r in rows], out=offsets[1:])
    ids = numpy.fromiter(itertools.chain.from_iterable(rows), dtype=numpy.uint32, count=int(offsets[-1]))
    return ids, offsets


# Bytes that make a token "all space" when encode_with_unstable and
# _encode_bytes look back for where a last piece could have started (the
# characters tiktoken checks for).
_SPACE_BYTES = frozenset(b" \n\t")
# Characters str.isspace() counts that are not Unicode White_Space (the
# property tiktoken's char::is_whitespace tests): the information separators.
_NOT_WHITE_SPACE = frozenset("\x1c\x1d\x1e\x1f")


def _last_char(data):
    """(byte length, character) of the UTF-8 character `data` ends with, or
    (1, None) when it ends with bytes that are not a whole character.

        >>> _last_char("aé".encode())
        (2, 'é')
        >>> _last_char(b"a\\xe2\\x80")
        (1, None)
    """
    for size in range(1, min(4, len(data)) + 1):
        try:
            return size, data[-size:].decode("utf-8")
        except UnicodeDecodeError:
            continue  # the smallest suffix that decodes is the last character
    return 1, None


def _is_white_space(char):
    return char.isspace() and char not in _NOT_WHITE_SPACE


class Encoding:
    """A byte-level BPE with tiktoken's constructor and methods.

    name, pat_str, mergeable_ranks ({bytes: rank}), special_tokens
    ({str: id}) and explicit_n_vocab mean what they mean in tiktoken.

    pybpe extensions (keyword only):
      merges: a merge list [(left_id, right_id), ...] by merge rank.  Then a
        piece is encoded the way GPT-2's vocab.bpe and Hugging Face's BPE model
        do: the adjacent pair with the lowest *merge* rank merges first,
        leftmost on ties.  Without it, tiktoken's rule applies: any adjacent
        pair whose concatenated bytes is a token may merge, lowest token rank
        first.  The two agree on vocabularies produced by training in rank
        order (GPT-2's, cl100k's, pybpe's own byte-level ones); they can differ
        on hand-made ones, e.g. where a token can be built from two different
        splits or where a token's ID is smaller than its parts' IDs.
      lookup_whole_piece: look the whole piece up before merging.  Default:
        True without `merges` (tiktoken does), False with them (GPT-2 and
        Hugging Face do, unless the model says `ignore_merges`).
      backend: "auto" | "c" | "python" (default: PYBPE_BACKEND, then auto).
      pattern_source: where pat_str was read from (a file name), for a
        pattern that is not pybpe's to trust: unless it is one of the
        published patterns it is then matched under a time bound, and a
        match that runs past it raises pybpe.PatternTimeout naming the source
        (pybpe/_bounded.py, docs/limits.md).  The loaders set it.
      kept_when_skipping: special tokens that decode(skip_special_tokens=True)
        keeps (a tokenizer.json's added tokens marked "special": false, such
        as <think>, which HF keeps); the others are left out.
      piece_cache: bytes of the piece cache each thread gets (default
        1 MiB; 0 turns it off; also an attribute, which can be set).  On the
        C backend with a C scanner (the gpt2, cl100k and o200k patterns),
        what encoding learns about pieces -- piece bytes -> IDs -- is kept
        from call to call in a cache of this size (csrc/piece_cache.h), so
        many short texts encode as fast as one long one.  A thread takes a
        cache from the Encoding's idle ones for the length of a call and puts
        it back after (up to 8 are kept), so no two threads ever share one
        and no lock is taken; the threads of encode_batch each take one too,
        as do encode_to_numpy and encode_file.  IDs are the same with or
        without it.  Off, each call still caches the pieces of its own text.
        The Python backend keeps one bounded cache per table instead.

        >>> ranks = {bytes([b]): b for b in range(256)}
        >>> ranks[b"ab"] = 256
        >>> enc = Encoding("toy", pat_str=r"\\w+|\\W", mergeable_ranks=ranks,
        ...                special_tokens={"<|end|>": 257})
        >>> enc.encode("abab, ab<|end|>", allowed_special="all")
        [256, 256, 44, 32, 256, 257]
    """

    def __init__(self, name, *, pat_str, mergeable_ranks, special_tokens, explicit_n_vocab=None,
                 merges=None, lookup_whole_piece=None, backend=None, pattern_source=None, piece_cache=None,
                 kept_when_skipping=()):
        _check_ranks(mergeable_ranks)
        _check_specials(special_tokens)
        if not isinstance(pat_str, str):
            raise TypeError("pat_str must be a str, not %s" % type(pat_str).__name__)
        self.name = name
        self._pat_str = pat_str
        self._pattern_source = pattern_source
        untrusted = pattern_source is not None and not _bounded.is_trusted(pat_str)
        if untrusted:  # refused before compiling when compiling itself would run away
            try:
                _bounded.check_pattern(pat_str)
            except ValueError as exc:
                raise ValueError("pat_str from %s is refused: %s" % (pattern_source, exc)) from None
        try:
            self._pat = regex.compile(pat_str)
        except regex.error as exc:
            raise ValueError("pat_str is not a valid regular expression: %s" % exc) from None
        if untrusted:
            self._pat = _bounded.BoundedPattern(self._pat, pattern_source)
        self._mergeable_ranks = dict(mergeable_ranks)
        self._special_tokens = dict(special_tokens)
        self.max_token_value = max(max(mergeable_ranks.values(), default=0),
                                   max(special_tokens.values(), default=0))
        if explicit_n_vocab:
            total = len(mergeable_ranks) + len(special_tokens)
            if total != explicit_n_vocab or self.max_token_value != explicit_n_vocab - 1:
                raise ValueError(
                    "explicit_n_vocab=%d, but there are %d tokens with a largest ID of %d"
                    % (explicit_n_vocab, total, self.max_token_value))
        self._decoder = {i: t for t, i in self._mergeable_ranks.items()}
        for text, i in self._special_tokens.items():
            self._decoder.setdefault(i, text.encode("utf-8"))
        self._special_token_values = set(self._special_tokens.values())
        if isinstance(kept_when_skipping, str):
            raise TypeError("kept_when_skipping must be a collection of str, not a single str")
        self._kept_when_skipping = frozenset(kept_when_skipping)
        unknown = self._kept_when_skipping - set(self._special_tokens)
        if unknown:
            raise ValueError("kept_when_skipping names tokens that are no special tokens: %s"
                             % ", ".join(map(repr, sorted(unknown))))
        self._skipped_values = {i for t, i in self._special_tokens.items() if t not in self._kept_when_skipping}
        self._bytes_by_id = None  # decoding's list, made at the first decode (_lookup_list)
        self._join_ids = self._each_id = self._join_array = None  # and its C decoders (ditto)
        self._sorted_tokens = None  # token_byte_values' order, made at its first call
        # What the default of encode and its kin (none allowed, all
        # disallowed) checks a text for: every special token, first by the
        # tokens' distinct first characters (see _check_no_specials).
        self._all_specials = frozenset(self._special_tokens)
        self._special_firsts = tuple(sorted({t[:1] for t in self._all_specials}))
        self._merges = None if merges is None else [tuple(m) for m in merges]
        triples = None if merges is None else self._merge_triples(self._merges)
        if lookup_whole_piece is None:
            lookup_whole_piece = merges is None
        self._lookup_whole_piece = bool(lookup_whole_piece)
        self._backend_name = core.resolve(backend)
        module = core.get(self._backend_name)
        tokens = list(self._mergeable_ranks)
        self._table = module.RankTable(tokens, [self._mergeable_ranks[t] for t in tokens],
                                       merges=triples, whole_piece=self._lookup_whole_piece)
        # The published patterns have scanners written in C (csrc/pretok.c,
        # ~10x faster than the regex module); a pattern without capture
        # groups and with one of these exact spellings may use them.
        self._compiled = module.COMPILED
        self._preset = {patterns.GPT2: module.PRESET_GPT2, patterns.GPT2_POSSESSIVE: module.PRESET_GPT2,
                        patterns.CL100K: module.PRESET_CL100K, patterns.O200K: module.PRESET_O200K}.get(pat_str)
        self._cache_sizes = (module.PIECE_CACHE_DEFAULT_BYTES, module.PIECE_CACHE_MIN_BYTES)
        self.piece_cache = piece_cache

    @property
    def piece_cache(self):
        """Bytes of the piece cache each thread gets; 0 when it is off (see
        the class docstring).  Setting it drops the caches made so far.

            >>> from pybpe import get_encoding
            >>> enc = get_encoding("gpt2")
            >>> enc.piece_cache
            1048576
        """
        return self._piece_cache

    @piece_cache.setter
    def piece_cache(self, size):
        default, smallest = self._cache_sizes
        if size is None:
            size = default
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError("piece_cache must be an int (bytes) or None, not %s" % type(size).__name__)
        if size < 0 or 0 < size < smallest:
            raise ValueError("piece_cache=%d: give 0 (off) or at least %d bytes" % (size, smallest))
        self._piece_cache = size
        # Only the C scanners' path has a cache object to take (the Python
        # table keeps its own).  A new list: caches still out go back to the
        # old one and are dropped with it.
        self._cache_bytes = size if self._compiled and self._preset is not None else 0
        self._caches = []
        # Texts of up to this many characters take _encode_ordinary's short
        # path (0: none do).  A character is at most 4 bytes of UTF-8, so
        # they are all short enough for the table's one call.
        self._short_chars = self._table.ONE_CALL_MAX_BYTES // 4 if self._cache_bytes else 0

    def _take_cache(self, caches, size=None):
        # An idle cache from `caches` (self._caches, read once by the
        # caller), a new one, or None when caching is off.  Give it back with
        # _give_back(cache, caches).  list.pop and list.append are atomic, so
        # two threads never hold one cache.  `size`: the bytes of a new one,
        # when the caller read self._cache_bytes before (and must not find
        # it off by now: _encode_shared).
        size = self._cache_bytes if size is None else size
        if not size:
            return None
        try:
            return caches.pop()
        except IndexError:
            return self._table.new_cache(size)

    @staticmethod
    def _give_back(cache, caches):
        if cache is not None and len(caches) < _KEEP_CACHES:
            caches.append(cache)

    def _merge_triples(self, merges):
        # Validated here, once, for both backends: each merge names two known
        # tokens whose concatenation is a token, and no pair appears twice
        # (implementations disagree about which copy would win).
        seen = set()
        triples = []
        # A special token that is also a regular token (the same ID for the
        # same bytes: an HF added token that is a vocabulary entry) may merge.
        ranks, decoder = self._mergeable_ranks, self._decoder
        special_only = {i for i in self._special_token_values if ranks.get(decoder[i]) != i}
        for rank, pair in enumerate(merges):
            if len(pair) != 2 or not all(isinstance(i, int) for i in pair):
                raise TypeError("merges[%d] must be a pair of int IDs, not %r" % (rank, pair))
            left, right = pair
            if left not in self._decoder:
                raise ValueError("merges[%d]: unknown token ID %d" % (rank, left))
            if right not in self._decoder:
                raise ValueError("merges[%d]: unknown token ID %d" % (rank, right))
            if left in special_only or right in special_only:
                raise ValueError("merges[%d]: special tokens never merge" % rank)
            result = self._mergeable_ranks.get(self._decoder[left] + self._decoder[right])
            if result is None:
                raise ValueError("merges[%d]: %r + %r is not a token" % (
                    rank, self._decoder[left], self._decoder[right]))
            if pair in seen:
                raise ValueError("merges[%d]: the pair %r appears twice" % (rank, pair))
            seen.add(pair)
            triples.append((left, right, result))
        return triples

    def __repr__(self):
        return "<Encoding %r>" % self.name

    # -- pickling: rebuild the tables from the constructor's arguments --------
    # An encoding get_encoding built travels by name only (its ranks ship
    # with pybpe or come from a registered constructor), as in tiktoken;
    # others carry their constructor's arguments.
    def __reduce_ex__(self, protocol):
        # An encoding from the registry is pickled by name: the registry gives
        # it the call that rebuilds it (see registry.get_encoding), so this
        # module never imports the registry, which imports it.
        by_name = self.__dict__.get("_pickled_by_name")
        if by_name is not None:
            return by_name
        return super().__reduce_ex__(protocol)

    def __getstate__(self):
        return {"name": self.name, "pat_str": self._pat_str, "mergeable_ranks": self._mergeable_ranks,
                "special_tokens": self._special_tokens, "merges": self._merges,
                "lookup_whole_piece": self._lookup_whole_piece, "backend": self._backend_name,
                "pattern_source": self._pattern_source, "piece_cache": self._piece_cache,
                "kept_when_skipping": sorted(self._kept_when_skipping)}

    def __setstate__(self, state):
        self.__init__(state.pop("name"), **state)

    # -- encoding -------------------------------------------------------------
    @property
    def backend(self):
        """"c" or "python": which implementation merges the pieces."""
        return self._backend_name

    def _encode_plain(self, text):
        # Text with no special tokens and no surrogates: split, then merge.
        if self._preset is not None:
            return self._encode_utf8(text.encode("utf-8"))
        return self._table.encode_pieces(self._regex_pieces(text))

    def _encode_utf8(self, data):
        # A C scanner's encode of UTF-8 `data`, through a piece cache.  Every
        # short encode comes here, so the common steps of _take_cache and
        # _give_back are written out (each Python call costs ~0.05-0.1 us of
        # a ~2 us call).
        caches = self._caches
        try:
            cache = caches.pop()
        except IndexError:
            cache = self._take_cache(caches)  # a new one, or None with caching off
        try:
            return self._table.encode_utf8(data, self._preset, cache)
        finally:
            if cache is not None and len(caches) < _KEEP_CACHES:  # _give_back
                caches.append(cache)

    def _regex_pieces(self, text):
        # The pattern's matches (with capture groups findall would return groups).
        if self._pat.groups:
            return [m.group() for m in self._pat.finditer(text)]
        return self._pat.findall(text)

    def _pieces(self, text):
        # The pieces _encode_plain cuts `text` into.
        if self._preset is not None:
            return self._table.split_text(text, self._preset)
        return self._regex_pieces(text)

    def encode_ordinary(self, text):
        """Encode `text` ignoring special tokens (their text is ordinary text).

            >>> from pybpe import get_encoding
            >>> get_encoding("gpt2").encode_ordinary("<|endoftext|>")
            [27, 91, 437, 1659, 5239, 91, 29]
        """
        if not isinstance(text, str):
            raise TypeError("text must be a str, not %s" % type(text).__name__)
        return self._encode_ordinary(text)

    def _encode_ordinary(self, text):
        # encode_ordinary of a str.  A C scanner takes UTF-8: encoded once
        # here, surrogates fixed on the way (_unicode.utf8), where
        # fix_surrogates then encode_text encoded the text twice.
        #   A short text with a piece cache on (_short_chars > 0) -- a chat
        # message, a prompt: the common call -- skips utf8's checks for long
        # texts (str.encode, surrogates fixed only when it fails), and the
        # table makes it one C call (pybpe._pylists.encode_ids): 200
        # characters 2.5 -> ~2.0 us with _encode_utf8's steps written out.
        if 0 < len(text) <= self._short_chars:  # ("" would pass 0 <= 0 where the path is off)
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError:
                data = _unicode.utf8(text)  # lone surrogates become U+FFFD
            return self._encode_utf8(data)
        if self._preset is not None:
            return self._encode_utf8(_unicode.utf8(text))
        return self._encode_plain(_fix_surrogates(text))

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special=_ALL):
        """Encode `text`; special-token text is a special token only where allowed.

        allowed_special: "all" or a set of special-token strings to encode as
            their special IDs.
        disallowed_special: "all" (every special token not allowed) or a
            collection of strings whose presence in `text` raises ValueError;
            pass () to encode such text as ordinary text.

            >>> from pybpe import get_encoding
            >>> enc = get_encoding("gpt2")
            >>> enc.encode("<|endoftext|>", allowed_special="all")
            [50256]
            >>> enc.encode("<|endoftext|>", disallowed_special=())
            [27, 91, 437, 1659, 5239, 91, 29]
            >>> enc.encode("<|endoftext|>")
            Traceback (most recent call last):
            ...
            ValueError: Encountered text corresponding to disallowed special token '<|endoftext|>'...
        """
        allowed = self._checked_allowed(text, allowed_special, disallowed_special)
        if not allowed:
            return self._encode_ordinary(text)
        text = _fix_surrogates(text)
        out = []
        for plain, special in self._segments(text, allowed):
            out.extend(self._encode_plain(plain))
            if special is not None:
                out.append(special)
        return out

    def _checked_allowed(self, text, allowed_special, disallowed_special):
        # The checks every encode-with-specials method starts with: `text` is
        # a str holding no disallowed special token.  Returns the allowed
        # special tokens this encoding has.
        if not isinstance(text, str):
            raise TypeError("text must be a str, not %s" % type(text).__name__)
        if disallowed_special == _ALL and allowed_special == _NONE:
            self._check_no_specials(text)  # the default, with its sets made once
            return _NONE
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        check_disallowed(text, disallowed)
        return frozenset(t for t in allowed if t in self._special_tokens)

    def _check_no_specials(self, text):
        # check_disallowed(text, every special token) for the default
        # arguments.  A text holding none of the tokens' first characters is
        # done with one `in` per character; others take the general check.
        # (The general path made the sets and asked check_disallowed on every
        # call: ~1.4 us of a 200-character encode's 3.6.)
        for first in self._special_firsts:
            if first in text:
                check_disallowed(text, self._all_specials)
                return

    def _segments(self, text, allowed):
        """(ordinary text, special ID) pairs covering `text`: the text before
        each allowed special token with that token's ID, then the rest of the
        text with None."""
        start = 0
        if allowed:
            for match in special_regex(allowed).finditer(text):
                yield text[start:match.start()], self._special_tokens[match.group()]
                start = match.end()
        yield text[start:], None

    def encode_to_numpy(self, text, *, allowed_special=frozenset(), disallowed_special=_ALL):
        """encode, as a NumPy array of uint32 (NumPy is imported here only; pybpe
        does not require it).  With a C scanner (the gpt2, cl100k and o200k
        patterns on the C backend) the C encoder writes straight into the
        array's memory, which is then shrunk to fit: no Python int is made.

            >>> from pybpe import get_encoding
            >>> get_encoding("o200k_base").encode_to_numpy("hello world")
            array([24912,  2375], dtype=uint32)
        """
        allowed = self._checked_allowed(text, allowed_special, disallowed_special)
        numpy = _numpy("Encoding.encode_to_numpy")
        if self._preset is None:
            return numpy.array(self.encode(text, allowed_special=allowed, disallowed_special=()),
                               dtype=numpy.uint32)
        parts = []
        caches = self._caches
        cache = self._take_cache(caches)
        try:
            if not allowed:  # one text, no special token: straight to its array
                return self._table.encode_array(_unicode.utf8(text), self._preset, numpy, cache)
            for plain, special in self._segments(_fix_surrogates(text), allowed):
                if plain:
                    parts.append(self._table.encode_array(plain.encode("utf-8"), self._preset, numpy, cache))
                if special is not None:
                    parts.append(numpy.array([special], dtype=numpy.uint32))
        finally:
            self._give_back(cache, caches)
        if len(parts) == 1:
            return parts[0]
        return numpy.concatenate(parts) if parts else numpy.empty(0, dtype=numpy.uint32)

    def _special_sets(self, allowed_special, disallowed_special):
        # tiktoken's rules (pybpe/specials.py, shared with BPETokenizer).
        return special_sets(allowed_special, disallowed_special, self.special_tokens_set)

    def encode_single_token(self, text_or_bytes):
        """The ID of text (str or bytes) that is exactly one token, special
        tokens included; KeyError otherwise.  As in tiktoken, ordinary tokens
        are looked up first, then special tokens by their UTF-8 bytes.

            >>> from pybpe import get_encoding
            >>> enc = get_encoding("gpt2")
            >>> enc.encode_single_token("hello"), enc.encode_single_token(b"<|endoftext|>")
            (31373, 50256)
        """
        if type(text_or_bytes) is bytes:  # as it is, without the isinstance call
            piece = text_or_bytes
        else:
            piece = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        token = self._mergeable_ranks.get(piece)
        if token is not None:
            return token
        try:
            return self._special_tokens[piece.decode("utf-8")]
        except (UnicodeDecodeError, KeyError):
            raise KeyError(piece) from None

    # -- tiktoken's lower-level encoders ----------------------------------------
    def _encode_single_piece(self, text_or_bytes):
        """The IDs of one piece (str or bytes) merged whole, with no pattern
        split and no special tokens.

            >>> from pybpe import get_encoding
            >>> get_encoding("gpt2")._encode_single_piece("helloqqqq")
            [31373, 38227, 38227]
        """
        piece = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        token = self._mergeable_ranks.get(piece)
        if token is not None:
            return [token]
        return self._table.encode_piece(piece) if piece else []

    def _encode_only_native_bpe(self, text):
        """encode_ordinary with the pattern matched by the `regex` module
        and each piece merged on its own (tiktoken's reference path: no C
        scanner, no surrogate fix-up)."""
        ids = []
        for piece in self._regex_pieces(text):
            ids.extend(self._encode_single_piece(piece.encode("utf-8")))
        return ids

    def _byte_pair_encode(self, piece):
        # Merging alone, without first looking the whole piece up (what
        # tiktoken's completions use; with a merge list, that list's rule).
        if self._merges is not None:
            return self._table.encode_piece(piece)
        ranks = self._mergeable_ranks

        def rule(a, b):
            rank = ranks.get(a + b)
            return None if rank is None else (rank, a + b)
        try:
            return [ranks[part] for part in byte_pair_merge([bytes([b]) for b in piece], rule)]
        except KeyError:
            raise byte_without_token(b for b in range(256) if bytes([b]) not in ranks) from None

    def _encode_with_last_piece(self, text, allowed):
        # (IDs of `text`, how many of them the last pattern piece gave): 0
        # when the text ends with a special token or is empty.  tiktoken's
        # "unstable" helpers start from here: merges cannot cross a piece's
        # edges, so only the last piece can still change as text is added.
        ids, last = [], 0
        for plain, special in self._segments(text, allowed):
            pieces = self._pieces(plain) if plain else []
            if pieces:
                ids.extend(self._table.encode_pieces(pieces))
                last = len(self._table.encode_pieces(pieces[-1:]))
            if special is not None:
                ids.append(special)
                last = 0
        return ids, last

    def _extend_last_piece(self, ids, last):
        # Pattern splits between runs of whitespace are not stable either
        # ("\n" + " " can become one piece "\n \n" later): when the last
        # piece starts with an all-space token, the all-space tokens before
        # it count as unstable too.
        def all_space(token):
            data = None if token in self._special_token_values else self._decoder.get(token)
            return data is not None and all(b in _SPACE_BYTES for b in data)
        if last and all_space(ids[-last]):
            while last < len(ids) and all_space(ids[-last - 1]):
                last += 1
        return last

    def _encode_bytes(self, data):
        """IDs of `data` (bytes), which may not be valid UTF-8: the longest
        valid prefix is encoded as text, then its last piece and the bytes
        after it are merged as one piece (tiktoken's guess at what a
        model sees for text cut mid-character).

            >>> from pybpe import get_encoding
            >>> get_encoding("cl100k_base")._encode_bytes(b" \\xec\\x8b\\xa4\\xed")
            [62085]
        """
        data = bytes(data)
        try:
            return self._encode_plain(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            valid = exc.start
        ids, last = self._encode_with_last_piece(data[:valid].decode("utf-8"), frozenset())
        last = self._extend_last_piece(ids, last)
        if ids and last:
            rest = self.decode_bytes(ids[-last:]) + data[valid:]
            del ids[-last:]
        else:
            rest = data[valid:]
        if rest:
            ids.extend(self._encode_single_piece(rest))
        return ids

    @functools.cached_property
    def _sorted_token_bytes(self):
        return self.token_byte_values()

    def _tokens_starting_with(self, prefix):
        # Every mergeable token's bytes that start with `prefix`, in order.
        vocab = self._sorted_token_bytes
        i = bisect.bisect_left(vocab, prefix)
        while i < len(vocab) and vocab[i].startswith(prefix):
            yield vocab[i]
            i += 1

    def encode_with_unstable(self, text, *, allowed_special=frozenset(), disallowed_special=_ALL):
        """(stable IDs, completions) for text that may continue: the stable IDs
        encode a prefix of `text` that no continuation changes, and each
        completion is an ID sequence that, after the stable IDs, spells the
        rest of `text` and possibly more -- every way the last piece could
        come out.  tiktoken's algorithm, with the same heuristics; like
        tiktoken's, this API is itself unstable.  Completions come sorted.

            >>> from pybpe import get_encoding
            >>> enc = get_encoding("gpt2")
            >>> stable, completions = enc.encode_with_unstable("hello fanta")
            >>> stable, [277, 4910] in completions, [5113, 265] in completions
            ([31373], True, True)
        """
        allowed = self._checked_allowed(text, allowed_special, disallowed_special)
        ids, last = self._encode_with_last_piece(_fix_surrogates(text), allowed)
        if not last:
            return ids, []
        last = self._extend_last_piece(ids, last)
        unstable = self.decode_bytes(ids[-last:])
        del ids[-last:]
        completions = {(self._mergeable_ranks[token],) for token in self._tokens_starting_with(unstable)}
        # The token that finishes the text may start inside it: for every
        # split of `unstable`, its head followed by any token that starts
        # with its tail, re-encoded, cut after the text's length.  There can
        # be 10**5 of them (40 spaces): the ones that are UTF-8 are encoded
        # in one batch call, the others merged as bytes.
        joined = [unstable[:i] + token for i in range(1, len(unstable))
                  for token in self._tokens_starting_with(unstable[i:])]
        texts, raw = [], []
        for data in joined:
            try:
                texts.append(data.decode("utf-8"))
            except UnicodeDecodeError:
                raw.append(data)
        by_id = self._lookup_list() or self._decoder
        for encoded in self.encode_ordinary_batch(texts, num_threads=1) + [self._byte_pair_encode(d) for d in raw]:
            length, cut = 0, 0
            for t in encoded:
                cut += 1
                length += len(by_id[t])
                if length >= len(unstable):
                    break
            completions.add(tuple(encoded[:cut]))
        # Text added after trailing whitespace can split it off (gpt2's
        # \s+(?!\S)): the whitespace character as a piece of its own.
        if len(unstable) > 1:
            size, char = _last_char(unstable)
            if char is not None and len(unstable) > size and _is_white_space(char):
                completions.add(tuple(self._byte_pair_encode(unstable[:-size])
                                      + self._byte_pair_encode(unstable[-size:])))
        return ids, [list(c) for c in sorted(completions)]

    def encode_ordinary_batch(self, text, *, num_threads=8):
        """encode_ordinary over a list of str, on `num_threads` threads.

        With a C scanner (the gpt2, cl100k and o200k patterns on the C
        backend) each thread makes one C call over the whole list that runs
        without the GIL and takes runs of texts (~16 KB) from a cursor the
        calls share, so a faster thread takes more (see _encode_shared);
        only the UTF-8 encoding and the building of the result lists (from
        a table of int objects; see pybpe/core/native/ranks.py) hold it, and
        the first worker builds the lists of the texts done so far while the
        others encode.  The calling thread works too, beside helper threads
        that live across calls (pybpe/_workers.py); no more threads than
        CPUs are used.  Each thread's call takes one of the Encoding's idle
        piece caches (see piece_cache), so every thread has its own while it
        works and the next batch's threads find them warm; without a piece
        cache the list is cut into slices of one C call each (see
        _slice_bounds).  On the Python backend the texts
        are encoded one after another on the calling thread: pure-Python
        work cannot share the GIL.

            >>> from pybpe import get_encoding
            >>> get_encoding("gpt2").encode_ordinary_batch(["hello world", "hi"])
            [[31373, 995], [5303]]
        """
        texts = _texts(text)
        num_threads = _workers.checked(num_threads)
        if self._preset is None:
            return self._map(self._encode_plain, [_checked(t, i) for i, t in enumerate(texts)], num_threads)
        num_threads = _workers.width(num_threads, len(texts))
        size = self._cache_bytes  # read once: another thread may set piece_cache meanwhile
        if self._compiled and (num_threads <= 1 or size):
            # one C call per thread over the texts joined (pybpe/_unicode.py,
            # joined), which are type-checked before any is converted
            data, starts = self._joined(texts)
            if num_threads <= 1:
                return self._encode_joined(data, starts, len(texts))
            return self._encode_shared(texts, num_threads, size=size, joined=(data, starts))
        for i, t in enumerate(texts):  # every type error before any work
            if not isinstance(t, str):
                _checked(t, i)
        if num_threads <= 1 or not self._compiled:
            return self._encode_slice(texts)
        bounds = _slice_bounds([len(t) for t in texts], num_threads)
        slices = [texts[a:b] for a, b in zip(bounds, bounds[1:])]
        parts = _workers.run(self._encode_slice, slices, num_threads)
        return [ids for part in parts for ids in part]

    @staticmethod
    def _joined(texts):
        # pybpe._unicode.joined(texts), or TypeError naming the first item
        # that is not a str.
        joined = _unicode.joined(texts)
        if joined.__class__ is int:
            _checked(texts[joined], joined)
        return joined

    def _encode_joined(self, data, starts, n):
        # _encode_slice of n texts given joined (pybpe._unicode.joined).
        caches = self._caches
        cache = self._take_cache(caches)
        try:
            return self._table.encode_joined(data, starts, n, self._preset, cache)
        finally:
            self._give_back(cache, caches)

    def _encode_shared(self, texts, num_threads, static=False, size=None, joined=None):
        # encode_ordinary_batch on num_threads threads, each making one C
        # call over the whole batch that takes runs of texts from a shared
        # cursor (pybpe/core/native/ranks.py, SharedBatch), each through a
        # piece cache of its own.  Worker 0 returns from C every
        # _LEAD_SHARE of the batch's bytes to build the lists of the texts
        # done so far (holding the GIL, while the others go on encoding);
        # the rest are built once every worker is back.  `static`: the
        # fixed shares the C falls back to without atomics (for tests).
        # `size`: the piece cache's bytes when the call began, which every
        # worker's cache has, whatever piece_cache is set to meanwhile.
        # `joined`: _joined(texts), when the caller made it already.
        batch, caches, size = self._shared_batch(texts, num_threads, static, size, joined)
        n = len(texts)
        result, built = [None] * n, [0]
        budget = max(1, batch.n_bytes // _LEAD_SHARES)

        def work(worker):
            cache = self._take_cache(caches, size)
            try:
                if worker:
                    batch.work(worker, cache)
                    return
                more = True
                while more:
                    more = batch.work(0, cache, budget)
                    first = built[0]
                    ready = batch.ready(first)
                    if ready > first:
                        result[first:ready] = batch.lists(first, ready)
                        built[0] = ready
            finally:
                self._give_back(cache, caches)

        _workers.run(work, range(num_threads), num_threads)
        if built[0] < n:
            result[built[0]:] = batch.lists(built[0], n)
        return result

    def _shared_batch(self, texts, num_threads, static, size, joined):
        # The SharedBatch of texts for num_threads workers, the pool of piece
        # caches they take theirs from, and the caches' size (_encode_shared
        # says what the arguments are).
        data, starts = joined or self._joined(texts)
        batch = self._table._shared_batch_joined(data, starts, len(texts), self._preset, num_threads, static)
        return batch, self._caches, size or self._cache_bytes or self._cache_sizes[0]

    def _encode_shared_arrays(self, texts, num_threads, numpy, size=None, joined=None):
        # encode_batch_to_numpy's way: _encode_shared's workers, with no list
        # to build, then the texts' IDs closed up in C (SharedBatch.arrays).
        batch, caches, size = self._shared_batch(texts, num_threads, False, size, joined)

        def work(worker):
            cache = self._take_cache(caches, size)
            try:
                batch.work(worker, cache)
            finally:
                self._give_back(cache, caches)

        _workers.run(work, range(num_threads), num_threads)
        return batch.arrays(numpy)

    def _encode_slice(self, texts):
        # One C call for many texts (str), one ID list per text, through the
        # piece cache this thread takes for the call.  The UTF-8 is made here,
        # on the slice's thread, with surrogates fixed on the way (utf8
        # encodes once; fixing them first on the calling thread encoded
        # every non-ASCII text twice, before any thread could start).
        utf8 = _unicode.utf8
        encoded = [utf8(t) for t in texts]
        caches = self._caches
        cache = self._take_cache(caches)
        try:
            return self._table.encode_texts_split(encoded, self._preset, cache)
        finally:
            self._give_back(cache, caches)

    def encode_batch(self, text, *, num_threads=8, allowed_special=frozenset(), disallowed_special=_ALL,
                     padding=False, truncation=False, max_length=None, pad_id=None, add_special_tokens=False,
                     return_attention_mask=None, return_numpy=False, padding_side="right"):
        """encode over a list of str, on `num_threads` threads.  Without
        allowed special tokens this is the check for disallowed ones, then
        encode_ordinary_batch.

        Model-ready batches (pybpe extensions, keyword only; README "Model-
        ready batches"): with any of padding / truncation / max_length /
        pad_id / add_special_tokens / return_attention_mask / return_numpy /
        padding_side the result is a dict {"input_ids", "attention_mask"}
        (pybpe/_batch.py).  An Encoding has no <bos>; add_special_tokens
        appends eos_id (<|endoftext|>), and padding uses pad_id, by default
        eos_id.  Without them the result is the plain list of ID lists.

            >>> from pybpe import get_encoding
            >>> get_encoding("gpt2").encode_batch(["hello world", "hi"], padding=True)
            {'input_ids': [[31373, 995], [5303, 50256]], 'attention_mask': [[1, 1], [1, 0]]}
        """
        options = dict(padding=padding, truncation=truncation, max_length=max_length, pad_id=pad_id,
                       add_special_tokens=add_special_tokens, return_attention_mask=return_attention_mask,
                       return_numpy=return_numpy, padding_side=padding_side)
        rows = self._encode_batch(text, _workers.checked(num_threads), allowed_special, disallowed_special)
        if not _batch.wanted(**options):
            return rows
        pad = self.pad_id if self.pad_id is not None else self.eos_id
        return _batch.shape(rows, bos_id=self.bos_id, eos_id=self.eos_id, default_pad_id=pad,
                            check_id=self._check_token, **options)

    def encode_batch_to_numpy(self, text, *, num_threads=8, allowed_special=frozenset(),
                              disallowed_special=_ALL):
        """encode_batch, as two NumPy arrays (NumPy is imported here only):
        every text's IDs end to end (uint32), and len(text) + 1 offsets
        (int64), so that text i's IDs are ids[offsets[i]:offsets[i + 1]]
        (numpy.split(ids, offsets[1:-1]) gives one array per text).  The
        same IDs as encode_batch, and the same errors.

        With a C scanner (the gpt2, cl100k and o200k patterns on the C
        backend) and no special token allowed, the threads of
        encode_ordinary_batch write into one C array, which is closed up
        and copied once: no Python int and no list is made, so none of the
        work holds the GIL but the texts' UTF-8 and the check for
        disallowed special tokens.  Otherwise the lists of encode_batch are
        made first.

            >>> from pybpe import get_encoding
            >>> ids, offsets = get_encoding("gpt2").encode_batch_to_numpy(["hello world", "hi"])
            >>> ids, offsets
            (array([31373,   995,  5303], dtype=uint32), array([0, 2, 3]))
        """
        numpy = _numpy("Encoding.encode_batch_to_numpy")
        texts = _texts(text)
        num_threads = _workers.checked(num_threads)
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        size = self._cache_bytes  # read once, as encode_ordinary_batch does
        if (not any(t in self._special_tokens for t in allowed) and texts and self._preset is not None
                and self._compiled and size):
            if disallowed:
                _check_batch(texts, disallowed)
            joined = self._joined(texts)
            width = max(1, _workers.width(num_threads, len(texts)))
            return self._encode_shared_arrays(texts, width, numpy, size=size, joined=joined)
        return _flat(self._encode_batch(texts, num_threads, allowed_special, disallowed_special), numpy)

    def _check_token(self, token, what):
        if token not in self._decoder:
            raise InvalidTokenError("%s=%r is not a token of this encoding" % (what, token))

    @property
    def bos_id(self):
        """The ID of a "<bos>" special token (an Encoding made by
        BPETokenizer.to_encoding), or None: tiktoken's encodings have no
        beginning-of-sequence token."""
        return self._special_tokens.get("<bos>")

    @property
    def eos_id(self):
        """The ID of <|endoftext|>, else of a "<eos>" special token (as
        BPETokenizer names it), else None (eot_token raises KeyError then,
        as in tiktoken)."""
        specials = self._special_tokens
        return specials.get("<|endoftext|>", specials.get("<eos>"))

    @property
    def pad_id(self):
        """The ID of a "<pad>" special token, or None (padding then uses eos_id)."""
        return self._special_tokens.get("<pad>")

    def _encode_batch(self, text, num_threads, allowed_special, disallowed_special):
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        allowed = frozenset(t for t in allowed if t in self._special_tokens)
        texts = _texts(text)
        if not allowed:
            if disallowed:
                _check_batch(texts, disallowed)
            return self.encode_ordinary_batch(texts, num_threads=num_threads)
        encoder = functools.partial(self.encode, allowed_special=allowed_special,
                                    disallowed_special=disallowed_special)
        return self._map(encoder, texts, num_threads)

    def _map(self, fn, items, num_threads):
        # [fn(x) for x in items], on threads (pybpe/_workers.py) when that can
        # help: only a compiled backend's calls run without the GIL.  Pure-Python work
        # holds it throughout, and threads fighting over it are slower than
        # one (the Python backend's encode_ordinary_batch: 2.3x slower on 2).
        if num_threads <= 1 or not self._compiled or len(items) <= 1:
            return [fn(x) for x in items]
        return _workers.run(fn, items, num_threads)

    def encode_file(self, path, out_path, *, document_separator=None, dtype=None, append_eot=True,
                    progress=False, chunk_size=1 << 22):
        """Stream a UTF-8 text file to a flat binary file of token IDs.

        This is how LM training pipelines prepare data (nanoGPT's prepare.py):
        every document is encoded with encode_ordinary (special-token text is
        ordinary text) and followed by eot_token, and all IDs are written end
        to end as `dtype` in native byte order, so
        ``numpy.fromfile(out_path, dtype=numpy.uint16)`` (or uint32) reads
        them back.

        document_separator: None (the whole file is one document) or a str
            that separates documents, e.g. "<|endoftext|>" or "\n\n\n"; the
            separator itself is not encoded.  An empty last document (a file
            ending with the separator) is dropped; other empty documents
            give just eot_token.
        dtype: "uint16", "uint32" (or numpy's), or None: uint16 when every
            ID fits (n_vocab <= 65536), else uint32.
        append_eot: False to write no separator tokens (then the encoding
            needs no <|endoftext|>).
        progress: True to draw a progress bar on stderr.
        chunk_size: bytes read at a time.  Memory stays about a few times
            this, whatever the file's size.

        The result equals encoding each whole document: text is only cut
        between a letter and " " + a letter (any script), or after a
        non-space + newline before a non-space other than "/" -- places
        where the gpt2, cl100k and o200k patterns always cut and whose left
        part they split the same way alone (tests/test_encode_speed_paths.py
        checks it).  So text without spaces between words (Chinese,
        Japanese) is cut at its line ends; a document with no such place
        (one long line of it, minified JSON) is held whole.  For other patterns the same cuts
        are used; a pattern that can match across them would differ.
        out_path may be a path or a binary file object (sys.stdout.buffer).
        A file is written to a temporary file committed at the end, so a
        failure leaves the old file whole and no temporary file; a symlink
        is written through, a pipe or device (/dev/stdout) is written as a
        stream, and out_path naming the input file (through links too) is a
        ValueError.  Returns the number of IDs written.
        """
        return _encode_file(self, self._encode_array, path, out_path,
                            document_separator=document_separator, dtype=dtype,
                            append_eot=append_eot, progress=progress, chunk_size=chunk_size,
                            encode_group=self._group_encoder())

    def _group_encoder(self):
        # encode_file's (and encode_to_shards') way to encode many documents
        # in one call: _encode_group, or None where there is no C scanner
        # for the pattern (then _encode_array takes one document at a time).
        return self._encode_group if self._preset is not None else None

    def _encode_group(self, texts, itemsize):
        # Many of encode_file's documents (str) in one C call: their IDs end
        # to end as an array of the file's width, and where each text's end
        # (RankTable.encode_joined_to_buffer).
        data, starts = self._joined(texts)
        caches = self._caches
        cache = self._take_cache(caches)
        try:
            return self._table.encode_joined_to_buffer(data, starts, len(texts), self._preset, itemsize, cache)
        finally:
            self._give_back(cache, caches)

    def _encode_array(self, text, itemsize):
        # encode_ordinary as an array.array for encode_file: with a preset the
        # C backend writes IDs straight into an array of the file's width (no
        # Python int per ID).
        if self._preset is not None:
            data = _fix_surrogates(text).encode("utf-8")
            caches = self._caches
            cache = self._take_cache(caches)
            try:
                return self._table.encode_to_buffer(data, self._preset, itemsize, cache)
            finally:
                self._give_back(cache, caches)
        return array(_typecode("I", 4), self.encode_ordinary(text))

    # -- decoding -------------------------------------------------------------
    def decode_bytes(self, tokens):
        """The bytes of `tokens` concatenated; pybpe.InvalidTokenError (a
        KeyError, as in tiktoken) for an ID that is no token, TypeError for
        one that is no integer (1.0 included).  NumPy integers and arrays are
        IDs too.

            >>> from pybpe import get_encoding
            >>> get_encoding("gpt2").decode_bytes([31373, 995])
            b'hello world'
        """
        if type(tokens) is not list and self._join_array is not None:
            data = self._join_array(tokens)  # a NumPy array, read in place (C)
            if data is not None:
                return data
        ids = _id_list(tokens)
        by_id = self._lookup_list()
        if by_id:
            join = self._join_ids  # C, on the C backend: plain ints that name tokens, else None
            if join is not None:
                data = join(ids)
                if data is not None:
                    return data
            # List indexing takes integers only (int, bool, NumPy's), where
            # the decoder dict would take 1.0 for 1.  A gap's None fails the
            # join; a negative ID would index from the end, hence min().
            try:
                data = b"".join([by_id[t] for t in ids])
                if not ids or min(ids) >= 0:
                    return data
            except (IndexError, TypeError):
                pass
        self._raise_for_ids(ids)
        decoder = self._decoder
        return b"".join([decoder[_token_id(t)] for t in ids])

    def _lookup_list(self):
        # The bytes of every token in a list indexed by ID (None in the
        # gaps), made once.  An encoding whose IDs are far apart (a special
        # token at 2**31) gets none -- an empty list -- and decodes through
        # the dict, one checked ID at a time.
        # On the C backend the list also becomes a table of pybpe._pylists'
        # (RankTable.bytes_decoder): decode_bytes and decode_tokens_bytes
        # then take plain int IDs in one C call (~10x faster than a list
        # index per ID), and everything else the Python way below.
        by_id = self._bytes_by_id
        if by_id is None:
            size = self.max_token_value + 1
            by_id = list(map(self._decoder.get, range(size))) if size <= 2 * len(self._decoder) + 1024 else []
            decoders = self._table.bytes_decoder(by_id) if by_id else None
            self._join_ids, self._each_id, self._join_array = decoders or (None, None, None)
            self._bytes_by_id = by_id  # last: another thread that sees it sees the decoders
        return by_id

    def _raise_for_ids(self, tokens, start=0):
        # Why decoding `tokens` failed, said clearly: a str where IDs belong,
        # an ID that is no integer (TypeError), or no token (InvalidTokenError).
        # bool is an integer here, as in tiktoken.
        if isinstance(tokens, (str, bytes, bytearray)):
            raise TypeError("tokens must be a sequence of int token IDs, not a %s" % type(tokens).__name__)
        for index, t in enumerate(tokens, start):
            if not _is_integer(t):
                raise TypeError("tokens[%d] must be an int token ID, not %s" % (index, type(t).__name__))
            if _token_id(t) not in self._decoder:
                raise InvalidTokenError("Invalid token for decoding: %d (tokens[%d]: no token of this encoding "
                                        "has that ID; the largest is %d)" % (t, index, self.max_token_value))

    def decode(self, tokens, errors="replace", *, skip_special_tokens=False):
        """decode_bytes, then UTF-8 with `errors` (a token may end mid-character).
        skip_special_tokens=True leaves the special tokens out (padding,
        <|endoftext|>).  NumPy IDs and arrays are IDs too.

            >>> from pybpe import get_encoding
            >>> get_encoding("gpt2").decode([447])
            '�'
            >>> get_encoding("gpt2").decode([50256, 31373, 50256], skip_special_tokens=True)
            'hello'
        """
        if skip_special_tokens:
            tokens = self._without_specials(tokens)
        elif type(tokens) is list and self._join_ids is not None:
            # decode_bytes' C way written out: a short decode (one token of a
            # stream) is mostly the calls around it.
            data = self._join_ids(tokens)
            if data is not None:
                return data.decode("utf-8", errors)
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def _without_specials(self, tokens):
        # A value that is no integer stays, for decode_bytes to refuse:
        # 50256.0 equals a special token's ID but must not vanish.
        specials = self._skipped_values
        return [t for t in _id_list(tokens) if t not in specials or not _is_integer(t)]

    def stream_decoder(self, errors="replace"):
        """A StreamDecoder (pybpe/flavours.py): feed(id) one ID at a time, then
        finish(); each call returns the text whose UTF-8 is complete, so a
        character split across tokens comes out whole, with the token that
        ends it.  Together they always equal decode(ids, errors).

            >>> from pybpe import get_encoding
            >>> enc = get_encoding("gpt2")
            >>> decoder = enc.stream_decoder()
            >>> [decoder.feed(i) for i in enc.encode("日本語")], decoder.finish()
            (['', '日', '', '本', '', '語'], '')
        """
        decoder = self._decoder

        def token_of(i, index):
            data = decoder.get(i) if _is_integer(i) else None
            if data is None:
                self._raise_for_ids([i], index)
            return data
        return StreamDecoder(token_of, ByteJoiner(errors))

    def decode_single_token_bytes(self, token):
        """The bytes of one token.

            >>> from pybpe import get_encoding
            >>> get_encoding("cl100k_base").decode_single_token_bytes(15339)
            b'hello'
        """
        if type(token) is int:  # the common case, without the checks' calls
            data = self._decoder.get(token)
            if data is not None:
                return data
        if not _is_integer(token):  # "7", 7.0: no ID (as in tiktoken)
            raise TypeError("a token ID must be an int, not %s" % type(token).__name__)
        data = self._decoder.get(_token_id(token))
        if data is None:
            raise InvalidTokenError("Invalid token for decoding: %r" % (token,))
        return data

    def decode_tokens_bytes(self, tokens):
        """[decode_single_token_bytes(t) for t in tokens]."""
        if type(tokens) is list and self._lookup_list():
            each = self._each_id  # see _lookup_list
            if each is not None:
                result = each(tokens)
                if result is not None:
                    return result
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens):
        """The text and, per token, the index of the character it starts in.

        A token that starts inside a multi-byte character is attributed to
        that character (as tiktoken does).

            >>> from pybpe import get_encoding
            >>> enc = get_encoding("cl100k_base")
            >>> enc.decode_with_offsets(enc.encode("hi é!"))
            ('hi é!', [0, 2, 4])
        """
        return byte_offsets(self.decode_tokens_bytes(tokens))

    def decode_batch(self, batch, *, errors="replace", num_threads=8, skip_special_tokens=False):
        """decode over a list of token lists (or a 2-D NumPy array, such as a
        padded batch).  num_threads is accepted for tiktoken compatibility
        and ignored: decoding is dictionary lookups and a join in Python,
        which threads cannot run in parallel."""
        return [self.decode(tokens, errors=errors, skip_special_tokens=skip_special_tokens) for tokens in batch]

    def decode_bytes_batch(self, batch, *, num_threads=8):
        """decode_bytes over a list of token lists (num_threads: see decode_batch)."""
        return [self.decode_bytes(tokens) for tokens in batch]

    # -- inspection -----------------------------------------------------------
    def token_byte_values(self):
        """The bytes of every mergeable token, sorted (tiktoken's order): a
        new list each call, from a sorted copy made at the first (sorting
        cl100k's 100,000 tokens takes ~28 ms, copying the list ~0.3)."""
        ordered = self._sorted_tokens
        if ordered is None:
            ordered = self._sorted_tokens = tuple(sorted(self._mergeable_ranks))
        return list(ordered)

    @property
    def eot_token(self):
        """The ID of <|endoftext|> (KeyError when this encoding has none)."""
        return self._special_tokens["<|endoftext|>"]

    @functools.cached_property
    def special_tokens_set(self):
        """The special tokens' strings."""
        return set(self._special_tokens)

    def is_special_token(self, token):
        """True when ID `token` is a special token; TypeError for a value
        that is no ID (tiktoken asserts an int)."""
        if type(token) is not int and not _is_integer(token):
            raise TypeError("a token ID must be an int, not %s" % type(token).__name__)
        return token in self._special_token_values

    @property
    def n_vocab(self):
        """One more than the largest ID (IDs may have gaps, as in cl100k_base)."""
        return self.max_token_value + 1

    @property
    def merges(self):
        """The explicit merge list as given, or None (tiktoken's rank rule)."""
        return None if self._merges is None else list(self._merges)

    @property
    def pat_str(self):
        """The pre-tokenizer pattern."""
        return self._pat_str

    @property
    def mergeable_ranks(self):
        """A copy of {token bytes: rank/ID}."""
        return dict(self._mergeable_ranks)

    @property
    def special_tokens(self):
        """A copy of {special token str: ID}."""
        return dict(self._special_tokens)

    @property
    def lookup_whole_piece(self):
        """True when a piece that is a whole token is looked up before merging
        (tiktoken's rule; see the constructor)."""
        return self._lookup_whole_piece


def _check_ranks(ranks):
    if not isinstance(ranks, dict):
        raise TypeError("mergeable_ranks must be a dict {bytes: int}, not %s" % type(ranks).__name__)
    # The whole dict at once first (set(map(type, ...)) runs in C: ~10 ms
    # for o200k's 200,000 ranks, where the loop below takes ~50); the loop,
    # which names the first offender, only when something is wrong.
    values = ranks.values()
    if (not ranks or set(map(type, ranks)) == {bytes} and b"" not in ranks and set(map(type, values)) == {int}
            and min(values) >= 0 and max(values) < 2**32 - 1 and len(set(values)) == len(ranks)):
        return
    seen = set()
    for token, rank in ranks.items():
        if not isinstance(token, bytes) or not token:
            raise TypeError("mergeable_ranks keys must be non-empty bytes, not %r" % (token,))
        if not isinstance(rank, int) or isinstance(rank, bool) or not 0 <= rank < 2**32 - 1:
            raise ValueError("mergeable_ranks[%r] = %r: ranks are ints in [0, 2**32 - 1)" % (token, rank))
        if rank in seen:
            raise ValueError("mergeable_ranks: rank %d is given to two tokens" % rank)
        seen.add(rank)


def _check_specials(specials):
    if not isinstance(specials, dict):
        raise TypeError("special_tokens must be a dict {str: int}, not %s" % type(specials).__name__)
    for text, i in specials.items():
        if not isinstance(text, str) or not text:
            raise TypeError("special_tokens keys must be non-empty str, not %r" % (text,))
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < 2**32 - 1:
            raise ValueError("special_tokens[%r] = %r: IDs are ints in [0, 2**32 - 1)" % (text, i))


def _is_integer(value):
    """Whether `value` can be a token ID: an int (bool too, as in tiktoken) or
    an integer of another kind (NumPy's), which has __index__.  1.0 and "1"
    cannot, though 1.0 == 1 and a dict would find it."""
    return type(value) is int or hasattr(value, "__index__")


def _token_id(value):
    return value if type(value) is int else operator.index(value)


def _id_list(tokens):
    """`tokens` as a list to decode: a list as it is, a NumPy array through
    tolist() (its ints, or its floats for decoding to refuse), anything else
    iterated.  A str or bytes is no sequence of IDs: TypeError."""
    if type(tokens) is list:
        return tokens
    if isinstance(tokens, (str, bytes, bytearray)):
        raise TypeError("tokens must be a sequence of int token IDs, not a %s" % type(tokens).__name__)
    if hasattr(tokens, "dtype") and hasattr(tokens, "tolist"):
        return tokens.tolist()
    return list(tokens)
