"""Every loader refuses every malformed file the same way (issue 11, "Errors of the
wrong kind"; issue 10, item 3).

Table-driven: for each loader -- pybpe.load, load_tiktoken_bpe, load_gpt2_bpe,
load_hf_tokenizer -- a valid file is written, then broken one way per row,
and loading it must raise pybpe.FormatError (a ValueError) whose message
names the file and the problem: never TypeError, RecursionError,
IsADirectoryError, regex.error or a ValueError without the file name, and
never a half-loaded object.  tokenizer.json features pybpe does not implement
are refused by name when they would change the IDs and accepted (same IDs)
when they cannot.  Last, pybpe.load recognises every format by its content.
"""
import json
import os
import re
import shutil
import threading

import pytest

import pybpe
from pybpe import core as backends, formats, registry

BACKENDS = backends.available()
DEEP = "[" * 100_000 + "]" * 100_000
BIG_INT = "9" * 5000


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def toy_encoding(backend="python"):
    """A small byte-level Encoding with a merge list and a special token."""
    tok = pybpe.BPETokenizer(vocab_size=300, byte_level=True, pretokenizer="gpt2",
                             special_tokens=["<|endoftext|>"], backend=backend)
    tok.train(["the quick brown fox jumps over the lazy dog, the end. " * 4])
    return tok.to_encoding("toy")


def assert_format_error(call, path, problem):
    """call() raises FormatError naming `path` and matching regex `problem`."""
    with pytest.raises(pybpe.FormatError) as info:
        call()
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert os.fspath(path) in message, message
    assert re.search(problem, message), message
    return message


# -- malformed bytes, whatever the loader ----------------------------------------------------

GARBAGE = [
    ("empty", b""),
    ("not utf-8", b"\xff\xfe{\x00"),
    ("truncated json", b'{"format": "pybpe.BPETokenizer", "vers'),
    ("deeply nested", DEEP.encode()),
    ("huge integer", ('{"a": %s}' % BIG_INT).encode()),
    ("nul bytes", b"\x00" * 64),
    ("json list", b"[1, 2, 3]"),
    ("binary", bytes(range(256)) * 4),
]


@pytest.mark.parametrize("name, data", GARBAGE, ids=[g[0] for g in GARBAGE])
@pytest.mark.parametrize("loader", ["load", "tiktoken", "gpt2_vocab", "gpt2_merges", "hf"])
def test_garbage_is_a_format_error_for_every_loader(tmp_path, name, data, loader):
    # The message is "<file>: <problem>"; the tables below check the problems.
    enc = toy_encoding()
    vocab, merges = tmp_path / "vocab.json", tmp_path / "merges.txt"
    pybpe.dump_gpt2_bpe(enc, str(vocab), str(merges))
    bad = tmp_path / "bad.file"
    bad.write_bytes(data)
    calls = {
        "load": lambda: pybpe.load(bad),
        "tiktoken": lambda: pybpe.load_tiktoken_bpe(bad),
        "gpt2_vocab": lambda: pybpe.load_gpt2_bpe(bad, merges),
        "gpt2_merges": lambda: pybpe.load_gpt2_bpe(vocab, bad),
        "hf": lambda: pybpe.load_hf_tokenizer(bad),
    }
    if loader == "gpt2_merges" and name == "empty":
        assert pybpe.load_gpt2_bpe(vocab, bad).merges == []  # a valid, merge-free model
        return
    assert_format_error(calls[loader], bad, re.escape(str(bad)) + "(:[0-9]+)?: [a-zA-Z'\"]")


@pytest.mark.parametrize("loader", ["load", "tiktoken", "gpt2", "hf"])
def test_a_directory_is_a_format_error(tmp_path, loader):
    folder = tmp_path / "a_folder.json"
    folder.mkdir()
    calls = {"load": pybpe.load, "tiktoken": pybpe.load_tiktoken_bpe,
             "gpt2": lambda p: pybpe.load_gpt2_bpe(p, p), "hf": pybpe.load_hf_tokenizer}
    assert_format_error(lambda: calls[loader](folder), folder, "directory")


