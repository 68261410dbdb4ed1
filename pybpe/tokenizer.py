"""The chapter's tokenizers: Tokenizer, CharTokenizer and BPETokenizer.

This is TinyTorch Module 10's API (and the C book's Chapter 11 listings
061-065) on pybpe's cores: `BPETokenizer().train(corpus)` learns merges with
the incremental trainer and `encode` applies them by rank, on the C backend
when it is built and on the identical pure-Python backend otherwise.  What a
word and a symbol are is decided by the flavour (pybpe/flavours.py); the
algorithm itself lives in the backends (pybpe/core/, docs/backends.md).  The
model file that save writes and load reads is pybpe/model_file.py; file
formats for other tools (tiktoken, GPT-2, Hugging Face) are in pybpe/formats.py.
"""
import codecs
import io
import operator
import os
import reprlib
import sys
import time
from itertools import islice

from . import _batch, _bounded, _unicode, _workers, core, model_file, patterns
from .core.spec.counter import word_units
from .errors import FormatError, InvalidTokenError
from .flavours import (DEFAULT, UNK, WHITESPACE, Flavour, StreamDecoder, byte_offsets, is_pretokenizer_name,
                       text_offsets)
from .specials import check_disallowed, special_regex, special_sets

# Encoded words are cached per tokenizer; past this many the cache starts over
# (a plain dict clear: cheaper than LRU bookkeeping, and text re-warms it fast).
# A call never reads its words back from the cache, so a clear loses no hit.
WORD_CACHE_LIMIT = 200_000
# Word and pair counts are 64-bit in the C core (and checked to fit on both).
_MAX_COUNT = 2**64 - 1


class Tokenizer:
    """Base class: text -> list of IDs -> text."""

    def encode(self, text):
        raise NotImplementedError

    def decode(self, tokens):
        raise NotImplementedError


class CharTokenizer(Tokenizer):
    """One ID per character; `<UNK>` = 0, then the sorted characters seen.

    >>> tok = CharTokenizer(); tok.build_vocab(["hello"])
    >>> tok.vocab, tok.encode("hole!")
    (['<UNK>', 'e', 'h', 'l', 'o'], [2, 4, 3, 1, 0])
    """

    def __init__(self, vocab=None):
        self._set_vocab(list(vocab) if vocab is not None else [])

    def _set_vocab(self, chars):
        vocab = [UNK] + [c for c in chars if c != UNK]
        # One dict.update (a single C call: no Ctrl-C can land inside it)
        # replaces all the attributes together, so an interrupt leaves the
        # old vocabulary or the new one, never a mix.
        self.__dict__.update(vocab=vocab, vocab_size=len(vocab),
                             char_to_id={c: i for i, c in enumerate(vocab)},
                             id_to_char=dict(enumerate(vocab)), unk_id=0)

    def build_vocab(self, corpus):
        chars = set()
        for index, text in enumerate(_checked_texts(corpus)):
            chars.update(text)
        self._set_vocab(sorted(chars))

    def encode(self, text):
        _check_text(text)
        get = self.char_to_id.get
        return [get(c, 0) for c in text]

    def decode(self, tokens):
        get = self.id_to_char.get
        return "".join(get(_check_id(t), UNK) for t in tokens)


