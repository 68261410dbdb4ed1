"""Encoding.encode_file: a large text file -> a flat file of token IDs.

Reads the file in chunks (binary, decoded incrementally, so "\\r\\n" stays as
it is), cuts documents at the separator, cuts long documents only where the
result cannot change (see SAFE_CUT), encodes each part with the encoding's
fastest path and appends the IDs to the output through pybpe's safe writer
(pybpe/_atomic.py: a temporary file committed at the end, symlinks written
through, devices and pipes written as streams, the input never overwritten).  Memory stays a few chunks whatever the file's size.  The
loop itself (write_ids) takes any binary stream: pybpe/distributed.py runs
it on byte ranges and compressed files, one shard per partition, on Dask
workers.  Not here: shuffling.
"""
import codecs
import os
import sys
import time
from array import array

import regex

from ._atomic import atomic_output

# Where a document may be cut without changing its encoding under the gpt2,
# cl100k and o200k patterns (every place found is where a piece ends, for
# any text after it: tests/test_encode_speed_paths.py checks it on text of
# every kind against the patterns themselves):
#   - between a letter and " " + a letter, in any script: every pattern ends
#     a run of letters at the space and starts " x..." as a new piece;
#   - after a non-space and "\n", before a non-space other than "/": the
#     newline is a piece of its own, or ends a punctuation piece (whose
#     trailing [\r\n]* stops there; o200k's [\r\n/]* would take a "/").
# Scripts without spaces between words (Chinese, Japanese) are cut at their
# line ends.  Before, only ASCII letters around the cut counted, so a file
# of CJK, Cyrillic or Greek text was one document held whole.  Searched
# from the end (regex's reverse mode) to find the last such place.
SAFE_CUT = regex.compile(r"(?r)(?<=\p{L})(?= \p{L})|(?<=\S\n)(?=[^\s/])")

# Characters before new text that a safe cut there may need to see (its
# lookbehind looks two back).
_CUT_CONTEXT = 3

# How often the progress line is redrawn on a terminal, and a plain line
# written elsewhere, in seconds.
_PROGRESS_EVERY = 0.25
_PLAIN_EVERY = 5.0

_DTYPES = {"uint16": ("H", 2, 65536), "uint32": ("I", 4, 2**32)}


def _dtype_name(dtype, n_vocab):
    """'uint16' or 'uint32' for a dtype argument (None: the smallest that fits).

        >>> _dtype_name(None, 50257), _dtype_name(None, 100277), _dtype_name("uint32", 10)
        ('uint16', 'uint32', 'uint32')
    """
    if dtype is None:
        return "uint16" if n_vocab <= 65536 else "uint32"
    name = str(getattr(dtype, "name", dtype))  # numpy dtypes and types have .name / str()
    if name.startswith("<class 'numpy."):
        name = name[len("<class 'numpy."):-2]
    if name not in _DTYPES:
        raise ValueError("dtype must be uint16 or uint32 (or None to choose), not %r" % (dtype,))
    if n_vocab > _DTYPES[name][2]:
        raise ValueError("dtype %s cannot hold IDs up to %d (n_vocab %d); use uint32" % (name, n_vocab - 1, n_vocab))
    return name


def typecode(code, size):
    # array typecodes are C types; pick the one of the right width here.
    for c in (code, "I", "L", "H"):
        if array(c).itemsize == size:
            return c
    raise RuntimeError("no array typecode of %d bytes" % size)


