"""pybpe.distributed: 2 Dask workers against 1, on many copies of Shakespeare.

Writes a corpus of --copies copies of the text spread over --files files into
a temporary folder, then for each worker count (a LocalCluster of worker
processes, one thread each) and --repeat rounds, interleaved (1 worker, 2
workers, 1, 2, ...) so that drift on a shared machine hits both alike:

- count+train: train_on_dask with a byte-level gpt2 tokenizer of --vocab
  tokens (counting on the workers, merging in order, training on the client);
- encode: encode_to_shards of the same files with the trained tokenizer
  (uint16 shards, a fresh folder each run).

Each figure is the job's wall time and the CPU time it cost, per worker
process (time.process_time() on each worker, before and after) and on the
client; the speed-up is 1 worker's median wall time over 2 workers'.  The
one-process baseline (train() over the files' lines, encode_file on each
file, in this process) is measured once per round too, and every result is
checked against it: the same merges, the same IDs (shards concatenated
against encode_file's outputs, by SHA-256).  The load average is printed:
other processes on the machine compete for the same cores, and then wall
time says little, CPU time more (an idle worker's own CPU use is measured
first: the per-worker figures include it).

    .venv/bin/python tools/bench_dask.py /work/shared/data/shakespeare.txt
    .venv/bin/python tools/bench_dask.py CORPUS --copies 16 --files 8 --repeat 3 --blocksize 33554432
"""
import argparse
import hashlib
import os
import shutil
import statistics
import sys
import tempfile
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", help="a UTF-8 text file (shakespeare.txt)")
    parser.add_argument("--copies", type=int, default=16, help="copies of the corpus in all (default 16)")
    parser.add_argument("--files", type=int, default=8, help="files they are spread over (default 8)")
    parser.add_argument("--blocksize", type=int, default=64 << 20, help="partition size in bytes (default 64 MiB)")
    parser.add_argument("--vocab", type=int, default=8000, help="vocabulary size (default 8000)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--workers", default="1,2", help="worker counts to compare (default 1,2)")
    args = parser.parse_args()

    from dask.distributed import Client, LocalCluster

    import pybpe
    from pybpe.distributed import encode_to_shards, train_on_dask

    work = tempfile.mkdtemp(prefix="pybpe-bench-dask-")
    try:
        paths = write_corpus(args.corpus, args.copies, args.files, work)
        size = sum(map(os.path.getsize, paths))
        print("corpus: %d copies of %s in %d files, %.1f MB; blocksize %d; %d cores, load average %s"
              % (args.copies, os.path.basename(args.corpus), len(paths), size / 1e6, args.blocksize,
                 os.cpu_count(), "%.1f %.1f %.1f" % os.getloadavg()))
        options = dict(vocab_size=args.vocab, pretokenizer="gpt2", byte_level=True, special_tokens=["<|endoftext|>"])
        counts = [int(n) for n in args.workers.split(",")]
        results = {("one process", job): [] for job in ("count+train", "encode")}
        results.update({(n, job): [] for n in counts for job in ("count+train", "encode")})
        expected = None
        clusters = {n: LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0")
                    for n in counts}
        clients = {n: Client(clusters[n]) for n in counts}
        try:
            for n in counts:  # warm: every worker imports pybpe and builds its C extension's module once
                clients[n].run(lambda: __import__("pybpe.distributed") and None)
            # What an idle worker process costs (Dask's event loop, heartbeats, system monitor):
            # the CPU figures below include this much per second of wall time.
            idle = measured(clients[counts[-1]], lambda: time.sleep(5))
            print("an idle worker process: %.3f CPU s per wall s" % (statistics.mean(idle[1]) / idle[0]))
            for round_ in range(args.repeat):
                # one process
                tok = pybpe.BPETokenizer(**options)
                t0, c0 = time.perf_counter(), time.process_time()
                tok.train(lines(paths))
                results["one process", "count+train"].append((time.perf_counter() - t0, [], time.process_time() - c0))
                enc = tok.to_encoding()
                out = os.path.join(work, "one")
                os.makedirs(out, exist_ok=True)
                t0, c0 = time.perf_counter(), time.process_time()
                for k, path in enumerate(paths):
                    enc.encode_file(path, os.path.join(out, "%05d.bin" % k))
                results["one process", "encode"].append((time.perf_counter() - t0, [], time.process_time() - c0))
                digest = sha256_of(os.path.join(out, name) for name in sorted(os.listdir(out)))
                if expected is None:
                    expected = (tok.merges, digest)
                assert (tok.merges, digest) == expected
                shutil.rmtree(out)
                for n in counts:
                    client = clients[n]
                    tok = pybpe.BPETokenizer(**options)
                    figures = measured(client, lambda: train_on_dask(tok, paths, client=client,
                                                                     blocksize=args.blocksize))
                    results[n, "count+train"].append(figures)
                    assert tok.merges == expected[0], "train_on_dask's merges differ from train()'s"
                    out = os.path.join(work, "shards-%d" % n)
                    index = {}
                    figures = measured(client, lambda: index.update(encode_to_shards(
                        tok, paths, out, client=client, blocksize=args.blocksize)))
                    results[n, "encode"].append(figures)
                    got = sha256_of(os.path.join(out, s["shard"]) for s in index["shards"])
                    assert got == expected[1], "encode_to_shards' IDs differ from encode_file's"
                    shutil.rmtree(out)
                print("round %d done (load average %.1f)" % (round_ + 1, os.getloadavg()[0]), flush=True)
        finally:
            for n in counts:
                clients[n].close()
                clusters[n].close()
        report(results, counts, size)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def write_corpus(corpus, copies, files, folder):
    with open(corpus, encoding="utf-8") as f:
        text = f.read()
    if not text.endswith("\n"):
        text += "\n"
    paths = []
    for k in range(files):
        share = copies // files + (k < copies % files)
        if share:
            paths.append(os.path.join(folder, "part-%03d.txt" % k))
            with open(paths[-1], "w", encoding="utf-8") as f:
                for _ in range(share):
                    f.write(text)
    return paths


def lines(paths):
    for path in paths:
        with open(path, encoding="utf-8", newline="\n") as f:
            yield from f


def sha256_of(paths):
    h = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def measured(client, job):
    """(wall seconds, [CPU seconds of each worker process], client CPU seconds) of job()."""
    before = client.run(time.process_time)
    t0, c0 = time.perf_counter(), time.process_time()
    job()
    wall, own = time.perf_counter() - t0, time.process_time() - c0
    after = client.run(time.process_time)
    return wall, [after[w] - before[w] for w in sorted(before)], own


def report(results, counts, size):
    print()
    print("| job | run on | wall s (median, min) | MB/s | CPU s per worker (median) | client CPU s | speed-up |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for job in ("count+train", "encode"):
        base = None
        for who in ["one process"] + counts:
            runs = results[who, job]
            walls = [r[0] for r in runs]
            wall = statistics.median(walls)
            per_worker = [statistics.median(r[1][k] for r in runs) for k in range(len(runs[0][1]))]
            client = statistics.median(r[2] for r in runs)
            if who == counts[0]:
                base = wall
            speedup = "" if who == "one process" or base is None else "%.2fx" % (base / wall)
            print("| %s | %s | %.2f, %.2f | %.0f | %s | %.2f | %s |" % (
                job, who if who == "one process" else "%d worker%s" % (who, "s" * (who > 1)),
                wall, min(walls), size / wall / 1e6, ", ".join("%.2f" % c for c in per_worker) or "-",
                client, speedup))


if __name__ == "__main__":
    sys.exit(main())
