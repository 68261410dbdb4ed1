"""SPEC §3, files: every writer (save, encode_file, dump_*, the CLI) through
pybpe/_atomic.py, on both backends.

What is checked: a symlink is written through (the link stays, its target
changes; a dangling link's target is created); a FIFO or a character device
is written as a stream and stays what it was; new files get the umask's mode
and replaced ones keep their mode and owner; encode_file refuses to
overwrite its own input (directly, through a symlink, through a hard link);
no temporary file survives an exception, a KeyboardInterrupt, SIGTERM to the
CLI, or SIGKILL mid-encode_file; errors name the destination; `-o -` and
`-o /dev/stdout` write the model to stdout.  Device nodes are made in the
test's own folder (os.mknod, as root) or reached through a symlink, so a
regression can never replace the system's /dev/null or /dev/stdout.
"""
import errno
import io
import json
import os
import signal
import stat
import subprocess
import sys
import threading

import pytest

import pybpe
from pybpe import _atomic, core as backends, formats

BACKENDS = backends.available()
CORPUS = ["the cat sat on the mat", "the rat ate the hat", "that is that"] * 3
TEXT = "the cat sat on the mat. " * 200
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@pytest.fixture(params=[True, False], ids=["unnamed-temp", "named-temp"])
def temp_kind(request, monkeypatch):
    """Each test runs with unnamed temporary files (where this system has
    them) and with the named fallback."""
    if request.param and not _atomic._TMPFILE:
        pytest.skip("no O_TMPFILE on this system: the named fallback is what runs")
    monkeypatch.setattr(_atomic, "_TMPFILE", request.param)
    return request.param


def small_tokenizer(backend):
    tok = pybpe.BPETokenizer(vocab_size=280, byte_level=True, pretokenizer="gpt2",
                             special_tokens=["<|endoftext|>"], backend=backend)
    tok.train(CORPUS)
    return tok


def writers(backend, folder):
    """{name: write(path)} for every public writer; each writes the same
    bytes whatever the path."""
    tok = small_tokenizer(backend)
    enc = tok.to_encoding()
    source = os.path.join(folder, "input.txt")
    with open(source, "w", encoding="utf-8") as f:
        f.write(TEXT)
    merges = os.path.join(folder, "merges.txt")
    return {
        "save": tok.save,
        "encode_file": lambda path: enc.encode_file(source, path, chunk_size=64),
        "dump_tiktoken_bpe": lambda path: formats.dump_tiktoken_bpe(enc.mergeable_ranks, path),
        "dump_gpt2_bpe": lambda path: formats.dump_gpt2_bpe(enc, path, merges),
        "dump_hf_tokenizer": lambda path: formats.dump_hf_tokenizer(enc, path),
    }


WRITERS = ["save", "encode_file", "dump_tiktoken_bpe", "dump_gpt2_bpe", "dump_hf_tokenizer"]


@pytest.fixture(params=WRITERS)
def writer(request, backend, tmp_path):
    """(write, expected bytes, folder): the writer's output to a plain new file
    is what every other kind of destination must receive."""
    folder = tmp_path / "w"
    folder.mkdir()
    write = writers(backend, str(folder))[request.param]
    plain = tmp_path / "plain.out"
    write(str(plain))
    return write, plain.read_bytes(), folder


def leftovers(folder, *expected):
    """Names in `folder` other than `expected` and the writers' own inputs."""
    return sorted(set(os.listdir(folder)) - {"input.txt", "merges.txt"} - set(expected))


def device(tmp_path, name, major_minor, system_path):
    """A character device in tmp_path: a node of its own as root, else a
    symlink to the system's (which a regression would then only replace
    with a file in tmp_path, not in /dev)."""
    path = tmp_path / name
    if ROOT:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(*major_minor))
    else:
        os.symlink(system_path, path)
    return str(path)


