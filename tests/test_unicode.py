"""Unicode exactness (issue 11): tiktoken's character classes for the preset
patterns on every code point, one surrogate rule for every byte-level path,
round trips of every flavour on every class of code point, and the Unicode
version a trained model records.

The reference is tiktoken itself, built offline from pybpe's shipped rank
files.  Its classes are read off its engine (an Encoding whose pattern is one
class and whose tokens are the 256 bytes drops what the class does not match);
its IDs are compared on every code point in contexts that exercise each
alternative of the patterns, a few big strings per pattern.  Tests needing
tiktoken skip when it is not installed.
"""
import json
import unicodedata
import warnings

import pytest
import regex

import pybpe
from pybpe import core as backends, _unicode, patterns
from pybpe.encoding import Encoding
from pybpe.flavours import Flavour
from pybpe.registry import get_encoding
from conftest import make_tokenizer, offline_tiktoken

BACKENDS = backends.available()
PRESETS = {"gpt2": patterns.GPT2, "cl100k_base": patterns.CL100K, "o200k_base": patterns.O200K}
# The code points issue 11 names: unassigned in tiktoken's Unicode 16, letters in 17.
NAMED = ["\u0558", "\ua7ce", "\U0003d000"]
SCALARS = "".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000)
assert len(SCALARS) == 1_112_064


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def tiktoken_members(pattern, text=SCALARS):
    """The code points of `text` tiktoken's engine matches with `pattern`."""
    tiktoken = pytest.importorskip("tiktoken")
    probe = tiktoken.Encoding("probe", pat_str=pattern, mergeable_ranks={bytes([b]): b for b in range(256)},
                              special_tokens={})
    return {ord(c) for c in bytes(probe.encode_ordinary(text)).decode("utf-8")}


# -- issue 11's reproducers -------------------------------------------------------------

def test_unassigned_letter_before_s_like_tiktoken(backend):
    # U+3D000 is a letter in Unicode 17 (the regex module), unassigned in
    # tiktoken's Unicode 16: "X's" is [X'][s], not [X]['s].
    enc = get_encoding("gpt2", backend=backend)
    assert enc.encode("\U0003d000's") == [172, 121, 222, 222, 6, 82]
    assert enc.encode("\U0003d000's") == offline_tiktoken("gpt2").encode("\U0003d000's")


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_named_code_points_like_tiktoken(backend, name):
    enc, tk = get_encoding(name, backend=backend), offline_tiktoken(name)
    for c in NAMED:
        for text in [c, c + "'s", "a" + c + "b", " " + c, "1" + c + "2", "A" + c + "a", c + "  x", "\n" + c,
                     "\u0295" + c + "\u0295"]:  # U+0295: Ll in Unicode 16, Lo in 17
            assert enc.encode(text) == tk.encode(text), (name, text)


def test_byte_level_tokenizer_and_its_encoding_agree_on_surrogates(backend):
    tok = pybpe.BPETokenizer(vocab_size=300, byte_level=True, backend=backend)
    tok.train(["a\ufffdb a\ud800b \U0001f600 \ud83d\ude00"] * 3)
    enc = tok.to_encoding()
    for text in ["a\ud800b", "\udfff", "x\ud83d\ude00y", "\ud83d", "\ud800\ud800", "a\ud83dy\ude00z"]:
        assert tok.encode(text) == enc.encode(text), text
        assert tok.encode(text) == tok.encode(_unicode.fix_surrogates(text))
        assert tok.decode(tok.encode(text)) == _unicode.fix_surrogates(text)
    # what it learned from a lone surrogate is U+FFFD's bytes, never surrogatepass bytes
    assert not any(b"\xed\xa0" in t for t in tok.vocab if isinstance(t, bytes))


def test_byte_level_train_from_counts_applies_the_surrogate_rule(backend):
    tok = pybpe.BPETokenizer(vocab_size=262, byte_level=True, backend=backend)
    tok.train_from_counts({"a\ud800": 3, "a\ufffd": 2})  # one word after the rule: 5 times
    assert tok.merges[0] == (b"a", b"\xef")
    same = pybpe.BPETokenizer(vocab_size=262, byte_level=True, backend=backend)
    same.train_from_counts({"a\ufffd": 5})
    assert tok.merges == same.merges


