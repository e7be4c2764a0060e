"""``python -m huc_ref`` is the ``huc`` command."""

import sys

from .cli import main

sys.exit(main())
