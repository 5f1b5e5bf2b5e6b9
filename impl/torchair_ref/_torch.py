"""The one seam between the reference and PyTorch's private APIs (issue 23, item 1).

Every private torch name the reference reads goes through here: modules, classes and functions through an
accessor, and the conventions of Dynamo's and Inductor's output (injected global names, guard texts, import lines)
as named constants. Each note says on which torch releases the name was checked ("checked: 2.13.0, 2.14.1"). When
a release moves a name, this file is the one place to change. What a missing name means is the caller's to decide:
at compile time the function is not cached (a warning says why), at a warm start the cache is rebuilt or a check
falls back to its full Python form; a call never fails for it.

Nothing here imports torch at module level, and each accessor imports its private module when called: a warm start
must not import Dynamo or Inductor, so it only calls the accessors whose note says "Warm." (`torch._C` and modules
that `import torch` loads anyway; tests/reference/test_torch_seam.py holds them to it). Per-call code binds what an
accessor
returns once, at load time, and never calls through this module per call.

Attributes of the objects these accessors return (Dynamo's guard tree, AOTAutograd's metadata fields, the fields of
Inductor's compiled output) are read by the one module that needs them (`inference.guard_read`, `backend`,
`compilers.inductor`), each inside a guard that turns a missing attribute into "not cacheable".
"""
from __future__ import annotations

from collections.abc import Callable
from types import CodeType, ModuleType, SimpleNamespace
from typing import Any, cast

# -- conventions of Dynamo's transformed bytecode and guards (checked: 2.13.0, 2.14.1) ----------------------------

#: prefix of the global Dynamo injects for the compiled graph (`__compiled_fn_1_<uuid>`)
COMPILED_FN = "__compiled_fn"
#: prefix of the resume function Dynamo injects after a graph break (`__resume_at_30_2`)
RESUME_AT = "__resume_at"
#: prefix of an imported module Dynamo injects (`__import_torch_dot__dynamo_dot_utils`)
IMPORT_PREFIX = "__import_"
#: prefix of Dynamo's injected helpers (`___odict_getitem`, ...)
HELPER_PREFIX = "___"
#: prefix of the builtins dict Dynamo injects (`__builtins_dict___0`)
BUILTINS_DICT = "__builtins_dict"
INJECTED_PREFIXES = (COMPILED_FN, IMPORT_PREFIX, HELPER_PREFIX, BUILTINS_DICT)
#: a global Dynamo installs under the id() of what it holds, `{prefix}_{id(value)}_c{compile id}`
#: (`OutputGraph.install_global_by_id`; `type(tensor)` installs the torch module as `_140012345678_c1`); an address
#: has 8 digits or more, so a user's `conv_1_c2` is not taken for one
ADDRESS_GLOBAL = r"[A-Za-z0-9_]*_[0-9]{8,}_c[0-9]+"
#: the module whose helpers the transformed bytecode calls (profiler ranges, size/stride reads)
DYNAMO_UTILS = "torch._dynamo.utils"
#: Dynamo's helper in guard sources for an ordered dict's item
ODICT_GETITEM = "___odict_getitem"
#: how a Dynamo source names a parameter and a buffer of a module (`L['self']._modules['fc']._parameters['weight']`)
PARAMETER_SOURCE = "._parameters["
BUFFER_SOURCE = "._buffers["
#: the text of AOTAutograd's guard on saved-tensor hooks (an inference graph saves no tensors: no check needed)
SAVED_TENSOR_HOOKS_GUARD = "torch._functorch.aot_autograd.utils.top_saved_tensors_hooks ids == None"
#: where a user gets a decomposition table (named in error messages)
DECOMPOSITIONS_FROM = "torch._decomp.get_decompositions"

# -- conventions of Inductor's generated wrapper (checked: 2.13.0, 2.14.1; the last line 2.14.1 only) --------------

#: import lines of Inductor's wrapper that the light warm loader serves, line -> name bound in the wrapper
INDUCTOR_HELPER_IMPORTS = {
    "from torch._inductor.hooks import run_intermediate_hooks": "run_intermediate_hooks",
    "from torch._inductor.utils import maybe_profile": "maybe_profile",
    "from torch._inductor.codegen.memory_planning import _align as align": "align",
    "from torch._inductor.async_compile import AsyncCompile": "AsyncCompile",
    "from torch._inductor.select_algorithm import extern_kernels": "extern_kernels",
    "from torch._inductor.runtime.runtime_utils import assert_tensor_metadata": "assert_tensor_metadata",
}


# -- cold: Dynamo, AOTAutograd, Inductor (compile time only) -------------------------------------------------------

