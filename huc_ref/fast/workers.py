"""The fast path's worker threads: the sample pass's row chunks, the utilities' tables after it
and numpy's subgroups (App. F.4: each independent of the others) run side by side on a pool of
threads that the process keeps, rather than one made and joined at every call; under numba a
utility's sort and its scan (Algorithm 2's two steps) are two calls, every sort taken before any
scan, so that five utilities' scans do not leave three on one of two threads (:func:`run_staged`).

An audit used to start and join two or three pools of threads: with the pool kept, audits of
``bench/fast_audit.py``'s K = 30 workload (|U| = 5, |C| = 7) at n = 10^4 took 0.84x (numba) and
0.88-0.93x (numpy) the time of 89b0179's (``python bench/phases.py --against 89b0179 --n 10000
--audit-only``).  numpy and the compiled kernels release the GIL, so the threads run at once.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["THREADS", "workers", "run_all", "run_staged"]

#: Threads for the chunks of the sample pass and for the utilities after it (numpy and the
#: kernels release the GIL; this machine has 2 cores).
THREADS = min(4, os.cpu_count() or 1)

_pools: dict = {}
_made = threading.Lock()
_NAME = "huc-ref-worker"  # (the pools' threads' names begin with it)


def _forget_pools() -> None:
    """In a forked child: none of the parent's threads exist there (a pool holding them would
    never run a call), and the lock may have been held by one of them at the fork."""
    global _made
    _pools.clear()
    _made = threading.Lock()


if hasattr(os, "register_at_fork"):  # (POSIX; elsewhere a process cannot fork)
    os.register_at_fork(after_in_child=_forget_pools)


def workers(count: int) -> ThreadPoolExecutor:
    """The process's pool of ``count`` threads (App. F.4's independent chunks and utilities run on
    it), made at the first call; a forked child makes its own (its parent's threads are not in
    it).  A task given to it must not wait for a task queued behind it in the same pool (one
    already running, as in :func:`run_staged`, may be waited for).

    Parameters
    ----------
    count : int
        The threads.

    Returns
    -------
    ThreadPoolExecutor
        The pool, the same one at every call with this ``count`` in this process.

    Examples
    --------
    >>> workers(2) is workers(2), workers(2) is workers(1)
    (True, False)
    >>> list(workers(2).map(abs, [-3, 4]))
    [3, 4]
    """
    with _made:
        pool = _pools.get(count)
        if pool is None:
            pool = _pools[count] = ThreadPoolExecutor(count, thread_name_prefix=_NAME)
    return pool


def run_all(fn, items, count: int) -> list:
    """``[fn(x) for x in items]`` on :func:`workers` ``(count)`` (in order; F.4's chunks or
    utilities), or in this thread where ``count`` is 1, there is one item, or this thread is one of
    the pools' own (a call waiting there for calls queued behind it could wait forever).  Should
    one call raise, or this thread be interrupted (Ctrl-C) while it waits, the calls not yet
    started are cancelled, and the exception passes on.

    Parameters
    ----------
    fn : callable
        The call, of one item.
    items : iterable
        The items.
    count : int
        The threads.

    Returns
    -------
    list
        ``fn(x)`` of each item, in order.

    Raises
    ------
    BaseException
        The first exception of a call, in the order of ``items``, as it was raised.

    Examples
    --------
    >>> run_all(lambda x: x * x, range(5), 2)
    [0, 1, 4, 9, 16]
    >>> run_all(lambda x: run_all(abs, [-x, x], 2), [1, 2, 3], 2)  # nested: the inner calls run in place
    [[1, 1], [2, 2], [3, 3]]
    """
    items = list(items)
    if count <= 1 or len(items) <= 1 or threading.current_thread().name.startswith(_NAME):
        return [fn(x) for x in items]
    pool = workers(count)
    jobs: list[Future] = [pool.submit(fn, x) for x in items]
    try:
        return [job.result() for job in jobs]
    except BaseException:
        for job in jobs:
            job.cancel()
        raise


def run_staged(first, then, items, count: int) -> list:
    """``[then(x, first(x)) for x in items]`` on this thread and ``count - 1`` of :func:`workers`
    (each ``first`` a utility's sort, Algorithm 2's first step; each ``then`` its scan, App. F.3):
    every thread takes the next call no thread has taken, every ``first`` before any ``then``,
    each kind in the order of ``items``; a ``then`` whose ``first`` another thread is still
    making waits for it.  Whole items as one call each (:func:`run_all`) put three of five on
    one of two threads; here the two kinds of call spread over the threads separately: with
    calls of equal cost never slower than whole items, and with an odd number of items on two
    threads faster (five: ``3 s + 2 c`` against ``3 s + 3 c`` for sorts ``s`` and scans ``c``).
    Serial where :func:`run_all` would be; should a call raise, or this thread be interrupted,
    no thread takes another call, threads waiting for a ``first`` return at once, and the
    exception passes on.

    Parameters
    ----------
    first : callable
        ``first(x)``, of one item.
    then : callable
        ``then(x, first(x))``.
    items : iterable
        The items.
    count : int
        The threads, this one among them.

    Returns
    -------
    list
        ``then(x, first(x))`` of each item, in order.

    Raises
    ------
    BaseException
        A call's exception, as it was raised.

    Examples
    --------
    >>> run_staged(lambda x: x * x, lambda x, sq: (x, sq), range(4), 2)
    [(0, 0), (1, 1), (2, 4), (3, 9)]
    """
    items = list(items)
    if count <= 1 or len(items) <= 1 or threading.current_thread().name.startswith(_NAME):
        return [then(x, first(x)) for x in items]
    n = len(items)
    made: list = [None] * n
    out: list = [None] * n
    ready = [threading.Event() for _ in items]
    stop = threading.Event()  # (set: a call raised, or the caller was interrupted)
    taken = [0]  # the calls handed out: 0 .. n - 1 the firsts, n .. 2n - 1 the thens
    lock = threading.Lock()

    def take() -> None:
        while not stop.is_set():
            with lock:
                c = taken[0]
                if c == 2 * n:
                    return
                taken[0] = c + 1
            j = c % n
            if c < n:
                made[j] = first(items[j])
                ready[j].set()
            else:
                ready[j].wait()
                if stop.is_set():
                    return
                out[j] = then(items[j], made[j])

    def give_up() -> None:
        stop.set()
        for event in ready:
            event.set()

    def guarded() -> None:
        try:
            take()
        except BaseException:
            give_up()
            raise

    helpers: list[Future] = [workers(count - 1).submit(guarded) for _ in range(count - 1)]
    try:
        guarded()
        for helper in helpers:  # (one that has not started has nothing left to take: dropped)
            if not helper.cancel():
                helper.result()
        return out
    except BaseException:  # (a helper's exception, or Ctrl-C while waiting for one)
        give_up()
        for helper in helpers:
            helper.cancel()
        raise
