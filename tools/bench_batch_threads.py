"""encode_ordinary_batch on 2 threads against pybpe's single-thread figures.

Shakespeare cut into ~1,000 documents.  Three timings per encoding, run
interleaved (whole, 1 thread, 2 threads, whole, ...) so that drift on a
shared machine hits all alike, after checking the IDs agree:
  whole     encode_ordinary of the whole text, one call, one thread
  1 thread  encode_ordinary_batch(docs, num_threads=1)
  2 threads encode_ordinary_batch(docs, num_threads=2)
Prints medians of 9 and the 2-thread speed-up over each single-thread figure.
    python3 tools/bench_batch_threads.py [path/to/shakespeare.txt]
"""
import os
import statistics
import sys
import time

import pybpe

DEFAULT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "shakespeare.txt")


def _seconds(fn, arg, **kwargs):
    # The result is freed after the clock stops (freeing millions of list
    # items is not encoding, and holds the GIL).
    start = time.perf_counter()
    result = fn(arg, **kwargs)
    elapsed = time.perf_counter() - start
    del result
    return elapsed


def main():
    text = open(sys.argv[1] if len(sys.argv) > 1 else DEFAULT, encoding="utf-8").read()
    lines = text.splitlines(keepends=True)
    docs = ["".join(lines[i:i + 322]) for i in range(0, len(lines), 322)]
    mb = len(text.encode("utf-8")) / 1e6
    print("%d documents, %.1f MB, medians of 9 interleaved runs" % (len(docs), mb))
    for name in ("gpt2", "cl100k_base"):
        enc = pybpe.get_encoding(name)
        two_thread_ids = enc.encode_ordinary_batch(docs, num_threads=2)
        assert two_thread_ids == enc.encode_ordinary_batch(docs, num_threads=1)
        whole, one, two = [], [], []
        for _ in range(9):
            whole.append(_seconds(enc.encode_ordinary, text))
            one.append(_seconds(enc.encode_ordinary_batch, docs, num_threads=1))
            two.append(_seconds(enc.encode_ordinary_batch, docs, num_threads=2))
        w, a, b = (statistics.median(t) for t in (whole, one, two))
        print("%-12s whole %.1f MB/s  1 thread %.1f MB/s  2 threads %.1f MB/s  "
              "2 threads / 1 thread %.2fx  2 threads / whole %.2fx" % (name, mb / w, mb / a, mb / b, a / b, w / b))


if __name__ == "__main__":
    main()
