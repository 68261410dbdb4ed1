"""The command line, run as users run it: the installed `pybpe` console script in a subprocess.

Every command (demo, train, encode, decode, count, stats, inspect, convert,
bench, wordpiece) against what the Python API gives for the same input; the modes of
encode / decode (line by line, streamed; whole inputs; pieces, coloured on
a terminal only) and the round trip through a shell pipe; progress that
redraws on a terminal and writes plain lines elsewhere; every error path:
one line on stderr, no traceback, exit code 1 for usage and 2 for input,
130 for Ctrl-C.  Training and encoding run on both backends (PYBPE_BACKEND).
"""
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import time

import pytest

import pybpe
from pybpe import core as backends

BACKENDS = backends.available()
SCRIPT = os.path.join(os.path.dirname(sys.executable), "pybpe")
CORPUS = ("the low lower newest widest of them all\n" * 3 + "a naïve café, the lowest\n" + "wide news\n") * 5
HELDOUT = "the newest news of the widest café\nlow and lower\n"


def run(*args, stdin=None, cwd=None, env=None, check=None):
    """The console script with `args`; stdin bytes or str.  Asserts that no
    traceback was printed; `check` is the expected exit code."""
    environ = dict(os.environ, **(env or {}))
    environ.pop("NO_COLOR", None)
    if isinstance(stdin, str):
        stdin = stdin.encode("utf-8")
    done = subprocess.run([SCRIPT] + [str(a) for a in args], input=stdin, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, cwd=cwd, env=environ, timeout=300)
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    if check is not None:
        assert done.returncode == check, (done.returncode, done.stderr.decode())
    return done


def ok(*args, **kwargs):
    return run(*args, check=0, **kwargs)


@pytest.fixture
def files(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    held = tmp_path / "held.txt"
    held.write_text(HELDOUT, encoding="utf-8")
    return tmp_path, corpus, held


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def lines_of(text):
    return text.splitlines(keepends=True)


# -- the script itself -----------------------------------------------------------------
def test_console_script_is_the_module():
    assert os.access(SCRIPT, os.X_OK), "the pybpe console script is not installed beside %s" % sys.executable
    version = ok("--version").stdout
    assert version.startswith(b"pybpe %s " % pybpe.__version__.encode())
    module = subprocess.run([sys.executable, "-m", "pybpe", "--version"], stdout=subprocess.PIPE, check=True)
    assert module.stdout == version


def test_every_command_has_help_with_examples_and_every_option_help_text():
    from pybpe.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.choices and isinstance(a.choices, dict))
    commands = set(sub.choices)
    assert commands == {"demo", "train", "encode", "decode", "count", "stats", "inspect", "convert", "bench",
                        "wordpiece"}
    for name, command in sub.choices.items():
        for action in command._actions:
            assert action.help, "pybpe %s %s has no help text" % (name, action.option_strings or action.dest)
        shown = ok(name, "--help").stdout.decode()
        assert "examples:" in shown and "pybpe %s" % name in shown.split("examples:")[1], name
    top = ok("--help").stdout.decode()
    assert all(name in top for name in commands) and "exit codes" in top


def test_wordpiece_comparison_runs_from_the_script(files):
    """`pybpe wordpiece` (tests/test_wordpiece.py checks its figures) through the console script."""
    out = ok("wordpiece").stdout.decode()
    assert out.startswith("corpus: built-in") and "WordPiece" in out
    assert ok("wordpiece", files[1], "--vocab-size", 60).stdout.decode().startswith("corpus: %s" % files[1])
    assert b"missing.txt" in run("wordpiece", files[0] / "missing.txt", check=2).stderr


def test_demo_keeps_working():
    out = ok("demo").stdout.decode()
    assert "chapter-flavour BPE on the bundled corpus" in out
    assert "trained    1000 tokens" in out and "round trip exact" in out


# -- train -----------------------------------------------------------------------------
FLAVOURS = [
    ([], {}),
    (["--byte-level"], dict(byte_level=True)),
    (["--byte-level", "--pretokenizer", "cl100k"], dict(byte_level=True, pretokenizer="cl100k")),
    (["--byte-level", "--pretokenizer", "none"], dict(byte_level=True, pretokenizer=None)),
    (["--end-of-word", "symbol", "--marker", "</w>", "--lowercase"],
     dict(end_of_word="symbol", marker="</w>", lowercase=True)),
    (["--regex", r" ?\w+| ?[^\w\s]+", "--end-of-word", "none"],
     dict(pretokenizer=r" ?\w+| ?[^\w\s]+", end_of_word=None)),
    (["--min-frequency", "3", "--max-token-length", "4"], dict(min_frequency=3, max_token_length=4)),
    (["--special-token", "<|endoftext|>", "--special-token", "<pad>"],
     dict(special_tokens=["<|endoftext|>", "<pad>"])),
]


@pytest.mark.parametrize("options, kwargs", FLAVOURS, ids=[" ".join(o) or "chapter" for o, _ in FLAVOURS])
def test_train_takes_every_flavour_option(files, options, kwargs, backend):
    tmp, corpus, _ = files
    model = tmp / "model.json"
    done = ok("train", corpus, "-o", model, "--vocab-size", 90, *options, env={"PYBPE_BACKEND": backend})
    assert done.stdout.decode().endswith("merges in %s" % done.stdout.decode().split("merges in ")[1])
    assert b"-> %s" % str(model).encode() in done.stdout
    want = pybpe.BPETokenizer(vocab_size=90, backend=backend, **kwargs)
    want.train(lines_of(CORPUS))
    got = pybpe.load(model)
    assert (got.vocab, got.merges, got.merge_counts, got.config()) == (
        want.vocab, want.merges, want.merge_counts, want.config())


def test_train_from_stdin_to_stdout_and_several_files(files):
    tmp, corpus, held = files
    done = ok("train", "-", "-o", "-", "--vocab-size", 70, stdin=CORPUS)
    assert json.loads(done.stdout)["format"] == "pybpe.BPETokenizer"
    assert b"merges in" in done.stderr  # the summary moves out of the way of the model
    (tmp / "m.json").write_bytes(done.stdout)
    want = pybpe.BPETokenizer(vocab_size=70)
    want.train(lines_of(CORPUS))
    assert pybpe.load(tmp / "m.json").merges == want.merges
    ok("train", corpus, held, "-o", tmp / "two.json", "--vocab-size", 70, "-q")
    want.train(lines_of(CORPUS) + lines_of(HELDOUT))
    assert pybpe.load(tmp / "two.json").merges == want.merges


