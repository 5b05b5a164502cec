"""The private folder of the machine's helper process (the job host, :mod:`voirdire.jobhost`): its
sockets, locks and logs, in ``$XDG_RUNTIME_DIR/voirdire`` or ``/tmp/voirdire-UID``; and how a job
starts a host and waits for it to answer."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

T = TypeVar("T")

ANOTHER = 3
"""A host's exit status when another host already holds its lock (and so answers its jobs)."""


def private_directory() -> Path:
    """The hosts' folder, made if missing; :class:`PermissionError` when another user could enter it."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "voirdire" if runtime else Path("/tmp") / f"voirdire-{os.getuid()}"
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    if base.stat().st_uid != os.getuid() or base.stat().st_mode & 0o077:
        raise PermissionError(f"{base} is not private to this user")
    return base


def hold_lock(path: Path) -> IO[str] | None:
    """Take the host's lock at ``path`` for the life of this process (keep the returned file
    open) and write this process's id in it; None when another process holds it."""
    lock = open(path, "a")  # noqa: SIM115 - held for the host's lifetime; "w" would empty the holder's pid
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        return None
    lock.truncate(0)
    lock.write(f"{os.getpid()}\n")
    lock.flush()
    return lock


def start_host(entry: str, args: list[str], idle_env: str, log_path: Path, **popen) -> subprocess.Popen:
    """Start a host detached from the job (its own session, no stdin, its output appended to
    ``log_path``): ``python -c entry`` with ``args``, and ``--idle-s`` from ``$idle_env`` when set."""
    idle = os.environ.get(idle_env)
    command = [sys.executable, "-c", entry, *args, *(["--idle-s", idle] if idle else [])]
    with open(log_path, "ab") as out:
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                start_new_session=True, **popen)  # fmt: skip


def lock_held(path: Path) -> bool:
    """Whether a host holds its lock at ``path`` now (a host that has exited holds none, even
    while it waits, a zombie, for its parent to reap it)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the shared lock, if taken
    return False


def await_host(
    start: Callable[[], subprocess.Popen],
    attempt: Callable[[], T | None],
    *,
    lock_path: Path,
    what: str,
    log_path: Path,
    timeout_s: float,
    poll_s: float,
    error: type[Exception],
) -> T:
    """Start a host (``start()``) and return ``attempt()``'s first answer but None, tried every
    ``poll_s`` seconds while it comes up; ``error`` when it exits with a failure (not 0 nor
    :data:`ANOTHER`: a host another job started then answers) or nothing answers in ``timeout_s``.

    A host that found the lock held exits with :data:`ANOTHER` and leaves the answering to the
    holder; but the holder may have been leaving (idle) as this job came, its socket already
    gone. Once the host started here has exited and nobody holds the lock at ``lock_path``, one
    is started again, rather than waiting out ``timeout_s`` for an answer that cannot come."""
    process = start()
    deadline = time.monotonic() + timeout_s
    while (found := attempt()) is None:
        if time.monotonic() > deadline:
            raise error(f"no {what} answered within {timeout_s:.0f} s (its log: {log_path})")
        status = process.poll()
        if status not in (None, 0, ANOTHER):
            raise error(f"the {what} exited with {process.returncode} (its log: {log_path})")
        if status is not None and not lock_held(lock_path):
            process = start()
        time.sleep(poll_s)
    return found