# -- symlinks --------------------------------------------------------------------------
def test_symlink_is_written_through(writer, temp_kind):
    write, expected, folder = writer
    target = folder / "real.out"
    target.write_bytes(b"old contents")
    link = folder / "link.out"
    os.symlink("real.out", link)  # relative, as links usually are
    write(str(link))
    assert os.path.islink(link) and os.readlink(link) == "real.out"
    assert target.read_bytes() == expected
    assert leftovers(folder, "real.out", "link.out") == []


def test_symlink_chain_and_linked_folder(writer, temp_kind, tmp_path):
    write, expected, folder = writer
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "real.out").write_bytes(b"old")
    os.symlink(str(elsewhere), folder / "dirlink")
    os.symlink("dirlink/real.out", folder / "hop1")
    os.symlink(str(folder / "hop1"), folder / "hop2")
    write(str(folder / "hop2"))
    assert os.readlink(folder / "hop2") == str(folder / "hop1")
    assert (elsewhere / "real.out").read_bytes() == expected
    assert sorted(os.listdir(elsewhere)) == ["real.out"]  # the temp file went beside the target


def test_dot_dot_after_a_linked_folder_is_read_as_the_kernel_reads_it(writer, temp_kind, tmp_path):
    # "c/bl/../t.out" with c/bl -> ../a/b names a/t.out: ".." is the parent
    # of the link's target, not of the link.  Reading the path as a string
    # wrote c/t.out, an unrelated file, and left the real target alone.
    write, expected, folder = writer
    (folder / "a" / "b").mkdir(parents=True)
    (folder / "c").mkdir()
    os.symlink("../a/b", folder / "c" / "bl")
    (folder / "a" / "t.out").write_bytes(b"A")
    (folder / "c" / "t.out").write_bytes(b"C")
    os.symlink("c/bl/../t.out", folder / "link.out")
    assert os.path.realpath(folder / "link.out") == str((folder / "a" / "t.out").resolve())
    write(str(folder / "link.out"))
    assert (folder / "a" / "t.out").read_bytes() == expected
    assert (folder / "c" / "t.out").read_bytes() == b"C"
    assert os.readlink(folder / "link.out") == "c/bl/../t.out"
    # the same path given directly, not through a link
    (folder / "a" / "t.out").write_bytes(b"A")
    write(str(folder / "c" / "bl" / ".." / "t.out"))
    assert (folder / "a" / "t.out").read_bytes() == expected
    assert (folder / "c" / "t.out").read_bytes() == b"C"
    assert _atomic.same_file(folder / "link.out", folder / "a" / "t.out")
    assert not _atomic.same_file(folder / "link.out", folder / "c" / "t.out")


def test_dangling_symlink_creates_its_target(writer, temp_kind):
    write, expected, folder = writer
    os.symlink("new.out", folder / "link.out")
    write(str(folder / "link.out"))
    assert os.path.islink(folder / "link.out")
    assert (folder / "new.out").read_bytes() == expected


def test_symlink_loop_is_an_error_naming_the_path(writer):
    write, _, folder = writer
    os.symlink("b", folder / "a")
    os.symlink("a", folder / "b")
    with pytest.raises(OSError) as info:
        write(str(folder / "a"))
    assert info.value.errno == errno.ELOOP and info.value.filename == str(folder / "a")
    assert os.path.islink(folder / "a") and os.path.islink(folder / "b")


# -- streams: FIFOs and devices -----------------------------------------------------
def test_fifo_is_written_as_a_stream(writer):
    write, expected, folder = writer
    fifo = str(folder / "pipe")
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    write(fifo)
    reader.join(10)
    assert received == [expected]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert leftovers(folder, "pipe") == []


def test_character_device_is_written_as_a_stream(writer, tmp_path):
    write, _, folder = writer
    null = device(tmp_path, "null", (1, 3), "/dev/null")
    mode = os.lstat(null).st_mode
    write(null)
    assert os.lstat(null).st_mode == mode  # still the device (or the link to it)
    assert stat.S_ISCHR(os.stat(null).st_mode)
    link = folder / "to-null"
    os.symlink(null, link)
    write(str(link))
    assert os.path.islink(link) and stat.S_ISCHR(os.stat(null).st_mode)