def _parts(f, separator, chunk_size, progress):
    """Yields (text, ends_document) from binary file f: whole documents, or
    a document in pieces cut at SAFE_CUT (ends_document False for all but the
    last piece).  `progress(bytes_read)` is called after each read.

    Each character is searched once for a separator and once for a safe cut,
    and joined into the text it is yielded in once or twice: a long document
    without a safe cut (minified JSON, CJK) is held in pieces, not searched
    and copied whole again after every read."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    keep = len(separator) - 1 if separator else 0
    pending, size = [], 0  # the current document's text not yet yielded, in pieces; its length
    cut = 0                # the last safe cut found in it (0: none)
    tail = ""              # its last characters: the context of a cut where new text begins
    carry = ""             # the last `keep` characters read: maybe the start of a separator
    bytes_read = 0
    while True:
        raw = f.read(chunk_size)
        bytes_read += len(raw)
        progress(bytes_read)
        held = len(decoder.getstate()[0])  # bytes of a character the last read cut
        try:
            text = carry + decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:
            # exc.start counts from this read: say where in the file it is
            at = bytes_read - len(raw) - held + exc.start
            raise UnicodeDecodeError(exc.encoding, exc.object, exc.start, exc.end,
                                     "%s at byte %d of the file" % (exc.reason, at)) from None
        start = 0
        if separator:
            while True:
                i = text.find(separator, start)
                if i < 0:
                    break
                pending.append(text[start:i])
                yield "".join(pending), True
                pending, size, cut, tail = [], 0, 0, ""
                start = i + len(separator)
        if not raw:
            rest = text[start:]
            if size or rest or not separator:
                pending.append(rest)
                yield "".join(pending), True
            return
        end = max(start, len(text) - keep)
        new, carry = text[start:end], text[end:]
        if not new:
            continue
        # The last safe cut in the new text, seen with the characters before
        # it (none without a space or a newline: skip the slow search then).
        match = SAFE_CUT.search(tail + new) if " " in new or "\n" in new else None
        if match:
            cut = max(cut, size - len(tail) + match.start())
        pending.append(new)
        size += len(new)
        tail = (tail + new)[-_CUT_CONTEXT:]
        # Flush the current document up to its last safe cut.
        if size > chunk_size // 2 and cut > 0:
            whole = "".join(pending)
            yield whole[:cut], False
            pending, size, cut = [whole[cut:]], size - cut, 0


class _Progress:
    """The progress report on stderr: percent, MB read, MB/s.  On a terminal
    a bar redrawn in place; anywhere else (a log file, a pipe) a plain line
    every _PLAIN_EVERY seconds and at the end, never "\r" (as training's
    and the command line's reports)."""

    def __init__(self, total, enabled):
        self.total, self.enabled = total, enabled
        self.tty = enabled and _isatty(sys.stderr)
        self.start = self.last = time.perf_counter()

    def __call__(self, done, final=False):
        now = time.perf_counter()
        every = _PROGRESS_EVERY if self.tty else _PLAIN_EVERY
        if not self.enabled or (not final and now - self.last < every):
            return
        self.last = now
        frac = done / self.total if self.total else 1.0
        rate = done / max(now - self.start, 1e-9) / 1e6
        if self.tty:
            sys.stderr.write("\rencode_file [%-30s] %5.1f%% %.1f/%.1f MB %.1f MB/s"
                             % ("#" * int(30 * frac), 100 * frac, done / 1e6, self.total / 1e6, rate))
            if final:
                sys.stderr.write("\n")
        else:
            sys.stderr.write("encode_file %5.1f%% %.1f/%.1f MB %.1f MB/s\n"
                             % (100 * frac, done / 1e6, self.total / 1e6, rate))
        sys.stderr.flush()


def _isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def encode_file(enc, encode_array, path, out_path, *, document_separator=None, dtype=None,
                append_eot=True, progress=False, chunk_size=1 << 22, encode_group=None):
    """See Encoding.encode_file.  `enc` is read through its public API only;
    `encode_array(text, itemsize)` is the encoding's fastest path to an
    array of IDs, and `encode_group(texts, itemsize)` (or None) its path
    for many texts at once: their IDs end to end and where each text's end
    (Encoding passes its own, so this module never imports encoding: no
    cycle)."""
    if document_separator is not None and (not isinstance(document_separator, str) or not document_separator):
        raise ValueError("document_separator must be a non-empty str or None")
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError("chunk_size must be a positive int")
    name = _dtype_name(dtype, enc.n_vocab)
    eot = enc.eot_token if append_eot else None
    bar = _Progress(os.path.getsize(path), progress)
    with open(path, "rb") as f, atomic_output(out_path, inputs=(path,)) as out:
        written, _ = write_ids(encode_array, f, out, name, eot=eot, document_separator=document_separator,
                               chunk_size=chunk_size, progress=bar, encode_group=encode_group)
        bar(os.path.getsize(path), final=True)
    return written


def write_ids(encode_array, f, out, dtype_name, *, eot, document_separator, chunk_size,
              progress=lambda done: None, open_end=False, encode_group=None):
    """The loop of encode_file, on any binary stream `f` (a file, a byte range
    of one, a decompressing reader: pybpe/distributed.py's partitions): its
    documents' IDs as `dtype_name` to `out` (with `write`), each document
    followed by `eot` unless that is None.  `open_end`: the stream stops
    inside a document (a partition cut at a safe place), so its last piece
    gets no eot and ends no document.  `encode_group`: see encode_file;
    with it the pieces are encoded about chunk_size characters at a time
    (_write_group), not one call each.  Returns (IDs written, documents
    ended).

    Why groups: a file of many short documents (Shakespeare cut at blank
    lines: 66,818 documents of ~140 bytes) paid a C call, an array and a
    write per document, ~5.5 us each: 26.7 MB/s, where the same file as one
    document ran at 96 MB/s (gpt2, best of 3).  In groups 57.3 MB/s (best
    of 5; 93 as one document), and with every line a document (322,199 of
    ~30 bytes) 8.5 -> 26.1 MB/s; the same IDs (sha256 of the files).  What is left is Python's per
    document: _parts cutting them, and the eot after each."""
    pieces = _last_open(_parts(f, document_separator, chunk_size, progress), open_end)
    return write_pieces(encode_array, encode_group, pieces, out, dtype_name, eot=eot, chunk_size=chunk_size)


def _last_open(pieces, open_end):
    """The pieces, the last one ending no document when `open_end` (it is
    known to be the last only once the next read comes back empty)."""
    pending = None
    for piece in pieces:
        if pending is not None:
            yield pending
        pending = piece
    if pending is not None:
        yield (pending[0], False) if open_end else pending


def write_pieces(encode_array, encode_group, pieces, out, dtype_name, *, eot, chunk_size):
    """Pieces ((text, ends_document) each) to `out` as write_ids writes them:
    about chunk_size characters of them per call of encode_group
    (_write_group), or one call of encode_array each without it (or for a
    group of one piece).  Returns (IDs written, documents ended)."""
    code, itemsize = typecode(*_DTYPES[dtype_name][:2]), _DTYPES[dtype_name][1]
    written = documents = 0
    group, size = [], 0

    def flush():
        nonlocal written, documents
        if encode_group is None or len(group) == 1:
            for piece in group:
                written, documents = _write_piece(encode_array, out, piece, eot, code, itemsize, written,
                                                  documents)
        elif group:
            written, documents = _write_group(encode_group, out, group, eot, code, itemsize, written,
                                              documents)

    for piece in pieces:
        group.append(piece)
        size += len(piece[0])
        if size >= chunk_size:
            flush()
            group, size = [], 0
    flush()
    return written, documents


def _write_piece(encode_array, out, piece, eot, code, itemsize, written, documents):
    text, ends_document = piece
    ids = encode_array(text, itemsize)
    if ends_document and eot is not None:
        ids.append(eot)
    if ids.typecode != code:
        ids = array(code, ids)
    ids.tofile(out)
    return written + len(ids), documents + ends_document


def _write_group(encode_group, out, group, eot, code, itemsize, written, documents):
    # The pieces of `group` ((text, ends_document) each) encoded in one call,
    # written with eot after each document they end.
    ids, ends = encode_group([text for text, _ in group], itemsize)
    if ids.typecode != code:
        ids = array(code, ids)
    ended = sum(ends_document for _, ends_document in group)
    if eot is None or not ended:
        ids.tofile(out)
        return written + len(ids), documents + ended
    view, start, size = memoryview(ids).cast("B"), 0, ids.itemsize
    result = array(code)
    for (_, ends_document), end in zip(group, ends):
        if ends_document:
            result.frombytes(view[start * size:end * size])
            result.append(eot)
            start = end
    result.frombytes(view[start * size:])
    result.tofile(out)
    return written + len(result), documents + ended