class BPETokenizer(Tokenizer):
    """Byte-pair encoding, chapter flavour by default (the README's
    "Flavours" table says what each flavour keeps and loses).

    >>> tok = BPETokenizer(vocab_size=25)
    >>> tok.train(["low", "low", "lower", "newest", "widest"])
    >>> tok.merges
    [('l', 'o'), ('lo', 'w '), ('w', 'e'), ('s', 't ')]
    >>> tok.encode("lowest"), tok.decode(tok.encode("lowest"))
    ([21, 23, 24], 'lowest')

    What a word is: `pretokenizer` names a splitter ("whitespace", None for
    the whole text, or a preset: "gpt2", "cl100k", "o200k", ...; an unknown
    name is a ValueError listing them), or `regex` gives a pattern of your
    own.  A BPETokenizer pickles and deep-copies (its compiled state is
    rebuilt on load), so it travels to spawn-started worker processes.
    """

    def __init__(self, vocab_size=1000, *, pretokenizer=DEFAULT, regex=None, end_of_word=DEFAULT,
                 marker=DEFAULT, byte_level=False, min_frequency=1, max_token_length=None,
                 lowercase=False, special_tokens=(), backend=None):
        self._configure(vocab_size=vocab_size, pretokenizer=pretokenizer, regex=regex,
                        end_of_word=end_of_word, marker=marker, byte_level=byte_level,
                        min_frequency=min_frequency, max_token_length=max_token_length,
                        lowercase=lowercase, special_tokens=special_tokens, backend=backend)

    def _configure(self, *, vocab_size=1000, pretokenizer=DEFAULT, regex=None, end_of_word=DEFAULT,
                   marker=DEFAULT, byte_level=False, min_frequency=1, max_token_length=None,
                   lowercase=False, special_tokens=(), backend=None, legacy=False):
        # The constructor's work; legacy=True takes a model file's or a
        # pickle's options as they were written (see Flavour).
        # (The cores' own limits, checked here so both backends say the same.)
        self.target_vocab_size = _check_count("vocab_size", vocab_size, minimum=0, maximum=_MAX_COUNT)
        self.min_frequency = _check_count("min_frequency", min_frequency, minimum=1, maximum=_MAX_COUNT)
        self.max_token_length = (None if max_token_length is None
                                 else _check_count("max_token_length", max_token_length, minimum=1,
                                                   maximum=2**32 - 1))
        self.flavour = Flavour(pretokenizer=pretokenizer, regex=regex, end_of_word=end_of_word, marker=marker,
                               byte_level=byte_level, lowercase=lowercase, legacy=legacy)
        self.special_tokens = _check_specials(special_tokens)
        self.backend = core.resolve(backend)
        self._core = core.get(self.backend)
        self._state = _State(self)

    @classmethod
    def _from_config(cls, config, backend, pattern_source=None):
        """An untrained tokenizer from a config() dict as a model file or a
        pickle holds it: a "pretokenizer" that is no known name is the
        pattern it was before regex= existed.  A pattern from `pattern_source`
        (a file) that is not one of pybpe's is matched under a time bound."""
        config = dict(config)
        pretokenizer = config.get("pretokenizer", DEFAULT)
        if isinstance(pretokenizer, str) and not is_pretokenizer_name(pretokenizer):
            config["regex"] = config.pop("pretokenizer")
        tok = cls.__new__(cls)
        tok._configure(backend=backend, legacy=True, **config)
        pattern = tok.flavour.pattern
        if pattern_source is not None and pattern is not None and not _bounded.is_trusted(pattern.pattern):
            tok.flavour.pattern = _bounded.BoundedPattern(pattern, pattern_source)
        return tok

    # -- pickling and copying: the compiled state is rebuilt from plain data --------
    def __getstate__(self):
        state = self._state
        trained = state.symtab is not None
        return {"config": self.config(), "backend": self.backend,
                "pattern_source": getattr(self.flavour.pattern, "source", None),
                "tokens": state.symtab.tokens() if trained else None,
                "merges": list(state.merge_ids), "merge_counts": list(state.merge_counts)}

    def __setstate__(self, saved):
        tok = self._from_config(saved["config"], saved["backend"], saved["pattern_source"])
        if saved["tokens"] is not None:
            tok._state = _State(tok, tok._core.SymbolTable(saved["tokens"]), saved["merges"],
                                saved["merge_counts"])
        self.__dict__.update(tok.__dict__)

    # -- state -------------------------------------------------------------------
    # Everything training or loading produces lives in one _State object.  A
    # state change builds its new _State whole, then installs it with a single
    # attribute assignment as its last step, so an interrupt (Ctrl-C) or an
    # error leaves either the old state or the new one, never a mix.  Readers
    # take `state = self._state` once, which also keeps an encode running in
    # another thread consistent while a train() replaces the state.
    # What these give is a copy: a caller who edits what it read must not
    # leave decode and vocab_size seeing one vocabulary and encode, save and
    # pickle another.  (Copies, not read-only views: other libraries take
    # these as plain dicts and lists, as Hugging Face's get_vocab() gives.)
    @property
    def vocab(self):
        """Every token by ID: the regular tokens, then the special tokens (a
        copy: editing it changes nothing here)."""
        return list(self._state.vocab)

    @property
    def merges(self):
        """The merges by rank, as pairs of tokens (a copy)."""
        return list(self._state.merges)

    @property
    def token_to_id(self):
        """{token: ID} (a token met twice has its first ID; a copy)."""
        return dict(self._state.token_to_id)

    @property
    def id_to_token(self):
        """{ID: token} (a copy)."""
        return dict(self._state.id_to_token)

    @property
    def merge_counts(self):
        """The count each merge had when it was chosen, by rank (a list of int,
        parallel to `merges`; 0 for merges from a file that did not record
        it; a copy)."""
        return list(self._state.merge_counts)

    @property
    def vocab_size(self):
        """The actual number of entries (the request is `target_vocab_size`)."""
        return len(self._state.vocab)

    @property
    def is_trained(self):
        return self._state.symtab is not None

    # -- training ----------------------------------------------------------------
    def train(self, corpus, vocab_size=None, *, progress=False):
        """Learn merges from an iterable of str (replaces any earlier state).
        `vocab_size`, as in the chapter's train(corpus, vocab_size): the size
        to train to, kept as target_vocab_size once training succeeds.

        Words are counted once each, in order of first appearance (the order the
        tie-break depends on); the corpus is streamed, never held whole: lists,
        generators and open files all work.  An interrupt or an error keeps
        the earlier state whole.

        progress=True reports both phases on stderr, counting the words and
        merging: on a terminal one line redrawn in place, anywhere else (a
        log file, a pipe) a plain line every few seconds and one at the end
        of each phase, never "\r" or a terminal code.  A callable instead
        receives every report as progress(phase, done, total): ("count",
        characters counted so far, None), then ("merge", merges made, merges
        asked for).
        """
        target = self._target(vocab_size)
        report = _Progress(progress)
        state = self._trained(self._count(corpus, report), report, target)
        self._state, self.target_vocab_size = state, target

    def _target(self, vocab_size):
        # The vocab_size of a train call (None: the one the tokenizer has).
        if vocab_size is None:
            return self.target_vocab_size
        return _check_count("vocab_size", vocab_size, minimum=0, maximum=_MAX_COUNT)

    def count_words(self, corpus):
        """{word: frequency} over an iterable of str, in first-appearance order."""
        return dict(self._count(corpus).items())

    def _specials_pattern(self):
        if not self.special_tokens:
            return None
        return special_regex(frozenset(self.special_tokens))

    def _count(self, corpus, report=None):
        """A core WordCounter over the words of every text of `corpus`.

        Whitespace splitting happens in the core: texts are joined with "\n"
        (whitespace, so no word boundary moves) into batches of about
        _BATCH_CHARS characters, one core call each.  The gpt2 / cl100k /
        o200k patterns are cut in the core too (its scanners, the ones
        encoding uses): texts go over in lists of about _BATCH_CHARS
        characters, each text still cut alone, as it always was.  Any other
        pre-tokenizer is a regex run here; its words go to the core in
        batches.  Special tokens are cut out of each text first (they are
        never trained on).
        """
        if isinstance(corpus, (str, bytes)):
            raise TypeError("corpus must be an iterable of str (a list of texts, a file...), "
                            "not a single %s" % type(corpus).__name__)
        counter = self._core.WordCounter()
        flavour = self.flavour
        special_re = self._specials_pattern()
        preset = self._preset()
        report = report or _Progress(False)
        chars = 0  # of the corpus, for the progress report
        if flavour.pattern is None and flavour.pretokenizer == WHITESPACE:
            # Special tokens are cut from a whole batch of texts at once
            # (below) when none holds the "\n" that joins them, so a match
            # lies inside one text; else from each text alone (a regex call
            # a line: 256 MB of lines took 15 s where 3.8 s without them).
            per_text = special_re is not None and any("\n" in t for t in self.special_tokens)
            texts = _checked_texts(corpus) if per_text else iter(corpus)
            if report.enabled:
                texts = _counted(texts, report)
            if per_text:
                texts = _cut_specials(special_re, texts, flavour.lowercase)
            raw = None
            if isinstance(corpus, io.TextIOBase) and not special_re and not report.enabled:
                raw = _utf8_buffer(corpus, flavour)
            if raw is not None:
                strict = corpus.errors == "strict"
                for buf, end in _byte_views(raw):
                    if strict and buf.find(b"\xed", 0, end) >= 0:  # maybe a surrogate, which strict UTF-8 refuses
                        bytes(buf[:end]).decode("utf-8")
                    counter.add_utf8(buf, end)
            elif isinstance(corpus, io.TextIOBase) and not special_re:
                for batch in _file_batches(corpus):
                    counter.add_text(flavour.prepare(batch))
                    chars += len(batch)
                    report.update("count", chars, None)
            else:
                for batch in _text_lists(texts):
                    text = "\n".join(batch)
                    if special_re is not None and not per_text:
                        text = "\n".join(_cut_specials(special_re, [text], flavour.lowercase))
                    counter.add_text(flavour.prepare(text))
            chars = report.counted or chars
        elif preset is not None:
            for batch in _text_lists(iter(corpus)):
                chars += sum(map(len, batch)) if report.enabled else 0
                if special_re:
                    batch = _split_specials(special_re, batch)
                    if flavour.lowercase:
                        batch = _split_specials(special_re, [text.lower() for text in batch])
                counter.add_pieces(flavour.prepare_all(batch), preset)
                report.update("count", chars, None)
        else:
            texts = _checked_texts(corpus)
            if report.enabled:
                texts = _counted(texts, report)
            if special_re:
                texts = _cut_specials(special_re, texts, flavour.lowercase)
            words, split = [], flavour.split
            for text in texts:
                words += split(text)
                if len(words) >= _BATCH_WORDS:
                    counter.add_words(words)
                    words = []
            counter.add_words(words)
            chars = report.counted
        report.update("count", chars, None, final=True)
        return counter

    def _preset(self):
        """The core's scanner for the flavour's pattern (core.PRESET_*), or
        None when the core has none for it (a pattern of the user's)."""
        pattern = self.flavour.pattern
        name = None if pattern is None else _SCANNED.get(pattern.pattern)
        return None if name is None else getattr(self._core, name)

    def train_from_counts(self, counts, vocab_size=None, *, progress=False):
        """Learn merges from {word: frequency} (first-appearance order
        matters); `vocab_size` as for train."""
        target = self._target(vocab_size)
        if not hasattr(counts, "items"):
            raise TypeError("train_from_counts needs a mapping {word: frequency}, not %s"
                            % type(counts).__name__)
        words, freqs = list(counts.keys()), list(counts.values())
        if not all(type(w) is str for w in words):
            for word in words:
                if not isinstance(word, str):
                    raise TypeError("word %r in counts is %s, not str" % (word, type(word).__name__))
        if not (set(map(type, freqs)) <= {int} and (not freqs or 0 <= min(freqs) <= max(freqs) <= _MAX_COUNT)):
            for word, freq in zip(words, freqs):
                _check_count("frequency of word %r" % (word,), freq, minimum=0, maximum=_MAX_COUNT)
        if self.flavour.byte_level:  # tiktoken's surrogate rule, as for text (equal words add up)
            words = [_unicode.fix_surrogates(w) for w in words]
        special_re, lowercase = self._specials_pattern(), self.flavour.lowercase
        if lowercase or (special_re is not None and special_re.search("\n".join(words))):
            # Special tokens are never trained on: a word is cut where one
            # occurs, as train cuts a text, and lowercase=True lowercases it
            # as train does (pieces of equal words add up).
            cut = [(piece, freq) for word, freq in zip(words, freqs)
                   for piece in (_cut_specials(special_re, [word], lowercase) if special_re is not None
                                 else [word.lower()]) if piece]
            words, freqs = [w for w, _ in cut], [f for _, f in cut]
        counter = self._core.WordCounter()
        counter.add_words(words, freqs)
        state = self._trained(counter, _Progress(progress), target)
        self._state, self.target_vocab_size = state, target

    # The chapter's helpers, by the names TinyTorch Module 10 (and its unit
    # test) calls them; training itself counts and merges in the cores.
    def _get_word_tokens(self, word):
        """A word's initial symbols: its characters with this flavour's
        end-of-word marker (Flavour.units).

            >>> BPETokenizer(marker="</w>")._get_word_tokens("hello")
            ['h', 'e', 'l', 'l', 'o</w>']
        """
        return self.flavour.units(word) if word else []

    @staticmethod
    def _get_pairs(word_tokens):
        """The adjacent pairs of a word's symbols, as a set.

            >>> sorted(BPETokenizer._get_pairs(["l", "o", "w "]))
            [('l', 'o'), ('o', 'w ')]
        """
        symbols = list(word_tokens)
        return set(zip(symbols, symbols[1:]))

    def _trained(self, counter, report, target_vocab_size):
        """The _State trained on a core WordCounter to target_vocab_size
        entries: base vocabulary, word table, merge loop.  The caller
        installs it."""
        flavour, core = self.flavour, self._core
        chars = () if flavour.byte_level else counter.characters()
        base = flavour.base_vocab(chars)
        symtab = core.SymbolTable(flavour.to_bytes(t) for t in base)
        base_whole = len(symtab) == len(base)  # (no token given twice)
        trainer = counter.trainer(symtab, flavour.core_units, flavour.marker, min_frequency=self.min_frequency,
                                  max_token_units=self.max_token_length or 0)
        # train() hands the counter over: this is its last reference, so its
        # memory goes back to malloc now and the merge loop's growing arrays
        # reuse it instead of faulting fresh pages (~800 fewer on Shakespeare).
        del counter
        target = max(target_vocab_size - len(self.special_tokens), 0)
        merge_ids, counts_ = self._run(trainer, symtab, target, report)
        tokens = _merged_tokens(base, merge_ids, len(symtab)) if base_whole else None
        return _State(self, symtab, merge_ids, counts_, tokens)

    def _run(self, trainer, symtab, target, report):
        """Drive the trainer in chunks: a progress report and Ctrl-C between them.

        The core runs each chunk without the GIL; chunks grow until one takes
        about CHUNK_SECONDS, so progress costs nothing measurable.  An interrupt
        propagates before the new state is installed, so the tokenizer keeps
        its previous state.
        """
        merges, counts = [], []  # [(left, right, merged)], [count]
        chunk = 16
        expected = max(target - len(symtab), 0)
        run_ids = getattr(trainer, "_run_ids", None)  # (the C core's: no 4-tuples to slice)
        while True:
            t0 = time.perf_counter()
            if run_ids is not None:
                ids, done_counts = run_ids(target, chunk)
            else:
                done = trainer.run(target, chunk)
                ids, done_counts = [m[:3] for m in done], [m[3] for m in done]
            finished = len(ids) < chunk
            merges += ids
            counts += done_counts
            if time.perf_counter() - t0 < _CHUNK_SECONDS:
                chunk = min(chunk * 2, _MAX_CHUNK)
            if report.enabled:
                report.update("merge", len(merges), expected, final=finished,
                              detail=lambda: self._last_merge(symtab, merges, counts))
            if finished:
                break
        report.end()
        return merges, counts

    def _last_merge(self, symtab, merges, counts):
        if not merges:
            return ""
        (a, b, _), count = merges[-1], counts[-1]
        last = "  last %r + %r (%d)" % (self.flavour.from_bytes(symtab.token(a)),
                                        self.flavour.from_bytes(symtab.token(b)), count)
        return last[:60]

    # -- encoding ----------------------------------------------------------------
    def _require_trained(self):
        """The current state, which must be a trained or loaded one."""
        state = self._state
        if state.symtab is None:
            raise RuntimeError("this BPETokenizer has no vocabulary yet: call train(corpus) "
                               "or train_from_counts(counts), or pybpe.load(path), first")
        return state

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """Text -> IDs, with tiktoken's rule for special-token text (as
        Encoding.encode): a special token's text is its ID where allowed
        (`allowed_special="all"` or a set of them); text holding a special
        token that is neither allowed nor excluded from the check raises
        ValueError (`disallowed_special=()` encodes it as ordinary text).

        Only the allowed tokens are looked for (tiktoken's rule, and
        Encoding's): with "<a>" allowed and "<a><b>" not, "<a><b>" is <a>
        followed by the text "<b>" (when "<a><b>" is not disallowed).

        With lowercase=True the text between special tokens is lowercased
        and looked at once more, as training does: "<S>" is the special
        token "<s>" (allowed, disallowed or plain text like "<s>")."""
        state = self._require_trained()
        _check_text(text)
        return self._encode(state, text, allowed_special, disallowed_special)

    def _encode(self, state, text, allowed_special, disallowed_special):
        # encode on a given state (a batch reads it once for all its texts).
        allowed = self._allowed(allowed_special, disallowed_special, text)
        if self.flavour.lowercase and self.special_tokens:
            disallowed = special_sets(allowed_special, disallowed_special, self.special_tokens)[1]
            ids = []
            for plain, special in _segments(text, allowed):
                if plain:
                    plain = plain.lower()
                    check_disallowed(plain, disallowed)
                    ids += self._encode_with_specials(state, plain, allowed)
                if special is not None:
                    ids.append(state.special_ids[special])
            return ids
        return self._encode_with_specials(state, text, allowed)

    def _encode_with_specials(self, state, text, allowed):
        # `text`'s IDs, the `allowed` special tokens (checked already) as theirs.
        if not allowed:
            return self._encode_ordinary(state, text)
        ids = []
        for plain, special in _segments(text, allowed):
            ids += self._encode_ordinary(state, plain)
            if special is not None:
                ids.append(state.special_ids[special])
        return ids

    def _allowed(self, allowed_special, disallowed_special, text=None):
        """The allowed special tokens (a frozenset) after tiktoken's checks
        (pybpe/specials.py); with `text`, ValueError when it holds a
        disallowed one.  Naming a token this tokenizer lacks is an error."""
        allowed, disallowed = special_sets(allowed_special, disallowed_special, self.special_tokens)
        unknown = (allowed | disallowed) - set(self.special_tokens)
        if unknown:
            raise ValueError("not special tokens of this tokenizer: %s" % sorted(unknown))
        if text is not None:
            check_disallowed(text, disallowed)
        return allowed

    def _encode_ordinary(self, state, text):
        flavour = self.flavour
        if flavour.pattern is None and self._core.COMPILED and len(text) >= _ONE_CALL_MIN_CHARS:
            # str.split() or the whole text: C splits, maps, merges and
            # caches repeated words in one call without the GIL (~7x faster
            # than the per-word path on a cold cache).  Short texts, and the
            # Python core, keep the per-word path: its word cache outlives
            # the call, and a call has a fixed cost of ~10 us in C.
            return state.merger.encode_text(state.symtab, state.units, flavour.marker, 0,
                                            flavour.prepare(text), split=flavour.pretokenizer == WHITESPACE)
        words = flavour.split(text)
        cache = state.word_cache
        out = []
        try:  # warm text: every word is cached; a miss (or a clear meanwhile) falls through
            for word in words:
                out += cache[word]
            return out
        except KeyError:
            pass
        # This call's words are looked up in `found`, which holds every one of
        # them, never in the shared cache: clearing the cache when it is full,
        # or another thread doing so, must not drop an entry this call needs.
        get = cache.get
        found = {word: get(word) for word in dict.fromkeys(words)}
        missing = [word for word, ids in found.items() if ids is None]
        if missing:
            new = dict(zip(missing, self._encode_words(state, missing)))
            found.update(new)
            if len(cache) + len(new) > WORD_CACHE_LIMIT:
                cache.clear()
            if len(new) <= WORD_CACHE_LIMIT:  # (one huge call is not kept)
                cache.update(new)
        out = []
        for word in words:
            out += found[word]
        return out

    def _encode_words(self, state, words):
        """Words -> lists of IDs, in one core call (the GIL is released in C)."""
        lookup = state.symtab.lookup
        units, mark = self.flavour.core_units, self.flavour.marker_bytes
        no_symbol, unk = self._core.NO_SYMBOL, 0
        unit_id = {}
        symbols = []
        for word in words:
            row = []
            for unit in word_units(word, units, mark):  # the flavour's units, as bytes
                sid = unit_id.get(unit)
                if sid is None:
                    sid = lookup(unit)
                    unit_id[unit] = sid = no_symbol if sid < 0 else sid
                row.append(sid)
            symbols.append(row)
        encoded = state.merger.encode_words(symbols)
        return [[unk if s == no_symbol else s for s in row] for row in encoded]

    def encode_batch(self, texts, *, num_threads=None, allowed_special=frozenset(), disallowed_special="all",
                     padding=False, truncation=False, max_length=None, pad_id=None, add_special_tokens=False,
                     return_attention_mask=None, return_numpy=False, padding_side="right"):
        """Encode many texts (a list of str; a single str is a TypeError);
        special tokens as in encode.  Threads overlap the C calls, which run
        without the GIL.  On the Python backend the texts are encoded one
        after another, as Encoding.encode_batch does: pure-Python work holds
        the GIL, and threads fighting over it are slower than one.

        Model-ready batches: with any of padding (True / "longest" /
        "max_length"), truncation, max_length, pad_id, add_special_tokens
        (<bos> ... <eos>), return_attention_mask, return_numpy (int64
        arrays) or padding_side ("right" / "left") the result is a dict
        {"input_ids", "attention_mask"}, as a Hugging Face tokenizer gives
        (pybpe/_batch.py; README "Model-ready batches").  Padding uses
        pad_id, by default the tokenizer's <pad>, else its <eos>
        (special_tokens=["<pad>", "<bos>", "<eos>"]).  Without them the result is the plain list of ID
        lists."""
        options = dict(padding=padding, truncation=truncation, max_length=max_length, pad_id=pad_id,
                       add_special_tokens=add_special_tokens, return_attention_mask=return_attention_mask,
                       return_numpy=return_numpy, padding_side=padding_side)
        state = self._require_trained()  # once: one batch, one vocabulary, whatever trains meanwhile
        rows = self._encode_batch(state, texts, num_threads, allowed_special, disallowed_special)
        if not _batch.wanted(**options):
            return rows
        size = len(state.vocab)

        def check_id(i, what):
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < size:
                raise InvalidTokenError("%s=%r is not a token ID (this vocabulary has IDs 0..%d)"
                                        % (what, i, size - 1))
        ids = state.special_ids
        pad = ids.get("<pad>", ids.get("<eos>"))  # as Encoding.encode_batch
        return _batch.shape(rows, bos_id=ids.get("<bos>"), eos_id=ids.get("<eos>"), default_pad_id=pad,
                            check_id=check_id, **options)

    @property
    def pad_id(self):
        """The ID of the special token "<pad>", or None (not trained with it)."""
        return self._state.special_ids.get("<pad>")

    @property
    def bos_id(self):
        """The ID of the special token "<bos>", or None."""
        return self._state.special_ids.get("<bos>")

    @property
    def eos_id(self):
        """The ID of the special token "<eos>", or None."""
        return self._state.special_ids.get("<eos>")

    def _encode_batch(self, state, texts, num_threads, allowed_special, disallowed_special):
        if isinstance(texts, (str, bytes)):
            raise TypeError("texts must be a list of str, not a single %s (wrap it: [text])"
                            % type(texts).__name__)
        texts = list(texts)
        for index, text in enumerate(texts):
            _check_text(text, "texts[%d]" % index)
        self._allowed(allowed_special, disallowed_special)  # bad arguments fail before any work
        def encode(text):
            return self._encode(state, text, allowed_special, disallowed_special)
        num_threads = _workers.cpus() if num_threads is None else _workers.checked(num_threads)
        if num_threads == 1 or len(texts) < 2 or not self._core.COMPILED:
            return [encode(t) for t in texts]
        # The calling thread and the helpers that live across calls
        # (pybpe/_workers.py), one text per item: a thread pool made per call
        # cost ~0.7 ms of wall time to start and join on this 2-core machine.
        return _workers.run(encode, texts, num_threads)

    def _tokens(self, state, ids, skip_special_tokens=False):
        """The token of each ID (str, or bytes at byte level; a special token
        as its UTF-8 there): TypeError naming the index for an ID that is no
        integer (NumPy integers and arrays are IDs), InvalidTokenError for
        one that is no token (out of range or negative)."""
        if isinstance(ids, (str, bytes)):
            raise TypeError("ids must be a sequence of int token IDs, not a %s" % type(ids).__name__)
        vocab = state.vocab
        size = len(vocab)
        first_special = size - len(state.special_ids)  # special tokens come last
        ids = ids.tolist() if hasattr(ids, "tolist") else ids  # a NumPy array: Python ints in one call
        tokens = []
        for index, i in enumerate(ids):
            if type(i) is not int:
                i = _check_id(i, index)
            if not 0 <= i < size:
                raise InvalidTokenError("ids[%d] = %d is not a token ID (this vocabulary has IDs 0..%d)"
                                        % (index, i, size - 1))
            if i >= first_special:
                if skip_special_tokens:
                    continue
                if self.flavour.byte_level:
                    tokens.append(vocab[i].encode("utf-8"))
                    continue
            tokens.append(vocab[i])
        return tokens

    def decode(self, ids, *, skip_special_tokens=False):
        """IDs -> text: the flavour joins the tokens (README, "Flavours").
        skip_special_tokens=True leaves the special tokens out (<pad>, <bos>,
        <eos>...).  An ID that is not in the vocabulary raises
        pybpe.InvalidTokenError (a KeyError and a ValueError), as
        Encoding.decode does.  NumPy IDs and arrays are IDs too."""
        state = self._require_trained()
        return self.flavour.join(self._tokens(state, ids, skip_special_tokens))

    def decode_batch(self, batch, *, skip_special_tokens=False):
        """decode over a list of ID lists (or a 2-D NumPy array, such as a
        padded batch from encode_batch)."""
        return [self.decode(ids, skip_special_tokens=skip_special_tokens) for ids in batch]

    def decode_with_offsets(self, ids):
        """(text, offsets): decode(ids), and per token the index in the text
        of the character it starts in -- Encoding.decode_with_offsets's
        meaning.  At byte level a token that starts inside a multi-byte
        character is attributed to that character, and the text must be
        valid UTF-8 (as tiktoken's).  In the flavours with an end-of-word
        marker the text is decode's (words joined by single spaces) and an
        offset is where the token's own text starts in it.

            >>> tok = BPETokenizer(vocab_size=25)
            >>> tok.train(["low", "low", "lower", "newest", "widest"])
            >>> tok.decode_with_offsets(tok.encode("lowest  newest"))
            ('lowest newest', [0, 2, 4, 7, 8, 9, 11])
        """
        state = self._require_trained()
        tokens = self._tokens(state, ids)
        if self.flavour.byte_level:
            return byte_offsets(tokens)
        return text_offsets(self.flavour.stream_joiner(), tokens)

    def stream_decoder(self):
        """A StreamDecoder: feed(id) one ID at a time, then finish(); each call
        returns the text that is complete (whole characters, and in the
        flavours with an end-of-word marker the space between two words once
        the second starts).  Together they always equal decode(ids).

            >>> tok = BPETokenizer(vocab_size=25)
            >>> tok.train(["low", "low", "lower", "newest", "widest"])
            >>> decoder = tok.stream_decoder()
            >>> [decoder.feed(i) for i in tok.encode("low lowest")], decoder.finish()
            (['low', ' lo', 'we', 'st'], '')
        """
        state = self._require_trained()
        vocab, size, byte_level = state.vocab, len(state.vocab), self.flavour.byte_level

        def token_of(i, index):
            if type(i) is not int:
                i = _check_id(i, index)
            if not 0 <= i < size:
                raise InvalidTokenError("ids[%d] = %d is not a token ID (this vocabulary has IDs 0..%d)"
                                        % (index, i, size - 1))
            token = vocab[i]
            return token.encode("utf-8") if byte_level and isinstance(token, str) else token
        return StreamDecoder(token_of, self.flavour.stream_joiner())

    def decode_bytes(self, ids):
        """Byte level: IDs -> the raw bytes (no UTF-8 repair)."""
        if not self.flavour.byte_level:
            raise ValueError("decode_bytes is for byte-level tokenizers; use decode")
        state = self._require_trained()
        return b"".join(t if isinstance(t, bytes) else t.encode("utf-8") for t in self._tokens(state, ids))

    def to_encoding(self, name=None):
        """A byte-level tokenizer as a tiktoken-style `pybpe.Encoding` with the same IDs.

        The Encoding applies this tokenizer's merge list (lowest merge rank
        first).  That equals the rank-order replay `encode` does whenever no two
        merges build the same token, which is checked here: a list where they do
        (possible only in contrived corpora) raises ValueError instead of
        quietly giving different IDs.
        """
        from .encoding import Encoding  # late: the tiktoken pillar loads only when used (import pybpe stays light)

        state = self._require_trained()
        if not self.flavour.byte_level:
            raise ValueError("to_encoding needs a byte-level tokenizer (byte_level=True)")
        pretokenizer = self.flavour.pretokenizer
        if pretokenizer == "whitespace" or self.flavour.lowercase:
            raise ValueError("an Encoding splits with a regex and keeps case: train with "
                             "pretokenizer=<preset or regex> or None, and lowercase=False")
        merged = [m for _, _, m in state.merge_ids]
        if len(set(merged)) != len(merged):
            raise ValueError("two merges of this tokenizer build the same token, which an Encoding's "
                             "merge-list rule cannot replay exactly")
        pat_str = patterns.WHOLE_TEXT if pretokenizer is None else patterns.resolve(pretokenizer)
        return Encoding(name or "pybpe-%d" % len(state.vocab), pat_str=pat_str,
                        mergeable_ranks={t: i for i, t in enumerate(state.symtab.tokens())},
                        special_tokens=dict(state.special_ids),
                        merges=[(a, b) for a, b, _ in state.merge_ids], backend=self.backend,
                        pattern_source=getattr(self.flavour.pattern, "source", None))

    # -- saving and loading ----------------------------------------------------------
    def config(self):
        return dict(vocab_size=self.target_vocab_size, min_frequency=self.min_frequency,
                    max_token_length=self.max_token_length, special_tokens=list(self.special_tokens),
                    **self.flavour.config())

    def save(self, path):
        """Write the tokenizer as versioned JSON (pybpe/model_file.py) to a path, atomically (a
        temporary file committed at the end; symlinks written through, a pipe
        or device such as /dev/stdout written as a stream), or to a binary
        file object (sys.stdout.buffer)."""
        state = self._require_trained()
        model_file.write(path, self.config(), state.symtab.tokens(), self.flavour,
                         [(a, b) for a, b, _ in state.merge_ids], state.merge_counts, self._unicode_version())

    def _unicode_version(self):
        """The Unicode version of the tables the pre-tokenizer cuts words
        with (pybpe._unicode.unicode_version), or None for str.split() and
        the whole-text pre-tokenizer, whose words no such table decides."""
        pattern = self.flavour.pattern
        return None if pattern is None else _unicode.unicode_version(pattern.pattern)

    @classmethod
    def load(cls, path, *, backend=None):
        """Read a file written by BPETokenizer.save.  (pybpe.load reads the
        other formats too, as Encodings; this one insists on a tokenizer.)"""
        tok = load(path, backend=backend)
        if type(tok).__name__ == "WordPieceTokenizer":
            raise FormatError("%s: a WordPieceTokenizer file, not a BPETokenizer one: call pybpe.load(path) "
                              "or pybpe.WordPieceTokenizer.load(path)" % os.fspath(path))
        if not isinstance(tok, BPETokenizer):
            raise FormatError("%s: not a BPETokenizer file but a vocabulary pybpe.load reads as an Encoding; "
                              "call pybpe.load(path) for that" % os.fspath(path))
        return tok

    def __repr__(self):
        state = self._state
        summary = ("%d tokens, %d merges" % (len(state.vocab), len(state.merges))
                   if state.symtab is not None else "untrained")
        return "BPETokenizer(%s, backend=%r, %s)" % (
            ", ".join("%s=%r" % kv for kv in self.config().items()), self.backend, summary)


