"""encode_ordinary_batch on 1 and 2 threads: Shakespeare cut into ~1,000 documents.

Runs interleaved (1 thread, 2 threads, 1, 2, ...) so that drift on a shared
machine hits both alike, checks the IDs are equal first, prints medians of 9.
    python3 tools/bench_batch_threads.py [path/to/shakespeare.txt]
"""
import os
import statistics
import sys
import time

import pybpe

DEFAULT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "shakespeare.txt")
text = open(sys.argv[1] if len(sys.argv) > 1 else DEFAULT, encoding="utf-8").read()
lines = text.splitlines(keepends=True)
docs = ["".join(lines[i:i+322]) for i in range(0, len(lines), 322)]
for name in ("gpt2", "cl100k_base"):
    enc = pybpe.get_encoding(name)
    assert enc.encode_ordinary_batch(docs, num_threads=2) == enc.encode_ordinary_batch(docs, num_threads=1)
    one, two = [], []
    for _ in range(9):   # interleaved, so drift hits both alike
        s = time.perf_counter(); enc.encode_ordinary_batch(docs, num_threads=1); one.append(time.perf_counter() - s)
        s = time.perf_counter(); enc.encode_ordinary_batch(docs, num_threads=2); two.append(time.perf_counter() - s)
    a, b = statistics.median(one), statistics.median(two)
    mb = len(text.encode()) / 1e6
    print("%-12s 1 thread %.3f s (%.1f MB/s)  2 threads %.3f s (%.1f MB/s)  ratio %.2f" % (name, a, mb/a, b, mb/b, a/b))
