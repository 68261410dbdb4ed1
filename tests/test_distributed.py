"""pybpe.distributed on a real Dask LocalCluster (2 worker processes): the
merges of train_on_dask and the IDs of encode_to_shards equal one process
(train, Encoding.encode_file), on both backends, over several partitionings
of one corpus (one partition, many, uneven; plain, gzip and zstd files; bags);
a worker killed mid-shard and the job rerun gives the same shards, skipping
the finished ones.  The cut logic (where a partition may start) is also
checked in-process, without Dask, on tiny block sizes.

The corpus is pybpe's bundled Hamlet (pybpe/data/hamlet.txt, 174 KB), so
nothing here needs the shared data folder.  One cluster serves the module.
"""
import ast
import functools
import gzip
import io
import importlib.resources
import os
import re
import subprocess
import sys
import time
from array import array

import dask
import dask.bag as db
import pytest
import zstandard
from distributed import Client, KilledWorker, LocalCluster

import pybpe
from pybpe import core as backends
from pybpe import distributed as pd

BACKENDS = backends.available()
HAMLET = importlib.resources.files("pybpe").joinpath("data/hamlet.txt").read_text(encoding="utf-8")
FLAVOURS = {
    "chapter": dict(vocab_size=300),
    "bytes-gpt2": dict(vocab_size=256 + 200 + 1, pretokenizer="gpt2", byte_level=True,
                       special_tokens=["<|endoftext|>"]),
}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    # allowed-failures 0: a killed worker fails its task at once (the kill test
    # wants the job to fail, not dask to retry it); nothing else here kills one.
    # The workers' scratch space in a folder of the test's own (dask's default
    # is a dask-scratch-space folder left in the system's temporary folder).
    with dask.config.set({"distributed.scheduler.allowed-failures": 0,
                          "temporary-directory": str(tmp_path_factory.mktemp("dask"))}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as c:
        yield c


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


# -- corpora: the same text cut several ways -------------------------------------------

def _write(path, text, kind="plain"):
    data = text.encode("utf-8")
    if kind == "gzip":
        data = gzip.compress(data)
    elif kind == "zstd":
        data = zstandard.ZstdCompressor().compress(data)
    with open(path, "wb") as f:
        f.write(data)
    return str(path)


def files(tmp_path, partitioning):
    """(paths, blocksize) of a partitioning of HAMLET as files."""
    if partitioning == "one":
        return [_write(tmp_path / "hamlet.txt", HAMLET)], None
    if partitioning == "many":
        return [_write(tmp_path / "hamlet.txt", HAMLET)], 8192
    # uneven: a small file, gzip, a tiny one, an empty one, zstd, and a plain one in blocks
    # (cut at line ends, so that the corpus is Hamlet's lines whatever the cut)
    cuts = [0] + [HAMLET.index("\n", c) + 1 for c in (1000, 60_000, 60_100, 60_100, 120_000)] + [len(HAMLET)]
    kinds = ["plain", "gzip", "plain", "plain", "zstd", "plain"]
    paths = [_write(tmp_path / ("part%d.txt" % k), HAMLET[a:b], kind)
             for k, (a, b, kind) in enumerate(zip(cuts, cuts[1:], kinds))]
    return paths, 9999


def lines_of(paths):
    """The one-process corpus of files: their lines ("\n"-terminated), as
    train_on_dask reads them; compressed files decompressed."""
    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        elif data[:4] == b"\x28\xb5\x2f\xfd":
            data = zstandard.ZstdDecompressor().decompress(data)
        yield from io.StringIO(data.decode("utf-8"), newline="\n")


def bag(partitioning, items):
    if partitioning == "bag-one":
        return db.from_sequence(items, npartitions=1)
    cuts = bag_cuts(len(items))
    return db.from_delayed([dask.delayed(list)(items[a:b]) for a, b in zip(cuts, cuts[1:])])


def bag_cuts(n):
    """Uneven partitions of n items, one of them empty."""
    return [0, 3, n // 4, n // 4 + 1, n // 4 + 1, 3 * n // 4, n]


# -- training -------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def one_process(backend, flavour):
    """The tokenizer train() makes in this process on Hamlet's lines (every
    partitioning below has this same corpus)."""
    tok = pybpe.BPETokenizer(backend=backend, **FLAVOURS[flavour])
    tok.train(HAMLET.splitlines(keepends=True))
    return tok


@pytest.mark.parametrize("partitioning", ["one", "many", "uneven", "bag-one", "bag-uneven"])
@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
def test_train_equals_one_process(client, tmp_path, backend, flavour, partitioning):
    options = dict(FLAVOURS[flavour], backend=backend)
    if partitioning.startswith("bag"):
        corpus = HAMLET.splitlines(keepends=True)
        inputs = bag(partitioning, corpus)
    else:
        inputs, blocksize = files(tmp_path, partitioning)
        corpus = list(lines_of(inputs))
    assert corpus == HAMLET.splitlines(keepends=True)
    one = one_process(backend, flavour)
    tok = pybpe.BPETokenizer(**options)
    pybpe.distributed.train_on_dask(tok, inputs, client=client,
                                    **({} if partitioning.startswith("bag") else {"blocksize": blocksize}))
    assert len(tok.merges) == len(one.merges) > 100
    assert tok.merges == one.merges and tok.vocab == one.vocab and tok.merge_counts == one.merge_counts
    assert tok.encode(HAMLET[:2000]) == one.encode(HAMLET[:2000])


def test_partition_order_decides_ties(backend):
    # The equality above has teeth: the same counts merged in another order
    # (so other first appearances) give other merges through the tie-break.
    lines = HAMLET.splitlines(keepends=True)
    tok = pybpe.BPETokenizer(backend=backend, **FLAVOURS["chapter"])
    parts = [tok.count_words(lines[k:k + 400]) for k in range(0, len(lines), 400)]
    tok.train_from_counts(pybpe.merge_counts(*parts))
    shuffled = pybpe.BPETokenizer(backend=backend, **FLAVOURS["chapter"])
    shuffled.train_from_counts(pybpe.merge_counts(*parts[::-1]))
    assert shuffled.merges[:10] == tok.merges[:10]  # the clear winners agree...
    assert shuffled.merges != tok.merges            # ...ties are broken otherwise


def test_count_on_dask_equals_count_words(client, tmp_path):
    paths, blocksize = files(tmp_path, "uneven")
    counts = pd.count_on_dask(pybpe.BPETokenizer(), paths, client=client, blocksize=blocksize)
    expected = pybpe.count_words(lines_of(paths))
    assert list(counts.items()) == list(expected.items())


def test_count_on_dask_keeps_a_pattern_of_letters(client, tmp_path):
    # A custom pattern made of letters only ("on") is no pretokenizer name; it
    # must reach the workers as the pattern it is (config() keeps it under
    # "pretokenizer", which BPETokenizer(**config) would refuse as a name).
    paths, blocksize = files(tmp_path, "uneven")
    tok = pybpe.BPETokenizer(regex="on")
    counts = pd.count_on_dask(tok, paths, client=client, blocksize=blocksize)
    expected = tok.count_words(lines_of(paths))
    assert expected and list(counts.items()) == list(expected.items())


# -- encoding -------------------------------------------------------------------------

@pytest.fixture(scope="module", params=BACKENDS)
def trained(request):
    """A byte-level tokenizer trained on Hamlet (one process) and its Encoding."""
    tok = pybpe.BPETokenizer(backend=request.param, **FLAVOURS["bytes-gpt2"])
    tok.train(HAMLET.splitlines(keepends=True))
    return tok, tok.to_encoding()


def read_shards(out_dir, index, typecode="H"):
    ids = array(typecode)
    for shard in index["shards"]:
        with open(os.path.join(out_dir, shard["shard"]), "rb") as f:
            ids.frombytes(f.read())
    return ids


def encode_file_reference(enc, tmp_path, paths, sep, typecode="H"):
    """encode_file on each file (decompressed first), concatenated."""
    ids = array(typecode)
    for k, path in enumerate(paths):
        plain = _write(tmp_path / ("plain-%d.txt" % k), "".join(lines_of([path])))
        out = tmp_path / ("ref-%d.bin" % k)
        enc.encode_file(plain, out, document_separator=sep, dtype="uint16" if typecode == "H" else "uint32")
        ids.frombytes(out.read_bytes())
    return ids


@pytest.mark.parametrize("sep", [None, "\n\n"])
@pytest.mark.parametrize("partitioning", ["one", "many", "uneven"])
def test_encode_to_shards_equals_encode_file(client, tmp_path, trained, partitioning, sep):
    tok, enc = trained
    paths, blocksize = files(tmp_path, partitioning)
    out = tmp_path / "shards"
    index = pd.encode_to_shards(enc, paths, out, client=client, blocksize=blocksize, document_separator=sep,
                                chunk_size=5000)
    expected = encode_file_reference(enc, tmp_path, paths, sep)
    got = read_shards(out, index)
    assert got == expected
    assert index["complete"] and index["tokens"] == len(expected) == sum(s["tokens"] for s in index["shards"])
    assert index["documents"] == expected.count(enc.eot_token) == sum(s["documents"] for s in index["shards"])
    if partitioning == "many":
        assert len(index["shards"]) > 10
    # The index on disk is the one returned; each shard's size is its token count.
    import json
    assert json.loads((out / "index.json").read_text()) == index
    for shard in index["shards"]:
        assert os.path.getsize(out / shard["shard"]) == 2 * shard["tokens"]


def test_encode_to_shards_bag_uint32_and_tokenizer(client, tmp_path, trained):
    # A bag's items are documents; a BPETokenizer is encoded through to_encoding().
    tok, enc = trained
    documents = HAMLET.split("\n\n")
    index = pd.encode_to_shards(tok, bag("bag-uneven", documents), tmp_path, client=client, dtype="uint32")
    expected = array("I")
    for doc in documents:
        expected.extend(enc.encode_ordinary(doc) + [enc.eot_token])
    assert read_shards(tmp_path, index, "I") == expected
    cuts = bag_cuts(len(documents))
    assert [s["documents"] for s in index["shards"]] == [b - a for a, b in zip(cuts, cuts[1:])]


# -- restart after a killed worker ------------------------------------------------------

def _kill_once_mid_shard(marker, after):
    """Make this worker kill its own process once, in the middle of its
    shard number `after` (between two pieces), unless the other worker did
    already: the file `marker` says so."""
    import os
    import signal

    from pybpe import _encode_file

    original = _encode_file._parts
    calls = []

    def parts(*args, **kwargs):
        calls.append(1)
        for k, piece in enumerate(original(*args, **kwargs)):
            if k == 1 and len(calls) >= after:
                try:
                    os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                except FileExistsError:
                    pass
                else:
                    os.kill(os.getpid(), signal.SIGKILL)
            yield piece
    parts.original = original
    _encode_file._parts = parts


def _unpatch():
    from pybpe import _encode_file

    _encode_file._parts = getattr(_encode_file._parts, "original", _encode_file._parts)


def test_killed_worker_then_rerun_gives_the_same_shards(client, tmp_path, trained):
    tok, enc = trained
    paths, _ = files(tmp_path, "one")
    options = dict(client=client, blocksize=6000, chunk_size=1000)
    whole = pd.encode_to_shards(enc, paths, tmp_path / "whole", **options)
    out = tmp_path / "killed"
    marker = tmp_path / "killed-once"
    client.run(_kill_once_mid_shard, str(marker), 5)
    try:
        with pytest.raises(KilledWorker):
            pd.encode_to_shards(enc, paths, out, **options)
        assert marker.exists()
        _settle(client)
        # Whatever is on disk is whole: the shards present are byte-equal to the uninterrupted run's.
        present = sorted(p.name for p in out.glob("shard-*.bin"))
        assert len(present) < len(whole["shards"])
        for name in present:
            assert (out / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
        done = sorted(p.name[:-len(".json")] for p in (out / ".done").iterdir())
        stamps = {name: _stamp(out / name) for name in done}
        again = pd.encode_to_shards(enc, paths, out, **options)
    finally:
        client.run(_unpatch)
    assert again["shards"] == whole["shards"] and again["tokens"] == whole["tokens"]
    for shard in whole["shards"]:
        assert (out / shard["shard"]).read_bytes() == (tmp_path / "whole" / shard["shard"]).read_bytes()
    # The shards finished before the kill were skipped (same inode and mtime), the rest written now.
    assert len(done) >= 4 and {name: _stamp(out / name) for name in stamps} == stamps
    # A third run finds everything done and writes nothing.
    stamps = {s["shard"]: _stamp(out / s["shard"]) for s in whole["shards"]}
    assert pd.encode_to_shards(enc, paths, out, **options) == again
    assert {s["shard"]: _stamp(out / s["shard"]) for s in whole["shards"]} == stamps


def _stamp(path):
    st = os.stat(path)
    return st.st_ino, st.st_mtime_ns


def _settle(client):
    """Wait until no task of the failed job is still running on a worker:
    cancelling a future does not stop a task that is running, and the
    scheduler may rerun a task whose result died with the killed worker."""
    deadline, quiet = time.monotonic() + 60, 0
    while quiet < 3 and time.monotonic() < deadline:
        busy = any(client.processing().values()) or any(
            client.run(lambda dask_worker: dask_worker.state.executing_count).values())
        quiet = 0 if busy else quiet + 1
        time.sleep(0.1)


def test_another_jobs_out_dir_is_refused(client, tmp_path, trained):
    tok, enc = trained
    paths, _ = files(tmp_path, "one")
    pd.encode_to_shards(enc, paths, tmp_path / "out", client=client)
    with pytest.raises(ValueError, match="another job.*document_separator"):
        pd.encode_to_shards(enc, paths, tmp_path / "out", client=client, document_separator="\n\n")
    (tmp_path / "strays").mkdir()
    (tmp_path / "strays" / "shard-00000.bin").write_bytes(b"")
    with pytest.raises(ValueError, match="shard files.*no index.json"):
        pd.encode_to_shards(enc, paths, tmp_path / "strays", client=client)


# -- the cut logic, in this process (no Dask): tiny blocks, every boundary case -----------

TRICKY = ("HAMLET.\n\n\n\n\nTo be, or not to be: that is the question.\r\n\n\n"
          "  Whether 'tis nobler\u00a0in the mind\u3000to suffer\n\n\n"
          "The slings and arrows of outrageous fortune,\n\u00e9t\u00e9 \u4e2d\u6587 caf\u00e9 naïve\n\n"
          "Or to take arms against a sea of troubles\n\n\n\n")


@pytest.mark.parametrize("sep", [None, "\n\n", "\n\n\n", "ab"])
@pytest.mark.parametrize("text", [TRICKY, HAMLET[:3000], "", "\n\n\n", "x"], ids=["tricky", "hamlet", "empty", "nl", "x"])
def test_partitions_encode_as_the_whole_file(tmp_path, monkeypatch, trained, text, sep):
    tok, enc = trained
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # hundreds of tiny shards: durability is not tested here
    path = _write(tmp_path / "t.txt", text)
    whole = tmp_path / "whole.bin"
    enc.encode_file(path, whole, document_separator=sep, chunk_size=7)
    options = {"dtype": "uint16", "document_separator": sep, "append_eot": True, "chunk_size": 7}
    for blocksize in (1, 2, 3, 17, 256) if len(text) < 500 else (97, 256, 1000):
        ids, records = array("H"), []
        for k, part in enumerate(pd._plan([path], blocksize)["parts"]):
            records.append(pd._encode_part(enc, part, str(tmp_path), "s%d.bin" % k, "digest", options))
            ids.frombytes((tmp_path / ("s%d.bin" % k)).read_bytes())
        assert ids.tobytes() == whole.read_bytes(), blocksize
        # The real ranges tile the file, and documents add up.  (A partition
        # with no place to start in its range is empty and records no range:
        # the index gives it the end of the one before, as _close_job does.)
        records = pd._ranges_filled(records)
        assert [r["start"] for r in records[1:]] == [r["end"] for r in records[:-1]]
        assert records[0]["start"] == 0 and records[-1]["end"] == len(text.encode())
        assert sum(r["documents"] for r in records) == ids.count(enc.eot_token)


@pytest.mark.parametrize("text", [TRICKY, HAMLET[:3000], "", "no newline at all", "\n"])
def test_partitions_count_as_the_whole_file(tmp_path, text):
    path = _write(tmp_path / "t.txt", text)
    for options in FLAVOURS.values():
        tok = pybpe.BPETokenizer(**options)
        with open(path, encoding="utf-8", newline="\n") as f:
            expected = tok.count_words(f)
        spec = (tok.config(), tok.backend)
        for blocksize in (1, 2, 3, 17, 256) if len(text) < 500 else (1, 97, 1000):
            parts = [pd._count_part(spec, part).words for part in pd._plan([path], blocksize)["parts"]]
            assert list(pybpe.merge_counts(*parts).items()) == list(expected.items()), blocksize


def test_separator_cut_never_splits_an_overlapping_run(tmp_path):
    # "\n\n\n" and five newlines: encode_file's search takes the first three;
    # a cut must land after those, never after newlines 2-4 or 3-5.
    path = _write(tmp_path / "t.txt", "a\n\n\n\n\nb\n\n\nc")  # separators found at 1-4 and 7-10
    cut = pd._separator_cut("\n\n\n")
    with open(path, "rb") as f:
        assert [cut(f, k, 11) for k in range(12)] == [0, 4] + [10] * 6 + [11] * 4


def test_not_utf8_names_the_file(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("caf\u00e9\n".encode("latin-1"))
    tok = pybpe.BPETokenizer()
    with pytest.raises(ValueError, match=r"latin1\.txt \(bytes 0 to 5\): not UTF-8"):
        pd._count_part((tok.config(), tok.backend), pd._plan([str(path)], None)["parts"][0])


def test_argument_errors(tmp_path, trained):
    tok, enc = trained
    with pytest.raises(TypeError, match="BPETokenizer"):
        pd.train_on_dask(enc, ["x"])
    with pytest.raises(TypeError, match=r"inputs\[1\] must be a path"):
        pd._paths(["a", 3])
    with pytest.raises(ValueError, match="empty"):
        pd._paths([])
    with pytest.raises(ValueError, match="blocksize"):
        pd.count_on_dask(tok, ["x"], blocksize=0)
    no_eot = pybpe.BPETokenizer(vocab_size=300, pretokenizer="gpt2", byte_level=True)
    no_eot.train(["hello world"])
    with pytest.raises(ValueError, match="append_eot=False"):
        pd.encode_to_shards(no_eot, ["x"], tmp_path)
    with pytest.raises(ValueError, match="uint16 or uint32"):
        pd.encode_to_shards(enc, ["x"], tmp_path, dtype="int8")


def test_importing_pybpe_distributed_imports_no_dask():
    code = ("import sys, pybpe.distributed; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed', 'zstandard')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_readme_example_runs(tmp_path):
    # The README's LocalCluster example is a script (worker processes import
    # it again), so it runs here as one, in a folder of its own.
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")
    if not os.path.exists(readme):
        pytest.skip("README.md is not beside this copy of the tests")
    with open(readme, encoding="utf-8") as f:
        blocks = [b for b in re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)
                  if "from pybpe.distributed import" in b]
    assert len(blocks) == 1
    (tmp_path / "example.py").write_text(blocks[0], encoding="utf-8")
    run = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, DASK_TEMPORARY_DIRECTORY=str(tmp_path)))
    assert run.returncode == 0, run.stderr[-3000:]
    merges, tokens, documents, shards = map(int, re.match(
        r"(\d+) merges; (\d+) tokens, (\d+) documents in (\d+) shards\n", run.stdout).groups())
    hamlet_documents = len(HAMLET.split("\n\n")) - HAMLET.endswith("\n\n")  # a last empty one is dropped
    assert (merges, documents, shards) == (1000 - 256 - 1, 4 * hamlet_documents, 4)
    opening = ast.literal_eval(run.stdout.splitlines()[1])  # the first shard's first 8 tokens, decoded
    assert len(opening) > 8 and HAMLET.startswith(opening)
    assert "encode_to_shards" in run.stderr  # the progress lines


CJK_LINES = "".join("%s。今日も良い天気です。\nСъешь же ещё этих мягких булок\n\u3000全角の空白\n/路径\n" % ("本日は晴天なり" * (k % 3 + 1))
                    for k in range(20))


def test_partitions_of_text_in_any_script_are_cut_near_their_offsets(tmp_path, monkeypatch, trained):
    # Partitions were cut only next to ASCII letters, so a CJK file went to
    # one worker whole and every other shard was empty (a fuzzing helper:
    # [196344056, 0, ..., 0, 1] for 16 shards, 5x slower than serial).
    tok, enc = trained
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    path = _write(tmp_path / "t.txt", CJK_LINES)
    whole = tmp_path / "whole.bin"
    enc.encode_file(path, whole, chunk_size=7)
    size = len(CJK_LINES.encode())
    for blocksize in (7, 64, 500):
        ids, records = array("H"), []
        for k, part in enumerate(pd._plan([path], blocksize)["parts"]):
            records.append(pd._encode_part(enc, part, str(tmp_path), "s%d.bin" % k, "digest",
                                           {"dtype": "uint16", "document_separator": None, "append_eot": True,
                                            "chunk_size": 7}))
            ids.frombytes((tmp_path / ("s%d.bin" % k)).read_bytes())
        assert ids.tobytes() == whole.read_bytes(), blocksize
        ranges = [r["end"] - r["start"] for r in pd._ranges_filled(records)]
        assert max(ranges) < max(blocksize, 1) + 200, (blocksize, max(ranges))  # a line or so past the offset
        assert sum(ranges) == size


# -- files without a place to cut ------------------------------------------------------------
# One long line without spaces (minified JSON), or CJK without punctuation
# or newlines, has no safe cut: every partition's search for its start ran
# on to the end of the file, partitions x file size in all.  A partition
# that finds no cut in its own range is empty (the one before it reads the
# range), so each byte is searched a bounded number of times.

NO_CUT = {"json": '{"key":123,"val":["abc","de"]},', "cjk": "本日は晴天なり今日も良い天気です", "letters": "abcdefgh"}


class CountingReads:
    """A binary file whose reads add their length to `total[0]`."""

    def __init__(self, f, total):
        self.f, self.total = f, total

    def seek(self, *args):
        return self.f.seek(*args)

    def read(self, n=-1):
        data = self.f.read(n)
        self.total[0] += len(data)
        return data


def counting_cuts(monkeypatch):
    """Make the cut searches count the bytes they read; the total (a list of one)."""
    total = [0]

    def counted(cut):
        return lambda f, *args: cut(CountingReads(f, total), *args)
    monkeypatch.setattr(pd, "_safe_cut", counted(pd._safe_cut))
    monkeypatch.setattr(pd, "_line_cut", counted(pd._line_cut))
    real_separator_cut = pd._separator_cut
    monkeypatch.setattr(pd, "_separator_cut", lambda sep: counted(real_separator_cut(sep)))
    return total


@pytest.mark.parametrize("sep", [None, "\n\n"])
@pytest.mark.parametrize("body", sorted(NO_CUT))
def test_cut_search_in_a_file_without_cuts_reads_each_byte_a_few_times(tmp_path, monkeypatch, trained, body,
                                                                       sep):
    tok, enc = trained
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    text = NO_CUT[body] * (150_000 // len(NO_CUT[body].encode()))
    size = len(text.encode())
    path = _write(tmp_path / "t.txt", text)
    whole = tmp_path / "whole.bin"
    enc.encode_file(path, whole, document_separator=sep, chunk_size=4096)
    total = counting_cuts(monkeypatch)
    options = {"dtype": "uint16", "document_separator": sep, "append_eot": True, "chunk_size": 4096}
    parts = pd._plan([path], 1000)["parts"]
    assert len(parts) > 100
    ids, records = array("H"), []
    for k, part in enumerate(parts):
        records.append(pd._encode_part(enc, part, str(tmp_path), "s%d.bin" % k, "digest", options))
        ids.frombytes((tmp_path / ("s%d.bin" % k)).read_bytes())
    assert ids.tobytes() == whole.read_bytes()
    assert total[0] <= 4 * size, (total[0], size)
    # The index's ranges still tile the file (the empty partitions' at the
    # end of the one before).
    records = pd._ranges_filled(records)
    assert [r["start"] for r in records[1:]] == [r["end"] for r in records[:-1]]
    assert records[0]["start"] == 0 and records[-1]["end"] == size


@pytest.mark.parametrize("body", sorted(NO_CUT))
def test_line_cut_in_a_file_without_newlines_reads_each_byte_a_few_times(tmp_path, monkeypatch, body):
    text = NO_CUT[body] * (150_000 // len(NO_CUT[body].encode()))
    path = _write(tmp_path / "t.txt", text)
    tok = pybpe.BPETokenizer(**FLAVOURS["bytes-gpt2"])
    with open(path, encoding="utf-8", newline="\n") as f:
        expected = tok.count_words(f)
    total = counting_cuts(monkeypatch)
    spec = (tok.config(), tok.backend)
    parts = [pd._count_part(spec, part).words for part in pd._plan([path], 1000)["parts"]]
    assert list(pybpe.merge_counts(*parts).items()) == list(expected.items())
    assert total[0] <= 4 * len(text.encode()), (total[0], len(text.encode()))


def test_encode_to_shards_of_a_file_without_cuts(client, tmp_path, trained):
    # On the cluster: the same IDs as encode_file, and the index's ranges
    # tile the file although most partitions found no place to start.
    tok, enc = trained
    text = NO_CUT["json"] * 1000
    path = _write(tmp_path / "t.txt", text)
    index = pd.encode_to_shards(enc, [path], tmp_path / "shards", client=client, blocksize=4096)
    assert read_shards(tmp_path / "shards", index) == encode_file_reference(enc, tmp_path, [path], None)
    shards = index["shards"]
    # All in the first shard; the last ends the file's one document (its eot).
    assert len(shards) > 5 and all(s["tokens"] == 0 for s in shards[1:-1])
    assert [s["start"] for s in shards[1:]] == [s["end"] for s in shards[:-1]]
    assert shards[0]["start"] == 0 and shards[-1]["end"] == len(text.encode())


@pytest.mark.parametrize("task", ["count", "encode"])
def test_not_utf8_names_the_byte_in_the_file(tmp_path, monkeypatch, trained, task):
    # A bad byte far into a later partition: its offset was reported from
    # the partition's start (encode: "at byte 9000 of the file" for byte
    # 39000), or from the last 8 KB block decoded (count).
    tok, enc = trained
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    good = "to be or not to be\n" * 3000
    data = good.encode() + b"caf\xe9 au lait\n" + good.encode()
    bad = data.index(b"\xe9")
    path = tmp_path / "t.txt"
    path.write_bytes(data)
    parts = pd._plan([str(path)], 30_000)["parts"]
    assert any(p[2] + 9000 < bad < p[3] for p in parts)  # well inside a partition, past its first 8 KB
    with pytest.raises(ValueError, match=r"t\.txt \(bytes \d+ to \d+\): not UTF-8 text at byte %d of the file"
                       % bad):
        for k, part in enumerate(parts):
            if task == "count":
                pd._count_part((tok.config(), tok.backend), part)
            else:
                pd._encode_part(enc, part, str(tmp_path), "s%d.bin" % k, "digest",
                                {"dtype": "uint16", "document_separator": None, "append_eot": True,
                                 "chunk_size": 4096})


@pytest.mark.parametrize("sep", [None, "\n\n", "ab"])
def test_a_boundary_is_the_same_whatever_the_limit_of_its_search(tmp_path, sep):
    # A partition's start (searched up to the next offset) and the previous
    # partition's end (searched to the end of the file) are one boundary:
    # both searches must find the same place, or none before the limit when
    # the place lies past it.  The windows end at every place here, with
    # four-byte letters after a cut (a window ending there defers the cut).
    wide = "\U00020000"  # a letter of four bytes (CJK extension B)
    run = "-" * 40  # no place to cut in it: the search window runs on to what follows
    text = (run + "a " + wide * 4 + run + "x\n" + wide * 4 + run + "本日 x\u00e9 ab\n\ny\n" + run + "\n\n\n") * 4
    path = _write(tmp_path / "t.txt", text)
    size = len(text.encode())
    cut = pd._safe_cut if sep is None else pd._separator_cut(sep)
    with open(path, "rb") as f:
        for offset in range(size + 1):
            whole = cut(f, offset, size)
            for limit in range(offset + 1, min(offset + 60, size)):
                found = cut(f, offset, size, limit)
                assert found == whole if found is not None else whole >= limit, (offset, limit, found, whole)
