"""Atomic file output: every file pybpe writes goes through here.

Data goes to a temporary file in the destination's folder, is flushed to disk,
and only then renamed over the destination (os.replace is atomic on POSIX and
Windows), so a crash or an exception mid-write leaves the old file whole and
no temporary file behind.
"""
import contextlib
import os
import tempfile


@contextlib.contextmanager
def atomic_output(path):
    """A binary file object whose contents replace `path` when the block ends
    without an exception; on an exception the temporary file is removed."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write(path, data):
    """Write bytes to `path` atomically (see atomic_output)."""
    with atomic_output(path) as f:
        f.write(data)
