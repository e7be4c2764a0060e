"""Timing helpers shared by the benchmarks; the inputs they time are in :mod:`tests.shapes`."""

from __future__ import annotations

import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path


def timed(fn, *args, **kwargs):
    """``(seconds, result)`` of one call."""
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t, out


def best_of(repeat: int, fn) -> float:
    """The shortest of ``repeat`` timed calls of ``fn`` (seconds)."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


@contextmanager
def checkout(root: Path, rev: str):
    """A temporary git worktree of revision ``rev`` of the repository at ``root`` (its path),
    removed afterwards: the code a benchmark's ``--against REV`` measures."""
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old"
        subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", "--quiet", str(old), rev], check=True)
        try:
            yield old
        finally:
            subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(old)], check=True)
