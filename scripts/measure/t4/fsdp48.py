#!/usr/bin/env python
"""FSDP1 (torch 2.4.1) rank-0 memory of a 2-GPU HF Trainer run, simulated under FakeTensorMode.

Same training step and trackers as measure48.py, plus:
  * a fake process group (world_size 2, rank 0); the collectives FSDP1 issues are no-ops (they write
    into buffers FSDP allocated itself, so no allocation is lost);
  * FSDP1's unsharded flat parameters are allocated/freed by resizing a storage in place
    (torch.distributed.utils._alloc_storage/_free_storage), which no ATen op reports: those two calls
    are wrapped to open/close tracker records (tag "fsdp_unsharded");
  * wrapping as accelerate 1.0.1 does it for a plain FSDP accelerate config:
    FULL_SHARD, BACKWARD_PRE, forward_prefetch False, limit_all_gathers True, no mixed precision,
    use_orig_params True (accelerate launch's default when the yaml does not set it),
    auto_wrap_policy = peft.utils.other.fsdp_auto_wrap_policy (LoRA: every trainable leaf Linear is its
    own unit, plus the decoder layers) or transformer_auto_wrap_policy(_no_split_modules) (full FT).
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
    # (the last two are FSDP2's, in torch 2.15)
    names = ("all_gather_into_tensor", "reduce_scatter_tensor", "all_reduce", "broadcast",
             "_all_gather_base", "_reduce_scatter_base", "barrier", "all_gather",
             "all_gather_single", "reduce_scatter_single")
    import torch.distributed.distributed_c10d as C
    for mod in (dist, C):
        for n in names:
            if hasattr(mod, n):
                setattr(mod, n, noop)


def note_resized(tracker, t):
    """A storage FSDP resized in place: close its record, and open one if it holds bytes now."""
    st = t.untyped_storage()
    ent = tracker.winfo.get(st)
    if ent is not None:
        tracker._free(ent[0])
        tracker.winfo.pop(st, None)
    if st.nbytes() > 0:
        tracker._add_storage(st, tag="fsdp_unsharded")


def install_storage_hooks(tracker):
    import torch.distributed.fsdp._flat_param as FP
    _alloc, _free = FP._alloc_storage, FP._free_storage

    def note(t):
        note_resized(tracker, t)

    def alloc(tensor, size):
        _alloc(tensor, size)
        note(tensor)

    def free(tensor):
        _free(tensor)
        note(tensor)
    FP._alloc_storage, FP._free_storage = alloc, free

    # FakeTensor storages all report data_ptr() == 0: make FSDP's two data_ptr() identity checks use
    # storage identity (+ offset) instead, or the catch-all reshard at the end of backward is skipped.
    def _same_storage(a, b):
        from torch.distributed._tensor import DTensor
        a = a._local_tensor if isinstance(a, DTensor) else a
        b = b._local_tensor if isinstance(b, DTensor) else b
        return a.untyped_storage()._cdata == b.untyped_storage()._cdata
    FP._same_storage = _same_storage
    import torch.distributed.fsdp._runtime_utils as RU

    def _catch_all_reshard(state):
        h = state._handle
        if h:
            fp, ls = h.flat_param, h.flat_param._local_shard
            already = (fp.untyped_storage()._cdata == ls.untyped_storage()._cdata
                       and fp.storage_offset() == ls.storage_offset() and not h._skipped_use_sharded_views)
            if already:
                return
            RU._reshard(state, h, RU._should_free_in_backward(state, h))
    RU._catch_all_reshard = _catch_all_reshard


class Fsdp1:
    """What is FSDP1's in a run: its tracker, storage hooks, wrapping and fields (fsdp2.py has FSDP2's)."""
    shard = "fsdp1:FULL_SHARD"
    tracker = M48.Tracker

    def setup(self):
        pass

    def hooks(self, tracker):
        install_storage_hooks(tracker)

    def wrap(self, model, args):
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy, BackwardPrefetch
        if args.lora and args.wrap == "peft":
            from peft.utils.other import fsdp_auto_wrap_policy
            policy = fsdp_auto_wrap_policy(model)
        else:
            from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
            from accelerate.utils.dataclasses import get_module_class_from_name
            cls = {get_module_class_from_name(model, n) for n in model._no_split_modules}
            policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls=cls)
        return FSDP(model, sharding_strategy=ShardingStrategy.FULL_SHARD, auto_wrap_policy=policy,
                    backward_prefetch=BackwardPrefetch[args.prefetch] if args.prefetch != "NONE" else None,
                    forward_prefetch=False, limit_all_gathers=True, use_orig_params=bool(args.use_orig_params),
                    device_id=torch.device("cpu"), sync_module_states=False, mixed_precision=None)

    def n_units(self, fmodel):
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        return sum(1 for m in fmodel.modules() if isinstance(m, FSDP))

    def fields(self, args):
        return dict(use_orig_params=bool(args.use_orig_params), prefetch=args.prefetch, wrap=args.wrap)


def run(args, variant=None):
    import transformers
    from torch._subclasses.fake_tensor import FakeTensorMode
    variant = variant or Fsdp1()
    torch.manual_seed(0)
    install_fake_pg()
    variant.setup()
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
    tracker = variant.tracker(logits_numel=B * L * arch["vocab"])
    variant.hooks(tracker)
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
        fmodel = variant.wrap(model, args)
        fmodel.train()
        # FlatParamHandle.shard() frees the unsharded flat parameter built at wrap time with
        # orig_storage._resize_(0), which no ATen op reports: close the records of every storage that
        # is now empty (with use_orig_params=False the storage objects outlive the wrap, and the
        # meter would otherwise count 2 bytes/param of freed memory until they are collected)
        for st, ent in list(tracker.winfo.items()):
            if st.nbytes() == 0 and tracker.recs[ent[0]][0] > 0:
                tracker._free(ent[0])
                tracker.winfo.pop(st, None)
        n_units = variant.n_units(fmodel)
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
                **variant.fields(args), use_cache=bool(args.use_cache),
                n_fsdp_units=n_units, measured=meas, wall_s=round(time.time() - t0, 1),
                versions=dict(torch=torch.__version__, transformers=transformers.__version__),
                transformers=transformers.__version__, torch=torch.__version__.split("+")[0],
                peft=M48._ver("peft") if args.lora else None, trl=M48._ver("trl"), accelerate=M48._ver("accelerate"),
                trainer="trl" if args.lora else "hf", attn=args.attn, attn_impl=ATTN_IMPL[args.attn],
                shard=variant.shard, gpus=2, rank=0, dtype="bf16", mixed_precision="no", mode="fake",
                optim="adamw", grad_ckpt=True, gc_reentrant=args.gc == "reentrant", arch=arch,
                lora_r=args.lora_r if args.lora else None, lora_alpha=args.lora_alpha if args.lora else None,
                lora_dropout=args.lora_dropout if args.lora else None,
                lora_targets=args.lora_targets if args.lora else None,
                n_params_local=sum(p.numel() for p in fmodel.parameters()),
                **({"debug_allocs": [[r[0], r[1], r[2], r[3], r[6]] for r in tracker.recs]} if tracker.debug_out else {}))


# The model's attn_implementation for each --attn.
ATTN_IMPL = {"fa2emu": "flash_attention_2", "sdpa": "sdpa"}


def parser(fsdp1=True):
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
    if fsdp1:
        ap.add_argument("--use-orig-params", type=int, default=1)
        ap.add_argument("--prefetch", default="BACKWARD_PRE", choices=["BACKWARD_PRE", "BACKWARD_POST", "NONE"])
        ap.add_argument("--wrap", default="peft", choices=["peft", "transformer"],
                        help="LoRA: peft's fsdp_auto_wrap_policy (what the Trainer sets) or decoder layers only (mixed flat params)")
    ap.add_argument("--use-cache", type=int, default=0)
    ap.add_argument("--attn", default="fa2emu", choices=sorted(ATTN_IMPL),
                    help="fa2emu: flash-attn 2's allocations emulated (measure48.py); sdpa: torch's SDPA")
    ap.add_argument("--iters", type=int, default=2)
    ap.add_argument("--dump", type=int, default=30)
    ap.add_argument("--tag", default="")
    ap.add_argument("--out", default="")
    return ap


def main(variant=None, fsdp1=True):
    args = parser(fsdp1).parse_args()
    try:
        res = run(args, variant)
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
