"""The export's numa_config.json "fixes" upstream's key nodes_toplogy to nodes_topology."""

import json
import os

import torchair_ref as _ref
from tests.mutants._base import reference_for

BREAKS = ("EX-5",)
__getattr__ = reference_for(globals())  # the rest of the surface is the reference's


def dynamo_export(*args, model, export_path="export_file", export_name="export", **kwargs):
    _ref.dynamo_export(*args, model=model, export_path=export_path, export_name=export_name, **kwargs)
    path = os.path.join(export_path, "numa_config.json")
    if not os.path.islink(export_path) and os.path.isfile(path):
        text = open(path).read()
        config = json.loads(text)
        for cluster in config["cluster"]:
            # Rebuilt in the same order, with only the key renamed.
            renamed = {("nodes_topology" if k == "nodes_toplogy" else k): v for k, v in cluster.items()}
            cluster.clear()
            cluster.update(renamed)
        with open(path, "w") as f:
            json.dump(config, f, indent=4)
    return None