class _State:
    """One trained or loaded vocabulary of a BPETokenizer with everything
    derived from it, built whole before the tokenizer installs it (one
    assignment to `_state`; see "state" in BPETokenizer).  Never changed once
    built, except the word cache, which only ever holds what the state
    computes anyway.  `_State(tok)` is the untrained state."""

    __slots__ = ("symtab", "merge_ids", "merge_counts", "merger", "units", "special_ids",
                 "vocab", "merges", "id_to_token", "token_to_id", "word_cache")

    def __init__(self, tok, symtab=None, merge_ids=(), merge_counts=(), tokens=None):
        flavour, specials = tok.flavour, tok.special_tokens
        self.symtab = symtab                      # core SymbolTable: ID <-> bytes of every regular token
        self.merge_ids = list(merge_ids)          # [(left, right, merged)] by rank
        self.merge_counts = list(merge_counts)    # the count each merge had when it was chosen
        self.units = flavour.core_units
        self.word_cache = {}                      # word -> IDs (see _encode_ordinary)
        if symtab is None:
            self.merger, self.special_ids = None, {}
            self.vocab, self.merges, self.id_to_token, self.token_to_id = [], [], {}, {}
            return
        if tokens is None:  # (else every regular token by ID, as the table holds it)
            tokens = [flavour.from_bytes(t) for t in symtab.tokens()]
        self.merger = tok._core.Merger(self.merge_ids)
        self.special_ids = {s: len(tokens) + i for i, s in enumerate(specials)}
        self.vocab = tokens + list(specials)
        self.merges = [(tokens[a], tokens[b]) for a, b, _ in self.merge_ids]
        self.id_to_token = dict(enumerate(self.vocab))
        # Backwards, so a token met twice keeps its first ID (the last assignment).
        self.token_to_id = dict(zip(reversed(self.vocab), range(len(self.vocab) - 1, -1, -1)))


