#!/usr/bin/env python
"""Tensor parallelism (+ FSDP2) as transformers 5.23's own `DistributedConfig` sets it up: rank-0 memory
of a training step, simulated under FakeTensorMode with torch 2.15's fake process group.

The training step, the tracker and the storage hooks are fsdp2.py's (and through it fsdp48.py's); what
differs:
  * a fake process group of `tp * fsdp` ranks (rank 0) and transformers' own device mesh
    (`distributed/utils.py: initialize_distributed_mesh`, dims pp, dp_replicate, fsdp, tp), built from
    real tensors before the fake mode;
  * the model is distributed by transformers itself, `PreTrainedModel.maybe_distribute_model`
    (`distributed/mixin.py`): the family's `base_model_tp_plan` through `apply_tensor_parallelism`
    (DTensor, colwise q/k/v/gate/up, rowwise o/down, the head `colwise_gather_output`), then FSDP2 over
    the `fsdp` dim with the family's FSDP plan (`apply_fully_sharded_data_parallelism`) when fsdp > 1;
  * the shared harness's `patch_for_fake` (SDPA gets `is_causal`, no mask, as in eager execution);
  * every DTensor counts by its local shard (fsdp2.py's `LocalTracker`); the functional collectives
    DTensor issues (all-reduce after a rowwise linear, the head's all-gather) run their fake kernels, so
    their outputs are allocations as on a GPU.

Usage: ~/.gt-venv/bin/python tp.py --config CFG.json --tp 2 --fsdp 1 --batch 1 --seq 512 --out rows.jsonl
"""
import os, sys, warnings
warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "t4"))
import torch
import torch.distributed as dist
import fsdp48 as F1
import fsdp2 as F2

SIZES = {}


def install_fake_pg():
    """fsdp48's fake process group, of `tp * fsdp` ranks; FSDP2's eager collectives are no-ops."""
    from torch.testing._internal.distributed.fake_pg import FakeStore
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    world = SIZES["tp"] * SIZES["fsdp"]
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)
    os.environ["WORLD_SIZE"] = str(world)
    os.environ["RANK"] = "0"
    os.environ["LOCAL_RANK"] = "0"

    def noop(*a, **k):
        return F1._Work() if k.get("async_op") else None
    names = ("all_gather_into_tensor", "reduce_scatter_tensor", "all_reduce", "broadcast",
             "_all_gather_base", "_reduce_scatter_base", "barrier", "all_gather",
             "all_gather_single", "reduce_scatter_single")
    import torch.distributed.distributed_c10d as C
    for mod in (dist, C):
        for n in names:
            if hasattr(mod, n):
                setattr(mod, n, noop)


F1.install_fake_pg = install_fake_pg


def real_mesh_tensors():
    """FSDP2 over the `fsdp` dim of a 2-D mesh computes that sub-mesh's rank tensor and this rank's
    coordinates lazily, inside the fake mode: run those two (a few int32 elements, no model memory)
    with every mode popped, on real tensors."""
    from torch.distributed.device_mesh import DeviceMesh
    from torch.utils._python_dispatch import _disable_current_modes
    prop = DeviceMesh.mesh
    coords = DeviceMesh._compute_coordinates_from_mesh

    def mesh(self):
        with _disable_current_modes():
            return prop.fget(self)

    def compute(*a, **k):
        with _disable_current_modes():
            return coords(*a, **k)
    DeviceMesh.mesh = property(mesh)
    DeviceMesh._compute_coordinates_from_mesh = staticmethod(compute)
_run = F1.run


def run(args, variant=None):
    """fsdp48's run, with the row's `gpus` the world size (fsdp48 writes 2), and `--gc off`: no
    checkpointing (fsdp48 always enables it, so the call is made a no-op)."""
    import transformers
    if SIZES["gc_off"]:
        transformers.PreTrainedModel.gradient_checkpointing_enable = lambda self, **k: None
    real_mesh_tensors()
    # the shared harness's work-arounds for fake tensors (fsdp48 predates them): transformers takes a
    # FakeTensor for tracing and would build a (B,1,L,L) mask and repeat GQA's keys and values, where
    # eager execution calls SDPA with is_causal=True
    F1.GT.patch_for_fake("adamw")
    row = _run(args, variant)
    row["gpus"] = SIZES["tp"] * SIZES["fsdp"]
    if SIZES["gc_off"]:
        row["grad_ckpt"], row["gc"], row["gc_reentrant"] = False, "off", None
    return row


F1.run = run


class Tp(F2.Fsdp2):
    """transformers 5.23's DistributedConfig(tp_size, fsdp_size) on the model, then fsdp2.py's step."""

    @property
    def shard(self):
        ep = f":ep{SIZES['ep']}" if SIZES["ep"] > 1 else ""
        return f"transformers-dc:tp{SIZES['tp']}:fsdp{SIZES['fsdp']}{ep}"

    def setup(self):
        from transformers.distributed import DistributedConfig
        from transformers.distributed.utils import initialize_distributed_mesh
        ep = dict(ep_size=SIZES["ep"]) if SIZES["ep"] > 1 else {}
        self.dc = DistributedConfig(tp_size=SIZES["tp"], fsdp_size=SIZES["fsdp"], **ep)
        _, self.mesh_manager = initialize_distributed_mesh(self.dc)

    def wrap(self, model, args):
        return type(model).maybe_distribute_model(model, self.dc, self.mesh_manager)

    def n_units(self, fmodel):
        from torch.distributed.fsdp import FSDPModule
        return sum(1 for m in fmodel.modules() if isinstance(m, FSDPModule))

    def fields(self, args):
        return dict(tp=SIZES["tp"], fsdp=SIZES["fsdp"], ep=SIZES["ep"], distributed="transformers.DistributedConfig")


def main():
    # --tp, --fsdp and --ep are read here; fsdp48's parser reads the rest
    argv = sys.argv[1:]
    for k in ("tp", "fsdp", "ep"):
        flag = f"--{k}"
        if flag in argv:
            i = argv.index(flag)
            SIZES[k] = int(argv[i + 1])
            del argv[i:i + 2]
        else:
            SIZES[k] = 1
    SIZES["gc_off"] = False
    if "--gc" in argv and argv[argv.index("--gc") + 1] == "off":
        SIZES["gc_off"] = True
        argv[argv.index("--gc") + 1] = "nonreentrant"
    sys.argv = [sys.argv[0]] + argv
    return F1.main(Tp(), fsdp1=False)


if __name__ == "__main__":
    sys.exit(main())