def test_device_write_error_names_the_destination(writer, tmp_path):
    write, _, _ = writer
    full = device(tmp_path, "full", (1, 7), "/dev/full")
    with pytest.raises(OSError) as info:
        write(full)
    assert info.value.errno == errno.ENOSPC
    assert info.value.filename == full and full in str(info.value)
    assert stat.S_ISCHR(os.stat(full).st_mode)


def test_directory_is_refused_by_name(writer):
    write, _, folder = writer
    (folder / "sub").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        write(str(folder / "sub"))
    assert info.value.filename == str(folder / "sub")


def test_stream_object(tmp_path, backend):
    """save and encode_file also take a binary file object (the CLI's `-o -`)."""
    tok = small_tokenizer(backend)
    with open(tmp_path / "via-object", "wb") as f:
        tok.save(f)
        assert not f.closed
    tok.save(tmp_path / "via-path")
    assert (tmp_path / "via-object").read_bytes() == (tmp_path / "via-path").read_bytes()
    enc, src = tok.to_encoding(), tmp_path / "in.txt"
    src.write_text(TEXT, encoding="utf-8")
    buffer = io.BytesIO()
    assert enc.encode_file(src, buffer) == enc.encode_file(src, tmp_path / "ids.bin")
    assert buffer.getvalue() == (tmp_path / "ids.bin").read_bytes()


@pytest.mark.parametrize("via", ["same path", "symlink", "hard link", "new file twice"])
def test_dump_gpt2_bpe_refuses_one_file_for_both(tmp_path, backend, via):
    enc = small_tokenizer(backend).to_encoding()
    vocab = tmp_path / "vocab.json"
    if via != "new file twice":
        vocab.write_bytes(b"old")
    other = {"same path": vocab, "symlink": tmp_path / "link", "hard link": tmp_path / "hard",
             "new file twice": tmp_path / "." / "vocab.json"}[via]
    if via == "symlink":
        os.symlink("vocab.json", other)
    elif via == "hard link":
        os.link(vocab, other)
    with pytest.raises(ValueError, match="same file"):
        formats.dump_gpt2_bpe(enc, vocab, other)
    assert (vocab.read_bytes() == b"old") if via != "new file twice" else not vocab.exists()
    formats.dump_gpt2_bpe(enc, vocab, tmp_path / "merges.txt")  # different files: fine


# -- modes and owners -----------------------------------------------------------------
@pytest.fixture
def umask():
    """Set the process umask for one test (restored after)."""
    saved = os.umask(0o022)
    os.umask(saved)
    yield os.umask
    os.umask(saved)


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_new_file_mode_follows_the_umask(writer, temp_kind, umask, mask):
    write, _, folder = writer
    umask(mask)
    write(str(folder / "new.out"))
    assert stat.S_IMODE(os.stat(folder / "new.out").st_mode) == 0o666 & ~mask


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600, 0o664])
def test_replaced_file_keeps_its_mode(writer, temp_kind, umask, mode):
    write, expected, folder = writer
    umask(0o077)  # would give 0600 if the new file took the umask's mode
    old = folder / "old.out"
    old.write_bytes(b"old")
    os.chmod(old, mode)
    write(str(old))
    assert stat.S_IMODE(os.stat(old).st_mode) == mode
    assert old.read_bytes() == expected


@pytest.mark.skipif(not ROOT, reason="changing a file's owner needs root")
def test_replaced_file_keeps_its_owner_and_group(writer, temp_kind):
    write, _, folder = writer
    old = folder / "old.out"
    old.write_bytes(b"old")
    os.chown(old, 12345, 23456)
    write(str(old))
    st = os.stat(old)
    assert (st.st_uid, st.st_gid) == (12345, 23456)


