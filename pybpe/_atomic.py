"""Safe file output: every file pybpe writes goes through here.

`atomic_output(path)` gives a binary file object; what is written to it
replaces `path` only when the block ends without an exception, and the old
file stays whole until then.  The rules (the README's "Every file pybpe writes"):

- A symlink is written through: its final target gets the new contents (a
  dangling link's target is created) and the link stays a link.
- A path that is not a regular file -- a FIFO, a character device such as
  /dev/null, or a name of an open descriptor (/dev/stdout, /dev/fd/N,
  /proc/self/fd/N, and links to them) -- is written to as a stream, in
  place; it is never replaced by a regular file.  A binary file object
  (sys.stdout.buffer) may be given instead of a path: it is written to and
  left open.
- A new file gets the mode the umask gives (0666 & ~umask); a replaced file
  keeps its mode, and its owner and group where the process may set them.
- `inputs`: paths the caller reads while writing; if the destination is one
  of them (the same file by device and inode, so through links and hard
  links too) it is refused before anything is written.
- Errors name the destination the caller gave, never a temporary file.
- A replaced file is a new file under the old name (that is what makes the
  change atomic): other hard links to the old file keep the old contents.

Temporary files.  On Linux the data goes into an unnamed file (O_TMPFILE) in
the target's folder, which gets a name only once it is complete: an
exception, Ctrl-C, SIGTERM or even SIGKILL leaves nothing behind.  Replacing
an existing file needs a name for the instant between linking and renaming
(two system calls).  An unnamed file is named by linking /proc/self/fd/N or,
where that is refused, by linkat(AT_EMPTY_PATH) (which older kernels allow
only with CAP_DAC_READ_SEARCH); which one works is probed once per file
system.  Where neither works, or O_TMPFILE is missing (other systems, some
file systems), the temporary file is named `.<name>.pybpe-<pid>-<random>.tmp`
beside the target from the start; it is removed on every exit Python sees,
and one left by a killed process (SIGKILL, power loss) is removed by the next
write to the same target once that process is gone.

Files that change together.  `atomic_outputs(paths)` writes several files
(GPT-2's vocab.json + merges.txt) that must not be seen mixed, and comes as
close to whole-or-nothing as renames allow (no system call replaces two
names at once): every temporary file is written, synced, named and closed
before any rename, so a write error or a full disk changes nothing; each
replaced target but the last is first kept reachable under a temporary name
(a hard link to it, or a copy where links are refused); the renames then run
back to back with SIGINT and SIGTERM held, and if one fails (or an exception
comes between them) the targets already renamed get their old files back.
Only SIGKILL or a crash between the renames can leave a mix.
"""
import contextlib
import errno
import os
import re
import secrets
import shutil
import signal
import stat
import sys
import threading

# Set to False (tests do) to use named temporary files even where O_TMPFILE works.
_TMPFILE = hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# The name of an open file descriptor: its "target" is the descriptor's file.
_FD_LINK = re.compile(r"/proc/[^/]+/fd/\d+\Z")
_MAX_LINKS = 40  # as the kernel's ELOOP limit
# st_dev -> how unnamed files get a name on that file system: _link_proc,
# _link_empty_path or None (not at all).  Probed once per file system.
_NAMERS = {}


@contextlib.contextmanager
def atomic_output(path, *, inputs=()):
    """A binary file object (with `write`) whose contents replace `path` when
    the block ends without an exception (see the module's rules)."""
    if hasattr(path, "write"):
        yield path  # a stream the caller owns
        path.flush()
        return
    path = os.fspath(path)
    target, is_stream = _checked_target(path, inputs)
    if is_stream:
        with _named_errors(path):
            f = open(path, "wb")
        closed = False
        try:
            yield _Writer(f, path)
            with _named_errors(path):
                f.close()  # flushes: a full device says so here
            closed = True
        finally:
            if not closed:
                with contextlib.suppress(OSError):
                    f.close()  # closes the descriptor even when flushing fails
        return
    out = _Replacement(target)
    try:
        with _named_errors(path):
            out.open()
        yield _Writer(out.file, path)
        with _named_errors(path):
            out.commit()
    finally:
        out.close()


