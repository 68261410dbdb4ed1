"""pybpe.distributed: train and encode on a Dask cluster, with the answers of one process.

Two entry points, each on the `dask.distributed.Client` the caller passes
(or the current default client, or else a LocalCluster started for the call):

- `train_on_dask(tokenizer, inputs)`: every partition's words are counted on
  a worker (BPETokenizer.count_words: the core's counter, in C when built);
  the counts are merged in partition order, on the workers, in a tree; the
  client learns the merges (train_from_counts).  Merging in partition order
  keeps both the totals and the order of first appearance of the whole
  corpus, which is what the trainer's tie-break reads, so the merges equal
  `tokenizer.train(corpus)` in one process.  (The merge is associative:
  merge(merge(a, b), c) == merge(a, merge(b, c)), order included, so any
  tree over consecutive partitions gives the same dict.)
- `encode_to_shards(encoding, inputs, out_dir)`: every partition encoded on a
  worker into its own shard (Encoding.encode_file's format: IDs end to end,
  uint16 or uint32), then an index.  Restartable: a shard is written
  atomically (pybpe/_atomic.py) and then recorded as done, so a rerun of the
  same job skips every recorded shard and redoes the rest.

Inputs are paths of UTF-8 text files (plain, gzip or zstd, told by their
first bytes) or a dask.bag.Bag of str.  A plain file is cut into partitions
of about `blocksize` bytes, each read as a stream by its worker (no process
ever holds the corpus, nor even a whole file); a compressed file is one
partition.  Where a partition starts and ends is decided on the workers by
reading near the nominal offsets, so that the cut cannot change the answer:

- for counting, at line starts (a text is a line, "\\n"-terminated, as
  `open(path, encoding="utf-8", newline="\\n")` gives them);
- for encoding, right after a document separator, or without one at a
  place where encode_file itself may cut a document (an ASCII subset of
  _encode_file.SAFE_CUT).

A partition starts at the first such place at or after its nominal offset.
Its worker looks for that place only up to the next partition's offset: if
there is none, the partition is empty (its bytes are read by the partition
before, which looks past its own end for as long as it takes), so a file
without a place to cut -- one long line of minified JSON, CJK without
punctuation -- is searched about twice, not once per partition.

The client needs no access to the files: listing, cutting, writing shards and
the index all happen on workers (paths must mean the same file on every
worker: a shared file system).  Nothing of Dask is imported until one of the
functions is called; Dask is the optional extra `pip install pybpe[dask]`.
"""
import codecs
import contextlib
import gzip
import hashlib
import io
import json
import os
import pickle
import sys
import time

import regex

from . import _encode_file
from ._atomic import atomic_write
from .tokenizer import BPETokenizer

__all__ = ["train_on_dask", "encode_to_shards", "count_on_dask", "DEFAULT_BLOCKSIZE"]

# Nominal partition size of a plain file, in bytes: big enough that a task's
# overhead (milliseconds) is noise, small enough for many tasks per worker.
DEFAULT_BLOCKSIZE = 64 << 20
# Counts are merged in groups of this many consecutive partitions per task.
_SPLIT_EVERY = 8
# Bytes read at a time while looking for a cut near an offset.
_SCAN = 1 << 16
_GZIP_MAGIC, _ZSTD_MAGIC = b"\x1f\x8b", b"\x28\xb5\x2f\xfd"
# A UTF-8 text file cannot start with either magic (0x8b and 0xb5 are
# continuation bytes), so the first bytes tell a compressed file for sure.

# encode_file's safe cuts (_encode_file.SAFE_CUT), searched forwards: a
# partition starts at the first one at or after its offset (_safe_cut).
_SAFE_CUT_FORWARD = regex.compile(_encode_file.SAFE_CUT.pattern.replace("(?r)", "", 1))
# Bytes read before an offset: the cut's lookbehind looks two characters
# back (up to 8 bytes), after up to 3 continuation bytes are skipped to
# start at a character.
_BEHIND = 12