def test_train_progress_is_plain_off_a_terminal(files):
    tmp, corpus, _ = files
    done = ok("train", corpus, "-o", tmp / "m.json", "--vocab-size", 90)
    assert b"\r" not in done.stderr and b"\x1b" not in done.stderr
    assert done.stderr.endswith(b"\n") and b"merges " in done.stderr


def test_tokenizer_progress_plain_lines_every_interval(monkeypatch, capsys):
    """Off a terminal the merge phase writes whole lines, one per interval."""
    from pybpe import tokenizer

    monkeypatch.setattr(tokenizer, "_PLAIN_PROGRESS_SECONDS", 0.0)
    monkeypatch.setattr(tokenizer, "_CHUNK_SECONDS", 0.0)  # many small chunks
    tok = pybpe.BPETokenizer(vocab_size=200)
    tok.train(lines_of(CORPUS) * 3, progress=True)
    err = capsys.readouterr().err
    assert "\r" not in err and "\x1b" not in err
    lines = err.splitlines()
    assert all(line.startswith(("counted ", "merges ")) for line in lines)  # the counting phase, then merging
    assert sum(line.startswith("merges ") for line in lines) >= 2
    assert lines[-1].startswith("merges %d/" % len(tok.merges))


def test_cli_progress_redraws_on_a_terminal_and_writes_lines_elsewhere(monkeypatch):
    """The reading progress of `train` (pybpe/cli/_common.py's Progress)."""
    import io

    from pybpe.cli import _common

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(_common, "PLAIN_EVERY", 0.0)
    monkeypatch.setattr(_common, "TTY_EVERY", 0.0)
    for stream in (io.StringIO(), Terminal()):
        progress = _common.Progress(True, stream)
        for n in range(3):
            progress.update("reading %d MB" % n)
        progress.done()
        shown = stream.getvalue()
        if stream.isatty():
            assert shown == "\rreading 1 MB\x1b[K\rreading 2 MB\x1b[K\n"  # the first waits one interval
        else:
            assert shown == "reading 1 MB\nreading 2 MB\n"
    quiet = io.StringIO()
    _common.Progress(False, quiet).update("x", force=True)
    assert quiet.getvalue() == ""


def _through_a_terminal(args, seconds=60):
    """Run the script with stdout and stderr on a pseudo-terminal; what it wrote."""
    master, slave = pty.openpty()
    child = subprocess.Popen([SCRIPT] + [str(a) for a in args], stdin=subprocess.DEVNULL, stdout=slave,
                             stderr=slave, env=dict(os.environ, TERM="xterm"))
    os.close(slave)
    data = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            data += chunk
        elif child.poll() is not None:
            break
    child.wait(30)
    os.close(master)
    assert child.returncode == 0, data
    return data


def test_train_progress_redraws_on_a_terminal(files):
    tmp, corpus, _ = files
    data = _through_a_terminal(["train", corpus, "-o", tmp / "m.json", "--vocab-size", 90])
    assert b"\rmerges " in data


def test_pieces_are_coloured_on_a_terminal_only(files):
    data = _through_a_terminal(["encode", "gpt2", "--pieces", "hello world"])
    assert b"\x1b[48;5;" in data and b"hello" in data
    piped = ok("encode", "gpt2", "--pieces", "hello world").stdout
    assert piped == "hello \u2581world\n".encode()
    assert b"\x1b[" in ok("encode", "gpt2", "--pieces", "--color", "always", "hello world").stdout
    assert b"\x1b[" not in run("encode", "gpt2", "--pieces", "hello", env={"NO_COLOR": "1"}).stdout
    out = files[0] / "pieces.txt"
    ok("encode", "gpt2", "--pieces", "hello world", "-o", out)
    assert out.read_bytes() == piped
    ok("encode", "gpt2", "--pieces", "--color", "always", "hello world", "-o", out)
    assert b"\x1b[48;5;" in out.read_bytes()


# -- encode / decode -----------------------------------------------------------------
def test_encode_names_an_encoding_or_a_model_any_way(files, backend):
    tmp, corpus, _ = files
    env = {"PYBPE_BACKEND": backend}
    assert ok("encode", "gpt2", "hello world", env=env).stdout == b"31373 995\n"
    cl = pybpe.get_encoding("cl100k_base")
    want = " ".join(map(str, cl.encode("hello wörld"))).encode() + b"\n"
    assert ok("encode", "--encoding", "cl100k_base", "hello wörld", env=env).stdout == want
    assert ok("encode", "-e", "gpt-4", "hello wörld", env=env).stdout == want  # a model name
    ok("train", corpus, "-o", tmp / "tok.json", "--vocab-size", 80, "-q")
    tok = pybpe.load(tmp / "tok.json")
    want = (" ".join(map(str, tok.encode("the lowest news"))) + "\n").encode()
    assert ok("encode", "-t", tmp / "tok.json", "the lowest news", env=env).stdout == want
    assert ok("encode", tmp / "tok.json", "the lowest news", env=env).stdout == want
    # several texts: a line each
    assert ok("encode", "gpt2", "hello", "world").stdout == b"31373\n6894\n"


# Every kind of line in one file (the last without a newline), and an empty file.
TEXTS = ["one line\n", "a\r\nwindows\r\n", "\n\n\nblank lines\n\n", "naïve café 日本語 🙂 e\u0301\n  indented\n\ttabs\t\n",
         "x" * 3000 + "\n" + "y " * 500 + "\n", "<|endoftext|> as text\n", "no final newline"]
PIPES = [("cl100k_base", b) for b in BACKENDS] + [("gpt2", BACKENDS[0]), ("o200k_base", BACKENDS[0])]