@contextlib.contextmanager
def atomic_outputs(paths, *, inputs=()):
    """Binary file objects, one per path, whose contents replace the paths
    together when the block ends without an exception (see "Files that
    change together" above; each path follows the rules of atomic_output).
    A path that is a stream (a FIFO, a device) is written in place, as by
    atomic_output: it cannot take part in the all-or-nothing."""
    paths = [os.fspath(p) for p in paths]
    with contextlib.ExitStack() as stack:
        files, pending = [], []
        for path in paths:
            target, is_stream = _checked_target(path, inputs)
            if is_stream:
                files.append(stack.enter_context(atomic_output(path, inputs=inputs)))
                continue
            out = _Replacement(target)
            stack.callback(out.close)  # registered before open(): any file it makes is removed
            with _named_errors(path):
                out.open()
            pending.append((out, path))
            files.append(_Writer(out.file, path))
        yield files
        # Everything that can fail short of a rename fails here, while every
        # target is still old.  The last target needs no copy of its old
        # file: when its rename fails there is nothing after it to undo.
        for k, (out, path) in enumerate(pending):
            with _named_errors(path):
                out.prepare(keep_old=k < len(pending) - 1)
        with _signals_held():
            _install_together(pending)
            # Still with the signals held: an interrupt between the renames
            # and this removal would leave the old files' kept names behind.
            for out, _ in pending:
                out.drop_kept()
        for folder in dict.fromkeys(out.folder for out, _ in pending):
            _sync_folder(folder)


def _install_together(pending):
    """Rename each prepared replacement over its target; if one fails, or an
    exception comes in between, put back the old files of those already
    renamed (newest first) and raise the error, named."""
    started = []
    try:
        for out, path in pending:
            # Recorded before the rename: an exception just after it (before
            # the next line) still finds it to undo.  restore() looks at the
            # target itself to see whether the rename happened.
            started.append(out)
            with _named_errors(path):
                out.install()
    except BaseException:
        for out in reversed(started):
            out.restore()
        raise


@contextlib.contextmanager
def _signals_held(signums=(signal.SIGINT, signal.SIGTERM)):
    """Hold SIGINT and SIGTERM for the block: a signal arriving inside it is
    delivered to the previous handler (Ctrl-C's KeyboardInterrupt, the CLI's
    SIGTERM exit, or the default action) once the block is over.  Handlers
    can only be set in the main thread, and only ones set from Python can be
    put back: otherwise a signal is left as it was."""
    previous, caught = {}, []

    def hold(signum, frame):
        caught.append(signum)

    try:
        if threading.current_thread() is threading.main_thread():
            for signum in signums:
                handler = signal.getsignal(signum)
                if handler is None or handler is signal.SIG_IGN:
                    continue  # not Python's to restore, or nothing to hold
                previous[signum] = handler  # recorded first: the finally restores it
                signal.signal(signum, hold)
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(caught):
            signal.raise_signal(signum)  # now to its own handler


def _checked_target(path, inputs):
    """resolve_target(path), refusing an input as the destination; errors name `path`."""
    try:
        target, is_stream = resolve_target(path)
        _refuse_inputs(path, target, inputs)
    except OSError as exc:
        raise _naming(exc, path) from None
    return target, is_stream


def atomic_write(path, data, *, inputs=()):
    """Write bytes to `path` safely (see atomic_output)."""
    with atomic_output(path, inputs=inputs) as f:
        f.write(data)


class _Writer:
    """The file object callers get: `write` only, with errors naming the
    destination instead of whatever file descriptor is behind it."""

    __slots__ = ("_file", "_path")

    def __init__(self, file, path):
        self._file, self._path = file, path

    def write(self, data):
        try:
            return self._file.write(data)
        except OSError as exc:
            raise _naming(exc, self._path) from None