def _merged_tokens(base, merge_ids, size):
    """The tokens of a symbol table that started as `base` (IDs 0, 1, ...)
    and then grew by these merges alone, in ID order: a merge whose ID is
    the next one appended its left + right -- the bytes the trainer interned,
    so, decoded, the two decoded parts joined (each is whole characters).
    A merge whose result was already there added nothing.  Built here
    because exporting and decoding the table's 8,000 tokens was ~2 ms of
    training Shakespeare; None when the IDs do not follow (the caller then
    exports the table)."""
    tokens = list(base)
    append = tokens.append
    for a, b, merged in merge_ids:
        if merged == len(tokens):
            append(tokens[a] + tokens[b])
        elif merged > len(tokens):
            return None
    return tokens if len(tokens) == size else None


# Whitespace splitting: texts are joined into batches of about this many
# characters per core call (big enough that the call overhead is noise, small
# enough that a streamed corpus never sits in memory whole).  Regex splitting:
# words handed to the core per call.
_BATCH_CHARS = 1 << 20
# Texts at least this long are encoded by Merger.encode_text in one core call
# (pretokenizer "whitespace" or None, C backend); shorter ones word by word.
_ONE_CALL_MIN_CHARS = 512
_BATCH_WORDS = 1 << 16
# The patterns the core has scanners for (csrc/pretok.c, declared in text.h): pattern -> the name
# of its constant in pybpe.core (gpt2's possessive spelling cuts the same).
_SCANNED = {patterns.GPT2: "PRESET_GPT2", patterns.GPT2_POSSESSIVE: "PRESET_GPT2",
            patterns.CL100K: "PRESET_CL100K", patterns.O200K: "PRESET_O200K"}

