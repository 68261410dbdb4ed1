"""encode_ordinary_batch on 2 threads against 1, on text no call has seen.

Issue 13 asks that batch encoding of 10 KB documents on two threads run at
least 1.8x as fast as on one.  pybpe's piece cache lives across calls (one
per thread, per Encoding), so re-encoding the same documents would time a
warm cache: here Shakespeare is cut into ROUNDS + 1 slices, each cut into
10 KB documents; the first slice warms up (and checks the IDs against one
thread), then every round times each of three encoders, each an Encoding of
its own, on the next slice, which none of them has seen:
  whole     encode_ordinary of the slice, one call, one thread
  1 thread  encode_ordinary_batch(docs, num_threads=1)
  2 threads encode_ordinary_batch(docs, num_threads=2)
and, with NumPy, the same batch as arrays, without a list per document:
  encode_batch_to_numpy(docs, num_threads=1 / 2, disallowed_special=())
Wall time, medians over the rounds, interleaved so that drift on a shared
machine hits all of them alike.  Two threads need two free cores: run it on a
quiet machine (the script prints the load average it started with).
    python3 tools/bench_batch_threads.py [path/to/shakespeare.txt] [--rounds N]
"""
import argparse
import functools
import os
import statistics
import time

from pybpe.encoding import Encoding
from pybpe.registry import get_encoding

DEFAULT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "shakespeare.txt")
DOC_CHARS = 10_000


def _seconds(fn, arg, **kwargs):
    # The result is freed after the clock stops (freeing millions of list
    # items is not encoding, and holds the GIL).
    start = time.perf_counter()
    result = fn(arg, **kwargs)
    elapsed = time.perf_counter() - start
    del result
    return elapsed


def _fresh(name):
    enc = get_encoding(name, backend="c")
    return Encoding(enc.name, pat_str=enc.pat_str, mergeable_ranks=enc.mergeable_ranks,
                    special_tokens=enc.special_tokens, backend="c")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default=DEFAULT)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--names", default="gpt2,cl100k_base,o200k_base")
    args = ap.parse_args()
    with open(args.corpus, encoding="utf-8") as f:
        text = f.read()
    size = len(text) // (args.rounds + 1)
    slices = [text[k * size:(k + 1) * size] for k in range(args.rounds + 1)]
    docs = [[s[i:i + DOC_CHARS] for i in range(0, len(s), DOC_CHARS)] for s in slices]
    mb = statistics.mean(len(s.encode("utf-8")) for s in slices[1:]) / 1e6
    print("load average %.2f; %d rounds of %.2f MB unseen text, %d documents of %d characters each"
          % (os.getloadavg()[0], args.rounds, mb, len(docs[1]), DOC_CHARS))
    try:
        import numpy  # noqa: F401  (only to know whether the array rows can run)
        arrays = True
    except ImportError:
        arrays = False
    for name in args.names.split(","):
        whole_enc, one_enc, two_enc = _fresh(name), _fresh(name), _fresh(name)
        expected = one_enc.encode_ordinary_batch(docs[0], num_threads=1)
        assert two_enc.encode_ordinary_batch(docs[0], num_threads=2) == expected
        whole_enc.encode_ordinary(slices[0])  # warm-up only: a whole text cuts differently from its documents
        timed = [("whole", whole_enc.encode_ordinary, None), ("one", one_enc.encode_ordinary_batch, 1),
                 ("two", two_enc.encode_ordinary_batch, 2)]
        if arrays:
            one_arr, two_arr = _fresh(name), _fresh(name)
            for enc in (one_arr, two_arr):
                ids, offsets = enc.encode_batch_to_numpy(docs[0], num_threads=1 if enc is one_arr else 2,
                                                         disallowed_special=())
                assert [ids[a:b].tolist() for a, b in zip(offsets, offsets[1:])] == expected
            timed += [("one_arr", functools.partial(one_arr.encode_batch_to_numpy, disallowed_special=()), 1),
                      ("two_arr", functools.partial(two_arr.encode_batch_to_numpy, disallowed_special=()), 2)]
        times = {key: [] for key, _, _ in timed}
        for k in range(1, args.rounds + 1):
            for key, fn, threads in timed:
                if threads is None:
                    times[key].append(_seconds(fn, slices[k]))
                else:
                    times[key].append(_seconds(fn, docs[k], num_threads=threads))
        m = {key: statistics.median(t) for key, t in times.items()}
        w, a, b = m["whole"], m["one"], m["two"]
        line = ("%-12s whole %.1f MB/s  1 thread %.1f MB/s  2 threads %.1f MB/s  "
                "2 threads / 1 thread %.2fx  2 threads / whole %.2fx" % (name, mb / w, mb / a, mb / b, a / b, w / b))
        if arrays:
            c, d = m["one_arr"], m["two_arr"]
            line += "  |  arrays: 1 thread %.1f MB/s  2 threads %.1f MB/s  %.2fx" % (mb / c, mb / d, c / d)
        print(line)


if __name__ == "__main__":
    main()
