"""``python -m cseq``: the command line."""

import sys

from cseq.cli import main

# Guarded: Dask's worker processes (``--local-workers``) start by importing
# the main module, which must not run the command again.
if __name__ == "__main__":
    sys.exit(main())
