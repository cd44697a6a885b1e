"""`python -m sluice.cli ...`: the `sluice` command."""

import sys

from sluice.cli import main

sys.exit(main())
