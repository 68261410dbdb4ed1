"""Training at scale: word counting, streaming, partial counts, options, progress.

The trainers' merge-by-merge parity with pybpe.reference on random corpora is
in test_backends.py / test_tokenizer.py; this file covers what feeds them:
the WordCounter (C: csrc/counter.c, Python: pybpe.core.spec.counter.WordCounter) against
str.split() + dict counting on text over every code point, streaming from
lists, generators and open files, merging partial counts, C == Python on
every flavour, the options (max_token_length, min_frequency, progress), and
-- slow -- Shakespeare's first 2,000 merges against the reference fixture.
"""
import json
import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pybpe
from conftest import make_tokenizer, shakespeare, shared_path
from pybpe import core as backends

BACKENDS = backends.available()
HYPOTHESIS = dict(deadline=None, derandomize=True, max_examples=300,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                       "shakespeare_reference_2000.json")

# Every character str.split() cuts at (29 of them), checked against Python itself.
WHITESPACE = "\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200b))) \
    + "\u2028\u2029\u202f\u205f\u3000"
# Characters that look like spaces but are not, for str.split().
NOT_WHITESPACE = "\x00\u180e\u200b\u200c\u2060\ufeff\x84\ud800\udfff"


def test_whitespace_list_is_pythons():
    assert set(WHITESPACE) == {chr(c) for c in range(0x110000) if len(("a%sb" % chr(c)).split()) == 2}


@pytest.fixture(scope="module", params=BACKENDS)
def core(request):
    return backends.get(request.param)


def split_count(texts):
    counts = {}
    for text in texts:
        for word in text.split():
            counts[word] = counts.get(word, 0) + 1
    return counts


any_char = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
texts = st.text(alphabet=st.one_of(any_char, st.sampled_from(WHITESPACE + NOT_WHITESPACE),
                                   st.sampled_from("ab")), max_size=60)


# -- the counter against str.split() -----------------------------------------------------

@settings(**HYPOTHESIS)
@given(st.lists(texts, max_size=6))
def test_counter_is_split_and_dict_counting(core, items):
    counter = core.WordCounter()
    for text in items:
        counter.add_text(text)
    expected = split_count(items)
    assert dict(counter.items()) == expected
    assert [w for w, _ in counter.items()] == list(expected)  # first-appearance order
    assert counter.characters() == sorted(set("".join(expected)))


@pytest.mark.parametrize("char", list(WHITESPACE) + list(NOT_WHITESPACE))
def test_every_whitespace_character(core, char):
    counter = core.WordCounter()
    counter.add_text("a%sb%sa" % (char, char))
    assert counter.items() == list(split_count(["a%sb%sa" % (char, char)]).items())


def test_word_ends_at_every_offset(core):
    # The C split looks for a word's end eight bytes at a time: every kind of
    # byte that can (or cannot) end a word, at every offset of that window,
    # in words longer than it, with and without text after.
    controls = "".join(map(chr, range(0x21))) + "\x7f\x80\xff\u0100\u3000\U0001f600"
    texts = []
    for char in WHITESPACE + NOT_WHITESPACE + controls:
        for offset in range(18):
            word = "abcdefghijklmnopqrs"[:offset]
            texts += [word + char + "tuvwxyz0123456789", " " + word + char, word + char + "z"]
    for text in texts:
        counter = core.WordCounter()
        counter.add_text(text)
        assert counter.items() == list(split_count([text]).items()), repr(text)