#: the accessors a cold trace reads only to decide what it saves: when one fails, the function runs uncached with a
#: warning naming it, and the call never fails (tests/reference/test_warm_fragile.py breaks each in turn)
CACHE_ONLY = ("current_compile_id", "traced_code", "cache_entries", "aot_output_schemas", "tracing_context")


def functorch_config() -> ModuleType:
    """`torch._functorch.config` (its `patch`: the AOTAutograd cache switches). Checked: 2.13.0, 2.14.1."""
    from torch._functorch import config

    return config


def dynamo_config() -> ModuleType:
    """`torch._dynamo.config` (its `patch`: `automatic_dynamic_shapes`, whether a compile reads the sizes earlier
    compiles of the same code saw). Checked: 2.13.0, 2.14.1."""
    from torch._dynamo import config

    return config


def symbolic_shapes_config() -> ModuleType:
    """`torch.fx.experimental._config` (its `patch`: `use_duck_shape`, whether two dims of one size share a symbol).
    Checked: 2.13.0, 2.14.1."""
    from torch.fx.experimental import _config

    return _config


def aot_module_simplified() -> Callable[..., Any]:
    """`torch._functorch.aot_autograd.aot_module_simplified`. Checked: 2.13.0, 2.14.1."""
    from torch._functorch.aot_autograd import aot_module_simplified as found

    return found


def aot_output_schemas() -> tuple[Any, Any, Any]:
    """(MutationType, OutputType, SubclassCreationMeta) of `torch._functorch._aot_autograd.schemas`.
    Checked: 2.13.0, 2.14.1."""
    from torch._functorch._aot_autograd.schemas import MutationType, OutputType, SubclassCreationMeta

    return MutationType, OutputType, SubclassCreationMeta


def tracing_context() -> Any:
    """`torch._guards.TracingContext` (its `try_get().fw_metadata`: AOTAutograd's view of the graph).
    Checked: 2.13.0, 2.14.1."""
    from torch._guards import TracingContext

    return TracingContext


def current_compile_id() -> Any:
    """The compile id of the trace in progress (`torch._guards.CompileContext.current_trace_id().compile_id`), None
    outside a trace. Checked: 2.13.0, 2.14.1."""
    from torch._guards import CompileContext

    trace = CompileContext.current_trace_id()
    return trace.compile_id if trace is not None else None


def traced_code() -> list[CodeType]:
    """The code objects Dynamo traced for the compile in progress (`TracingContext.get_traced_code()`).
    Checked: 2.13.0, 2.14.1."""
    from torch._guards import TracingContext

    return list(TracingContext.get_traced_code() or ())


def cache_entries(code: Any) -> list[Any]:
    """Dynamo's compiled versions of `code` (`torch._dynamo.eval_frame._debug_get_cache_entry_list`), each with
    `.code` (the transformed bytecode) and `.guard_manager`. Checked: 2.13.0, 2.14.1."""
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    return list(_debug_get_cache_entry_list(code))


def compile_fx() -> Callable[..., Any]:
    """`torch._inductor.compile_fx.compile_fx`. Checked: 2.13.0, 2.14.1."""
    from torch._inductor.compile_fx import compile_fx as found

    return found


def compile_fx_inner() -> Callable[..., Any]:
    """`torch._inductor.compile_fx.compile_fx_inner`. Checked: 2.13.0, 2.14.1."""
    from torch._inductor.compile_fx import compile_fx_inner as found

    return found


def inductor_decompositions() -> dict[Any, Callable[..., Any]]:
    """Inductor's decomposition table (`torch._inductor.decomposition.select_decomp_table()`).
    Checked: 2.13.0, 2.14.1."""
    from torch._inductor.decomposition import select_decomp_table

    return select_decomp_table()


def inductor_extern_kernels() -> Any:
    """`torch._inductor.select_algorithm.extern_kernels`. Checked: 2.13.0, 2.14.1."""
    from torch._inductor.select_algorithm import extern_kernels

    return extern_kernels


def inductor_async_compile() -> type:
    """`torch._inductor.async_compile.AsyncCompile` (imports Inductor: the warm loader's fallback only).
    Checked: 2.13.0, 2.14.1."""
    from torch._inductor.async_compile import AsyncCompile

    return AsyncCompile


def pytree() -> ModuleType:
    """`torch.utils._pytree` (export). Checked: 2.13.0, 2.14.1."""
    import torch.utils._pytree as found

    return found


def is_concrete_int() -> Callable[[Any], bool]:
    """`torch.fx.experimental.symbolic_shapes.is_concrete_int` (export). Checked: 2.13.0, 2.14.1."""
    from torch.fx.experimental.symbolic_shapes import is_concrete_int as found

    return found


