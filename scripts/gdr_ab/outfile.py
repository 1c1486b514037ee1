"""Writing an output file so that a failure never destroys anything.

The content is made whole in memory first. A regular (or missing) target is
replaced atomically: a temp file made by mkstemp (O_EXCL, so never through a
planted link) in the target's own directory, fsync, then rename(2) over the
target; on any error the temp file goes and the old target stays as it was.
A target that is not a regular file (a FIFO, a character device, /dev/stdout,
a link into /proc/self/fd) is written in place and never replaced: renaming a
regular file over /dev/null would break the whole container.
"""

import errno
import os
import stat
import sys
import tempfile


def write_file(path, data):
    """Write DATA (bytes) to PATH; raises OSError with the errno set."""
    if path == "-" or _is_stream(path, sys.stdout):
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    target = _regular_target(path)
    if target is None:
        _write_in_place(path, data)
    else:
        _replace(target, data)


def _is_stream(path, stream):
    try:
        a = os.stat(path)
        b = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _lstat(path):
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _under_proc(path):
    real = os.path.realpath(path)
    return real == "/proc" or real.startswith("/proc/")


def _regular_target(path):
    """The path to replace atomically, or None to write PATH in place.

    A symbolic link is followed to a regular or missing file (replacing that,
    not the link), unless the link lives in /proc (/dev/stdout, /dev/fd/N):
    there the "file" is some process's open descriptor.
    """
    p = path
    for _ in range(40):
        st = _lstat(p)
        if st is None:
            return p
        if stat.S_ISREG(st.st_mode):
            return p
        if stat.S_ISDIR(st.st_mode):
            raise OSError(errno.EISDIR, os.strerror(errno.EISDIR))
        if not stat.S_ISLNK(st.st_mode) or _under_proc(os.path.dirname(p) or "."):
            return None
        link = os.readlink(p)
        if link.startswith("/proc/") or ":[" in link:
            return None
        p = os.path.join(os.path.dirname(p), link)
    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))


def _write_in_place(path, data):
    # O_NONBLOCK for the open only: a FIFO without a reader fails with ENXIO
    # instead of blocking forever.
    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        os.set_blocking(fd, True)
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.ftruncate(fd, 0)
        _write_all(fd, data)
    finally:
        os.close(fd)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _replace(path, data):
    d = os.path.dirname(path) or "."
    old = _lstat(path)
    fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if old is not None:
            os.chmod(tmp, stat.S_IMODE(old.st_mode))
            if os.geteuid() == 0:
                os.chown(tmp, old.st_uid, old.st_gid)
        else:
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)
        # Looked at again just before the rename: never rename over something
        # that turned into a non-regular file meanwhile.
        now = _lstat(path)
        if now is not None and not stat.S_ISREG(now.st_mode):
            raise OSError(errno.EEXIST, "changed into a non-regular file while being written")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dfd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass  # the rename has happened; a directory that cannot be synced is no error


def explain(e, path):
    """The errno text of E, with a remedy where one helps."""
    text = e.strerror or str(e)
    if e.errno == errno.ENXIO:
        try:
            if stat.S_ISFIFO(os.stat(path).st_mode):
                text += " (a FIFO with no reader: start the reader first)"
        except OSError:
            pass
    return text
