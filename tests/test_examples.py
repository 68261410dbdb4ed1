"""The book companion: csrc/examples (Chapter 11 listings 061-066, section 11.8's 067) and the chapter trace.

The seven C programs are built against the core -- through their Makefile when
`make` exists, straight with the C compiler otherwise -- into a temporary
folder, run, and their output is checked against answers worked out *here*:
by hand for 061/062/065/066, with pybpe.reference (the literal algorithm) for
the pair counts of 063 and the training run of 064.  Nothing is compared with
a saved copy of a program's own output.  `python -m pybpe.examples.chapter_trace`
is checked against SPEC §1's worked trace on every backend.
"""
import os
import re
import shutil
import subprocess
import sys
from ast import literal_eval
from collections import Counter
from pathlib import Path

import pytest

import pybpe
from pybpe import core as backends, reference
from pybpe.examples import wordpiece_vs_bpe

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "csrc" / "examples"
PROGRAMS = ["061_char_tokenizer", "062_word_tokenizer", "063_bpe_trace",
            "064_bpe_training", "065_apply_merges", "066_pipeline", "067_wordpiece"]
CWARN = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O2"]


# -- building and running the programs -------------------------------------------------

def c_compiler():
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def build(cc, out):
    """Build every program into `out`; the compiler's complaint on failure."""
    if shutil.which("make"):
        jobs = "-j%d" % (os.cpu_count() or 1)
        commands = [["make", "-s", jobs, "-C", str(EXAMPLES), "all", "BIN=%s" % out, "CC=%s" % cc]]
    else:
        core = sorted(str(p) for p in (ROOT / "csrc").glob("*.c"))
        commands = [[cc, *CWARN, "-I%s" % (ROOT / "csrc"), "-o", str(out / name),
                     str(EXAMPLES / (name + ".c")), *core] for name in PROGRAMS]
    for command in commands:
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            pytest.fail("building the examples failed:\n%s\n%s%s"
                        % (" ".join(command), done.stdout, done.stderr))


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory):
    if not EXAMPLES.is_dir():
        pytest.skip("csrc/examples is not here (the tests run outside the source tree)")
    cc = c_compiler()
    if cc is None:
        pytest.skip("no C compiler (cc, gcc or clang) on PATH: the C examples cannot be built")
    out = tmp_path_factory.mktemp("examples-bin")
    build(cc, out)
    return out