# -- output == input -----------------------------------------------------------------
@pytest.mark.parametrize("via", ["same path", "relative path", "symlink", "hard link"])
def test_encode_file_refuses_its_own_input(tmp_path, backend, temp_kind, via):
    enc = small_tokenizer(backend).to_encoding()
    src = tmp_path / "in.txt"
    src.write_text(TEXT, encoding="utf-8")
    if via == "same path":
        out = str(src)
    elif via == "relative path":
        out = os.path.relpath(src)
    elif via == "symlink":
        out = str(tmp_path / "link")
        os.symlink("in.txt", out)
    else:
        out = str(tmp_path / "hard")
        os.link(src, out)
    with pytest.raises(ValueError, match="is the input file") as info:
        enc.encode_file(src, out)
    assert out in str(info.value) and str(src) in str(info.value)
    assert src.read_text(encoding="utf-8") == TEXT
    assert os.path.islink(out) == (via == "symlink")


# -- no temporary file left behind -------------------------------------------------
class Boom(Exception):
    pass


@pytest.mark.parametrize("error", [Boom, KeyboardInterrupt])
def test_exception_mid_encode_file_leaves_old_file_and_no_temp(tmp_path, backend, temp_kind,
                                                               monkeypatch, error):
    enc = small_tokenizer(backend).to_encoding()
    src = tmp_path / "in.txt"
    src.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "out.bin"
    out.write_bytes(b"old")
    calls = []
    real = type(enc)._encode_array

    def failing(*args):
        calls.append(1)
        if len(calls) == 3:  # some IDs are written by then
            raise error()
        return real(*args)

    monkeypatch.setattr(type(enc), "_encode_array", failing)
    with pytest.raises(error):
        enc.encode_file(src, out, chunk_size=64)
    assert out.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["in.txt", "out.bin"]


def test_commit_error_names_the_destination_and_leaves_no_temp(writer, temp_kind, monkeypatch):
    write, _, folder = writer

    def fsync(fd):
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(os, "fsync", fsync)
    dest = str(folder / "out")
    with pytest.raises(OSError) as info:
        write(dest)
    assert info.value.errno == errno.EIO and info.value.filename == dest
    assert ".tmp" not in str(info.value)
    assert leftovers(folder) == []


def test_missing_folder_error_names_the_destination(writer, temp_kind):
    write, _, folder = writer
    dest = str(folder / "no" / "such" / "folder" / "out")
    with pytest.raises(FileNotFoundError) as info:
        write(dest)
    assert info.value.filename == dest and ".tmp" not in str(info.value)


CHILD = r"""
import sys, time
import pybpe
from pybpe import _atomic
from pybpe.encoding import Encoding
_atomic._TMPFILE = {tmpfile}
tok = pybpe.BPETokenizer(vocab_size=280, byte_level=True, pretokenizer="gpt2",
                         special_tokens=["<|endoftext|>"], backend={backend!r})
tok.train({corpus!r})
real = Encoding._encode_array
def slow(*args):
    print("writing", flush=True)  # the parent kills us now
    time.sleep(0.05)
    return real(*args)
Encoding._encode_array = slow
tok.to_encoding().encode_file({src!r}, {out!r}, chunk_size=64)
"""


@pytest.mark.parametrize("replace", [False, True], ids=["new", "replace"])
def test_sigkill_mid_encode_file(tmp_path, backend, temp_kind, replace):
    """SIGKILL runs no cleanup at all: with unnamed temporary files nothing
    is left; with named ones, the next write to the same target removes
    what the dead process left."""
    src, out = tmp_path / "in.txt", tmp_path / "out.bin"
    src.write_text(TEXT, encoding="utf-8")
    if replace:
        out.write_bytes(b"old")
    code = CHILD.format(tmpfile=temp_kind, backend=backend, corpus=CORPUS, src=str(src), out=str(out))
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"writing\n"
        child.stdout.readline()  # a second chunk is under way
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert (out.read_bytes() == b"old") if replace else not out.exists()
    expected = ["in.txt"] + (["out.bin"] if replace else [])
    if temp_kind:
        assert sorted(os.listdir(tmp_path)) == expected
    else:
        stale = sorted(set(os.listdir(tmp_path)) - set(expected))
        assert [name.split("-")[0] for name in stale] == [".out.bin.pybpe"]  # recognisable
        small_tokenizer(backend).to_encoding().encode_file(src, out)
        assert sorted(os.listdir(tmp_path)) == ["in.txt", "out.bin"]