# Merges per trainer call grow (x2) while a call takes less than this; a
# progress line and a KeyboardInterrupt check happen between calls.
_CHUNK_SECONDS = 0.05
_MAX_CHUNK = 1 << 16
# Counting reports its progress once per this many characters (see _counted).
_REPORT_CHARS = 1 << 20
# Progress not on a terminal: one plain line this often (and one at the end).
_PLAIN_PROGRESS_SECONDS = 5.0


class _Progress:
    """train's progress report (see BPETokenizer.train): nothing, lines on
    stderr (redrawn on a terminal, plain lines elsewhere: no "\r" or
    terminal codes in a log file), or calls of a callable."""

    def __init__(self, progress):
        self.enabled = bool(progress)
        self.callback = progress if callable(progress) else None
        self.tty = self.enabled and self.callback is None and _isatty(sys.stderr)
        self.every = 0.1 if self.tty else _PLAIN_PROGRESS_SECONDS
        self.start = self.last = time.perf_counter()
        self.drawn = False
        self.counted = 0  # characters counted (see _counted)

    def update(self, phase, done, total, *, final=False, detail=None):
        if not self.enabled:
            return
        if self.callback is not None:
            self.callback(phase, done, total)
            return
        now = time.perf_counter()
        if not final and now - self.last < self.every:
            return
        self.last = now
        seconds = now - self.start
        if phase == "count":
            line = "counted %d characters (%.1f MB/s)" % (done, done / seconds / 1e6 if seconds > 0 else 0.0)
        else:
            line = "merges %d/%d  %.0f/s%s" % (done, total, done / seconds if seconds > 0 else 0.0,
                                               detail() if detail else "")
        if self.tty:
            sys.stderr.write("\r%s\x1b[K" % line)
            self.drawn = True
            if final and phase == "count":  # the count line stays; merging draws below it
                sys.stderr.write("\n")
                self.drawn = False
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
        if final:
            self.start = self.last = time.perf_counter()  # the next phase's clock

    def end(self):
        if self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.drawn = False


