"""Vocabulary files in, vocabulary files out: .tiktoken, GPT-2 and Hugging Face.

- `.tiktoken`: one `base64(token) rank` per line (load_tiktoken_bpe /
  dump_tiktoken_bpe).
- GPT-2: `encoder.json` / `vocab.json` ({token: id}, bytes spelled with the
  byte-to-unicode alphabet) + `vocab.bpe` / `merges.txt` (one merge per line)
  (load_gpt2_bpe / dump_gpt2_bpe).
- Hugging Face `tokenizer.json` with a BPE model and the ByteLevel
  pre-tokenizer (load_hf_tokenizer / dump_hf_tokenizer).
A bad file raises pybpe.FormatError naming the file (and line) and the problem,
never a half-built object; writes go to a temporary file renamed into place.
Left out of tokenizer.json, and rejected with a FormatError naming the
feature: everything that would change the IDs -- normalizers,
`add_prefix_space`, byte fallback, dropout, continuing-subword prefixes,
post-processors other than ByteLevel (TemplateProcessing...), truncation,
padding, added tokens with lstrip / rstrip / single_word.  Accepted because
they cannot change the IDs: `normalized` and `special` on added tokens, a
ByteLevel post-processor, `unk_token` when every byte is a token (see
_ADDED_TOKEN_KEYS).  `sniff` and `load_sniffed` are pybpe.load's way of
recognising all of these formats by content.
"""
import base64
import binascii
import json
import os
import re
import reprlib
import stat

import regex

from . import _bounded, patterns
from ._atomic import atomic_outputs, atomic_write, same_file
from ._oniguruma import from_oniguruma, to_oniguruma
from .core.spec.merge import byte_pair_merge
from .encoding import Encoding
from .errors import FormatError

_MAX_ID = 2**32 - 2  # IDs are uint32 in C; 2**32 - 1 means "no symbol"
try:
    from ._ranks_file import parse as _parse_ranks  # built with the C extension, optional
except ImportError:
    _parse_ranks = None


def open_vocabulary_file(path):
    """`path` opened for binary reading, if it can end: a regular file or a
    pipe (process substitution hands loaders a pipe).  A directory, or a
    device such as /dev/zero that a whole-file read would never finish, is a
    FormatError -- refused before a byte is read."""
    try:
        f = open(path, "rb")
    except IsADirectoryError:
        raise FormatError("%s: is a directory, not a vocabulary file" % path) from None
    mode = os.fstat(f.fileno()).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        f.close()
        raise FormatError("%s: not a regular file (a device or socket), so not a vocabulary file" % path)
    return f


def _read_bytes(path):
    with open_vocabulary_file(path) as f:
        return f.read()


# -- .tiktoken -------------------------------------------------------------------

def load_tiktoken_bpe(path):
    """{token bytes: rank} from a .tiktoken file.

    Stricter than tiktoken's loader: a line that is not exactly
    `base64 integer`, a token or rank given twice, or an empty file raises
    FormatError("<file>:<line>: ...").

        >>> import os, tempfile
        >>> folder = tempfile.TemporaryDirectory()
        >>> p = os.path.join(folder.name, "toy.tiktoken")
        >>> dump_tiktoken_bpe({b"a": 0, b"b": 1, b"ab": 2}, p)
        >>> open(p).read()
        'YQ== 0\\nYg== 1\\nYWI= 2\\n'
        >>> load_tiktoken_bpe(p)
        {b'a': 0, b'b': 1, b'ab': 2}
        >>> folder.cleanup()
    """
    path = os.fspath(path)
    data = _read_bytes(path)
    if _parse_ranks is not None:
        # C reads a file of plain lines at once (csrc/pyext/ranks_file.c)
        # and answers None for anything else, which the loop below reads
        # to name the first error; ranks given twice it leaves to this set.
        ranks = _parse_ranks(data, _MAX_ID)
        if ranks is not None and len(set(ranks.values())) == len(ranks):
            return ranks
    return _tiktoken_lines(path, data)


