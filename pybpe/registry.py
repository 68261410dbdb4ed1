"""Named encodings, offline: get_encoding("gpt2") and friends.

gpt2 (alias r50k_base) and cl100k_base load from rank files shipped in
pybpe/data/, checked against their published sha256.  Other names tiktoken
knows (p50k_base, p50k_edit, o200k_base) need the user's own copy of the rank
file: an explicit `path=`, the environment variable PYBPE_<NAME>_FILE (e.g.
PYBPE_O200K_BASE_FILE) or <NAME>.tiktoken in the directory PYBPE_TIKTOKEN_DIR.
Nothing here ever touches the network.

    >>> import pybpe
    >>> pybpe.get_encoding("cl100k_base").encode("hello world")
    [15339, 1917]
"""
import hashlib
import os
import threading

from . import patterns
from .errors import FormatError
from .formats import load_tiktoken_bpe

_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
_ENDOFTEXT = "<|endoftext|>"

# name -> (rank file name, sha256, pattern, special tokens, explicit_n_vocab).
# Hashes are those tiktoken_ext/openai_public.py publishes for the same files.
_SPECS = {
    "gpt2": ("gpt2.tiktoken", "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
             patterns.GPT2, {_ENDOFTEXT: 50256}, 50257),
    "r50k_base": ("gpt2.tiktoken", "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
                  patterns.GPT2, {_ENDOFTEXT: 50256}, 50257),
    "cl100k_base": ("cl100k_base.tiktoken", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
                    patterns.CL100K, {_ENDOFTEXT: 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                                      "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}, None),
    "p50k_base": ("p50k_base.tiktoken", "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
                  patterns.GPT2, {_ENDOFTEXT: 50256}, 50281),
    "p50k_edit": ("p50k_base.tiktoken", "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
                  patterns.GPT2, {_ENDOFTEXT: 50256, "<|fim_prefix|>": 50281, "<|fim_middle|>": 50282,
                                  "<|fim_suffix|>": 50283}, None),
    "o200k_base": ("o200k_base.tiktoken", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
                   patterns.O200K, {_ENDOFTEXT: 199999, "<|endofprompt|>": 200018}, None),
}
_SHIPPED = ("gpt2", "r50k_base", "cl100k_base")

_lock = threading.Lock()
_cache = {}       # (name, path, backend) -> Encoding
_rank_cache = {}  # (absolute path, sha256) -> {bytes: rank}, shared by aliases


def list_encoding_names():
    """Every name get_encoding knows; the first three work with no files.

        >>> list_encoding_names()[:3]
        ['gpt2', 'r50k_base', 'cl100k_base']
    """
    return list(_SHIPPED) + [n for n in _SPECS if n not in _SHIPPED]


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _find_file(name, filename, path):
    """The rank file for `name`, or FileNotFoundError listing every place tried."""
    tried = []
    candidates = []
    if path is not None:
        candidates.append(("path argument", os.fspath(path)))
    var = "PYBPE_%s_FILE" % name.upper()
    if os.environ.get(var):
        candidates.append((var, os.environ[var]))
    if os.environ.get("PYBPE_TIKTOKEN_DIR"):
        candidates.append(("PYBPE_TIKTOKEN_DIR", os.path.join(os.environ["PYBPE_TIKTOKEN_DIR"], filename)))
    if name in _SHIPPED:
        candidates.append(("shipped with pybpe", os.path.join(_DATA, filename)))
    for how, candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
        tried.append("%s (%s)" % (candidate, how))
    if not tried:
        tried.append("nowhere: no path argument, %s or PYBPE_TIKTOKEN_DIR is set" % var)
    raise FileNotFoundError(
        "no rank file for encoding %r; pybpe never downloads. Looked in: %s. Pass path=..., or set %s "
        "to the file, or PYBPE_TIKTOKEN_DIR to a directory holding %s" % (name, "; ".join(tried), var, filename))


def _load_ranks(path, expected_sha256):
    real = os.path.abspath(path)
    ranks = _rank_cache.get((real, expected_sha256))
    if ranks is None:
        actual = _sha256(real)
        if actual != expected_sha256:
            raise FormatError("%s: sha256 is %s, expected %s (a different or damaged file)"
                              % (real, actual, expected_sha256))
        ranks = load_tiktoken_bpe(real)
        _rank_cache[(real, expected_sha256)] = ranks
    return ranks


def get_encoding(name, *, path=None, backend=None):
    """The Encoding called `name` (see list_encoding_names), loaded once and cached.

    path: an explicit rank file for the name (its sha256 must still match).
    backend: "auto" | "c" | "python" for the merging (default: PYBPE_BACKEND).

        >>> get_encoding("gpt2").encode("hello world")
        [31373, 995]
        >>> get_encoding("gpt2") is get_encoding("gpt2")
        True
    """
    from . import _backend
    from .encoding import Encoding

    if name not in _SPECS:
        raise ValueError("unknown encoding %r; known: %s" % (name, ", ".join(list_encoding_names())))
    key = (name, None if path is None else os.path.abspath(path), _backend.resolve(backend))
    with _lock:
        enc = _cache.get(key)
        if enc is None:
            filename, sha, pat, specials, n_vocab = _SPECS[name]
            ranks = _load_ranks(_find_file(name, filename, path), sha)
            enc = Encoding(name, pat_str=pat, mergeable_ranks=ranks, special_tokens=specials,
                           explicit_n_vocab=n_vocab, backend=key[2])
            _cache[key] = enc
        return enc
