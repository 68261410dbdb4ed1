"""WordPiece (pybpe/wordpiece.py, csrc/wordpiece.c, pybpe/core/spec/wordpiece.py).

Training: the C trainer, its Python twin and the literal reference
(pybpe.reference.learn_wordpiece) learn the same merges with the same counts,
on hand-checked corpora, on hypothesis corpora (ties, Unicode, empty input)
and on scores a float cannot tell apart.  Encoding: the greedy longest match
equals the literal reference word by word, and Hugging Face tokenizers'
WordPiece model (with BertNormalizer and BertPreTokenizer) ID for ID, on a
vocabulary trained here and on hypothesis text.  Files: vocab.txt,
tokenizer.json and pybpe's own, both ways, and their errors.
"""
import json
import unicodedata
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import pybpe
from pybpe import _bert, reference
from pybpe import core as backends
from pybpe.wordpiece import (WordPieceTokenizer, dump_hf_wordpiece, dump_vocab_txt, load_hf_wordpiece,
                             load_vocab_txt)

from conftest import shakespeare

BACKENDS = backends.available()
SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]


def literal(counts, vocab_size, min_frequency=1, specials=SPECIALS, prefix="##"):
    """What reference.learn_wordpiece learns on the tokenizer's word table
    (its base vocabulary written out here from the rule in wordpiece.py's
    docstring): (vocab, merges as (left, right), scores)."""
    words = [w for w in counts if w]
    heads = sorted({c for w in words for c in w})
    tails = sorted({prefix + c for w in words for c in w[1:]})
    base = list(specials) + [t for t in heads + tails if t not in specials]
    table = [((w[0],) + tuple(prefix + c for c in w[1:]), counts[w]) for w in words]
    vocab, merges = reference.learn_wordpiece(table, base, vocab_size, min_frequency, prefix)
    return vocab, [m[:2] for m in merges], [m[2:] for m in merges]


def trained(counts, vocab_size, backend, **options):
    tok = WordPieceTokenizer(vocab_size, backend=backend, **options)
    tok.train_from_counts(counts)
    return tok


# -- training: known answers ----------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_scores_pick_rare_pairs_where_bpe_picks_frequent_ones(backend):
    # a##b occurs 3 times, a##c once: BPE merges (a, ##b) first (count 3);
    # WordPiece merges (a, ##c), score 1/(4*1) = 1/4 > 3/(4*4).  Then a counts
    # 3, and (a, ##b) = 3/(3*4) ties (d, ##b) = 1/(1*4): the first met wins.
    tok = trained({"ab": 3, "ac": 1, "db": 1}, 12, backend, special_tokens=["[UNK]"])
    assert tok.vocab[:7] == ["[UNK]", "a", "b", "c", "d", "##b", "##c"]
    assert tok.merges == [("a", "##c"), ("a", "##b"), ("d", "##b")]
    assert tok.merge_scores == [(1, 4, 1), (3, 3, 4), (1, 1, 1)]
    assert tok.vocab[7:] == ["ac", "ab", "db"]
    bpe = pybpe.BPETokenizer(8, end_of_word=None, backend=backend)
    bpe.train_from_counts({"ab": 3, "ac": 1, "db": 1})
    assert bpe.merges[0] == ("a", "b")


@pytest.mark.parametrize("backend", BACKENDS)
def test_continuation_prefix_in_the_word_table(backend):
    tok = trained({"low": 5, "lower": 2}, 100, backend)
    assert {"l", "o", "w", "e", "r", "##o", "##w", "##e", "##r"} <= set(tok.vocab)
    assert "##l" not in tok.vocab  # l only ever starts a word
    # a merge drops the right symbol's prefix; a continuation pair keeps its own
    for (left, right), merged in zip(tok.merges, tok.vocab[len(tok.vocab) - len(tok.merges):]):
        assert right.startswith("##")
        assert merged == left + right[2:]


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_and_tiny_inputs(backend):
    for counts in ({}, {"": 3}, {"a": 1}, {"ab": 0}):
        tok = trained(counts, 50, backend)
        vocab, merges, scores = literal(counts, 50)
        assert (tok.vocab, tok.merges, tok.merge_scores) == (vocab, merges, scores)
    assert trained({"ab": 0}, 50, backend).merges == []  # count 0 is never a candidate


