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
import argparse, json, os, sys, time, functools, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import torch.distributed as dist
import measure48 as M48
sys.path.insert(0, os.environ.get("GT_HARNESS", "/work/shared/groundtruth/harness"))
import measure as GT

G = 2 ** 30


class _Work:
    def wait(self, *a, **k):
        return True

    def is_completed(self):
        return True


def install_fake_pg():
    from torch.testing._internal.distributed.fake_pg import FakeStore
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)

    def noop(*a, **k):
        return _Work() if k.get("async_op") else None
    names = ("all_gather_into_tensor", "reduce_scatter_tensor", "all_reduce", "broadcast",
             "_all_gather_base", "_reduce_scatter_base", "barrier", "all_gather",
             "all_gather_single", "reduce_scatter_single")
    import torch.distributed.distributed_c10d as C
    for mod in (dist, C):
        for n in names:
            if hasattr(mod, n):
                setattr(mod, n, noop)


def install_storage_hooks(tracker):
    import torch.distributed.fsdp._fully_shard._fsdp_param as FP
    import torch.distributed.fsdp._fully_shard._fsdp_param_group as FPG
    _alloc, _free = FP.alloc_storage, FP.free_storage

    def note(t):
        st = t.untyped_storage()
        ent = tracker.winfo.get(st)
        if ent is not None:
            tracker._free(ent[0])
            tracker.winfo.pop(st, None)
        if st.nbytes() > 0:
            tracker._add_storage(st, tag="fsdp_unsharded")

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


