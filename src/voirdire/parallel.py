"""A job's work split across its ``threads`` in forked processes, the results in the order of
the work, whatever the number of processes (so every table is the same bits with 1 or 8).

Used where one job's work is many independent pieces (every recorded run of a folder to read and
cut; every judge to score the systems under) and nothing else can run beside it: the first jobs
of a big folder of runs, when one core would otherwise sit idle. The pieces run in processes
forked from the job after it has read its inputs, so nothing is pickled to them, and only their
results come back. Where ``fork`` is not available, and with one thread, the job does the work
itself, in order.
"""

from __future__ import annotations

import multiprocessing
import pickle
import traceback
from collections.abc import Callable, Sequence
from typing import Any


class WorkerFailed(RuntimeError):
    """A forked worker died before it sent its results, or raised what cannot be sent back."""


def _share(function: Callable[[Any], Any], pieces: Sequence) -> tuple[list, tuple | None]:
    """The results of a share's pieces in order, up to the first that raises: (results, None)
    or (results so far, (its position in the share, the exception, its traceback))."""
    results = []
    for position, piece in enumerate(pieces):
        try:
            results.append(function(piece))
        except Exception as exc:  # noqa: BLE001 -- handed to in_processes, which raises it
            return results, (position, exc, traceback.format_exc())
    return results, None


def _work(function: Callable[[Any], Any], pieces: Sequence, sender) -> None:
    """A worker: its share's results and failure sent back (the exception itself where it
    pickles, else its traceback)."""
    results, failure = _share(function, pieces)
    if failure is not None:
        try:
            pickle.dumps(failure[1])
        except Exception:  # noqa: BLE001 -- sent as text instead
            failure = (failure[0], WorkerFailed(failure[2]), failure[2])
    sender.send((results, failure))
    sender.close()


def in_processes(function: Callable[[Any], Any], pieces: Sequence, processes: int) -> list:
    """``[function(piece) for piece in pieces]``, the pieces dealt round-robin to ``processes``
    processes (this one and forked ones). Where pieces raise, the exception of the first of
    them (in the pieces' order) is raised here, as the one loop would raise it, once every
    worker has ended; a worker that dies raises :class:`WorkerFailed`."""
    pieces = list(pieces)
    processes = min(int(processes), len(pieces))
    if processes <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [function(piece) for piece in pieces]
    context = multiprocessing.get_context("fork")
    workers = []
    for start in range(1, processes):
        receiver, sender = context.Pipe(duplex=False)
        worker = context.Process(target=_work, args=(function, pieces[start::processes], sender), daemon=True)
        worker.start()
        sender.close()
        workers.append((worker, receiver))
    shares = [_share(function, pieces[0::processes])]
    for worker, receiver in workers:
        try:
            shares.append(receiver.recv())
        except EOFError:
            shares.append(([], (-1, WorkerFailed("a worker process died before it sent its results"), "")))
        worker.join()
    failures = [
        (position * processes + start if position >= 0 else -1, exc)
        for start, (_, failure) in enumerate(shares)
        if failure is not None
        for position, exc, _ in [failure]
    ]
    if failures:
        raise min(failures, key=lambda found: found[0])[1]
    ordered: list = [None] * len(pieces)
    for start, (results, _) in enumerate(shares):
        ordered[start::processes] = results
    return ordered
