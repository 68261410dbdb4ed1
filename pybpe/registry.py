"""Named encodings, offline: get_encoding("o200k_base") and friends, and
encodings of one's own under a name.

Built in are tiktoken's seven names: gpt2 and r50k_base (the same ranks),
p50k_base, p50k_edit, cl100k_base, o200k_base and o200k_harmony, each with
tiktoken's pattern, special tokens and n_vocab.  Their four rank files ship in
pybpe/data/ and are checked against their published sha256 when first loaded.
A different copy of a rank file can be named by an explicit `path=`, the
environment variable PYBPE_<NAME>_FILE (e.g. PYBPE_O200K_BASE_FILE) or
<file>.tiktoken in the directory PYBPE_TIKTOKEN_DIR; its sha256 must still
match.  Files are looked for on a name's first use, then the Encoding is
cached.  Nothing here ever touches the network.

    >>> import pybpe
    >>> pybpe.get_encoding("cl100k_base").encode("hello world")
    [15339, 1917]

Encodings of one's own, found by name like the built-in ones -- two ways,
both taking a *constructor*: a function of no arguments returning the keyword
arguments of pybpe.Encoding ({"name", "pat_str", "mergeable_ranks",
"special_tokens", optionally "explicit_n_vocab"}), called on first use:

  - register_encoding(name, constructor) from code, or
  - a plugin: any module in the namespace package `pybpe_ext` (a directory
    pybpe_ext/ without __init__.py, anywhere on sys.path) holding a dict
    ENCODING_CONSTRUCTORS = {name: constructor}.  This is tiktoken's
    tiktoken_ext mechanism under pybpe's own namespace; pybpe never reads
    tiktoken_ext (its openai_public plugin downloads the rank files).

    >>> ranks = {bytes([b]): b for b in range(256)}
    >>> register_encoding("doctest_bytes", lambda: {"name": "doctest_bytes", "pat_str": r"\\S+|\\s+",
    ...                   "mergeable_ranks": ranks, "special_tokens": {"<|end|>": 256}})
    >>> get_encoding("doctest_bytes").encode("hi")
    [104, 105]
    >>> "doctest_bytes" in list_encoding_names()
    True
"""
import hashlib
import importlib
import os
import pkgutil
import threading

from . import core, patterns
from .encoding import Encoding
from .errors import FormatError
from .formats import load_tiktoken_bpe

_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
_ENDOFTEXT = "<|endoftext|>"
_FIM = {"<|fim_prefix|>": 1, "<|fim_middle|>": 2, "<|fim_suffix|>": 3}  # offsets after a base ID