def _tiktoken_lines(path, data):
    # load_tiktoken_bpe's reading, line by line with every check.
    ranks = {}
    seen_ranks = set()
    for lineno, line in enumerate(data.split(b"\n"), 1):
        line = line.rstrip(b"\r")
        if not line:
            continue
        fields = line.split()
        if len(fields) != 2:
            raise FormatError("%s:%d: expected 'base64-token rank', got %d fields" % (path, lineno, len(fields)))
        try:
            token = base64.b64decode(fields[0], validate=True)
        except (binascii.Error, ValueError):
            raise FormatError("%s:%d: the token is not valid base64" % (path, lineno)) from None
        if not fields[1].isdigit() or len(fields[1]) > 10:
            raise FormatError("%s:%d: the rank is not a non-negative integer" % (path, lineno))
        rank = int(fields[1])
        if not token:
            raise FormatError("%s:%d: empty token" % (path, lineno))
        if rank > _MAX_ID:
            raise FormatError("%s:%d: rank %d is too large (at most %d)" % (path, lineno, rank, _MAX_ID))
        if token in ranks:
            raise FormatError("%s:%d: token %r appears twice" % (path, lineno, token))
        if rank in seen_ranks:
            raise FormatError("%s:%d: rank %d appears twice" % (path, lineno, rank))
        ranks[token] = rank
        seen_ranks.add(rank)
    if not ranks:
        raise FormatError("%s: no tokens (an empty .tiktoken file)" % path)
    return ranks


def dump_tiktoken_bpe(ranks, path):
    """Write {token bytes: rank} as a .tiktoken file, in rank order, atomically."""
    if not isinstance(ranks, dict):
        raise TypeError("ranks must be a dict {bytes: int}, not %s" % type(ranks).__name__)
    lines = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if not isinstance(token, bytes) or not isinstance(rank, int):
            raise TypeError("ranks must map bytes to int; got %r: %r" % (token, rank))
        lines.append(b"%s %d\n" % (base64.b64encode(token), rank))
    atomic_write(path, b"".join(lines))


# -- GPT-2's byte-to-unicode alphabet ----------------------------------------------

def bytes_to_unicode():
    """GPT-2's map from each byte to a printable character.

    Printable Latin-1 bytes stand for themselves; the other 68 (controls,
    space, soft hyphen...) take the characters from U+0100 on, in byte order,
    so a space is 'Ġ' (U+0120) and a newline 'Ċ' (U+010A).

        >>> m = bytes_to_unicode()
        >>> m[ord("a")], m[ord(" ")], m[ord("\\n")], len(set(m.values()))
        ('a', 'Ġ', 'Ċ', 256)
    """
    printable = set(range(ord("!"), ord("~") + 1)) | set(range(0xA1, 0xAC + 1)) | set(range(0xAE, 0xFF + 1))
    mapping = {}
    extra = 0
    for b in range(256):
        if b in printable:
            mapping[b] = chr(b)
        else:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


_BYTE_TO_CHAR = bytes_to_unicode()
_CHAR_TO_BYTE = {c: b for b, c in _BYTE_TO_CHAR.items()}


def token_to_unicode(token):
    """bytes -> GPT-2's printable spelling.  token_to_unicode(b" hi") == 'Ġhi'"""
    return "".join(_BYTE_TO_CHAR[b] for b in token)


def unicode_to_token(text):
    """GPT-2's printable spelling -> bytes; None when a character is outside
    the alphabet.  unicode_to_token('Ġhi') == b' hi'"""
    try:
        return bytes(_CHAR_TO_BYTE[c] for c in text)
    except KeyError:
        return None


def merges_from_ranks(ranks):
    """The merge list that rebuilds a tiktoken rank table, as (left, right) IDs.

    Token t of rank r is what byte-pair merging t's own bytes with the ranks
    below r stops at, when that is exactly two parts.  Tokens that do not
    stop at two parts (none in gpt2 or cl100k) get no merge: they stay in the
    vocabulary but only whole-piece lookup can produce them.

        >>> merges_from_ranks({b"a": 0, b"b": 1, b"ab": 2, b"aab": 3})
        [(0, 1), (0, 2)]
    """
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) < 2:
            continue

        def rule(a, b, limit=rank):
            r = ranks.get(a + b)
            return None if r is None or r >= limit else (r, a + b)

        parts = byte_pair_merge([bytes([b]) for b in token], rule)
        if len(parts) == 2 and parts[0] in ranks and parts[1] in ranks:
            merges.append((ranks[parts[0]], ranks[parts[1]]))
    return merges


def _encoding_merges(enc):
    return enc.merges if enc.merges is not None else merges_from_ranks(enc.mergeable_ranks)


