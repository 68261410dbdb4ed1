"""The fuzz targets: each turns a byte string into a check of pybpe's contract.

A target is a function of one `bytes` argument that returns normally when the
input was handled as promised and raises `Finding` (or lets any unexpected
exception escape) when it was not.  The same bytes always make the same
check, so a saved input replays the finding (`fuzz/run.py --replay`).
Both engines (atheris's libFuzzer and hypothesis) feed these functions raw
bytes; `Draw` reads structure out of them -- small integers, choices, text
from chosen character classes -- so that random bytes reach deep paths:
a loader target mutates a valid file, it does not hope to type one.

Targets (run.py runs each in its own process):
  load-model     pybpe.load on a pybpe model file (JSON)
  load-tiktoken  pybpe.load_tiktoken_bpe on a .tiktoken file
  load-gpt2      pybpe.load_gpt2_bpe on a vocab.json + merges.txt pair
  load-hf        pybpe.load_hf_tokenizer on a tokenizer.json
    contract: the file loads, or FormatError naming the file; never another
    exception.  What loads is used: C and Python give the same IDs (or the
    same exception), and decoding gives the text back.
  encoding       pybpe.Encoding against tiktoken (built offline from the same
    rank files) on arbitrary str, C and Python backends, for gpt2, cl100k_base
    and every other named encoding whose rank file is on this machine:
    encode_ordinary, encode with specials, batches, decode round trips.
  train          BPETokenizer.train on random corpora, every flavour: C ==
    Python == pybpe.reference (merges, vocabulary, encodings), decode round
    trips, save/load, and to_encoding == encode at byte level.
"""
import atexit
import json
import os
import re
import shutil
import tempfile

import regex

import pybpe
from pybpe import core as backends, patterns, reference
from pybpe import formats
from pybpe.errors import FormatError

BACKENDS = backends.available()
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_DATA = os.environ.get("PYBPE_SHARED_DATA") or os.path.join(ROOT, "..", "shared", "data")


class Finding(AssertionError):
    """The input broke pybpe's contract (the message says how)."""


def check(condition, message, *args):
    if not condition:
        raise Finding(message % args if args else message)


# -- reading structure out of bytes ---------------------------------------------------

# Character classes text is drawn from: each is a list of code point ranges.
_WHITESPACE = "\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005" \
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
_CLASSES = [
    [(0x61, 0x7A)],                           # a-z
    [(0x41, 0x5A)],                           # A-Z
    [(0x30, 0x39)],                           # digits
    [(ord(c), ord(c)) for c in _WHITESPACE],  # every str.split() whitespace
    [(0x20, 0x20), (0x0A, 0x0A)],             # space and newline, often
    [(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)],  # ASCII punctuation
    [(0x00, 0x1F), (0x7F, 0x9F)],             # controls
    [(0xA0, 0x24F)],                          # Latin-1 and Latin extended
    [(0x300, 0x36F), (0x1AB0, 0x1AFF)],       # combining marks
    [(0x370, 0x58F), (0x600, 0x6FF), (0x900, 0x97F)],  # Greek, Cyrillic, Armenian, Arabic, Devanagari
    [(0x4E00, 0x9FFF), (0x3040, 0x30FF), (0xAC00, 0xD7A3)],  # CJK, kana, Hangul
    [(0x1F300, 0x1FAFF), (0x2600, 0x27BF)],   # emoji and symbols
    [(0x0558, 0x0558), (0xA7CE, 0xA7CF), (0x3D000, 0x3D010), (0x0870, 0x089F),
     (0x1E030, 0x1E08F), (0xFFF0, 0xFFF8), (0x10FFFE, 0x10FFFF)],  # unassigned / recent
    [(0xD800, 0xDFFF)],                       # surrogates (lone, or pairs by chance)
    [(0x0, 0x10FFFF)],                        # anything
    [(0x660, 0x669), (0x6F0, 0x6F9), (0x966, 0x96F), (0xFF10, 0xFF19), (0x2160, 0x2188)],  # other digits
]
_PIECES = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", " ", "  ", "\n\n", "\r\n",
           "<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>", "<|", "|>", "</w>", "...", "123456",
           "http://", " the", " The", "ing", "\u00e9", "e\u0301", "\U0001f600", "\U0001f468\u200d\U0001f469"]