_INDEX, _DONE = "index.json", ".done"
_FORMAT = "pybpe-shards"


# -- the client side ------------------------------------------------------------------

def train_on_dask(tokenizer, inputs, *, client=None, blocksize=DEFAULT_BLOCKSIZE, progress=False):
    """Train `tokenizer` (a BPETokenizer) on `inputs` with Dask; the same merges
    as `tokenizer.train(corpus)` in one process.

    inputs: a path or a list of paths of UTF-8 text files (gzip and zstd
        files too), whose texts are their lines in order -- the corpus
        `itertools.chain(*(open(p, encoding="utf-8", newline="\\n") for p in paths))`;
        or a dask.bag.Bag of str, whose corpus is its items in partition order.
    client: a dask.distributed.Client (default: the current client, or a
        LocalCluster made for this call).
    blocksize: nominal bytes per partition of a plain file (None: one
        partition per file).
    progress: True for progress lines on stderr (partitions counted, then
        the merges).

    Like train, it replaces the tokenizer's state only once everything
    succeeded.  Returns None.
    """
    if not isinstance(tokenizer, BPETokenizer):
        raise TypeError("train_on_dask needs a BPETokenizer, not %s" % type(tokenizer).__name__)
    counts = count_on_dask(tokenizer, inputs, client=client, blocksize=blocksize, progress=progress)
    tokenizer.train_from_counts(counts, progress=progress)


def count_on_dask(tokenizer, inputs, *, client=None, blocksize=DEFAULT_BLOCKSIZE, progress=False):
    """{word: frequency} of the corpus `inputs` (see train_on_dask) as
    `tokenizer.count_words` counts it, in first-appearance order, counted on
    the workers and merged there in partition order."""
    _check_blocksize(blocksize)
    # The flavour travels as the tokenizer's config (what its model file
    # keeps): a few strings, rebuilt into a BPETokenizer on the worker.
    spec = (tokenizer.config(), tokenizer.backend)
    with _client(client) as cl:
        dask = _dask()
        if _is_bag(inputs):
            parts = [dask.delayed(_count_items, pure=True)(spec, p) for p in inputs.to_delayed()]
            futures = cl.compute(parts)
            sizes = [1] * len(futures)
        else:
            plan = cl.submit(_plan, _paths(inputs), blocksize, pure=False).result()
            futures = [cl.submit(_count_part, spec, part, pure=False) for part in plan["parts"]]
            sizes = [part[3] - part[2] for part in plan["parts"]]
        try:
            _wait(cl, futures, sizes, "count_on_dask", "partitions", progress, keep=True)
            while len(futures) > 1:  # merge consecutive runs, in order, on the workers
                futures = [cl.submit(_merge, *futures[i:i + _SPLIT_EVERY], pure=False)
                           for i in range(0, len(futures), _SPLIT_EVERY)]
            return futures[0].result().words if futures else {}
        finally:
            cl.cancel(futures)


