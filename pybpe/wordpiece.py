"""WordPiece, BERT's tokenizer, beside BPE on the same core (the C book's section 11.8).

Training is bottom-up merging over the same word table as BPETokenizer, but
each step takes the pair with the highest likelihood score
count(ab) / (count(a) * count(b)) rather than the most frequent pair, ties
to the pair met first (BPE's rule).  Encoding needs no merge list:
each word is cut greedily, longest vocabulary entry first, from the left.

    >>> tok = WordPieceTokenizer(vocab_size=30, special_tokens=["[UNK]"])
    >>> tok.train(["low low lower newest widest"])
    >>> tok.merges[:4]      # w and ##i occur once, together: score 1/(1*1)
    [('w', '##i'), ('wi', '##d'), ('##s', '##t'), ('l', '##o')]
    >>> tok.merge_scores[:4]   # (count(ab), count(a), count(b))
    [(1, 1, 1), (1, 1, 1), (2, 2, 2), (3, 3, 3)]
    >>> tok.tokenize("Lowest widest!"), tok.encode("lowest")
    (['low', '##e', '##st', 'wide', '##st', '[UNK]'], [23, 12, 21])

How the word table spells the continuation prefix: a word's first character
is its own symbol ("l") and every later character carries the prefix ("##o"),
as in BERT's vocab.txt, so "l" and "##l" are different symbols with their
own counts.  A merge of (a, b) makes a + b without b's prefix: ("l", "##o")
-> "lo", ("##o", "##w") -> "##ow"; the right symbol of a pair is never the
first of its word, so it always has the prefix.  The base vocabulary is the
special tokens, then every character seen (sorted), then the prefixed
characters seen after a word's first (sorted), so any word made of known
characters has an encoding.

Words come from BERT's normalizer and pre-tokenizer (pybpe/_bert.py), with
its options: lowercase, strip_accents, clean_text, handle_chinese_chars.
Encoding gives the IDs Hugging Face tokenizers' WordPiece model gives with
BertNormalizer and BertPreTokenizer on the same vocabulary
(tests/test_wordpiece.py).  Left out: offsets, truncation and padding, and
the decoder's clean-up of spaces before punctuation ("a ." stays "a .").

The files: save/load (pybpe's versioned JSON, with the merges), BERT's
vocab.txt (load_vocab_txt / dump_vocab_txt) and Hugging Face's tokenizer.json
with a WordPiece model (load_hf_wordpiece / dump_hf_wordpiece).
"""
import json
import operator
import os
import re
import reprlib
from collections import Counter
from itertools import islice

from . import _bert, core
from ._atomic import atomic_write
from .errors import FormatError
from .formats import open_vocabulary_file
from .model_file import _dump_json

__all__ = ["WordPieceTokenizer", "DEFAULT_SPECIAL_TOKENS", "load_vocab_txt", "dump_vocab_txt",
           "load_hf_wordpiece", "dump_hf_wordpiece"]

# BERT's special tokens (the order of Hugging Face's examples: [UNK] = 0).
DEFAULT_SPECIAL_TOKENS = ("[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]")
FORMAT_NAME = "pybpe.WordPieceTokenizer"
FORMAT_VERSION = 1
_MAX_COUNT = 2**64 - 1
_BATCH_CHARS = 1 << 20  # texts normalized and split per call while training