@pytest.mark.parametrize("backend", BACKENDS)
def test_min_frequency_and_vocab_size_stop_training(backend):
    counts = {"abc": 1, "abd": 2, "xy": 5}
    for min_frequency in (1, 2, 3, 6):
        for size in (5, 12, 16, 40):
            tok = trained(counts, size, backend, min_frequency=min_frequency, special_tokens=["[UNK]"])
            assert (tok.vocab, tok.merges) == literal(counts, size, min_frequency, ["[UNK]"])[:2]
            assert all(c >= min_frequency for c, _, _ in tok.merge_scores)


# -- training: C == Python == reference ---------------------------------------------------

WORDS = st.text(alphabet=st.sampled_from("ab#cé中\U0001f600"), min_size=0, max_size=7)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(counts=st.dictionaries(WORDS, st.integers(0, 4), max_size=25), extra=st.integers(0, 40),
       min_frequency=st.integers(1, 3))
def test_trainer_equals_reference(backend, counts, extra, min_frequency):
    size = len(literal(counts, 0)[0]) + extra
    tok = trained(counts, size, backend, min_frequency=min_frequency)
    assert (tok.vocab, tok.merges, tok.merge_scores) == literal(counts, size, min_frequency)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 5), max_size=8), st.integers(0, 3)), max_size=20),
       st.integers(0, 30))
def test_core_trainers_agree_on_any_symbols(words, steps):
    # Symbols the tokenizer never makes: the prefix alone ("##": a merge with
    # it remakes the left symbol), the empty string, unknown (cuts the word).
    tokens = [b"a", b"##", b"", b"##a", b"b", b"##b"]
    results = []
    for name in BACKENDS:
        core = backends.get(name)
        symtab = core.SymbolTable(tokens)
        table = core.WordTable([([s if s < 5 else core.NO_SYMBOL for s in w], f) for w, f in words])
        merges = core.WordPieceTrainer(symtab, table).run(100, steps)
        results.append((merges, symtab.tokens()))
    assert all(r == results[0] for r in results)
    table = [(tuple(tokens[s] for s in w if s < 5), f) for w, f in words if 5 not in w]
    if len(table) == len(words):  # no unknown symbol: the reference applies too
        vocab, merges = reference.learn_wordpiece(table, tokens, 100, 1, b"##")
        merges = merges[:steps]
        got = [(results[0][1][a], results[0][1][b], c, ca, cb) for a, b, _, c, ca, cb in results[0][0]]
        assert got == merges


