"""pyq's server (tests/integration/lib.sh): one python3 -S per test file that
runs each checker script in a forked child, so that a check costs a fork
instead of an interpreter start (about 1 s each under TCG, hundreds a run).

    python3 -S pyq_server.py DIR SHELL-PID

DIR holds the FIFOs req (requests) and resp (exit statuses), the lock a
client holds from its request to its status, and each client's out.PID and
err.PID. A request is NUL-separated: the client's pid, its working
directory, the mode ("-": the script is given, "-c": the code is given, or
"file": a path) and the script, then the script's arguments. The child runs
it as `python3 -S` would (sys.argv, __name__ == "__main__", SystemExit, a
traceback and status 1 on an uncaught exception), its stdin the client's own
(/dev/null when the script came on stdin), its stdout and stderr into
DIR/out.PID and DIR/err.PID, which the client prints; then the status goes
back through resp and the server frees the lock (no rm process per script).
The server ends when SHELL-PID does, and gives up on a client that is gone.
"""

import builtins
import os
import signal
import sys
import traceback

# The checkers' usual imports, done once: every child starts with them loaded.
import collections  # noqa: F401
import csv  # noqa: F401
import json  # noqa: F401
import math  # noqa: F401
import re  # noqa: F401
import statistics  # noqa: F401

DIR = sys.argv[1]
SHELL = int(sys.argv[2])
client = 0


class Gone(Exception):
    pass


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def tick(signum, frame):
    # Every second: a blocked open or wait gives up when its party is gone.
    if not alive(SHELL):
        os._exit(0)
    if client and not alive(client):
        raise Gone()


def child(pid, cwd, mode, src, args):
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    try:
        os.chdir(cwd)
        stdin = "/dev/null" if mode == "-" else "/proc/%s/fd/0" % pid
        try:
            fd = os.open(stdin, os.O_RDONLY)
        except OSError:
            fd = os.open("/dev/null", os.O_RDONLY)
        os.dup2(fd, 0)
        for n, name in ((1, "out."), (2, "err.")):
            fd = os.open(os.path.join(DIR, name + pid), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(fd, n)
        if mode == "file":
            with open(src, encoding="utf-8") as f:
                code, name = f.read(), src
            sys.argv = [src] + args
            sys.path[0] = os.path.dirname(os.path.abspath(src))
        else:
            code, name = src, "<stdin>" if mode == "-" else "<string>"
            sys.argv = [mode] + args
            sys.path[0] = ""
        g = {"__name__": "__main__", "__builtins__": builtins}
        if mode == "file":
            g["__file__"] = src
        rc = 0
        try:
            exec(compile(code, name, "exec"), g)
        except SystemExit as e:
            if e.code is None:
                rc = 0
            elif isinstance(e.code, int):
                rc = e.code & 0xFF
            else:
                print(e.code, file=sys.stderr)
                rc = 1
        except BaseException as e:
            # As python3 prints it: from the script's frame, not this file's.
            traceback.print_exception(type(e), e, e.__traceback__.tb_next)
            rc = 1
    except BaseException:
        traceback.print_exc()
        rc = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        rc = rc or 120
    os._exit(rc)


def serve():
    global client
    with open(os.path.join(DIR, "req"), "rb") as f:
        data = f.read()
    if not data:
        return
    pid, cwd, mode, src, *args = [x.decode("utf-8", "surrogateescape") for x in data.split(b"\0")[:-1]]
    client = int(pid)
    try:
        kid = os.fork()
        if kid == 0:
            child(pid, cwd, mode, src, args)
        while True:
            try:
                _, status = os.waitpid(kid, 0)
                break
            except Gone:
                os.kill(kid, signal.SIGKILL)
                raise
        rc = os.waitstatus_to_exitcode(status)
        rc = rc if rc >= 0 else 128 - rc
        with open(os.path.join(DIR, "resp"), "w") as f:
            f.write("%d\n" % rc)
    except Gone:
        pass
    finally:
        client = 0
        try:
            os.unlink(os.path.join(DIR, "lock"))
        except OSError:
            pass


signal.signal(signal.SIGALRM, tick)
signal.setitimer(signal.ITIMER_REAL, 1, 1)
with open(os.path.join(DIR, "pid"), "w") as f:
    f.write("%d\n" % os.getpid())
while True:
    try:
        serve()
    except Gone:
        pass
