"""Settings shared by the whole suite: hypothesis profiles, chosen by an environment variable.

``HUC_HYPOTHESIS_PROFILE`` picks one (default ``ci``):

* ``ci``: no deadline (a loaded runner must not fail a test because an example was slow), the
  failing example printed with its reproduction blob, and hypothesis's database off (a clean
  checkout reproduces from the seed and ``@example`` alone).
* ``dev``: a deadline of one second per example, to notice a slow example while working on it.
* ``thorough``: ``ci`` with ten times the examples of every test that does not fix its own count.

Each test's ``@settings(max_examples=...)`` keeps its own count; everything else comes from here.
"""

from __future__ import annotations

import os
from datetime import timedelta

from hypothesis import settings

settings.register_profile("ci", deadline=None, print_blob=True, database=None)
settings.register_profile("dev", deadline=timedelta(seconds=1))
settings.register_profile("thorough", parent=settings.get_profile("ci"), max_examples=1000)
settings.load_profile(os.environ.get("HUC_HYPOTHESIS_PROFILE", "ci"))