@pytest.mark.parametrize("loader", ["load", "tiktoken", "gpt2", "hf"])
def test_a_device_is_a_format_error_not_an_endless_read(loader):
    # /dev/zero never ends: reading it whole would fill memory; refused at once.
    device = "/dev/zero"
    if not os.path.exists(device):
        pytest.skip("no /dev/zero on this system")
    calls = {"load": pybpe.load, "tiktoken": pybpe.load_tiktoken_bpe,
             "gpt2": lambda p: pybpe.load_gpt2_bpe(p, p), "hf": pybpe.load_hf_tokenizer}
    assert_format_error(lambda: calls[loader](device), device, "not a regular file")


def test_a_fifo_is_read_like_a_file(tmp_path):
    # Process substitution (pybpe.load(<(...))) hands over a pipe: that is read, not refused.
    enc = toy_encoding()
    ranks_file = tmp_path / "toy.tiktoken"
    pybpe.dump_tiktoken_bpe(enc.mergeable_ranks, str(ranks_file))
    fifo = tmp_path / "pipe.tiktoken"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(ranks_file.read_bytes()))
    writer.start()
    try:
        assert pybpe.load_tiktoken_bpe(fifo) == pybpe.load_tiktoken_bpe(ranks_file)
    finally:
        writer.join()


# -- pybpe.load: BPETokenizer.save files -------------------------------------------------------

def _model(tmp_path, backend, **options):
    tok = pybpe.BPETokenizer(vocab_size=40, backend=backend, **options)
    tok.train(["low lower newest widest", "low lowest"])
    path = tmp_path / "model.json"
    tok.save(path)
    return path, json.loads(path.read_text("utf-8"))


def _set(key, value):
    return lambda d: d.__setitem__(key, value)


def _config(key, value):
    return lambda d: d["config"].__setitem__(key, value)


PYBPE_CASES = [
    ("merges is an int", _set("merges", 5), "merges"),
    ("merges is null", _set("merges", None), "merges"),
    ("version 1.0", _set("version", 1.0), "version 1.0"),
    ("version true", _set("version", True), "version True"),
    ("version string", _set("version", "1"), "version '1'"),
    ("version 99", _set("version", 99), "version 99"),
    ("version missing", lambda d: d.pop("version"), "version None"),
    ("format other", _set("format", "other"), "not a pybpe tokenizer"),
    ("config a list", _set("config", []), "config"),
    ("config unknown key", _config("evil", 1), "unknown config"),
    ("config vocab_size str", _config("vocab_size", "40"), "bad config"),
    ("config byte_level str", _config("byte_level", "yes"), "bad config"),
    ("config special_tokens int", _config("special_tokens", 5), "bad config"),
    ("config special_tokens nested", _config("special_tokens", [[1]]), "bad config"),
    ("config invalid regex", _config("pretokenizer", "(ab"), "bad config"),
    ("config huge repeat", _config("pretokenizer", "a{99999999999}"), "pretokenizer pattern is refused"),
    ("vocab an int", _set("vocab", 5), "vocab"),
    ("vocab of ints", lambda d: d.__setitem__("vocab", [1, 2]), "vocab"),
    ("vocab without <UNK>", lambda d: d["vocab"].__setitem__(0, "zz"), "<UNK>"),
    ("vocab empty", lambda d: (d.__setitem__("vocab", []), d.__setitem__("merges", []),
                                d.__setitem__("merge_counts", [])), "<UNK>"),
    ("vocab duplicate", lambda d: d["vocab"].append(d["vocab"][3]), "duplicate"),
    ("merge not a pair", lambda d: d["merges"].__setitem__(0, [0]), r"merges\[0\]"),
    ("merge of strings", lambda d: d["merges"].__setitem__(0, ["l", "o"]), r"merges\[0\]"),
    ("merge of bools", lambda d: d["merges"].__setitem__(0, [True, 1]), r"merges\[0\]"),
    ("merge id too big", lambda d: d["merges"].__setitem__(0, [0, 10**9]), r"merges\[0\]"),
    ("merge id negative", lambda d: d["merges"].__setitem__(0, [-1, 2]), r"merges\[0\]"),
    ("merge makes no token", lambda d: d["merges"].__setitem__(0, [1, 1]), "not in the vocab"),
    ("counts shorter", lambda d: d["merge_counts"].pop(), "merge_counts"),
    ("counts an object", _set("merge_counts", {}), "merge_counts"),
    ("count negative", lambda d: d["merge_counts"].__setitem__(0, -1), r"merge_counts\[0\]"),
    ("count past 64 bits", lambda d: d["merge_counts"].__setitem__(0, 2**64), r"merge_counts\[0\]"),
    ("count a float", lambda d: d["merge_counts"].__setitem__(0, 1.5), r"merge_counts\[0\]"),
]


