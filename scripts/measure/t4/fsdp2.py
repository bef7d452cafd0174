#!/usr/bin/env python
"""FSDP2 (`fully_shard`, torch 2.15) rank-0 memory of a 2-GPU HF Trainer run, simulated under
FakeTensorMode. Derived from fsdp48.py (FSDP1, see its docstring for the tracker); what differs:
  * wrapping by accelerate 1.15's own `fsdp2_prepare_model`, called with a stand-in for the Accelerator
    (`_Accel`) and the plugin `fsdp_version=2, auto_wrap_policy="transformer_based_wrap",
    reshard_after_forward=True`: every decoder layer a unit (with LoRA too: under FSDP2 the Trainer
    does not install peft's wrap policy), then the input embedding, the tail [final norm, lm_head]
    (`reshard_after_forward=False`; with tied embeddings the embedding joins it) and the root; no
    mixed-precision policy (bf16 parameters), no CPU offload;
  * FSDP2 resizes unsharded parameters' storages in place (`_fsdp_param.alloc_storage` /
    `free_storage`), which no ATen op reports: those two calls open/close tracker records
    (tag "fsdp_unsharded"); the all-gather and reduce-scatter buffers are ATen allocations;
  * the device mesh (dim "dp_shard") is built from real tensors before the fake mode;
  * the fake process group's collectives FSDP2 uses (`all_gather_single`, `reduce_scatter_single`,
    ...) are no-ops writing nothing (FSDP2 allocated their outputs itself);
  * every DTensor is counted by its local shard (`LocalTracker`).
"""
import os, sys, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import fsdp48 as F1
import measure48 as M48


def install_storage_hooks2(tracker):
    import torch.distributed.fsdp._fully_shard._fsdp_param as FP
    import torch.distributed.fsdp._fully_shard._fsdp_param_group as FPG
    _alloc, _free = FP.alloc_storage, FP.free_storage

    def note(t):
        F1.note_resized(tracker, t)

    def alloc(tensor):
        _alloc(tensor)
        note(tensor)

    def free(tensor):
        _free(tensor)
        note(tensor)
    FP.alloc_storage, FP.free_storage = alloc, free
    FPG.alloc_storage = alloc


class _Accel:
    """What accelerate's `fsdp2_prepare_model` reads of an Accelerator."""

    def __init__(self, plugin, mesh):
        import types
        self.state = types.SimpleNamespace(fsdp_plugin=plugin)
        self.torch_device_mesh = mesh
        self.parallelism_config = types.SimpleNamespace(fsdp_dim_names=("dp_shard",))
        self.mixed_precision = "no"
        self.is_main_process = True
        self.device = torch.device("cpu")


def prepare_fsdp2(model, mesh):
    from accelerate.utils import FullyShardedDataParallelPlugin
    from accelerate.utils.fsdp_utils import fsdp2_prepare_model
    plugin = FullyShardedDataParallelPlugin(fsdp_version=2, auto_wrap_policy="transformer_based_wrap",
                                            reshard_after_forward=True, cpu_ram_efficient_loading=False)
    return fsdp2_prepare_model(_Accel(plugin, mesh), model)


def local(t):
    """A DTensor's local shard (what this rank allocated); any other tensor as it is."""
    from torch.distributed.tensor import DTensor
    return t._local_tensor if isinstance(t, DTensor) else t


class LocalTracker:
    """Mixin for the tracker: DTensor wrappers own no storage, their local shards do."""

    def track_tensor(self, t, tag=None):
        return super().track_tensor(local(t), tag)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        # measure.py's StorageTracker.__torch_dispatch__, with DTensor outputs counted by their local
        # shard: the mode sees the DTensor-level op (the local ops run under DTensor's dispatch, with
        # the mode popped), and a wrapper's own storage is a phantom of the global size.
        from torch.utils._pytree import tree_flatten
        out = func(*args, **(kwargs or {}))
        self.n_ops += 1
        tag = None
        if func is torch.ops.aten._to_copy.default and args and isinstance(args[0], torch.Tensor):
            ent = self.winfo.get(local(args[0]).untyped_storage())
            if ent is not None and ent[0] in self.param_sids:
                tag = "weight_cast"
        flat, _ = tree_flatten(out)
        flat = [local(t) if isinstance(t, torch.Tensor) else t for t in flat]
        if self.debug:
            self.cur_func = str(func) + ":" + ",".join(str(tuple(t.shape)) + str(t.dtype)[6:] for t in flat if isinstance(t, torch.Tensor))
        for t in flat:
            if isinstance(t, torch.Tensor):
                tg = tag
                if tg is None and self.logits_numel and t.numel() == self.logits_numel:
                    tg = "logits"
                self._add_storage(t.untyped_storage(), tg)
        return out


class Fsdp2(F1.Fsdp1):
    """FSDP2's tracker, storage hooks, mesh and wrapping (see the module docstring)."""
    shard = "fsdp2:fully_shard"
    tracker = type("Tracker2", (LocalTracker, M48.Tracker), {})

    def setup(self):
        # The device mesh is built from real tensors (its ranks), outside the fake mode.
        from torch.distributed.device_mesh import init_device_mesh
        self.mesh = init_device_mesh("cpu", (2,), mesh_dim_names=("dp_shard",))

    def hooks(self, tracker):
        install_storage_hooks2(tracker)

    def wrap(self, model, args):
        # accelerate 1.15's own fsdp2_prepare_model, on a stand-in for the Accelerator it reads: the
        # policy units (the decoder layers, TRANSFORMER_BASED_WRAP: with FSDP2 the Trainer does not
        # install peft's policy, `update_fsdp_plugin_peft` runs only when the optimizer is created
        # late, which FSDP2 forbids), then the input embedding (resharded after forward), the tail
        # [final norm, lm_head] (kept after forward) and the root.
        return prepare_fsdp2(model, self.mesh)

    def n_units(self, fmodel):
        from torch.distributed.fsdp import FSDPModule
        return sum(1 for m in fmodel.modules() if isinstance(m, FSDPModule))

    def fields(self, args):
        return dict(wrap="transformer")


if __name__ == "__main__":
    sys.exit(F1.main(Fsdp2(), fsdp1=False))
