"""The fast path's kept worker threads (``huc_ref.fast.workers``): results in order, the first
exception passed on with the calls not yet started cancelled (also on Ctrl-C while waiting), and
a forked child that audits with threads of its own; ``run_staged``'s two steps (the sorts in the
calling thread, the scans on the workers as each sort is done and the last ones in the caller)."""

from __future__ import annotations

import multiprocessing
import signal
import sys
import threading
import time

import numpy as np
import pytest

from huc_ref import LabelTree, Top1AtDepth
from huc_ref.fast import audit as fast_audit
from huc_ref.fast.audit import numba_available
from huc_ref.fast.workers import run_all, run_staged, workers


def blocked_calls(first):
    """A call per item: item 0 runs ``first()``; every other item waits until ``release`` is set.
    Returns the function, the set of items started and the event."""
    started, release = set(), threading.Event()

    def call(x):
        started.add(x)
        if x == 0:
            return first()
        assert release.wait(30)
        return x
    return call, started, release


def interrupted(run, release):
    """``run()`` with a KeyboardInterrupt raised in this thread after 0.2 s by a SIGALRM handler
    (as Ctrl-C gives it), which must pass on; then ``release`` is set (the held calls go on) and
    the threads get 0.1 s to do whatever they would."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(KeyboardInterrupt):
            run()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        release.set()
    time.sleep(0.1)


def test_the_first_exception_passes_on_and_the_calls_not_started_are_cancelled():
    """Item 0 raises while item 1 holds the other thread: the exception reaches the caller, and of
    items 2..9 at most the one the freed thread took next was started (the rest were cancelled)."""
    def first():
        time.sleep(0.05)
        raise ValueError("item 0")
    call, started, release = blocked_calls(first)
    try:
        with pytest.raises(ValueError, match="item 0"):
            run_all(call, range(10), 2)
    finally:
        release.set()
    time.sleep(0.1)
    assert {0, 1} <= started and len(started - {0, 1}) <= 1


@pytest.mark.skipif(sys.platform == "win32", reason="SIGALRM is POSIX")
def test_ctrl_c_while_waiting_cancels_the_calls_not_started():
    """A KeyboardInterrupt in the waiting thread (a signal handler's, as Ctrl-C gives it) passes on,
    and the calls still queued never start."""
    call, started, release = blocked_calls(lambda: release.wait(30))
    interrupted(lambda: run_all(call, range(10), 2), release)
    assert started == {0, 1}


def test_results_come_in_order_and_one_thread_runs_here():
    """``run_all`` gives ``[fn(x) for x in items]`` in order on threads; with a count of 1 (or one
    item) every call runs in the calling thread."""
    assert run_all(lambda x: (time.sleep(0.01 * (5 - x)), x)[1], range(5), 2) == list(range(5))
    here = threading.get_ident()
    assert run_all(lambda x: threading.get_ident(), range(3), 1) == [here] * 3
    assert run_all(lambda x: threading.get_ident(), [0], 4) == [here]


def audit_in_child(n, accelerator="numpy"):
    tree = LabelTree.from_children("r", {"r": ["a", "b"], "a": [f"a{k}" for k in range(20)],
                                         "b": [f"b{k}" for k in range(10)]})
    rng = np.random.default_rng(0)
    P, y = rng.dirichlet(np.ones(tree.K), n), rng.integers(0, tree.K, n)
    return fast_audit(y, P, tree, {"top1": Top1AtDepth(tree, 1)}, accelerator=accelerator,
                      labels=tree.labels).to_json()["candidates"]


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork")
@pytest.mark.parametrize("accelerator", ["numpy", "numba"])
def test_a_forked_child_makes_its_own_threads(accelerator):
    """After the parent used the kept threads, a forked child (multiprocessing's fork start) audits
    with threads: its pool is its own (the parent's threads are not in the child, and a pool
    holding them would never run a call), and so is the lock that guards the pools (forked while
    another thread held it, the child's copy would stay held); the child's audit is the parent's.
    numba's tables also use the one-thread pool of ``run_staged``."""
    from huc_ref.fast import workers as kept
    if accelerator == "numba" and not numba_available():
        pytest.skip("the numba extra is not installed")
    n = 20000  # n K above SERIAL_CELLS: the sample pass and the tables on threads
    here = audit_in_child(n, accelerator)
    assert workers(2) is workers(2)
    with kept._made:  # as if a thread were inside workers() at the fork
        children = multiprocessing.get_context("fork").Pool(1)
    with children as pool:
        there = pool.apply_async(audit_in_child, (n, accelerator)).get(timeout=60)
    assert there == here


def test_a_call_on_the_pool_that_runs_more_calls_runs_them_in_place():
    """Nested use cannot deadlock: every thread of a two-thread pool runs a call that itself asks
    for calls on the same pool; those run in the worker's own thread (queued behind the outer
    calls, they would never start)."""
    inner_threads = []

    def outer(x):
        return run_all(lambda y: inner_threads.append(threading.current_thread().name) or y * x, range(3), 2)

    found = []
    caller = threading.Thread(target=lambda: found.append(run_all(outer, [1, 2, 3, 4], 2)), daemon=True)
    caller.start()
    caller.join(30)  # (a deadlock fails here rather than hanging the run)
    assert found == [[[0, 1, 2], [0, 2, 4], [0, 3, 6], [0, 4, 8]]]
    assert len(inner_threads) == 12 and all(name.startswith("huc-ref-worker") for name in inner_threads)


def staged_calls(then_wait=0.0, first_fails=None, then_fails=None, hold=None, first_wait=0.0, slow=None):
    """``first`` and ``then`` for :func:`run_staged` that record, in the order the calls start,
    which kind ran on what item in which thread (``calls``; also ``firsts`` and ``thens``):
    ``first`` sleeps ``first_wait`` s (``slow = (item, s)``: that item's for ``s``), ``then``
    ``then_wait`` (``then.fed``: each item and what its ``then`` was given); ``first_fails`` /
    ``then_fails``: the item whose call raises; ``hold``: an
    event that every ``first`` made in the thread that made these calls waits for."""
    calls, firsts, thens = [], [], []
    here = threading.current_thread()

    def first(x):
        calls.append(("first", x, threading.current_thread().name))
        firsts.append((x, threading.current_thread().name))
        time.sleep(slow[1] if slow is not None and x == slow[0] else first_wait)
        if hold is not None and threading.current_thread() is here:
            assert hold.wait(30)
        if x == first_fails:
            raise ValueError(f"first {x}")
        return 10 * x

    def then(x, made):
        calls.append(("then", x, threading.current_thread().name))
        thens.append((x, threading.current_thread().name))
        then.fed.append((x, made))
        time.sleep(then_wait)
        if x == then_fails:
            raise ValueError(f"then {x}")
        return (x, made)
    then.fed = []  # (item, what its then was given)
    return first, then, calls, firsts, thens


def test_staged_calls_take_every_sort_before_any_scan_on_both_threads_results_in_order():
    """Both threads (this one and a worker) take calls: every ``first`` starts before any
    ``then``, each kind in the items' order, both threads make firsts and thens; results in order."""
    first, then, calls, firsts, thens = staged_calls(first_wait=0.02, then_wait=0.05)
    assert run_staged(first, then, range(5), 2) == [(x, 10 * x) for x in range(5)]
    kinds = [kind for kind, _, _ in calls]
    assert kinds == ["first"] * 5 + ["then"] * 5
    assert [x for _, x, _ in calls] == list(range(5)) * 2
    here = threading.current_thread().name
    for made in (firsts, thens):
        names = {name for _, name in made}
        assert here in names and any(name.startswith("huc-ref-worker") for name in names)


def test_a_scan_whose_sort_runs_elsewhere_waits_for_it():
    """Item 0's ``first`` is slow: the thread that takes item 0's ``then`` while the other still
    makes it waits, and gets what that ``first`` made."""
    first, then, calls, firsts, thens = staged_calls(slow=(0, 0.5))
    assert run_staged(first, then, range(2), 2) == [(0, 0), (1, 10)]
    assert dict(firsts)[0] != dict(thens)[0]  # (this thread made item 0's first; the worker took its then)
    assert [kind for kind, _, _ in calls] == ["first", "first", "then", "then"]


def test_staged_calls_run_here_with_one_thread_one_item_or_on_a_worker():
    """A count of 1, one item, or a call from one of the pools' own threads: all in this thread,
    ``then`` straight after its ``first`` (as ``run_all``, a worker waiting for calls queued
    behind it could wait forever)."""
    for count, items in ((1, range(3)), (4, [7])):
        first, then, _, firsts, thens = staged_calls()
        assert run_staged(first, then, items, count) == [(x, 10 * x) for x in items]
        assert {name for _, name in firsts + thens} == {threading.current_thread().name}
    inner = run_all(lambda x: run_staged(lambda y: y + x, lambda y, m: (threading.current_thread().name, m),
                                         range(3), 2), [1, 2], 2)
    assert [[m for _, m in row] for row in inner] == [[1, 2, 3], [2, 3, 4]]
    assert all(name.startswith("huc-ref-worker") for row in inner for name, _ in row)


def test_a_failing_first_passes_on_and_no_thread_takes_another_call():
    """``first`` of item 2 raises while the other thread makes another (each takes 50 ms, item 2's
    none): the exception reaches the caller; item 4's first and every ``then`` are never taken."""
    first, then, _, firsts, thens = staged_calls(first_fails=2, first_wait=0.05, slow=(2, 0.0))
    with pytest.raises(ValueError, match="first 2"):
        run_staged(first, then, range(5), 2)
    time.sleep(0.2)
    assert {0, 1, 2} <= {x for x, _ in firsts} <= {0, 1, 2, 3} and thens == []


def test_a_failing_then_passes_on():
    """A ``then`` that raises on a worker: its exception reaches the caller."""
    first, then, _, firsts, thens = staged_calls(then_fails=0)
    with pytest.raises(ValueError, match="then 0"):
        run_staged(first, then, range(4), 2)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGALRM is POSIX")
def test_ctrl_c_during_a_sort_releases_the_waiting_worker_and_runs_no_more_scans():
    """A KeyboardInterrupt while the calling thread makes its first ``first`` (held) passes on; the
    worker, which took the other firsts and then waits for that one's ``then``, returns without
    calling it, and no later item reaches ``then``; the pool is free for the next call."""
    release = threading.Event()
    first, then, _, firsts, thens = staged_calls(hold=release)
    interrupted(lambda: run_staged(first, then, range(5), 2), release)
    assert {x for x, _ in firsts} == set(range(5)) and {x for x, _ in thens} <= {0}
    assert all(made == 10 * x for x, made in then.fed)  # (none was given a first that was never made)
    first, then, *_ = staged_calls()
    assert workers(1).submit(lambda: 5).result(timeout=10) == 5
    assert run_staged(first, then, range(3), 2) == [(x, 10 * x) for x in range(3)]