class _Replacement:
    """A temporary file in the target's folder, committed over the target.

    Creating the object creates no file; open() does, and close() discards
    whatever commit() did not use.  Each name is recorded before the file
    gets it, so an interrupt at any point leaves close() something to remove
    and never a file it does not know of."""

    def __init__(self, target):
        self.target = target
        self.folder, self.name = os.path.split(target)
        self.file = None       # the temporary file, once open() made it
        self.tmp_name = None   # its name, while it has one
        self.new_id = None     # (st_dev, st_ino) of the new file, once prepared
        self.kept = None       # a name holding the old target, for restore()

    def open(self):
        try:
            self.old = os.stat(self.target)
        except FileNotFoundError:
            self.old = None
        _remove_stale(self.folder, self.name)
        self.namer = _namer(self.folder, self.name) if _TMPFILE else None
        if self.namer is not None:
            fd = _open_unnamed(self.folder)
        else:
            self.tmp_name = _fresh_name(self.folder, self.name)
            fd = os.open(self.tmp_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, 0o666)
        self.file = os.fdopen(fd, "wb")

    def _finish_data(self):
        """Flush and sync the data, with the replaced file's owner and mode."""
        f = self.file
        f.flush()
        fd = f.fileno()
        if self.old is not None:
            _copy_owner_and_mode(fd, self.old)
        os.fsync(fd)
        return fd

    def commit(self):
        fd = self._finish_data()
        if self.namer is not None:
            if self.old is None:
                try:
                    self.namer(fd, self.target)
                    _sync_folder(self.folder)
                    return
                except FileExistsError:
                    pass  # created meanwhile: replace it as below
            self.tmp_name = _fresh_name(self.folder, self.name)
            self.namer(fd, self.tmp_name)
        os.replace(self.tmp_name, self.target)
        self.tmp_name = None
        _sync_folder(self.folder)

    # For files that change together (atomic_outputs): prepare() every one,
    # then install() them back to back, restore() undoing an install.

    def prepare(self, keep_old):
        """Finish the temporary file: synced, named, closed.  With
        `keep_old`, the target as it is now stays reachable under a second
        name, for restore()."""
        fd = self._finish_data()
        new = os.fstat(fd)
        self.new_id = (new.st_dev, new.st_ino)
        if self.namer is not None:
            self.tmp_name = _fresh_name(self.folder, self.name)
            self.namer(fd, self.tmp_name)
        self.file.close()
        self.file = None
        if keep_old and self.old is not None:
            self.kept = _fresh_name(self.folder, self.name)  # recorded first, as tmp_name
            try:
                os.link(self.target, self.kept)  # the old file itself: mode, owner, other links
            except OSError:
                _copy_aside(self.target, self.kept)  # a file system without hard links

    def install(self):
        os.replace(self.tmp_name, self.target)
        self.tmp_name = None

    def restore(self):
        """Undo install(), if it happened: the old file back under the target's
        name (or no file, where there was none).  Best effort -- this runs
        while another error is on its way up; if it fails the old file
        stays under its kept name (removed as stale by a later write)."""
        try:
            now = os.lstat(self.target)
        except OSError:
            return
        if (now.st_dev, now.st_ino) != self.new_id:
            return  # the rename never happened
        try:
            if self.kept is not None:
                os.replace(self.kept, self.target)
            elif self.old is None:
                os.unlink(self.target)
        except OSError:
            pass
        self.kept = None

    def drop_kept(self):
        """Remove the kept old file, once every install() is done."""
        if self.kept is not None:
            try:
                os.unlink(self.kept)
            except OSError:
                pass
            self.kept = None

    def close(self):
        # Closing flushes what is still buffered; after a failed write (a
        # full disk) that fails again, and its error -- naming no file --
        # replaced the caller's and skipped the removal below.  The data is
        # being discarded anyway: only the descriptor matters here.
        try:
            if self.file is not None:
                try:
                    self.file.close()
                except OSError:
                    pass
        finally:
            for attr in ("tmp_name", "kept"):
                if getattr(self, attr) is not None:
                    try:
                        os.unlink(getattr(self, attr))
                    except OSError:
                        pass
                    setattr(self, attr, None)


def _fresh_name(folder, name):
    """A new name for a temporary file of `name` (the stale-file pattern)."""
    return os.path.join(folder, ".%s.pybpe-%d-%s.tmp" % (name, os.getpid(), secrets.token_hex(4)))


def _copy_aside(target, kept):
    """Copy `target` to the new file `kept`, with its mode (and owner, where
    allowed): the old file kept for restore() where it cannot be
    hard-linked.  The caller records `kept` before this creates it, and
    removes it if this fails."""
    old = os.stat(target)
    fd = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as out, open(target, "rb") as src:
        shutil.copyfileobj(src, out, 1 << 20)
        out.flush()
        _copy_owner_and_mode(out.fileno(), old)
        os.fsync(out.fileno())


def _open_unnamed(folder):
    """A write descriptor of a new unnamed file in `folder` (mode 0666 less the umask)."""
    return os.open(folder or ".", os.O_TMPFILE | os.O_WRONLY | _CLOEXEC, 0o666)


def _namer(folder, name):
    """How unnamed files in `folder` get a name (None: they cannot; use named
    temporary files).  The answer is the same for a whole file system, so
    it is probed once per st_dev, with a throwaway file."""
    dev = os.stat(folder or ".").st_dev
    if dev not in _NAMERS:
        namer = None
        try:
            fd = _open_unnamed(folder)
        except OSError as exc:
            # Unsupported here (old kernels report EISDIR); other errors
            # (no folder, no permission) are the caller's to see.
            if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
        else:
            try:
                for candidate in (_link_proc, _link_empty_path):
                    probe = _fresh_name(folder, name)
                    try:
                        candidate(fd, probe)
                        namer = candidate
                        break
                    except OSError:
                        continue
                    finally:
                        # try/except, not contextlib.suppress: an interrupt
                        # is delivered on the way into a Python function,
                        # and one there skipped the removal.
                        try:
                            os.unlink(probe)
                        except OSError:
                            pass
            finally:
                os.close(fd)
        _NAMERS[dev] = namer
    return _NAMERS[dev]


