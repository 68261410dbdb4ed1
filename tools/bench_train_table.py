"""Whole-job training benchmark: pybpe against the peers, as a Markdown table.

Each trainer runs in its OWN subprocess (so peak RSS is its own), --repeat
times, the trainers interleaved round by round (every trainer once, then
every trainer again, ...) so that drift on a shared machine hits all alike;
the table gives the median wall time of the job -- from the text file on disk
to a trained tokenizer, imports excluded -- and the largest peak RSS of the
runs (os.wait4's ru_maxrss, which includes the interpreter and the imports).
Single thread sets RAYON_NUM_THREADS=1 (HF tokenizers, gigatoken, rustbpe),
num_threads=1 (sentencepiece), n_threads=1 (YouTokenToMe); "default" leaves
each at its own default.  pybpe is single-threaded either way.  Peers that are
not installed are listed as unavailable.  pybpe.reference (the chapter's
literal algorithm) runs on a 100 KB slice for 200 merges only.

The byte-level rows are one job: UTF-8 bytes as the 256 initial symbols, the
GPT-2 pattern cutting the text into pieces, merges until the vocabulary
holds --sizes entries -- pybpe (BPETokenizer(byte_level=True,
pretokenizer="gpt2")), gigatoken.train_bpe (its own GPT-2 style
pre-tokenizer; no pattern argument), rustbpe (Tokenizer.train_from_iterator
with the gpt2 pattern, fed the file's lines) and HF tokenizers (ByteLevel
pre-tokenizer, whose regex is GPT-2's).  "pybpe (C)" without "byte-level" is
the chapter flavour (str.split() words, end-of-word marker).

    python3 tools/bench_train_table.py ../shared/data/shakespeare.txt
    python3 tools/bench_train_table.py CORPUS --sizes 8000 --repeat 3 --threads single

Peers: the `bench` extra (pip install -e '.[bench]'), plus youtokentome
(needs Cython installed first and `pip install --no-build-isolation
youtokentome`).  Not a runtime dependency of pybpe.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# -- the trainers (each runs inside a child process) -------------------------------------------

def _import_backend(backend):
    """Imports pybpe and its backend module (pybpe.core loads the C one on
    first use): imports are not timed, for pybpe as for the peers, whose
    `import` loads their compiled module.  (Where bytecode is not cached,
    PYTHONDONTWRITEBYTECODE, that first use compiled ~1,000 lines of Python:
    ~6 ms inside the timed job.)"""
    import pybpe
    from pybpe import core

    core.get(backend)
    return pybpe


def _pybpe(backend):
    def run(path, vocab, threads):
        pybpe = _import_backend(backend)

        t0 = time.perf_counter()
        tok = pybpe.BPETokenizer(vocab_size=vocab, backend=backend)
        with open(path, encoding="utf-8") as f:
            tok.train(f)
        return time.perf_counter() - t0, tok.vocab_size
    return run


def _pybpe_byte_level(path, vocab, threads):
    pybpe = _import_backend("c")

    t0 = time.perf_counter()
    tok = pybpe.BPETokenizer(vocab_size=vocab, byte_level=True, pretokenizer="gpt2", backend="c")
    with open(path, encoding="utf-8") as f:
        tok.train(f)
    return time.perf_counter() - t0, tok.vocab_size


def _gigatoken(path, vocab, threads):
    import gigatoken

    t0 = time.perf_counter()
    ranks, _merges = gigatoken.train_bpe(path, vocab, [])
    return time.perf_counter() - t0, len(ranks)


def _rustbpe(path, vocab, threads):
    import rustbpe
    from pybpe.patterns import PRESETS

    t0 = time.perf_counter()
    tok = rustbpe.Tokenizer()
    with open(path, encoding="utf-8") as f:
        tok.train_from_iterator(f, vocab, pattern=PRESETS["gpt2"])
    return time.perf_counter() - t0, tok.vocab_size


def _pybpe_reference(path, vocab, threads):
    import pybpe
    from pybpe import reference

    with open(path, encoding="utf-8") as f:
        text = f.read(100_000)
    t0 = time.perf_counter()
    tok = pybpe.BPETokenizer(backend="python")
    counts = tok.count_words([text])
    words = [(tuple(tok.flavour.units(w)), n) for w, n in counts.items()]
    base = tok.flavour.base_vocab(set("".join(counts)))
    vocab_out, _ = reference.learn(words, base, len(base) + 200)
    return time.perf_counter() - t0, len(vocab_out)


def _hf(byte_level):
    def run(path, vocab, threads):
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        t0 = time.perf_counter()
        tok = Tokenizer(models.BPE())
        if byte_level:
            tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
            trainer = trainers.BpeTrainer(vocab_size=vocab, show_progress=False,
                                          initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        else:
            tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
            trainer = trainers.BpeTrainer(vocab_size=vocab, show_progress=False)
        tok.train([path], trainer)
        return time.perf_counter() - t0, tok.get_vocab_size()
    return run


def _sentencepiece(path, vocab, threads):
    import sentencepiece as spm

    with tempfile.TemporaryDirectory() as tmp:
        options = dict(input=path, model_prefix=os.path.join(tmp, "m"), vocab_size=vocab,
                       model_type="bpe", character_coverage=1.0, hard_vocab_limit=False,
                       input_sentence_size=0, minloglevel=2)
        if threads == "single":
            options["num_threads"] = 1
        t0 = time.perf_counter()
        spm.SentencePieceTrainer.train(**options)
        seconds = time.perf_counter() - t0
        size = spm.SentencePieceProcessor(model_file=os.path.join(tmp, "m.model")).get_piece_size()
    return seconds, size


def _youtokentome(path, vocab, threads):
    import youtokentome as yttm

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        bpe = yttm.BPE.train(data=path, model=os.path.join(tmp, "m.yttm"), vocab_size=vocab,
                             n_threads=1 if threads == "single" else -1)
        return time.perf_counter() - t0, bpe.vocab_size()


TRAINERS = {
    "pybpe (C)": (_pybpe("c"), "pybpe._bpe_c"),
    "pybpe (Python)": (_pybpe("python"), "pybpe"),
    "pybpe (C), byte-level gpt2": (_pybpe_byte_level, "pybpe._bpe_c"),
    "gigatoken, byte-level": (_gigatoken, "gigatoken"),
    "rustbpe, byte-level gpt2": (_rustbpe, "rustbpe"),
    "HF tokenizers, WhitespaceSplit": (_hf(False), "tokenizers"),
    "HF tokenizers, ByteLevel": (_hf(True), "tokenizers"),
    "sentencepiece BPE": (_sentencepiece, "sentencepiece"),
    "YouTokenToMe": (_youtokentome, "youtokentome"),
    "pybpe.reference (100 KB, 200 merges)": (_pybpe_reference, "pybpe"),
}


def child(name, path, vocab, threads):
    """Entry point inside the subprocess: run once, print JSON on stdout."""
    seconds, size = TRAINERS[name][0](path, vocab, threads)
    print(json.dumps({"seconds": seconds, "vocab": size}))


# -- the parent: subprocesses, medians, the table ---------------------------------------------

def available(module):
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def run_once(name, path, vocab, threads):
    """(seconds, entries, peak RSS in MB) of one child (RSS from os.wait4), or None."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if threads == "single":
        env.update(RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", name, path,
                                 str(vocab), threads], stdout=out, stderr=err, env=env, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            sys.stderr.write("%s failed:\n%s\n" % (name, err.read().decode(errors="replace")[-2000:]))
            return None
        result = json.loads(out.read().decode().strip().splitlines()[-1])
    return result["seconds"], result["vocab"], usage.ru_maxrss / 1024.0  # KB -> MB on Linux


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?")
    parser.add_argument("--sizes", default="8000,30000")
    parser.add_argument("--threads", default="single,default")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated trainer names (substrings)")
    parser.add_argument("--child", nargs=4, metavar=("NAME", "PATH", "VOCAB", "THREADS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        name, path, vocab, threads = args.child
        return child(name, path, int(vocab), threads)
    if not args.corpus:
        parser.error("give the corpus path")
    path = os.path.abspath(args.corpus)
    names = [n for n in TRAINERS if not args.only or any(s in n for s in args.only.split(","))]
    jobs, rows = [], []
    for threads in args.threads.split(","):
        for vocab in map(int, args.sizes.split(",")):
            for name in names:
                if name.startswith("pybpe.reference") and (vocab != 8000 or threads != "single"):
                    continue  # once is plenty: it ignores both settings
                if name.startswith("pybpe") and threads != "single":
                    continue  # single-threaded: the same numbers again
                jobs.append((name, vocab, threads))
    # Round by round: every job once, then every job again, so that a change
    # of load on a shared machine hits every trainer alike.
    results = {job: [] for job in jobs if available(TRAINERS[job[0]][1])}
    failed = set()
    for _ in range(args.repeat):
        for job in results:
            if job in failed:
                continue
            got = run_once(job[0], path, job[1], job[2])
            if got is None:
                failed.add(job)
                continue
            results[job].append(got)
            sys.stderr.write("%-40s %6d %-8s %.3f s\n" % (job + (got[0],)))
    for job in jobs:
        name, vocab, threads = job
        if job not in results:
            rows.append(job + ("unavailable (not installed)",))
        elif job in failed:
            rows.append(job + ("failed (see stderr)",))
        else:
            runs = results[job]
            rows.append(job + ((statistics.median(r[0] for r in runs), runs[-1][1], max(r[2] for r in runs)),))
    print("%s, %s (%s, %.1f MB), whole job (file -> trained tokenizer), median of %d runs, "
          "each in its own process, trainers interleaved round by round\n"
          % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.path.basename(path), path,
             os.path.getsize(path) / 1e6, args.repeat))
    print("| trainer | vocab | threads | seconds | peak RSS (MB) | entries | / pybpe (C) | / gigatoken |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    ours = {(v, t): got[0] for n, v, t, got in rows if n == "pybpe (C)" and not isinstance(got, str)}
    giga = {(v, t): got[0] for n, v, t, got in rows if n.startswith("gigatoken") and not isinstance(got, str)}
    for name, vocab, threads, got in rows:
        if isinstance(got, str):
            print("| %s | %d | %s | %s | | | | |" % (name, vocab, threads, got))
            continue
        seconds, size, rss = got
        ratios = []
        for base in (ours.get((vocab, "single")), giga.get((vocab, threads))):
            ok = base and not name.startswith("pybpe.reference")
            ratios.append("%.2fx" % (seconds / base) if ok else "")
        shown_vocab = "200 merges" if name.startswith("pybpe.reference") else str(vocab)
        print("| %s | %s | %s | %.3f | %.0f | %d | %s | %s |" % (name, shown_vocab, threads, seconds, rss,
                                                                size, *ratios))


if __name__ == "__main__":
    main()