class Draw:
    """Choices read from the front of a byte string; zeros once it runs out.

        >>> d = Draw(bytes([7, 1, 2]))
        >>> d.int(5), d.int(256 * 256)
        (2, 258)
        >>> d.int(10), d.exhausted
        (0, True)
    """

    def __init__(self, data):
        self.data = data
        self.pos = 0

    @property
    def exhausted(self):
        return self.pos >= len(self.data)

    def bytes(self, n):
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def int(self, n):
        """An int in [0, n); n < 2**32."""
        if n <= 1:
            return 0
        width = (n.bit_length() + 7) // 8
        return int.from_bytes(self.bytes(width).ljust(width, b"\0"), "big") % n

    def bool(self):
        return self.int(2) == 1

    def choice(self, items):
        return items[self.int(len(items))]

    def rest(self):
        chunk = self.data[self.pos:]
        self.pos = len(self.data)
        return chunk

    def char(self, classes=None):
        ranges = self.choice(classes if classes is not None else _CLASSES)
        low, high = self.choice(ranges)
        return chr(low + self.int(high - low + 1))

    def text(self, max_len=64, classes=None):
        """A str of up to about max_len characters: characters from a few
        chosen classes, known tricky pieces, and repeated runs."""
        palette = classes if classes is not None else [self.choice(_CLASSES) for _ in range(1 + self.int(3))]
        out, size = [], self.int(max_len + 1)
        while sum(map(len, out)) < size and not self.exhausted:
            op = self.int(16)
            if op < 12:
                out.append(self.char(palette))
            elif op < 14:
                out.append(self.choice(_PIECES))
            elif out:  # repeat something already there (long runs, long pieces)
                out.append(out[-1 - self.int(min(len(out), 4))] * (2 + self.int(200)))
        return "".join(out)


# -- mutating files --------------------------------------------------------------------

def _json_value(d, depth=0):
    """A random JSON value: scalars that break type checks, nesting, big numbers."""
    kind = d.int(12)
    if kind == 0:
        return None
    if kind == 1:
        return d.bool()
    if kind == 2:
        return d.choice([0, 1, -1, 255, 256, 2**31, 2**32 - 2, 2**32 - 1, 2**32, 2**63, 2**64, -2**63])
    if kind == 3:
        return d.int(1 << 16) - 100
    if kind == 4:
        return d.choice([0.0, 1.0, -0.5, 1e308, float("nan")])
    if kind == 5:
        return d.text(12)
    if kind == 6:
        return d.choice(["", "a", "ab", "a b", "<|endoftext|>", "\u0120", "\u0120t", "version", "BPE",
                         "ByteLevel", "Sequence", "Split", "whitespace", "gpt2", "(a|aa)+$", "[", "suffix"])
    if kind == 7 and depth < 3:
        return [_json_value(d, depth + 1) for _ in range(d.int(4))]
    if kind == 8 and depth < 3:
        return {d.text(6): _json_value(d, depth + 1) for _ in range(d.int(4))}
    if kind == 9:  # a huge integer (spelled in by _serialize: int() refuses > 4300 digits)
        return "\0HUGE%d\0" % (1 + d.int(6000))
    if kind == 10:  # deep nesting, past the JSON parser's recursion limit
        return "\0DEEP%d\0" % (1 + d.int(100000))
    return d.int(300)


def _paths(node, prefix=()):
    """Every (path, value) in a JSON document, the root first."""
    yield prefix, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, prefix + (index,))


def _get(node, path):
    for key in path:
        node = node[key]
    return node


