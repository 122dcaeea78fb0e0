"""``python -m spatialcontact``: the command line of :mod:`spatialcontact.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
