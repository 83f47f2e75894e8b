"""``python -m adfkit`` runs the command-line interface."""

import sys

from ._entry import main

sys.exit(main())