def mutate_json(doc, d):
    """1-4 structural edits of a parsed JSON document, driven by `d`; the
    document comes back serialized (bytes), sometimes truncated or spliced."""
    for _ in range(1 + d.int(4)):
        paths = list(_paths(doc))
        # Prefer small containers and scalars near the top: sample among the
        # first few hundred paths and the last few (vocab and merges are long).
        path, value = paths[d.int(min(len(paths), 400))] if d.bool() else paths[-1 - d.int(min(len(paths), 50))]
        op = d.int(8)
        if not path:
            if op < 2:
                doc = _json_value(d)
            continue
        parent, key = _get(doc, path[:-1]), path[-1]
        if op == 0:
            del parent[key]
        elif op in (1, 2):
            parent[key] = _json_value(d)
        elif op == 3 and isinstance(value, str):
            k = d.int(len(value) + 1)
            parent[key] = value[:k] + d.text(3) + value[k + d.int(3):]
        elif op == 4 and isinstance(parent, list):
            parent.insert(d.int(len(parent) + 1), value)  # duplicate
        elif op == 5 and isinstance(parent, list) and len(parent) > 1:
            other = d.int(len(parent))
            parent[key], parent[other] = parent[other], parent[key]
        elif op == 6 and isinstance(value, dict):
            value[d.choice(["type", "version", "format", "config", "vocab", "merges", "model",
                            "pre_tokenizer", "added_tokens", "merge_counts", "ignore_merges",
                            "normalizer", "decoder", "post_processor", d.text(6)])] = _json_value(d)
        elif op == 7 and isinstance(value, int) and not isinstance(value, bool):
            parent[key] = value + d.choice([-1, 1, 256, -256, 2**32, -2**32])
    data = _serialize(doc, ensure_ascii=d.bool())
    return mutate_bytes(data, d) if d.int(4) == 0 else data


def _serialize(doc, ensure_ascii):
    """json.dumps, then each "\0HUGEn\0" / "\0DEEPn\0" string becomes n
    digits / n nested lists."""
    text = json.dumps(doc, ensure_ascii=ensure_ascii)

    def spell(match):
        n = int(match.group(2))
        return "9" * n if match.group(1) == "HUGE" else "[" * n + "]" * n

    return re.sub(r'"\\u0000(HUGE|DEEP)(\d+)\\u0000"', spell, text).encode("utf-8", "surrogatepass")


def mutate_lines(data, d):
    """Line-level edits of a text file (.tiktoken, merges.txt)."""
    lines = data.split(b"\n")
    for _ in range(1 + d.int(4)):
        if not lines:
            lines = [b""]
        k = d.int(len(lines))
        op = d.int(7)
        if op == 0:
            del lines[k]
        elif op == 1:
            lines.insert(d.int(len(lines) + 1), lines[k])
        elif op == 2:
            j = d.int(len(lines))
            lines[k], lines[j] = lines[j], lines[k]
        elif op == 3:
            fields = lines[k].split(b" ")
            fields[d.int(len(fields))] = d.text(8).encode("utf-8", "surrogatepass")
            lines[k] = b" ".join(fields)
        elif op == 4:
            lines[k] += d.choice([b" ", b"\r", b" 1", b"\t", b"==", b" -1", b" 4294967295", b" 99999999999",
                                  "\u0663".encode(), b"\x00", b"\xff"])
        elif op == 5:
            lines.insert(d.int(len(lines) + 1), d.bytes(d.int(24)))
        else:
            lines = lines[:k]
    data = b"\n".join(lines)
    return mutate_bytes(data, d) if d.int(4) == 0 else data


def mutate_bytes(data, d):
    """Byte-level damage: truncate, flip, insert or delete a few bytes."""
    data = bytearray(data)
    for _ in range(1 + d.int(3)):
        op = d.int(4)
        k = d.int(len(data) + 1)
        if op == 0:
            del data[k:]
        elif op == 1 and k < len(data):
            data[k] ^= 1 + d.int(255)
        elif op == 2:
            data[k:k] = d.bytes(1 + d.int(8))
        else:
            del data[k:k + 1 + d.int(16)]
    return bytes(data)