def run(bin_dir, name):
    done = subprocess.run([str(bin_dir / name)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, "%s exited %d:\n%s" % (name, done.returncode, done.stderr)
    assert done.stderr == ""
    return done.stdout


def after(text, marker):
    """The part of `text` after the first line containing `marker`."""
    assert marker in text, "%r not in output:\n%s" % (marker, text)
    return text.split(marker, 1)[1].split("\n", 1)[1]


def ids_line(text, label="ids:"):
    """The list printed on the first line starting with `label`."""
    match = re.search(r"^%s\s*(\[[-\d, ]*\])" % re.escape(label), text, re.M)
    assert match, "no %r line in:\n%s" % (label, text)
    return literal_eval(match.group(1))


def table_rows(text):
    """Indented table lines `    l o w _   x5` -> [(['l','o','w','_'], 5)] up to the first other line."""
    rows = []
    for line in text.split("\n"):
        match = re.match(r"^    (\S.*?)\s+x(\d+)$", line)
        if not match:
            break
        rows.append((match.group(1).split(" "), int(match.group(2))))
    return rows


def plain_rows(text):
    """Indented lines `    n e w es t _` -> [['n', 'e', ...], ...] up to the first other line."""
    rows = []
    for line in text.split("\n"):
        if not line.startswith("    ") or line[4:5] == " ":
            break
        rows.append(line.strip().split(" "))
    return rows


# -- 061: character tokenizer -------------------------------------------------------------

def test_061_hello_world_bytes_are_their_ids(bin_dir):
    out = run(bin_dir, "061_char_tokenizer")
    assert ids_line(out) == list(b"hello world") == [104, 101, 108, 108, 111, 32, 119, 111, 114, 108, 100]
    assert "vocabulary size: 256" in out
    assert "length: 11 tokens" in out
    assert 'decoded: "hello world"' in out
    assert "[99, 97, 102, 195, 169]" in out  # "café": the é is two UTF-8 bytes


# -- 062: word tokenizer ------------------------------------------------------------------

SENTENCE = "the cat sat on the mat the dog sat on the rug"


def test_062_vocabulary_grows_in_first_seen_order(bin_dir):
    out = run(bin_dir, "062_word_tokenizer")
    words = SENTENCE.split()
    vocab = list(dict.fromkeys(words))
    # SPEC §5 says "8 distinct words"; the sentence has 7 (the, cat, sat, on,
    # mat, dog, rug) -- the program prints what counting gives.
    assert len(words) == 12 and len(vocab) == 7
    listed = re.findall(r"^\s+(\d+)  (\w+)$", after(out, "vocabulary (first-seen order):"), re.M)
    assert [(int(i), w) for i, w in listed] == list(enumerate(vocab))
    assert ids_line(out) == [vocab.index(w) for w in words]
    assert "distinct words: 7" in out
    assert "tokens: 12" in out
    assert 'token_to_id("bird") = -1' in out
    assert 'encode "the bird sat on the mat": [0, -1, 2, 3, 0, 4]' in out


# -- 063: the BPE trace -------------------------------------------------------------------

TRACE_WORDS = [list(w) + ["_"] for w in "low lower newest widest".split()]


def pair_counts(words):
    """Counter of adjacent pairs, weighted, in first-encountered order (the reference's scan)."""
    counts = Counter()
    for symbols, freq in words:
        for pair in zip(symbols, symbols[1:]):
            counts[pair] += freq
    return counts


def test_063_pair_counts_are_computed_not_copied(bin_dir):
    out = run(bin_dir, "063_bpe_trace")
    assert plain_rows(after(out, "initial symbols")) == TRACE_WORDS
    printed = re.findall(r"^    \((\S+), (\S+)\)\s+(\d+)", after(out, "pair counts"), re.M)
    expected = pair_counts([(w, 1) for w in TRACE_WORDS])
    assert [((a, b), int(c)) for a, b, c in printed] == list(expected.items())
    assert expected["w", "e"] == 2  # the book's hand trace says 1
    tied = [p for p, c in expected.items() if c == 2]
    assert tied == [("l", "o"), ("o", "w"), ("w", "e"), ("e", "s"), ("s", "t"), ("t", "_")]
    assert "tied at 2: 6 pairs (the book lists five): " + " ".join("(%s, %s)" % p for p in tied) in out


def test_063_rule_picks_l_o_and_the_book_path_merges_es_then_est(bin_dir):
    out = run(bin_dir, "063_bpe_trace")
    best = pair_counts([(w, 1) for w in TRACE_WORDS]).most_common(1)[0]
    assert best == (("l", "o"), 2)
    assert "the first-encountered rule (bpe_find_best_pair): (l, o) with count 2" in out
    rule = after(out, "the first-encountered rule")
    assert plain_rows(after(rule, "merge (l, o) -> lo")) == [
        reference.merge_word(w, ("l", "o"), "lo") for w in TRACE_WORDS]
    book = after(out, "the book's path")
    after_es = [reference.merge_word(w, ("e", "s"), "es") for w in TRACE_WORDS]
    after_est = [reference.merge_word(w, ("es", "t"), "est") for w in after_es]
    assert plain_rows(after(book, "merge (e, s) -> es   (bpe_merge_pair: 2 words changed)")) == after_es
    assert "now (es, t) has count 2" in book
    assert plain_rows(after(book, "merge (es, t) -> est   (bpe_merge_pair: 2 words changed)")) == after_est


# -- 064: the training loop ---------------------------------------------------------------

TRAINING_TABLE = [("low", 5), ("lower", 2), ("newest", 6), ("widest", 3), ("new", 2)]


def expected_training(max_merges=10, min_count=2):
    """[(pair, count, table after)] by pybpe.reference.learn, counts and tables by replay."""
    words = [(tuple(w) + ("_",), f) for w, f in TRAINING_TABLE]
    base = sorted(set("".join(w for w, _ in TRAINING_TABLE))) + ["_"]
    _, merges = reference.learn(words, base, len(base) + max_merges, min_frequency=min_count)
    steps, table = [], [(list(s), f) for s, f in words]
    for pair in merges:
        count = pair_counts(table)[pair]
        table = [(reference.merge_word(s, pair, pair[0] + pair[1]), f) for s, f in table]
        steps.append((pair, count, table))
    return steps


def test_064_ten_merges_with_counts_and_tables_match_the_reference(bin_dir):
    out = run(bin_dir, "064_bpe_training")
    expected = expected_training()
    assert len(expected) == 10
    assert table_rows(after(out, "word table")) == [(list(w) + ["_"], f) for w, f in TRAINING_TABLE]
    printed = re.findall(r"^merge\s+(\d+): \((\S+), (\S+)\)\s+-> (\S+)\s+count (\d+)$", out, re.M)
    assert [(int(n), (a, b), ab, int(c)) for n, a, b, ab, c in printed] == [
        (k + 1, pair, pair[0] + pair[1], count) for k, (pair, count, _) in enumerate(expected)]
    for k, (pair, count, table) in enumerate(expected):
        header = "merge %2d: %-14s -> %-9s count %d" % (k + 1, "(%s, %s)" % pair, "".join(pair), count)
        assert table_rows(after(out, header)) == table, "table after merge %d" % (k + 1)
    assert "stop: 10 merges done" in out
    assert "cross-check: bpe_trainer learned 10 merges, the same pairs with the same counts" in out


def test_064_first_merges_are_the_classic_ones():
    """A hand-checkable anchor for expected_training itself (Sennrich et al.'s table)."""
    steps = expected_training()
    assert [(p, c) for p, c, _ in steps[:3]] == [(("e", "s"), 9), (("es", "t"), 9), (("est", "_"), 9)]


# -- 065: merges on new text --------------------------------------------------------------

RULES = [("e", "s"), ("es", "t"), ("l", "o"), ("lo", "w"), ("n", "e"), ("ne", "w")]


def test_065_segmentations_and_first_seen_ids(bin_dir):
    out = run(bin_dir, "065_apply_merges")
    words = "newest lower low newest unknown".split()
    pieces = [reference.apply_merges(list(w), RULES) for w in words]
    assert pieces[:3] == [["new", "est"], ["low", "e", "r"], ["low"]]
    assert pieces[4] == list("unknown")  # no rule applies: seven single characters
    first_seen = {}
    for p in (p for word in pieces for p in word):
        first_seen.setdefault(p, len(first_seen))
    rows = re.findall(r"^    (\w+)\s+([\w ]+?)\s{2,}([\d ]+)$", after(out, "segmentation"), re.M)
    assert [(w, s.split(" "), [int(i) for i in ids.split()]) for w, s, ids in rows] == [
        (w, p, [first_seen[x] for x in p]) for w, p in zip(words, pieces)]
    assert ids_line(out) == [first_seen[x] for word in pieces for x in word] == [
        0, 1, 2, 3, 4, 2, 0, 1, 5, 6, 7, 6, 8, 9, 6]
    assert "vocabulary (first-seen): " + ", ".join("%d=%s" % (i, p) for p, i in first_seen.items()) in out
    assert "after 6 rules: new est" in out


# -- 066: the pipeline --------------------------------------------------------------------

def test_066_matrix_is_seq_len_by_dim(bin_dir):
    out = run(bin_dir, "066_pipeline")
    text = re.search(r'text:\s+"(.*)"', out).group(1)
    words = text.split()
    vocab = list(dict.fromkeys(words))
    assert ids_line(out, "2. ids:") == [vocab.index(w) for w in words]
    vocab_size, dim = map(int, re.search(r"embedding table: \[(\d+), (\d+)\]", out).groups())
    seq_len, dim2 = map(int, re.search(r"output matrix: \[(\d+), (\d+)\] = \[seq_len, dim\]", out).groups())
    assert (vocab_size, seq_len, dim2) == (len(vocab), len(words), dim)
    rows = re.findall(r"^    row (\d+)\s+(\w+)\s+id (\d+)\s+\[(.*)\]$", out, re.M)
    assert [(int(t), w, int(i)) for t, w, i, _ in rows] == [
        (t, w, vocab.index(w)) for t, w in enumerate(words)]
    values = [[float(v) for v in r[3].split(",")] for r in rows]
    assert all(len(v) == dim and all(-0.1 <= x < 0.1 for x in v) for v in values)
    for t, w in enumerate(words):  # a repeated word gets the very same row
        assert values[t] == values[words.index(w)]
    assert run(bin_dir, "066_pipeline") == out  # the seed makes every run the same


# -- all of them --------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
@pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""),
                    reason="AddressSanitizer is preloaded (make sanitize); valgrind cannot run under it")
