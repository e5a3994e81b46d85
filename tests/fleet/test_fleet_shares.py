"""Shares of ``verify --fleet``'s work over forked children: balanced by size, results in job
order, a child that dies leaves its share to the parent, a failure is raised, no child is left."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from dsh_policy.policy.fleet.shares import balance, run_shares


def children() -> set[int]:
    """This process's live children (Linux): any fixture's server as well as ours."""
    return {
        int(pid)
        for task in Path("/proc/self/task").iterdir()
        for pid in (task / "children").read_text().split()
    }


def test_balance_spreads_by_size_largest_first() -> None:
    shares = balance([100, 1, 1, 1, 60, 40], 2)
    assert sorted(index for share in shares for index in share) == list(range(6))
    totals = sorted(sum([100, 1, 1, 1, 60, 40][i] for i in share) for share in shares)
    assert totals == [101, 102]
    assert balance([5], 4) == [[0]]  # no empty share, so no idle fork
    assert balance([], 2) == []


def test_results_come_back_in_job_order_from_every_process() -> None:
    jobs = list(range(40))
    results = run_shares(jobs, balance([1] * 40, 3), lambda job: (job * job, os.getpid()))
    assert [square for square, _ in results] == [job * job for job in jobs]
    assert len({pid for _, pid in results}) == 3 and os.getpid() in {pid for _, pid in results}


def test_a_child_that_dies_leaves_its_share_to_the_parent() -> None:
    parent, before = os.getpid(), children()

    def work(job: int) -> tuple[int, int]:
        if os.getpid() != parent and job == 7:
            os.kill(os.getpid(), signal.SIGKILL)  # killed mid-share: out of memory, an operator
        return job, os.getpid()

    results = run_shares(list(range(10)), [[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]], work)
    assert [job for job, _ in results] == list(range(10))
    assert {pid for job, pid in results if job >= 6} == {parent}
    assert children() == before  # every child reaped


def test_a_failure_is_raised_and_no_child_is_left() -> None:
    def work(job: int) -> int:
        if job == 3:
            raise ValueError("bad log")
        return job

    before = children()
    with pytest.raises(ValueError, match="bad log"):
        run_shares(list(range(8)), [[0, 1, 2, 3], [4, 5], [6, 7]], work)
    assert children() == before
    with pytest.raises(ValueError, match="bad log"):  # a child's failure: its share redone here
        run_shares(list(range(8)), [[0, 1], [2, 3], [4, 5, 6, 7]], work)
    assert children() == before