def encode_to_shards(encoding_or_tokenizer, inputs, out_dir, *, dtype=None, document_separator=None,
                     append_eot=True, client=None, blocksize=DEFAULT_BLOCKSIZE, chunk_size=1 << 22,
                     progress=False):
    """Encode `inputs` with Dask into one shard per partition in `out_dir`, and
    an index; returns the index (a dict, also written to out_dir/index.json).

    encoding_or_tokenizer: an Encoding, or a byte-level BPETokenizer (its
        to_encoding() is used).
    inputs: paths of UTF-8 text files (plain, gzip or zstd), or a
        dask.bag.Bag of str, each item a document (see train_on_dask).
    dtype, document_separator, append_eot, chunk_size: as
        Encoding.encode_file.  The shards of a list of files, concatenated
        in order, equal encode_file on each file concatenated; a bag's,
        encoding each item followed by eot_token.
    blocksize: nominal bytes per partition of a plain file (None: one shard
        per file).  A partition ends only after a document separator, or
        without a separator at a place where encode_file may cut: a text
        without such places is one partition.
    progress: True for a progress line on stderr (plain lines when stderr is
        not a terminal).

    The index lists each shard with its documents (those ending in it) and
    tokens, its source and byte range.  Shards and index are written
    atomically; a shard is recorded as done (out_dir/.done/) once whole.
    Rerunning the same job (same encoding, options and inputs, by size and
    modification time) skips the done shards; a different job's out_dir is
    refused.  Two runs of one job at once are not supported.
    """
    enc = _encoding(encoding_or_tokenizer)
    dtype_name = _encode_file._dtype_name(dtype, enc.n_vocab)
    if document_separator is not None and (not isinstance(document_separator, str) or not document_separator):
        raise ValueError("document_separator must be a non-empty str or None")
    if not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 1:
        raise ValueError("chunk_size must be a positive int")
    if append_eot:
        try:
            enc.eot_token
        except KeyError:
            raise ValueError("encoding %r has no <|endoftext|> to end documents with: pass append_eot=False "
                             "or an encoding with that special token" % enc.name) from None
    _check_blocksize(blocksize)
    out_dir = os.fspath(out_dir)
    options = {"dtype": dtype_name, "document_separator": document_separator, "append_eot": bool(append_eot),
               "chunk_size": chunk_size}
    with _client(client) as cl:
        dask = _dask()
        job = {"format": _FORMAT, "version": 1, "encoding": enc.name,
               "encoding_sha256": hashlib.sha256(pickle.dumps(enc, protocol=4)).hexdigest(),
               "dtype": dtype_name, "document_separator": document_separator, "append_eot": bool(append_eot)}
        if _is_bag(inputs):
            job["inputs"] = {"bag": inputs.name, "npartitions": inputs.npartitions}
            n = inputs.npartitions
        else:
            plan = cl.submit(_plan, _paths(inputs), blocksize, pure=False).result()
            job["inputs"] = plan["files"]
            job["parts"] = plan["parts"]
            n = len(plan["parts"])
        names = _shard_names(n)
        done = cl.submit(_open_job, out_dir, job, pure=False).result()
        todo = [i for i in range(n) if names[i] not in done]
        remote_enc = cl.scatter(enc, broadcast=True, hash=False) if todo else None
        digest = _job_digest(job)
        if _is_bag(inputs):
            delayed = inputs.to_delayed()
            futures = cl.compute([dask.delayed(_encode_items, pure=False)(
                remote_enc, items, out_dir, names[i], digest, options) for i, items in
                ((i, delayed[i]) for i in todo)])
            sizes = [1] * len(futures)
        else:
            futures = [cl.submit(_encode_part, remote_enc, plan["parts"][i], out_dir, names[i], digest, options,
                                 pure=False) for i in todo]
            sizes = [plan["parts"][i][3] - plan["parts"][i][2] for i in todo]
        records = _wait(cl, futures, sizes, "encode_to_shards", "shards", progress, already=len(names) - len(todo))
        for record in records:
            done[record["shard"]] = record
        return cl.submit(_close_job, out_dir, job, [done[name] for name in names], pure=False).result()


def _encoding(obj):
    """The Encoding to encode with: obj itself, or a BPETokenizer's to_encoding()."""
    if isinstance(obj, BPETokenizer):
        return obj.to_encoding()
    from .encoding import Encoding  # late: as everywhere, the tiktoken side loads only when used

    if not isinstance(obj, Encoding):
        raise TypeError("encode_to_shards needs an Encoding or a BPETokenizer, not %s" % type(obj).__name__)
    return obj


def _dask():
    """The dask module (with distributed), or an ImportError saying how to get it."""
    try:
        import dask
        import distributed  # noqa: F401  (the scheduler these functions run on)
    except ImportError as exc:
        raise ImportError("pybpe.distributed needs Dask with its distributed scheduler: "
                          "pip install 'pybpe[dask]' (%s)" % exc) from None
    return dask