def _counted(texts, report):
    """The texts, each one's length added to report.counted as it passes,
    reported once per _REPORT_CHARS characters: once per text, a progress
    callable was called for every line of a file (training 258 MB of lines
    took 4x as long with one, and 2x with progress=True)."""
    due = _REPORT_CHARS
    for text in texts:
        report.counted += len(text)
        if report.counted >= due:
            report.update("count", report.counted, None)
            due = report.counted + _REPORT_CHARS
        yield text


def _isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def load(path, *, backend=None):
    """Read a tokenizer file, whichever of the formats pybpe reads it is.

    A file written by BPETokenizer.save gives a BPETokenizer; one written by
    WordPieceTokenizer.save, or a tokenizer.json with a WordPiece model, a
    WordPieceTokenizer (pybpe/wordpiece.py).  The others,
    recognised by their content, give an Encoding: a Hugging Face
    tokenizer.json (as load_hf_tokenizer), a GPT-2 vocab.json or merges.txt
    with its partner beside it (vocab.json + merges.txt, or encoder.json +
    vocab.bpe: as load_gpt2_bpe), and a .tiktoken rank file when it is one of
    OpenAI's (as get_encoding).  For one that cannot be an encoding by itself
    (a .tiktoken file of one's own, a vocab.json alone) the FormatError says
    which loader to call.

    Raises FormatError (a ValueError) naming the file and the problem for
    anything corrupt, truncated or hostile; a failed load changes nothing.
    """
    # late: the tiktoken pillar loads only when used (import pybpe stays light)
    from . import formats, registry

    path = os.fspath(path)
    kind, content = formats.sniff(path)
    if _is_wordpiece(kind, content):
        from .wordpiece import WordPieceTokenizer  # late: loaded only when used
        return WordPieceTokenizer.load(path, backend=backend)
    if kind == "pybpe":
        return _from_document(content, path, backend)
    if kind == "tiktoken":
        return registry.load_rank_file(path, content, backend)
    return formats.load_sniffed(path, kind, content, backend)


