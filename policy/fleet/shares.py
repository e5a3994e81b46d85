"""Run shares of one job list on every core: forked children for all shares but the first, which
this process runs itself.

Why not a process pool: a pool starts its processes, pickles every task and its arguments to
them and runs a thread to feed them; for ``verify --fleet`` of 100,800 records that alone cost
about a tenth of the verification's CPU. Forked here, a child already holds everything the parent
held (the jobs, the loaded key), so nothing goes to it; only its results come back, pickled over
a pipe. This process works its own share meanwhile instead of waiting, so
``n`` shares cost ``n - 1`` forks. A child that dies or fails leaves its share to this process,
which then runs it (and raises what it raises).
"""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable, Sequence
from typing import TypeVar

Job = TypeVar("Job")
Result = TypeVar("Result")


def balance(sizes: Sequence[int], count: int) -> list[list[int]]:
    """Indices of ``sizes`` in ``count`` shares of near-equal total: largest first, each to the
    share with the least so far (so no share is left with one big job at the end)."""
    shares: list[list[int]] = [[] for _ in range(max(1, count))]
    totals = [0] * len(shares)
    for index in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        least = totals.index(min(totals))
        shares[least].append(index)
        totals[least] += sizes[index]
    return [share for share in shares if share]


def run_shares(jobs: Sequence[Job], shares: list[list[int]], work: Callable[[Job], Result]) -> list[Result]:
    """``work`` on every job of every share, the first share here and each other in a forked
    child; the results in the order of ``jobs``."""
    return run_share_batches(jobs, shares, lambda batch: [work(job) for job in batch])


def run_share_batches(
    jobs: Sequence[Job], shares: list[list[int]], work: Callable[[list[Job]], list[Result]]
) -> list[Result]:
    """:func:`run_shares` for work done a share at a time (one connection to the bus for a
    share's pulls): ``work`` gets a share's jobs and returns their results in that order."""
    results: dict[int, Result] = {}
    if not hasattr(os, "fork"):  # no fork on this platform: every share here
        shares = [[index for share in shares for index in share]]

    def run(share: list[int]) -> list[Result]:
        done = work([jobs[index] for index in share])
        if len(done) != len(share):
            raise ValueError(f"{len(done)} results for {len(share)} jobs")
        return done

    children: list[tuple[int, int, list[int]]] = []  # pid, read end of its pipe, its share
    try:
        for share in shares[1:]:
            children.append((*_fork(share, run), share))
        for index, result in zip(shares[0] if shares else [], run(shares[0]) if shares else [], strict=True):
            results[index] = result
        while children:
            pid, pipe, share = children.pop(0)
            got: list[Result] | None = _collect(pid, pipe, len(share))
            for index, result in zip(share, run(share) if got is None else got, strict=True):
                results[index] = result
    finally:
        for pid, pipe, _ in children:  # this process failed: the rest is not needed
            os.close(pipe)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    return [results[index] for index in range(len(jobs))]


def _fork(share: list[int], run: Callable[[list[int]], list[Result]]) -> tuple[int, int]:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its share, its results down the pipe, and out without cleanup
        status = 1
        try:
            os.close(read_end)
            payload = pickle.dumps(run(share), pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    return pid, read_end


def _collect(pid: int, pipe: int, count: int) -> list[Result] | None:
    """A child's results, or None when it died or failed (its share is then run here)."""
    with os.fdopen(pipe, "rb") as source:
        payload = source.read()
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return None
    try:
        results = pickle.loads(payload)
    except (pickle.UnpicklingError, EOFError, ValueError):
        return None
    return results if isinstance(results, list) and len(results) == count else None
