"""The allocation-failure sweep: `make faults`.

Every allocation the pybpe C extension makes is made to fail, one at a time,
and each failure must come back as a MemoryError that leaves the objects
working.  tools/failalloc.c (an LD_PRELOAD shim) fails the n-th malloc,
calloc or realloc called from the extension's own code; this driver, for each
workload below and each n = 1, 2, ... until a run completes with no failure
injected:

  1. arms the shim for n and runs the workload;
  2. checks the outcome: MemoryError (the failure surfaced), or the right
     result (the extension absorbed the failure, e.g. an optional cache);
     any other exception or a wrong result is a finding;
  3. for workloads that change an object (train, load into...), checks the
     object kept its previous state;
  4. disarms and runs the workload again on the same objects: it must now
     give the right result;
  5. before the next n, after a garbage collection, counts the blocks the
     extension allocated and never freed: more than before is a leak on the
     failure path.

A crash is a finding too: each workload runs in a child process that reports
every n as it goes, and the sweep resumes past the n that killed it.

    python tools/faults.py [--quick] [--shim tools/bin/failalloc.so] [WORKLOAD ...]

--quick (CI) sweeps every n of the small workloads and every 7th n (plus the
last ones) of the rest.  Prints, per workload, the allocations seen, faults
injected and their outcomes; exits 1 on any finding.  Linux with glibc only
(the shim calls glibc's __libc_malloc family).
"""
import argparse
import ctypes
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SHIM = os.path.join(ROOT, "tools", "bin", "failalloc.so")


# -- the workloads --------------------------------------------------------------------
# Each is a function(ctx) -> (run, state[, prepare]): run() does the work and
# returns a comparable result; state() (or None) returns what must not change
# when run() fails; prepare(), called before each armed run, puts the object
# back in a state that run() changes (so a half-done change is visible).
# Everything run() needs is built first, with no fault armed.

def _hamlet(lines=300):
    with open(os.path.join(ROOT, "pybpe", "data", "hamlet.txt"), encoding="utf-8") as f:
        return f.read().splitlines()[:lines]


def _tokenizer_state(tok):
    """Everything a failed train must leave as it was: the public views, the
    core objects' contents, and what encoding gives (not from the word cache)."""
    def state():
        _clear_word_cache(tok)
        core = tok._state
        return (tok.vocab, tok.merges, list(core.merge_counts), core.symtab.tokens(), list(core.merge_ids),
                tok.encode("the king's ghost"))
    return state


def _clear_word_cache(tok):
    """Forget the words a tokenizer encoded, so encoding them again runs C."""
    tok._state.word_cache.clear()


def _train(options, vocab_size):
    def make(ctx):
        import pybpe

        tok = pybpe.BPETokenizer(vocab_size=vocab_size, backend="c", **options)
        corpus = _hamlet(150) + ["naïve café 中文 \U0001f600 <|endoftext|> x"]

        def prepare():  # the state a failed train must leave
            tok.train(["an earlier state: to be or not to be"])

        def run():  # (encoding after training is another workload: its failure is not train's)
            tok.train(corpus)
            return tok.vocab, tok.merges, tok._state.merge_counts, tok._state.symtab.tokens()

        return run, _tokenizer_state(tok), prepare
    return make


def _trained(options, vocab_size=200):
    import pybpe

    tok = pybpe.BPETokenizer(vocab_size=vocab_size, backend="c", **options)
    tok.train(_hamlet(400))
    return tok


def _encode(options, how):
    def make(ctx):
        tok = _trained(options)
        text = " ".join(_hamlet(60)) + " naïve \U0001f600 zzzqqq"
        if how == "short":
            def run():
                _clear_word_cache(tok)  # else the words come from the cache, not from C
                return [tok.encode(w) for w in text.split()[:40]]
            return run, None
        if how == "long":
            return (lambda: tok.encode(text)), None
        texts = _hamlet(200)[100:] + [text]

        def run():
            _clear_word_cache(tok)
            return tok.encode_batch(texts, num_threads=2)
        return run, None
    return make


def _count_words(options):
    def make(ctx):
        import pybpe

        corpus = _hamlet(300)
        return (lambda: pybpe.count_words(corpus, backend="c", **options)), None
    return make


