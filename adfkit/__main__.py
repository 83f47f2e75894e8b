"""``python -m adfkit`` runs the command-line interface."""

import sys

from adfkit._entry import main

sys.exit(main())