def test_stale_temp_of_a_live_process_is_kept(tmp_path, backend):
    """Only temporary files of processes that are gone are removed."""
    mine = tmp_path / (".out.bin.pybpe-%d-0123abcd.tmp" % os.getpid())
    mine.write_bytes(b"in use")
    small_tokenizer(backend).save(tmp_path / "out.bin")
    assert mine.read_bytes() == b"in use"


# -- the command line -----------------------------------------------------------------
def run_cli(tmp_path, output, **kwargs):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "pybpe", "train", str(corpus), "-o", output,
                           "--vocab-size", "60", "-q"], cwd=str(tmp_path),
                          **dict(dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE), **kwargs))


def reference_model(tmp_path):
    run = run_cli(tmp_path, "reference.json")
    assert run.returncode == 0, run.stderr
    assert b"-> reference.json" in run.stdout
    return (tmp_path / "reference.json").read_bytes()


def stdout_outputs(tmp_path):
    """Ways to say stdout; the literal /dev/stdout only when a regression
    could not replace the system's (not root)."""
    os.symlink("/proc/self/fd/1", tmp_path / "fd1")
    os.symlink("/dev/fd/1", tmp_path / "devfd1")
    return ["-", str(tmp_path / "fd1"), str(tmp_path / "devfd1")] + ([] if ROOT else ["/dev/stdout"])


def test_cli_writes_the_model_to_stdout(tmp_path):
    want = reference_model(tmp_path)
    for output in stdout_outputs(tmp_path):
        run = run_cli(tmp_path, output)
        assert run.returncode == 0, run.stderr
        assert run.stdout == want, output
        assert b"merges in" in run.stderr  # the summary moved out of the way
        assert json.loads(run.stdout)["format"] == "pybpe.BPETokenizer"
    assert os.path.islink(tmp_path / "fd1") and os.path.islink(tmp_path / "devfd1")


def test_cli_stdout_to_a_file_and_a_pipe(tmp_path):
    """/dev/stdout redirected to a file writes that file; into a pipe, the pipe."""
    want = reference_model(tmp_path)
    link = stdout_outputs(tmp_path)[1]
    with open(tmp_path / "redirected", "wb") as f:
        run = run_cli(tmp_path, link, stdout=f, stderr=subprocess.PIPE)
    assert run.returncode == 0
    assert (tmp_path / "redirected").read_bytes() == want
    run = run_cli(tmp_path, link)  # capture_output: a pipe
    assert run.stdout == want


SIGTERM_CHILD = r"""
import sys, time
from pybpe import _atomic
from pybpe.__main__ import main
_atomic._TMPFILE = False  # a named temporary file: the case that needs cleaning
write = _atomic._Writer.write
def slow(self, data):
    write(self, data)
    print("writing", file=sys.stderr, flush=True)
    time.sleep(30)
_atomic._Writer.write = slow
sys.exit(main(sys.argv[1:]))
"""


