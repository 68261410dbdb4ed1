"""The everyday surface of both classes (issue 14): pickling and copying a
BPETokenizer, one behaviour for the same mistake in BPETokenizer and
Encoding, streaming decode, model-ready batches.

Every test runs once per backend built here (`c` and `python`), as in
tests/test_tokenizer.py.
"""
import copy
import json
import inspect
import multiprocessing
import os
import pickle
import re
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pybpe
from pybpe import core as backends

BACKENDS = backends.available()
CORPUS = ["low", "low", "lower", "newest", "widest"]
TEXT = "the lowest widest newest naïve tokens, lower still"
# One of each flavour, trained on a corpus with multi-byte characters.
FLAVOURS = {
    "chapter": dict(),
    "symbol": dict(end_of_word="symbol"),
    "underscore": dict(end_of_word="symbol", marker="_"),
    "leading-space": dict(regex=r" ?\w+| ?[^\w\s]+", end_of_word=None),
    "bytes": dict(byte_level=True, pretokenizer=None),
    "bytes-gpt2": dict(byte_level=True),
    "bytes-cl100k": dict(byte_level=True, pretokenizer="cl100k"),
    "bytes-o200k": dict(byte_level=True, pretokenizer="o200k"),
    "bytes-regex": dict(byte_level=True, regex=r" ?\w+|\s+|[^\w\s]+"),
}
TRAINING = ["the lowest widest newest tokens", "naïve café über straße", "中文 字符 😀 émoji, lower",
            "low low lower newest widest", "a</w>b x</ y w> </w</w>> _a_ b_"] * 3


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def trained(backend, name="chapter", vocab_size=320, **options):
    tok = pybpe.BPETokenizer(vocab_size=vocab_size, backend=backend, **dict(FLAVOURS[name], **options))
    tok.train(TRAINING)
    return tok


# -- item 5: pickle, deepcopy, spawn ------------------------------------------------------
@pytest.mark.parametrize("name", sorted(FLAVOURS))
def test_pickled_and_copied_tokenizers_encode_alike(backend, name):
    tok = trained(backend, name, special_tokens=["<|end|>"])
    ids = tok.encode(TEXT + "<|end|>", allowed_special="all")
    for other in (pickle.loads(pickle.dumps(tok)), copy.deepcopy(tok), copy.copy(tok)):
        assert other is not tok and other.backend == tok.backend
        assert other.config() == tok.config()
        assert (other.vocab, other.merges, other.merge_counts) == (tok.vocab, tok.merges, tok.merge_counts)
        assert other.encode(TEXT + "<|end|>", allowed_special="all") == ids
        assert other.decode(ids) == tok.decode(ids)
    # the copy is independent: retraining it leaves the original alone
    clone = copy.deepcopy(tok)
    clone.train(["zzz"])
    assert tok.encode(TEXT + "<|end|>", allowed_special="all") == ids


def test_untrained_tokenizer_pickles(backend):
    tok = pickle.loads(pickle.dumps(pybpe.BPETokenizer(vocab_size=50, byte_level=True, backend=backend)))
    assert not tok.is_trained and tok.flavour.byte_level and tok.target_vocab_size == 50
    tok.train(TRAINING)
    assert tok.decode(tok.encode(TEXT)) == TEXT


def test_loaded_pattern_stays_bounded_after_pickling(tmp_path, backend):
    # a pattern read from a file is matched under a time bound; so is its copy
    tok = trained(backend, "bytes-regex")
    tok.save(tmp_path / "m.json")
    loaded = pybpe.load(tmp_path / "m.json", backend=backend)
    again = pickle.loads(pickle.dumps(loaded))
    assert type(again.flavour.pattern) is type(loaded.flavour.pattern)
    assert getattr(again.flavour.pattern, "source", None) == getattr(loaded.flavour.pattern, "source", None)
    assert again.encode(TEXT) == tok.encode(TEXT)


def test_spawn_pool_encodes_alike(backend):
    tok = trained(backend, "bytes-gpt2")
    texts = [TEXT, "naïve café", ""]
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.map(tok.encode, texts) == [tok.encode(t) for t in texts]


def test_merge_counts_is_public(backend):
    tok = trained(backend)
    assert len(tok.merge_counts) == len(tok.merges) > 0
    assert tok.merge_counts[0] >= tok.merge_counts[-1] > 0
    assert "merge_counts" in dir(tok) and tok.merge_counts == tok._state.merge_counts


# -- rough edges ------------------------------------------------------------------------
def test_help_shows_readable_defaults():
    for fn in (pybpe.BPETokenizer, pybpe.BPETokenizer.__init__):
        shown = str(inspect.signature(fn))
        assert "object at 0x" not in shown, shown
    assert "pretokenizer=" in str(inspect.signature(pybpe.BPETokenizer))


def test_docstrings_cite_nothing_outside_the_project():
    # the product specification is not shipped: no "SPEC §1" in the package
    root = os.path.dirname(pybpe.__file__)
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    assert not re.search(r"\bSPEC\b", f.read()), os.path.join(folder, name)