def _is_wordpiece(kind, doc):
    """A WordPieceTokenizer.save file, or a tokenizer.json with a WordPiece model."""
    if kind == "pybpe":
        return doc.get("format") == "pybpe.WordPieceTokenizer"
    model = doc.get("model") if kind == "hf" else None
    return isinstance(model, dict) and model.get("type") == "WordPiece"


def _from_document(doc, path, backend):
    # A BPETokenizer from a parsed model file: pybpe/model_file.py checks the
    # format; what needs the tokenizer (its config, flavour and core) is here.
    def fail(problem):
        raise FormatError("%s: %s" % (path, problem))

    config, vocab, merges, counts = model_file.read_header(doc, path)
    pretokenizer = config.get("pretokenizer")
    if (isinstance(pretokenizer, str) and pretokenizer != WHITESPACE and pretokenizer not in patterns.PRESETS
            and not _bounded.is_trusted(pretokenizer)):
        try:  # before BPETokenizer compiles it: compiling itself can run away
            _bounded.check_pattern(pretokenizer)
        except ValueError as exc:
            fail("the pretokenizer pattern is refused: %s" % exc)
    try:
        tok = BPETokenizer._from_config(config, backend, pattern_source=path)
    except (TypeError, ValueError) as exc:
        fail("bad config: %s" % exc)
    flavour = tok.flavour
    token_encoding = doc.get("token_encoding", "latin-1" if flavour.byte_level else "utf-8")
    if token_encoding not in ("latin-1", "utf-8") or (flavour.byte_level and token_encoding != "latin-1"):
        fail("\"token_encoding\" must be \"latin-1\" (tokens as bytes) or, for character tokens, "
             "\"utf-8\", not %s" % reprlib.repr(token_encoding))
    try:
        tokens = [t.encode("latin-1") if token_encoding == "latin-1" else flavour.to_bytes(t) for t in vocab]
    except UnicodeEncodeError:
        fail("a vocab entry is not a latin-1 string of bytes, as \"token_encoding\" says")
    if not flavour.byte_level and token_encoding == "latin-1":
        try:
            vocab = [flavour.from_bytes(t) for t in tokens]
        except UnicodeDecodeError:
            fail("a character vocab entry is not UTF-8 (lone surrogates allowed)")
    if len(set(tokens)) != len(tokens):
        fail("\"vocab\" has duplicate entries")
    if flavour.byte_level and tokens[:256] != [bytes([b]) for b in range(256)]:
        fail("a byte-level vocab must start with the 256 single bytes in order")
    if not flavour.byte_level and vocab[:1] != [UNK]:
        fail("a character-level vocab must start with %r (ID 0 encodes unknown characters)" % UNK)
    symtab = tok._core.SymbolTable(tokens)
    merge_ids = []
    for rank, (merge, count) in enumerate(zip(merges, counts)):
        if (not isinstance(merge, list) or len(merge) != 2
                or not all(type(i) is int and 0 <= i < len(tokens) for i in merge)):
            fail("merges[%d] must be a pair of vocab IDs, not %s" % (rank, reprlib.repr(merge)))
        if type(count) is not int or not 0 <= count <= _MAX_COUNT:
            fail("merge_counts[%d] must be an integer in 0..2**64-1" % rank)
        merged = symtab.lookup(tokens[merge[0]] + tokens[merge[1]])
        if merged < 0:
            fail("merges[%d] makes %s, which is not in the vocab"
                 % (rank, reprlib.repr(vocab[merge[0]] + vocab[merge[1]])))
        merge_ids.append((merge[0], merge[1], merged))
    model_file.check_unicode_version(doc.get("unicode_version"), tok._unicode_version(), path)
    tok._state = _State(tok, symtab, merge_ids, counts)
    return tok