def run(args):
    import transformers
    from torch._subclasses.fake_tensor import FakeTensorMode
    torch.manual_seed(0)
    install_fake_pg()
    # The device mesh is built from real tensors (its ranks), outside the fake mode.
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh("cpu", (2,), mesh_dim_names=("dp_shard",))
    with open(args.config) as f:
        spec = json.load(f)
    name = os.path.splitext(os.path.basename(args.config))[0]
    GT.MODELS[name] = dict(family=spec["model_type"], published=None, cfg=spec, from_file=True)
    cfg = GT.build_config(name)
    cfg.use_cache = bool(args.use_cache)
    arch = GT.arch_numbers(cfg)
    B, L = args.batch, args.seq
    GT.apply_cuda_like_patches()
    if args.attn == "fa2emu":
        M48.install_fa2emu()
    tracker = type("Tracker2", (LocalTracker, M48.Tracker), {})(logits_numel=B * L * arch["vocab"])
    install_storage_hooks(tracker)
    fake_mode = FakeTensorMode()
    t0 = time.time()
    fake_mode.__enter__()
    tracker.__enter__()
    try:
        tracker.set_phase("init")
        model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.bfloat16,
                                                              attn_implementation=ATTN_IMPL[args.attn])
        if args.lora:
            import peft
            model.enable_input_require_grads()
            targets = [t.strip() for t in args.lora_targets.split(",") if t.strip()]
            lcfg = peft.LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=args.lora_dropout,
                                   target_modules=targets, task_type="CAUSAL_LM")
            _orig_to = torch.nn.Module.to

            def _fake_to(self, *a, **k):
                dev, dt, _, _ = torch._C._nn._parse_to(*a, **k)
                for mod in self.modules():
                    for pn, prm in list(mod._parameters.items()):
                        if prm is None:
                            continue
                        tdt = dt if (dt is not None and prm.is_floating_point()) else prm.dtype
                        tdev = dev if dev is not None else prm.device
                        if tdt != prm.dtype or torch.device(tdev) != prm.device:
                            with torch.no_grad():
                                mod._parameters[pn] = torch.nn.Parameter(prm.to(device=tdev, dtype=tdt),
                                                                         requires_grad=prm.requires_grad)
                return self
            torch.nn.Module.to = _fake_to
            try:
                model = peft.get_peft_model(model, lcfg)
            finally:
                torch.nn.Module.to = _orig_to
        # Trainer: gradient_checkpointing_enable() (4.48 default reentrant) before accelerator.prepare
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": args.gc == "reentrant"})
        if args.lora and args.gc != "reentrant":
            model.enable_input_require_grads()
        # accelerate 1.15's own fsdp2_prepare_model, on a stand-in for the Accelerator it reads: the
        # policy units (the decoder layers, TRANSFORMER_BASED_WRAP: with FSDP2 the Trainer does not
        # install peft's policy, `update_fsdp_plugin_peft` runs only when the optimizer is created
        # late, which FSDP2 forbids), then the input embedding (resharded after forward), the tail
        # [final norm, lm_head] (kept after forward) and the root.
        prepare_fsdp2(model, mesh)
        fmodel = model
        fmodel.train()
        # FlatParamHandle.shard() frees the unsharded flat parameter built at wrap time with
        # orig_storage._resize_(0), which no ATen op reports: close the records of every storage that
        # is now empty (with use_orig_params=False the storage objects outlive the wrap, and the
        # meter would otherwise count 2 bytes/param of freed memory until they are collected)
        for st, ent in list(tracker.winfo.items()):
            if st.nbytes() == 0 and tracker.recs[ent[0]][0] > 0:
                tracker._free(ent[0])
                tracker.winfo.pop(st, None)
        from torch.distributed.fsdp import FSDPModule
        n_units = sum(1 for m in fmodel.modules() if isinstance(m, FSDPModule))
        # what is alive after wrapping = this rank's shards (+ buffers)
        for p in fmodel.parameters():
            sid = tracker.track_tensor(p)
            if sid is not None:
                tracker.recs[sid][5] = "params"
                tracker.param_sids.add(sid)
        for b_ in fmodel.buffers():
            tracker.label(b_, "buffers")
        tracker.mark("after_init")
        tracker.set_phase("data")
        ids = torch.randint(0, arch["vocab"], (B, L))
        att = torch.ones((B, L), dtype=torch.long)
        labels = ids.clone()
        for t in (ids, att, labels):
            tracker.label(t, "inputs")
        tracker.set_phase("optim_init")
        named = [(n, p) for n, p in fmodel.named_parameters() if p.requires_grad]
        decay = [p for n, p in named if "bias" not in n and "norm" not in n and "ln_" not in n]
        nodecay = [p for n, p in named if not ("bias" not in n and "norm" not in n and "ln_" not in n)]
        groups = [g for g in ({"params": decay, "weight_decay": 0.01}, {"params": nodecay, "weight_decay": 0.0}) if g["params"]]
        opt = torch.optim.AdamW(groups, lr=1e-4, eps=1e-4, foreach=True)
        trainable = [p for g in groups for p in g["params"]]
        tracker.mark("before_train")
        for it in range(1, args.iters + 1):
            tracker.set_phase(f"fwd{it}")
            out = fmodel(input_ids=ids, labels=labels)
            loss = out["loss"]
            del out
            tracker.mark(f"after_fwd{it}")
            tracker.set_phase(f"bwd{it}")
            loss.backward()
            del loss
            for p in trainable:
                if p.grad is not None:
                    tracker.label(p.grad, "grads")
            tracker.mark(f"after_bwd{it}")
            tracker.set_phase(f"opt{it}")
            opt.step()
            for st in opt.state.values():
                for v in st.values():
                    if isinstance(v, torch.Tensor):
                        tracker.label(v, "optimizer_state")
            tracker.mark(f"after_step{it}")
            tracker.set_phase(f"zg{it}")
            fmodel.zero_grad(set_to_none=True)
            tracker.mark(f"after_zero_grad{it}")
        tracker.set_phase("end")
    finally:
        tracker.__exit__(None, None, None)
        fake_mode.__exit__(None, None, None)
    Mk = {k: v[0] for k, v in tracker.marks.items()}
    meas = {"after_init": Mk["after_init"], "before_train": Mk["before_train"]}
    overall = [0, 0, None]
    for it in range(1, args.iters + 1):
        d = {}
        for ph, key in (("fwd", "peak_fwd"), ("bwd", "peak_bwd"), ("opt", "peak_step")):
            pk, sq = tracker.phase_peak[f"{ph}{it}"]
            d[key] = pk
            d.setdefault("breakdown_at_peak", {})[key] = tracker.breakdown(sq)
            if args.dump:
                d.setdefault("groups_at_peak", {})[key] = tracker.groups(sq, args.dump)
            if pk > overall[0]:
                overall = [pk, sq, f"{ph}{it}"]
        for k in ("fwd", "bwd", "step", "zero_grad"):
            d["end_" + k] = Mk[f"after_{k}{it}"]
        d["peak_zero_grad"] = tracker.phase_peak[f"zg{it}"][0]
        d["activation_bytes_end_fwd"] = Mk[f"after_fwd{it}"] - tracker.phase_start[f"fwd{it}"][0]
        meas[f"iter{it}"] = d
    meas["peak_overall"] = overall[0]
    meas["peak_overall_phase"] = overall[2]
    # every local maximum of live bytes above 90% of the phase peak in backward of iteration 2,
    # with the number of unsharded FSDP units alive then (rebuilt from the records)
    return dict(config=args.config, model=name, batch=B, seq=L, lora=bool(args.lora), gc=args.gc,
                wrap="transformer", use_cache=bool(args.use_cache),
                n_fsdp_units=n_units, measured=meas, wall_s=round(time.time() - t0, 1),
                versions=dict(torch=torch.__version__, transformers=transformers.__version__),
                transformers=transformers.__version__, torch=torch.__version__.split("+")[0],
                peft=M48._ver("peft") if args.lora else None, trl=M48._ver("trl"), accelerate=M48._ver("accelerate"),
                trainer="trl" if args.lora else "hf", attn=args.attn, attn_impl=ATTN_IMPL[args.attn],
                shard="fsdp2:fully_shard", gpus=2, rank=0, dtype="bf16", mixed_precision="no", mode="fake",
                optim="adamw", grad_ckpt=True, gc_reentrant=args.gc == "reentrant", arch=arch,
                lora_r=args.lora_r if args.lora else None, lora_alpha=args.lora_alpha if args.lora else None,
                lora_dropout=args.lora_dropout if args.lora else None,
                lora_targets=args.lora_targets if args.lora else None,
                n_params_local=sum(p.numel() for p in fmodel.parameters()),
                **({"debug_allocs": [[r[0], r[1], r[2], r[3], r[6]] for r in tracker.recs]} if tracker.debug_out else {}))