@pytest.mark.parametrize("end_of_word", ["suffix", "symbol"])
@pytest.mark.parametrize("pretokenizer", ["gpt2", r"\S+|\s+", None])
def test_marker_flavours_keep_the_separator_controls(backend, end_of_word, pretokenizer):
    # U+001C..U+001F are whitespace to str.split() but not to \s: a pattern or
    # the whole-text pre-tokenizer keeps them in words, so decode must too.
    text = "a\x1cb c\x1d\x1e\x1fd \x1f"
    tok = pybpe.BPETokenizer(vocab_size=40, end_of_word=end_of_word, pretokenizer=pretokenizer, backend=backend)
    tok.train([text])
    decoded = tok.decode(tok.encode(text))
    assert sorted(c for c in decoded if "\x1c" <= c <= "\x1f") == sorted(c for c in text if "\x1c" <= c <= "\x1f")
    words = tok.flavour.split(text)
    assert decoded == " ".join(regex.findall(r"\S+", " ".join(words)))


def test_whitespace_flavour_still_splits_at_the_separator_controls(backend):
    tok = pybpe.BPETokenizer(vocab_size=40, backend=backend)
    tok.train(["a\x1cb c"])
    assert tok.decode(tok.encode("a\x1cb c")) == "a b c"


# -- the tables are tiktoken's ------------------------------------------------------------

def test_class_tables_are_tiktokens():
    expected = bytearray(0x110000)
    for cls, (name, pattern) in enumerate(_unicode.CLASSES, 1):
        for cp in tiktoken_members(pattern):
            assert expected[cp] == 0, "U+%04X is in two classes" % cp
            expected[cp] = cls
    assert _unicode.tiktoken_classes() == expected, \
        "pybpe/_unicode_data.py differs from the installed tiktoken: rerun csrc/gen_unicode_tables.py"
    if "c" in BACKENDS:
        from pybpe._bpe_c import ffi, lib

        out = ffi.new("unsigned char[]", 0x110000 + 16)
        lib.bpe_pretok_classes(0, 0x110000 + 16, out)
        assert ffi.buffer(out, 0x110000)[:] == bytes(expected), "csrc/unicode_tables.inc is not tiktoken's"
        assert ffi.buffer(out, 0x110000 + 16)[0x110000:] == bytes(16)  # past U+10FFFF: other


def test_recorded_unicode_version_is_tiktokens():
    tiktoken = pytest.importorskip("tiktoken")
    from pybpe import _unicode_data

    unassigned = tiktoken_members(r"\p{Cn}", "".join(chr(cp) for _, cp in _unicode.PROBES))
    assert _unicode.tiktoken_version() == _unicode.engine_version(lambda c: ord(c) in unassigned)
    assert _unicode_data.TIKTOKEN_VERSION == tiktoken.__version__


def test_contraction_letters_fold_like_tiktoken():
    # The C scanners accept ASCII either case and U+017F for the letters of
    # the (?i:...) contractions; the regex module must fold the same way for
    # the Python backend.
    expected = {ord(c) for c in "sdmtlvreSDMTLVRE\u017f"}
    assert tiktoken_members(r"(?i:[sdmtlvre])") == expected
    assert {ord(c) for c in regex.findall(r"(?i:[sdmtlvre])", SCALARS)} == expected


def test_differences_are_found_wherever_they_are():
    found = _unicode.differences()
    ours, theirs = _unicode.tiktoken_classes(), _unicode.regex_classes()
    assert found.code_points == [cp for cp in range(0x110000) if ours[cp] != theirs[cp]]
    for cp in found.code_points:
        assert found.found_in("ab " + chr(cp) + " \U0001f600"), hex(cp)
    differ = set(found.code_points)
    assert not found.found_in("".join(c for c in SCALARS if ord(c) not in differ))
    for c in found.translation.values():  # the stand-ins are classed alike by both
        assert ours[ord(c)] == theirs[ord(c)] and ord(c) not in differ


# -- every code point, in context, against tiktoken ---------------------------------------

def _contexts(chars):
    """The code points in context: each X after and before a letter, before
    's, after a space, between digits, between upper and lower case, after a
    newline and an apostrophe, before spaces, "/" and CR LF -- so every
    alternative of the three patterns meets X at each place it could."""
    return "".join("a%sb%s's %s1%s2A%sa\n%s  '%s/\r\n" % ((c,) * 7) for c in chars)