@contextlib.contextmanager
def _client(client):
    """The client given, else the current default client, else one on a
    LocalCluster (closed when the block ends)."""
    if client is not None:
        yield client
        return
    _dask()
    import distributed

    try:
        current = distributed.default_client()
    except ValueError:
        current = None
    if current is not None:
        yield current
        return
    with distributed.LocalCluster(processes=True) as cluster, distributed.Client(cluster) as made:
        yield made


def _is_bag(inputs):
    bag = sys.modules.get("dask.bag")  # a Bag exists only if dask.bag was imported
    return bag is not None and isinstance(inputs, bag.Bag)


def _paths(inputs):
    if isinstance(inputs, (str, bytes, os.PathLike)):
        inputs = [inputs]
    try:
        paths = list(inputs)
    except TypeError:
        raise TypeError("inputs must be a path, a list of paths or a dask.bag.Bag, not %s"
                        % type(inputs).__name__) from None
    for k, path in enumerate(paths):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError("inputs[%d] must be a path (str or os.PathLike), not %s" % (k, type(path).__name__))
    if not paths:
        raise ValueError("inputs is empty: no files to read")
    return [os.fspath(p) for p in paths]


def _check_blocksize(blocksize):
    if blocksize is not None and (isinstance(blocksize, bool) or not isinstance(blocksize, int) or blocksize < 1):
        raise ValueError("blocksize must be a positive int (bytes) or None, not %r" % (blocksize,))


def _shard_names(n):
    width = max(5, len(str(n - 1)))
    return ["shard-%0*d.bin" % (width, i) for i in range(n)]


def _job_digest(job):
    return hashlib.sha256(json.dumps(job, sort_keys=True).encode()).hexdigest()


def _wait(cl, futures, sizes, what, unit, progress, already=0, keep=False):
    """The futures' results in order, drawing progress as they finish; the
    first failure cancels the futures not yet finished and is raised (the
    remote exception).  keep=False: each result is fetched and its future
    released at once, so that a worker lost later does not make the
    scheduler run that (side-effecting) task again.  keep=True: the results
    stay on the workers (None each here) for further tasks."""
    distributed = sys.modules["distributed"]
    bar = _Bar(what, unit, len(futures) + already, sum(sizes), already, progress)
    position = {f.key: k for k, f in enumerate(futures)}
    results = [None] * len(futures)
    pending = dict(position)
    try:
        for future in distributed.as_completed(futures):
            k = position[future.key]
            if not keep or future.status != "finished":
                results[k] = future.result()  # raises the task's exception
            if not keep:
                del pending[future.key]
                future.release()
            bar.step(sizes[k])
    except BaseException:
        cl.cancel([futures[k] for k in pending.values()])
        raise
    bar.finish()
    return results


class _Bar:
    """Progress on stderr: a line redrawn in place on a terminal, else a
    plain line every 10% (or 10 s) -- no carriage returns in log files."""

    def __init__(self, what, unit, total, total_bytes, already, enabled):
        self.what, self.unit, self.total, self.total_bytes = what, unit, total, total_bytes
        self.done, self.bytes, self.enabled = already, 0, enabled
        self.tty = enabled and sys.stderr.isatty()
        self.start = self.last = time.perf_counter()
        self.last_tenth, self.shown = -1, None
        if enabled and already:
            sys.stderr.write("%s: %d of %d %s already done\n" % (what, already, total, unit))

    def step(self, nbytes):
        self.done += 1
        self.bytes += nbytes
        if not self.enabled:
            return
        now = time.perf_counter()
        tenth = 10 * self.done // max(self.total, 1)
        if self.tty or tenth > self.last_tenth or now - self.last > 10:
            self.last, self.last_tenth = now, tenth
            self._show(now)

    def _show(self, now, final=False):
        frac = self.done / self.total if self.total else 1.0
        rate = self.bytes / max(now - self.start, 1e-9) / 1e6
        line = "%s [%-30s] %d/%d %s %5.1f%%  %.1f MB/s" % (self.what, "#" * int(30 * frac), self.done,
                                                          self.total, self.unit, 100 * frac, rate)
        self.shown = self.done
        sys.stderr.write(("\r%s\x1b[K" % line) if self.tty else line + "\n")
        if self.tty and final:
            sys.stderr.write("\n")
        sys.stderr.flush()

    def finish(self):
        if self.enabled and (self.tty or self.shown != self.done):
            self._show(time.perf_counter(), final=True)


