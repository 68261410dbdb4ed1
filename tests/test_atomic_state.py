"""SPEC §3: every state change installs the new state whole or keeps the old one.

A Ctrl-C arrives as a KeyboardInterrupt raised between two bytecodes of
whatever Python code is running.  These tests raise one at every line and
every function entry of pybpe's code along a state change (a tracer set with
sys.settrace counts them and raises at the n-th), on each backend, and check
that the tokenizer afterwards is wholly the old one when the interrupt
escaped, and wholly the new one when it did not: never a mix, never the new
state together with the exception.

'return' events are left out on purpose: CPython does not run signal
handlers on a return (only on calls and backward jumps), so a real Ctrl-C
cannot surface there, and a tracer raising there would report the new state
plus an exception that no real interrupt can produce.
"""
import os
import sys

import pytest

import pybpe
from pybpe import core as backends

BACKENDS = backends.available()
PACKAGE = os.path.dirname(os.path.abspath(pybpe.__file__))
OLD_CORPUS = ["low", "low", "lower", "newest", "widest"]
NEW_CORPUS = ["the cat sat on the mat", "the rat ate the hat", "that is that"]
PROBE = "the lowest cat sat on the widest mat"


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


class Interrupter:
    """A tracer raising KeyboardInterrupt at the `at`-th 'call' or 'line'
    event in pybpe's own files, counting only once `armed` is true; with
    at=None it only counts."""

    def __init__(self, at=None, armed=True):
        self.at, self.armed, self.events, self.fired = at, armed, 0, False

    def __call__(self, frame, event, arg):
        if not frame.f_code.co_filename.startswith(PACKAGE):
            return None  # neither this frame nor its lines
        if event == "return" and frame.f_code.co_name == "_run":
            self.armed = True  # the merge loop is over: the install path starts
        if self.armed and event in ("call", "line") and not self.fired:
            self.events += 1
            if self.events == self.at:
                self.fired = True
                raise KeyboardInterrupt("injected at event %d" % self.at)
        return self

    def run(self, fn, *args, **kwargs):
        """fn(*args, **kwargs) under this tracer: (raised, result)."""
        sys.settrace(self)
        try:
            return False, fn(*args, **kwargs)
        except KeyboardInterrupt:
            return True, None
        finally:
            sys.settrace(None)


def snapshot(tok):
    """Everything a user can see of a BPETokenizer's state, as plain values."""
    if not tok.is_trained:
        return ("untrained", tok.vocab, tok.merges, tok.token_to_id, tok.id_to_token)
    ids = tok.encode(PROBE + " <|end|>", allowed_special="all")
    return (list(tok.vocab), list(tok.merges), dict(tok.token_to_id), dict(tok.id_to_token),
            tok.vocab_size, ids, tok.decode(ids), tok.config())


def sweep(make, change, arm_at_start):
    """Inject an interrupt at every event of `change(tok)` on a fresh
    `make()`; check each outcome is wholly old or wholly new.  Returns the
    number of injection points (the test asserts there were some)."""
    reference = make()
    old = snapshot(reference)
    change(reference)
    new = snapshot(reference)
    assert old != new
    counter = Interrupter(armed=arm_at_start)
    counter.run(change, make())
    assert counter.events > 0
    for at in range(1, counter.events + 1):
        tok = make()
        raised, _ = Interrupter(at, armed=arm_at_start).run(change, tok)
        after = snapshot(tok)
        if raised:
            assert after == old, "interrupt at event %d of %d left a changed tokenizer" % (at, counter.events)
        else:
            assert after == new, "event %d of %d: no interrupt, yet not the new state" % (at, counter.events)
    return counter.events


def trained(backend, vocab_size=40, **options):
    def make():
        tok = pybpe.BPETokenizer(vocab_size=vocab_size, backend=backend, special_tokens=["<|end|>"], **options)
        tok.train(OLD_CORPUS)
        return tok
    return make


def test_train_install_is_atomic(backend):
    sweep(trained(backend), lambda tok: tok.train(NEW_CORPUS), arm_at_start=False)


def test_train_from_counts_install_is_atomic(backend):
    sweep(trained(backend, 270, byte_level=True, pretokenizer="gpt2"),
          lambda tok: tok.train_from_counts({"the": 5, " cat": 3, " sat": 2, " that": 4}),
          arm_at_start=False)


def test_first_train_is_all_or_nothing(backend):
    """From untrained: an interrupt leaves it untrained, never half-trained."""
    def make():
        return pybpe.BPETokenizer(vocab_size=40, backend=backend, special_tokens=["<|end|>"])
    sweep(make, lambda tok: tok.train(NEW_CORPUS), arm_at_start=False)


def test_load_is_all_or_nothing(backend, tmp_path):
    """load builds a new object: an interrupt anywhere in it returns nothing,
    and an uninterrupted load is the saved tokenizer whole."""
    source = trained(backend)()
    path = tmp_path / "model.json"
    source.save(path)
    want = snapshot(source)
    counter = Interrupter()
    counter.run(pybpe.load, path, backend=backend)
    assert counter.events > 0
    for at in range(1, counter.events + 1):
        raised, tok = Interrupter(at).run(pybpe.load, path, backend=backend)
        assert raised or snapshot(tok) == want


def test_char_tokenizer_build_vocab_is_atomic():
    def make():
        tok = pybpe.CharTokenizer()
        tok.build_vocab(["hello"])
        return tok

    def view(tok):
        return (tok.vocab, tok.vocab_size, tok.char_to_id, tok.id_to_char, tok.encode("world"))

    old = view(make())
    new_tok = make()
    new_tok.build_vocab(["world wide"])
    new = view(new_tok)
    counter = Interrupter()
    counter.run(make().build_vocab, ["world wide"])
    for at in range(1, counter.events + 1):
        tok = make()
        raised, _ = Interrupter(at).run(tok.build_vocab, ["world wide"])
        assert view(tok) == (old if raised else new), "event %d" % at


def test_real_signals_during_train(backend):
    """The same with real signals: SIGALRM at random moments of train() (its
    handler raises KeyboardInterrupt, as SIGINT's does).  Python runs a
    handler only between bytecodes that check for signals, never between
    train's last assignment and its return, so `finished` tells exactly
    whether train completed."""
    import random
    import signal
    import time

    make = trained(backend)
    reference = make()
    old = snapshot(reference)
    start = time.perf_counter()
    reference.train(NEW_CORPUS)
    span = time.perf_counter() - start
    new = snapshot(reference)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    rng = random.Random(11)
    outcomes = set()
    try:
        for _ in range(300):
            tok = make()
            finished = False
            try:
                signal.setitimer(signal.ITIMER_REAL, max(rng.uniform(0, span * 1.2), 1e-6))
                tok.train(NEW_CORPUS)
                finished = True
                signal.setitimer(signal.ITIMER_REAL, 0)
            except KeyboardInterrupt:
                pass
            signal.setitimer(signal.ITIMER_REAL, 0)
            assert snapshot(tok) == (new if finished else old)
            outcomes.add(finished)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert outcomes == {True, False}  # both outcomes were reached
