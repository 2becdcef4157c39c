"""`python -m abyss_harness`: the harness command line (see cli.py)."""

import sys

from .cli import main

sys.exit(main())
