"""Subprocess entry points: ``python -m torchair_conformance.workers.{cold,warm,rank}`` read one JSON job and reply
with one
JSON result (``torchair_conformance.process``); ``torchair_conformance.workers.export``, a rank that runs
``dynamo_export``, documents
its own job format.

Job (all keys but ``impl`` and ``module`` optional)::

    {"impl": "torchair_ref",
     "module": {"kind": "stack", "structure": {...}, "seed": 0, "dtype": "float32"}
               | {"kind": "special", "name": "kwargs"|"unregistered", "width": 4, "seed": 0},
     "method": "forward",
     "config": [["debug.run_eagerly", true], ...],          # CompilerConfig assignments, as written (CF-1)
     "cache_compile": {"dynamic": true, "cache_dir": null, "tp_rank": null, "pp_rank": null,
                       "global_rank": null, "ge_cache": false},
     "chdir": null,                                          # cwd to enter after cache_compile, before the call
     "globals": {"GLOBAL_OFFSET": 0.5},                      # module globals to rebind before the first call
     "calls": [{"inputs": [input spec, ...]} | {"special": {"batch": 2, "seed": 1, "step": 2}}],
     "compare_eager": false,
     "num_threads": null,                                    # torch.set_num_threads before the module is built
     "copy": null}                                           # "deepcopy" | "pickle": CC-24, see below

The result holds: ``unique_graphs`` (Dynamo's
``counters["stats"]["unique_graphs"]`` read after the calls), ``frames_total`` (or null where torch does not keep
it), ``digests`` (one per completed call, ``models.digest`` of the output), ``eager_max_diff``, ``requires_grad``,
``logs`` ([levelno, message] of the implementation's logger), ``warnings``, ``error`` (type, message, the messages
of its cause chain) or null, ``rank`` and ``world_size``. With ``copy``, the cached callable is held by the module
(``module.cached``), the module is copied after the calls, and the calls run again on the copy's callable:
``copy_digests`` and ``copy_error``.
"""