class WordPieceTokenizer:
    """BERT's WordPiece: likelihood-scored training, greedy longest-match encoding.

    Options as BERT (and Hugging Face's BertNormalizer / WordPiece) name them:
    `unk_token` must be one of `special_tokens`; a word longer than
    `max_input_chars_per_word` characters, or one with a character the
    vocabulary lacks, is one `unk_token`.  `backend` picks the core
    ("auto" | "c" | "python"), as for BPETokenizer.
    """

    def __init__(self, vocab_size=30000, *, min_frequency=1, special_tokens=DEFAULT_SPECIAL_TOKENS,
                 unk_token="[UNK]", continuing_subword_prefix="##", max_input_chars_per_word=100,
                 lowercase=True, strip_accents=None, clean_text=True, handle_chinese_chars=True,
                 backend=None):
        self.target_vocab_size = _check_int("vocab_size", vocab_size, 0)
        self.min_frequency = _check_int("min_frequency", min_frequency, 1)
        self.max_input_chars_per_word = _check_int("max_input_chars_per_word", max_input_chars_per_word, 1)
        if isinstance(special_tokens, str):
            raise TypeError("special_tokens must be a list of str, not a single str")
        if isinstance(special_tokens, (set, frozenset)):  # (as BPETokenizer: the order gives the IDs)
            raise TypeError("special_tokens must be in an order (a list or tuple: the order gives their IDs), "
                            "not a %s" % type(special_tokens).__name__)
        self.special_tokens = list(dict.fromkeys(special_tokens))
        for token in self.special_tokens:
            if not isinstance(token, str) or not token:
                raise TypeError("special tokens must be non-empty str, not %r" % (token,))
        if not isinstance(unk_token, str) or unk_token not in self.special_tokens:
            raise ValueError("unk_token %r must be one of special_tokens %r" % (unk_token, self.special_tokens))
        self.unk_token = unk_token
        if not isinstance(continuing_subword_prefix, str) or not continuing_subword_prefix:
            raise ValueError("continuing_subword_prefix must be a non-empty str, not %r"
                             % (continuing_subword_prefix,))
        self.prefix = continuing_subword_prefix
        for name, value in (("lowercase", lowercase), ("clean_text", clean_text),
                            ("handle_chinese_chars", handle_chinese_chars)):
            if not isinstance(value, bool):
                raise TypeError("%s must be True or False, not %r" % (name, value))
        if strip_accents is not None and not isinstance(strip_accents, bool):
            raise TypeError("strip_accents must be True, False or None, not %r" % (strip_accents,))
        self.lowercase, self.strip_accents = lowercase, strip_accents
        self.clean_text, self.handle_chinese_chars = clean_text, handle_chinese_chars
        self.backend = core.resolve(backend)
        self._core = core.get(self.backend)
        self._state = _State()

    # -- the vocabulary (one _State, replaced whole: see BPETokenizer) ------------
    @property
    def vocab(self):
        """Every token by ID (a copy: editing it changes nothing here)."""
        return list(self._state.vocab)

    @property
    def token_to_id(self):
        """{token: ID} (a copy)."""
        return dict(self._state.token_to_id)

    @property
    def id_to_token(self):
        return dict(enumerate(self._state.vocab))

    @property
    def merges(self):
        """The merges by rank, as pairs of tokens ([] for a vocabulary loaded
        from vocab.txt or tokenizer.json, which do not record them)."""
        return [(a, b) for a, b, *_ in self._state.merges]

    @property
    def merge_scores(self):
        """Why each merge won: (count(ab), count(a), count(b)) when it was
        chosen, by rank; its score is the first over the product of the others."""
        return [tuple(m[2:]) for m in self._state.merges]

    @property
    def vocab_size(self):
        """The actual number of entries (the request is `target_vocab_size`)."""
        return len(self._state.vocab)

    @property
    def is_trained(self):
        return bool(self._state.vocab)

    # -- training --------------------------------------------------------------------
    def normalize(self, text):
        """BERT's normalizer with this tokenizer's options."""
        return _bert.normalize(text, lowercase=self.lowercase, strip_accents=self.strip_accents,
                               clean_text=self.clean_text, handle_chinese_chars=self.handle_chinese_chars)

    def pre_tokenize(self, text):
        """The words of a text: normalized, then BERT's whitespace and punctuation split."""
        return _bert.split(self.normalize(text))

    def count_words(self, corpus):
        """{word: frequency} over an iterable of str, in first-appearance order."""
        if isinstance(corpus, (str, bytes)):
            raise TypeError("corpus must be an iterable of str (a list of texts, a file...), "
                            "not a single %s" % type(corpus).__name__)
        counts, texts, index = Counter(), iter(corpus), 0
        while True:
            batch = list(islice(texts, 1024))
            if not batch:
                return dict(counts)
            for k, text in enumerate(batch):
                if not isinstance(text, str):
                    raise TypeError("corpus[%d] must be str, not %s" % (index + k, type(text).__name__))
            index += len(batch)
            counts.update(self.pre_tokenize("\n".join(batch)))  # "\n" separates words, as the texts' ends do

    def train(self, corpus):
        """Learn a vocabulary from an iterable of str (replaces any earlier state)."""
        self.train_from_counts(self.count_words(corpus))

    def train_from_counts(self, counts):
        """Learn a vocabulary from {word: frequency} (first-appearance order
        decides ties).  Words are taken as they are: no normalizing, no splitting."""
        if not hasattr(counts, "items"):
            raise TypeError("train_from_counts needs a mapping {word: frequency}, not %s" % type(counts).__name__)
        for word, freq in counts.items():
            if not isinstance(word, str):
                raise TypeError("word %r in counts is %s, not str" % (word, type(word).__name__))
            if isinstance(freq, bool) or not isinstance(freq, int) or not 0 <= freq <= _MAX_COUNT:
                raise ValueError("frequency of word %r must be an int in 0..2**64-1, not %r" % (word, freq))
        words = [w for w in counts if w]
        prefix, core_ = self.prefix, self._core
        heads = {c for w in words for c in w}
        tails = {prefix + c for w in words for c in w[1:]}
        base = list(self.special_tokens) + [t for t in sorted(heads) + sorted(tails)
                                            if t not in self.special_tokens]
        ids = {t: i for i, t in enumerate(base)}
        symtab = core_.SymbolTable(_to_bytes(t) for t in base)
        table = core_.WordTable((([ids[w[0]]] + [ids[prefix + c] for c in w[1:]]), counts[w]) for w in words)
        trainer = core_.WordPieceTrainer(symtab, table, min_frequency=self.min_frequency,
                                         prefix=_to_bytes(prefix))
        del table
        done = trainer.run(self.target_vocab_size, _MAX_COUNT)
        vocab = [_from_bytes(t) for t in symtab.tokens()]
        self._state = _State(vocab, [(vocab[a], vocab[b], c, ca, cb) for a, b, _, c, ca, cb in done],
                             self.unk_token)

    # -- encoding --------------------------------------------------------------------
    def _require_trained(self):
        state = self._state
        if not state.vocab:
            raise RuntimeError("this WordPieceTokenizer has no vocabulary yet: call train(corpus) or "
                               "train_from_counts(counts), or load one (WordPieceTokenizer.load, "
                               "pybpe.wordpiece.load_vocab_txt / load_hf_wordpiece), first")
        return state

    def _pieces(self, state, word):
        """The token IDs of one word (cached)."""
        ids = state.cache.get(word)
        if ids is None:
            ids = self._longest_first(state, word)
            if len(state.cache) < _CACHE_WORDS:
                state.cache[word] = ids
        return ids

    def _longest_first(self, state, word):
        """Greedy longest-match-first from the left; the whole word is
        [unk_id] when it is too long or some position starts no entry."""
        n = len(word)
        if n > self.max_input_chars_per_word:
            return [state.unk_id]
        get, prefix, longest = state.token_to_id.get, self.prefix, state.longest
        ids, start = [], 0
        while start < n:
            end = min(n, start + longest)  # no entry is longer
            while end > start:
                found = get(word[start:end] if start == 0 else prefix + word[start:end])
                if found is not None:
                    break
                end -= 1
            else:
                return [state.unk_id]
            ids.append(found)
            start = end
        return ids

    def encode(self, text, *, add_special_tokens=False, allowed_special=frozenset()):
        """Text -> IDs.  add_special_tokens puts [CLS] first and [SEP] last
        (when they are special tokens).  Special tokens in the text are
        matched only when allowed (`allowed_special="all"` or a set of
        them), before normalizing; elsewhere they are text."""
        return self._encode(self._require_trained(), text, add_special_tokens, allowed_special)

    def _encode(self, state, text, add_special_tokens, allowed_special):
        # encode on a given state (a batch reads it once for all its texts,
        # so a train() in another thread cannot give it two vocabularies).
        if not isinstance(text, str):
            raise TypeError("text must be str, not %s" % type(text).__name__)
        allowed = self._allowed(allowed_special)
        parts = [text] if not allowed else _special_regex(allowed).split(text)
        ids = [state.token_to_id["[CLS]"]] if add_special_tokens and "[CLS]" in self.special_tokens else []
        for k, part in enumerate(parts):
            if k % 2:  # a special token (the regex captures them)
                ids.append(state.token_to_id[part])
                continue
            for word in self.pre_tokenize(part):
                ids += self._pieces(state, word)
        if add_special_tokens and "[SEP]" in self.special_tokens:
            ids.append(state.token_to_id["[SEP]"])
        return ids

    def _allowed(self, allowed_special):
        if allowed_special == "all":
            return frozenset(self.special_tokens)
        if isinstance(allowed_special, str):
            raise TypeError('allowed_special must be "all" or a set of special tokens, not a single str')
        allowed = frozenset(allowed_special)
        unknown = allowed - set(self.special_tokens)
        if unknown:
            raise ValueError("allowed_special holds %r, which are not special tokens" % sorted(unknown))
        return allowed

    def tokenize(self, text):
        """Text -> the token strings (encode, spelt out)."""
        state = self._require_trained()
        return [state.vocab[i] for i in self._encode(state, text, False, frozenset())]

    def encode_batch(self, texts, *, add_special_tokens=False):
        """encode each text (greedy matching is dictionary lookups: no threads)."""
        if isinstance(texts, (str, bytes)):
            raise TypeError("texts must be a list of str, not a single %s (wrap it: [text])"
                            % type(texts).__name__)
        state = self._require_trained()
        return [self._encode(state, t, add_special_tokens, frozenset()) for t in texts]

    def decode(self, ids, *, skip_special_tokens=False):
        """IDs -> text: pieces joined with spaces, a continuation piece glued
        to the one before without its prefix.  An unknown ID decodes as
        unk_token.  NumPy integers and arrays are IDs too."""
        vocab, prefix = self._require_trained().vocab, self.prefix
        specials = set(self.special_tokens) if skip_special_tokens else ()
        out = []
        for index, i in enumerate(ids):
            if isinstance(i, bool) or not hasattr(i, "__index__"):
                raise TypeError("ids[%d] must be an int token ID, not %s" % (index, type(i).__name__))
            i = operator.index(i)
            token = vocab[i] if 0 <= i < len(vocab) else self.unk_token
            if token in specials:
                continue
            if out and token.startswith(prefix):
                out.append(token[len(prefix):])
            else:
                out.append((" " if out else "") + token)
        return "".join(out)

    # -- files -----------------------------------------------------------------------
    def config(self):
        return dict(vocab_size=self.target_vocab_size, min_frequency=self.min_frequency,
                    special_tokens=list(self.special_tokens), unk_token=self.unk_token,
                    continuing_subword_prefix=self.prefix,
                    max_input_chars_per_word=self.max_input_chars_per_word, lowercase=self.lowercase,
                    strip_accents=self.strip_accents, clean_text=self.clean_text,
                    handle_chinese_chars=self.handle_chinese_chars)

    def save(self, path):
        """Write pybpe's versioned JSON (config, vocab, merges with their
        counts), atomically, to a path or a binary file object."""
        state = self._require_trained()
        document = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "config": self.config(),
                    "vocab": state.vocab, "merges": [list(m) for m in state.merges]}
        atomic_write(path, _dump_json(document).encode("utf-8"))

    @classmethod
    def load(cls, path, *, backend=None):
        """Read a file written by save, or a Hugging Face tokenizer.json with
        a WordPiece model (as load_hf_wordpiece)."""
        path = os.fspath(path)
        doc = _read_json(path)
        if isinstance(doc, dict) and "model" in doc and "format" not in doc:
            return _hf_tokenizer(doc, path, backend)
        if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
            raise FormatError('%s: not a pybpe WordPiece file (no "format": %r) nor a tokenizer.json'
                              % (path, FORMAT_NAME))
        if type(doc.get("version")) is not int or doc["version"] != FORMAT_VERSION:
            raise FormatError("%s: format version %s is not supported (this pybpe reads version %d)"
                              % (path, reprlib.repr(doc.get("version")), FORMAT_VERSION))
        config, vocab, merges = doc.get("config"), doc.get("vocab"), doc.get("merges")
        if not isinstance(config, dict):
            raise FormatError('%s: "config" must be an object' % path)
        try:
            tok = cls(backend=backend, **config)
        except (TypeError, ValueError) as exc:
            raise FormatError("%s: bad config: %s" % (path, exc)) from None
        vocab = _checked_vocab(vocab, path, tok)
        if not isinstance(merges, list):
            raise FormatError('%s: "merges" must be a list' % path)
        known = set(vocab)
        for rank, m in enumerate(merges):
            if (not isinstance(m, list) or len(m) != 5 or not all(isinstance(t, str) for t in m[:2])
                    or not all(type(c) is int and 0 <= c <= _MAX_COUNT for c in m[2:])):
                raise FormatError("%s: merges[%d] must be [left, right, count, count(left), count(right)], "
                                  "not %s" % (path, rank, reprlib.repr(m)))
            if m[0] not in known or m[1] not in known:
                raise FormatError("%s: merges[%d] joins a token that is not in the vocab" % (path, rank))
        tok._state = _State(vocab, [tuple(m) for m in merges], tok.unk_token)
        return tok

    def __repr__(self):
        state = self._state
        summary = "%d tokens, %d merges" % (len(state.vocab), len(state.merges)) if state.vocab else "untrained"
        return "WordPieceTokenizer(vocab_size=%d, backend=%r, %s)" % (self.target_vocab_size, self.backend, summary)