@pytest.mark.parametrize("name", PROGRAMS)
def test_programs_are_valgrind_clean(bin_dir, name):
    done = subprocess.run(["valgrind", "-q", "--error-exitcode=1", "--leak-check=full",
                           "--errors-for-leak-kinds=all", str(bin_dir / name)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_shows_every_program_in_order(bin_dir):
    done = subprocess.run(["make", "-s", "-C", str(EXAMPLES), "run", "BIN=%s" % bin_dir],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    banners = re.findall(r"^======== (\S+) ========$", done.stdout, re.M)
    assert banners == PROGRAMS


# -- 067: BPE beside WordPiece (the C book's section 11.8) ------------------------------------

MERGE_ROW = re.compile(r"^\s+\d+  \((.+?), (.+?)\) (\d+)\s+\((.+?), (.+?)\) (\d+)/\((\d+)\*(\d+)\) = ", re.M)


def test_067_first_merges_are_the_literal_algorithms(bin_dir):
    out = run(bin_dir, "067_wordpiece")
    rows = [(a, b, int(n), c, d, int(m), int(ca), int(cb)) for a, b, n, c, d, m, ca, cb in MERGE_ROW.findall(out)]
    assert len(rows) == 8
    words = Counter(wordpiece_vs_bpe.TRAIN_TEXT.split())
    chars = sorted(set("".join(words)))
    table = [(list(w) + ["_"], f) for w, f in words.items()]
    _, bpe = reference.learn(table, ["<UNK>"] + chars + ["_"], 40)
    expected_bpe = []
    for pair in bpe[:8]:  # each merge's count, replayed on the word table
        expected_bpe.append(pair + (pair_counts(table)[pair],))
        table = [(reference.merge_word(s, pair, pair[0] + pair[1]), f) for s, f in table]
    wp_table = [((w[0],) + tuple("##" + c for c in w[1:]), f) for w, f in words.items()]
    base = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"] + chars + sorted({"##" + c for w in words for c in w[1:]})
    _, wp = reference.learn_wordpiece(wp_table, base, 40)
    assert [r[:3] for r in rows] == expected_bpe
    assert [r[3:] for r in rows] == list(wp[:8])
    assert rows[0][:3] == ("e", "s", 9) and rows[0][3:5] == ("w", "##i")  # frequent vs. always together


def _without_timing(text):
    return [line.rstrip() for line in text.strip().split("\n") if not line.startswith("training time")]


@pytest.mark.parametrize("corpus", ["built-in", "hamlet"])
def test_067_figures_equal_the_python_comparison(bin_dir, tmp_path, corpus):
    # The same corpus through pybpe's Python API on the pure-Python backend
    # (WordPieceTokenizer, BPETokenizer with marker "_", greedy matching in
    # Python): every line but the timing is the same.
    if corpus == "built-in":
        args, vocab = [], wordpiece_vs_bpe.DEFAULT_VOCAB
        train_text, held_text = wordpiece_vs_bpe.TRAIN_TEXT, wordpiece_vs_bpe.HELD_TEXT
    else:  # an ASCII corpus (067 cuts bytes; BERT's rules agree on ASCII)
        text = "".join((ROOT / "pybpe" / "data" / "hamlet.txt").read_text(encoding="utf-8").splitlines(True)[:2500])
        assert text.isascii()
        path = tmp_path / "corpus.txt"
        path.write_text(text, encoding="utf-8")
        args, vocab = [str(path), "300"], 300
        train_text, held_text = wordpiece_vs_bpe.split_held_out(text)
    done = subprocess.run([str(bin_dir / "067_wordpiece"), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    source = args[0] if args else "built-in"
    expected = wordpiece_vs_bpe.report(wordpiece_vs_bpe.compare(train_text, held_text, vocab, backend="python"),
                                       source, vocab)
    assert _without_timing(done.stdout) == _without_timing(expected)
    assert re.search(r"^training time \(CPU\)\s+\d+\.\d{3}s\s+\d+\.\d{3}s$", done.stdout, re.M)


def test_067_bad_arguments(bin_dir, tmp_path):
    done = subprocess.run([str(bin_dir / "067_wordpiece"), str(tmp_path / "absent.txt")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "cannot read" in done.stderr
    done = subprocess.run([str(bin_dir / "067_wordpiece"), "x", "0"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "usage" in done.stderr
    one_line = tmp_path / "one.txt"
    one_line.write_text("a b c\n")
    done = subprocess.run([str(bin_dir / "067_wordpiece"), str(one_line)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "no held-out words" in done.stderr


# -- TinyTorch's chapter trace in Python ----------------------------------------------------

def chapter_trace(backend, *args):
    env = dict(os.environ, PYBPE_BACKEND=backend, PYTHONIOENCODING="utf-8",
               PYTHONPATH=os.pathsep.join(filter(None, [
                   str(Path(pybpe.__file__).resolve().parent.parent), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-m", "pybpe.examples.chapter_trace", *args],
                          capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    return done.stdout.decode("utf-8")


def section(out, vocab_size):
    part = out.split("== vocab_size=%d ==" % vocab_size, 1)[1]
    return part.split("\n== vocab_size=", 1)[0]


def rank_rows(text):
    rows = re.findall(r"^\s*(\d+)  (\(.*?\))\s+(\d+)\s+(\d+)\s+('.*?')\s+(\d+)$", text, re.M)
    return [(int(r), literal_eval(p), int(c), int(i), literal_eval(t), int(w)) for r, p, c, i, t, w in rows]


def expected_chapter_rows(merges):
    """(count, words changed) of each merge, by replaying it on the chapter's word table."""
    counts = Counter(["low", "low", "lower", "newest", "widest"])
    table = [(list(w[:-1]) + [w[-1] + " "], f) for w, f in counts.items()]
    out = []
    for pair in merges:
        count = pair_counts(table)[pair]
        merged = [reference.merge_word(s, pair, pair[0] + pair[1]) for s, _ in table]
        changed = sum(m != s for m, (s, _) in zip(merged, table))
        table = [(m, f) for m, (_, f) in zip(merged, table)]
        out.append((count, changed))
    return out


@pytest.mark.parametrize("backend", backends.available())
def test_chapter_trace_matches_spec(backend):
    out = chapter_trace(backend)
    assert "(%s backend)" % backend in out
    part = section(out, 25)
    assert "base vocabulary (21 entries):" in part
    assert " 0 '<UNK>'" in part and " 1 'd'" in part and "20 'w '" in part
    merges = [("l", "o"), ("lo", "w "), ("w", "e"), ("s", "t ")]
    extra = expected_chapter_rows(merges)
    assert [(c, w) for c, w in extra] == [(3, 2), (2, 1), (2, 2), (2, 2)]
    assert rank_rows(part) == [(rank, pair, count, 21 + rank, pair[0] + pair[1], changed)
                               for rank, (pair, (count, changed)) in enumerate(zip(merges, extra))]
    assert "vocabulary: 25 entries after 4 merges" in part
    assert "encode('lowest') -> [21, 23, 24]\n    pieces: 'lo' 'we' 'st '\n    decode -> 'lowest'" in part
    assert ("encode('naïve widest') -> [9, 0, 0, 0, 4, 19, 5, 1, 3, 24]" in part
            and "decode -> 'n<UNK><UNK><UNK>e widest'" in part)
    big = section(out, 100)
    assert "vocabulary: 34 entries after 13 merges" in big
    assert len(rank_rows(big)) == 13


def test_chapter_trace_rank_table_in_process():
    """The same rows without a subprocess, on the pure-Python core."""
    from pybpe.examples import chapter_trace as ct

    rows = ct.rank_table(ct.train(25, backend="python"))
    assert [(pair, new_id, changed) for _, pair, _, new_id, changed in rows] == [
        (("l", "o"), 21, 2), (("lo", "w "), 22, 1), (("w", "e"), 23, 2), (("s", "t "), 24, 2)]
