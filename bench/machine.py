"""What a benchmark ran on, in one line, printed first by the fast path's benchmarks.

Their ratios are to numpy's own sort and to MCGrad's ``ecce``, whose speed depends on the
processor as much as this project's does: numpy's sorts use the widest vector instructions it
finds (AVX-512 or AVX2), and how fast those run differs between processors (one ``np.argsort``
of 10^5 floats takes about 3 ms on an AMD Zen 3 and 5-6 ms on a Zen 4, while this project's
audit takes longer on the Zen 3).  So each table names its
machine: the processor (model name; x86 family and model), the CPUs this process may use,
numpy's version and widest vector extension found, and numba's version where installed.

Run: ``python bench/machine.py``.
"""

from __future__ import annotations

import os
import platform


def cpu() -> str:
    """The processor's model name, with x86 family and model numbers (Linux), else ``platform``'s."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    name = fields.get("model name") or platform.processor() or platform.machine()
    if "cpu family" in fields:
        name += f" (family {fields['cpu family']}, model {fields.get('model', '?')})"
    return name


def vector_extension() -> str:
    """The widest of AVX-512 (F), AVX2 and SSE2 that numpy found on this processor, or '?'."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as found
    except ImportError:  # numpy 1.x
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as found
        except ImportError:
            return "?"
    return next((name for name in ("AVX512F", "AVX2", "SSE2") if found.get(name)), "none of AVX512F, AVX2, SSE2")


def describe() -> str:
    """One line: processor, CPUs, numpy (and its vector extension), numba."""
    import numpy as np
    try:
        import numba
        compiled = f", numba {numba.__version__}"
    except ImportError:
        compiled = ", no numba"
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"machine: {cpu()}, {cpus} CPUs, numpy {np.__version__} ({vector_extension()}){compiled}"


if __name__ == "__main__":
    print(describe())


def options(doc: str, argv=None, repeat: int | None = None):
    """A benchmark's command line: ``--quick``, and ``--repeat`` (default ``repeat``) where
    given; the machine's line (``describe``) printed once parsed."""
    import argparse
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    if repeat is not None:
        ap.add_argument("--repeat", type=int, default=repeat,
                        help="runs of each figure, alternating (the best is printed)")
    args = ap.parse_args(argv)
    print(describe())
    return args