class _State:
    """A vocabulary and what encoding derives from it, built whole before a
    tokenizer installs it (one assignment), never changed after, except the
    word cache, which holds only what the state computes anyway."""

    __slots__ = ("vocab", "merges", "token_to_id", "unk_id", "longest", "cache")

    def __init__(self, vocab=(), merges=(), unk_token=None):
        self.vocab = list(vocab)
        self.merges = list(merges)  # (left, right, count, count(left), count(right)) by rank
        self.token_to_id = {t: i for i, t in enumerate(self.vocab)}
        self.unk_id = self.token_to_id.get(unk_token)
        self.longest = max(map(len, self.vocab), default=0)  # no match is longer (in characters)
        self.cache = {}


# Distinct words whose pieces a vocabulary keeps (a bound: a stream of
# distinct words must not grow memory without end).
_CACHE_WORDS = 1 << 16


def _to_bytes(token):
    return token.encode("utf-8", "surrogatepass")


def _from_bytes(data):
    return data.decode("utf-8", "surrogatepass")


def _check_int(name, value, low):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be an int, not %s" % (name, type(value).__name__))
    if value < low:
        raise ValueError("%s must be >= %d, not %d" % (name, low, value))
    return value


def _special_regex(tokens):
    # Longest first, so "[CLS]x" never loses to a shorter token that starts it.
    return re.compile("(%s)" % "|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True)))


def _checked_vocab(vocab, path, tok):
    """vocab as a list of distinct non-empty str holding every special token,
    or FormatError naming the file and the entry."""
    if not isinstance(vocab, list):
        raise FormatError('%s: "vocab" must be a list of tokens' % path)
    seen = {}
    for i, token in enumerate(vocab):
        if not isinstance(token, str) or not token:
            raise FormatError("%s: vocab entry %d must be a non-empty string, not %s" % (path, i, reprlib.repr(token)))
        if token in seen:
            raise FormatError("%s: vocab entry %d, %r, repeats entry %d" % (path, i, token, seen[token]))
        seen[token] = i
    missing = [t for t in tok.special_tokens if t not in seen]
    if missing:
        raise FormatError("%s: the special tokens %r are not in the vocab" % (path, missing))
    return vocab


def _read_json(path):
    with open_vocabulary_file(path) as f:
        data = f.read()
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise FormatError("%s: not valid JSON (%s)" % (path, exc)) from None


# -- BERT's vocab.txt ------------------------------------------------------------------

def load_vocab_txt(path, *, special_tokens=None, backend=None, **options):
    """A WordPieceTokenizer from BERT's vocab.txt: one token per line, the
    line number (from 0) its ID.  special_tokens defaults to those of
    DEFAULT_SPECIAL_TOKENS the file holds; the other options are the
    constructor's (lowercase=False for a cased vocabulary...)."""
    path = os.fspath(path)
    with open_vocabulary_file(path) as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise FormatError("%s:%d: not UTF-8" % (path, line)) from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline
    vocab = [line[:-1] if line.endswith("\r") else line for line in lines]
    for i, token in enumerate(vocab):
        if all(ch in _bert._WHITE_SPACE for ch in token):  # (not str.strip: U+001C-U+001F are tokens)
            raise FormatError("%s:%d: an empty token" % (path, i + 1))
    if special_tokens is None:
        special_tokens = [t for t in DEFAULT_SPECIAL_TOKENS if t in vocab]
    try:
        tok = WordPieceTokenizer(vocab_size=len(vocab), special_tokens=special_tokens, backend=backend, **options)
    except (TypeError, ValueError) as exc:
        raise FormatError("%s: %s" % (path, exc)) from None
    seen = {}
    for i, token in enumerate(vocab):
        if token in seen:
            raise FormatError("%s:%d: %r repeats line %d" % (path, i + 1, token, seen[token] + 1))
        seen[token] = i
    missing = [t for t in tok.special_tokens if t not in seen]
    if missing:
        raise FormatError("%s: the special tokens %r are not in the file" % (path, missing))
    tok._state = _State(vocab, (), tok.unk_token)
    return tok


def dump_vocab_txt(tok, path):
    """Write tok's vocabulary as BERT's vocab.txt (atomically)."""
    vocab = tok._require_trained().vocab
    bad = [t for t in vocab if "\n" in t or "\r" in t]
    if bad:
        raise ValueError("vocab.txt holds one token per line: %r cannot be written" % bad[0])
    atomic_write(path, "".join(t + "\n" for t in vocab).encode("utf-8", "surrogatepass"))


# -- Hugging Face tokenizer.json ----------------------------------------------------------

def dump_hf_wordpiece(tok, path):
    """Write tok as a Hugging Face tokenizer.json: a WordPiece model with
    BertNormalizer, BertPreTokenizer and a WordPiece decoder; the special
    tokens as added tokens; no post-processor (encode does not add [CLS] /
    [SEP] by default, nor does this file)."""
    state = tok._require_trained()
    ids = state.token_to_id
    doc = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": ids[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for t in tok.special_tokens],
        "normalizer": {"type": "BertNormalizer", "clean_text": tok.clean_text,
                       "handle_chinese_chars": tok.handle_chinese_chars, "strip_accents": tok.strip_accents,
                       "lowercase": tok.lowercase},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": None,
        "decoder": {"type": "WordPiece", "prefix": tok.prefix, "cleanup": False},
        "model": {"type": "WordPiece", "unk_token": tok.unk_token, "continuing_subword_prefix": tok.prefix,
                  "max_input_chars_per_word": tok.max_input_chars_per_word,
                  "vocab": {t: i for i, t in enumerate(state.vocab)}},
    }
    atomic_write(path, json.dumps(doc, ensure_ascii=False, indent=2).encode("utf-8", "surrogatepass"))