@pytest.mark.parametrize("backend", BACKENDS)
def test_many_ties_go_to_the_first_met(backend):
    # 300 two-letter words of distinct letters, then pairs whose scores are
    # equal as fractions but not as counts: 2/(2*2) = 1/(1*2) = 4/(4*8)...
    letters = [chr(0x4E00 + k) for k in range(700)]
    counts = {letters[2 * k] + letters[2 * k + 1]: 1 for k in range(300)}
    counts.update({"xy": 2, "uv": 1, "u": 1, "pq": 4, "p": 0, "q": 4})
    size = len(literal(counts, 0)[0]) + 320
    tok = trained(counts, size, backend)
    vocab, merges, scores = literal(counts, size)
    assert (tok.vocab, tok.merges, tok.merge_scores) == (vocab, merges, scores)
    best = [Fraction(c, a * b) for c, a, b in scores]
    assert best[:300] == [1] * 300  # three hundred ties at the top, taken in corpus order
    assert tok.merges[:3] == [(letters[0], "##" + letters[1]), (letters[2], "##" + letters[3]),
                              (letters[4], "##" + letters[5])]
    assert sum(1 for s in best if s == Fraction(1, 2)) >= 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_scores_are_compared_exactly_not_as_floats(backend):
    # 1/(2**61 + 1) and 1/2**61 are the same double; the second is higher.
    big = 2**61
    counts = {"pq": big, "p": 1, "rs": big}
    assert 1 / (big + 1) == 1 / big
    tok = trained(counts, 100, backend, special_tokens=["[UNK]"])
    assert tok.merges[0] == ("r", "##s")
    assert tok.merge_scores[0] == (big, big, big)
    assert tok.merges == literal(counts, 100, specials=["[UNK]"])[1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_counts_past_64_bits_are_an_overflow_error(backend):
    with pytest.raises(OverflowError, match="2\\*\\*64 - 1"):
        trained({"ab": 2**63, "cd": 2**63}, 100, backend)


@pytest.mark.slow
def test_shakespeare_c_equals_python():
    if "c" not in BACKENDS:
        pytest.skip("the C extension is not built")
    counts = WordPieceTokenizer().count_words(shakespeare().splitlines())
    c, py = trained(counts, 8000, "c"), trained(counts, 8000, "python")
    assert c.vocab_size == 8000
    assert (c.vocab, c.merges, c.merge_scores) == (py.vocab, py.merges, py.merge_scores)


# -- encoding -----------------------------------------------------------------------------

CORPUS = ["The quick brown fox jumps over the lazy dog.", "Naïve café owners don't like résumés!",
          "低头思故乡, 举头望明月.", "unaffable unbelievable untouchable affable able",
          "Straße ΣΊΣΥΦΟΣ Ἀθῆναι ÆØÅ", "co-operate, co-ordinate; re-enter (re-entry)"] * 3


def tok_for(backend, **options):
    tok = WordPieceTokenizer(120, backend=backend, **options)
    tok.train(CORPUS)
    return tok


def hf_tokenizer(tok):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers.models import WordPiece
    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer

    hf = tokenizers.Tokenizer(WordPiece(tok.token_to_id, unk_token=tok.unk_token,
                                        max_input_chars_per_word=tok.max_input_chars_per_word))
    hf.normalizer = BertNormalizer(clean_text=tok.clean_text, handle_chinese_chars=tok.handle_chinese_chars,
                                   strip_accents=tok.strip_accents, lowercase=tok.lowercase)
    hf.pre_tokenizer = BertPreTokenizer()
    return hf


def _stable(c):
    # Characters Unicode 3.2 and this Python's tables class alike (and
    # assigned): HF's BERT components use older tables than Python's
    # (pybpe/_bert.py says how they differ).
    return unicodedata.category(c) != "Cn" and unicodedata.ucd_3_2_0.category(c) == unicodedata.category(c)


STABLE = [chr(c) for c in range(0x30000) if not 0xD800 <= c < 0xE000 and _stable(chr(c))]
TEXT = st.text(alphabet=st.one_of(st.sampled_from("".join(CORPUS) + " \t\n\r\x00\x0b\u3000\u00a0-'"),
                                  st.sampled_from(STABLE)), max_size=60)
OPTIONS = [dict(), dict(lowercase=False), dict(strip_accents=False), dict(lowercase=False, strip_accents=True),
           dict(clean_text=False, handle_chinese_chars=False), dict(max_input_chars_per_word=5)]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join("%s=%s" % kv for kv in o.items()) or "bert")
@settings(max_examples=200, deadline=None)
@given(text=TEXT)
def test_encode_equals_hf_wordpiece(options, text):
    tok = tok_for("python", **options)
    hf = _hf_cache(tok, options)
    assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids


_HF = {}


def _hf_cache(tok, options):
    key = tuple(sorted(options.items()))
    if key not in _HF:
        _HF[key] = hf_tokenizer(tok)
    return _HF[key]


