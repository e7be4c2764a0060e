"""``python -m proofs_check`` is ``huc verify``."""

import sys

from .runner import main

sys.exit(main())