@pytest.mark.parametrize("name, mutate, problem", PYBPE_CASES, ids=[c[0] for c in PYBPE_CASES])
def test_pybpe_load_refuses(tmp_path, backend, name, mutate, problem):
    path, doc = _model(tmp_path, backend)
    mutate(doc)
    path.write_text(json.dumps(doc), "utf-8")
    assert_format_error(lambda: pybpe.load(path, backend=backend), path, problem)


def test_pybpe_load_refuses_byte_level_vocab_without_the_bytes(tmp_path, backend):
    path, doc = _model(tmp_path, backend, byte_level=True)
    doc["vocab"][5], doc["vocab"][6] = doc["vocab"][6], doc["vocab"][5]
    path.write_text(json.dumps(doc), "utf-8")
    assert_format_error(lambda: pybpe.load(path, backend=backend), path, "256 single bytes")
    doc["vocab"][5] = "\u0100"  # not a latin-1 byte
    path.write_text(json.dumps(doc), "utf-8")
    assert_format_error(lambda: pybpe.load(path, backend=backend), path, "latin-1")


# -- load_tiktoken_bpe -------------------------------------------------------------------------

TIKTOKEN_CASES = [
    ("three fields", b"YQ== 0 1\n", ":1: expected.*3 fields"),
    ("one field", b"YQ==\n", ":1: expected.*1 fields"),
    ("bad base64", b"Y!== 0\n", ":1: .*base64"),
    ("rank not a number", b"YQ== x\n", ":1: the rank"),
    ("rank negative", b"YQ== -1\n", ":1: the rank"),
    ("rank 5000 digits", b"YQ== " + BIG_INT.encode() + b"\n", ":1: the rank"),
    ("rank too large", b"YQ== 4294967295\n", ":1: rank .* too large"),
    ("token twice", b"YQ== 0\nYQ== 1\n", ":2: token .* twice"),
    ("rank twice", b"YQ== 0\nYg== 0\n", ":2: rank 0 appears twice"),
    ("empty token", b"= 0\n", ":1: "),
    ("bad line later", b"YQ== 0\nYg== 1\nnonsense\n", ":3: expected"),
    ("blank", b"\n\n\r\n", "no tokens"),
]


@pytest.mark.parametrize("name, data, problem", TIKTOKEN_CASES, ids=[c[0] for c in TIKTOKEN_CASES])
def test_load_tiktoken_bpe_refuses(tmp_path, name, data, problem):
    path = tmp_path / "ranks.tiktoken"
    path.write_bytes(data)
    assert_format_error(lambda: pybpe.load_tiktoken_bpe(path), path, problem)
    assert_format_error(lambda: pybpe.load(path), path, problem + "|recognise")


# -- load_gpt2_bpe -----------------------------------------------------------------------------

