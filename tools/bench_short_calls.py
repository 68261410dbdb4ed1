"""Per-call cost of encoding short texts: 10,000 calls of ~200 characters.

A chat message, a prompt, a search query: each is one call on a short text,
where what a call costs around the encoding itself (argument checks, the
crossing into C, making the result) is most of the time.  Shakespeare is cut
at random places into --calls texts of --chars characters; each encoder is
warmed on all of them (pybpe's piece cache then knows every piece, as it
would in a long-running service), its IDs are checked against pybpe's on the
first 300 (a peer that differs or raises is left out, and said so), and then
it encodes all of them, --rounds times, encoders taking turns round by round.
Prints microseconds of CPU time per call, the best round of each.  The
encoders are tools/bench_encode_table.py's (the peers of the `bench` extra
where installed, built offline from the shipped rank files) and pybpe's
`encode`, which also checks for special tokens.

    python3 tools/bench_short_calls.py [--names gpt2,cl100k_base,o200k_base]
"""
import argparse
import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_encode_table as table  # noqa: E402  (sets the peers' thread counts)
from pybpe.registry import get_encoding  # noqa: E402

SHAKESPEARE = os.environ.get("PYBPE_SHAKESPEARE", os.path.join(HERE, "..", "..", "shared", "data", "shakespeare.txt"))


def encoders(name, tmp):
    """{label: encode(text) -> IDs}: bench_encode_table's (no pure-Python
    backend) and pybpe's encode."""
    out, _ = table.encoders(name, tmp, False)
    out["pybpe C, encode"] = table.fresh(get_encoding(name, backend="c")).encode
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--names", default="gpt2,cl100k_base,o200k_base")
    ap.add_argument("--calls", type=int, default=10_000)
    ap.add_argument("--chars", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    with open(SHAKESPEARE, encoding="utf-8") as f:
        text = f.read()
    rng = random.Random(1)
    texts = [text[s:s + args.chars] for s in (rng.randrange(len(text) - args.chars) for _ in range(args.calls))]
    print("%s UTC; %d calls of %d characters, microseconds of CPU time per call (best of %d rounds)"
          % (time.strftime("%Y-%m-%d %H:%M", time.gmtime()), args.calls, args.chars, args.rounds))
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.names.split(","):
            fns = encoders(name, tmp)
            reference = [get_encoding(name, backend="c").encode_ordinary(t) for t in texts[:300]]
            left_out = []
            for label, fn in list(fns.items()):
                try:
                    same = [list(fn(t)) for t in texts[:300]] == reference
                    for t in texts:
                        fn(t)
                except BaseException as e:  # noqa: B036 -- a Rust panic is a BaseException
                    if isinstance(e, (KeyboardInterrupt, SystemExit)):
                        raise
                    same = False
                if not same:
                    left_out.append(label)
                    del fns[label]
            best = dict.fromkeys(fns, float("inf"))
            for _ in range(args.rounds):
                for label, fn in fns.items():
                    start = time.process_time()
                    for t in texts:
                        fn(t)
                    best[label] = min(best[label], (time.process_time() - start) / len(texts) * 1e6)
            print("%-12s " % name + ", ".join("%s %.2f" % item for item in best.items())
                  + ("; left out (IDs differ or it raised): " + ", ".join(left_out) if left_out else ""))


if __name__ == "__main__":
    main()
