"""One rank of a ``torch.distributed`` gloo world on 127.0.0.1 (MASTER_ADDR/PORT, RANK, WORLD_SIZE from env)."""

import sys
from datetime import timedelta


def init_world(job):
    """Join the world; returns the teardown (a barrier, then the group destroyed)."""
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=120))

    def teardown():
        # A barrier first: a rank that leaves early would tear the store down under the others.
        dist.barrier()
        dist.destroy_process_group()

    return teardown


if __name__ == "__main__":
    from torchair_conformance.workers.common import main

    sys.exit(main(init_world))