# -- the loader contract ----------------------------------------------------------------

# The files the loaders read, rewritten per input.  Under fuzz/run.py the
# parent makes this directory and removes it after the child: libFuzzer ends
# its process without running atexit handlers, which left one directory per
# target in the system's temporary folder on every run.  Alone (replaying a
# finding in a shell), the process makes and removes its own.
_TMP = os.environ.get("PYBPE_FUZZ_TMP")
if not _TMP:
    _TMP = tempfile.mkdtemp(prefix="pybpe-fuzz-")
    atexit.register(shutil.rmtree, _TMP, True)


def _write(name, data):
    path = os.path.join(_TMP, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def expect_load_or_format_error(what, load, paths):
    """load() either returns or raises FormatError naming one of `paths`."""
    try:
        return load()
    except FormatError as exc:
        check(any(p in str(exc) for p in paths), "FormatError does not name the file: %s", exc)
        return None
    except Exception as exc:  # noqa: BLE001 -- any other type is the finding
        raise Finding("%s raised %s (not FormatError): %s" % (what, type(exc).__name__, exc)) from exc


def same_outcome(fns, what):
    """Call each fn; all must return the same value or raise the same type."""
    results = []
    for fn in fns:
        try:
            results.append(("ok", fn()))
        except (ValueError, KeyError, pybpe.PatternTimeout) as exc:  # the documented refusals
            results.append(("raised", type(exc).__name__))
    for other in results[1:]:
        check(other == results[0], "%s: backends differ: %r vs %r", what, results[0], other)
    return results[0]


def _use_encodings(encs, d):
    """Encode a drawn text on every backend's copy of a loaded Encoding."""
    shared = set(encs[0].special_tokens.values()) & set(encs[0].mergeable_ranks.values())
    check(not shared, "a special token shares ID %s with a regular token", sorted(shared)[:3])
    text = d.text(48)
    kind, ids = same_outcome([lambda e=e: e.encode(text, allowed_special="all") for e in encs],
                             "encode %r" % text)
    if kind == "ok":
        decoded = encs[0].decode_bytes(ids)
        fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        specials = encs[0].special_tokens_set
        if not specials:  # (special tokens may also be spelled as regular tokens)
            check(decoded == fixed.encode("utf-8"), "decode(encode(%r)) gave %r", text, decoded)


class _Seeds:
    """Valid files to mutate, made once per process from small trained tokenizers."""

    def __init__(self):
        corpus = ["low lower newest widest", "the cat sat on the mat, the hat", "naïve café 中文 \U0001f600",
                  "aaabdaaabac", "hello world 123 4567 it's don't"]
        self.models = []
        for options in [dict(), dict(end_of_word="symbol"), dict(end_of_word="symbol", marker="_"),
                        dict(pretokenizer=r" ?\w+| ?[^\w\s]+", end_of_word=None, lowercase=True),
                        dict(byte_level=True, pretokenizer="gpt2", special_tokens=["<|end|>"]),
                        dict(byte_level=True, pretokenizer=None, max_token_length=3)]:
            size = 300 if options.get("byte_level") else 60
            tok = pybpe.BPETokenizer(vocab_size=size, **options)
            tok.train(corpus)
            path = os.path.join(_TMP, "seed.json")
            tok.save(path)
            with open(path, "rb") as f:
                self.models.append(json.loads(f.read()))
        tok = pybpe.BPETokenizer(vocab_size=300, byte_level=True, pretokenizer="gpt2",
                                 special_tokens=["<|endoftext|>"])
        tok.train(corpus)
        enc = tok.to_encoding("seed")
        formats.dump_tiktoken_bpe(enc.mergeable_ranks, os.path.join(_TMP, "seed.tiktoken"))
        with open(os.path.join(_TMP, "seed.tiktoken"), "rb") as f:
            self.tiktoken = f.read()
        formats.dump_gpt2_bpe(enc, os.path.join(_TMP, "seed-vocab.json"), os.path.join(_TMP, "seed-merges.txt"))
        with open(os.path.join(_TMP, "seed-vocab.json"), "rb") as f:
            self.gpt2_vocab = json.loads(f.read())
        with open(os.path.join(_TMP, "seed-merges.txt"), "rb") as f:
            self.gpt2_merges = f.read()
        self.hf = []
        for e in (enc, pybpe.Encoding("ranks", pat_str=patterns.CL100K, mergeable_ranks=enc.mergeable_ranks,
                                      special_tokens={"<|endoftext|>": 400})):
            formats.dump_hf_tokenizer(e, os.path.join(_TMP, "seed-tokenizer.json"))
            with open(os.path.join(_TMP, "seed-tokenizer.json"), "rb") as f:
                self.hf.append(json.loads(f.read()))


_seeds = None


def seeds():
    global _seeds
    if _seeds is None:
        _seeds = _Seeds()
    return _seeds


def _file_bytes(d, valid_docs=None, valid_text=None):
    """The file a loader target reads: raw bytes (mode 0), or a valid seed
    mutated as JSON or as lines."""
    if d.int(8) == 0:
        return d.rest()
    if valid_docs is not None:
        return mutate_json(json.loads(json.dumps(d.choice(valid_docs))), d)
    return mutate_lines(valid_text, d)


def target_load_model(data):
    d = Draw(data)
    path = _write("model.json", _file_bytes(d, seeds().models))
    loaded = [expect_load_or_format_error("pybpe.load", lambda b=b: pybpe.load(path, backend=b), [path]) for b in BACKENDS]
    if loaded[0] is None:
        check(all(t is None for t in loaded), "only some backends loaded %s", path)
        return
    if isinstance(loaded[0], pybpe.BPETokenizer):
        with open(path, "rb") as f:
            version = json.loads(f.read()).get("version")
        check(type(version) is int, "pybpe.load accepted \"version\": %r", version)
    text = d.text(48)
    same_outcome([lambda t=t: t.encode(text, allowed_special="all") for t in loaded], "encode %r" % text)
    same_outcome([lambda t=t: t.decode(t.encode(text)) for t in loaded], "decode(encode(%r))" % text)
    for t in loaded[1:]:  # (pybpe.load gives an Encoding for the other formats it recognises)
        check((t.mergeable_ranks == loaded[0].mergeable_ranks) if isinstance(t, pybpe.Encoding)
              else (t.vocab, t.merges) == (loaded[0].vocab, loaded[0].merges), "backends loaded different models")


def target_load_tiktoken(data):
    d = Draw(data)
    path = _write("ranks.tiktoken", _file_bytes(d, valid_text=seeds().tiktoken))
    ranks = expect_load_or_format_error("load_tiktoken_bpe", lambda: formats.load_tiktoken_bpe(path), [path])
    if ranks is None:
        return
    check(isinstance(ranks, dict) and all(isinstance(k, bytes) and k and type(v) is int for k, v in ranks.items()),
          "load_tiktoken_bpe returned something that is not {bytes: int}")
    check(len(set(ranks.values())) == len(ranks), "load_tiktoken_bpe returned duplicate ranks")
    encs = []
    for b in BACKENDS:
        try:
            encs.append(pybpe.Encoding("t", pat_str=patterns.GPT2, mergeable_ranks=ranks, special_tokens={},
                                       backend=b))
        except ValueError as exc:
            raise Finding("Encoding refused what load_tiktoken_bpe accepted: %s" % exc) from exc
    _use_encodings(encs, d)


def target_load_gpt2(data):
    d = Draw(data)
    s = seeds()
    vocab = _file_bytes(d, [s.gpt2_vocab]) if d.bool() else json.dumps(s.gpt2_vocab).encode()
    merges = _file_bytes(d, valid_text=s.gpt2_merges) if d.bool() else s.gpt2_merges
    vpath, mpath = _write("vocab.json", vocab), _write("merges.txt", merges)
    encs = [expect_load_or_format_error("load_gpt2_bpe",
                                        lambda b=b: formats.load_gpt2_bpe(vpath, mpath, backend=b), [vpath, mpath])
            for b in BACKENDS]
    if encs[0] is not None:
        _use_encodings(encs, d)


def target_load_hf(data):
    d = Draw(data)
    path = _write("tokenizer.json", _file_bytes(d, seeds().hf))
    encs = [expect_load_or_format_error("load_hf_tokenizer",
                                        lambda b=b: formats.load_hf_tokenizer(path, backend=b), [path])
            for b in BACKENDS]
    if encs[0] is not None:
        _use_encodings(encs, d)


# -- Encoding against tiktoken ----------------------------------------------------------

_NAMES = ("gpt2", "cl100k_base", "o200k_base", "p50k_base")
_encodings = None


def _named(name, backend):
    """get_encoding(name), or from the shared data folder's rank file (older
    pybpe shipped only gpt2 and cl100k); None when neither has it."""
    try:
        return pybpe.get_encoding(name, backend=backend)
    except FileNotFoundError:
        path = os.path.join(SHARED_DATA, name + ".tiktoken")
        return pybpe.get_encoding(name, path=path, backend=backend) if os.path.isfile(path) else None


def encodings():
    """[(name, [pybpe Encoding per backend], tiktoken Encoding)] for each named
    encoding here, tiktoken built from the same ranks (never downloaded)."""
    global _encodings
    if _encodings is None:
        import tiktoken

        _encodings = []
        for name in _NAMES:
            ours = [_named(name, b) for b in BACKENDS]
            if ours[0] is None:
                continue
            theirs = tiktoken.Encoding(name + "-offline", pat_str=ours[0].pat_str,
                                       mergeable_ranks=ours[0].mergeable_ranks,
                                       special_tokens=ours[0].special_tokens)
            _encodings.append((name, ours, theirs))
    return _encodings


def target_encoding(data):
    d = Draw(data)
    name, ours, theirs = d.choice(encodings())
    text = d.text(256)
    fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    want = theirs.encode_ordinary(text)
    for enc in ours:
        got = enc.encode_ordinary(text)
        check(got == want, "%s/%s encode_ordinary(%r) = %r, tiktoken %r", name, enc.backend, text, got, want)
    want_all = theirs.encode(text, allowed_special="all")
    for enc in ours:
        got = enc.encode(text, allowed_special="all")
        check(got == want_all, "%s/%s encode(%r, allowed_special='all') = %r, tiktoken %r",
              name, enc.backend, text, got, want_all)
        check(enc.decode(got) == fixed, "%s/%s decode(encode(%r)) = %r", name, enc.backend, text, enc.decode(got))
        check(enc.decode_bytes(want) == fixed.encode("utf-8"), "%s/%s decode_bytes", name, enc.backend)
    # the default refuses special-token text, like tiktoken
    refused = [_raises(lambda e=e: e.encode(text), ValueError) for e in ours]
    check(refused == [_raises(lambda: theirs.encode(text), ValueError)] * len(ours),
          "%s encode(%r) with specials disallowed: refused %r", name, text, refused)
    # batches: cut the text into a few pieces
    cuts = sorted(d.int(len(text) + 1) for _ in range(d.int(4)))
    batch = [text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)])]
    want_batch = [theirs.encode_ordinary(t) for t in batch]
    threads = 1 + d.int(3)
    for enc in ours:
        got = enc.encode_ordinary_batch(batch, num_threads=threads)
        check(got == want_batch, "%s/%s encode_ordinary_batch(%r)", name, enc.backend, batch)
        got = enc.encode_batch(batch, num_threads=threads, allowed_special="all")
        check(got == [theirs.encode(t, allowed_special="all") for t in batch],
              "%s/%s encode_batch(%r, allowed_special='all')", name, enc.backend, batch)
        if hasattr(enc, "encode_to_numpy"):
            import numpy

            got = enc.encode_to_numpy(text, allowed_special="all")
            check(isinstance(got, numpy.ndarray) and got.tolist() == want_all,
                  "%s/%s encode_to_numpy(%r)", name, enc.backend, text)


