"""``python -m core``: see :mod:`core.cli`."""

import sys

from .cli import main

sys.exit(main())