# The model's attn_implementation for each --attn.
ATTN_IMPL = {"fa2emu": "flash_attention_2", "sdpa": "sdpa"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--gc", default="reentrant", choices=["reentrant", "nonreentrant"])
    ap.add_argument("--lora", type=int, default=0)
    ap.add_argument("--lora-r", type=int, default=16)
    ap.add_argument("--lora-alpha", type=int, default=16)
    ap.add_argument("--lora-dropout", type=float, default=0.1)
    ap.add_argument("--lora-targets", default="q_proj,k_proj,v_proj,o_proj")
    ap.add_argument("--use-cache", type=int, default=0)
    ap.add_argument("--attn", default="fa2emu", choices=sorted(ATTN_IMPL),
                    help="fa2emu: flash-attn 2's allocations emulated (measure48.py); sdpa: torch's SDPA")
    ap.add_argument("--iters", type=int, default=2)
    ap.add_argument("--dump", type=int, default=30)
    ap.add_argument("--tag", default="")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    try:
        res = run(args)
        res["status"] = "ok"
    except Exception as e:
        import traceback
        res = dict(status="error", error=f"{type(e).__name__}: {e}"[:2000], traceback=traceback.format_exc()[-5000:])
    res["tag"] = args.tag
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps(res) + "\n")
    print(json.dumps({k: res.get(k) for k in ("status", "error", "tag")}))
    if res["status"] != "ok":
        print(res.get("traceback"))
    return 0 if res["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