def _train_from_counts(ctx):
    import pybpe

    tok = pybpe.BPETokenizer(vocab_size=150, backend="c", end_of_word="symbol", min_frequency=2)
    counts = tok.count_words(_hamlet(300))

    def run():
        tok.train_from_counts(counts)
        return tok.vocab, tok.merges

    return run, None


def _load_model(options):
    def make(ctx):
        import pybpe

        path = os.path.join(ctx["tmp"], "model.json")
        _trained(options, 300 if options.get("byte_level") else 150).save(path)

        def run():
            tok = pybpe.load(path, backend="c")
            return tok.vocab, tok.merges, tok.encode("the king's ghost, naïve")

        return run, None
    return make


def _encoding_ranks(name):
    import pybpe

    enc = pybpe.get_encoding(name, backend="python")
    return enc.mergeable_ranks, enc.pat_str, enc.special_tokens


def _encoding_build(name, with_merges):
    def make(ctx):
        import pybpe

        if name == "toy":
            enc = _trained(dict(byte_level=True, pretokenizer="gpt2"), 400).to_encoding("toy")
            ranks, pat, specials = enc.mergeable_ranks, enc.pat_str, {"<|endoftext|>": 400}
            merges = enc.merges if with_merges else None
        else:
            (ranks, pat, specials), merges = _encoding_ranks(name), None

        def run():
            enc = pybpe.Encoding(name, pat_str=pat, mergeable_ranks=ranks, special_tokens=specials,
                                 merges=merges, backend="c")
            return enc.encode("the king's ghost, naïve café \U0001f600 <|endoftext|>", allowed_special="all")

        return run, None
    return make


def _encoding_encode(name, how):
    def make(ctx):
        import pybpe

        enc = pybpe.get_encoding(name, backend="c")
        text = "\n".join(_hamlet(120)) + " naïve café \U0001f600 12345 <|endoftext|> tail"
        if how == "encode":
            return (lambda: enc.encode(text, allowed_special="all")), None
        if how == "ordinary":
            return (lambda: enc.encode_ordinary(text[:400])), None
        if how == "numpy":
            return (lambda: enc.encode_to_numpy(text, allowed_special="all").tolist()), None
        if how == "batch":
            texts = [text[i:i + 700] for i in range(0, len(text), 700)]
            return (lambda: enc.encode_ordinary_batch(texts, num_threads=2)), None
        src, out = os.path.join(ctx["tmp"], "in.txt"), os.path.join(ctx["tmp"], "out.bin")
        with open(src, "w", encoding="utf-8") as f:
            f.write(text * 3)

        def run():
            n = enc.encode_file(src, out, document_separator="\n\n", chunk_size=4096)
            with open(out, "rb") as f:
                return n, f.read()

        return run, None
    return make


def _loaders(ctx):
    import pybpe
    from pybpe import formats

    enc = _trained(dict(byte_level=True, pretokenizer="gpt2"), 350).to_encoding("toy")
    tmp = ctx["tmp"]
    paths = [os.path.join(tmp, n) for n in ("toy.tiktoken", "vocab.json", "merges.txt", "tokenizer.json")]
    formats.dump_tiktoken_bpe(enc.mergeable_ranks, paths[0])
    formats.dump_gpt2_bpe(enc, paths[1], paths[2])
    formats.dump_hf_tokenizer(enc, paths[3])
    text = "the king's ghost, naïve café"

    def run():
        ranks = formats.load_tiktoken_bpe(paths[0])
        a = pybpe.Encoding("t", pat_str=enc.pat_str, mergeable_ranks=ranks, special_tokens={}, backend="c")
        b = formats.load_gpt2_bpe(paths[1], paths[2], backend="c")
        c = formats.load_hf_tokenizer(paths[3], backend="c")
        return a.encode(text), b.encode(text), c.encode(text)

    return run, None