def _link_proc(fd, path):
    """Name the unnamed file open on `fd` `path`, through /proc/self/fd."""
    os.link("/proc/self/fd/%d" % fd, path)


def _link_empty_path(fd, path):
    """Name the unnamed file open on `fd` `path`: linkat(fd, "", ..., AT_EMPTY_PATH)."""
    if not sys.platform.startswith("linux"):
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS), path)
    import ctypes  # late: only this Linux-only path needs it

    linkat = ctypes.CDLL(None, use_errno=True).linkat
    at_fdcwd, at_empty_path = -100, 0x1000  # <fcntl.h> on Linux
    if linkat(fd, b"", at_fdcwd, os.fsencode(path), at_empty_path) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)


def resolve_target(path):
    """(target, is_stream): the file that writing `path` should change.

    Follows symlinks one by one (a dangling link resolves to the path it
    names).  A name of an open descriptor, or anything existing that is not
    a regular file, is a stream.  Paths are never normalised as strings:
    in "dir/link/../f" the ".." is the parent of the link's target, as the
    kernel reads it, and realpath of the folder resolves it that way."""
    current = os.path.join(os.getcwd(), os.fspath(path))  # join keeps an absolute path
    for _ in range(_MAX_LINKS):
        folder, name = os.path.split(current)
        folder = os.path.realpath(folder)
        if name in ("", ".", ".."):  # "f/", "d/.": a folder, never a file to write
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        current = os.path.join(folder, name)
        if _FD_LINK.match(current):
            return current, True
        try:
            link = os.readlink(current)
        except FileNotFoundError:
            return current, False  # a new file (or a dangling link's target)
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise
            break  # not a link: current is the target
        current = os.path.join(folder, link)  # join keeps an absolute link
    else:
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
    mode = os.stat(current).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    return current, not stat.S_ISREG(mode)


def same_file(a, b):
    """True if writing paths `a` and `b` would write the same file (through
    symlinks, and hard links when it exists)."""
    target_a, target_b = resolve_target(os.fspath(a))[0], resolve_target(os.fspath(b))[0]
    if target_a == target_b:
        return True
    try:
        return os.path.samefile(target_a, target_b)
    except OSError:
        return False  # one does not exist yet: different new files


def _refuse_inputs(path, target, inputs):
    """ValueError if the destination is the same regular file as an input."""
    try:
        out = os.stat(target)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(out.st_mode):
        return
    for source in inputs:
        try:
            src = os.stat(source)
        except OSError:
            continue  # the reader reports it
        if (src.st_dev, src.st_ino) == (out.st_dev, out.st_ino):
            raise ValueError("output %s is the input file %s: writing it would destroy the input"
                             % (path, os.fspath(source)))


def _copy_owner_and_mode(fd, old):
    """Give the new file the replaced file's owner, group and mode, as far as
    this process may (changing the owner needs privileges; the group needs
    membership).  The mode is set last: chown may clear set-id bits."""
    if hasattr(os, "fchown"):
        for uid in (old.st_uid, -1):
            try:
                os.fchown(fd, uid, old.st_gid)
                break
            except PermissionError:
                continue
    if hasattr(os, "fchmod"):
        os.fchmod(fd, stat.S_IMODE(old.st_mode))


def _sync_folder(folder):
    """Make the new directory entry durable (best effort: not every system
    can open or sync a directory)."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder or ".", os.O_RDONLY | _CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _remove_stale(folder, name):
    """Remove named temporary files for `name` left by processes that are gone."""
    if os.name != "posix":
        return  # no cheap, safe "is this process alive" check
    pattern = re.compile(r"\.%s\.pybpe-(\d+)-[0-9a-f]+\.tmp\Z" % re.escape(name))
    try:
        entries = os.listdir(folder or ".")
    except OSError:
        return
    for entry in entries:
        match = pattern.match(entry)
        if match and not _alive(int(match.group(1))):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, entry))


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _naming(exc, path):
    """`exc` re-made to name `path` (an OSError subclass by errno), or as it was."""
    if isinstance(exc, OSError) and exc.errno is not None and exc.filename != path:
        return OSError(exc.errno, exc.strerror or os.strerror(exc.errno), path)
    return exc


@contextlib.contextmanager
def _named_errors(path):
    try:
        yield
    except OSError as exc:
        raise _naming(exc, path) from None
