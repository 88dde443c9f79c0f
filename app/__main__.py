"""``python -m app``: the ``mjtable`` command line."""

import sys

from .cli import main

sys.exit(main())