@pytest.mark.parametrize("name, backend", PIPES)
def test_pipe_encode_decode_gives_the_file_back(tmp_path, name, backend):
    """`cat f | pybpe encode --encoding X | pybpe decode --encoding X` is f, byte for byte."""
    for k, text in enumerate(["".join(TEXTS), ""]):
        f = tmp_path / ("f%d.txt" % k)
        f.write_bytes(text.encode("utf-8"))
        for mode in ("", "--whole"):
            pipe = "cat %s | %s encode --encoding %s %s | %s decode --encoding %s %s" % (
                f, SCRIPT, name, mode, SCRIPT, name, mode)
            done = subprocess.run(["bash", "-o", "pipefail", "-c", pipe], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=dict(os.environ, PYBPE_BACKEND=backend))
            assert done.returncode == 0 and done.stderr == b"", done.stderr
            assert done.stdout == f.read_bytes(), (name, mode, text[:40])


def test_line_mode_is_one_line_in_one_line_out(tmp_path, backend):
    text = "hello world\n\nsecond  line\r\nlast"
    enc = pybpe.get_encoding("cl100k_base")
    out = ok("encode", "-e", "cl100k_base", stdin=text, env={"PYBPE_BACKEND": backend}).stdout.decode()
    got = out.split("\n")
    assert got == [" ".join(map(str, enc.encode(line))) for line in text.split("\n")]
    assert not out.endswith("\n")  # as the input's last line
    whole = ok("encode", "-e", "cl100k_base", "--whole", stdin=text).stdout.decode()
    assert whole == " ".join(map(str, enc.encode(text))) + "\n"
    # -i files: read one after another, as cat joins them
    (tmp_path / "a").write_text("hello ")
    (tmp_path / "b").write_text("world\n")
    assert ok("encode", "gpt2", "-i", tmp_path / "a", "-i", tmp_path / "b").stdout == b"31373 995\n"
    assert ok("encode", "gpt2", "--whole", "-i", tmp_path / "a", "-i", tmp_path / "b").stdout == b"31373 220\n6894 198\n"


