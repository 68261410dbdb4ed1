"""pybpe/_workers.py: jobs on the calling thread and helpers that live across
calls (what Encoding's batch methods run their slices on)."""
import os
import signal
import threading
import time
import warnings

import pytest

from pybpe import _workers, core
from pybpe.registry import get_encoding

from conftest import shakespeare

BACKENDS = core.available()


@pytest.fixture
def four_cpus(monkeypatch):
    # The threaded path on any machine, one CPU included.
    monkeypatch.setattr(_workers, "cpus", lambda: 4)


def test_results_in_order_each_item_once(four_cpus):
    calls, lock = [], threading.Lock()

    def square(x):
        with lock:
            calls.append(x)
        time.sleep(0.001 * (x % 3))  # items finish out of order
        return x * x

    for threads in (1, 2, 3, 4, 9):
        calls.clear()
        assert _workers.run(square, range(40), threads) == [x * x for x in range(40)]
        assert sorted(calls) == list(range(40))
    assert _workers.run(square, [], 4) == []
    assert _workers.run(square, [7], 4) == [49]


def test_uses_threads_and_the_caller(four_cpus):
    seen, lock = set(), threading.Lock()
    barrier = threading.Barrier(2, timeout=10)

    def job(x):
        with lock:
            seen.add(threading.get_ident())
        if x < 2:
            barrier.wait()  # the first two items run at the same time
        return x

    assert _workers.run(job, range(6), 2) == list(range(6))
    assert threading.get_ident() in seen and len(seen) == 2


def test_helpers_live_across_calls(four_cpus):
    # A pool of helpers, not threads made per call: over many calls the
    # helper threads (the objects, kept alive here) stay within the pool's size.
    names, lock = set(), threading.Lock()

    def job(x):
        with lock:
            names.add(threading.current_thread())
        time.sleep(0.002)  # long enough for the helpers to wake and take items
        return x

    for _ in range(30):
        _workers.run(job, range(8), 3)
    helpers = names - {threading.current_thread()}
    assert helpers and all(t.name.startswith("pybpe-helper") for t in helpers)
    assert len(helpers) <= max(1, _workers.cpus() - 1)


def test_first_failure_by_position_wins_and_every_item_runs(four_cpus):
    ran, lock = [], threading.Lock()

    def job(x):
        with lock:
            ran.append(x)
        if x == 0:
            time.sleep(0.2)  # fails last in time, but is first in position
            raise ValueError("item 0")
        if x == 1:
            raise KeyError("item 1")
        return x

    for _ in range(3):
        ran.clear()
        with pytest.raises(ValueError, match="item 0"):
            _workers.run(job, range(6), 2)
        assert sorted(ran) == list(range(6))


def test_keyboard_interrupt_in_the_caller_stops_at_once(four_cpus):
    # Ctrl-C while the calling thread runs an item: raised there and then,
    # not after the rest of the items.
    ran = []

    def job(x):
        ran.append(x)
        if threading.current_thread() is threading.main_thread():
            raise KeyboardInterrupt
        time.sleep(0.05)
        return x

    with pytest.raises(KeyboardInterrupt):
        _workers.run(job, range(40), 2)
    assert len(ran) < 40


def test_width():
    assert _workers.width(8, 3) <= 3
    assert _workers.width(8, 0) == 1
    assert _workers.width(1, 100) == 1
    assert _workers.width(64, 1000) == min(64, _workers.cpus())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_batch_after_fork(four_cpus):
    # A child made by fork has none of the parent's helper threads; a batch
    # there must still finish, with the right IDs.
    enc = get_encoding("gpt2", backend=BACKENDS[0])
    docs = ["hello world %d, " % i * 20 for i in range(40)]
    want = [enc.encode_ordinary(d) for d in docs]
    assert enc.encode_ordinary_batch(docs, num_threads=2) == want  # the parent's helpers exist
    with warnings.catch_warnings():  # Python 3.12+ warns of fork with threads alive: that is the point
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: no pytest from here on, only an exit code
        signal.alarm(30)  # a hang ends the child (SIGALRM's default action)
        try:
            ok = all(enc.encode_ordinary_batch(docs, num_threads=2) == want for _ in range(5))
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_batch_on_threads_equals_one_by_one(backend, four_cpus):
    # Slices of every size the schedule makes (a tail slice, fewer texts
    # than threads, empty texts), non-ASCII texts and lone surrogates, whose
    # UTF-8 is now made on the slice's thread.
    enc = get_encoding("cl100k_base", backend=backend)
    text = shakespeare()[:60_000]
    docs = [text[i:i + 1500] for i in range(0, len(text), 1500)]
    docs += ["", "日本語のテキスト " * 30, "a\ud800b \udc00 \ud83d\ude00", " " * 3000]
    want = [enc.encode_ordinary(d) for d in docs]
    for threads in (2, 3, 4):
        for batch in (docs, docs[:3], docs[::-1]):
            assert enc.encode_ordinary_batch(batch, num_threads=threads) == [
                want[docs.index(d)] for d in batch]
    with pytest.raises(TypeError, match=r"text\[5\]"):
        enc.encode_ordinary_batch(docs[:5] + [b"bytes"] + docs[5:], num_threads=2)


def test_batch_error_from_a_slice_is_raised(four_cpus):
    # A vocabulary without byte 0x7f: the slice holding it fails in C; the
    # batch raises that error (whichever thread met it) and nothing else.
    from pybpe import Encoding
    ranks = {bytes([b]): b for b in range(127)}
    enc = Encoding("x", pat_str=get_encoding("gpt2").pat_str, mergeable_ranks=ranks, special_tokens={},
                   backend=BACKENDS[0])
    docs = ["abc " * 50] * 30 + ["bad \x7f here"] + ["abc " * 50] * 30
    with pytest.raises(ValueError, match="no token"):
        enc.encode_ordinary_batch(docs, num_threads=2)
    assert enc.encode_ordinary_batch(docs[:30], num_threads=2) == [enc.encode_ordinary(d) for d in docs[:30]]
