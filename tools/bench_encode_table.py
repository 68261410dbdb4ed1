"""Encoding throughput of pybpe and its peers, as a Markdown table.

    python3 tools/bench_encode_table.py [--rounds 5] [--mb 2] [--docs 1000]
                                        [--names gpt2,cl100k_base,o200k_base]

Rows: pybpe C, pybpe Python (its piece cache kept between runs, as in any
long job), pybpe Python on a first call (the cache emptied before each run),
tiktoken, Hugging Face tokenizers (a tokenizer.json exported from the same
ranks by pybpe.formats.dump_hf_tokenizer), rs-bpe (cl100k only; skipped when
not importable).  Columns: gpt2, cl100k_base and o200k_base (or --names) on
three corpora, single thread (encode_ordinary of the whole corpus) and 2
threads (encode_ordinary_batch of the corpus cut into --docs documents;
peers' own batch calls).  Every implementation's IDs are checked equal to
pybpe C's before it is timed; a cell is MB/s of UTF-8 input, the median of
--rounds runs, all in one process; each implementation's 1T and 2T runs
alternate, so their ratio is taken under the same load.

Corpora (built deterministically from files every machine has):
  prose        shared/data/shakespeare.txt (PYBPE_SHAKESPEARE overrides)
  python       the .py files of this Python's standard library, sorted by path
  multilingual CPython's Lib/test/cjkencodings/*-utf8.txt (Chinese, Japanese,
               Korean) plus every line of the stdlib's .py files that is
               mostly non-ASCII (Greek, Cyrillic, Arabic, Hebrew, Devanagari,
               CJK, emoji ... from tests and docstrings), repeated to size
Each is cut to --mb megabytes (at a character boundary).

The 2-thread ratio means little on a busy machine: the table ends with a
control (hashlib.sha256 on 2 threads, which releases the GIL) giving the
speed-up the machine itself allowed at that moment.
"""
import argparse
import glob
import hashlib
import os
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)

from pybpe.encoding import Encoding  # noqa: E402
from pybpe.registry import get_encoding  # noqa: E402

NAMES = ["gpt2", "cl100k_base", "o200k_base"]


def _stdlib():
    import sysconfig
    return sysconfig.get_paths()["stdlib"]


def corpus_prose():
    path = os.environ.get("PYBPE_SHAKESPEARE", os.path.join(HERE, "..", "shared", "data", "shakespeare.txt"))
    with open(path, encoding="utf-8") as f:
        return f.read()


def corpus_python(limit):
    parts, size = [], 0
    for path in sorted(glob.glob(os.path.join(_stdlib(), "**", "*.py"), recursive=True)):
        if "site-packages" in path:
            continue
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        parts.append(text)
        size += len(text)
        if size > limit:
            break
    return "".join(parts)


