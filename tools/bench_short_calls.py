"""Per-call cost of encoding short texts: 10,000 calls of ~200 characters.

A chat message, a prompt, a search query: each is one call on a short text,
where what a call costs around the encoding itself (argument checks, the
crossing into C, making the result) is most of the time.  Shakespeare is cut
at random places into --calls texts of --chars characters; each encoder is
warmed on all of them (pybpe's piece cache then knows every piece, as it
would in a long-running service), its IDs are checked against pybpe's on the
first 300, and then it encodes all of them, --rounds times, encoders taking
turns round by round.  Prints microseconds of CPU time per call, the best
round of each.  Peers (tiktoken, gigatoken, fastokens) are timed where they
are installed (the `bench` extra), built offline from the shipped rank files.

    python3 tools/bench_short_calls.py [--names gpt2,cl100k_base,o200k_base]
"""
import argparse
import os
import random
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # peers on one thread, as pybpe
os.environ.setdefault("FASTOKENS_BPE_THREADS", "1")

import pybpe  # noqa: E402
from pybpe.registry import get_encoding  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(os.path.abspath(pybpe.__file__)), "data")  # the shipped rank files
SHAKESPEARE = os.environ.get("PYBPE_SHAKESPEARE", os.path.join(HERE, "..", "..", "shared", "data", "shakespeare.txt"))
SCHEMES = {"gpt2": "gpt2", "cl100k_base": "gpt4", "o200k_base": "o200k"}


def rank_file(name):
    for folder in (DATA, os.path.join(HERE, "..", "..", "shared", "data")):
        path = os.path.join(folder, name + ".tiktoken")
        if os.path.exists(path):
            return path
    raise SystemExit("no rank file for %s" % name)


def encoders(name):
    """{label: encode(text) -> IDs} of pybpe's methods and the installed peers."""
    enc = get_encoding(name, backend="c")
    out = {"pybpe encode_ordinary": enc.encode_ordinary, "pybpe encode": enc.encode,
           "pybpe encode_to_numpy": enc.encode_to_numpy}
    try:
        import tiktoken
        tk = tiktoken.Encoding(name, pat_str=enc.pat_str, mergeable_ranks=enc.mergeable_ranks,
                               special_tokens=enc.special_tokens)
        out["tiktoken encode_ordinary"] = tk.encode_ordinary
    except ImportError:
        pass
    try:
        import gigatoken
        g = gigatoken.Tokenizer.from_tiktoken(rank_file(name), pretokenizer=SCHEMES[name],
                                              special_tokens=enc.special_tokens)
        out["gigatoken list"] = lambda t: g.encode_batch_list([t], parallel=False)[0]
        out["gigatoken array"] = g.encode
    except ImportError:
        pass
    try:
        import fastokens
        f = fastokens.Tokenizer.from_tiktoken(rank_file(name), pattern=enc.pat_str, special_tokens=enc.special_tokens)
        out["fastokens"] = lambda t: f.encode_ordinary(t).ids
    except ImportError:
        pass
    return enc, out


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
    for name in args.names.split(","):
        enc, fns = encoders(name)
        reference = [enc.encode_ordinary(t) for t in texts[:300]]
        for label, fn in fns.items():
            assert [list(fn(t)) for t in texts[:300]] == reference, label
            for t in texts:
                fn(t)
        best = dict.fromkeys(fns, float("inf"))
        for _ in range(args.rounds):
            for label, fn in fns.items():
                start = time.process_time()
                for t in texts:
                    fn(t)
                best[label] = min(best[label], (time.process_time() - start) / len(texts) * 1e6)
        print("%-12s " % name + ", ".join("%s %.2f" % item for item in best.items()))


if __name__ == "__main__":
    main()