def _raises(fn, exc_type):
    try:
        fn()
    except exc_type:
        return True
    return False


# -- training round trips --------------------------------------------------------------

_FLAVOURS = [
    ("chapter", dict()),
    ("chapter-lowercase", dict(lowercase=True)),
    ("symbol", dict(end_of_word="symbol")),
    ("underscore", dict(end_of_word="symbol", marker="_", min_frequency=2)),
    ("suffix-regex", dict(pretokenizer=r"\w+|[^\w\s]+")),
    ("symbol-regex", dict(end_of_word="symbol", pretokenizer=r"\w+|[^\w\s]+")),
    ("leading-space", dict(pretokenizer=r" ?\w+| ?[^\w\s]+", end_of_word=None)),
    ("whole-text-chars", dict(pretokenizer=None, end_of_word=None)),
    ("gpt2-chars", dict(pretokenizer="gpt2", end_of_word=None)),
    ("bytes", dict(byte_level=True, pretokenizer=None)),
    ("bytes-gpt2", dict(byte_level=True, pretokenizer="gpt2")),
    ("bytes-cl100k", dict(byte_level=True, pretokenizer="cl100k")),
    ("bytes-regex", dict(byte_level=True, pretokenizer=r" ?\w+|\s+|[^\w\s]+")),
    ("bytes-whitespace", dict(byte_level=True, pretokenizer="whitespace")),
    ("max-length", dict(max_token_length=3)),
    ("bytes-max-length", dict(byte_level=True, pretokenizer=None, max_token_length=2)),
]
_SMALL = [[(0x61, 0x63)], [(0x20, 0x20)], [(ord("\u00e9"), ord("\u00e9")), (0x4E2D, 0x4E2D)]]