def _load_json(path, data=None):
    """The JSON document in file `path` (or in `data`, its bytes), or FormatError."""
    try:
        return json.loads((_read_bytes(path) if data is None else data).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise FormatError("%s: not UTF-8 (%s)" % (path, exc.reason)) from None
    except RecursionError:
        raise FormatError("%s: JSON nested too deeply" % path) from None
    except ValueError as exc:
        raise FormatError("%s: not valid JSON (%s)" % (path, exc)) from None


def _looks_special(text):
    return text.startswith("<|") and text.endswith("|>") and len(text) > 4


def _split_vocab(vocab, path, special_tokens):
    """{spelled token: id} -> ({bytes: id}, {special str: id}); FormatError on junk."""
    if not isinstance(vocab, dict):
        raise FormatError("%s: the vocabulary must be a JSON object {token: id}" % path)
    ranks, specials = {}, {}
    for text, i in vocab.items():
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i <= _MAX_ID:
            raise FormatError("%s: token %s has ID %s, not an integer in [0, %d]"
                              % (path, reprlib.repr(text), reprlib.repr(i), _MAX_ID))
        if special_tokens is not None and text in special_tokens:
            if special_tokens[text] != i:
                raise FormatError("%s: special token %r has ID %d, but the vocabulary gives it %d"
                                  % (path, text, special_tokens[text], i))
            continue
        token = unicode_to_token(text)
        if special_tokens is None and _looks_special(text):
            specials[text] = i
        elif token is None or not token:
            raise FormatError("%s: token %r is not spelled in GPT-2's byte alphabet" % (path, text))
        elif token in ranks:
            raise FormatError("%s: token %r appears twice" % (path, text))
        else:
            ranks[token] = i
    if special_tokens is not None:
        specials = dict(special_tokens)
    return ranks, specials


def _keep_added_entries(ranks, specials, vocab, merges):
    """Put back into `ranks` the vocabulary entries an added token of a
    tokenizer.json also is and the model needs as tokens: a byte's
    (tok.add_special_tokens(["é"]) marks byte 0xE9's entry) or one a merge
    takes or makes (tok.add_tokens(["hello"]) for a merged "hello").  HF
    gives such an added token the entry's ID and keeps the entry a token of
    the model; _split_vocab left it out.  Other added tokens in the
    vocabulary (GPT-2's <|endoftext|>) stay special tokens only."""
    in_merges = _ids_in_merges(vocab, merges)
    for text, i in specials.items():
        token = unicode_to_token(text) if vocab.get(text) == i else None
        if token and (len(token) == 1 or i in in_merges):
            ranks[token] = i


def _unspecial_merged(ranks, specials, vocab, merges):
    """Entries spelled <|...|> that a merge takes or makes are ordinary
    tokens after all (a byte-level model that learned "<|a|>" from its
    text): move them from `specials` to `ranks`."""
    in_merges = _ids_in_merges(vocab, merges).difference(ranks.values())  # (a shared ID is refused later)
    for text in [t for t, i in specials.items() if i in in_merges and unicode_to_token(t)]:
        ranks[unicode_to_token(text)] = specials.pop(text)


def _ids_in_merges(vocab, merges):
    # The IDs a merge takes or makes ({spelling: ID} vocab, [(left, right)] IDs).
    # (A file that gives two entries one ID has no one spelling per ID: the
    # result is then unknown, and the ID checks after this refuse the file.)
    names = {i: t for t, i in vocab.items()}
    ids = set()
    for left, right in merges:
        ids.update((left, right, vocab.get(names[left] + names[right], left)))
    return ids


def _check_special_ids(ranks, specials, path):
    """FormatError when a special token has the ID of a regular token: one ID
    would then decode two ways.  (Not when the regular token is the special
    token's own vocabulary entry, as _keep_added_entries puts back: the ID
    then decodes to the entry's bytes, as in HF.)"""
    by_id = {i: t for t, i in ranks.items()}
    for text, i in specials.items():
        if i in by_id and by_id[i] != unicode_to_token(text):
            raise FormatError("%s: special token %r has ID %d, which is also the ID of token %r"
                              % (path, text, i, by_id[i]))


def _parse_merges(items, vocab, path, numbered):
    """Merge strings/pairs -> [(left_id, right_id)]; `numbered` maps an item
    index to what to call it in errors (a line number or an index)."""
    merges = []
    for k, item in enumerate(items):
        where = numbered(k)
        if isinstance(item, str):
            parts = item.split(" ")
        elif isinstance(item, list):
            parts = item
        else:
            raise FormatError("%s: %s: a merge must be 'left right' or [left, right]" % (path, where))
        if len(parts) != 2 or not all(isinstance(p, str) and p for p in parts):
            raise FormatError("%s: %s: expected two tokens, got %s" % (path, where, reprlib.repr(item)))
        left, right = parts
        for side in (left, right, left + right):
            if side not in vocab:
                raise FormatError("%s: %s: %r is not in the vocabulary" % (path, where, side))
        merges.append((vocab[left], vocab[right]))
    return merges


def _build(path, **kwargs):
    # Any inconsistency the Encoding finds (a merge whose result is not a
    # token, duplicate IDs...) is the file's fault: report it as such.
    try:
        return Encoding(**kwargs)
    except (ValueError, TypeError) as exc:
        raise FormatError("%s: %s" % (path, exc)) from None


# -- GPT-2 vocab.json + merges.txt ---------------------------------------------------

def load_gpt2_bpe(vocab_path, merges_path, *, name=None, pat_str=patterns.GPT2, special_tokens=None,
                  backend=None):
    """An Encoding from GPT-2's encoder.json/vocab.json and vocab.bpe/merges.txt.

    The merge list is kept, so encoding follows GPT-2's own rule (lowest merge
    rank first).  special_tokens: {str: id}; by default every vocabulary entry
    spelled <|...|> (GPT-2's <|endoftext|>) is one.
    """
    vocab_path, merges_path = os.fspath(vocab_path), os.fspath(merges_path)
    vocab = _load_json(vocab_path)
    ranks, specials = _split_vocab(vocab, vocab_path, special_tokens)
    try:
        text = _read_bytes(merges_path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError("%s: not UTF-8 (%s)" % (merges_path, exc.reason)) from None
    lines = text.split("\n")
    items, linenos = [], []
    for lineno, line in enumerate(lines, 1):
        line = line.rstrip("\r")
        if not line or (lineno == 1 and line.startswith("#version")):
            continue
        items.append(line)
        linenos.append(lineno)
    merges = _parse_merges(items, vocab, merges_path, lambda k: "line %d" % linenos[k])
    if special_tokens is None:
        _unspecial_merged(ranks, specials, vocab, merges)
    _check_special_ids(ranks, specials, vocab_path)
    return _build(vocab_path, name=name or os.path.splitext(os.path.basename(vocab_path))[0],
                  pat_str=pat_str, mergeable_ranks=ranks, special_tokens=specials, merges=merges,
                  backend=backend)


def _spelled_vocab(enc, what):
    """{token spelled in GPT-2's byte alphabet: ID} for vocab.json and
    tokenizer.json, special tokens included; ValueError, before anything is
    written, for a special token spelled like a regular token of another ID
    (a byte-level special "_" or "é" is byte 0x5F's or 0xE9's spelling): one
    key cannot hold both, and the regular token would be lost."""
    vocab = {token_to_unicode(t): i for t, i in sorted(enc.mergeable_ranks.items(), key=lambda x: x[1])}
    for text, i in enc.special_tokens.items():
        if vocab.get(text, i) != i:
            raise ValueError("special token %r is spelled like the regular token of ID %d in GPT-2's byte "
                             "alphabet, and %s cannot hold both (save the tokenizer as pybpe JSON, or as "
                             ".tiktoken)" % (text, vocab[text], what))
    vocab.update(enc.special_tokens)
    return vocab


def dump_gpt2_bpe(enc, vocab_path, merges_path):
    """Write an Encoding as GPT-2's vocab.json + merges.txt, the two together:
    both are written in full before either is replaced, and an error or a
    Ctrl-C leaves both files old or both new (pybpe/_atomic.py's
    atomic_outputs; only a crash between the two renames can mix them).

    An Encoding built from ranks (tiktoken's rule) gets the merge list
    merges_from_ranks derives; special tokens go into vocab.json as well.
    The two paths must be different files (the merges would replace the
    vocabulary): ValueError before anything is written.
    """
    if same_file(vocab_path, merges_path):
        raise ValueError("vocab_path and merges_path are the same file (%s): the merges would "
                         "replace the vocabulary" % os.fspath(merges_path))
    decoder = {i: t for t, i in enc.mergeable_ranks.items()}
    vocab = _spelled_vocab(enc, "a vocab.json")
    lines = ["#version: 0.2"]
    for left, right in _encoding_merges(enc):
        lines.append("%s %s" % (token_to_unicode(decoder[left]), token_to_unicode(decoder[right])))
    with atomic_outputs([vocab_path, merges_path]) as (vocab_file, merges_file):
        vocab_file.write(json.dumps(vocab, ensure_ascii=False).encode("utf-8"))
        merges_file.write(("\n".join(lines) + "\n").encode("utf-8"))


# -- Hugging Face tokenizer.json ------------------------------------------------------

_WHOLE_TEXT = patterns.WHOLE_TEXT  # "no pre-tokenizer split": the whole text is one piece


# HF spelling -> published spelling, so a round trip gives the preset back
# (and its C scanner).  Two spellings each: to_oniguruma's, and the one pybpe
# wrote before it (cl100k's \s++$ as it is, which after \s++ means the same).
_FROM_ONIGURUMA = {spelling: p for p in (patterns.GPT2, patterns.CL100K, patterns.O200K)
                   for spelling in (to_oniguruma(p), p.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}"))}


# Texts on which _isolated looks for an empty match: every kind of character
# the published patterns tell apart, at the start, the end and in between.
_EMPTY_MATCH_PROBES = ("", "a", " ", "\n", "aZ 1\n!é中_²\t'.,ab12  x\r\n-", "ab\nb a\n\n")


def _gaps_kept(pattern):
    # A pattern findall cuts text with as HF's Split(pattern, Isolated) does,
    # for a pattern that never matches the empty string: its matches, and
    # each run of text between two of them as one piece.
    return "(?:%s)|(?:(?!(?:%s))[\\s\\S])+" % (pattern, pattern)


def _isolated(pattern, path):
    """The pattern an HF Split(pattern, behavior=Isolated) amounts to.

    HF keeps the text between two matches as a piece of its own, where
    findall (tiktoken's reading, which Encoding follows) drops it; so a
    pattern that is not known to match every character is read as
    _gaps_kept(pattern), in the regex module's spelling (from_oniguruma).
    It is unwrapped first when it is that form already (pybpe's own export),
    so a round trip never wraps it twice.  A pattern that matches the empty
    string somewhere is refused: HF cuts the text at an empty match and
    findall does not, and no pattern is known to give HF's cuts then.  The
    published patterns match every character and are given back as
    published.

        >>> _isolated(r"\\d", "t.json") == _gaps_kept(r"\\d")
        True
        >>> _isolated(_gaps_kept(r"\\d"), "t.json") == _gaps_kept(r"\\d")
        True
    """
    if pattern in _FROM_ONIGURUMA:
        return _FROM_ONIGURUMA[pattern]
    inner = pattern[3:3 + (len(pattern) - len(_gaps_kept(""))) // 2]
    if _gaps_kept(inner) == pattern:
        pattern = inner  # already the gap-keeping form (pybpe's export): not wrapped twice
    pattern = from_oniguruma(pattern)
    try:
        _bounded.check_pattern(pattern)
    except ValueError as exc:
        raise FormatError("%s: the Split pattern is refused: %s" % (path, exc)) from None
    try:
        compiled = regex.compile(pattern)
    except regex.error as exc:
        raise FormatError("%s: the Split pattern is not a valid regular expression: %s" % (path, exc)) from None
    for probe in _EMPTY_MATCH_PROBES:
        try:
            empty = any(m.start() == m.end() for m in compiled.finditer(probe, timeout=1.0))
        except TimeoutError:
            empty = True
        if empty:
            raise FormatError("%s: the Split pattern %s matches the empty string (in %r), where HF cuts the "
                              "text and pybpe's reading of a pattern does not; not supported"
                              % (path, reprlib.repr(pattern), probe))
    return _gaps_kept(pattern)


def _hf_pattern(pre, path):
    """The pattern a tokenizer.json pre_tokenizer amounts to, or FormatError."""
    def byte_level(node, regex_allowed):
        if node.get("add_prefix_space", False):
            raise FormatError("%s: ByteLevel add_prefix_space=true is not supported" % path)
        if node.get("use_regex", True):
            if not regex_allowed:
                raise FormatError("%s: ByteLevel use_regex=true after a Split is not supported" % path)
            return patterns.GPT2  # HF's built-in regex is GPT-2's
        return None

    if not isinstance(pre, dict):
        raise FormatError("%s: pre_tokenizer must be ByteLevel or Sequence[Split, ByteLevel]" % path)
    if pre.get("type") == "ByteLevel":
        return byte_level(pre, True) or _WHOLE_TEXT
    if pre.get("type") == "Sequence" and isinstance(pre.get("pretokenizers"), list):
        nodes = pre["pretokenizers"]
        if len(nodes) == 2 and isinstance(nodes[0], dict) and isinstance(nodes[1], dict) \
                and nodes[0].get("type") == "Split" and nodes[1].get("type") == "ByteLevel":
            split = nodes[0]
            pattern = split.get("pattern")
            if not (isinstance(pattern, dict) and isinstance(pattern.get("Regex"), str)):
                raise FormatError("%s: Split must have a Regex pattern" % path)
            if split.get("behavior") != "Isolated" or split.get("invert", False):
                raise FormatError("%s: only Split(behavior=Isolated, invert=false) is supported" % path)
            byte_level(nodes[1], False)
            return _isolated(pattern["Regex"], path)
    raise FormatError("%s: unsupported pre_tokenizer %s (pybpe reads ByteLevel, or Sequence[Split(Regex), "
                      "ByteLevel(use_regex=false)])" % (path, reprlib.repr(pre.get("type"))))


# What load_hf_tokenizer does with the parts of a tokenizer.json that pybpe
# does not implement.  Anything that would change the IDs is a FormatError
# naming it; parts that cannot change them are accepted:
#   - added_tokens[].normalized: which text an added token is matched in;
#     with no normalizer (required below) that is the text itself.
#   - added_tokens[].special: only decode(skip_special_tokens=True) reads it
#     (an added token marked false is kept: Encoding's kept_when_skipping).
#   - ByteLevel's trim_offsets, and a ByteLevel post_processor: offsets only.
#   - model.unk_token, when every single byte is a token (it is then never
#     produced); model.fuse_unk likewise.
# Read as HF reads it: a Split(Isolated) pattern that does not match every
# character keeps the text between matches as pieces (_isolated); one that
# matches the empty string is refused.
# Refused: added tokens with lstrip / rstrip / single_word (they move what
# an added token matches), any post_processor but ByteLevel (e.g.
# TemplateProcessing adds tokens such as BOS/EOS), truncation and padding,
# normalizers, byte_fallback, dropout, continuing-subword prefixes and
# end-of-word suffixes, pre-tokenizers other than ByteLevel or
# Sequence[Split, ByteLevel].
_ADDED_TOKEN_KEYS = {"id", "content", "single_word", "lstrip", "rstrip", "normalized", "special"}


def _hf_added_tokens(added, path):
    """({content: id}, [content of those marked "special": false]) of
    tokenizer.json's added_tokens, or FormatError."""
    if not isinstance(added, list):
        raise FormatError("%s: added_tokens must be a list" % path)
    specials, ids = {}, {}
    for k, entry in enumerate(added):
        if not (isinstance(entry, dict) and isinstance(entry.get("content"), str) and entry["content"]
                and type(entry.get("id")) is int and 0 <= entry["id"] <= _MAX_ID):
            raise FormatError("%s: added_tokens[%d] needs a non-empty content and an integer id" % (path, k))
        unknown = sorted(set(entry) - _ADDED_TOKEN_KEYS)
        if unknown:
            raise FormatError("%s: added_tokens[%d] has fields pybpe does not know: %s" % (path, k, unknown))
        for flag in ("single_word", "lstrip", "rstrip", "normalized", "special"):
            if not isinstance(entry.get(flag, False), bool):
                raise FormatError("%s: added_tokens[%d].%s must be true or false" % (path, k, flag))
        for flag in ("single_word", "lstrip", "rstrip"):
            if entry.get(flag, False):
                raise FormatError("%s: added_tokens[%d] (%r) sets %s, which pybpe does not support (it "
                                  "changes what the token matches)" % (path, k, entry["content"], flag))
        content, i = entry["content"], entry["id"]
        if content in specials:
            raise FormatError("%s: added_tokens[%d]: %r is added twice" % (path, k, content))
        if i in ids:
            raise FormatError("%s: added_tokens[%d]: ID %d is given to both %r and %r"
                              % (path, k, i, ids[i], content))
        specials[content] = i
        ids[i] = content
    return specials, [e["content"] for e in added if not e.get("special", False)]


def load_hf_tokenizer(path, *, name=None, backend=None):
    """An Encoding from a Hugging Face tokenizer.json (BPE model, ByteLevel).

    Added tokens become special tokens: encode with allowed_special="all" to
    match them where HF does.  `ignore_merges` turns on whole-piece lookup.
    Features pybpe does not implement are a FormatError naming them, unless
    they cannot change the IDs (the comment above _ADDED_TOKEN_KEYS lists which).
    """
    path = os.fspath(path)
    return _hf_encoding(_load_json(path), path, name, backend)


def _hf_encoding(doc, path, name, backend):
    if not isinstance(doc, dict) or not isinstance(doc.get("model"), dict):
        raise FormatError("%s: not a tokenizer.json (no model object)" % path)
    model = doc["model"]
    if model.get("type", "BPE") != "BPE":
        raise FormatError("%s: model type %s is not BPE" % (path, reprlib.repr(model.get("type"))))
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise FormatError("%s: model.%s is not supported by byte-level pybpe" % (path, key))
    if model.get("byte_fallback") or model.get("dropout") not in (None, 0, 0.0):
        raise FormatError("%s: byte_fallback and dropout are not supported" % path)
    if doc.get("normalizer") is not None:
        raise FormatError("%s: normalizers are not supported" % path)
    for key in ("truncation", "padding"):
        if doc.get(key) is not None:
            raise FormatError("%s: %s is not supported (it changes the IDs); set it to null" % (path, key))
    post = doc.get("post_processor")
    if post is not None and not (isinstance(post, dict) and post.get("type") == "ByteLevel"):
        kind = post.get("type") if isinstance(post, dict) else type(post).__name__
        raise FormatError("%s: post_processor %s is not supported (pybpe adds no tokens around the "
                          "text); only null or ByteLevel" % (path, kind))
    decoder = doc.get("decoder")
    if decoder is not None and not (isinstance(decoder, dict) and decoder.get("type") == "ByteLevel"):
        raise FormatError("%s: the decoder must be ByteLevel" % path)
    pat_str = _hf_pattern(doc.get("pre_tokenizer"), path)
    specials, ordinary = _hf_added_tokens(doc.get("added_tokens") or [], path)
    for key in ("vocab", "merges"):  # HF refuses a model without either ("Missing vocab/merges")
        if key not in model:
            raise FormatError("%s: no model.%s" % (path, key))
    vocab = model["vocab"]
    ranks, _ = _split_vocab(vocab, path, specials)
    if model.get("unk_token") is not None and any(bytes([b]) not in ranks for b in range(256)):
        raise FormatError("%s: model.unk_token is not supported when some byte has no token "
                          "(pybpe has no unknown token)" % path)
    merges_raw = model["merges"]
    if not isinstance(merges_raw, list):
        raise FormatError("%s: model.merges must be a list" % path)
    ignore_merges = model.get("ignore_merges", False)
    if not isinstance(ignore_merges, bool):
        raise FormatError("%s: model.ignore_merges must be true or false" % path)
    merges = _parse_merges(merges_raw, vocab, path, lambda k: "merges[%d]" % k)
    _keep_added_entries(ranks, specials, vocab, merges)
    _check_special_ids(ranks, specials, path)
    return _build(path, name=name or os.path.splitext(os.path.basename(path))[0], pat_str=pat_str,
                  mergeable_ranks=ranks, special_tokens=specials, merges=merges,
                  lookup_whole_piece=ignore_merges, backend=backend, pattern_source=path,
                  kept_when_skipping=ordinary)


def dump_hf_tokenizer(enc, path):
    """Write an Encoding as a tokenizer.json that HF `tokenizers` loads and
    encodes to the same IDs (special tokens as added tokens).

    An Encoding built from ranks (tiktoken's rule) gets merges_from_ranks and
    `ignore_merges: true`, HF's switch for tiktoken's whole-piece lookup.
    """
    decoder = {i: t for t, i in enc.mergeable_ranks.items()}
    # Special tokens go in the model's vocab too (as in GPT-2's own
    # tokenizer.json): HF gives an added token that the model does not know
    # the next free ID, ignoring the one written in added_tokens.
    vocab = _spelled_vocab(enc, "a tokenizer.json")
    merges = [[token_to_unicode(decoder[a]), token_to_unicode(decoder[b])] for a, b in _encoding_merges(enc)]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    if enc.pat_str == _WHOLE_TEXT:
        pre = byte_level
    else:
        pre = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": to_oniguruma(enc.pat_str)}, "behavior": "Isolated",
             "invert": False},
            byte_level]}
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": s not in enc._kept_when_skipping}
            for s, i in sorted(enc.special_tokens.items(), key=lambda x: x[1])],
        "normalizer": None,
        "pre_tokenizer": pre,
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": bool(enc.lookup_whole_piece), "vocab": vocab, "merges": merges},
    }
    atomic_write(path, json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8"))


# -- pybpe.load: every format, recognised by its content -------------------------------

# A .tiktoken line: base64 of the token, one space, the rank.
_TIKTOKEN_LINE = re.compile(rb"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)? [0-9]+\r?")


def sniff(path):
    """What file `path` holds, judged by its content, for pybpe.load:
    (kind, content) where kind is "pybpe" (a BPETokenizer.save file), "hf"
    (a tokenizer.json) or "gpt2-vocab" ({token: id}) with content the JSON
    document, or "tiktoken" / "gpt2-merges" with content the raw bytes.
    FormatError, naming the formats it looked for, for anything else."""
    data = _read_bytes(path)
    if data.lstrip()[:1] in (b"{", b"["):
        doc = _load_json(path, data)
        if isinstance(doc, dict) and "format" in doc:
            return "pybpe", doc
        if isinstance(doc, dict) and "model" in doc:
            return "hf", doc
        if isinstance(doc, dict) and doc and all(type(i) is int for i in doc.values()):
            return "gpt2-vocab", doc
        raise FormatError('%s: JSON that pybpe.load does not recognise: not a pybpe tokenizer (no "format"), '
                          'not a Hugging Face tokenizer.json (no "model"), not a GPT-2 vocab.json '
                          '({token: integer id})' % path)
    first = next((line for line in data.split(b"\n") if line.strip()), b"")
    if _TIKTOKEN_LINE.fullmatch(first) or path.endswith(".tiktoken"):  # (the name decides a broken one)
        return "tiktoken", data
    if first.startswith(b"#version") or len(first.split(b" ")) == 2:
        return "gpt2-merges", data
    raise FormatError("%s: not a file pybpe.load recognises (a pybpe tokenizer .json, a Hugging Face "
                      "tokenizer.json, a GPT-2 vocab.json or merges.txt, a .tiktoken rank file)" % path)


def _beside(path, names):
    """The first of `names` (file names, None skipped) that exists in path's directory."""
    folder = os.path.dirname(path)
    for name in dict.fromkeys(n for n in names if n):
        candidate = os.path.join(folder, name)
        if candidate != path and os.path.isfile(candidate):
            return candidate
    return None


def _swap(name, old, new):
    return name[: -len(old)] + new if name.endswith(old) else None


def load_sniffed(path, kind, content, backend=None):
    """The Encoding a file of `kind` (see sniff) amounts to, or FormatError
    saying which loader to call with what.  "pybpe" files are the
    tokenizer's to load, "tiktoken" files the registry's
    (registry.load_rank_file: only a published rank file is an encoding)."""
    base = os.path.basename(path)
    if kind == "hf":
        return _hf_encoding(content, path, None, backend)
    if kind == "gpt2-vocab":
        merges = _beside(path, [_swap(base, "vocab.json", "merges.txt"), _swap(base, "encoder.json", "vocab.bpe"),
                                "merges.txt", "vocab.bpe"])
        if merges is None:
            raise FormatError("%s: a GPT-2 vocabulary ({token: id}) with no merges.txt or vocab.bpe beside it: "
                              "call pybpe.load_gpt2_bpe(vocab_path, merges_path)" % path)
        return load_gpt2_bpe(path, merges, backend=backend)
    if kind == "gpt2-merges":
        vocab = _beside(path, [_swap(base, "merges.txt", "vocab.json"), _swap(base, "vocab.bpe", "encoder.json"),
                               "vocab.json", "encoder.json"])
        if vocab is None:
            raise FormatError("%s: a GPT-2 merge list with no vocab.json or encoder.json beside it: "
                              "call pybpe.load_gpt2_bpe(vocab_path, merges_path)" % path)
        return load_gpt2_bpe(vocab, path, backend=backend)
    raise ValueError("unknown kind %r" % (kind,))