# -- the worker side: what each task runs -----------------------------------------------

def _plan(paths, blocksize):
    """Partitions of the files: [path, kind, start, end] with nominal byte
    offsets (a compressed file whole: 0 to its size), and what identifies each
    file's contents ([path, size, mtime_ns, kind]).  Runs on a worker."""
    files, parts = [], []
    for path in paths:
        st = os.stat(path)
        if not os.path.isfile(path):
            raise ValueError("%s: not a regular file" % path)
        kind = _kind(path)
        files.append([path, st.st_size, st.st_mtime_ns, kind])
        size = st.st_size
        if kind != "plain" or blocksize is None or size <= blocksize:
            parts.append([path, kind, 0, size])
            continue
        starts = list(range(0, size, blocksize))
        parts += [[path, kind, s, min(s + blocksize, size)] for s in starts]
    return {"files": files, "parts": parts}


def _kind(path):
    with open(path, "rb") as f:
        head = f.read(4)
    if head.startswith(_GZIP_MAGIC):
        return "gzip"
    if head == _ZSTD_MAGIC:
        return "zstd"
    return "plain"


@contextlib.contextmanager
def _open_binary(part, cut):
    """A binary stream of partition `part` ([path, kind, start, end]): a
    compressed file decompressed whole, or the bytes of a plain file between
    the real boundaries cut(start) and cut(end), where cut(f, offset, size,
    limit) finds the first place to cut at or after `offset`, or None when
    there is none before `limit`.  Yields (stream, real start, real end);
    both None for a partition with no place to start in its own range: it
    is empty, its bytes are the previous partition's."""
    path, kind, start, end = part
    with open(path, "rb") as raw:
        if kind == "gzip":
            with gzip.GzipFile(fileobj=raw, mode="rb") as f:
                yield f, start, end
            return
        if kind == "zstd":
            try:
                import zstandard
            except ImportError:
                raise ImportError("%s is zstd-compressed: reading it needs the zstandard module "
                                  "(pip install 'pybpe[dask]')" % path) from None
            with zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True) as f:
                yield io.BufferedReader(f), start, end
            return
        size = os.fstat(raw.fileno()).st_size
        # The start is searched for only up to the next partition's offset:
        # the partition before this one searches on past it (for its end),
        # so searching here too made a file without a cut cost partitions x
        # its size.
        lo = cut(raw, start, size, end)
        if lo is None:
            yield io.BytesIO(b""), None, None
            return
        hi = cut(raw, end, size)
        raw.seek(lo)
        yield io.BufferedReader(_Range(raw, hi - lo)), lo, hi


class _Range(io.RawIOBase):
    """The next `length` bytes of a binary file, as a stream of their own."""

    def __init__(self, f, length):
        super().__init__()
        self.f, self.left = f, length

    def readable(self):
        return True

    def readinto(self, buffer):
        n = min(len(buffer), self.left)
        if n <= 0:
            return 0
        data = self.f.read(n)
        buffer[:len(data)] = data
        self.left -= len(data)
        return len(data)


def _line_cut(f, offset, size, limit=None):
    """The start of the first line that starts at or after `offset` (the end
    of the file if none does), or None if none starts before `limit` (None:
    the end of the file)."""
    if offset <= 0 or offset >= size:
        return min(max(offset, 0), size)
    limit = size if limit is None else limit
    pos = offset - 1  # a line starts at offset if the byte before it is "\n"
    f.seek(pos)
    while pos + 1 < limit:
        data = f.read(min(_SCAN, limit - pos))
        if not data:
            return size
        i = data.find(b"\n")
        if i >= 0:
            return pos + i + 1
        pos += len(data)
    return size if limit >= size else None