@pytest.mark.parametrize("backend", BACKENDS)
def test_encode_on_the_training_corpus_equals_hf(backend):
    tok = tok_for(backend)
    hf = hf_tokenizer(tok)
    for text in CORPUS + ["UNAFFABLE!!", "x" * 101, "qqq", ""]:
        assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids
    assert tok.tokenize("unaffable") == [t for t in hf.encode("unaffable").tokens]


@settings(max_examples=300, deadline=None)
@given(word=st.text(alphabet=st.sampled_from("unafbleqc#"), min_size=1, max_size=14))
def test_greedy_match_equals_the_literal_encoder(word):
    tok = tok_for("python", max_input_chars_per_word=10)
    state = tok._state
    pieces = reference.wordpiece_encode_word(word, set(tok.vocab), max_chars=10)
    assert [tok.vocab[i] for i in tok._longest_first(state, word)] == pieces


def test_encode_decode_specials_and_errors():
    tok = tok_for("python")
    ids = tok.encode("unaffable fox", add_special_tokens=True)
    assert ids[0] == tok.token_to_id["[CLS]"] and ids[-1] == tok.token_to_id["[SEP]"]
    assert tok.decode(ids, skip_special_tokens=True) == "unaffable fox"
    assert tok.decode(tok.encode("The fox, jumps!")) == "the fox , jumps !"
    assert tok.encode("[CLS] fox") == tok.encode("[ cls ] fox")  # text, unless allowed
    assert tok.encode("[CLS] fox", allowed_special={"[CLS]"})[0] == tok.token_to_id["[CLS]"]
    assert tok.encode_batch(["fox", "dog"]) == [tok.encode("fox"), tok.encode("dog")]
    assert tok.encode("qqq") == [tok.token_to_id["[UNK]"]]
    with pytest.raises(RuntimeError, match="train"):
        WordPieceTokenizer().encode("x")
    with pytest.raises(ValueError, match="unk_token"):
        WordPieceTokenizer(unk_token="<unk>")
    with pytest.raises(TypeError, match="corpus\\[1\\]"):
        WordPieceTokenizer().train(["a", 3])
    with pytest.raises(TypeError, match="single str"):
        WordPieceTokenizer().train("text")
    with pytest.raises(ValueError, match="not special tokens"):
        tok.encode("x", allowed_special={"<s>"})


def test_bert_normalizer_and_split():
    assert _bert.split(_bert.normalize("Héllo,\tWORLD!  中文ΣΑΣ")) == ["hello", ",", "world", "!", "中", "文", "σασ"]
    assert _bert.normalize("a\x00b\ufffdc\x0bd\x1ce") == "abcde"  # controls go, \x0b is Cc first
    assert _bert.normalize("Ä", lowercase=False) == "Ä"
    assert _bert.split("a\x1cb") == ["a\x1cb"]  # not Unicode White_Space (str.split would cut)


# -- files ----------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_save_load_round_trip(tmp_path, backend):
    tok = tok_for(backend)
    path = tmp_path / "wp.json"
    tok.save(path)
    back = WordPieceTokenizer.load(path, backend=backend)
    assert (back.vocab, back.merges, back.merge_scores, back.config()) == (
        tok.vocab, tok.merges, tok.merge_scores, tok.config())
    assert back.encode(CORPUS[1]) == tok.encode(CORPUS[1])
    assert json.loads(path.read_text())["format"] == "pybpe.WordPieceTokenizer"


def test_vocab_txt_both_ways(tmp_path):
    tok = tok_for("python")
    path = tmp_path / "vocab.txt"
    dump_vocab_txt(tok, path)
    assert path.read_text(encoding="utf-8").splitlines() == tok.vocab
    back = load_vocab_txt(path)
    assert back.vocab == tok.vocab and back.special_tokens == tok.special_tokens
    for text in CORPUS:
        assert back.encode(text) == tok.encode(text)
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.BertWordPieceTokenizer(str(path), lowercase=True)
    assert hf.encode(CORPUS[1], add_special_tokens=False).ids == tok.encode(CORPUS[1])


