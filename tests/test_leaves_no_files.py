"""The test suite and fuzz/run.py leave nothing behind in the temporary folder.

The fuzz targets write the files their loaders read into a scratch
directory.  Under atheris, libFuzzer ends the child process without running
its atexit handlers, so the child's own clean-up never ran and every
`make fuzz` left one `pybpe-fuzz-*` directory per target in $TMPDIR (CI's
three runs had left fifteen).  The parent now makes the directory, hands it
to the child (PYBPE_FUZZ_TMP) and removes it when the child is done,
however the child ended.  tiktoken's loader, the suite's reference, kept
a copy of every rank file it read there as well (see the last test).
"""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(os.path.dirname(HERE), "fuzz", "run.py")


def _engines():
    engines = ["hypothesis"]
    try:
        import atheris  # noqa: F401
    except ImportError:
        return engines
    return engines + ["atheris"]


def _fuzz(tmp_path, *args, env=None):
    if not os.path.exists(RUNNER):  # CI and make sanitize also run a copy of tests/ alone
        pytest.skip("fuzz/ is not beside this copy of the tests")
    environ = dict(os.environ, TMPDIR=str(tmp_path), **(env or {}))
    return subprocess.run([sys.executable, RUNNER] + list(args), env=environ, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=300, text=True)


@pytest.mark.parametrize("engine", _engines())
def test_a_fuzz_run_leaves_no_scratch_directory(tmp_path, engine):
    done = _fuzz(tmp_path, "load-tiktoken", "--engine", engine, "--runs", "20", "--seed", "1",
                 "--seconds", "20")
    assert done.returncode == 0, done.stdout
    assert "1 passed" in done.stdout
    assert sorted(os.listdir(tmp_path)) == []


def test_the_child_writes_into_the_directory_the_parent_gives(tmp_path):
    # The mechanism, whichever engine runs: a child told PYBPE_FUZZ_TMP puts
    # its files there and leaves the directory for the parent to remove.
    scratch = tmp_path / "given"
    scratch.mkdir()
    done = _fuzz(tmp_path, "--child", "load-tiktoken", "--engine", "hypothesis", "--runs", "5",
                 "--seed", "1", "--seconds", "20",
                 env={"PYBPE_FUZZ_TMP": str(scratch),
                      "PYTHONPATH": os.path.dirname(RUNNER) + os.pathsep + os.environ.get("PYTHONPATH", "")})
    assert done.returncode == 0, done.stdout
    assert "seed.tiktoken" in os.listdir(scratch)
    assert sorted(os.listdir(tmp_path)) == ["given"]


def test_tiktoken_reference_leaves_no_cache_copy(tmp_path, monkeypatch):
    # tests/conftest.py's offline_tiktoken reads the shipped rank files with
    # tiktoken's own loader, which copies what it reads into
    # <tmp>/data-gym-cache unless TIKTOKEN_CACHE_DIR is empty.
    load = pytest.importorskip("tiktoken.load")
    from pybpe import registry

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    path = os.path.join(os.path.dirname(registry.__file__), "data", "gpt2.tiktoken")
    ranks = load.load_tiktoken_bpe(path, expected_hash=registry._FILES["gpt2.tiktoken"])
    assert len(ranks) == 50256
    assert sorted(os.listdir(tmp_path)) == []