WORKLOADS = {
    "train-chapter": _train(dict(), 150),
    "train-symbol": _train(dict(end_of_word="symbol", max_token_length=4, min_frequency=2), 150),
    "train-bytes": _train(dict(byte_level=True, pretokenizer="gpt2", special_tokens=["<|endoftext|>"]), 320),
    "train-from-counts": _train_from_counts,
    "count-words": _count_words(dict()),
    "count-words-regex": _count_words(dict(byte_level=True, pretokenizer="gpt2")),
    "encode-short": _encode(dict(), "short"),
    "encode-long": _encode(dict(), "long"),
    "encode-bytes-long": _encode(dict(byte_level=True, pretokenizer=None), "long"),
    "encode-batch": _encode(dict(), "batch"),
    "load-model": _load_model(dict()),
    "load-model-bytes": _load_model(dict(byte_level=True, pretokenizer="gpt2")),
    "encoding-build-gpt2": _encoding_build("gpt2", False),
    "encoding-build-merges": _encoding_build("toy", True),
    "encoding-encode": _encoding_encode("gpt2", "encode"),
    "encoding-ordinary": _encoding_encode("cl100k_base", "ordinary"),
    "encoding-batch": _encoding_encode("cl100k_base", "batch"),
    "encoding-o200k": _encoding_encode("o200k_base", "encode"),
    "encoding-numpy": _encoding_encode("cl100k_base", "numpy"),
    "encoding-file": _encoding_encode("gpt2", "file"),
    "loaders": _loaders,
}


# -- child: sweep one workload from n = start ---------------------------------------------

def _extension_range():
    """[lo, hi) of every mapping of the pybpe extension in this process."""
    import pybpe._bpe_c

    real = os.path.realpath(pybpe._bpe_c.__file__)
    lo = hi = None
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and os.path.realpath(fields[5]) == real:
                a, b = (int(x, 16) for x in fields[0].split("-"))
                lo, hi = (a, b) if lo is None else (min(lo, a), max(hi, b))
    if lo is None:
        raise RuntimeError("the pybpe extension is not mapped in this process")
    return lo, hi


def child(name, start, stride, shim):
    lib = ctypes.CDLL(shim)
    lib.failalloc_arm.argtypes = [ctypes.c_size_t, ctypes.c_size_t, ctypes.c_ulonglong]
    lib.failalloc_counted.restype = lib.failalloc_injected.restype = ctypes.c_ulonglong
    lib.failalloc_live.restype = ctypes.c_longlong
    lo, hi = _extension_range()
    emit = lambda **kw: print(json.dumps(kw), flush=True)  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        run, state, prepare = (WORKLOADS[name]({"tmp": tmp}) + (None,))[:3]
        lib.failalloc_arm(lo, hi, 0)
        expected = run()
        total = lib.failalloc_counted()
        emit(event="total", allocations=total)
        n = start
        baseline = None
        while True:
            if prepare:
                prepare()
            before = state() if state else None
            # The extension's live blocks, with nothing of a failed call left
            # to collect: a failure path that leaks makes this grow.
            gc.collect()
            live = lib.failalloc_live()
            if baseline is None or live < 0:
                baseline = live
            elif live > baseline:
                emit(event="finding", n=n - stride if stride > 1 else n - 1,
                     problem="%d blocks allocated by the extension were never freed" % (live - baseline))
                baseline = live
            emit(event="start", n=n)
            lib.failalloc_arm(lo, hi, n)
            try:
                got, error = run(), None
            except BaseException as exc:  # noqa: BLE001 -- judged below
                got, error = None, exc
            lib.failalloc_disarm()
            injected = lib.failalloc_injected()
            if not injected:
                if error is not None or got != expected:
                    emit(event="finding", n=n, problem="no fault injected, yet %s" % (
                        "%s: %s" % (type(error).__name__, error) if error else "a different result"))
                emit(event="end", n=n)
                return
            if isinstance(error, MemoryError):
                outcome = "MemoryError"
            elif error is not None:
                outcome = "finding"
                emit(event="finding", n=n, problem="%s instead of MemoryError: %s" % (type(error).__name__, error))
            elif got == expected:
                outcome = "absorbed"
            else:
                outcome = "finding"
                emit(event="finding", n=n, problem="the failure was ignored: wrong result")
            if error is not None and state and state() != before:
                emit(event="finding", n=n, problem="%s (%s) left the object changed" % (type(error).__name__, error))
            error = None  # (its traceback would keep the failed call's objects alive)
            try:
                retry = run()
            except BaseException as exc:  # noqa: BLE001
                emit(event="finding", n=n, problem="retry raised %s: %s" % (type(exc).__name__, exc))
            else:
                if retry != expected:
                    emit(event="finding", n=n, problem="retry gave a different result")
            emit(event="done", n=n, outcome=outcome)
            if n >= total or stride == 1:
                n += 1
            else:  # quick mode: every stride-th allocation, then the last few
                n = min(n + stride, max(total - 2, n + 1))