def test_cli_sigterm_leaves_no_temp(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS), encoding="utf-8")
    out = tmp_path / "model.json"
    out.write_bytes(b"old")
    child = subprocess.Popen([sys.executable, "-c", SIGTERM_CHILD, "train", str(corpus), "-o", str(out),
                              "--vocab-size", "60", "-q"], stderr=subprocess.PIPE)
    try:
        # (without the C extension a RuntimeWarning comes first: skip such lines)
        lines = iter(child.stderr.readline, b"")
        assert b"writing\n" in lines
        assert len(os.listdir(tmp_path)) == 3  # corpus, model, the temporary file
        child.send_signal(signal.SIGTERM)
        child.wait(30)
    finally:
        child.kill()
        child.stderr.close()
    assert child.returncode == 128 + signal.SIGTERM
    assert out.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt", "model.json"]


def interrupt_at_event(source, at, action, only_if=lambda: True):
    """Run action() under a tracer that counts the calls and lines run in the
    file `source` and raises KeyboardInterrupt at the at-th (when only_if()
    says a real Ctrl-C could land there; at=None: never).  The count."""
    events = [0]

    def tracer(frame, event, arg):
        if frame.f_code.co_filename != source:
            return None
        if event in ("call", "line"):
            events[0] += 1
            if events[0] == at and only_if():
                raise KeyboardInterrupt
        return tracer

    sys.settrace(tracer)
    try:
        action()
    except KeyboardInterrupt:
        pass
    finally:
        sys.settrace(None)
    return events[0]


def test_interrupt_anywhere_in_a_write_leaves_no_temp(tmp_path, backend, temp_kind):
    """A KeyboardInterrupt at every line and call of pybpe/_atomic.py during
    a save (as tests/test_atomic_state.py does for state): each time the file
    is wholly old or wholly new, and no temporary file is left."""
    tok = small_tokenizer(backend)
    new = tmp_path / "new.json"
    tok.save(new)
    want = new.read_bytes()
    dest = tmp_path / "model.json"
    source = os.path.abspath(_atomic.__file__)

    def sweep(at):
        return interrupt_at_event(source, at, lambda: tok.save(dest))

    total = sweep(None)
    assert total > 20
    for at in range(1, total + 1):
        dest.write_bytes(b"old")
        sweep(at)
        assert dest.read_bytes() in (b"old", want), at
        assert sorted(os.listdir(tmp_path)) == ["model.json", "new.json"], at


# -- found by a fuzzing helper on file safety (2026-12-06) -------------------------------
def test_disk_filling_mid_write_names_the_destination_and_leaves_no_temp(writer, temp_kind):
    # The disk fills after part of the data (RLIMIT_FSIZE stands in for it,
    # as on a real full tmpfs): the named error was replaced by the
    # unnamed one of flushing the rest again on close, and the named
    # temporary file was left behind.
    import resource
    write, _, folder = writer
    dest = folder / "out"
    dest.write_bytes(b"old")
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (200, hard))
    try:
        with pytest.raises(OSError) as info:
            write(str(dest))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old_handler)
    assert info.value.errno == errno.EFBIG and info.value.filename == str(dest), repr(info.value)
    assert dest.read_bytes() == b"old"
    assert leftovers(folder, "out") == []


def test_interrupt_while_probing_unnamed_files_leaves_no_probe(tmp_path, monkeypatch):
    # The first write to a file system links a probe file and removes it.
    # An interrupt at each call the probe makes (Ctrl-C is delivered on
    # the way into a Python function) must leave no file: one on the way
    # into contextlib.suppress, around the removal, left the probe.
    if not _atomic._TMPFILE:
        pytest.skip("no O_TMPFILE on this system: nothing is probed")
    for n in range(1, 50):
        monkeypatch.setattr(_atomic, "_NAMERS", {})
        folder = tmp_path / str(n)
        folder.mkdir()
        calls = [0]

        def tracer(frame, event, arg):
            if event == "call" and frame.f_back is not None and frame.f_back.f_code.co_name == "_namer":
                calls[0] += 1
                if calls[0] == n:
                    raise KeyboardInterrupt
            return None
        sys.settrace(tracer)
        try:
            _atomic.atomic_write(str(folder / "out"), b"data")
            interrupted = False
        except KeyboardInterrupt:
            interrupted = True
        finally:
            sys.settrace(None)
        assert os.listdir(folder) == ([] if interrupted else ["out"]), n
        if not interrupted:
            break
    else:
        pytest.fail("every call was interrupted")


