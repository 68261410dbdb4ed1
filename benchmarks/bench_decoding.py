"""decode throughput: pybpe C and Python, and the peers when installed, on
the same IDs; then the short decode of one streamed token.

The IDs are those of the first 0.5 MB of Shakespeare under each encoding
(pybpe's own, checked against every decoder's output before it is timed:
each must give back the text).  Decoding keeps no cache, so one list is
timed again and again.  Rows, each skipped when its package is absent:
pybpe's decode of a list and of a NumPy uint32 array, tiktoken's decode,
gigatoken's decode (list and array; it returns bytes) and fastokens'
decode; then decode_tokens_bytes, pybpe's and tiktoken's.  Run: pytest
benchmarks/bench_decoding.py --benchmark-only (or `make bench`).
"""
import os

import pytest

from pybpe import core as backends
from pybpe.registry import get_encoding
from conftest import fastokens_tokenizer, gigatoken_tokenizer, tiktoken_encoding

SHAKESPEARE = os.environ.get("PYBPE_SHAKESPEARE",
                             os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "shakespeare.txt"))
NAMES = ["gpt2", "cl100k_base", "o200k_base"]
TEXT_CHARS = 500_000


@pytest.fixture(scope="module")
def text():
    if not os.path.exists(SHAKESPEARE):
        pytest.skip("shakespeare.txt not found (set PYBPE_SHAKESPEARE)")
    with open(SHAKESPEARE, encoding="utf-8") as f:
        return f.read(TEXT_CHARS)


def _run(benchmark, decode, ids, expected, name, label):
    out = decode(ids)
    assert (out.decode("utf-8") if isinstance(out, bytes) else out) == expected, "%s decodes wrongly" % label
    benchmark.group = "decode " + name
    benchmark.extra_info["implementation"] = label
    benchmark.extra_info["ids"] = len(ids)
    benchmark.pedantic(decode, args=(ids,), rounds=15, iterations=1, warmup_rounds=1)
    benchmark.extra_info["ns_per_id"] = round(benchmark.stats.stats.min / max(1, len(ids)) * 1e9, 2)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("backend", backends.available())
def test_pybpe(benchmark, text, name, backend):
    enc = get_encoding(name, backend=backend)
    _run(benchmark, enc.decode, enc.encode_ordinary(text), text, name, "pybpe-" + backend)


@pytest.mark.parametrize("name", NAMES)
def test_pybpe_numpy_array(benchmark, text, name):
    numpy = pytest.importorskip("numpy")
    enc = get_encoding(name, backend=backends.available()[0])
    ids = numpy.array(enc.encode_ordinary(text), dtype=numpy.uint32)
    _run(benchmark, enc.decode, ids, text, name, "pybpe-%s NumPy array" % enc.backend)


@pytest.mark.parametrize("name", NAMES)
def test_pybpe_tokens_bytes(benchmark, text, name):
    """decode_tokens_bytes: a list of each token's bytes (checked joined)."""
    enc = get_encoding(name, backend=backends.available()[0])
    ids = enc.encode_ordinary(text)
    assert b"".join(enc.decode_tokens_bytes(ids)) == text.encode("utf-8")
    benchmark.group = "decode_tokens_bytes " + name
    benchmark.extra_info["implementation"] = "pybpe-" + enc.backend
    benchmark.pedantic(enc.decode_tokens_bytes, args=(ids,), rounds=15, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("name", NAMES)
def test_tiktoken_tokens_bytes(benchmark, text, name):
    tk = tiktoken_encoding(name)
    ids = get_encoding(name).encode_ordinary(text)
    assert b"".join(tk.decode_tokens_bytes(ids)) == text.encode("utf-8")
    benchmark.group = "decode_tokens_bytes " + name
    benchmark.extra_info["implementation"] = "tiktoken"
    benchmark.pedantic(tk.decode_tokens_bytes, args=(ids,), rounds=15, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("name", NAMES)
def test_tiktoken(benchmark, text, name):
    _run(benchmark, tiktoken_encoding(name).decode, get_encoding(name).encode_ordinary(text), text, name, "tiktoken")


@pytest.mark.parametrize("output", ["list", "numpy"])
@pytest.mark.parametrize("name", NAMES)
def test_gigatoken(benchmark, text, name, output):
    tok = gigatoken_tokenizer(name)
    enc = get_encoding(name)
    ids = enc.encode_ordinary(text)
    if output == "numpy":
        numpy = pytest.importorskip("numpy")
        ids = numpy.array(ids, dtype=numpy.uint32)
    _run(benchmark, tok.decode, ids, text, name, "gigatoken " + output)


@pytest.mark.parametrize("name", NAMES)
def test_fastokens(benchmark, text, name):
    tok = fastokens_tokenizer(name)
    enc = get_encoding(name)
    _run(benchmark, tok.decode, enc.encode_ordinary(text), text, name, "fastokens")


@pytest.mark.parametrize("backend", backends.available())
def test_pybpe_one_streamed_token(benchmark, backend):
    """decode([id]) 10,000 times: the call a chat loop makes per token."""
    enc = get_encoding("cl100k_base", backend=backend)
    ids = enc.encode("hello world")
    assert [enc.decode([i]) for i in ids] == ["hello", " world"]
    one = [ids[0]]
    benchmark.group = "decode one token, 10,000 calls"
    benchmark.extra_info["implementation"] = "pybpe-" + backend
    benchmark.pedantic(lambda: [enc.decode(one) for _ in range(10_000)], rounds=9, iterations=1, warmup_rounds=1)


def test_tiktoken_one_streamed_token(benchmark):
    tk = tiktoken_encoding("cl100k_base")
    one = [get_encoding("cl100k_base").encode("hello")[0]]
    assert tk.decode(one) == "hello"
    benchmark.group = "decode one token, 10,000 calls"
    benchmark.extra_info["implementation"] = "tiktoken"
    benchmark.pedantic(lambda: [tk.decode(one) for _ in range(10_000)], rounds=9, iterations=1, warmup_rounds=1)