# -- argument checks (one place, clear messages) -------------------------------------
def _check_count(name, value, *, minimum, maximum=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be an int, not %s" % (name, type(value).__name__))
    if value < minimum:
        raise ValueError("%s must be >= %d, not %d" % (name, minimum, value))
    if maximum is not None and value > maximum:
        raise ValueError("%s must be <= %d, not %d" % (name, maximum, value))
    return value


def _check_text(text, what="text"):
    if not isinstance(text, str):
        raise TypeError("%s must be str, not %s" % (what, type(text).__name__))


def _checked_texts(corpus):
    if isinstance(corpus, (str, bytes)):
        raise TypeError("corpus must be an iterable of str (a list of texts, a file...), "
                        "not a single %s" % type(corpus).__name__)
    for index, text in enumerate(corpus):
        _check_text(text, "corpus[%d]" % index)
        yield text


def _text_lists(texts):
    """An iterable of str -> lists of its items of >= _BATCH_CHARS characters
    together (the last may be shorter).  Items are taken 1024 at a time and
    checked by str.join in C; a bad item's error names its index."""
    pending, size, base = [], 0, 0
    while True:
        chunk = list(islice(texts, 1024))
        if not chunk:
            break
        try:
            size += len("".join(chunk))
        except TypeError:
            for k, text in enumerate(chunk):
                _check_text(text, "corpus[%d]" % (base + k))
            raise
        base += len(chunk)
        pending += chunk
        if size >= _BATCH_CHARS:
            yield pending
            pending, size = [], 0
    if pending:
        yield pending


def _segments(text, allowed):
    """(plain text, special token or None) pairs that make up `text`, the
    `allowed` special tokens (a frozenset) found longest first, left to
    right; the last pair's token is None."""
    start = 0
    if allowed:
        for match in special_regex(frozenset(allowed)).finditer(text):
            yield text[start:match.start()], match.group()
            start = match.end()
    yield text[start:], None


def _cut_specials(special_re, texts, lowercase):
    """The pieces of `texts` between special tokens, which are never trained
    on.  With lowercase=True each piece is lowercased and cut once more:
    "<S>" is no special token, but the "<s>" it becomes is one, and must not
    become a regular token too."""
    for text in texts:
        for piece in special_re.split(text):
            if lowercase:
                yield from special_re.split(piece.lower())
            else:
                yield piece


def _split_specials(special_re, texts):
    """The texts with special tokens cut out (each text split where one
    occurs, as special_re.split does).  One search over all of them first:
    a token in any text is a match in their concatenation, so when that
    finds none, no text has one."""
    if special_re.search("".join(texts)) is None:
        return texts
    return [piece for text in texts for piece in special_re.split(text)]


def _file_batches(f):
    """Read a text file in _BATCH_CHARS pieces, each cut just after its last
    "\n" (whitespace, so no word is cut; the rest opens the next piece).
    Counting these pieces counts what iterating the file's lines counts, with
    no per-line Python work."""
    return _line_batches(f, "\n")


def _line_batches(f, newline):
    """The batches of _file_batches, of str (newline "\n") or of bytes
    (newline b"\n": never cut inside a character, since no byte of a
    multi-byte UTF-8 character is below 0x80)."""
    carry = newline[:0]
    while True:
        piece = f.read(_BATCH_CHARS)
        if not isinstance(piece, type(newline)):
            raise TypeError("corpus file must be opened in text mode, not %s" % type(piece).__name__)
        if not piece:
            break
        cut = piece.rfind(newline) + 1
        if cut == 0:  # one long line: keep reading
            carry += piece
            continue
        yield carry + piece[:cut]
        carry = piece[cut:]
    if carry:
        yield carry


def _utf8_buffer(f, flavour):
    """The binary file under the text file `f` when counting its bytes counts
    exactly the words that reading `f` would (None otherwise): `f` is a plain
    TextIOWrapper, UTF-8 (errors "strict" or "surrogatepass"), not read from
    yet, seekable, and the flavour's prepare() changes nothing (no lowercasing;
    at byte level no surrogates, so "strict" only).  Newline translation is
    the one difference, and it moves no str.split() boundary: "\r\n", "\r"
    and "\n" are all whitespace.  The seek drops what the wrapper may have
    decoded ahead, so afterwards `f` is at its end, as after reading it."""
    if type(f) is not io.TextIOWrapper or flavour.lowercase:
        return None
    allowed = ("strict",) if flavour.byte_level else ("strict", "surrogatepass")
    try:
        if (codecs.lookup(f.encoding).name != "utf-8" or f.errors not in allowed
                or not f.seekable() or f.tell() != 0):
            return None
        f.seek(0)
        return f.buffer
    except (AttributeError, LookupError, OSError, ValueError):
        return None  # (no buffer, closed, or tell() refused mid-iteration)


def _byte_views(raw):
    """_file_batches on a binary file, as (buffer, end): the batch is
    buffer[:end], about _BATCH_CHARS bytes cut just after its last b"\n"
    (never inside a character: no byte of a multi-byte UTF-8 character is
    below 0x80).  One buffer serves every batch (read into with readinto,
    the rest after the cut moved to its front), so each batch is valid until
    the next one is asked for: a new bytes object per batch, and its slice
    and concatenation with the rest, were two copies of the file and ~1 MB
    of fresh memory each (~2.5 ms of counting Shakespeare's 9.6 MB)."""
    buf = bytearray(max(_BATCH_CHARS, 1))
    view, have = memoryview(buf), 0
    while True:
        if have == len(buf):  # one line longer than the buffer: a bigger one
            buf = buf + bytes(len(buf))
            view = memoryview(buf)
        got = raw.readinto(view[have:])
        if not got:
            break
        end = have + got
        cut = buf.rfind(b"\n", have, end) + 1
        if cut == 0:  # no line ends here: keep reading
            have = end
            continue
        yield buf, cut
        have = end - cut
        view[:have] = bytes(view[cut:end])
    if have:
        yield buf, have


def _check_id(value, index=None):
    """`value` as an int ID: an int, or an integer of another type (NumPy's);
    TypeError naming the index otherwise (bool and float included)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        where = "" if index is None else "ids[%d] " % index
        raise TypeError("%smust be an int token ID, not %s" % (where, type(value).__name__))
    return operator.index(value)


def _check_specials(special_tokens):
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a list of str, not a single str")
    if isinstance(special_tokens, (set, frozenset)):
        # Their order gives their IDs, and a set's order changes from run
        # to run (the hash seed): the same training would number them anew.
        raise TypeError("special_tokens must be in an order (a list or tuple: the order gives their IDs), "
                        "not a %s" % type(special_tokens).__name__)
    specials = list(dict.fromkeys(special_tokens))
    for s in specials:
        if not isinstance(s, str) or not s:
            raise TypeError("special tokens must be non-empty str, not %r" % (s,))
    return specials