def test_stdin_is_streamed_a_line_at_a_time():
    child = subprocess.Popen([SCRIPT, "encode", "gpt2"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    try:
        child.stdin.write(b"hello world\n")
        child.stdin.flush()
        assert child.stdout.readline() == b"31373 995\n"  # before stdin is closed
        child.stdin.write(b"hello\n")
        child.stdin.flush()
        assert child.stdout.readline() == b"31373\n"
        child.stdin.close()
        assert child.wait(30) == 0
    finally:
        child.kill()
        child.stdout.close()
        child.stderr.close()


def test_decode_adds_no_newline_outside_line_mode(tmp_path):
    assert ok("decode", "gpt2", "31373", "995").stdout == b"hello world"
    assert ok("decode", "gpt2", "[31373, 995]").stdout == b"hello world"  # a pasted list
    assert ok("decode", "gpt2", stdin="31373 995\n").stdout == b"hello world\n"
    assert ok("decode", "gpt2", stdin="31373 995").stdout == b"hello world"
    assert ok("decode", "gpt2", "--whole", stdin="31373\n995\n").stdout == b"hello world"
    nl = ok("encode", "gpt2", "--whole", stdin="hi\n").stdout
    assert ok("decode", "gpt2", "--whole", stdin=nl).stdout == b"hi\n"
    assert ok("decode", "gpt2", "--pieces", "31373", "995").stdout == "hello \u2581world\n".encode()


def test_decode_with_a_trained_model_matches_the_api(files, backend):
    tmp, corpus, _ = files
    for options in ([], ["--byte-level"]):
        model = tmp / "m.json"
        ok("train", corpus, "-o", model, "--vocab-size", 300, "-q", *options)
        tok = pybpe.load(model, backend=backend)
        ids = tok.encode("the naïve news")
        got = ok("decode", "-t", model, *ids, env={"PYBPE_BACKEND": backend}).stdout.decode()
        assert got == tok.decode(ids)
        enc_lines = ok("encode", "-t", model, stdin=HELDOUT, env={"PYBPE_BACKEND": backend}).stdout.decode()
        assert enc_lines.splitlines() == [" ".join(map(str, tok.encode(line))) for line in HELDOUT.splitlines()]


def test_output_file_is_written_safely(tmp_path):
    out = tmp_path / "ids.txt"
    ok("encode", "gpt2", "hello world", "-o", out)
    assert out.read_bytes() == b"31373 995\n"
    src = tmp_path / "src.txt"
    src.write_text("hello\n")
    done = run("encode", "gpt2", "-i", src, "-o", src, check=1)
    assert b"would destroy the input" in done.stderr and src.read_text() == "hello\n"
    # an input error midway leaves the old output whole
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n\xff broken\n")
    run("encode", "gpt2", "-i", bad, "-o", out, check=2)
    assert out.read_bytes() == b"31373 995\n"
    assert sorted(os.listdir(tmp_path)) == ["bad.txt", "ids.txt", "src.txt"]


# -- count, stats, inspect, convert, bench -----------------------------------------------
def test_count_is_wc_like(files):
    tmp, corpus, held = files
    enc = pybpe.get_encoding("o200k_base")
    n1, n2 = len(enc.encode(CORPUS)), len(enc.encode(HELDOUT))
    out = ok("count", "o200k_base", corpus, held).stdout.decode().splitlines()
    width = len(str(n1 + n2))
    assert out == ["%*d %s" % (width, n1, corpus), "%*d %s" % (width, n2, held), "%*d total" % (width, n1 + n2)]
    assert ok("count", "--encoding", "o200k_base", stdin=HELDOUT).stdout == b"%d\n" % n2
    words = ok("count", "-e", "o200k_base", "-w", held).stdout.split()
    assert [int(w) for w in words[:3]] == [n2, len(HELDOUT.split()), len(HELDOUT.encode())]
    special = "a<|endoftext|>b"
    assert ok("count", "gpt2", stdin=special).stdout == b"%d\n" % len(enc_gpt2().encode_ordinary(special))
    assert ok("count", "gpt2", "--special", stdin=special).stdout == b"3\n"


def test_count_streams_a_big_file_with_the_same_answer(tmp_path):
    """A file several chunks long (count streams it through encode_file)
    counts what encoding it whole gives; so does one that is not UTF-8 fail."""
    import pybpe.cli.demo as demo

    with open(demo.BUNDLED_CORPUS, encoding="utf-8") as f:
        text = f.read() * 30  # 5 MB: more than one 4 MB chunk
    big = tmp_path / "big.txt"
    big.write_text(text, encoding="utf-8")
    for name in ("cl100k_base", "gpt2"):
        enc = pybpe.get_encoding(name)
        want = len(enc.encode_ordinary(text))
        assert ok("count", name, big).stdout == b"%d %s\n" % (want, str(big).encode())
        got = ok("count", name, "-w", big, big).stdout.split(b"\n")[0].split()
        assert [int(n) for n in got[:3]] == [want, len(text.split()), len(text.encode())]
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n" * 10 + b"\xff\n")
    assert b"bad.txt: not valid UTF-8" in run("count", "gpt2", bad, check=2).stderr


def enc_gpt2():
    return pybpe.get_encoding("gpt2")


def test_stats_figures_and_plot(files):
    tmp, corpus, held = files
    model = tmp / "m.json"
    ok("train", corpus, "-o", model, "--vocab-size", 80, "-q")
    tok = pybpe.load(model)
    ids = tok.encode(HELDOUT)
    png = tmp / "curve.png"
    out = ok("stats", "-t", model, held, "--plot", png, "--points", 8).stdout.decode()
    figures = dict(line.split(None, 1) for line in out.splitlines())
    assert figures["tokens"] == str(len(ids))
    assert figures["bytes/token"] == "%.3f" % (len(HELDOUT.encode()) / len(ids))
    assert figures["tokens/word"] == "%.3f" % (len(ids) / len(HELDOUT.split()))
    assert figures["vocabulary"].startswith("%d of %d tokens used" % (len(set(ids)), tok.vocab_size))
    assert figures["unknown"].startswith("%d tokens are <UNK>" % ids.count(0))
    assert figures["round"].startswith("trip   lossy")
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 600 and height > 300
    assert ok("stats", "gpt2", held).stdout.decode().splitlines()[-1].startswith("round trip   exact")


def test_stats_merge_curve_is_training_stopped_early(files):
    """The curve's point at k merges is what a tokenizer trained to k merges gives."""
    from pybpe.cli._common import Tok
    from pybpe.cli.stats import merge_curve

    tok = pybpe.BPETokenizer(vocab_size=120)
    tok.train(lines_of(CORPUS))
    curve = merge_curve(Tok(tok, "t"), [HELDOUT], 5, False, None)
    assert curve[0][0] == 0 and curve[-1] == (len(tok.merges), tok.vocab_size, len(tok.encode(HELDOUT)))
    for k, vocab, tokens in curve:
        small = pybpe.BPETokenizer(vocab_size=vocab)
        small.train(lines_of(CORPUS))
        assert len(small.merges) == k and len(small.encode(HELDOUT)) == tokens
    enc = pybpe.get_encoding("gpt2")
    curve = merge_curve(Tok(enc, "gpt2"), [HELDOUT], 4, False, None)
    assert curve[0] == (0, 256, len(HELDOUT.encode())) and curve[-1][2] == len(enc.encode(HELDOUT))
    assert [t for _, _, t in curve] == sorted((t for _, _, t in curve), reverse=True)


def test_stats_plot_without_matplotlib_is_a_clear_error(files, tmp_path):
    tmp, _, held = files
    fake = tmp_path / "fake"
    (fake / "matplotlib").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    done = run("stats", "gpt2", held, "--plot", tmp / "x.png", env={"PYTHONPATH": str(fake)}, check=1)
    assert b"needs matplotlib" in done.stderr and not (tmp / "x.png").exists()


def test_inspect_lists_merges_counts_longest_and_vocab(files):
    tmp, corpus, _ = files
    model = tmp / "m.json"
    ok("train", corpus, "-o", model, "--vocab-size", 80, "-q")
    tok = pybpe.load(model)
    out = ok("inspect", "-t", model, "--merges", -1, "--longest", 3).stdout.decode().splitlines()
    rows = [line for line in out if line.strip()[:1].isdigit() and ":" in line]
    assert len(rows) == len(tok.merges)
    for row, (a, b), n in zip(rows, tok.merges, tok.merge_counts):
        assert row.split()[-1] == str(n) and row.split()[-2] == (a + b).replace(" ", "\u2581")
    vocab = ok("inspect", model, "--vocab").stdout.decode().splitlines()
    assert len(vocab) == tok.vocab_size and vocab[0] == "0\t<UNK>"
    gpt2 = ok("inspect", "gpt2", "--merges", 2, "--longest", 0).stdout.decode().splitlines()
    assert "special tokens: <|endoftext|>=50256" in gpt2
    assert gpt2[-2].split() == ["0:", "\u2581", "+", "t", "->", "\u2581t", "-"]  # no counts in an encoding


def test_convert_between_every_format(files, backend):
    tmp, corpus, _ = files
    model = tmp / "bl.json"
    ok("train", corpus, "-o", model, "--vocab-size", 300, "--byte-level", "--special-token", "<|endoftext|>", "-q")
    tok = pybpe.load(model)
    text = "the naïve news<|endoftext|>"
    want = tok.encode(text, allowed_special="all")
    env = {"PYBPE_BACKEND": backend}
    ok("convert", model, "-o", tmp / "tokenizer.json", env=env)
    assert pybpe.load(tmp / "tokenizer.json").encode(text, allowed_special="all") == want
    ok("convert", tmp / "tokenizer.json", "-o", tmp / "vocab.json", env=env)
    assert pybpe.load(tmp / "vocab.json").encode(text, allowed_special="all") == want
    assert (tmp / "merges.txt").exists()
    done = ok("convert", tmp / "vocab.json", "-o", tmp / "mine.tiktoken", env=env)
    assert b"not in it" in done.stderr  # says what a .tiktoken file leaves out
    ok("convert", tmp / "mine.tiktoken", "--pattern", "gpt2", "-o", tmp / "again.json", "--to", "hf", env=env)
    assert pybpe.load(tmp / "again.json").encode("the naïve news") == tok.encode("the naïve news")
    stdout = ok("convert", model, "--to", "hf", "-o", "-").stdout
    assert stdout == (tmp / "tokenizer.json").read_bytes()
    ok("convert", model, "-o", tmp / "copy.json")
    assert (tmp / "copy.json").read_bytes() == model.read_bytes()
    ok("convert", "-e", "gpt2", "-o", tmp / "gpt2.tiktoken")
    assert pybpe.load_tiktoken_bpe(tmp / "gpt2.tiktoken") == pybpe.get_encoding("gpt2").mergeable_ranks
    # what cannot be converted says so
    ok("train", corpus, "-o", tmp / "chapter.json", "--vocab-size", 80, "-q")
    assert b"byte-level" in run("convert", tmp / "chapter.json", "-o", tmp / "t.json", "--to", "hf", check=2).stderr
    assert b"encoding" in run("convert", "-e", "gpt2", "-o", tmp / "p.json", "--to", "pybpe", check=2).stderr
    assert b"--pattern" in run("convert", tmp / "mine.tiktoken", "-o", tmp / "x.json", "--to", "hf", check=2).stderr
    assert b"say --to" in run("convert", "-e", "gpt2", "-o", tmp / "what.json", check=1).stderr


def test_a_wordpiece_file_works_with_every_command(files):
    """pybpe.load gives a WordPieceTokenizer for its files: the commands take it too."""
    from pybpe.wordpiece import WordPieceTokenizer

    tmp, corpus, held = files
    wp = WordPieceTokenizer(vocab_size=60)
    wp.train(lines_of(CORPUS))
    model = tmp / "wp.json"
    wp.save(model)
    text = "the newest café"
    ids = wp.encode(text)
    assert ok("encode", "-t", model, text).stdout.decode() == " ".join(map(str, ids)) + "\n"
    assert ok("decode", "-t", model, *ids).stdout.decode() == wp.decode(ids)
    assert ok("count", "-t", model, stdin=HELDOUT).stdout == b"%d\n" % len(wp.encode(HELDOUT))
    shown = ok("inspect", "-t", model, "--merges", 2).stdout.decode().splitlines()
    (a, b), score = wp.merges[0], wp.merge_scores[0]
    assert shown[0].startswith("%s: WordPieceTokenizer" % model)
    first = next(line for line in shown if line.split()[0] == "0:")
    assert first.split() == ["0:", a, "+", b, "->", a + b[2:], str(score[0])]
    stats = ok("stats", "-t", model, held).stdout.decode()
    assert "tokens are [UNK]" in stats
    assert b"WordPiece" in run("stats", "-t", model, held, "--plot", tmp / "x.png", check=1).stderr
    ok("convert", model, "-o", tmp / "tokenizer.json")
    assert pybpe.load(tmp / "tokenizer.json").encode(text) == ids
    assert b"WordPiece" in run("convert", model, "-o", tmp / "x.tiktoken", check=2).stderr


def test_bench_reports_each_tokenizer(files):
    tmp, corpus, _ = files
    out = ok("bench", corpus, "-e", "gpt2", "--rounds", 1, "--vocab-size", 60).stdout.decode().splitlines()
    row = next(line for line in out if line.startswith("gpt2 "))
    assert row.split()[2] == str(len(enc_gpt2().encode(CORPUS)))
    assert any(line.startswith("train (chapter flavour, 60 tokens") for line in out)


# -- errors: one line, no traceback, the right exit code ------------------------------------
@pytest.fixture
def bad_files(tmp_path):
    (tmp_path / "corrupt.json").write_text('{"format": "pybpe.BPETokenizer", "vocab": [')
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
    (tmp_path / "ok.txt").write_text("hello\n")
    (tmp_path / "gpt2").write_text("a file named like an encoding\n")
    return tmp_path


ERRORS = [
    # usage errors: 1
    ([], None, 1, "required: COMMAND"),
    (["encode", "--bogus"], None, 1, "unrecognized arguments"),
    (["frobnicate"], None, 1, "invalid choice"),
    (["train", "ok.txt"], None, 1, "-o/--output"),
    (["train", "ok.txt", "-o", "m.json", "--vocab-size", "ten"], None, 1, "invalid int value"),
    (["train", "ok.txt", "-o", "m.json", "--byte-level", "--end-of-word", "suffix"], None, 1, "end-of-word"),
    (["train", "ok.txt", "-o", "m.json", "--pretokenizer", "gpt3"], None, 1, "invalid choice: 'gpt3'"),
    (["train", "ok.txt", "-o", "ok.txt"], None, 1, "would destroy the input"),
    (["encode", "-t", "m.json", "-e", "gpt2", "x"], None, 1, "not both"),
    (["encode", "gpt2"], None, 1, "both an encoding name and a file"),
    (["encode"], None, 1, "name a tokenizer"),
    # input errors: 2
    (["train", "missing.txt", "-o", "m.json"], None, 2, "missing.txt: No such file"),
    (["train", "latin1.txt", "-o", "m.json"], None, 2, "latin1.txt:1: not valid UTF-8"),
    (["encode", "-t", "corrupt.json", "x"], None, 2, "corrupt.json: not valid JSON"),
    (["encode", "-t", "missing.json", "x"], None, 2, "missing.json: no such tokenizer file"),
    (["encode", "-e", "gpt5000", "x"], None, 2, "unknown encoding 'gpt5000'"),
    (["encode", "cl200k", "x"], None, 2, "no tokenizer file or encoding named 'cl200k'"),
    (["encode", "-e", "gpt2", "-i", "latin1.txt"], None, 2, "latin1.txt:1: not valid UTF-8"),
    (["decode", "-e", "gpt2", "12", "abc"], None, 2, "'abc' is not a token ID"),
    (["decode", "-e", "gpt2", "50257"], None, 2, "ID 50257 is not a token of gpt2"),
    (["decode", "-e", "gpt2", "--", "-1"], None, 2, "ID -1 is not a token"),
    (["decode", "-e", "gpt2"], "1 2\n3 x\n", 2, "<stdin>:2: 'x' is not a token ID"),
    (["count", "-e", "gpt2", "ok.txt", "missing.txt"], None, 2, "missing.txt: No such file"),
    (["count", "-e", "gpt2", "."], None, 2, ".: is a directory"),
    (["stats", "-t", "corrupt.json", "ok.txt"], None, 2, "not valid JSON"),
    (["inspect", "-t", "ok.txt"], None, 2, "ok.txt: not a file pybpe.load recognises"),
    (["convert", "corrupt.json", "-o", "x.tiktoken"], None, 2, "not valid JSON"),
    (["bench", "missing.txt"], None, 2, "missing.txt: No such file"),
]


@pytest.mark.parametrize("args, stdin, code, message", ERRORS, ids=[" ".join(e[0]) or "nothing" for e in ERRORS])
def test_errors_are_one_line_with_the_right_exit_code(bad_files, args, stdin, code, message):
    done = run(*args, stdin=stdin, cwd=bad_files, check=code)
    err = done.stderr.decode()
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("pybpe") and message in err, err


def test_debug_shows_the_traceback(bad_files):
    done = subprocess.run([SCRIPT, "--debug", "encode", "-t", "corrupt.json", "x"], cwd=bad_files,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert done.returncode != 0 and b"Traceback" in done.stderr and b"FormatError" in done.stderr
    done = subprocess.run([SCRIPT, "encode", "--debug", "-t", "corrupt.json", "x"], cwd=bad_files,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert b"Traceback" in done.stderr


def test_an_unexpected_error_is_one_line_and_exit_code_3(monkeypatch, capsys):
    """A bug (an exception no command expects) is still one line, exit code
    3, naming --debug; with --debug it is the traceback.  (In-process: a
    subprocess cannot be made to have a bug.)"""
    from pybpe.cli import count, main

    def broken(args):
        raise RuntimeError("something\nwent wrong")

    monkeypatch.setattr(count, "run", broken)
    assert main(["count", "gpt2"]) == 3
    err = capsys.readouterr().err
    assert err == "pybpe: internal error: RuntimeError: something went wrong (run again with --debug for the traceback)\n"
    with pytest.raises(RuntimeError):
        main(["count", "gpt2", "--debug"])


def test_ctrl_c_exits_130_quietly():
    child = subprocess.Popen([SCRIPT, "encode", "gpt2"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    try:
        child.stdin.write(b"hello\n")
        child.stdin.flush()
        assert child.stdout.readline() == b"31373\n"  # running, waiting for the next line
        child.send_signal(signal.SIGINT)
        assert child.wait(30) == 130
        assert child.stderr.read() == b""
    finally:
        child.kill()
        for stream in (child.stdin, child.stdout, child.stderr):
            stream.close()


def test_a_closed_pipe_is_quiet(tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("hello world\n" * 200000)
    done = subprocess.run("%s encode gpt2 -i %s | head -n 1" % (SCRIPT, big), shell=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert done.stdout == b"31373 995\n" and done.stderr == b""


def test_special_token_text_of_a_trained_model(files, backend):
    # Text spelling a trained model's special token is plain text unless
    # --special (BPETokenizer.encode raises for it by default, as Encoding does).
    tmp, corpus, _ = files
    model = tmp / "sp.json"
    ok("train", corpus, "-o", model, "--vocab-size", 300, "--byte-level", "--special-token", "<pad>", "-q",
       env={"PYBPE_BACKEND": backend})
    tok = pybpe.load(model)
    text = "the news<pad>now"
    plain = ok("encode", "-t", model, stdin=text).stdout.decode().split()
    assert [int(i) for i in plain] == tok.encode(text, disallowed_special=())
    special = ok("encode", "-t", model, "--special", stdin=text).stdout.decode().split()
    assert [int(i) for i in special] == tok.encode(text, allowed_special="all")
    (pad,) = tok.encode("<pad>", allowed_special="all")
    assert pad in [int(i) for i in special] and pad not in [int(i) for i in plain]


def test_without_the_extension_an_error_is_still_one_line():
    # With no C extension (as in a pure-Python install) the library warns once
    # on first use; the command line says the backend in --version instead,
    # so its errors stay one line on stderr.
    code = ("import sys; sys.modules['pybpe._bpe_c'] = None  # the extension cannot be imported\n"
            "from pybpe.cli import main\nsys.exit(main(sys.argv[1:]))")
    env = dict(os.environ)
    env.pop("PYBPE_NO_EXTENSION", None)
    env.pop("PYBPE_BACKEND", None)
    bad = subprocess.run([sys.executable, "-c", code, "encode", "--bogus"], capture_output=True, env=env)
    assert bad.returncode == 1 and len(bad.stderr.decode().splitlines()) == 1, bad.stderr
    version = subprocess.run([sys.executable, "-c", code, "--version"], capture_output=True, env=env)
    assert version.returncode == 0 and b"(python backend)" in version.stdout and version.stderr == b""


def test_no_command_writes_over_its_own_model(files):
    # encode and decode counted their text inputs only: `-o` naming the
    # model file replaced the model with IDs (found by a fuzzing helper).
    tmp, corpus, _ = files
    model = tmp / "m.json"
    ok("train", corpus, "-o", model, "--vocab-size", 300)
    before = model.read_bytes()
    for args in (["encode", "-t", model, "-o", model, "hello world"],
                 ["encode", model, "-o", model, "hello world"],
                 ["decode", "-t", model, "-o", model, "104 105"],
                 ["decode", model, "-o", model, "104 105"]):
        err = run(*args, check=1).stderr.decode()
        assert "would destroy the input" in err and str(model) in err, err
        assert model.read_bytes() == before
    # convert to gpt2 writes two files: the same one for both is a usage error
    merges = tmp / "merges.txt"
    for args in (["convert", model, "--to", "gpt2", "-o", merges],
                 ["convert", model, "--to", "gpt2", "-o", tmp / "v.json", "--merges-output", tmp / "v.json"]):
        err = run(*args, check=1).stderr.decode()
        assert "same file" in err, err
    assert not merges.exists() and not (tmp / "v.json").exists()


def test_a_text_the_vocabulary_cannot_encode_is_an_input_error(tmp_path):
    # A GPT-2 vocab.json without the token of byte "Q" (as HF trainers make
    # without an initial alphabet) loads; a text with a Q then stopped encode
    # and count with "internal error" and exit code 3 (found by a fuzzing
    # helper).  It is the input's fault: exit code 2, the missing byte named.
    ranks = {bytes([b]): b for b in range(256) if b != ord("Q")}
    ranks[b"ab"] = 256
    enc = pybpe.Encoding("noq", pat_str=pybpe.patterns.GPT2, mergeable_ranks=ranks, special_tokens={})
    from pybpe.formats import dump_gpt2_bpe
    dump_gpt2_bpe(enc, tmp_path / "vocab.json", tmp_path / "merges.txt")
    model = tmp_path / "vocab.json"
    assert ok("encode", "-t", model, "ab ab").stdout == b"256 32 256\n"
    text = tmp_path / "q.txt"
    text.write_text("ab\nQuick\n", encoding="utf-8")
    for args in (["encode", "-t", model, "Quick"], ["encode", "-t", model, "-i", text],
                 ["count", "-t", model, text], ["stats", "-t", model, text]):
        err = run(*args, check=2).stderr.decode()
        assert "has no token in this vocabulary (it has none for b'Q')" in err, (args, err)


def test_convert_to_gpt2_files_says_what_they_cannot_hold_and_reads_back(tmp_path):
    # GPT-2's vocab.json + merges.txt hold no pattern (GPT-2's is assumed)
    # and take only <|...|> entries as special tokens.  convert wrote a
    # cl100k model's files without a word (119 of 203 texts changed IDs on
    # reload), and a model that had learned an ordinary token spelled
    # <|a|> was written to files pybpe then refused.  Found by a fuzzing helper.
    corpus = ["hello world, 123456 héllo wörld!"] * 20 + ["<|a|>"] * 20
    texts = ["hello 123456", "a<pad>", "<|a|><|a|>", "wörld, 12"]
    for name, options in [("cl", dict(pretokenizer="cl100k", special_tokens=["<pad>"])),
                          ("whole", dict(pretokenizer=None)), ("gpt2", dict(pretokenizer="gpt2"))]:
        tok = pybpe.BPETokenizer(vocab_size=300, byte_level=True, **options)
        tok.train(corpus)
        tok.save(tmp_path / (name + ".json"))
        done = ok("convert", tmp_path / (name + ".json"), "-o", tmp_path / (name + "-vocab.json"))
        err = done.stderr.decode()
        assert ("pattern" in err) == (name != "gpt2"), (name, err)
        assert ("<pad>" in err) == (name == "cl"), (name, err)
        again = pybpe.load(tmp_path / (name + "-vocab.json"))
        enc = tok.to_encoding()
        regular = {t: i for t, i in enc.mergeable_ranks.items()}
        if name == "cl":  # <pad> comes back as an ordinary token, as the note says
            regular[b"<pad>"] = enc.special_tokens["<pad>"]
        assert again.mergeable_ranks == regular, name
        if name == "gpt2":  # the pattern travelled: the same IDs
            for text in texts:
                assert again.encode_ordinary(text) == tok.encode(text), (name, text)


def test_numbers_out_of_range_are_usage_errors(tmp_path):
    # --vocab-size past 2**64 - 1, or negative for demo, reached the core
    # and came out as "internal error", exit code 3 (found by a fuzzing
    # helper): they are the command line's fault.
    corpus = tmp_path / "c.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    huge = str(2**64)
    for args in (["train", corpus, "-o", tmp_path / "x.json", "--vocab-size", huge],
                 ["train", corpus, "-o", tmp_path / "x.json", "--min-frequency", huge],
                 ["train", corpus, "-o", tmp_path / "x.json", "--max-token-length", str(2**32)],
                 ["demo", "--vocab-size", "-3"], ["demo", "--vocab-size", huge],
                 ["bench", corpus, "--rounds", "1", "--vocab-size", huge]):
        err = run(*args, check=1).stderr.decode()
        assert "vocab_size" in err or "min_frequency" in err or "max_token_length" in err, (args, err)
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("options, problem", [
    (dict(vocab_size=2**64), "vocab_size must be <= 18446744073709551615"),
    (dict(min_frequency=2**64), "min_frequency must be <= 18446744073709551615"),
    (dict(max_token_length=2**32), "max_token_length must be <= 4294967295"),
])
def test_counts_past_the_cores_limits_are_refused_when_made(options, problem):
    # They were refused only by train(), in each core's own words
    # ("max_token_units must be in 0..4294967295" from C, "..2**32-1" from
    # Python).
    for backend in BACKENDS:
        with pytest.raises(ValueError, match=problem):
            pybpe.BPETokenizer(backend=backend, **options)


def test_a_model_name_names_the_tokenizer_as_the_first_argument_too(tmp_path):
    # -e gpt-4o worked, the first argument gpt-4o did not ("no tokenizer file
    # or encoding named 'gpt-4o'"), though the error for -e says a model name
    # will do (found by a fuzzing helper).
    text = tmp_path / "t.txt"
    text.write_text(HELDOUT, encoding="utf-8")
    assert ok("encode", "gpt-4o", "hello world").stdout == ok("encode", "-e", "gpt-4o", "hello world").stdout \
        == ok("encode", "o200k_base", "hello world").stdout
    assert ok("count", "gpt-4", text).stdout == ok("count", "-e", "cl100k_base", text).stdout
    assert b"o200k_base" in ok("inspect", "gpt-4o").stdout
    err = run("encode", "gpt-9000-turbo", "hi", check=2).stderr.decode()
    assert "no tokenizer file or encoding named 'gpt-9000-turbo'" in err


# -- found by a fuzzing helper on file safety (2026-12-06) -------------------------------
def test_stats_plot_never_overwrites_the_model_or_a_text(files):
    # `stats -t model.json held.txt --plot model.json` replaced the model
    # with a PNG (exit 0); --plot on the text was refused only after the
    # work, as an internal error (exit 3).
    tmp, corpus, held = files
    model = tmp / "m.json"
    ok("train", corpus, "-o", model, "--vocab-size", 80, "-q")
    before = model.read_bytes()
    link = tmp / "link.json"
    link.symlink_to(model)
    for target in (model, link):
        done = run("stats", "-t", model, held, "--plot", target, check=1)
        assert b"is the input" in done.stderr
    assert model.read_bytes() == before
    done = run("stats", "gpt2", held, "--plot", held, check=1)
    assert b"is the input" in done.stderr and held.read_text(encoding="utf-8") == HELDOUT


@pytest.mark.parametrize("command", [["encode", "gpt2", "-i", "{text}"], ["encode", "-t", "{model}", "hello"],
                                     ["decode", "gpt2", "-i", "{ids}"], ["count", "gpt2", "{text}"]])
def test_stdout_that_is_an_input_is_refused(files, command):
    # `pybpe encode gpt2 -i notes.txt >> notes.txt` encoded its own output
    # for ever (22 MB in 3 s); with -o /dev/stdout it was refused already.
    tmp, corpus, held = files
    model = tmp / "m.json"
    ok("train", corpus, "-o", model, "--vocab-size", 80, "-q")
    ids = tmp / "ids.txt"
    ids.write_text("31373 995\n")
    paths = {"text": held, "model": model, "ids": ids}
    args = [a.format(**paths) for a in command]
    victim = next(paths[k] for k in ("text", "model", "ids") if "{%s}" % k in " ".join(command))
    before = victim.read_bytes()
    with open(victim, "ab") as out:
        done = subprocess.run([SCRIPT] + args, stdout=out, stderr=subprocess.PIPE, timeout=60)
    assert done.returncode == 1, done.stderr
    assert b"standard output is the input" in done.stderr
    assert victim.read_bytes() == before


@pytest.mark.parametrize("block", [1, 2, 3, 5, 8, 1 << 20])
def test_train_reads_the_lines_read_lines_gives(tmp_path, monkeypatch, block):
    # `pybpe train` reads its inputs in blocks (one decode per block, not
    # per line: per line it took 16-18x the API's time on 258 MB, found by
    # a fuzzing helper); the texts, and a bad byte's file and line, are
    # read_lines' own.
    from pybpe.cli import _common
    monkeypatch.setattr(_common, "_BLOCK", block)
    contents = [b"ab\ncd\r\n\nnai\xcc\x88ve caf\xc3\xa9\n", b"", b"no newline", b" joins\nlast", b"\n\n", b"x"]
    paths = []
    for i, data in enumerate(contents):
        paths.append(str(tmp_path / ("in%d.txt" % i)))
        with open(paths[-1], "wb") as f:
            f.write(data)
    expected = [text + ending for _, _, text, ending in _common.read_lines(paths)]
    seen = []
    assert list(_common.read_line_texts(paths, seen.append)) == expected
    assert sum(seen) == sum(map(len, contents))
    for bad, at in [(b"ok\nok\nb\xffd\n", 3), (b"\xff\n", 1), (b"ok\nno end \xff", 2)]:
        with open(paths[2], "wb") as f:
            f.write(bad)
        for reader in (_common.read_lines, _common.read_line_texts):
            with pytest.raises(_common.InputError) as info:
                list(reader(paths[2:3]))
            assert "%s:%d: not valid UTF-8" % (paths[2], at) in str(info.value), (reader, bad)


@pytest.mark.parametrize("text", [HELDOUT * 50, "本日は晴天なり。\n" * 500, "no newline at the end"])
def test_count_from_stdin_streams_and_agrees_with_a_file(tmp_path, text):
    # stdin was read whole and its words and bytes counted even without -w
    # (258 MB piped in: 3.5 GB, a fuzzing helper); now it streams as a
    # file does, with the same count.
    src = tmp_path / "in.txt"
    src.write_text(text, encoding="utf-8")
    expected = len(pybpe.get_encoding("cl100k_base").encode_ordinary(text))
    assert ok("count", "cl100k_base", src).stdout.split()[0] == str(expected).encode()
    assert ok("count", "cl100k_base", stdin=text).stdout.split() == [str(expected).encode()]
    words = ok("count", "cl100k_base", "-w", stdin=text).stdout.split()
    assert words[:3] == [str(expected).encode(), str(len(text.split())).encode(), str(len(text.encode())).encode()]
    assert b"<stdin>: not valid UTF-8" in run("count", "cl100k_base", stdin=b"ok\xff", check=2).stderr


class _Trickle:
    """A stdin whose bytes come at most `most` at a time (a pipe), and which
    fails the test if anything asks for all of it at once."""

    def __init__(self, data, most):
        self.data, self.most, self.pos, self.largest = data, most, 0, 0

    def read(self, n=-1):
        assert n is not None and n >= 0, "stdin read whole"
        chunk = self.data[self.pos:self.pos + min(n, self.most)]
        self.pos += len(chunk)
        self.largest = max(self.largest, n)
        return chunk

    def __iter__(self):
        raise AssertionError("stdin read by lines")


@pytest.mark.parametrize("text", [HELDOUT * 50, "本日は晴天なり。\n" * 500, "no final newline", "",
                                  "words\u00a0across\u3000blocks, some\u2028éé " * 800 + "end"])
def test_count_words_from_stdin_streams_and_agrees_with_a_file(tmp_path, monkeypatch, capsys, text):
    # -w read stdin whole (100 MB piped in: more than 2 GB); it is read a
    # block at a time as without -w, counting words across the blocks.
    # In this process stdin gives 997 bytes at a time, so words and
    # characters are cut between reads.
    from pybpe.cli import main

    src = tmp_path / "in.txt"
    src.write_text(text, encoding="utf-8")
    expected = [len(pybpe.get_encoding("cl100k_base").encode_ordinary(text)), len(text.split()),
                len(text.encode())]
    assert [int(n) for n in ok("count", "cl100k_base", "-w", src).stdout.split()[:3]] == expected
    assert [int(n) for n in ok("count", "cl100k_base", "-w", stdin=text).stdout.split()[:3]] == expected
    stdin = _Trickle(text.encode(), 997)
    monkeypatch.setattr(sys, "stdin", type("Stdin", (), {"buffer": stdin})())
    assert main(["count", "cl100k_base", "-w"]) == 0
    assert [int(n) for n in capsys.readouterr().out.split()[:3]] == expected
    assert stdin.pos == len(text.encode()) and stdin.largest <= 1 << 22


@pytest.mark.parametrize("text", [HELDOUT * 300, "本日は晴天なり。\n" * 400, "no newline", ""])
def test_encode_whole_streams_with_the_whole_texts_ids(tmp_path, text):
    # --whole read the file whole (a 258 MB file ran out of memory at 6.4
    # GB, a fuzzing helper); under the gpt2 / cl100k / o200k encodings it
    # is read a few MB at a time, with the same line of IDs.
    src = tmp_path / "in.txt"
    src.write_text(text, encoding="utf-8")
    enc = pybpe.get_encoding("o200k_base")
    expected = " ".join(map(str, enc.encode_ordinary(text))) + "\n"
    assert ok("encode", "o200k_base", "--whole", "-i", src).stdout.decode() == expected
    assert ok("encode", "o200k_base", "--whole", stdin=text).stdout.decode() == expected
    assert b"<stdin>: not valid UTF-8" in run("encode", "o200k_base", "--whole", stdin=b"ok\xff", check=2).stderr