def _reference_merges(tok, counts):
    flavour = tok.flavour
    words = [(tuple(flavour.units(w)), f) for w, f in counts.items()]
    base = flavour.base_vocab(set("".join(counts)) if not flavour.byte_level else ())
    target = max(tok.target_vocab_size - len(tok.special_tokens), 0)
    return reference.learn(words, base, target, min_frequency=tok.min_frequency,
                           max_token_length=tok.max_token_length or 0)


def _reference_encode(tok, vocab, merges, text):
    index = {t: i for i, t in reversed(list(enumerate(vocab)))}
    ids = []
    for word in tok.flavour.split(text):
        ids += [index.get(t, 0) for t in reference.apply_merges(tok.flavour.units(word), merges)]
    return ids


def _expected_round_trip(tok, text):
    """What decode(encode(text)) must give when every character of `text`
    was seen in training, or None when the flavour does not define it."""
    flavour = tok.flavour
    if flavour.lowercase:
        text = text.lower()
    if flavour.byte_level:
        if flavour.pretokenizer == "whitespace":
            return None
        return text if not re.search("[\ud800-\udfff]", text) else None
    if flavour.marker and flavour.marker != " " and flavour.marker in text:
        return None  # the marker's own spelling in the text decodes as a word break
    words = flavour.split(text)
    if flavour.end_of_word is None:
        return "".join(words)
    if any(regex.search(r"\s", w) for w in words):
        return None  # a word holding a space: decoding cannot tell it from a word break
    return " ".join(words)


