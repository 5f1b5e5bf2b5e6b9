"""Warm run: a fresh process that should load the artifact a cold run left, with no Dynamo tracing (CC-14)."""

import sys

from torchair_conformance.workers.common import main

if __name__ == "__main__":
    sys.exit(main())
