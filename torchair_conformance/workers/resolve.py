"""IMPL-1 in a fresh process, as every later worker will import it: ``{"impl": name}`` in, ``{"impl", "device",
"label", "error"}`` out (``error`` is the `ImplementationError`'s message, or null; ``label`` what runs, IMPL-4). The
benchmark runs it before its first measurement."""

import sys

from torchair_conformance import process
from torchair_conformance.impl import ImplementationError, resolve


def main() -> int:
    job = process.read_job()
    try:
        implementation = resolve(job["impl"])
    except ImplementationError as exc:
        process.reply({"impl": job["impl"], "device": None, "label": "", "error": str(exc)})
        return 0
    process.reply({"impl": job["impl"], "device": implementation.device, "label": implementation.label,
                   "error": None})
    return 0


if __name__ == "__main__":
    sys.exit(main())