def test_tokenizer_json_both_ways(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    tok = tok_for("python", lowercase=False)
    path = tmp_path / "tokenizer.json"
    dump_hf_wordpiece(tok, path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    for text in CORPUS:
        assert hf.encode(text).ids == tok.encode(text)
    hf_path = tmp_path / "hf.json"
    hf.save(str(hf_path))
    for loaded in (load_hf_wordpiece(hf_path), WordPieceTokenizer.load(hf_path)):
        assert loaded.vocab == tok.vocab and loaded.lowercase is False
        assert [loaded.encode(t) for t in CORPUS] == [tok.encode(t) for t in CORPUS]


def test_pybpe_load_recognises_wordpiece_files(tmp_path):
    tok = tok_for("python")
    tok.save(tmp_path / "wp.json")
    dump_hf_wordpiece(tok, tmp_path / "tokenizer.json")
    for name in ("wp.json", "tokenizer.json"):
        loaded = pybpe.load(tmp_path / name)
        assert isinstance(loaded, WordPieceTokenizer) and loaded.vocab == tok.vocab
        assert loaded.encode(CORPUS[0]) == tok.encode(CORPUS[0])
    with pytest.raises(pybpe.FormatError, match="WordPieceTokenizer"):
        pybpe.BPETokenizer.load(tmp_path / "wp.json")


def test_bad_files_are_format_errors(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("[UNK]\na\nb\na\n")
    with pytest.raises(pybpe.FormatError, match="vocab.txt:4: 'a' repeats line 2"):
        load_vocab_txt(path)
    path.write_text("a\nb\n")
    with pytest.raises(pybpe.FormatError, match="\\[UNK\\]"):
        load_vocab_txt(path, special_tokens=["[UNK]"])
    path.write_bytes(b"[UNK]\n\xff\n")
    with pytest.raises(pybpe.FormatError, match="vocab.txt:2: not UTF-8"):
        load_vocab_txt(path)
    bad = tmp_path / "tokenizer.json"
    bad.write_text(json.dumps({"model": {"type": "BPE", "vocab": {}, "merges": []}}))
    with pytest.raises(pybpe.FormatError, match="WordPiece model"):
        load_hf_wordpiece(bad)
    bad.write_text(json.dumps({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 2}},
                               "pre_tokenizer": {"type": "BertPreTokenizer"}}))
    with pytest.raises(pybpe.FormatError, match="IDs must be 0..1"):
        load_hf_wordpiece(bad)
    bad.write_text(json.dumps({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0}},
                               "pre_tokenizer": {"type": "Whitespace"}}))
    with pytest.raises(pybpe.FormatError, match="BertPreTokenizer"):
        load_hf_wordpiece(bad)
    bad.write_text('{"format": "pybpe.WordPieceTokenizer", "version": 2}')
    with pytest.raises(pybpe.FormatError, match="version 2"):
        WordPieceTokenizer.load(bad)
    bad.write_text("{not json")
    with pytest.raises(pybpe.FormatError, match="not valid JSON"):
        WordPieceTokenizer.load(bad)


# -- the command (section 11.8's comparison) ---------------------------------------------------

def _pybpe(*args):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "pybpe", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("backend", BACKENDS)
def test_wordpiece_command_prints_the_comparison(backend):
    from pybpe.examples import wordpiece_vs_bpe as cmp

    done = _pybpe("wordpiece", "--backend", backend)
    assert done.returncode == 0, done.stderr
    expected = cmp.report(cmp.compare(cmp.TRAIN_TEXT, cmp.HELD_TEXT, cmp.DEFAULT_VOCAB, backend="python"))
    strip = [line for line in expected.splitlines() if not line.startswith("training time")]
    assert [line for line in done.stdout.splitlines() if not line.startswith("training time")] == strip
    assert "(w, ##i) 3/(3*3) = 0.3333" in done.stdout and "(e, s) 9" in done.stdout