def _gpt2(tmp_path):
    enc = toy_encoding()
    vocab, merges = tmp_path / "vocab.json", tmp_path / "merges.txt"
    pybpe.dump_gpt2_bpe(enc, str(vocab), str(merges))
    return enc, vocab, merges, json.loads(vocab.read_text("utf-8")), merges.read_text("utf-8").split("\n")


def _first_merge(lines):
    return 1 if lines[0].startswith("#version") else 0


GPT2_VOCAB_CASES = [
    ("a list", lambda v: [], "JSON object"),
    ("id a string", lambda v: dict(v, a="97"), "'a' has ID '97'"),
    ("id a bool", lambda v: dict(v, a=True), "'a' has ID True"),
    ("id negative", lambda v: dict(v, a=-1), "'a' has ID -1"),
    ("id too large", lambda v: dict(v, a=2**40), "'a' has ID"),
    ("id a float", lambda v: dict(v, a=97.0), "'a' has ID 97.0"),
    ("not the byte alphabet", lambda v: dict(v, **{"\u4e00": 999}), "byte alphabet"),
    ("two tokens one id", lambda v: dict(v, a=v["b"]), "two tokens|rank"),
    ("special on a token's id", lambda v: dict(v, **{"<|endoftext|>": v["a"]}), "special token.*also the ID"),
]


@pytest.mark.parametrize("name, mutate, problem", GPT2_VOCAB_CASES, ids=[c[0] for c in GPT2_VOCAB_CASES])
def test_load_gpt2_bpe_refuses_vocab(tmp_path, backend, name, mutate, problem):
    _, vocab, merges, doc, _ = _gpt2(tmp_path)
    vocab.write_text(json.dumps(mutate(doc)), "utf-8")
    assert_format_error(lambda: pybpe.load_gpt2_bpe(vocab, merges, backend=backend), vocab, problem)


GPT2_MERGES_CASES = [
    ("three tokens", lambda m, k: m.__setitem__(k, m[k] + " x"), "line %d.*two tokens"),
    ("one token", lambda m, k: m.__setitem__(k, m[k].split(" ")[0]), "line %d.*two tokens"),
    ("unknown left", lambda m, k: m.__setitem__(k, "\u0101\u0101\u0101 e"), "line %d.*not in the vocabulary"),
    ("no such result", lambda m, k: m.__setitem__(k, "Ġ Ġ"), "line %d.*not in the vocabulary"),
    ("a merge twice", lambda m, k: m.insert(k + 1, m[k]), "merges\\[%d\\].*twice"),
]


@pytest.mark.parametrize("name, mutate, problem", GPT2_MERGES_CASES, ids=[c[0] for c in GPT2_MERGES_CASES])
def test_load_gpt2_bpe_refuses_merges(tmp_path, backend, name, mutate, problem):
    _, vocab, merges, _, lines = _gpt2(tmp_path)
    k = _first_merge(lines)
    mutate(lines, k)
    merges.write_text("\n".join(lines), "utf-8")
    where = vocab if name == "a merge twice" else merges  # the Encoding's own check names the vocab
    number = k + 1 if name != "a merge twice" else k - _first_merge(lines) + 1
    assert_format_error(lambda: pybpe.load_gpt2_bpe(vocab, merges, backend=backend), where, problem % number)


def test_load_gpt2_bpe_refuses_merges_not_utf8(tmp_path):
    _, vocab, merges, _, _ = _gpt2(tmp_path)
    merges.write_bytes(b"#version: 0.2\n\xff \xfe\n")
    assert_format_error(lambda: pybpe.load_gpt2_bpe(vocab, merges), merges, "UTF-8")


# -- load_hf_tokenizer -------------------------------------------------------------------------

def _hf(tmp_path, backend="python"):
    enc = toy_encoding(backend)
    path = tmp_path / "tokenizer.json"
    pybpe.dump_hf_tokenizer(enc, str(path))
    return enc, path, json.loads(path.read_text("utf-8"))


def _model_set(key, value):
    return lambda d: d["model"].__setitem__(key, value)