# Rank files: name -> sha256.  The hashes are those tiktoken checks for
# OpenAI's published files (tiktoken_ext/openai_public.py); the shipped copies
# are byte-identical.
_FILES = {
    "gpt2.tiktoken": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "p50k_base.tiktoken": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "cl100k_base.tiktoken": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base.tiktoken": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}


def _o200k_harmony_specials():
    # o200k_base's two, plus the chat-format tokens of the gpt-oss models:
    # every ID from 199998 to 201087 is a special token, most of them
    # "<|reserved_N|>" placeholders.  As in tiktoken, 200018 has two names,
    # <|endofprompt|> (kept from o200k_base, and what it decodes to) and
    # <|reserved_200018|>.
    named = {199998: "<|startoftext|>", 199999: _ENDOFTEXT, 200002: "<|return|>", 200003: "<|constrain|>",
             200005: "<|channel|>", 200006: "<|start|>", 200007: "<|end|>", 200008: "<|message|>",
             200012: "<|call|>"}
    specials = {_ENDOFTEXT: 199999, "<|endofprompt|>": 200018}
    specials.update((named.get(i, "<|reserved_%d|>" % i), i) for i in range(199998, 201088))
    return specials


# name -> (rank file, pattern, special tokens, explicit_n_vocab), in
# tiktoken's order (list_encoding_names keeps it).  The gpt2 pattern is
# tiktoken's older spelling, which splits every text identically to the
# possessive one tiktoken now uses and is faster in the `regex` module (see
# pybpe/patterns.py).
_BUILTIN = {
    "gpt2": ("gpt2.tiktoken", patterns.GPT2, {_ENDOFTEXT: 50256}, 50257),
    "r50k_base": ("gpt2.tiktoken", patterns.GPT2, {_ENDOFTEXT: 50256}, 50257),
    "p50k_base": ("p50k_base.tiktoken", patterns.GPT2, {_ENDOFTEXT: 50256}, 50281),
    "p50k_edit": ("p50k_base.tiktoken", patterns.GPT2,
                  dict({_ENDOFTEXT: 50256}, **{t: 50280 + k for t, k in _FIM.items()}), None),
    "cl100k_base": ("cl100k_base.tiktoken", patterns.CL100K,
                    dict({_ENDOFTEXT: 100257, "<|endofprompt|>": 100276},
                         **{t: 100257 + k for t, k in _FIM.items()}), None),
    "o200k_base": ("o200k_base.tiktoken", patterns.O200K, {_ENDOFTEXT: 199999, "<|endofprompt|>": 200018}, None),
    "o200k_harmony": ("o200k_base.tiktoken", patterns.O200K, _o200k_harmony_specials(), None),
}

# The namespace package searched for plugins (see the module docstring).
PLUGIN_NAMESPACE = "pybpe_ext"

_lock = threading.RLock()
_cache = {}        # (name, path, backend) -> Encoding
_rank_cache = {}   # (absolute path, sha256) -> {bytes: rank}, shared by aliases
_registered = {}   # name -> constructor, from register_encoding
_plugins = None    # name -> (constructor, plugin module name), once searched


def list_encoding_names():
    """Every name get_encoding knows: the built-in ones in tiktoken's order,
    then registered ones, then those of plugins.

        >>> list_encoding_names()[:7]
        ['gpt2', 'r50k_base', 'p50k_base', 'p50k_edit', 'cl100k_base', 'o200k_base', 'o200k_harmony']
    """
    with _lock:
        return list(_BUILTIN) + list(_registered) + [n for n in _plugin_constructors() if n not in _registered]


def register_encoding(name, constructor):
    """Make get_encoding(name) build an Encoding from constructor(), a
    function of no arguments returning pybpe.Encoding's keyword arguments
    (the contract of tiktoken's ENCODING_CONSTRUCTORS).  It is called once,
    on first use.  ValueError if the name is taken (built in, registered, or
    a plugin's)."""
    if not isinstance(name, str) or not name:
        raise TypeError("an encoding name must be a non-empty str, not %r" % (name,))
    if not callable(constructor):
        raise TypeError("constructor for %r must be callable (returning Encoding's keyword arguments), "
                        "not %s" % (name, type(constructor).__name__))
    with _lock:
        if name in _BUILTIN or name in _registered:
            raise ValueError("encoding name %r is already taken" % name)
        if name in _plugin_constructors():
            raise ValueError("encoding name %r is already taken by plugin %s" % (name, _plugins[name][1]))
        _registered[name] = constructor


def _plugin_constructors():
    """{name: (constructor, module name)} of every pybpe_ext plugin, found
    once.  A broken plugin raises every time it is asked for (nothing half
    read is kept)."""
    global _plugins
    if _plugins is not None:
        return _plugins
    found = {}
    try:
        namespace = importlib.import_module(PLUGIN_NAMESPACE)
    except ImportError:
        namespace = None
    if namespace is not None:
        for _, module_name, _ in pkgutil.iter_modules(namespace.__path__, PLUGIN_NAMESPACE + "."):
            module = importlib.import_module(module_name)
            constructors = getattr(module, "ENCODING_CONSTRUCTORS", None)
            if not isinstance(constructors, dict):
                raise ValueError("plugin %s defines no ENCODING_CONSTRUCTORS dict {name: constructor}"
                                 % module_name)
            for name, constructor in constructors.items():
                if name in _BUILTIN or name in found:
                    other = "pybpe" if name in _BUILTIN else found[name][1]
                    raise ValueError("plugin %s defines encoding %r, which %s already defines"
                                     % (module_name, name, other))
                found[name] = (constructor, module_name)
    _plugins = found
    return found


def encoding_of_rank_file(data):
    """The first built-in encoding whose rank file is exactly `data` (bytes),
    or None: pybpe.load uses it to turn a published .tiktoken file into its
    encoding."""
    digest = hashlib.sha256(data).hexdigest()
    for name, (filename, _, _, _) in _BUILTIN.items():
        if _FILES[filename] == digest:
            return name
    return None


def load_rank_file(path, data, backend=None):
    """pybpe.load of a .tiktoken rank file whose bytes are `data`: one of
    OpenAI's files is its encoding (its pattern and special tokens are
    known); any other is a FormatError saying how to build an encoding."""
    name = encoding_of_rank_file(data)
    if name is not None:
        return get_encoding(name, path=path, backend=backend)
    load_tiktoken_bpe(path)  # a malformed file gets its line-by-line FormatError first
    raise FormatError("%s: a .tiktoken rank file holds no pattern and no special tokens, so it is not an "
                      "encoding by itself: build one with pybpe.Encoding(name, pat_str=..., "
                      "mergeable_ranks=pybpe.load_tiktoken_bpe(path), special_tokens={...})" % path)


def file_sha256(path):
    """The SHA-256 of a file's contents, in hex (read in 1 MB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _find_file(name, filename, path):
    """The rank file for `name`, or FileNotFoundError listing every place tried."""
    if path is not None:  # an explicit file is the only one tried
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError("rank file for encoding %r not found: %s (the path argument)" % (name, path))
        return path
    candidates = []
    var = "PYBPE_%s_FILE" % name.upper()
    if os.environ.get(var):
        candidates.append((var, os.environ[var]))
    if os.environ.get("PYBPE_TIKTOKEN_DIR"):
        candidates.append(("PYBPE_TIKTOKEN_DIR", os.path.join(os.environ["PYBPE_TIKTOKEN_DIR"], filename)))
    candidates.append(("shipped with pybpe", os.path.join(_DATA, filename)))
    tried = []
    for how, candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
        tried.append("%s (%s)" % (candidate, how))
    raise FileNotFoundError(
        "no rank file for encoding %r; pybpe never downloads. Looked in: %s. Pass path=..., or set %s "
        "to the file, or PYBPE_TIKTOKEN_DIR to a directory holding %s" % (name, "; ".join(tried), var, filename))


def _load_ranks(path, expected_sha256):
    real = os.path.abspath(path)
    ranks = _rank_cache.get((real, expected_sha256))
    if ranks is None:
        actual = file_sha256(real)
        if actual != expected_sha256:
            raise FormatError("%s: sha256 is %s, expected %s (a different or damaged file)"
                              % (real, actual, expected_sha256))
        ranks = load_tiktoken_bpe(real)
        _rank_cache[(real, expected_sha256)] = ranks
    return ranks


def _construct(name, backend):
    # An Encoding from a registered or plugin constructor.
    constructor = _registered.get(name)
    if constructor is None:
        constructor = _plugin_constructors()[name][0]
    kwargs = constructor()
    if not isinstance(kwargs, dict):
        raise TypeError("the constructor of encoding %r returned %s, not a dict of Encoding's keyword "
                        "arguments" % (name, type(kwargs).__name__))
    kwargs = dict(kwargs, backend=backend)
    return Encoding(kwargs.pop("name", name), **kwargs)


def _registered_encoding(name, backend):
    """get_encoding(name, backend=backend): what a pickled registered
    encoding is rebuilt with (pickle passes arguments by position only)."""
    return get_encoding(name, backend=backend)


def get_encoding(name, *, path=None, backend=None):
    """The Encoding called `name` (see list_encoding_names), built once and
    cached per backend.

    path: another copy of a built-in encoding's rank file (its sha256 must
        still match).
    backend: "auto" | "c" | "python" for the merging (default: PYBPE_BACKEND).
    ValueError for a name nothing defines (and, as in tiktoken, for a name
    that is not a str).

        >>> get_encoding("gpt2").encode("hello world")
        [31373, 995]
        >>> get_encoding("gpt2") is get_encoding("gpt2")
        True
        >>> get_encoding("o200k_base").encode("hello world")
        [24912, 2375]
    """
    if not isinstance(name, str):
        raise ValueError("an encoding name must be a str, not %s" % type(name).__name__)
    resolved = core.resolve(backend)
    key = (name, None if path is None else os.path.abspath(path), resolved)
    enc = _cache.get(key)
    if enc is not None:
        return enc
    with _lock:
        enc = _cache.get(key)
        if enc is not None:
            return enc
        if name in _BUILTIN:
            filename, pat, specials, n_vocab = _BUILTIN[name]
            ranks = _load_ranks(_find_file(name, filename, path), _FILES[filename])
            enc = Encoding(name, pat_str=pat, mergeable_ranks=ranks, special_tokens=specials,
                           explicit_n_vocab=n_vocab, backend=resolved)
        elif name in _registered or name in _plugin_constructors():
            if path is not None:
                raise ValueError("path= applies to the built-in encodings only; %r is built by its "
                                 "constructor" % name)
            enc = _construct(name, resolved)
        else:
            raise ValueError("unknown encoding %r; known: %s" % (name, ", ".join(list_encoding_names())))
        if path is None:
            # pickled by name: unpickling calls get_encoding again (see
            # Encoding.__reduce_ex__)
            enc._pickled_by_name = (_registered_encoding, (name, resolved))
        _cache[key] = enc
        return enc