def load_hf_wordpiece(path, *, backend=None):
    """A WordPieceTokenizer from a Hugging Face tokenizer.json whose model is
    WordPiece, with a BertNormalizer (or none) and a BertPreTokenizer.  What
    would change the IDs and is not BERT's -- other normalizers or
    pre-tokenizers, added tokens that are not special -- is a FormatError
    naming it."""
    path = os.fspath(path)
    return _hf_tokenizer(_read_json(path), path, backend)


def _hf_tokenizer(doc, path, backend):
    def fail(problem):
        raise FormatError("%s: a tokenizer.json with model type 'WordPiece', but %s" % (path, problem))

    model = doc.get("model") if isinstance(doc, dict) else None
    if not isinstance(model, dict) or model.get("type", "WordPiece") != "WordPiece" or "vocab" not in model:
        raise FormatError("%s: not a tokenizer.json with a WordPiece model" % path)
    vocab_map = model["vocab"]
    if not isinstance(vocab_map, dict) or not all(type(i) is int for i in vocab_map.values()):
        fail('the model\'s "vocab" must be an object {token: integer id}')
    if sorted(vocab_map.values()) != list(range(len(vocab_map))):
        fail("the model's vocab IDs must be 0..%d, each once" % (len(vocab_map) - 1))
    vocab = [None] * len(vocab_map)
    for token, i in vocab_map.items():
        vocab[i] = token
    normalizer = doc.get("normalizer")
    options = dict(lowercase=False, strip_accents=False, clean_text=False, handle_chinese_chars=False)
    if normalizer is not None:
        if not isinstance(normalizer, dict) or normalizer.get("type") != "BertNormalizer":
            fail("the normalizer must be BertNormalizer (or none), not %s" % reprlib.repr(normalizer))
        options = dict(lowercase=normalizer.get("lowercase", True), strip_accents=normalizer.get("strip_accents"),
                       clean_text=normalizer.get("clean_text", True),
                       handle_chinese_chars=normalizer.get("handle_chinese_chars", True))
    pre = doc.get("pre_tokenizer")
    if not isinstance(pre, dict) or pre.get("type") != "BertPreTokenizer":
        fail("the pre-tokenizer must be BertPreTokenizer, not %s" % reprlib.repr(pre))
    added = doc.get("added_tokens") or []
    if not isinstance(added, list) or not all(isinstance(a, dict) for a in added):
        fail('"added_tokens" must be a list of objects')
    for a in added:
        if not a.get("special", False) or vocab_map.get(a.get("content")) != a.get("id"):
            fail("added token %s is not a special token of the vocab with its ID" % reprlib.repr(a.get("content")))
    specials = [a["content"] for a in added]
    unk = model.get("unk_token", "[UNK]")
    if unk not in specials:
        specials.insert(0, unk)
    try:
        tok = WordPieceTokenizer(vocab_size=len(vocab), special_tokens=specials, unk_token=unk,
                                 continuing_subword_prefix=model.get("continuing_subword_prefix", "##"),
                                 max_input_chars_per_word=model.get("max_input_chars_per_word", 100),
                                 backend=backend, **options)
    except (TypeError, ValueError) as exc:
        fail("bad WordPiece settings: %s" % exc)
    tok._state = _State(_checked_vocab(vocab, path, tok), (), tok.unk_token)
    return tok