def _sample(step):
    """Every code point whose class differs between the regex module and
    tiktoken, and every step-th scalar value."""
    differ = set(_unicode.differences().code_points)
    return [c for k, c in enumerate(SCALARS) if k % step == 0 or ord(c) in differ]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_code_points_in_context_like_tiktoken(backend, name):
    # A quick pass on both backends: IDs against tiktoken.
    text = _contexts(_sample(64))
    assert get_encoding(name, backend=backend).encode_ordinary(text) == offline_tiktoken(name).encode_ordinary(text)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_code_point_in_context_like_tiktoken(name):
    # All 1,112,064 scalar values: the C backend's IDs against tiktoken
    # (about 8 s a pattern, most of it tiktoken's own regex).  The Python
    # backend's pieces are checked against the C scanners on every code
    # point by test_encode_speed_paths.py::test_o200k_scanner_every_code_point,
    # and its IDs by test_code_points_in_context_like_tiktoken.
    if "c" not in BACKENDS:
        pytest.skip("the C backend is not built")
    tk, enc = offline_tiktoken(name), get_encoding(name, backend="c")
    text = _contexts(SCALARS)
    step = len(text) // 16 + 1
    chunks = [text[k:k + step] for k in range(0, len(text), step)]
    del text
    assert enc.encode_ordinary_batch(chunks, num_threads=2) == tk.encode_ordinary_batch(chunks, num_threads=2)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_surrogates_in_context_like_tiktoken(backend, name):
    # Lone surrogates become U+FFFD and pairs the character they spell, in
    # every context, as tiktoken does.
    tk, enc = offline_tiktoken(name), get_encoding(name, backend=backend)
    lone = [chr(cp) for cp in range(0xD800, 0xE000)]
    pairs = [chr(hi) + chr(lo) for hi in range(0xD800, 0xDC00, 37) for lo in range(0xDC00, 0xE000, 41)]
    for chars in (lone, pairs):
        text = _contexts(chars)
        assert enc.encode(text) == tk.encode(text)
        assert enc.encode_ordinary(text) == tk.encode_ordinary(text)


# -- round trips: every flavour, every class of code point -----------------------------------

def _one_of_each_category():
    """One code point of every general category (Python's tables), plus
    tiktoken-unassigned ones, NUL, the separator controls, emoji sequences
    and surrogates (lone, and a pair)."""
    seen = {}
    for cp in range(0x110000):
        seen.setdefault(unicodedata.category(chr(cp)), chr(cp))
    assert len(seen) == 30  # Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Zl Zp Cc Cf Cs Co Cn
    return sorted(seen.values()) + NAMED + ["\x00", "\x1c\x1d\x1e\x1f", "\U0001f469\u200d\U0001f467",
                                            "\U0001f3f3\ufe0f\u200d\U0001f308", "\ud83d\ude00", "\udc00"]


ROUND_TRIP_FLAVOURS = {
    "chapter": {},
    "symbol": dict(end_of_word="symbol"),
    "symbol-gpt2": dict(end_of_word="symbol", pretokenizer="gpt2"),
    "suffix-o200k": dict(pretokenizer="o200k"),
    "suffix-whole": dict(pretokenizer=None),
    "leading-space-cl100k": dict(end_of_word=None, pretokenizer="cl100k"),
    "chars-whole": dict(end_of_word=None, pretokenizer=None),
    "lowercase-chars-gpt2": dict(end_of_word=None, pretokenizer="gpt2", lowercase=True),
    "bytes-gpt2": dict(byte_level=True),
    "bytes-cl100k": dict(byte_level=True, pretokenizer="cl100k"),
    "bytes-o200k": dict(byte_level=True, pretokenizer="o200k"),
    "bytes-whole": dict(byte_level=True, pretokenizer=None),
    "bytes-whitespace": dict(byte_level=True, pretokenizer="whitespace"),
    "bytes-pattern": dict(byte_level=True, pretokenizer=r"\w+|\W"),
}


