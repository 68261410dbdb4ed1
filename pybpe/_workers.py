"""Running a list of jobs on a few threads: the calling thread and helpers
that live across calls.

Encoding's batch methods run C calls that release the GIL on these threads,
so threads really share the work: encode_ordinary_batch one call per thread
over a batch they share through a cursor (Encoding._encode_shared), or,
without a piece cache, one call per slice.
`run(fn, items, num_threads)` is [fn(x) for x in items] on num_threads
threads (at most one per CPU): the calling thread works too (it would
otherwise only wait), and the others are helpers from one process-wide pool
of one thread per CPU but one.  Each thread
takes the next item not yet taken (a queue of indices), so a thread that
finishes early takes more.  Results come back in the order of `items`; when
items fail, every item still runs and the failure of the first failing item
(by position) is raised, as ThreadPoolExecutor.map did.

Why not a ThreadPoolExecutor per call (what encode_ordinary_batch did before):
starting and joining its threads cost ~0.7 ms of wall time and ~1 ms of CPU
per call on this 2-core machine, against ~8 ms for a 0.5 MB batch on one
thread; the helpers here are started once.  With the calling thread working,
two threads need one helper, so each item costs one queue read, not a
hand-off to a worker and back.

The pool is made when first needed and forgotten in a child process after
fork (its threads do not exist there; os.register_at_fork), so a fork never
inherits helpers that would never answer.  A helper that starts after its
call is over finds no item left and returns at once, so a caller never waits
for helpers busy with other calls: it waits only for items it knows are taken.

Measured (encode_ordinary_batch, 2 threads, ~1 MB of unseen Shakespeare in
~10 KB documents per call, tools/bench_batch_threads.py under chrt -f 10 on
the shared 2-core machine; 2 threads / 1 thread): a pool per call 1.29-1.35x,
these helpers 1.45-1.55x.  Where a call's time goes (gpt2, one thread:
~8.2 ms in C, ~2.7 ms making the lists through marshal, of which ~2.0
holding the GIL; ~1.0 ms, all holding it, through pybpe._pylists' int table,
which took 2 threads from ~1.51x to ~1.63x on a busy machine): the
helper starts ~0.2 ms after the caller (the caller's UTF-8, then a thread
wake-up), the threads' lists wait for each other when their slices end
together, and the two piece caches merge more pieces than one cache: ~8%
on runs of ~16 KB taken in turn (an early measure), 19% when each takes
half of the same unseen documents (csrc/NOTES.md, session 22), which in C
alone costs the two halves 11% more CPU than one cache would.
Dead ends, measured the same way: giving each thread back the piece cache it
had last (the cache stays in its core's cache): no change; unequal slices for
caller and helper (0.55/0.45 to 0.61/0.39, with or without a tail): no
change; marshal's stream written in the same C call as the encoding (one
GIL-free stretch instead of two): +0.02x, within noise.
"""
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from queue import Empty, SimpleQueue

_pool = None
_pool_lock = threading.Lock()


def _helpers():
    global _pool
    with _pool_lock:
        if _pool is None:
            # One helper per CPU but the caller's.  A fixed number: a call
            # that comes while the helpers are still returning from the last
            # one queues its request (and does the items itself meanwhile)
            # instead of starting more threads.
            _pool = ThreadPoolExecutor(max_workers=max(1, cpus() - 1), thread_name_prefix="pybpe-helper")
        return _pool


def _forget_pool():
    # After fork, in the child: the parent's helper threads are not there.
    global _pool, _pool_lock
    _pool = None
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def cpus():
    """The CPUs this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def checked(num_threads):
    """num_threads, an int >= 1; TypeError or ValueError naming it otherwise
    (0, -1, 1.5 and True were taken silently)."""
    if isinstance(num_threads, bool) or not isinstance(num_threads, int):
        raise TypeError("num_threads must be an int >= 1, not %r" % (num_threads,))
    if num_threads < 1:
        raise ValueError("num_threads must be an int >= 1, not %d" % num_threads)
    return num_threads


def width(num_threads, n_items):
    """How many threads run() uses for n_items items: num_threads, but no
    more than there are items or CPUs (more threads than CPUs only take
    turns, each with a piece cache of its own to warm)."""
    return max(1, min(num_threads, n_items, cpus()))


class _Run:
    """The items of one run() call and what has come of them."""

    def __init__(self, fn, items):
        self.fn, self.items = fn, items
        self.todo = SimpleQueue()
        for i in range(len(items)):
            self.todo.put(i)
        self.results = [None] * len(items)
        self.errors = {}
        self.left = len(items)
        self.lock = threading.Lock()
        self.finished = threading.Event()

    def work(self, caller=False):
        # Takes items until none is left.  SimpleQueue.get_nowait is atomic,
        # so each item runs once.  A helper keeps every failure for run() to
        # raise; the caller stops at once on KeyboardInterrupt or SystemExit
        # (Ctrl-C must not wait for the rest of the batch).
        while True:
            try:
                i = self.todo.get_nowait()
            except Empty:
                return
            try:
                self.results[i] = self.fn(self.items[i])
            except BaseException as exc:  # noqa: B902 -- re-raised by run() in the caller
                if caller and not isinstance(exc, Exception):
                    raise
                self.errors[i] = exc
            with self.lock:
                self.left -= 1
                if not self.left:
                    self.finished.set()


def run(fn, items, num_threads):
    """[fn(x) for x in items], on the calling thread and up to num_threads - 1
    helpers (see the module docstring).

        >>> run(lambda x: x * x, [1, 2, 3], 2)
        [1, 4, 9]
    """
    items = list(items)
    n = width(num_threads, len(items))
    if n <= 1:
        return [fn(x) for x in items]
    job = _Run(fn, items)
    pool = _helpers()
    try:
        for _ in range(n - 1):
            pool.submit(job.work)
    except RuntimeError:
        pass  # the interpreter is shutting down: no new threads, the caller does it all
    job.work(caller=True)
    job.finished.wait()
    if job.errors:
        raise job.errors[min(job.errors)]
    return job.results
