"""`python -m pybpe ...`: the same command line as the `pybpe` script (pybpe/cli/)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
