"""WordPiece training time: pybpe (C and pure-Python cores) beside pybpe's BPE
and Hugging Face tokenizers' WordPieceTrainer, on one corpus.

    python3 tools/bench_wordpiece.py ../shared/data/shakespeare.txt --vocab-size 8000 --repeat 3

Every job reads the file's lines and trains to --vocab-size entries, in this
process, --repeat times interleaved; the median wall time is printed, with
the time spent after word counting where pybpe can say (train_from_counts).
Jobs:
  pybpe BPE (C)            BPETokenizer(), the chapter flavour, .train(lines)
  pybpe WordPiece (C)      WordPieceTokenizer(backend="c").train(lines)
  pybpe WordPiece (Python) the same on the pure-Python core
  HF WordPieceTrainer      BertNormalizer + BertPreTokenizer + WordPiece model,
                           train_from_iterator(lines); RAYON_NUM_THREADS as set
HF's WordPieceTrainer is not the likelihood-scored algorithm: it runs its BPE
trainer (most frequent pair first) with the "##" continuation prefix, so its
vocabulary differs from pybpe's WordPiece; the last lines say how much (shared
tokens, and tokens per word of each on the file's last tenth of lines).
Not a test and not a dependency: HF tokenizers is needed only for its rows.
"""
import argparse
import statistics
import time

import pybpe
from pybpe.examples.wordpiece_vs_bpe import split_held_out
from pybpe.wordpiece import WordPieceTokenizer


def pybpe_bpe(lines, size):
    tok = pybpe.BPETokenizer(size, backend="c")
    tok.train(lines)
    return tok, None


def pybpe_wordpiece(backend):
    def job(lines, size):
        tok = WordPieceTokenizer(size, backend=backend)
        counts = tok.count_words(lines)
        start = time.perf_counter()
        tok.train_from_counts(counts)
        return tok, time.perf_counter() - start
    return job


def hf_wordpiece(lines, size):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=size, special_tokens=list(pybpe.wordpiece.DEFAULT_SPECIAL_TOKENS),
                                        show_progress=False)
    tok.train_from_iterator(lines, trainer)
    return tok, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus")
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with open(args.corpus, encoding="utf-8") as f:
        text = f.read()
    lines = text.splitlines()
    jobs = {"pybpe BPE (C)": pybpe_bpe, "pybpe WordPiece (C)": pybpe_wordpiece("c"),
            "pybpe WordPiece (Python)": pybpe_wordpiece("python")}
    try:
        import tokenizers  # noqa: F401
        jobs["HF WordPieceTrainer"] = hf_wordpiece
    except ImportError:
        print("(HF tokenizers is not installed: its row is left out)")
    times = {name: [] for name in jobs}
    inner = {name: [] for name in jobs}
    made = {}
    for _ in range(args.repeat):
        for name, job in jobs.items():
            start = time.perf_counter()
            made[name], after_counting = job(lines, args.vocab_size)
            times[name].append(time.perf_counter() - start)
            if after_counting is not None:
                inner[name].append(after_counting)
    print("%-26s %10s %22s" % ("job", "median s", "of which training s"))
    for name in jobs:
        extra = "%.3f" % statistics.median(inner[name]) if inner[name] else "-"
        print("%-26s %10.3f %22s" % (name, statistics.median(times[name]), extra))
    if "HF WordPieceTrainer" in made:
        ours, hf = made["pybpe WordPiece (C)"], made["HF WordPieceTrainer"]
        hf_vocab = hf.get_vocab()
        print("vocabulary: pybpe WordPiece %d, HF %d, shared %d"
              % (ours.vocab_size, len(hf_vocab), len(set(ours.vocab) & set(hf_vocab))))
        held = split_held_out(text)[1]
        words = len(ours.pre_tokenize(held))
        print("tokens per held-out word: pybpe WordPiece %.3f, HF WordPiece %.3f"
              % (len(ours.encode(held)) / words, len(hf.encode(held, add_special_tokens=False).ids) / words))


if __name__ == "__main__":
    main()