# -- two files that change together: GPT-2's vocab.json + merges.txt ---------------------
# dump_gpt2_bpe (and `pybpe convert --to gpt2`) writes a pair: a vocab.json
# beside the merges.txt of another vocabulary reads as a broken tokenizer, so
# the pair changes whole or not at all -- both temporary files complete
# before either rename, the renames back to back with SIGINT/SIGTERM held,
# and the first rename undone if the second fails.

class GPT2Pair:
    """Old vocab.json (through a symlink into real/, mode 0640) and old
    merges.txt (mode 0600) in `folder`, and the bytes the dump writes."""

    def __init__(self, tmp_path, backend, vocab_link=True):
        self.enc = small_tokenizer(backend).to_encoding()
        fresh = tmp_path / "fresh"
        fresh.mkdir()
        formats.dump_gpt2_bpe(self.enc, fresh / "vocab.json", fresh / "merges.txt")
        self.new = ((fresh / "vocab.json").read_bytes(), (fresh / "merges.txt").read_bytes())
        self.old = (b'{"old": 0}', b"#version: 0.2\nold merges\n")
        self.folder = tmp_path / "pair"
        (self.folder / "real").mkdir(parents=True)
        self.vocab, self.merges = self.folder / "vocab.json", self.folder / "merges.txt"
        self.vocab_target = self.folder / "real" / "vocab.json" if vocab_link else self.vocab
        self.reset()
        if vocab_link:
            os.symlink("real/vocab.json", self.vocab)

    def reset(self):
        self.vocab_target.write_bytes(self.old[0])
        os.chmod(self.vocab_target, 0o640)
        self.merges.write_bytes(self.old[1])
        os.chmod(self.merges, 0o600)

    def dump(self):
        formats.dump_gpt2_bpe(self.enc, str(self.vocab), str(self.merges))

    def contents(self):
        return self.vocab_target.read_bytes(), self.merges.read_bytes()

    def check_unmixed(self, context=None):
        """Both files old or both new, the link still a link, the modes
        kept, and no temporary file (nor kept old copy) left anywhere."""
        assert self.contents() in (self.old, self.new), context
        if self.vocab_target != self.vocab:
            assert os.readlink(self.vocab) == "real/vocab.json", context
        assert stat.S_IMODE(os.stat(self.vocab_target).st_mode) == 0o640, context
        assert stat.S_IMODE(os.stat(self.merges).st_mode) == 0o600, context
        assert sorted(os.listdir(self.folder)) == ["merges.txt", "real", "vocab.json"], context
        assert os.listdir(self.folder / "real") == (["vocab.json"] if self.vocab_target != self.vocab else []), \
            context
        return self.contents() == self.new


def failing_on_call(real, n, exc):
    """`real`, except that its n-th call raises `exc` instead."""
    calls = [0]

    def wrapper(*args, **kwargs):
        calls[0] += 1
        if calls[0] == n:
            raise exc
        return real(*args, **kwargs)
    return wrapper


@pytest.mark.parametrize("vocab_link", [True, False], ids=["vocab-symlink", "vocab-plain"])
def test_gpt2_pair_second_rename_failing_keeps_both_old(tmp_path, backend, temp_kind, monkeypatch, vocab_link):
    pair = GPT2Pair(tmp_path, backend, vocab_link)
    monkeypatch.setattr(os, "replace", failing_on_call(os.replace, 2, OSError(errno.EIO, "injected")))
    with pytest.raises(OSError) as info:
        pair.dump()
    assert info.value.errno == errno.EIO and info.value.filename == str(pair.merges)
    assert not pair.check_unmixed()  # both old: the first rename was undone
    monkeypatch.undo()
    pair.dump()
    assert pair.check_unmixed()  # and the next dump replaces both


