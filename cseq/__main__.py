"""``python -m cseq``: the command line."""

import sys

from cseq.cli import main

sys.exit(main())