def corpus_multilingual(limit):
    parts = []
    for path in sorted(glob.glob(os.path.join(_stdlib(), "test", "cjkencodings", "*-utf8.txt"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            parts.append(f.read())
    for path in sorted(glob.glob(os.path.join(_stdlib(), "**", "*.py"), recursive=True)):
        if "site-packages" in path:
            continue
        try:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    if len(line) > 8 and sum(ord(c) > 127 for c in line) > len(line) // 2:
                        parts.append(line)
        except (UnicodeDecodeError, OSError):
            continue
    base = "".join(parts)
    if not base:
        raise SystemExit("no multilingual text found in this Python's standard library")
    return (base * (limit // len(base) + 1))


def _cut(text, mb):
    # The first `mb` megabytes of UTF-8, ending at a character boundary.
    return text.encode("utf-8")[:int(mb * 1e6)].decode("utf-8", errors="ignore")


def _docs(text, n):
    step = max(1, len(text) // n)
    return [text[i:i + step] for i in range(0, len(text), step)]


def _median_seconds(fn, rounds):
    # Each result is freed after the clock stops: releasing millions of list
    # items is the same for every implementation and is not encoding.
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
        del result
    return statistics.median(times)


def _median_seconds_pair(first, second, rounds):
    # Medians of `first` and `second` (either may be None), run alternately.
    times = ([], [])
    for _ in range(rounds):
        for fn, out in zip((first, second), times):
            if fn is not None:
                t = time.perf_counter()
                result = fn()
                out.append(time.perf_counter() - t)
                del result
    return tuple(statistics.median(t) if t else None for t in times)


def _peers(name, enc, tmp):
    """{label: (single(text) -> ids, batch(docs) -> list of ids)} for installed peers."""
    out = {}
    c = get_encoding(name, backend="c")
    py = get_encoding(name, backend="python")
    out["pybpe C"] = (c.encode_ordinary, lambda d: c.encode_ordinary_batch(d, num_threads=2))
    out["pybpe Python"] = (py.encode_ordinary, lambda d: py.encode_ordinary_batch(d, num_threads=2))
    # A second Python encoder whose piece cache is emptied before every run:
    # what a single call on new text costs.
    cold = Encoding(name, pat_str=enc.pat_str, mergeable_ranks=enc.mergeable_ranks,
                    special_tokens=enc.special_tokens, backend="python")

    def first_call(encode, arg):
        cold._table._cache.clear()
        return encode(arg)
    out["pybpe Python, first call"] = (lambda t: first_call(cold.encode_ordinary, t),
                                       lambda d: first_call(lambda x: cold.encode_ordinary_batch(x, num_threads=2), d))
    try:
        import tiktoken
        tk = tiktoken.Encoding(name, pat_str=enc.pat_str, mergeable_ranks=enc.mergeable_ranks,
                               special_tokens=enc.special_tokens)
        out["tiktoken"] = (tk.encode_ordinary, lambda d: tk.encode_ordinary_batch(d, num_threads=2))
    except ImportError:
        pass
    try:
        import tokenizers
        from pybpe.formats import dump_hf_tokenizer
        path = os.path.join(tmp, name + ".json")
        dump_hf_tokenizer(enc, path)
        hf = tokenizers.Tokenizer.from_file(path)
        os.environ.setdefault("RAYON_NUM_THREADS", "2")
        out["HF tokenizers"] = (lambda t: hf.encode(t, add_special_tokens=False).ids,
                                lambda d: [e.ids for e in hf.encode_batch(d, add_special_tokens=False)])
    except ImportError:
        pass
    if name == "cl100k_base":
        try:
            from rs_bpe.bpe import openai
            rs = openai.cl100k_base()
            options = openai.ParallelOptions(1, 64, 2)  # min_batch_size, chunk_size, max_threads
            out["rs-bpe"] = (lambda t: list(rs.encode(t)), lambda d: [list(ids) for ids in rs.encode_batch_parallel(d, options)[0]])
        except Exception:  # not installed, or an API this script does not know
            pass
    return out


def _control(rounds):
    data = b"x" * 50_000_000

    def run(n):
        threads = [threading.Thread(target=lambda: hashlib.sha256(data).digest()) for _ in range(n)]
        [t.start() for t in threads]
        [t.join() for t in threads]
    one = _median_seconds(lambda: run(1), rounds)
    two = _median_seconds(lambda: run(2), rounds)
    return 2 * one / two


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mb", type=float, default=2.0, help="megabytes of each corpus")
    ap.add_argument("--docs", type=int, default=1000, help="documents for the 2-thread batch")
    ap.add_argument("--names", default=",".join(NAMES), help="encodings, comma-separated (default: %(default)s)")
    args = ap.parse_args()
    limit = int(args.mb * 1e6)
    corpora = {"prose": _cut(corpus_prose(), args.mb), "python": _cut(corpus_python(limit), args.mb),
               "multilingual": _cut(corpus_multilingual(limit), args.mb)}
    cols, rows = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.names.split(","):
            enc = get_encoding(name, backend="c")
            peers = _peers(name, enc, tmp)
            for cname, text in corpora.items():
                nbytes = len(text.encode("utf-8"))
                docs = _docs(text, args.docs)
                ref = enc.encode_ordinary(text)
                ref_docs = enc.encode_ordinary_batch(docs, num_threads=1)
                one_col = "%s %s 1T" % (name.replace("_base", ""), cname)
                two_col = one_col[:-2] + "2T"
                cols += [one_col, two_col]
                for label, (single, batch) in peers.items():
                    cells = rows.setdefault(label, {})
                    one_ok, two_ok = single(text) == ref, batch(docs) == ref_docs
                    cells[one_col] = cells[two_col] = "differs"
                    # One thread and two alternate, so drift hits both alike.
                    one, two = _median_seconds_pair(
                        (lambda s=single: s(text)) if one_ok else None,
                        (lambda b=batch: b(docs)) if two_ok else None, args.rounds)
                    if one_ok:
                        cells[one_col] = "%.1f" % (nbytes / one / 1e6)
                    if two_ok:
                        cells[two_col] = "%.1f" % (nbytes / two / 1e6)
                print("done:", name, cname, file=sys.stderr)
    control = _control(args.rounds)
    print("| implementation | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for label, cells in rows.items():
        print("| %s | %s |" % (label, " | ".join(cells.get(c, "-") for c in cols)))
    print()
    print("MB/s of UTF-8 input, median of %d; corpora %.1f MB each; 2T = batch of %d documents on 2 threads."
          % (args.rounds, args.mb, args.docs))
    print("Machine control: hashlib.sha256 on 2 threads ran %.2fx one thread's throughput." % control)


if __name__ == "__main__":
    main()