def _added(**fields):
    return lambda d: d["added_tokens"][0].update(fields)


def _split(**fields):
    return lambda d: d["pre_tokenizer"]["pretokenizers"][0].update(fields)


HF_CASES = [
    ("not an object", lambda d: d.clear() or d.__setitem__("model", "BPE"), "no model"),
    ("model a list", lambda d: d.__setitem__("model", []), "no model"),
    ("model WordPiece", _model_set("type", "WordPiece"), "model type 'WordPiece'"),
    ("normalizer", lambda d: d.__setitem__("normalizer", {"type": "NFC"}), "normalizers"),
    ("truncation", lambda d: d.__setitem__("truncation", {"max_length": 8}), "truncation"),
    ("padding", lambda d: d.__setitem__("padding", {"length": 8}), "padding"),
    ("TemplateProcessing", lambda d: d.__setitem__("post_processor", {"type": "TemplateProcessing",
                                                                      "single": [], "pair": []}),
     "post_processor TemplateProcessing"),
    ("RobertaProcessing", lambda d: d.__setitem__("post_processor", {"type": "RobertaProcessing"}),
     "post_processor RobertaProcessing"),
    ("post_processor a list", lambda d: d.__setitem__("post_processor", []), "post_processor list"),
    ("decoder WordPiece", lambda d: d.__setitem__("decoder", {"type": "WordPiece"}), "decoder"),
    ("added lstrip", _added(lstrip=True), "lstrip"),
    ("added rstrip", _added(rstrip=True), "rstrip"),
    ("added single_word", _added(single_word=True), "single_word"),
    ("added flag not bool", _added(normalized="yes"), "normalized must be true or false"),
    ("added unknown field", _added(evil=1), "does not know.*evil"),
    ("added no id", lambda d: d["added_tokens"][0].pop("id"), r"added_tokens\[0\]"),
    ("added id a bool", _added(id=True), r"added_tokens\[0\]"),
    ("added id 5000 digits", _added(id=int(BIG_INT[:40])), r"added_tokens\[0\]"),
    ("added on a token's id", lambda d: (d["added_tokens"][0].update(id=5), d["model"]["vocab"].pop("<|endoftext|>")),
     "special token.*ID 5.*also the ID"),
    ("added id differs from vocab", lambda d: d["model"]["vocab"].__setitem__("<|endoftext|>", 7),
     "special token.*has ID.*vocabulary gives it 7"),
    ("added twice", lambda d: d["added_tokens"].append(dict(d["added_tokens"][0])), "added twice"),
    ("two added one id", lambda d: d["added_tokens"].append(dict(d["added_tokens"][0], content="<|x|>")),
     "ID .* is given to both"),
    ("added_tokens an object", lambda d: d.__setitem__("added_tokens", {"a": 1}), "must be a list"),
    ("invalid regex", _split(pattern={"Regex": r"(\p{L}+"}), "regular expression"),
    ("Split Removed", _split(behavior="Removed"), "Isolated"),
    ("Split String", _split(pattern={"String": " "}), "Regex pattern"),
    ("pre_tokenizer Whitespace", lambda d: d.__setitem__("pre_tokenizer", {"type": "Whitespace"}),
     "unsupported pre_tokenizer 'Whitespace'"),
    ("add_prefix_space", lambda d: d["pre_tokenizer"]["pretokenizers"][1].__setitem__("add_prefix_space", True),
     "add_prefix_space"),
    ("dropout", _model_set("dropout", 0.1), "dropout"),
    ("byte_fallback", _model_set("byte_fallback", True), "byte_fallback"),
    ("subword prefix", _model_set("continuing_subword_prefix", "##"), "continuing_subword_prefix"),
    ("end of word suffix", _model_set("end_of_word_suffix", "</w>"), "end_of_word_suffix"),
    ("merges an int", _model_set("merges", 5), "merges must be a list"),
    ("merge an int", lambda d: d["model"]["merges"].__setitem__(0, 5), r"merges\[0\]"),
    ("merge unknown token", lambda d: d["model"]["merges"].__setitem__(0, ["\u0101\u0101", "e"]),
     r"merges\[0\].*not in the vocabulary"),
    ("vocab a list", _model_set("vocab", []), "JSON object"),
    ("vocab id a string", lambda d: d["model"]["vocab"].__setitem__("a", "1"), "'a' has ID '1'"),
    ("ignore_merges not bool", _model_set("ignore_merges", "yes"), "ignore_merges"),
    ("unk_token with a byte missing", lambda d: (d["model"].__setitem__("unk_token", "<unk>"),
                                                  d["model"]["vocab"].pop("\u0100")), "unk_token"),
]