def test_gpt2_pair_without_hard_links_keeps_a_copy_to_put_back(tmp_path, backend, temp_kind, monkeypatch):
    # Where the old vocab.json cannot be hard-linked (a file system without
    # links), a copy of it, with its mode, is what the undo puts back.
    pair = GPT2Pair(tmp_path, backend)
    real_link = os.link

    def no_links_to_regular_files(src, dst, *args, **kwargs):
        if not str(src).startswith("/proc/"):  # naming an unnamed temporary file still works
            raise OSError(errno.EPERM, "injected")
        return real_link(src, dst, *args, **kwargs)
    monkeypatch.setattr(os, "link", no_links_to_regular_files)
    monkeypatch.setattr(os, "replace", failing_on_call(os.replace, 2, OSError(errno.EIO, "injected")))
    with pytest.raises(OSError):
        pair.dump()
    assert not pair.check_unmixed()


def test_gpt2_pair_second_rename_failing_removes_a_new_first_file(tmp_path, backend, temp_kind, monkeypatch):
    # No vocab.json before: undoing its rename is removing it again.
    pair = GPT2Pair(tmp_path, backend, vocab_link=False)
    pair.vocab.unlink()
    monkeypatch.setattr(os, "replace", failing_on_call(os.replace, 2, OSError(errno.EIO, "injected")))
    with pytest.raises(OSError):
        pair.dump()
    assert not pair.vocab.exists() and pair.merges.read_bytes() == pair.old[1]
    assert sorted(os.listdir(pair.folder)) == ["merges.txt", "real"]


def test_gpt2_pair_write_error_changes_neither(tmp_path, backend, temp_kind, monkeypatch):
    # The second file's data fails to reach the disk (fsync: a full disk, an
    # I/O error): the first file must not have been replaced by then.
    pair = GPT2Pair(tmp_path, backend)
    monkeypatch.setattr(os, "fsync", failing_on_call(os.fsync, 2, OSError(errno.ENOSPC, "injected")))
    with pytest.raises(OSError) as info:
        pair.dump()
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(pair.merges)
    assert not pair.check_unmixed()


def test_gpt2_pair_sigint_between_the_renames_is_held_until_both_are_done(tmp_path, backend, temp_kind,
                                                                          monkeypatch):
    # A real Ctrl-C arriving right after the first rename: the pair is
    # finished, and the KeyboardInterrupt comes after.
    pair = GPT2Pair(tmp_path, backend)
    real_replace = os.replace

    def replace_then_sigint(*args, **kwargs):
        real_replace(*args, **kwargs)
        if args[1] == str(pair.vocab_target):
            os.kill(os.getpid(), signal.SIGINT)
    monkeypatch.setattr(os, "replace", replace_then_sigint)
    with pytest.raises(KeyboardInterrupt):
        pair.dump()
    assert pair.check_unmixed()  # both new
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is back


def test_gpt2_pair_interrupt_anywhere_never_mixes(tmp_path, backend, temp_kind):
    """A Ctrl-C at every line and call of pybpe/_atomic.py during the dump
    (as test_interrupt_anywhere_in_a_write_leaves_no_temp does for one
    file): each time both files are old or both new, with no temporary file
    left.  The KeyboardInterrupt is raised only where a real Ctrl-C would
    raise one -- where SIGINT's handler is Python's own, not held."""
    pair = GPT2Pair(tmp_path, backend)
    source = os.path.abspath(_atomic.__file__)

    def sweep(at):
        return interrupt_at_event(source, at, pair.dump, only_if=lambda: (
            signal.getsignal(signal.SIGINT) is signal.default_int_handler))

    total = sweep(None)
    assert total > 40
    outcomes = set()
    for at in range(1, total + 1):
        pair.reset()
        sweep(at)
        outcomes.add(pair.check_unmixed(at))
    assert outcomes == {False, True}  # some interrupts came too early, some too late to stop it
