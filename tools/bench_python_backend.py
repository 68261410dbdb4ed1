"""The pure-Python backend against tiktoken on English prose (all of Shakespeare).

Two figures per encoding, each the median of 5, runs interleaved with
tiktoken's:
  first call    a new Encoding (empty piece cache) encoding the whole text once
  steady state  the same Encoding encoding the text again (its cache warm, as
                in any long job)
IDs are checked equal to tiktoken's first.  Building the Encoding is not timed.
    python3 tools/bench_python_backend.py [path/to/shakespeare.txt]
"""
import os
import statistics
import sys
import time

import tiktoken

from pybpe.encoding import Encoding
from pybpe.registry import get_encoding

DEFAULT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "shakespeare.txt")


def _seconds(fn, arg):
    start = time.perf_counter()
    result = fn(arg)
    elapsed = time.perf_counter() - start
    return elapsed, result


def main():
    text = open(sys.argv[1] if len(sys.argv) > 1 else DEFAULT, encoding="utf-8").read()
    mb = len(text.encode("utf-8")) / 1e6
    print("%.1f MB, medians of 5" % mb)
    for name in ("gpt2", "cl100k_base"):
        base = get_encoding(name, backend="python")
        tk = tiktoken.Encoding(name, pat_str=base.pat_str, mergeable_ranks=base.mergeable_ranks,
                               special_tokens=base.special_tokens)
        first, steady, theirs = [], [], []
        for _ in range(5):
            enc = Encoding(name, pat_str=base.pat_str, mergeable_ranks=base.mergeable_ranks,
                           special_tokens=base.special_tokens, backend="python")
            seconds, ids = _seconds(enc.encode_ordinary, text)
            first.append(seconds)
            steady.append(_seconds(enc.encode_ordinary, text)[0])
            seconds, expected = _seconds(tk.encode_ordinary, text)
            theirs.append(seconds)
            assert ids == expected, "pybpe's Python backend differs from tiktoken"
            del ids, expected
        f, s, t = (statistics.median(x) for x in (first, steady, theirs))
        print("%-12s tiktoken %.1f MB/s  pybpe Python first call %.1f MB/s (%.2fx)  steady state %.1f MB/s (%.2fx)"
              % (name, mb / t, mb / f, t / f, mb / s, t / s))


if __name__ == "__main__":
    main()