@pytest.mark.parametrize("name, mutate, problem", HF_CASES, ids=[c[0] for c in HF_CASES])
def test_load_hf_tokenizer_refuses(tmp_path, backend, name, mutate, problem):
    _, path, doc = _hf(tmp_path, backend)
    mutate(doc)
    path.write_text(json.dumps(doc), "utf-8")
    assert_format_error(lambda: pybpe.load_hf_tokenizer(path, backend=backend), path, problem)
    assert_format_error(lambda: pybpe.load(path, backend=backend), path, problem)


HF_ACCEPTED = [
    ("normalized added token", _added(normalized=True)),
    ("non-special added token", _added(special=False)),
    ("ByteLevel post_processor", lambda d: d.__setitem__("post_processor", {
        "type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False})),
    ("unk_token with every byte", _model_set("unk_token", "<|endoftext|>")),
    ("fuse_unk", _model_set("fuse_unk", True)),
]


@pytest.mark.parametrize("name, mutate", HF_ACCEPTED, ids=[c[0] for c in HF_ACCEPTED])
def test_load_hf_tokenizer_accepts_what_cannot_change_ids(tmp_path, backend, name, mutate):
    enc, path, doc = _hf(tmp_path, backend)
    mutate(doc)
    path.write_text(json.dumps(doc), "utf-8")
    loaded = pybpe.load_hf_tokenizer(path, backend=backend)
    text = "the lazy fox<|endoftext|> jumps, the end."
    assert loaded.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")


# -- pybpe.load recognises every format (issue 10, item 3) -----------------------------------

SAMPLE = "the quick brown fox, over the lazy dog<|endoftext|> and the end."


def same_ids(a, b):
    return a.encode(SAMPLE, allowed_special="all") == b.encode(SAMPLE, allowed_special="all")


def test_load_recognises_tokenizer_json(tmp_path, backend):
    enc, path, _ = _hf(tmp_path, backend)
    loaded = pybpe.load(path, backend=backend)
    assert isinstance(loaded, pybpe.Encoding) and loaded.backend == backend
    assert same_ids(loaded, enc) and same_ids(loaded, pybpe.load_hf_tokenizer(path, backend=backend))


@pytest.mark.parametrize("vocab_name, merges_name", [
    ("vocab.json", "merges.txt"), ("encoder.json", "vocab.bpe"), ("gpt2-vocab.json", "gpt2-merges.txt")])
def test_load_recognises_gpt2_pairs_from_either_file(tmp_path, backend, vocab_name, merges_name):
    enc = toy_encoding(backend)
    vocab, merges = tmp_path / vocab_name, tmp_path / merges_name
    pybpe.dump_gpt2_bpe(enc, str(vocab), str(merges))
    for path in (vocab, merges):
        loaded = pybpe.load(path, backend=backend)
        assert isinstance(loaded, pybpe.Encoding) and loaded.backend == backend
        assert same_ids(loaded, enc)


def test_load_says_which_loader_for_a_lone_gpt2_file(tmp_path):
    enc = toy_encoding()
    vocab, merges = tmp_path / "a" / "vocab.json", tmp_path / "b" / "merges.txt"
    vocab.parent.mkdir()
    merges.parent.mkdir()
    pybpe.dump_gpt2_bpe(enc, str(vocab), str(merges))
    assert_format_error(lambda: pybpe.load(vocab), vocab, r"no merges.txt.*load_gpt2_bpe\(vocab_path, merges_path\)")
    assert_format_error(lambda: pybpe.load(merges), merges, r"no vocab.json.*load_gpt2_bpe\(vocab_path, merges_path\)")


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_load_recognises_openais_rank_files(tmp_path, backend, name):
    shipped = os.path.join(registry._DATA, registry._BUILTIN[name][0])
    copy = tmp_path / "some name.tiktoken"
    shutil.copyfile(shipped, copy)
    loaded = pybpe.load(copy, backend=backend)
    expected = pybpe.get_encoding(name, backend=backend)
    assert isinstance(loaded, pybpe.Encoding) and loaded.name == expected.name
    assert loaded.encode(SAMPLE, allowed_special="all") == expected.encode(SAMPLE, allowed_special="all")


def test_load_says_which_loader_for_a_rank_file_of_ones_own(tmp_path):
    path = tmp_path / "mine.tiktoken"
    pybpe.dump_tiktoken_bpe(toy_encoding().mergeable_ranks, str(path))
    assert_format_error(lambda: pybpe.load(path), path,
                        r"no pattern.*pybpe\.Encoding\(.*mergeable_ranks=pybpe\.load_tiktoken_bpe\(path\)")


def test_load_still_loads_its_own_files(tmp_path, backend):
    path, _ = _model(tmp_path, backend)
    for loaded in (pybpe.load(path, backend=backend), pybpe.BPETokenizer.load(path, backend=backend)):
        assert isinstance(loaded, pybpe.BPETokenizer) and loaded.backend == backend
    _, hf_path, _ = _hf(tmp_path, backend)
    assert_format_error(lambda: pybpe.BPETokenizer.load(hf_path), hf_path, r"not a BPETokenizer.*pybpe\.load")


def test_load_names_what_it_looked_for(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("just some words\non lines\n", "utf-8")
    assert_format_error(lambda: pybpe.load(path), path, "tokenizer.json.*vocab.json.*tiktoken")
    path.write_text('{"a": "b"}', "utf-8")
    assert_format_error(lambda: pybpe.load(path), path, "does not recognise")


def test_sniff_kinds(tmp_path):
    enc = toy_encoding()
    pybpe.dump_gpt2_bpe(enc, str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"))
    pybpe.dump_hf_tokenizer(enc, str(tmp_path / "tokenizer.json"))
    pybpe.dump_tiktoken_bpe(enc.mergeable_ranks, str(tmp_path / "r.tiktoken"))
    kinds = {name: formats.sniff(str(tmp_path / name))[0]
             for name in ("vocab.json", "merges.txt", "tokenizer.json", "r.tiktoken")}
    assert kinds == {"vocab.json": "gpt2-vocab", "merges.txt": "gpt2-merges", "tokenizer.json": "hf",
                     "r.tiktoken": "tiktoken"}


def test_load_gpt2_bpe_checks_given_special_tokens_against_the_vocab(tmp_path):
    enc, vocab, merges, doc, _ = _gpt2(tmp_path)
    eot = doc["<|endoftext|>"]
    assert_format_error(lambda: pybpe.load_gpt2_bpe(vocab, merges, special_tokens={"<|endoftext|>": eot + 1}),
                        vocab, "special token '<\\|endoftext\\|>' has ID %d, but the vocabulary gives it %d"
                        % (eot + 1, eot))
    assert_format_error(lambda: pybpe.load_gpt2_bpe(vocab, merges, special_tokens={"<|x|>": doc["a"]}),
                        vocab, "special token '<\\|x\\|>' has ID %d, which is also the ID of token" % doc["a"])
    loaded = pybpe.load_gpt2_bpe(vocab, merges, special_tokens={"<|endoftext|>": eot})
    assert same_ids(loaded, enc)
