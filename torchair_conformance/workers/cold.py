"""Cold run: a fresh process compiles (the cache directory is whatever the job names; the test empties it)."""

import sys

from torchair_conformance.workers.common import main

if __name__ == "__main__":
    sys.exit(main())
