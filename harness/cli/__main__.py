"""``python -m harness.cli``: the same as the ``webmcp-harness`` console script."""

import sys

from harness.cli import main

sys.exit(main())