def test_no_compiler_warning_points_at_the_caller(monkeypatch):
    monkeypatch.setattr(backends, "_warned", False)
    monkeypatch.setattr(backends, "c_available", lambda: False)
    monkeypatch.delenv("PYBPE_NO_EXTENSION", raising=False)
    monkeypatch.delenv("PYBPE_BACKEND", raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pybpe.BPETokenizer()  # this line is the caller's
    assert len(caught) == 1 and caught[0].category is RuntimeWarning
    assert caught[0].filename == __file__, caught[0].filename


# -- item 4: one behaviour for the same mistake in both classes ----------------------------
def encoding(backend):
    return pybpe.get_encoding("gpt2", backend=backend)


@pytest.mark.parametrize("name", ["gpt3", "GPT2", "gpt-2", "cl100k-base", "o200k base", "", "spaces"])
def test_unknown_pretokenizer_names_are_errors_listing_the_known_ones(backend, name):
    for byte_level in (False, True):
        with pytest.raises(ValueError, match="unknown pretokenizer") as info:
            pybpe.BPETokenizer(pretokenizer=name, byte_level=byte_level, backend=backend)
        message = str(info.value)
        assert "'gpt2'" in message and "'whitespace'" in message and "None" in message
        assert "regex=" in message
    with pytest.raises(TypeError, match="pretokenizer"):
        pybpe.BPETokenizer(pretokenizer=3, backend=backend)


def test_every_known_pretokenizer_name_is_accepted(backend):
    from pybpe.flavours import known_pretokenizers
    for name in known_pretokenizers():
        byte_level = name != "whitespace"
        tok = pybpe.BPETokenizer(vocab_size=300, pretokenizer=name, byte_level=byte_level, backend=backend)
        tok.train(TRAINING)
        assert tok.decode(tok.encode(TEXT)) == TEXT, name


def test_custom_patterns_are_passed_as_regex(backend, tmp_path):
    tok = pybpe.BPETokenizer(vocab_size=60, regex=r"\w+|[^\w\s]", end_of_word="symbol", backend=backend)
    tok.train(TRAINING)
    assert tok.flavour.split("hi, you") == ["hi", ",", "you"]
    # a name-like pattern needs regex= (with pretokenizer= it would be a misspelt name)
    word = pybpe.BPETokenizer(vocab_size=60, regex="low", end_of_word=None, backend=backend)
    assert word.flavour.split("lower slow") == ["low", "low"]
    with pytest.raises(ValueError, match="not both"):
        pybpe.BPETokenizer(pretokenizer="gpt2", regex=r"\w+", backend=backend)
    with pytest.raises(ValueError, match="pretokenizer name"):
        pybpe.BPETokenizer(regex="gpt2", backend=backend)
    with pytest.raises(ValueError, match="not a valid regular expression"):
        pybpe.BPETokenizer(regex="(", backend=backend)
    # saved and loaded (the file keeps the old "pretokenizer" spelling), also name-like ones
    for t in (tok, word):
        t.train(TRAINING)
        t.save(tmp_path / "m.json")
        again = pybpe.load(tmp_path / "m.json", backend=backend)
        assert again.flavour.pattern.pattern == t.flavour.pattern.pattern
        assert again.encode(TEXT) == t.encode(TEXT)


def test_old_model_files_with_a_pattern_as_pretokenizer_still_load(tmp_path, backend):
    # before regex= a pattern was given as pretokenizer=; files say so
    tok = pybpe.BPETokenizer(vocab_size=60, regex=r" ?\w+| ?[^\w\s]+", end_of_word=None, backend=backend)
    tok.train(TRAINING)
    tok.save(tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["config"]["pretokenizer"] == r" ?\w+| ?[^\w\s]+" and "regex" not in doc["config"]
    assert pybpe.load(tmp_path / "m.json", backend=backend).encode(TEXT) == tok.encode(TEXT)
    # and code written then: a pattern with regex syntax in pretokenizer= still works
    old = pybpe.BPETokenizer(vocab_size=60, pretokenizer=r" ?\w+| ?[^\w\s]+", end_of_word=None, backend=backend)
    old.train(TRAINING)
    assert old.encode(TEXT) == tok.encode(TEXT)


def test_byte_level_whitespace_is_refused_but_old_files_load(tmp_path, backend):
    with pytest.raises(ValueError, match="drop every space"):
        pybpe.BPETokenizer(byte_level=True, pretokenizer="whitespace", backend=backend)
    # a model saved when it was allowed still loads and encodes as it did
    legacy = pybpe.BPETokenizer._from_config(dict(vocab_size=280, byte_level=True, pretokenizer="whitespace"),
                                             backend)
    legacy.train(TRAINING)
    legacy.save(tmp_path / "m.json")
    assert pybpe.load(tmp_path / "m.json", backend=backend).encode(TEXT) == legacy.encode(TEXT)


def test_strings_are_refused_where_collections_are_expected(backend):
    tok = trained(backend, "bytes-gpt2", special_tokens=["<pad>"])
    for obj in (tok, encoding(backend)):
        with pytest.raises(TypeError, match="list of str"):
            obj.encode_batch("hello world")
        with pytest.raises(TypeError, match="collection"):
            obj.encode("x", allowed_special="<pad>")
        with pytest.raises(TypeError, match="collection"):
            obj.encode("x", disallowed_special="<pad>")
        with pytest.raises(TypeError):
            obj.decode("123")
        with pytest.raises(TypeError):
            obj.decode_with_offsets("123")
    with pytest.raises(TypeError, match="list of str"):
        encoding(backend).encode_ordinary_batch("hello world")
    with pytest.raises(TypeError, match="special_tokens"):
        pybpe.BPETokenizer(special_tokens="<pad>")


@pytest.mark.parametrize("name", ["chapter", "symbol", "bytes-gpt2"])
def test_out_of_range_and_negative_ids_raise_the_same_error(backend, name):
    tok = trained(backend, name, special_tokens=["<|end|>"])
    enc = encoding(backend)
    for obj, size in ((tok, tok.vocab_size), (enc, enc.n_vocab)):
        for bad in (size, size + 10**6, -1, -size):
            for call in [obj.decode] + ([obj.decode_bytes] if obj is enc or tok.flavour.byte_level else []):
                with pytest.raises(pybpe.InvalidTokenError, match=str(bad)) as info:
                    call([0, 1, bad])
                assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
                if obj is tok:
                    assert "ids[2]" in str(info.value)
    with pytest.raises(TypeError, match=r"ids\[1\]"):
        tok.decode([1, 2.0])
    with pytest.raises(TypeError, match=r"ids\[0\]"):
        tok.decode([True])


# Found by fuzzing against tiktoken: an integral float (1.0, numpy.float64(1.0))
# hashes like the int, so a dictionary lookup took it as an ID and decoding
# returned text where tiktoken raises TypeError.
NOT_INTEGERS = [1.0, 31373.0, 0.0, float("nan"), 1 + 0j, "1", None, b"1"]


def _not_integers():
    import decimal
    import fractions
    values = NOT_INTEGERS + [fractions.Fraction(1), decimal.Decimal(1)]
    try:
        import numpy
    except ImportError:
        return values
    return values + [numpy.float64(1.0), numpy.float32(2.0), numpy.float16(3.0)]


def _sparse_encoding(backend):
    # A special token far above the ranks: its ID table cannot be a list.
    return pybpe.Encoding("sparse", pat_str=r"\S+|\s+", backend=backend,
                          mergeable_ranks={bytes([i]): i for i in range(256)},
                          special_tokens={"<s>": 2**31})


def test_an_id_that_is_no_integer_raises_type_error_from_every_decoding_method(backend):
    for enc in (encoding(backend), _sparse_encoding(backend)):
        calls = {
            "decode": lambda ids: enc.decode(ids),
            "decode_bytes": lambda ids: enc.decode_bytes(ids),
            "decode_tokens_bytes": lambda ids: enc.decode_tokens_bytes(ids),
            "decode_with_offsets": lambda ids: enc.decode_with_offsets(ids),
            "decode_batch": lambda ids: enc.decode_batch([[104], ids]),
            "decode_bytes_batch": lambda ids: enc.decode_bytes_batch([ids]),
            "skip_special_tokens": lambda ids: enc.decode(ids, skip_special_tokens=True),
            "stream_decoder": lambda ids: [enc.stream_decoder().feed(i) for i in ids],
            "decode_single_token_bytes": lambda ids: enc.decode_single_token_bytes(ids[-1]),
        }
        for bad in _not_integers():
            for name, call in calls.items():
                with pytest.raises(TypeError):
                    call([104, bad])
                    pytest.fail("%s accepted %r as an ID" % (name, bad))
        for name in ("decode", "decode_bytes"):
            with pytest.raises(TypeError, match=r"tokens\[1\]"):
                calls[name]([104, 1.0])
    # A float equal to a special token's ID is not skipped as that token,
    # nor is it one.
    enc = encoding(backend)
    for bad in (float(enc.eot_token), str(enc.eot_token), None):
        with pytest.raises(TypeError):
            enc.is_special_token(bad)
    assert enc.is_special_token(enc.eot_token) and not enc.is_special_token(0)
    with pytest.raises(TypeError):
        enc.decode([104, float(enc.eot_token)], skip_special_tokens=True)
    assert enc.decode(enc.encode("hi") + [enc.eot_token], skip_special_tokens=True) == "hi"


def test_numpy_float_arrays_are_no_ids_and_integer_arrays_are(backend):
    numpy = pytest.importorskip("numpy")
    enc = encoding(backend)
    ids = enc.encode("hello world")
    for dtype in (numpy.float64, numpy.float32):
        with pytest.raises(TypeError):
            enc.decode(numpy.array(ids, dtype=dtype))
        with pytest.raises(TypeError):
            enc.decode_batch(numpy.array([ids], dtype=dtype))
    for dtype in (numpy.int64, numpy.uint32, numpy.int32, numpy.uint16):
        assert enc.decode(numpy.array(ids, dtype=dtype)) == "hello world"
        assert enc.decode([dtype(i) for i in ids]) == "hello world"
        assert enc.decode_with_offsets(numpy.array(ids, dtype=dtype))[0] == "hello world"
    with pytest.raises(pybpe.InvalidTokenError, match="-1"):
        enc.decode(numpy.array(ids + [-1], dtype=numpy.int64))


def test_integer_ids_of_every_kind_decode_as_tiktoken_decodes_them(backend):
    # bool is an int to tiktoken as well: True is ID 1.  Tuples, iterators,
    # ranges and the sparse encoding's far ID decode like lists.
    enc = encoding(backend)
    ids = enc.encode("hello world")
    one = enc.decode_single_token_bytes(1)
    assert enc.decode_bytes([True, False]) == one + enc.decode_single_token_bytes(0)
    assert enc.decode_single_token_bytes(True) == one
    assert enc.decode(tuple(ids)) == enc.decode(iter(ids)) == "hello world"
    assert enc.decode_bytes(range(3)) == b"".join(enc.decode_single_token_bytes(i) for i in range(3))
    assert enc.decode([]) == "" and enc.decode_tokens_bytes([]) == []
    sparse = _sparse_encoding(backend)
    assert sparse.decode([104, 2**31, 105]) == "h<s>i"
    assert sparse.decode_tokens_bytes(iter([2**31, 104])) == [b"<s>", b"h"]
    for bad in (256, 2**31 - 1, 2**31 + 1, -1, -2**31, 2**64):
        with pytest.raises(pybpe.InvalidTokenError):
            sparse.decode([104, bad])
        with pytest.raises(pybpe.InvalidTokenError):
            sparse.decode_single_token_bytes(bad)


def test_untrained_use_raises_for_encode_and_decode_alike(backend):
    tok = pybpe.BPETokenizer(backend=backend)
    for call in (lambda: tok.encode("hi"), lambda: tok.decode([0]), lambda: tok.decode([]),
                 lambda: tok.encode_batch(["hi"])):
        with pytest.raises(RuntimeError, match="train"):
            call()
    byte = pybpe.BPETokenizer(byte_level=True, backend=backend)
    with pytest.raises(RuntimeError, match="train"):
        byte.decode_bytes([104])


@pytest.mark.parametrize("name", ["chapter", "bytes-gpt2"])
def test_special_token_text_follows_tiktokens_rule_in_both_classes(backend, name):
    tok = trained(backend, name, special_tokens=["<|endoftext|>"])
    enc = encoding(backend)
    text = "low <|endoftext|> lower"
    for obj in (tok, enc):
        with pytest.raises(ValueError, match="disallowed special token '<\\|endoftext\\|>'"):
            obj.encode(text)
        with pytest.raises(ValueError, match="disallowed special token"):
            obj.encode_batch(["fine", text])
        eot = obj.encode("<|endoftext|>", allowed_special="all")
        assert len(eot) == 1
        assert eot[0] in obj.encode(text, allowed_special={"<|endoftext|>"})
        as_text = obj.encode(text, disallowed_special=())
        assert eot[0] not in as_text and len(as_text) > 3
        assert obj.encode_batch([text], disallowed_special=()) == [as_text]
    # text that is not a special token of this tokenizer is never checked
    assert tok.encode("low <|end|>", allowed_special=()) == tok.encode("low <|end|>", disallowed_special=())


# -- item 3: streaming decode ------------------------------------------------------------------
_TRAINED = {}


def trained_once(backend, name):
    """trained(backend, name) with two special tokens, made once per process."""
    key = (backend, name)
    if key not in _TRAINED:
        _TRAINED[key] = trained(backend, name, special_tokens=["<|end|>", "<pad>"])
    return _TRAINED[key]


def streamed(decoder, ids):
    pieces = [decoder.feed(i) for i in ids]
    assert all(isinstance(p, str) for p in pieces)
    return "".join(pieces) + decoder.finish()


STREAM_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                           suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
STREAM_TEXT = st.text(alphabet=st.sampled_from("lowe rstnaï \t\n.,é中文😀🦜</w>_"), max_size=30)


@pytest.mark.parametrize("name", sorted(FLAVOURS))
@STREAM_SETTINGS
@given(data=st.data())
def test_stream_decoder_equals_decode_for_every_flavour(name, data):
    for backend in BACKENDS:
        tok = trained_once(backend, name)
        ids = data.draw(st.lists(st.integers(0, tok.vocab_size - 1), max_size=40), label="ids")
        decoder = tok.stream_decoder()
        assert streamed(decoder, ids) == tok.decode(ids)
        # the same decoder again, on the IDs of real text (characters split across tokens at byte level)
        text = data.draw(STREAM_TEXT, label="text")
        ids = tok.encode(text, disallowed_special=())
        assert streamed(decoder, ids) == tok.decode(ids)


def _valid_ids(enc):
    return sorted(enc._decoder)


@pytest.mark.parametrize("name", pybpe.list_encoding_names()[:7])
@STREAM_SETTINGS
@given(data=st.data())
def test_stream_decoder_equals_decode_for_every_shipped_encoding(name, data):
    enc = pybpe.get_encoding(name)
    valid = _valid_ids(enc)
    # tokens that hold a part of a multi-byte character, so characters split across tokens
    partial = [i for i in valid[:2000] if enc._decoder[i] and enc._decoder[i][-1] >= 0x80] or valid
    ids = data.draw(st.lists(st.one_of(st.sampled_from(valid), st.sampled_from(partial)), max_size=40),
                    label="ids")
    assert streamed(enc.stream_decoder(), ids) == enc.decode(ids)
    text = data.draw(STREAM_TEXT, label="text")
    ids = enc.encode(text, disallowed_special=())
    decoder = enc.stream_decoder()
    assert streamed(decoder, ids) == enc.decode(ids) == text


def test_shipped_encoding_names_are_the_seven():
    assert pybpe.list_encoding_names()[:7] == ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base",
                                               "o200k_base", "o200k_harmony"]


@pytest.mark.parametrize("name", ["chapter", "symbol", "underscore", "bytes-gpt2"])
def test_stream_hands_out_text_as_soon_as_it_is_complete(backend, name):
    tok = trained_once(backend, name)
    text = "naïve lowest 😀 widest"
    ids = tok.encode(text)
    decoder = tok.stream_decoder()
    out = [decoder.feed(i) for i in ids]
    assert "".join(out) == tok.decode(ids) and decoder.finish() == ""
    # every whole word is out before the next word's first ID
    if not tok.flavour.byte_level:
        word_ids = [tok.encode(w) for w in text.split()]
        so_far, k = "", 0
        for n, w in enumerate(word_ids[:-1]):
            so_far += "".join(out[k:k + len(w)])
            k += len(w)
            assert so_far == tok.decode([i for ws in word_ids[:n + 1] for i in ws])


def test_chapter_stream_puts_the_spaces_between_words(backend):
    tok = trained_once(backend, "chapter")
    ids = tok.encode("low lower newest")
    decoder = tok.stream_decoder()
    pieces = [decoder.feed(i) for i in ids]
    assert "".join(pieces) == "low lower newest" and decoder.finish() == ""
    assert not pieces[-1].endswith(" ")  # the last word's space waits for a next word that never comes


def test_byte_level_stream_never_hands_out_half_characters(backend):
    tok = trained_once(backend, "bytes")
    byte_ids = list("😀".encode())  # byte level: the IDs of single bytes are their values
    decoder = tok.stream_decoder()
    assert [decoder.feed(i) for i in byte_ids] == ["", "", "", "😀"]
    enc = encoding(backend)
    decoder = enc.stream_decoder()
    assert [decoder.feed(enc.encode_single_token(bytes([b]))) for b in "é!".encode()] == ["", "é", "!"]
    assert decoder.feed(enc.encode_single_token(b"\xe4")) == "" and decoder.finish() == "\ufffd"


def test_stream_decoder_refuses_bad_ids_like_decode(backend):
    for obj in (trained_once(backend, "chapter"), trained_once(backend, "bytes-gpt2"), encoding(backend)):
        decoder = obj.stream_decoder()
        decoder.feed(1)
        with pytest.raises(pybpe.InvalidTokenError, match=r"\[1\]"):
            decoder.feed(-1)
        with pytest.raises(pybpe.InvalidTokenError):
            decoder.feed(10**7)
        with pytest.raises(TypeError):
            decoder.feed("7")
    with pytest.raises(RuntimeError, match="train"):
        pybpe.BPETokenizer(backend=backend).stream_decoder()


# -- item 2: model-ready batches ----------------------------------------------------------------
np = pytest.importorskip("numpy")
MODEL_SPECIALS = ["<pad>", "<bos>", "<eos>"]
BATCH = ["the lowest widest", "naïve café 😀", "", "low"]


def model_tokenizer(backend, name="bytes-gpt2"):
    key = (backend, name, "model")
    if key not in _TRAINED:
        _TRAINED[key] = trained(backend, name, special_tokens=MODEL_SPECIALS)
    return _TRAINED[key]


def test_pad_bos_eos_ids(backend):
    tok = model_tokenizer(backend)
    assert (tok.pad_id, tok.bos_id, tok.eos_id) == tuple(tok.token_to_id[t] for t in MODEL_SPECIALS)
    plain = trained(backend, "chapter")
    assert (plain.pad_id, plain.bos_id, plain.eos_id) == (None, None, None)
    enc = pybpe.get_encoding("cl100k_base", backend=backend)
    assert (enc.pad_id, enc.bos_id, enc.eos_id) == (None, None, enc.eot_token)


@pytest.mark.parametrize("name", ["chapter", "bytes-gpt2"])
def test_plain_encode_batch_keeps_its_result(backend, name):
    tok = model_tokenizer(backend, name)
    assert tok.encode_batch(BATCH) == [tok.encode(t) for t in BATCH]
    enc = encoding(backend)
    assert enc.encode_batch(BATCH) == [enc.encode(t) for t in BATCH]


@pytest.mark.parametrize("name", ["chapter", "underscore", "bytes-gpt2"])
def test_padded_numpy_batches_round_trip(backend, name):
    tok = model_tokenizer(backend, name)
    for obj in (tok, pybpe.get_encoding("o200k_base", backend=backend)):
        out = obj.encode_batch(BATCH, padding=True, add_special_tokens=True, return_numpy=True)
        ids, mask = out["input_ids"], out["attention_mask"]
        rows = [obj.encode(t) for t in BATCH]
        specials = [i for i in (obj.bos_id, obj.eos_id) if i is not None]
        longest = max(map(len, rows)) + len(specials)
        assert isinstance(ids, np.ndarray) and ids.shape == (len(BATCH), longest) and ids.dtype == np.int64
        assert mask.shape == ids.shape and mask.dtype == np.int64
        assert mask.sum(axis=1).tolist() == [len(r) + len(specials) for r in rows]
        pad = obj.pad_id if obj.pad_id is not None else obj.eos_id
        for row, m, expected in zip(ids, mask, rows):
            body = row[m == 1].tolist()
            assert body == ([obj.bos_id] if obj.bos_id is not None else []) + expected + [obj.eos_id]
            assert (row[m == 0] == pad).all()
        assert obj.decode_batch(ids, skip_special_tokens=True) == [obj.decode(r) for r in rows]
        for row, text in zip(ids, BATCH):
            assert obj.decode(row, skip_special_tokens=True) == obj.decode(obj.encode(text))


def test_truncation_and_max_length(backend):
    tok = model_tokenizer(backend)
    rows = [tok.encode(t) for t in BATCH]
    out = tok.encode_batch(BATCH, truncation=True, max_length=4, add_special_tokens=True)
    assert out["input_ids"] == [[tok.bos_id] + r[:2] + [tok.eos_id] for r in rows]
    assert out["attention_mask"] == [[1] * len(r) for r in out["input_ids"]]
    out = tok.encode_batch(BATCH, padding="max_length", truncation=True, max_length=6)
    assert out["input_ids"] == [r[:6] + [tok.pad_id] * (6 - len(r[:6])) for r in rows]
    assert out["attention_mask"] == [[1] * len(r[:6]) + [0] * (6 - len(r[:6])) for r in rows]
    left = tok.encode_batch(BATCH, padding=True, padding_side="left", return_attention_mask=False)
    longest = max(map(len, rows))
    assert left == {"input_ids": [[tok.pad_id] * (longest - len(r)) + r for r in rows]}
    with pytest.raises(ValueError, match="truncation=True"):
        tok.encode_batch(BATCH, padding="max_length", max_length=2)
    with pytest.raises(ValueError, match="max_length"):
        tok.encode_batch(BATCH, truncation=True)
    with pytest.raises(ValueError, match="max_length"):
        tok.encode_batch(BATCH, max_length=3)
    with pytest.raises(ValueError, match="padding"):
        tok.encode_batch(BATCH, return_numpy=True)
    with pytest.raises(ValueError, match="padding"):
        tok.encode_batch(BATCH, padding="longer")
    with pytest.raises(pybpe.InvalidTokenError):
        tok.encode_batch(BATCH, padding=True, pad_id=10**6)
    with pytest.raises(TypeError, match="pad_id"):
        tok.encode_batch(BATCH, padding=True, pad_id=1.0)
    for obj in (tok, encoding(backend)):  # a NumPy integer is an ID here too
        pad = obj.pad_id if obj.pad_id is not None else obj.eos_id
        assert obj.encode_batch(BATCH, padding=True, pad_id=np.int64(pad)) == obj.encode_batch(BATCH, padding=True)


def test_padding_needs_a_pad_token_or_pad_id(backend):
    tok = trained(backend, "chapter")  # no <pad>, no <eos>
    with pytest.raises(ValueError, match="pad_id"):
        tok.encode_batch(BATCH, padding=True)
    with pytest.raises(ValueError, match="<bos>"):
        tok.encode_batch(BATCH, add_special_tokens=True)
    out = tok.encode_batch(BATCH, padding=True, pad_id=0)
    assert [len(r) for r in out["input_ids"]] == [max(len(tok.encode(t)) for t in BATCH)] * len(BATCH)


def test_skip_special_tokens(backend):
    for obj in (model_tokenizer(backend), model_tokenizer(backend, "chapter"), encoding(backend)):
        specials = [i for i in (obj.bos_id, obj.eos_id, obj.pad_id) if i is not None]
        ids = specials + obj.encode("low newest") + specials
        assert obj.decode(ids, skip_special_tokens=True) == obj.decode(obj.encode("low newest"))
        assert obj.decode(ids) != obj.decode(ids, skip_special_tokens=True)


def test_numpy_ids_are_accepted_everywhere(backend):
    for obj in (model_tokenizer(backend), model_tokenizer(backend, "chapter"), encoding(backend)):
        ids = obj.encode("the lowest naïve")
        for array in (np.array(ids, dtype=np.uint32), np.array(ids, dtype=np.int64), np.array(ids, dtype=np.uint16)):
            assert obj.decode(array) == obj.decode(ids)
            assert obj.decode([np.int64(i) for i in ids]) == obj.decode(ids)
            assert obj.decode_with_offsets(array) == obj.decode_with_offsets(ids)
            decoder = obj.stream_decoder()
            assert "".join(decoder.feed(i) for i in array) + decoder.finish() == obj.decode(ids)
        if isinstance(obj, pybpe.Encoding) or obj.flavour.byte_level:
            assert obj.decode_bytes(np.array(ids)) == obj.decode_bytes(ids)
        assert obj.decode_batch(np.array([ids, ids])) == [obj.decode(ids)] * 2


@pytest.mark.parametrize("name", sorted(FLAVOURS))
def test_decode_with_offsets_matches_encodings_meaning(backend, name):
    tok = trained_once(backend, name)
    text = "the lowest, naïve 😀 widest"
    ids = tok.encode(text)
    decoded, offsets = tok.decode_with_offsets(ids)
    assert decoded == tok.decode(ids) and len(offsets) == len(ids)
    assert offsets == sorted(offsets) and all(0 <= o <= len(decoded) for o in offsets)
    if tok.flavour.byte_level:
        # the same as Encoding's for the same token bytes
        enc = tok.to_encoding()
        assert (decoded, offsets) == enc.decode_with_offsets(ids)
    else:
        # each token's text (marker as space, whitespace squeezed) starts where the offset says
        for i, offset in zip(ids, offsets):
            piece = tok.decode([i])
            piece = piece.strip() if tok.flavour.end_of_word else piece  # the marker's space is squeezed
            if piece and piece != "<UNK>":
                assert decoded[offset:].startswith(piece), (tok.vocab[i], offset, decoded)


# -- rough edge: progress covers counting too -------------------------------------------------
@pytest.mark.parametrize("name", ["chapter", "bytes-gpt2", "leading-space"])
def test_progress_covers_counting_and_merging(backend, name, capsys):
    calls = []
    tok = pybpe.BPETokenizer(vocab_size=320, backend=backend, **FLAVOURS[name])
    tok.train(TRAINING, progress=lambda phase, done, total: calls.append((phase, done, total)))
    phases = [c[0] for c in calls]
    assert phases[0] == "count" and phases[-1] == "merge" and phases == sorted(phases)
    counted = [c for c in calls if c[0] == "count"]
    assert counted[-1][1] == sum(map(len, TRAINING)) and all(c[2] is None for c in counted)
    assert calls[-1][1] == len(tok.merges) <= calls[-1][2]  # (merges done, merges asked for)
    assert capsys.readouterr().err == ""  # a callable gets the reports instead of stderr
    tok.train(TRAINING, progress=True)   # stderr is not a terminal here: plain lines
    err = capsys.readouterr().err
    assert "counted %d characters" % sum(map(len, TRAINING)) in err and "merges %d/" % len(tok.merges) in err
    assert "\r" not in err and "\x1b" not in err and err.endswith("\n")


def test_to_encoding_keeps_the_roles_of_pad_bos_and_eos(backend):
    # tok.to_encoding() kept <pad> but not <bos> and <eos>, so its
    # add_special_tokens=True raised, advising to train with the tokens it
    # was trained with (found by a fuzzing helper).
    tok = trained(backend, "bytes-gpt2", special_tokens=["<pad>", "<bos>", "<eos>"])
    enc = tok.to_encoding()
    assert (enc.pad_id, enc.bos_id, enc.eos_id) == (tok.pad_id, tok.bos_id, tok.eos_id)
    assert None not in (enc.pad_id, enc.bos_id, enc.eos_id)
    texts = ["the lowest widest", "naïve"]
    for options in (dict(add_special_tokens=True), dict(add_special_tokens=True, padding=True),
                    dict(add_special_tokens=True, padding="max_length", truncation=True, max_length=5,
                         padding_side="left")):
        assert enc.encode_batch(texts, **options) == tok.encode_batch(texts, **options), options
    only_eos = trained(backend, "bytes-gpt2", special_tokens=["<eos>"]).to_encoding()
    assert only_eos.bos_id is None and only_eos.eos_id is not None
    assert only_eos.encode_batch(["low"], add_special_tokens=True)["input_ids"][0][-1] == only_eos.eos_id
    # tiktoken's own encodings: <|endoftext|> ends a sequence, nothing begins one
    gpt2 = encoding(backend)
    assert (gpt2.bos_id, gpt2.eos_id, gpt2.pad_id) == (None, 50256, None)


def _regular_tokens(tok):
    # every token of the vocabulary but the special ones, as str
    specials = set(tok.special_tokens)
    return [t.decode("latin-1") if isinstance(t, bytes) else t
            for i, t in enumerate(tok.vocab) if not (isinstance(t, str) and t in specials and tok.token_to_id[t] == i)]


@pytest.mark.parametrize("name", ["chapter", "symbol", "leading-space", "bytes", "bytes-gpt2"])
def test_special_tokens_are_never_trained_on_whatever_the_route(backend, name, tmp_path):
    # train_from_counts took a word holding a special token as any word, and
    # lowercase=True made "<S>" (no special token) into "<s>" (one) after
    # the specials were cut: either way the special token's text became a
    # regular token too, and the saved model failed to load (found by a
    # fuzzing helper).  SPEC: special tokens are never split, never merged.
    routes = {
        "counts": lambda tok: tok.train_from_counts({"<s>": 5, "a<s>b": 4, "low": 3, "x<s>": 2}),
        "lowercase": lambda tok: tok.train(["<S> low <S>", "LOW<S>er", "<s><S>"] * 4),
    }
    for route, train in routes.items():
        options = dict(FLAVOURS[name], special_tokens=["<s>", "<BOS>"])
        if route == "lowercase":
            options["lowercase"] = True
        tok = pybpe.BPETokenizer(vocab_size=400, backend=backend, **options)
        train(tok)
        assert not [t for t in _regular_tokens(tok) if "<s>" in t], (route, tok.vocab)
        path = tmp_path / ("%s-%s.json" % (name, route))
        tok.save(path)
        back = pybpe.load(path, backend=backend)
        assert back.vocab == tok.vocab and back.merges == tok.merges
        text = "low <s> lower <S>"
        assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    # counting words first is training on the text: the same merges
    text = ["a<s>b low<s>", "<s>", "lower <s>x"] * 3
    direct = pybpe.BPETokenizer(vocab_size=400, backend=backend, special_tokens=["<s>"], **FLAVOURS[name])
    direct.train(text)
    counted = pybpe.BPETokenizer(vocab_size=400, backend=backend, special_tokens=["<s>"], **FLAVOURS[name])
    counted.train_from_counts(direct.count_words(text))
    assert counted.merges == direct.merges
    # a special token with capitals is still cut before lowercasing
    upper = pybpe.BPETokenizer(vocab_size=400, backend=backend, lowercase=True, special_tokens=["<BOS>"],
                               **FLAVOURS[name])
    upper.train(["<BOS> hello <BOS>"] * 4)
    assert not [t for t in _regular_tokens(upper) if "bos" in t.lower()], upper.vocab


@pytest.mark.parametrize("options, special", [
    (dict(byte_level=True, pretokenizer="gpt2"), "_"),        # byte 0x5F's token
    (dict(byte_level=True, pretokenizer="gpt2"), "é"),        # byte 0xE9's, spelled in Latin-1
    (dict(end_of_word="symbol", marker="_"), "_"),            # the end-of-word symbol
    (dict(), "e"),
])
def test_a_special_token_spelled_like_a_regular_token_survives_every_format(backend, tmp_path, options, special):
    # A special token whose text is also a regular token's (a byte, the
    # marker) trained and saved, and then pybpe.load refused the file
    # ('special tokens also appear in "vocab"'): the model was lost.  The
    # GPT-2 and HF writers gave the special token's ID to the regular
    # token's entry, so byte 0x5F had no token in the file they wrote.
    # Found by a fuzzing helper.
    tok = pybpe.BPETokenizer(vocab_size=300, backend=backend, special_tokens=[special, "<x>"], **options)
    tok.train(["hello low_lower e_e é", "low lo_w"] * 5)
    texts = ["hello_ " + special, "a_b é" + special + "<x>", "", special, "_e_"]
    path = tmp_path / "tok.json"
    tok.save(path)
    loaded = pybpe.load(path, backend=backend)
    for text in texts:
        for allowed in ("all", set()):
            ids = tok.encode(text, allowed_special=allowed, disallowed_special=())
            assert loaded.encode(text, allowed_special=allowed, disallowed_special=()) == ids, text
            assert loaded.decode(ids) == tok.decode(ids), text
    assert loaded.vocab == tok.vocab and loaded.merges == tok.merges
    if options.get("byte_level"):
        enc = tok.to_encoding()
        for text in texts:
            assert enc.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
        from pybpe.formats import dump_gpt2_bpe, dump_hf_tokenizer
        for dump, args in [(dump_hf_tokenizer, ["t.json"]), (dump_gpt2_bpe, ["v.json", "m.txt"])]:
            try:
                dump(enc, *[tmp_path / a for a in args])
            except ValueError as exc:  # refused before writing, naming the token
                assert repr(special) in str(exc) and not any((tmp_path / a).exists() for a in args)
                continue
            again = pybpe.load(tmp_path / args[0], backend=backend)
            for text in texts:
                assert again.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all"), text


def test_without_a_pad_token_padding_takes_eos_in_both_classes(backend):
    # _batch's rule: pad_id defaults to the tokenizer's <pad>, else its
    # <eos>.  Encoding followed it; BPETokenizer raised "padding needs a pad
    # token", so a tokenizer and its own to_encoding() disagreed on every
    # padded batch (found by a fuzzing helper).
    tok = trained(backend, "bytes-gpt2", special_tokens=["<eos>"])
    enc = tok.to_encoding()
    texts = ["the lowest widest", "naïve", ""]
    for options in (dict(padding=True), dict(padding="max_length", max_length=9, truncation=True),
                    dict(padding=True, add_special_tokens=True, padding_side="left")):
        got = tok.encode_batch(texts, **options)
        assert got == enc.encode_batch(texts, **options), options
        assert got["input_ids"][1][-1 if options.get("padding_side") != "left" else 0] == tok.eos_id
    bare = trained(backend, "bytes-gpt2", special_tokens=["<bos>"])
    with pytest.raises(ValueError, match="padding needs a pad token"):
        bare.encode_batch(texts, padding=True)


@pytest.mark.parametrize("name", sorted(FLAVOURS))
def test_train_from_counts_lowercases_as_train_does(backend, name):
    # lowercase=True lowercased the text given to train but not the words
    # given to train_from_counts, so counts made elsewhere spent merges on
    # tokens with capitals that encode (which lowercases) never makes (found
    # by a fuzzing helper).  Words equal once lowercased add up.
    options = dict(FLAVOURS[name], lowercase=True, special_tokens=["<s>"])

    def trained(counts):
        tok = pybpe.BPETokenizer(vocab_size=300, backend=backend, **options)
        tok.train_from_counts(counts)
        return tok
    raw = trained({"AB": 2, "ab": 1, "Low": 3, "LOW<S>": 2, "lower": 1})
    lowered = trained({"ab": 3, "low": 5, "lower": 1})
    assert raw.merges == lowered.merges and raw.vocab == lowered.vocab
    assert all(bytes(a + b).lower() == bytes(a + b) if isinstance(a, bytes) else (a + b).lower() == a + b
               for a, b in raw.merges), raw.merges
    # counts made with the same options are training on the text
    texts = ["AB AB ab Low LOW<S>x", "<s>lower"] * 3
    direct = pybpe.BPETokenizer(vocab_size=300, backend=backend, **options)
    direct.train(texts)
    assert trained(pybpe.count_words(texts, **options)).merges == direct.merges