def _expected_round_trip(flavour, text):
    """What decode(encode(text)) gives when every character is in the
    vocabulary (SPEC §1's decode column): the words joined -- all of the text
    where the pre-tokenizer covers it -- then, with an end-of-word marker,
    whitespace normalized as the pre-tokenizer defines whitespace."""
    words = flavour.split(text)
    if flavour.end_of_word is None:
        return "".join(words)
    if flavour.pretokenizer == "whitespace":
        return " ".join(words)
    return " ".join(regex.findall(r"\S+", " ".join(words)))


@pytest.mark.parametrize("name", sorted(ROUND_TRIP_FLAVOURS))
def test_round_trips_every_flavour_on_every_code_point_class(name):
    parts = _one_of_each_category()
    text = " ".join(parts) + " " + "".join(parts) + " x" + "\n".join(parts)
    options = ROUND_TRIP_FLAVOURS[name]
    flavour = Flavour(legacy=True, **options)  # legacy: bytes-whitespace, from old model files
    prepared = flavour.prepare(text)
    expected = _expected_round_trip(flavour, text)
    if options.get("pretokenizer", "x") in ("gpt2", "cl100k", "o200k", None) and flavour.end_of_word is None:
        assert expected == prepared  # these pre-tokenizers cover every character: exact
    ids = {}
    for backend in BACKENDS:
        tok = make_tokenizer(vocab_size=400, backend=backend, **options)
        tok.train([text, text.lower()])
        ids[backend] = tok.encode(text)
        assert 0 not in ids[backend] or flavour.byte_level  # nothing unknown
        assert tok.decode(ids[backend]) == expected, backend
        for part in parts:
            assert tok.decode(tok.encode(part)) == _expected_round_trip(flavour, part), (backend, part)
        if flavour.byte_level and flavour.pretokenizer != "whitespace":
            assert tok.to_encoding().encode(text) == ids[backend]
    assert len(set(map(tuple, ids.values()))) == 1  # the backends agree


# -- the Unicode version a model records ---------------------------------------------------

@pytest.mark.parametrize("pretokenizer,version", [
    ("gpt2", _unicode.tiktoken_version), ("o200k", _unicode.tiktoken_version), (patterns.CL100K,
                                                                                  _unicode.tiktoken_version),
    (r"\w+|\W", _unicode.regex_version), ("whitespace", lambda: None), (None, lambda: None)])
def test_model_records_the_unicode_version_of_its_pretokenizer(tmp_path, pretokenizer, version):
    tok = pybpe.BPETokenizer(vocab_size=270, byte_level=pretokenizer != "whitespace", pretokenizer=pretokenizer)
    tok.train(["hello \u0558 world"])
    path = tmp_path / "tok.json"
    tok.save(path)
    assert json.loads(path.read_text())["unicode_version"] == version()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same installation: no warning
        pybpe.load(path)


def test_load_warns_when_the_unicode_version_differs(tmp_path, backend):
    tok = pybpe.BPETokenizer(vocab_size=270, byte_level=True, backend=backend)
    text = "hello \u0558's world"
    tok.train([text])
    path = tmp_path / "tok.json"
    tok.save(path)
    document = json.loads(path.read_text())
    document["unicode_version"] = "15.0"
    path.write_text(json.dumps(document))
    with pytest.warns(pybpe.UnicodeVersionWarning, match=r"tok\.json.*Unicode 15\.0.*Unicode 16\.0"):
        again = pybpe.load(path, backend=backend)
    assert again.encode(text) == tok.encode(text)  # it loads, and splits with today's tables
    del document["unicode_version"]  # files written before the field existed: silent
    path.write_text(json.dumps(document))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pybpe.load(path, backend=backend)
    document["unicode_version"] = 16
    path.write_text(json.dumps(document))
    with pytest.raises(pybpe.FormatError, match="unicode_version"):
        pybpe.load(path, backend=backend)


def test_custom_patterns_keep_the_regex_modules_tables(backend):
    # Only the presets' exact strings follow tiktoken; any other pattern is
    # the regex module's (U+3D000 is a letter there).
    enc = Encoding("custom", pat_str=r"\p{L}+|\P{L}", mergeable_ranks={bytes([b]): b for b in range(256)},
                   special_tokens={}, backend=backend)
    assert enc.encode("a\U0003d000b") == list("a\U0003d000b".encode())
    assert regex.fullmatch(r"\p{L}+", "a\U0003d000b") or _unicode.regex_version() < "17.0"