def _safe_cut(f, offset, size, limit=None):
    """The first place at or after `offset` where encode_file may cut a
    document (_encode_file.SAFE_CUT), or the end of the file; None if the
    search reaches `limit` (None: the end of the file) without one (a place found in the bytes read
    past it is returned: it is the first after `limit` as well).  The bytes
    around it are decoded (invalid UTF-8 as escapes, one character a byte,
    so places map back to bytes; encode_file reports such a byte later),
    and SAFE_CUT searched in the text: in bytes, only ASCII letters could
    be told apart, so a CJK file was one partition."""
    if offset <= 0 or offset >= size:
        return min(max(offset, 0), size)
    limit = size if limit is None else limit
    pos = offset
    while pos < min(limit, size):
        lo = max(pos - _BEHIND, 0)
        f.seek(lo)
        # Up to `limit` and the few characters a match's lookahead reads past
        # it (a match this close to the window's end is looked at again).
        data = f.read(pos - lo + min(_SCAN, limit - pos + 32))
        at_end = lo + len(data) >= size
        skip = 0
        while lo and skip < 3 and skip < len(data) and 0x80 <= data[skip] < 0xC0:
            skip += 1  # inside a character: start at the next
        text = data[skip:].decode("utf-8", "surrogateescape")
        done_chars, done_bytes = 0, lo + skip
        again = lo + len(data) - 8  # where the next window looks from: the last characters, whole then
        for match in _SAFE_CUT_FORWARD.finditer(text):
            k = match.start()
            done_bytes += len(text[done_chars:k].encode("utf-8", "surrogateescape"))
            done_chars = k
            if not at_end and len(text) - k <= 4 and done_bytes >= pos:
                # Its lookahead may see a character the window cut: look
                # again from this place itself (four characters can be more
                # than the 8 bytes above).  So every window size finds the
                # same first place, and the two searches for one boundary
                # (the start of a partition, the end of the one before,
                # each with its own limit) agree.  (A window reads at least 33
                # bytes past `pos`, so this place is past it: the search moves on.)
                again = min(again, done_bytes)
                break
            if done_bytes >= pos:
                return done_bytes
        if at_end:
            return size
        pos = again
    return size if limit >= size else None


def _separator_cut(sep):
    """cut(f, offset, size, limit=None) for documents separated by `sep`: just
    after the first occurrence of sep starting at or after `offset` (and
    before `limit`, else None) that encode_file's
    left-to-right search certainly finds -- one that no other occurrence
    overlaps from the left (with "\\n\\n\\n" and a run of five newlines the
    search takes the first three, not the last).  If no occurrence starts in
    (q - len, q), every earlier match ends at or before q, so the search
    reaches q and takes it."""
    sep = sep.encode("utf-8")
    n = len(sep)

    def cut(f, offset, size, limit=None):
        if offset <= 0 or offset >= size:
            return min(max(offset, 0), size)
        limit = size if limit is None else limit
        pos = offset
        while pos < min(limit, size):
            lo = max(pos - (n - 1), 0)
            f.seek(lo)
            data = f.read(pos - lo + min(_SCAN, limit - pos) + 2 * n)
            at_end = lo + len(data) >= size
            # Every occurrence found lies inside the window, and so do the bytes
            # of any occurrence that would overlap it from the left.
            q = data.find(sep, pos - lo)
            while q >= 0:
                if not any(data.startswith(sep, j) for j in range(max(q - n + 1, 0), q)):
                    return lo + q + n
                q = data.find(sep, q + 1)
            if at_end:
                return size
            pos = lo + len(data) - n + 1  # an occurrence starting here may run past the window
        return size if limit >= size else None
    return cut


