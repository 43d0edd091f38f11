"""`python -m distrl ...` is the `distrl` command."""

import sys

from distrl.cli import main

sys.exit(main())