# -- parent: every workload, crash-resistant -------------------------------------------------

def sweep(name, args):
    """Run workload `name` in children until its sweep ends; a summary dict."""
    summary = {"allocations": 0, "injected": 0, "MemoryError": 0, "absorbed": 0, "findings": [], "crashes": 0}
    start = 1
    stride = args.stride if name not in SMALL else 1
    env = dict(os.environ, LD_PRELOAD=args.shim, PYBPE_BACKEND="c")
    while True:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name, "--start", str(start),
                               "--stride", str(stride), "--shim", args.shim],
                              env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        last_start, ended = None, False
        for line in proc.stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            kind = event["event"]
            if kind == "total":
                summary["allocations"] = event["allocations"]
            elif kind == "start":
                last_start = event["n"]
            elif kind == "done":
                summary["injected"] += 1
                if event["outcome"] in ("MemoryError", "absorbed"):
                    summary[event["outcome"]] += 1
            elif kind == "finding":
                summary["findings"].append("n=%d: %s" % (event["n"], event["problem"]))
            elif kind == "end":
                ended = True
        if ended and proc.returncode == 0:
            return summary
        if last_start is None:
            summary["findings"].append("the workload failed before any fault was armed (exit %d): %s"
                                       % (proc.returncode, proc.stderr.strip()[-2000:]))
            return summary
        summary["crashes"] += 1
        summary["injected"] += 1
        summary["findings"].append("n=%d: the process died (exit %d): %s" % (
            last_start, proc.returncode, proc.stderr.strip()[-1500:]))
        start = last_start + 1


# Workloads whose every allocation is swept even in --quick mode.
SMALL = {"count-words", "count-words-regex", "encoding-o200k", "encoding-numpy", "encode-short", "encode-long", "encode-bytes-long", "encode-batch", "encoding-build-gpt2",
         "encoding-encode", "encoding-ordinary", "encoding-batch", "encoding-file"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("workloads", nargs="*", help="default: all of %s" % ", ".join(WORKLOADS))
    parser.add_argument("--shim", default=DEFAULT_SHIM, help="the built tools/failalloc.c")
    parser.add_argument("--quick", action="store_true", help="every 7th allocation of the larger workloads")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--stride", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.shim = os.path.abspath(args.shim)
    if args.child:
        return child(args.child, args.start, args.stride, args.shim)
    if not os.path.exists(args.shim):
        parser.error("no shim at %s: build it with `make faults`" % args.shim)
    if args.quick:
        args.stride = 7
    names = args.workloads or list(WORKLOADS)
    unknown = set(names) - set(WORKLOADS)
    if unknown:
        parser.error("unknown workloads: %s" % ", ".join(sorted(unknown)))
    totals = dict(injected=0, MemoryError=0, absorbed=0, findings=0)
    failed = 0
    print("%-22s %11s %9s %12s %9s %9s %6s" % ("workload", "allocations", "injected", "MemoryError", "absorbed",
                                               "findings", "time"), flush=True)
    for name in names:
        t0 = time.monotonic()
        s = sweep(name, args)
        print("%-22s %11d %9d %12d %9d %9d %5.1fs" % (name, s["allocations"], s["injected"], s["MemoryError"],
                                                    s["absorbed"], len(s["findings"]), time.monotonic() - t0),
              flush=True)
        for problem in s["findings"][:10]:
            print("    FINDING %s" % problem, flush=True)
        failed += bool(s["findings"])
        for key in ("injected", "MemoryError", "absorbed"):
            totals[key] += s[key]
        totals["findings"] += len(s["findings"])
    print("faults: %d injected, %d MemoryError, %d absorbed, %d findings" % (
        totals["injected"], totals["MemoryError"], totals["absorbed"], totals["findings"]))
    print("faults: %d passed, %d failed" % (len(names) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
