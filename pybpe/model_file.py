"""The model file of a BPETokenizer: what BPETokenizer.save writes and
pybpe.load reads back.

Versioned JSON, written atomically (pybpe/_atomic.py), with the header on
top and one vocab entry or merge per line, so the file reads, greps and
diffs well:

    {
    "format": "pybpe.BPETokenizer",
    "version": 1,
    "config": {...the constructor's arguments...},
    "token_encoding": "utf-8",          (or "latin-1": tokens as bytes)
    "vocab": [ one token per line, in ID order ],
    "merges": [ [left ID, right ID], one per line, by rank ],
    "merge_counts": [ the count each merge had when chosen ],
    "unicode_version": "15.0.0"         (or null)
    }

This module knows the format: the header, the types and lengths of the
fields, how tokens are spelt, the Unicode version.  What needs a tokenizer
(the config is valid, the vocab fits its flavour, each merge makes a token
of the vocab) is checked by pybpe/tokenizer.py, which builds it.  Every
problem is a FormatError naming the file.
"""
import json
import reprlib
import warnings

from ._atomic import atomic_write
from .errors import FormatError, UnicodeVersionWarning

FORMAT_NAME = "pybpe.BPETokenizer"
FORMAT_VERSION = 1
# The config keys a model file may hold (BPETokenizer's arguments).
CONFIG_KEYS = frozenset({"vocab_size", "min_frequency", "max_token_length", "special_tokens", "pretokenizer",
                         "end_of_word", "marker", "byte_level", "lowercase"})


def write(path, config, tokens, flavour, merges, merge_counts, unicode_version):
    """Write a model file to a path (atomically; symlinks written through, a
    pipe or device such as /dev/stdout written as a stream) or to a binary
    file object.  tokens: every regular token's bytes in ID order; flavour:
    the tokenizer's Flavour (byte level or characters); merges: [(left ID,
    right ID)] by rank."""
    # Character tokens are written as text, except where a token holds a
    # lone surrogate: JSON reads the escapes of a high surrogate followed
    # by a low one as the single character they pair into, so then every
    # token is written as its bytes, one latin-1 character per byte.
    as_bytes = flavour.byte_level or any(_has_surrogate(flavour.from_bytes(t)) for t in tokens)
    document = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "config": config,
        "token_encoding": "latin-1" if as_bytes else "utf-8",
        "vocab": [t.decode("latin-1") if as_bytes else flavour.from_bytes(t) for t in tokens],
        "merges": [[a, b] for a, b in merges],
        "merge_counts": list(merge_counts),
        "unicode_version": unicode_version,
    }
    atomic_write(path, _dump_json(document).encode("utf-8"))


def read_header(doc, path):
    """(config, vocab, merges, merge_counts) of a parsed model file, after
    the checks that need no tokenizer: the format and version, and the
    fields' types; merge_counts defaults to zeros (files written before it
    existed).  FormatError("<path>: ...") otherwise."""
    def fail(problem):
        raise FormatError("%s: %s" % (path, problem))

    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        fail("not a pybpe tokenizer file (no \"format\": %r)" % FORMAT_NAME)
    version = doc.get("version")
    if type(version) is not int or version != FORMAT_VERSION:  # not 1.0, not true
        fail("format version %s is not supported (this pybpe reads version %d)"
             % (reprlib.repr(version), FORMAT_VERSION))
    config, vocab, merges = doc.get("config"), doc.get("vocab"), doc.get("merges")
    if not isinstance(config, dict):
        fail("\"config\" must be an object")
    if not isinstance(vocab, list) or not all(isinstance(t, str) for t in vocab):
        fail("\"vocab\" must be a list of strings")
    if not isinstance(merges, list):
        fail("\"merges\" must be a list of [left, right] vocab IDs")
    counts = doc.get("merge_counts", [0] * len(merges))
    if not isinstance(counts, list) or len(counts) != len(merges):
        fail("\"merge_counts\" must be a list as long as \"merges\"")
    extra = set(config) - CONFIG_KEYS
    if extra:
        fail("unknown config keys %s" % sorted(extra))
    return config, vocab, merges, counts


def check_unicode_version(saved, running, path):
    """A model keeps the splitting it was trained with only while the tables
    are the same: the presets' (tiktoken's, pinned in pybpe) change only with
    a pybpe release that follows a new tiktoken, a pattern's with the `regex`
    module.  pybpe cannot bring old tables back, so a difference is a
    UnicodeVersionWarning, and the model loads and works.  Files without the
    field (written before it existed) load silently."""
    if saved is None:
        return
    if not isinstance(saved, str):
        raise FormatError("%s: " % path + "\"unicode_version\" must be a string or null, not %r" % (saved,))
    if saved != running:
        warnings.warn(UnicodeVersionWarning(
            "%s: its pre-tokenizer was trained with Unicode %s character classes, this installation's are "
            "Unicode %s: text with code points assigned or re-classified in between may split into "
            "other words" % (path, saved, running)), stacklevel=4)


def _has_surrogate(text):
    """Whether `text` holds a code point of U+D800..U+DFFF."""
    return not text.isascii() and any("\ud800" <= c <= "\udfff" for c in text)


def _dump_json(document):
    """JSON with the header on top and one vocab entry / merge per line, so a
    model file reads (and greps, and diffs) well.  ASCII-only (non-ASCII as
    \\uXXXX escapes); a vocab holding lone surrogates is written as bytes
    instead (see save)."""
    fields = []
    for key, value in document.items():
        if isinstance(value, list):
            body = ",\n  ".join(json.dumps(v, ensure_ascii=True) for v in value)
            fields.append("%s: [\n  %s\n]" % (json.dumps(key), body) if value else '%s: []' % json.dumps(key))
        else:
            fields.append("%s: %s" % (json.dumps(key), json.dumps(value, ensure_ascii=True)))
    return "{\n" + ",\n".join(fields) + "\n}\n"