def _tokenizer(**options):
    # byte level with "whitespace" is refused since it drops spaces; model
    # files saved before still load it, and this builds it that way
    if options.get("byte_level") and options.get("pretokenizer") == "whitespace":
        backend = options.pop("backend")
        return pybpe.BPETokenizer._from_config(options, backend)
    return pybpe.BPETokenizer(**options)


def target_train(data):
    d = Draw(data)
    name, options = d.choice(_FLAVOURS)
    options = dict(options)
    if d.int(4) == 0:
        options["special_tokens"] = ["<|endoftext|>", "<s>"][:1 + d.int(2)]
    palette = _SMALL + [d.choice(_CLASSES)] if d.bool() else None
    corpus = [d.text(40, palette) for _ in range(d.int(9))]
    if options.get("special_tokens") and corpus:
        corpus[-1] += options["special_tokens"][0] + d.text(8, palette)
    base = 256 if options.get("byte_level") else 0
    vocab_size = base + d.int(80)
    probe = d.text(40, palette)
    toks, results = [], []
    for b in BACKENDS:
        tok = _tokenizer(vocab_size=vocab_size, backend=b, **options)
        tok.train(corpus)
        toks.append(tok)
        long_probe = " ".join([probe] * 20 + corpus)
        as_text = dict(disallowed_special=())  # special-token text is text here (tiktoken's rule raises)
        results.append((tok.vocab, tok.merges, tok.merge_counts, tok.encode(probe, **as_text),
                        tok.encode(long_probe, **as_text), [tok.encode(t, **as_text) for t in corpus],
                        tok.encode_batch(corpus, num_threads=2, **as_text)))
    for b, other in zip(BACKENDS[1:], results[1:]):
        for part, x, y in zip(("vocab", "merges", "merge counts", "encode(probe)", "encode(long probe)",
                               "encode(corpus)", "encode_batch(corpus)"), results[0], other):
            check(x == y, "%s: %s differs between %s and %s", name, part, BACKENDS[0], b)
    tok = toks[0]
    check(results[0][5] == results[0][6], "%s: encode_batch != encode per text", name)
    vocab, merges = _reference_merges(tok, tok.count_words(corpus))
    check((tok.vocab, tok.merges) == (vocab + tok.special_tokens, merges),
          "%s: training differs from pybpe.reference", name)
    check(tok.encode(probe, disallowed_special=()) == _reference_encode(tok, vocab, merges, probe),
          "%s: encode(%r) differs from pybpe.reference", name, probe)
    for text in corpus:
        if any(s in text for s in tok.special_tokens):
            continue  # special-token text was cut out of training: its characters may be unknown
        expected = _expected_round_trip(tok, text)
        if expected is not None:
            got = tok.decode(tok.encode(text))
            check(got == expected, "%s: decode(encode(%r)) = %r, expected %r", name, text, got, expected)
    if tok.flavour.byte_level and tok.flavour.pretokenizer != "whitespace":
        enc = _to_encoding(tok)
        if enc is not None:
            for text in corpus + [probe]:
                check(enc.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all"),
                      "%s: to_encoding().encode(%r) != encode", name, text)
    path = os.path.join(_TMP, "trained.json")
    tok.save(path)
    again = pybpe.load(path, backend=tok.backend)
    check((again.vocab, again.merges, again.config()) == (tok.vocab, tok.merges, tok.config()),
          "%s: save/load changed the model", name)
    check(again.encode(probe, allowed_special="all") == tok.encode(probe, allowed_special="all"),
          "%s: the loaded model encodes %r differently", name, probe)


def _to_encoding(tok):
    try:
        return tok.to_encoding()
    except ValueError as exc:
        if "build the same token" in str(exc):
            return None  # documented refusal
        raise


TARGETS = {
    "load-model": target_load_model,
    "load-tiktoken": target_load_tiktoken,
    "load-gpt2": target_load_gpt2,
    "load-hf": target_load_hf,
    "encoding": target_encoding,
    "train": target_train,
}


def seed_inputs(name):
    """A few byte strings to start a corpus from: each mutation mode of a
    loader, short and long texts, every flavour."""
    inputs = [bytes([k]) + bytes(range(k, k + 40)) for k in range(16)]
    inputs += [bytes([1, k, 0, 0, 5, 3, 7, 9]) * 6 for k in range(0, 256, 17)]
    return inputs


def setup(name):
    """Build what a target needs before fuzzing (seeds, tiktoken tables)."""
    if name.startswith("load-"):
        seeds()
    elif name == "encoding":
        encodings()