def _decoding_errors(part, lo, hi, cut):
    """A context that re-raises a UnicodeDecodeError as a ValueError naming
    the file, the partition's byte range and the bad byte's offset in the
    file.  The error's own position counts from where the decoder that
    raised it started (the partition, or the last block a TextIOWrapper
    read), so the partition is read again to find the byte: only on this
    failing path."""
    @contextlib.contextmanager
    def named():
        try:
            yield
        except UnicodeDecodeError as exc:
            with _open_binary(part, cut) as (f, _, _):
                found = _first_bad_byte(f)
            if found is None:  # (the file changed meanwhile)
                raise ValueError("%s (bytes %d to %d): not UTF-8 text: %s" % (part[0], lo, hi, exc)) from None
            at, reason = found
            raise ValueError("%s (bytes %d to %d): not UTF-8 text at byte %d of the %s: %s"
                             % (part[0], lo, hi, lo + at, "file" if part[1] == "plain" else "decompressed text",
                                reason)) from None
    return named()


def _first_bad_byte(f):
    """(offset, reason) of the first byte of binary stream `f` that is not
    UTF-8, counted from where `f` starts; None if it is all UTF-8."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    done = 0
    while True:
        raw = f.read(1 << 20)
        held = len(decoder.getstate()[0])  # bytes of a character the last read cut
        try:
            decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:
            return done - held + exc.start, exc.reason
        if not raw:
            return None
        done += len(raw)


class _Counts:
    """{word: frequency} of a partition, as tasks pass it on.  A wrapper,
    because Dask serializes a bare dict entry by entry (seconds for 10**5
    words) and this object by pickle, whole (milliseconds)."""

    __slots__ = ("words",)

    def __init__(self, words):
        self.words = words

    def __getstate__(self):
        return self.words

    def __setstate__(self, words):
        self.words = words


def _count_part(spec, part):
    """_Counts of one partition of a file, read as lines."""
    config, backend = spec
    tok = BPETokenizer._from_config(config, backend)
    with _open_binary(part, _line_cut) as (f, lo, hi), _decoding_errors(part, lo, hi, _line_cut):
        return _Counts(tok.count_words(io.TextIOWrapper(f, encoding="utf-8", newline="\n")))


def _count_items(spec, items):
    """_Counts of one partition of a bag of str."""
    config, backend = spec
    return _Counts(BPETokenizer._from_config(config, backend).count_words(items))


def _merge(*counts):
    """_Counts of consecutive partitions, in order, merged (pybpe.merge_counts)."""
    from . import merge_counts

    return _Counts(merge_counts(*(c.words for c in counts)))


def _encode_part(enc, part, out_dir, name, digest, options):
    """Encode one partition of a file into shard `name`; its record."""
    sep = options["document_separator"]
    is_last = part[3] >= os.path.getsize(part[0]) or part[1] != "plain"
    cut = _safe_cut if sep is None else _separator_cut(sep)
    eot = enc.eot_token if options["append_eot"] else None
    path = os.path.join(out_dir, name)
    with _open_binary(part, cut) as (f, lo, hi), _decoding_errors(part, lo, hi, cut), \
            _shard_output(path, part[0]) as out:
        # Without a separator a file is one document: only its last partition ends it.
        tokens, documents = _encode_file.write_ids(enc._encode_array, f, out, options["dtype"], eot=eot,
                                                   document_separator=sep, chunk_size=options["chunk_size"],
                                                   open_end=sep is None and not is_last,
                                                   encode_group=enc._group_encoder())
    record = {"shard": name, "documents": documents, "tokens": tokens, "source": part[0], "start": lo, "end": hi}
    return _record_done(out_dir, name, digest, record)


def _encode_items(enc, items, out_dir, name, digest, options):
    """Encode one partition of a bag (each item a document) into shard `name`; its record."""
    eot = enc.eot_token if options["append_eot"] else None

    def documents_of(items):
        for k, text in enumerate(items):
            if not isinstance(text, str):
                raise TypeError("%s: item %d of the partition is %s, not str" % (name, k, type(text).__name__))
            yield text, True

    with _shard_output(os.path.join(out_dir, name)) as out:
        tokens, documents = _encode_file.write_pieces(enc._encode_array, enc._group_encoder(), documents_of(items),
                                                      out, options["dtype"], eot=eot,
                                                      chunk_size=options["chunk_size"])
    record = {"shard": name, "documents": documents, "tokens": tokens, "source": None, "start": None, "end": None}
    return _record_done(out_dir, name, digest, record)


def _shard_output(path, source=None):
    from ._atomic import atomic_output

    return atomic_output(path, inputs=() if source is None else (source,))


def _record_done(out_dir, name, digest, record):
    """Record shard `name` as whole (after it was committed), for reruns."""
    os.makedirs(os.path.join(out_dir, _DONE), exist_ok=True)
    atomic_write(os.path.join(out_dir, _DONE, name + ".json"),
                 json.dumps(dict(record, job=digest), sort_keys=True).encode())
    return record


def _open_job(out_dir, job):
    """Make out_dir ready for `job`: a fresh index (complete: false) in a new
    or empty-of-shards directory, or the same job's index from an earlier
    run.  Returns {shard name: record} of the shards already done."""
    os.makedirs(os.path.join(out_dir, _DONE), exist_ok=True)
    index_path = os.path.join(out_dir, _INDEX)
    try:
        with open(index_path, encoding="utf-8") as f:
            old = json.load(f)
    except FileNotFoundError:
        old = None
    except ValueError as exc:
        raise ValueError("%s: not a readable shard index (%s); use another out_dir" % (index_path, exc)) from None
    if old is None:
        strays = sorted(e for e in os.listdir(out_dir) if e.startswith("shard-") and e.endswith(".bin"))
        if strays:
            raise ValueError("%s holds shard files (%s...) but no %s: use an empty or new out_dir"
                             % (out_dir, strays[0], _INDEX))
    elif not isinstance(old, dict) or old.get("job") != job:
        differs = sorted(k for k in set(job) | set(old.get("job") or {}) if (old.get("job") or {}).get(k) != job.get(k)) \
            if isinstance(old, dict) and isinstance(old.get("job"), dict) else ["format"]
        raise ValueError("%s holds the shards of another job (it differs in %s): use another out_dir, "
                         "or remove that one to start over" % (out_dir, ", ".join(differs)))
    digest = _job_digest(job)
    itemsize = _encode_file._DTYPES[job["dtype"]][1]
    done = {}
    for entry in os.listdir(os.path.join(out_dir, _DONE)):
        try:
            with open(os.path.join(out_dir, _DONE, entry), encoding="utf-8") as f:
                record = json.load(f)
            name = record.pop("shard")
            ok = (record.pop("job") == digest
                  and os.path.getsize(os.path.join(out_dir, name)) == record["tokens"] * itemsize)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            ok = False  # a torn or foreign record: that shard is simply done again
        if ok:
            done[name] = dict(shard=name, **record)
    if old is None:
        _write_index(out_dir, job, [], complete=False)
    return done


def _close_job(out_dir, job, records):
    return _write_index(out_dir, job, _ranges_filled(records), complete=True)


def _ranges_filled(records):
    """The shard records with the range of each empty partition that found
    no place to start (start and end None: see _open_binary) set where the
    partition before it, which read its bytes, ends -- so the ranges tile
    each file.  (A file's first partition always starts, at 0.)"""
    filled = []
    for record in records:
        if record["source"] is not None and record["start"] is None:
            record = dict(record, start=filled[-1]["end"], end=filled[-1]["end"])
        filled.append(record)
    return filled


def _write_index(out_dir, job, records, complete):
    index = {"job": job, "complete": complete, "shards": records,
             "documents": sum(r["documents"] for r in records), "tokens": sum(r["tokens"] for r in records)}
    atomic_write(os.path.join(out_dir, _INDEX), (json.dumps(index, indent=1) + "\n").encode())
    return index
