"""ATC deployment configs of a multi-rank export (EX-5).

Rank 0 writes them when ``config.export.experimental.auto_atc_config_generated`` is set and its graph uses a process
group. Both are written with ``json.dump(indent=4)``; the layouts, including the key ``nodes_toplogy`` (spelled so
by upstream) and ``group_rank_list`` as the text of a list, are upstream's and must not be "fixed".
"""

from __future__ import annotations

import json
from typing import Any

from torchair_ref import _torch

MODEL_RELATION_CONFIG = "model_relation_config.json"
NUMA_CONFIG = "numa_config.json"


def model_relation_config(export_name: str, world_size: int, groups: dict[str, list[int]]) -> dict[str, Any]:
    """EX-5: which .air runs on which device, and the communication groups between them."""
    submodels = [f"{export_name}{rank}.air" for rank in range(world_size)]
    return {
        "deploy_config": [
            {"submodel_name": submodel, "deploy_device_id_list": f"0:0:{rank}"}
            for rank, submodel in enumerate(submodels)
        ],
        "model_name_to_instance_id": [
            {"submodel_name": submodel, "model_instance_id": rank} for rank, submodel in enumerate(submodels)
        ],
        "comm_group": [{"group_name": name, "group_rank_list": str(ranks)} for name, ranks in groups.items()],
        "rank_table": [{"rank_id": rank, "model_instance_id": rank} for rank in range(world_size)],
    }


def numa_config(world_size: int) -> dict[str, Any]:
    """EX-5: one ATLAS800 node on loopback holding one item per rank."""
    return {
        "cluster": [
            {
                "cluster_nodes": [
                    {
                        "node_id": 0,
                        "node_type": "ATLAS800",
                        "ipaddr": "127.0.0.1",
                        "port": 29500,
                        "item_list": [{"item_id": rank} for rank in range(world_size)],
                    }
                ],
                "nodes_toplogy": {},
            }
        ],
        "item_def": [{"item_type": "Ascend910"}],
        "node_def": [{"item": [{"item_type": "Ascend910"}]}],
    }


def render(config: dict[str, Any]) -> bytes:
    """EX-5: the file text, as ``json.dump(config, f, indent=4)`` writes it."""
    return json.dumps(config, indent=4).encode()


def group_ranks(group_names: list[str]) -> dict[str, list[int]]:
    """EX-5: the global ranks of each named process group (torch.distributed must be initialised)."""
    import torch.distributed as dist

    resolve = _torch.resolve_process_group()
    return {name: sorted(dist.get_process_group_ranks(resolve(name))) for name in group_names}
