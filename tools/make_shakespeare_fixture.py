"""Compute tests/fixtures/shakespeare_reference_2000.json with pybpe.reference.

The literal chapter algorithm needs about half a second per merge on the
9.5 MB Shakespeare corpus, so its first 2,000 merges are computed once, here,
and checked in; tests compare the fast trainers against the file.  Run:

    python3 tools/make_shakespeare_fixture.py ../shared/data/shakespeare.txt

(about 15-20 minutes on one core).
"""
import hashlib
import json
import sys
import time

import pybpe
from pybpe import reference

MERGES = 2000


def main(corpus_path, out_path="tests/fixtures/shakespeare_reference_2000.json"):
    with open(corpus_path, "rb") as f:
        raw = f.read()
    tok = pybpe.BPETokenizer(backend="python")  # the chapter flavour: its words and symbols
    counts = tok.count_words(raw.decode("utf-8").splitlines())
    words = [(tuple(tok.flavour.units(w)), n) for w, n in counts.items()]
    base = tok.flavour.base_vocab(set("".join(counts)))
    start = time.time()
    vocab, merges = reference.learn(words, base, len(base) + MERGES)
    document = {
        "what": "first %d merges of pybpe.reference.learn, chapter flavour, words = str.split()" % MERGES,
        "command": "python3 tools/make_shakespeare_fixture.py ../shared/data/shakespeare.txt",
        "corpus_sha256": hashlib.sha256(raw).hexdigest(),
        "base_vocab_size": len(base),
        "seconds": round(time.time() - start, 1),
        "merges": [list(m) for m in merges],
    }
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(document, f, ensure_ascii=True, indent=0)
        f.write("\n")
    print("wrote %s: %d merges in %.0f s" % (out_path, len(merges), document["seconds"]))


if __name__ == "__main__":
    main(*sys.argv[1:])