def resolve_process_group() -> Callable[[str], Any]:
    """`torch.distributed.distributed_c10d._resolve_process_group`: the group-name -> ProcessGroup lookup c10d's
    functional collectives use, for the group names in an exported graph (export, EX-5). Checked: 2.13.0, 2.14.1."""
    from torch.distributed.distributed_c10d import _resolve_process_group as found  # type: ignore[attr-defined]

    # torch types the name as `GroupName`, a NewType of str: any str is looked up at run time
    return cast("Callable[[str], Any]", found)


# -- warm: torch._C and modules `import torch` loads (no Dynamo, no Inductor) ------------------------------------

def op_overload() -> type:
    """`torch._ops.OpOverload`. Warm. Checked: 2.13.0, 2.14.1."""
    import torch._ops

    return torch._ops.OpOverload


def op_overload_packet() -> type:
    """`torch._ops.OpOverloadPacket`. Warm. Checked: 2.13.0, 2.14.1."""
    import torch._ops

    return torch._ops.OpOverloadPacket


def higher_order_operator() -> type:
    """`torch._ops.HigherOrderOperator`. Warm. Checked: 2.13.0, 2.14.1."""
    import torch._ops

    return torch._ops.HigherOrderOperator


def set_grad_enabled_fn() -> Callable[[bool], None]:
    """`torch._C._set_grad_enabled`: grad mode without `torch.set_grad_enabled`'s context-manager object (bind
    it once; it is called per call). Warm. Checked: 2.13.0, 2.14.1."""
    import torch

    return torch._C._set_grad_enabled


def global_state_guard() -> type:
    """`torch._C._dynamo.guards.GlobalStateGuard` (C++, no Dynamo import). Warm. Checked: 2.13.0, 2.14.1."""
    from torch._C._dynamo.guards import GlobalStateGuard

    return GlobalStateGuard


def tensor_guards() -> type:
    """`torch._C._dynamo.guards.TensorGuards` (C++, no Dynamo import). Warm. Checked: 2.13.0, 2.14.1."""
    from torch._C._dynamo.guards import TensorGuards

    return TensorGuards


def assert_size_stride() -> Callable[..., None]:
    """`torch._C._dynamo.guards.assert_size_stride` (raises AssertionError). Warm. Checked: 2.13.0, 2.14.1."""
    from torch._C._dynamo.guards import assert_size_stride as found

    return found


def pyobject_tensor_data_ptr() -> int:
    """`torch._C._dynamo.guards._torchinductor_pyobject_tensor_data_ptr`, the address Inductor's C++ kernels read
    from `_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR`. Warm. Checked: 2.13.0, 2.14.1."""
    from torch._C._dynamo import guards

    # torch's stubs for torch._C._dynamo.guards lack this attribute
    return int(guards._torchinductor_pyobject_tensor_data_ptr)  # type: ignore[attr-defined]


def torch_function_mode_count() -> Callable[[], int]:
    """`torch._C._len_torch_function_stack` (bind it once: a per-call guard). Warm. Checked: 2.13.0, 2.14.1."""
    import torch

    return torch._C._len_torch_function_stack


def default_device_module() -> ModuleType:
    """`torch.utils._device`, whose `CURRENT_DEVICE` is the device `torch.set_default_device` set (read it per
    call from the module: it changes). Warm. Checked: 2.13.0, 2.14.1."""
    import torch.utils._device as found

    return found


def dynamo_utils_stand_in() -> SimpleNamespace:
    """Stand-ins for the helpers of `torch._dynamo.utils` (`DYNAMO_UTILS`) that the transformed bytecode calls, so
    that a warm start need not import Dynamo (more than a second): size/stride reads, and Dynamo's profiler range
    around the code before the graph (`torch._C._profiler._RecordFunctionFast`), recorded only while
    `torch.autograd.profiler._is_profiler_enabled` (read per call: one attribute read otherwise) and not at all
    on a torch without it (the range is a profiling aid). Warm. Checked: 2.13.0, 2.14.1."""
    import torch

    profiler = torch.autograd.profiler
    record = getattr(torch._C._profiler, "_RecordFunctionFast", None)

    def record_pregraph_bytecode_enter() -> Any:
        if not profiler._is_profiler_enabled or record is None:
            return None
        manager = record("Pregraph bytecode")
        manager.__enter__()
        return manager

    def record_pregraph_bytecode_exit(manager: Any) -> None:
        if manager is not None:
            manager.__exit__(None, None, None)

    return SimpleNamespace(
        record_pregraph_bytecode_enter=record_pregraph_bytecode_enter,
        record_pregraph_bytecode_exit=record_pregraph_bytecode_exit,
        call_size=lambda x, i: x.size(i),
        call_stride=lambda x, i: x.stride(i),
        call_storage_offset=lambda x: x.storage_offset(),
    )