def test_words_across_blocks_of_64_bytes(core):
    # The C split reads 64-byte blocks (one whitespace mask each): every
    # character that can (or cannot) cut a word -- the multi-byte spaces
    # among them, which may run from one block into the next -- at every
    # byte offset around the first two block edges, in a word that crosses
    # the edge, after a word that ends on it, and as the text's last bytes.
    multi = "\u0100\U0001f600\x84"
    for char in WHITESPACE + NOT_WHITESPACE + multi:
        for offset in range(56, 136):
            texts = ["x" * offset + char + "y" * 70, "x" * offset + char,
                     "\u00e9" * (offset // 2) + "z" * (offset % 2) + char + "w" * 9,
                     " " * offset + char + "v", "q " * (offset // 2) + char * 3 + "p"]
            for text in texts:
                counter = core.WordCounter()
                counter.add_text(text)
                assert counter.items() == list(split_count([text]).items()), (repr(char), offset)


long_texts = st.lists(st.one_of(st.text(alphabet="ab", min_size=1, max_size=70),
                                st.sampled_from(WHITESPACE), st.sampled_from(NOT_WHITESPACE),
                                any_char), max_size=120).map("".join)


@settings(**HYPOTHESIS)
@given(st.lists(long_texts, max_size=4))
def test_counter_on_texts_of_many_blocks(core, items):
    counter = core.WordCounter()
    for text in items:
        counter.add_text(text)
    expected = split_count(items)
    assert counter.items() == list(expected.items())


@settings(**HYPOTHESIS)
@given(st.lists(texts, max_size=8), st.lists(st.integers(0, 2**40), max_size=8))
def test_add_words_with_frequencies(core, words, freqs):
    freqs = (freqs + [1] * len(words))[:len(words)]
    counter = core.WordCounter()
    counter.add_words(words, freqs)
    expected = {}
    for w, f in zip(words, freqs):
        expected[w] = expected.get(w, 0) + f
    assert counter.items() == list(expected.items())


def test_counter_errors(core):
    counter = core.WordCounter()
    for not_text in (3, bytearray(b"bytes"), ["a"]):  # (bytes are UTF-8: test_counter_takes_utf8_bytes)
        with pytest.raises(TypeError):
            counter.add_text(not_text)
    with pytest.raises(TypeError, match=r"words\[1\]"):
        counter.add_words(["a", 3])
    with pytest.raises(ValueError):
        counter.add_words(["a"], [1, 2])
    counter.add_words(["x"], [2**64 - 1])
    with pytest.raises(OverflowError):
        counter.add_words(["x"], [1])
    assert counter.items() == [("x", 2**64 - 1)]
    counter.add_words(["alongerword"], [2**64 - 1])
    for text in ("x", " alongerword\n"):  # (a word found at its first probe, counted inline in C)
        with pytest.raises(OverflowError):
            counter.add_text(text)
    assert counter.items() == [("x", 2**64 - 1), ("alongerword", 2**64 - 1)]


def test_counter_big_and_degenerate(core):
    counter = core.WordCounter()
    counter.add_text("x" * 1_000_000)
    counter.add_text(" " * 1000 + "\u3000" * 1000)
    counter.add_text("")
    assert counter.items() == [("x" * 1_000_000, 1)]


# -- streaming and partial counts ---------------------------------------------------------

LINES = ["the cat sat on the mat\n", "  the dog\tsat\u3000on the rug\n", "\n",
         "naïve café\xa0ok \ud800x\n", "x" * 50 + " the\n"] * 40


@pytest.mark.parametrize("backend", BACKENDS)
def test_list_generator_and_file_agree(tmp_path, backend):
    path = tmp_path / "corpus.txt"
    path.write_text("".join(LINES), encoding="utf-8", errors="surrogatepass")
    tok = pybpe.BPETokenizer(vocab_size=120, backend=backend)
    from_list = tok.count_words(LINES)
    assert from_list == split_count(LINES)
    assert tok.count_words(line for line in LINES) == from_list
    with open(path, encoding="utf-8", errors="surrogatepass") as f:
        assert tok.count_words(f) == from_list
    results = []
    for corpus in (LINES, iter(LINES), None):
        if corpus is None:
            with open(path, encoding="utf-8", errors="surrogatepass") as f:
                tok.train(f)
        else:
            tok.train(corpus)
        results.append((tok.vocab, tok.merges, tok.merge_counts))
    assert results[0] == results[1] == results[2]


@pytest.mark.parametrize("backend", BACKENDS)
def test_batches_do_not_move_word_boundaries(monkeypatch, backend):
    from pybpe import tokenizer

    many = ["w%d v%d" % (i % 97, i % 13) for i in range(5000)]
    tok = pybpe.BPETokenizer(backend=backend)
    whole = tok.count_words(many)
    monkeypatch.setattr(tokenizer, "_BATCH_CHARS", 7)
    assert tok.count_words(many) == whole == split_count(many)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("batch", [1, 7, 64, 1 << 20])
def test_file_read_in_pieces(tmp_path, monkeypatch, backend, batch):
    from pybpe import tokenizer

    text = "".join(LINES) + "a" * 200 + " " + "no newline at the end"
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    monkeypatch.setattr(tokenizer, "_BATCH_CHARS", batch)
    tok = pybpe.BPETokenizer(backend=backend)
    with open(path, encoding="utf-8", errors="surrogatepass") as f:
        assert tok.count_words(f) == split_count([text])
    with open(path, "rb") as f, pytest.raises(TypeError, match=r"corpus\[0\] must be str"):
        tok.count_words(f)


def test_counter_takes_utf8_bytes(core):
    text = "".join(LINES) + "\u3000tail\udfff"
    by_text, by_bytes = core.WordCounter(), core.WordCounter()
    by_text.add_text(text)
    by_bytes.add_text(text.encode("utf-8", "surrogatepass"))
    assert by_bytes.items() == by_text.items() == list(split_count([text]).items())
    for bad in (b"ok \xff", b"cut \xe2\x80", b"\xc0\xaf overlong"):
        with pytest.raises(UnicodeDecodeError):
            core.WordCounter().add_text(bad)


def test_add_utf8_counts_a_buffer_up_to_end(core):
    # add_utf8(buffer, end) is add_text(bytes(buffer[:end])) for any buffer:
    # what lies past `end` is not read.
    text = "".join(LINES).replace("\ud800", "?")
    data = text.encode("utf-8")
    for end in (0, 1, len(data) // 2, len(data)):
        end = data.rfind(b" ", 0, end) + 1 if end < len(data) else end  # (never inside a character)
        by_buffer, by_bytes = core.WordCounter(), core.WordCounter()
        by_buffer.add_utf8(bytearray(data) + b"tail words", end)
        by_bytes.add_text(data[:end])
        assert by_buffer.items() == by_bytes.items() == list(split_count([data[:end].decode()]).items())
    counter = core.WordCounter()
    with pytest.raises(ValueError):
        counter.add_utf8(bytearray(b"abc"), 4)
    with pytest.raises(TypeError):
        counter.add_utf8(bytearray(b"abc"), 1.0)
    with pytest.raises(UnicodeDecodeError):
        counter.add_utf8(bytearray(b"ok \xff"), 4)
    assert counter.items() == []


def _file_bytes_count(monkeypatch, tok, path, **open_args):
    """tok.count_words(open(path)), asserting it took the bytes path (the str
    path made to fail) and that it left the file at its end."""
    from pybpe import tokenizer

    def no_str_batches(f):
        raise AssertionError("the file was read as str")
        yield

    with monkeypatch.context() as m:
        m.setattr(tokenizer, "_file_batches", no_str_batches)
        with open(path, **open_args) as f:
            counts = tok.count_words(f)
            assert f.read() == ""
    return counts


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("batch", [1, 7, 1 << 20])
def test_file_counted_from_its_bytes(tmp_path, monkeypatch, backend, batch):
    # A UTF-8 text file is counted from its bytes (no str round trip), in the
    # same batches; what it counts is what reading its text counts.
    from pybpe import tokenizer

    monkeypatch.setattr(tokenizer, "_BATCH_CHARS", batch)
    clean = [line.replace("\ud800", "") for line in LINES]
    text = "".join(clean) + "a\r\nb\rc\r\n" + "\ufeffd" * 3 + " no newline at the end"
    path = tmp_path / "corpus.txt"
    path.write_bytes(("\ufeff" + text).encode("utf-8"))
    tok = pybpe.BPETokenizer(backend=backend)
    expected = split_count([open(path, encoding="utf-8").read()])
    assert _file_bytes_count(monkeypatch, tok, path, encoding="utf-8") == expected
    assert _file_bytes_count(monkeypatch, tok, path, encoding="UTF8", newline="") == expected
    trained = []
    for corpus in (open(path, encoding="utf-8").read().splitlines(True), None):
        if corpus is None:
            with open(path, encoding="utf-8") as corpus:
                tok.train(corpus)
        else:
            tok.train(corpus)
        trained.append((tok.vocab, tok.merges, tok.merge_counts))
    assert trained[0] == trained[1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_file_bytes_keep_the_text_rules(tmp_path, monkeypatch, backend):
    # Surrogates: counted under errors="surrogatepass" as the text gives them,
    # refused under "strict" as reading the text refuses them; bad UTF-8 is a
    # UnicodeDecodeError either way.
    tok = pybpe.BPETokenizer(backend=backend)
    path = tmp_path / "corpus.txt"
    text = "".join(LINES)  # holds "\ud800"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    assert _file_bytes_count(monkeypatch, tok, path, encoding="utf-8", errors="surrogatepass") \
        == split_count([text])
    with open(path, encoding="utf-8") as f, pytest.raises(UnicodeDecodeError):
        tok.count_words(f)
    path.write_bytes(b"fine words\n" * 50 + b"then \xff\xfe\n")
    for errors in ("strict", "surrogatepass"):
        with open(path, encoding="utf-8", errors=errors) as f, pytest.raises(UnicodeDecodeError):
            tok.count_words(f)


@pytest.mark.parametrize("backend", BACKENDS)
def test_file_read_as_text_when_bytes_would_differ(tmp_path, backend):
    # Other encodings, a file already read from and lowercasing go the str
    # path: the same counts as reading the text.
    text = "".join(LINES) + "Ünïcode ÉÉ\n"
    path = tmp_path / "corpus.txt"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))

    def counted(tok, skip=0, **open_args):
        with open(path, **open_args) as f:
            f.read(skip)
            rest = f.read()
        with open(path, **open_args) as f:
            f.read(skip)
            return tok.count_words(f), tok.count_words([rest])

    plain = pybpe.BPETokenizer(backend=backend)
    for tok, skip, open_args in [
            (plain, 30, {"encoding": "utf-8", "errors": "surrogatepass"}),
            (pybpe.BPETokenizer(lowercase=True, backend=backend), 0,
             {"encoding": "utf-8", "errors": "surrogatepass"})]:
        from_file, from_text = counted(tok, skip, **open_args)
        assert from_file == from_text
    path.write_bytes(text.replace("\ud800", "").encode("latin-1", "replace"))
    from_file, from_text = counted(plain, 0, encoding="latin-1")
    assert from_file == from_text == split_count([open(path, encoding="latin-1").read()])


@pytest.mark.parametrize("options", [{}, {"pretokenizer": r" ?\w+|[^\w\s]", "end_of_word": None},
                                     {"byte_level": True}])
def test_partial_counts_merge_in_partition_order(options):
    parts = [LINES[:37], LINES[37:38], LINES[38:150], LINES[150:]]
    whole = pybpe.count_words(LINES, **options)
    merged = pybpe.merge_counts(*(pybpe.count_words(p, **options) for p in parts))
    assert merged == whole and list(merged) == list(whole)
    a = pybpe.BPETokenizer(vocab_size=300, **options)
    a.train(LINES)
    b = pybpe.BPETokenizer(vocab_size=300, **options)
    b.train_from_counts(merged)
    assert (a.vocab, a.merges) == (b.vocab, b.merges)


def test_corpus_errors_name_the_item():
    tok = pybpe.BPETokenizer()
    for corpus in (["a", "b", 3], iter(["a", "b", 3])):
        with pytest.raises(TypeError, match=r"corpus\[2\]"):
            tok.train(corpus)
    with pytest.raises(TypeError, match="single str"):
        tok.train("a text, not a list")
    with pytest.raises(TypeError, match="not str"):
        tok.train_from_counts({"a": 1, 2: 1})
    with pytest.raises(TypeError):
        tok.train_from_counts({"a": True})
    with pytest.raises(ValueError):
        tok.train_from_counts({"a": -1})
    assert not tok.is_trained


# -- preset pre-tokenizers counted in the core (WordCounter.add_pieces) ---------------------

PRESETS = {"gpt2": "PRESET_GPT2", "cl100k": "PRESET_CL100K", "o200k": "PRESET_O200K"}
# Text where each text's end matters to the patterns: runs of newlines and
# punctuation that swallows them (cl100k, o200k), "'s" across a border,
# surrogate halves, final sigma, special tokens, letters of every class.
piece_bits = st.one_of(any_char, st.sampled_from("\n\r .,'s/ΣσA1 \t\u3000\ud83d\ude00\ud800"),
                       st.sampled_from(["<|end|>", "<S>", "ΑΣ", "'re", ".\n\n", "  \n"]))
piece_texts = st.lists(st.lists(piece_bits, max_size=25).map("".join), max_size=6)


def split_counts(flavour_options, texts, specials=()):
    """{piece: count} the way training counted before the core did it: special
    tokens cut out of each text, then each text prepared and split in Python
    by the flavour (the `regex` module with tiktoken's classes)."""
    tok = pybpe.BPETokenizer(backend="python", **flavour_options)
    special_re = tok._specials_pattern() if specials else None
    counts = {}
    for text in texts:
        for part in (special_re.split(text) if special_re else [text]):
            for piece in tok.flavour.split(part):
                counts[piece] = counts.get(piece, 0) + 1
    return counts


@settings(**HYPOTHESIS)
@given(piece_texts, st.sampled_from(sorted(PRESETS)))
def test_add_pieces_is_split_and_dict_counting(core, items, preset):
    counter = core.WordCounter()
    counter.add_pieces(items, getattr(core, PRESETS[preset]))
    expected = {}
    for text in items:  # each text cut alone, by the spec's split
        for piece in backends.get("python").split(text, getattr(core, PRESETS[preset])):
            expected[piece] = expected.get(piece, 0) + 1
    assert counter.items() == list(expected.items())


def test_add_pieces_cuts_each_text_alone(core):
    counter = core.WordCounter()
    # cl100k joins ".\n\n" into one piece within a text, not across two.
    counter.add_pieces(["end.\n", "\n", "", "it's", "\ud83d", "\ude00"], core.PRESET_CL100K)
    assert counter.items() == [("end", 1), (".\n", 1), ("\n", 1), ("it", 1), ("'s", 1),
                               ("\ud83d", 1), ("\ude00", 1)]
    counter.add_pieces(["end.\n\n"], core.PRESET_CL100K)
    assert counter.items()[-1] == (".\n\n", 1)


def test_add_pieces_errors(core):
    counter = core.WordCounter()
    with pytest.raises(ValueError, match="unknown pre-tokenizer preset 9"):
        counter.add_pieces(["a"], 9)
    with pytest.raises(TypeError, match="preset must be an int"):
        counter.add_pieces(["a"], "gpt2")
    with pytest.raises(TypeError, match=r"texts\[1\] must be str"):
        counter.add_pieces(["a", b"b"], core.PRESET_GPT2)
    assert counter.items() == []
    counter.add_words(["x"], [2**64 - 1])
    with pytest.raises(OverflowError):
        counter.add_pieces(["x"], core.PRESET_GPT2)
    assert counter.items() == [("x", 2**64 - 1)]


PRESET_FLAVOURS = [
    {"byte_level": True},
    {"byte_level": True, "pretokenizer": "cl100k", "lowercase": True},
    {"byte_level": True, "pretokenizer": "o200k"},
    {"byte_level": True, "pretokenizer": pybpe.patterns.GPT2_POSSESSIVE},
    {"pretokenizer": "cl100k", "end_of_word": None},  # characters, surrogates kept
    {"pretokenizer": "o200k", "end_of_word": "symbol", "lowercase": True},
]


@settings(**dict(HYPOTHESIS, max_examples=60))
@given(piece_texts, st.sampled_from(range(len(PRESET_FLAVOURS))), st.booleans())
def test_training_counts_what_python_splitting_counts(items, which, specials):
    # The merges a corpus gives are the ones its pieces, counted the old
    # way (split per text in Python), give: same counts in the same order.
    options = dict(PRESET_FLAVOURS[which], special_tokens=["<|end|>", "<S>"] if specials else ())
    expected = split_counts(options, items, specials)
    for backend in BACKENDS:
        tok = pybpe.BPETokenizer(vocab_size=300, backend=backend, **options)
        counts = tok.count_words(items)
        assert counts == expected and list(counts) == list(expected)
        tok.train(items)
        trained = (tok.vocab, tok.merges, tok.merge_counts)
        tok.train_from_counts(expected)
        assert trained == (tok.vocab, tok.merges, tok.merge_counts)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("batch", [1, 7, 1 << 20])
def test_preset_batches_keep_each_text(tmp_path, monkeypatch, backend, batch):
    from pybpe import tokenizer

    monkeypatch.setattr(tokenizer, "_BATCH_CHARS", batch)
    options = {"byte_level": True, "pretokenizer": "cl100k"}
    lines = ["end.\n", "\n", "\n", "it's ΑΣ\n", "x\ud83d\n", "\ude00y\n"] * 30
    expected = split_counts(options, lines)
    path = tmp_path / "corpus.txt"
    path.write_text("".join(lines), encoding="utf-8", errors="surrogatepass")
    tok = pybpe.BPETokenizer(backend=backend, **options)
    assert tok.count_words(lines) == tok.count_words(iter(lines)) == expected
    with open(path, encoding="utf-8", errors="surrogatepass") as f:
        assert tok.count_words(f) == expected  # a file's texts are its lines
    with pytest.raises(TypeError, match=r"corpus\[3\] must be str"):
        tok.count_words(["a", "b", "c", 4])


@pytest.mark.skipif("c" not in BACKENDS, reason="the C extension is not built")
def test_c_merges_read_as_numbers():
    # Trainer.run reads the C merge records through one memoryview (not a
    # cdata struct each): the same numbers, counts past 2**32 included.
    from pybpe._bpe_c import ffi
    from pybpe.core.native import core as native

    values = [(7, 2**32 - 1, 5, 0), (0, 1, 2**31, 2**64 - 1), (3, 3, 9, 2**40 + 17)]
    out = ffi.new("bpe_merge[]", len(values) + 1)
    for rec, (left, right, merged, count) in zip(out, values):
        rec.left, rec.right, rec.merged, rec.count = left, right, merged, count
    assert native._MERGE_LAYOUT is not None  # (the fast path is the one tested)
    assert native._merges_from(out, len(values)) == values
    assert native._merges_from(out, 2) == values[:2] and native._merges_from(out, 0) == []


@pytest.mark.skipif("c" not in BACKENDS, reason="the C extension is not built")
def test_c_symbol_table_exports_every_token():
    from pybpe.core.native import core as native

    tokens = [b"", b"\x00", b"ab", bytes(range(256)), b"a" * 70000, b"z"]
    table = native.SymbolTable(tokens)
    assert table.tokens() == tokens == [table.token(i) for i in range(len(tokens))]
    assert native.SymbolTable([]).tokens() == []


@pytest.mark.skipif("c" not in BACKENDS, reason="the C extension is not built")
def test_c_backend_cuts_presets_in_the_core(monkeypatch):
    # No text goes through Python's pattern splitting on the C backend (it
    # used to: regex.findall was ~1.2 s of training Shakespeare); custom
    # patterns still do.
    from pybpe.flavours import Flavour

    def no_split(self, text):
        raise AssertionError("split in Python: %r" % text)

    monkeypatch.setattr(Flavour, "split", no_split)
    for preset in sorted(PRESETS):
        tok = pybpe.BPETokenizer(vocab_size=300, byte_level=True, pretokenizer=preset, backend="c",
                                 special_tokens=["<|end|>"])
        tok.train(CORPUS)
        assert tok.merges
    with pytest.raises(AssertionError, match="split in Python"):
        pybpe.BPETokenizer(pretokenizer=r"\w+", end_of_word=None, backend="c").train(CORPUS)


@pytest.mark.slow
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_shakespeare_preset_counts_match_python_splitting(preset):
    shakespeare()  # (skips without the corpus)
    with open(shared_path("shakespeare.txt"), encoding="utf-8") as f:
        lines = list(f)  # the texts training a file gives: its lines
    expected = split_counts({"byte_level": True, "pretokenizer": preset}, lines)
    with open(shared_path("shakespeare.txt"), encoding="utf-8") as f:
        tok = pybpe.BPETokenizer(vocab_size=2000, byte_level=True, pretokenizer=preset)
        counts = tok.count_words(f)
    assert counts == expected and list(counts) == list(expected)
    tok.train(lines)
    trained = (tok.merges, tok.merge_counts)
    tok.train_from_counts(expected)
    assert trained == (tok.merges, tok.merge_counts)


# -- C == Python on every flavour -----------------------------------------------------------

FLAVOURS = [
    {},
    {"end_of_word": "symbol"},
    {"end_of_word": "symbol", "marker": "_", "lowercase": True},
    {"pretokenizer": r" ?\w+| ?[^\w\s]+", "end_of_word": None},
    {"byte_level": True},
    {"byte_level": True, "pretokenizer": "cl100k"},
    {"byte_level": True, "pretokenizer": None},
    {"byte_level": True, "pretokenizer": "whitespace"},
    {"lowercase": True, "special_tokens": ["<|end|>", "<S>"]},
    {"min_frequency": 3, "max_token_length": 4},
]
CORPUS = ["The ΑΣ quick brown fox<|end|>jumps over the lazy dog.\n",
          "Naïve café, ΣΊΣΥΦΟΣ; <S>déjà vu! 😀😀 \ud83d\ude00\x00end",
          "aaaa aaa aa a bbbb abab ab ba " * 3, "", "   \t "] * 5


@pytest.mark.skipif(len(BACKENDS) < 2, reason="the C extension is not built")
@pytest.mark.parametrize("options", FLAVOURS, ids=repr)
def test_c_and_python_backends_identical(options):
    results = []
    for backend in ("c", "python"):
        tok = make_tokenizer(vocab_size=400, backend=backend, **options)
        counts = tok.count_words(CORPUS)
        tok.train(CORPUS)
        results.append((counts, tok.vocab, tok.merges, tok.merge_counts,
                        tok.encode(CORPUS[0] + CORPUS[1], disallowed_special=())))
        tok.train_from_counts(counts)
        assert (tok.vocab, tok.merges) == results[-1][1:3]
    assert results[0] == results[1]


@pytest.mark.skipif(len(BACKENDS) < 2, reason="the C extension is not built")
@pytest.mark.parametrize("alphabet", [30, 700])
def test_c_and_python_identical_few_and_many_symbols(alphabet):
    # The C trainer's build indexes pairs of initial symbols by a table when
    # there are at most 512 of them (chapter flavour: 2 per character + <UNK>)
    # and by its hash map beyond: both give the Python twin's merges.
    import random

    rng = random.Random(alphabet)
    chars = [chr(0x4E00 + i) for i in range(alphabet)]
    corpus = [" ".join("".join(rng.choice(chars[:rng.randint(2, alphabet)]) for _ in range(rng.randint(1, 7)))
                       for _ in range(40)) for _ in range(60)]
    results = []
    for backend in ("c", "python"):
        tok = pybpe.BPETokenizer(vocab_size=2 * alphabet + 300, backend=backend)
        tok.train(corpus)
        results.append((tok.vocab, tok.merges, tok.merge_counts))
    assert len(results[0][0]) > 2 * alphabet + 1 and results[0] == results[1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_counts_with_empty_and_zero_words(backend):
    # "ab" has frequency 0 but still comes first, so its pair wins the tie at
    # count 2: (a, "b ") in the chapter flavour, where "abab" ends in "b ".
    expected = [({}, ("a", "b "), 2), ({"end_of_word": "symbol"}, ("a", "b"), 4),
                ({"byte_level": True}, (b"a", b"b"), 4)]
    for options, first, count in expected:
        tok = pybpe.BPETokenizer(vocab_size=300, backend=backend, **options)
        tok.train_from_counts({"": 3, "ab": 0, "abab": 2})
        assert (tok.merges[0], tok.merge_counts[0]) == (first, count)


# -- options --------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("limit", [1, 2, 3, 5])
def test_max_token_length_never_exceeded(backend, limit):
    tok = pybpe.BPETokenizer(vocab_size=500, max_token_length=limit, backend=backend,
                             end_of_word="symbol")
    tok.train(CORPUS)
    base = len(tok.vocab) - len(tok.merges)
    for token in tok.vocab[base:]:
        # units are initial symbols: characters, and the marker counts as one
        assert len(token.replace("</w>", "#")) <= limit
    unlimited = pybpe.BPETokenizer(vocab_size=500, backend=backend, end_of_word="symbol")
    unlimited.train(CORPUS)
    assert max(map(len, unlimited.vocab[base:])) > limit


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_token_length_in_bytes_at_byte_level(backend):
    tok = pybpe.BPETokenizer(vocab_size=400, max_token_length=3, byte_level=True, backend=backend)
    tok.train(CORPUS)
    assert tok.merges and all(len(t) <= 3 for t in tok.vocab[:len(tok.vocab)])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("min_frequency", [1, 2, 5, 11])
def test_min_frequency_respected(backend, min_frequency):
    tok = pybpe.BPETokenizer(vocab_size=1000, min_frequency=min_frequency, backend=backend)
    tok.train(CORPUS)
    assert all(c >= min_frequency for c in tok.merge_counts)
    free = pybpe.BPETokenizer(vocab_size=1000, backend=backend)
    free.train(CORPUS)
    n = len(tok.merges)
    assert tok.merges == free.merges[:n]  # the same run, stopped where counts fall below
    assert n == len(free.merges) or free.merge_counts[n] < min_frequency


@pytest.mark.parametrize("backend", BACKENDS)
def test_progress_writes_a_line_and_changes_nothing(capsys, backend):
    quiet = pybpe.BPETokenizer(vocab_size=300, backend=backend)
    quiet.train(CORPUS)
    assert capsys.readouterr().err == ""
    loud = pybpe.BPETokenizer(vocab_size=300, backend=backend)
    loud.train(CORPUS, progress=True)
    err = capsys.readouterr().err
    assert "merges %d/" % len(loud.merges) in err and err.endswith("\n")
    assert (loud.vocab, loud.merges, loud.merge_counts) == (quiet.vocab, quiet.merges, quiet.merge_counts)


# -- Shakespeare against the reference's fixture ------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_shakespeare_first_2000_merges_match_reference(shakespeare_text, backend):
    with open(FIXTURE, encoding="utf-8") as f:
        fixture = json.load(f)
    expected = [tuple(m) for m in fixture["merges"]]
    assert len(expected) == 2000
    tok = pybpe.BPETokenizer(vocab_size=fixture["base_vocab_size"] + 2000, backend=backend)
    tok.train(shakespeare_text.splitlines())
    assert len(tok.vocab) - len(tok.merges) == fixture["base_vocab_size"]
    assert tok.merges == expected


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("flavour", [dict(), dict(end_of_word="symbol"), dict(end_of_word=None),
                                     dict(byte_level=True, pretokenizer="gpt2"),
                                     dict(special_tokens=["<s>"])])
def test_trained_vocab_is_the_symbol_tables(monkeypatch, backend, flavour):
    # After training, the vocabulary is built from the base vocabulary and the
    # merges (tokenizer._merged_tokens), not exported from the symbol table:
    # it must be the table's tokens exactly -- here also where a merge makes a
    # token the table already holds (the text spells the marker "</w>", or
    # merges reach a base token), so it adds no ID.
    from pybpe import tokenizer

    made = []
    real = tokenizer._merged_tokens

    def spy(*args):
        made.append(real(*args))
        return made[-1]

    monkeypatch.setattr(tokenizer, "_merged_tokens", spy)
    corpus = ["</w> </w></w> w> </w>x x</w> ab</w> </w>" * 3, "aaa ab ba abab a</w> w>w>w>",
              "\u00e9t\u00e9 \u00e9 \ud83d\ude00\ud83d\ude00 " * 2] + LINES[:40]
    tok = pybpe.BPETokenizer(vocab_size=400, backend=backend, **flavour)
    tok.train([c.replace("\ud800", "") for c in corpus] if tok.flavour.byte_level else corpus)
    state = tok._state
    assert made and made[-1] is not None  # the fast path ran
    exported = [tok.flavour.from_bytes(t) for t in state.symtab.tokens()]
    assert state.vocab == exported + list(tok.special_tokens)
    assert state.merges == [(exported[a], exported[b]) for a, b, _ in state.merge_ids]
    assert list(state.token_to_id.items()) == list({t: i for i, t in reversed(list(enumerate(state.vocab)))}.items())
    if flavour == dict(end_of_word="symbol"):  # "<" + "/" ... made "</w>", the marker's own ID
        assert any(merged < state.merge_ids[0][2] for _, _, merged in state.merge_ids)


def _base_table(core, units, marker, chars, drop):
    """A symbol table of the initial symbols for `units`, less those of the
    characters in `drop` (their symbols are then NO_SYMBOL: words cut)."""
    if units == "bytes":
        tokens = [bytes([b]) for b in range(256) if chr(b) not in drop]
    else:
        keep = sorted(set(chars) - set(drop))
        tokens = [c.encode("utf-8", "surrogatepass") for c in keep]
        if units == "suffix":
            tokens += [(c + marker).encode("utf-8", "surrogatepass") for c in keep]
        elif units == "symbol":
            tokens.append(marker.encode("utf-8"))
    return core.SymbolTable(tokens)


@settings(**HYPOTHESIS)
@given(st.lists(st.text(alphabet="aab\u00e9 </w>\n\u3000", max_size=40), max_size=8),
       st.sampled_from(["bytes", "chars", "suffix", "symbol"]), st.integers(1, 3), st.integers(0, 4),
       st.sampled_from(["", "b", "\u00e9a"]))
def test_counter_trainer_is_trainer_on_the_word_table(core, texts, units, min_frequency, max_units, drop):
    # WordCounter.trainer (C: the words laid straight into the trainer, no word
    # table) learns what Trainer(word_table) learns -- merges, counts, IDs and
    # the table it grows -- with ties (repeated short words), symbols missing
    # from the table (NO_SYMBOL cuts a word), min_frequency and max_token_units.
    counter = core.WordCounter()
    for text in texts:
        counter.add_text(text)
    marker = {"suffix": " ", "symbol": "</w>"}.get(units)
    chars = "".join(w for w, _ in counter.items()) + "ab"
    options = dict(min_frequency=min_frequency, max_token_units=max_units)
    fast_table, slow_table = (_base_table(core, units, marker, chars, drop) for _ in range(2))
    fast = counter.trainer(fast_table, units, marker, **options)
    slow = core.Trainer(slow_table, counter.word_table(slow_table, units, marker), **options)
    assert fast.run(10**6, 10**6) == slow.run(10**6, 10**6)
    assert fast_table.tokens() == slow_table.tokens()


@pytest.mark.parametrize("run_chunk", [1, 3, 4096])
def test_run_ids_is_run_split(core, monkeypatch, run_chunk):
    # Trainer._run_ids (the C core's, for BPETokenizer._run) answers what
    # run() answers, as ([(left, right, merged)], [count]), asked in steps of
    # every size and fetched from C in chunks of run_chunk merges.
    if not hasattr(core.Trainer, "_run_ids"):
        pytest.skip("only the C core has Trainer._run_ids")
    monkeypatch.setattr(sys.modules[core.Trainer.__module__], "_RUN_CHUNK", run_chunk)
    text = "the cat sat on the mat with the hat that the bat ate " * 3 + "aaaa aaa aa a"
    trainers = []
    for _ in range(2):
        counter = core.WordCounter()
        counter.add_text(text)
        table = core.SymbolTable(sorted({c.encode() for c in text if c != " "}) + [b"</w>"])
        trainers.append(counter.trainer(table, "symbol", "</w>"))
    whole, split = trainers
    for steps in (0, 1, 2, 5, 7, 10**6):
        ids, counts = split._run_ids(10**6, steps)
        merges = whole.run(10**6, steps)
        assert ids == [m[:3] for m in merges] and counts == [m[3] for m in merges]
        assert all(type(t) is tuple for t in ids)
    assert merges and split._run_ids(10**6, 10**6) == ([], [])  # (ran to the end)


def test_counter_trainer_refuses_what_trainer_refuses(core):
    counter = core.WordCounter()
    counter.add_text("a b")
    table = core.SymbolTable([b"a", b"b"])
    with pytest.raises(ValueError):
        counter.trainer(table, "chars", min_frequency=0)
    with pytest.raises(ValueError):
        counter.trainer(table, "letters")
    with pytest.raises(ValueError):
        counter.trainer(table, "suffix", "")
    with pytest.raises(TypeError):
        counter.trainer([b"a"], "chars")
    assert counter.trainer(table, "chars").run(10, 10) == []  # one-symbol words: no pair
