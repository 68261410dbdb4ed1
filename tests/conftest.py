"""Shared test fixtures: where the big corpora live, skipping cleanly without them.

The project's shared data folder sits beside the checkout (../shared/data);
PYBPE_SHARED_DATA points elsewhere (CI uses it when it runs a copy of the
tests outside the source tree).
"""
import functools
import os

import pytest

# tiktoken's loader keeps a copy of every file it reads, local paths too,
# under the system's temporary folder (data-gym-cache, keyed by the path):
# each run of the suite from a new checkout left ~7 MB there for good.  An
# empty TIKTOKEN_CACHE_DIR is tiktoken's own switch for reading without a
# copy (tests/test_leaves_no_files.py checks that nothing is left behind).
os.environ["TIKTOKEN_CACHE_DIR"] = ""

SHARED_DATA = os.environ.get("PYBPE_SHARED_DATA") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")


def shared_path(name):
    """Path of a file in the shared data folder (it may not exist)."""
    return os.path.join(SHARED_DATA, name)


@functools.lru_cache(maxsize=None)
def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def shakespeare():
    """The 9.5 MB Shakespeare corpus as one str (read once); the calling
    test is skipped without it."""
    path = shared_path("shakespeare.txt")
    if not os.path.exists(path):
        pytest.skip("shared corpus %s is absent" % path)
    return _read(path)


@pytest.fixture(scope="session")
def shakespeare_text():
    """shakespeare() as a fixture."""
    return shakespeare()


_OFFLINE_TIKTOKEN = {}


def offline_tiktoken(name):
    """tiktoken's own Encoding for one of pybpe's built-in encoding names,
    built offline from the rank file shipped in pybpe with tiktoken's loader
    (its sha256 checked), with the same pattern, special tokens and n_vocab:
    the outside reference pybpe's IDs are compared with.  The calling test is
    skipped without tiktoken."""
    tiktoken = pytest.importorskip("tiktoken")
    import tiktoken.load

    from pybpe import registry

    if name not in _OFFLINE_TIKTOKEN:
        filename, pat, specials, n_vocab = registry._BUILTIN[name]
        path = os.path.join(os.path.dirname(registry.__file__), "data", filename)
        ranks = tiktoken.load.load_tiktoken_bpe(path, expected_hash=registry._FILES[filename])
        _OFFLINE_TIKTOKEN[name] = tiktoken.Encoding(name, pat_str=pat, mergeable_ranks=ranks,
                                                    special_tokens=specials, explicit_n_vocab=n_vocab)
    return _OFFLINE_TIKTOKEN[name]


def make_tokenizer(**options):
    """pybpe.BPETokenizer(**options), except that byte level with
    pretokenizer="whitespace" -- refused since it drops every space, but
    still loaded from model files saved before -- is built the way loading
    such a file builds it."""
    import pybpe

    if options.get("byte_level") and options.get("pretokenizer") == "whitespace":
        backend = options.pop("backend", None)
        return pybpe.BPETokenizer._from_config(options, backend)
    return pybpe.BPETokenizer(**options)


def naive_merge(piece, ranks):
    """tiktoken's rule spelled out: join the adjacent pair whose bytes have
    the lowest rank, leftmost on ties, until no joined pair is a token."""
    parts = [piece[i:i + 1] for i in range(len(piece))]
    while True:
        joined = [(ranks[a + b], i) for i, (a, b) in enumerate(zip(parts, parts[1:])) if a + b in ranks]
        if not joined:
            return parts
        i = min(joined)[1]
        parts[i:i + 2] = [parts[i] + parts[i + 1]]


def c_core():
    """The C backend's module; the calling test is skipped where it is not built."""
    from pybpe import core as backends
    if "c" not in backends.available():
        pytest.skip("the C backend is not built")
    return backends.get("c")


def c_scanners():
    """[(preset, the compiled pattern it must equal)] for the C scanners of
    gpt2, cl100k and o200k; skips the calling test where C is not built."""
    import regex
    from pybpe import patterns
    c = c_core()
    return [(c.PRESET_GPT2, regex.compile(patterns.GPT2)), (c.PRESET_CL100K, regex.compile(patterns.CL100K)),
            (c.PRESET_O200K, regex.compile(patterns.O200K))]


def naive_pair_count(ranks):
    """Entries of tiktoken's pair table: one per token of two bytes or more
    that merging its own bytes makes (csrc/ranks_build.c, REACHED PAIRS)."""
    return sum(1 for t in ranks if len(t) >= 2 and naive_merge(t, ranks) == [t])



def run_at_once(work, n):
    """[work(0), ..., work(n - 1)], each on a thread of its own, all let go
    at one barrier; an exception in any thread fails the test."""
    import threading
    got, errors, start = [None] * n, [], threading.Barrier(n)

    def run(i):
        try:
            start.wait()
            got[i] = work(i)
        except Exception as exc:  # reported below
            errors.append(exc)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    return got

def pytest_configure(config):
    # Registered here as well as in pyproject.toml: CI also runs a copy of the
    # tests outside the source tree, where pyproject.toml is not read.
    config.addinivalue_line("markers", "slow: long tests on the full corpus or timing growth")