def test_wordpiece_command_errors(tmp_path):
    done = _pybpe("wordpiece", "--vocab-size", "0")
    assert done.returncode == 1 and "--vocab-size" in done.stderr
    done = _pybpe("wordpiece", str(tmp_path / "absent.txt"))
    assert done.returncode == 2 and "absent.txt" in done.stderr
    one = tmp_path / "one.txt"
    one.write_text("a b c\n")
    done = _pybpe("wordpiece", str(one))
    assert done.returncode == 2 and "no words to measure" in done.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_vocab_txt_keeps_tokens_of_characters_python_calls_space(tmp_path, backend):
    # U+001C-U+001F are str.isspace() to Python but no White_Space to BERT
    # (nor to Rust, which HF's loader trims with): a vocabulary trained with
    # clean_text=False holds them as tokens, and load_vocab_txt refused the
    # file dump_vocab_txt had just written ("an empty token").  Found by a
    # fuzzing helper.
    tok = WordPieceTokenizer(50, clean_text=False, backend=backend)
    tok.train(["a\x1cb a\x1fb c\x1dd"])
    assert "\x1c" in tok.vocab
    path = tmp_path / "vocab.txt"
    dump_vocab_txt(tok, path)
    again = load_vocab_txt(path, clean_text=False, backend=backend)
    assert again.vocab == tok.vocab
    for text in ["a\x1cb", "c\x1dd a\x1fb", "\x1c\x1e"]:
        assert again.encode(text) == tok.encode(text)
    path.write_text("[PAD]\n[UNK]\n \u3000\na\n", encoding="utf-8")  # White_Space only: still no token
    with pytest.raises(pybpe.FormatError, match=":3: an empty token"):
        load_vocab_txt(path)


@pytest.mark.parametrize("backend", BACKENDS)
def test_batch_and_decode_take_what_the_other_classes_take(backend):
    # encode_batch("hello") encoded each character as a text of its own, and
    # decode refused NumPy IDs (found by a fuzzing helper); BPETokenizer and
    # Encoding raise TypeError for the first and take the second.
    numpy = pytest.importorskip("numpy")
    tok = WordPieceTokenizer(60, backend=backend)
    tok.train(["hello world, hello there"])
    with pytest.raises(TypeError, match=r"wrap it: \[text\]"):
        tok.encode_batch("hello")
    ids = tok.encode("hello world")
    for form in (numpy.array(ids), numpy.array(ids, dtype=numpy.uint32), [numpy.int64(i) for i in ids], tuple(ids)):
        assert tok.decode(form) == tok.decode(ids) == "hello world"
    for bad in ([1.0], [True], ["1"], numpy.array([1.0])):
        with pytest.raises(TypeError):
            tok.decode(bad)


# -- as BPETokenizer (found there by a fuzzing helper, 2026-12-06) ----------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_special_tokens_must_be_ordered_here_too(backend):
    with pytest.raises(TypeError, match="order"):
        WordPieceTokenizer(vocab_size=40, special_tokens={"[UNK]", "[CLS]", "[SEP]"}, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_accessors_do_not_expose_the_state_here_too(backend):
    tok = WordPieceTokenizer(vocab_size=40, backend=backend)
    tok.train(["hello world", "help the world"])
    before = (tok.vocab, tok.decode(tok.encode("hello")), tok.vocab_size)
    vocab = tok.vocab
    vocab[5] = "XX"
    vocab.append("extra")
    assert (tok.vocab, tok.decode(tok.encode("hello")), tok.vocab_size) == before
    tok.token_to_id["XX"] = 3
    assert "XX" not in tok.token_to_id and tok.token_to_id[tok.vocab[5]] == 5
