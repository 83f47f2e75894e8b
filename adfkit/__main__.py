"""``python -m adfkit`` runs the command-line interface."""

import sys

from adfkit._entry import main

if __name__ == "__main__":  # not on import (a docs builder imports every module it documents)
    sys.exit(main())
