#!/usr/bin/env python
"""DeepSpeed ZeRO-3 rank-0 memory of a 2-GPU Hugging Face Trainer run, measured on the CPU.

What runs (rank 0 of 2, real CPU tensors, DeepSpeed's CPU accelerator):
  * a fake process group (torch's `fake` backend, world size 2): every collective returns at once, into the
    buffers DeepSpeed allocated itself, so no allocation is lost; the values are wrong, the bytes are not;
  * the model built under `deepspeed.zero.Init` (accelerate's `zero3_init_flag`, the default for ZeRO-3),
    in bf16, then `deepspeed.initialize` with the Trainer's AdamW (torch, two weight-decay groups) and the
    config accelerate writes for `accelerate config` → DeepSpeed, ZeRO-3, no offload, bf16 (the bucket
    sizes, prefetch and persistence thresholds left to DeepSpeed's defaults, or set with --auto as
    transformers fills "auto": reduce_bucket_size h², stage3_prefetch_bucket_size 0.9 h²,
    stage3_param_persistence_threshold 10 h);
  * the Trainer's step: forward, `engine.backward(loss)`, `engine.step()` (which zeroes the gradients);
  * every storage an ATen op allocates is tracked by the shared harness's dispatch tracker
    (scripts/measure/t4/measure48.py `Tracker`), as for the FSDP rows.

Run with the gt venv (transformers 5.23, torch 2.15) plus deepspeed 0.19.8 installed without its ops
(`DS_BUILD_OPS=0 pip install --no-deps deepspeed==0.19.8`, then hjson msgpack ninja py-cpuinfo einops) and
the venv's bin on PATH: DeepSpeed JIT-builds its CPU shared-memory comm op with ninja at first use.
"""
import argparse, json, os, sys, time, warnings
warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "t4"))
import torch
import torch.distributed as dist
import torch._dynamo  # noqa: F401  (loaded before zero.Init patches tensor construction: its polyfills check signatures)
import measure48 as M48
sys.path.insert(0, os.environ.get("GT_HARNESS", "/work/shared/groundtruth/harness"))
import measure as GT


def fake_pg():
    from torch.testing._internal.distributed.fake_pg import FakeStore
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29517", RANK="0", LOCAL_RANK="0", WORLD_SIZE="2")
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)


def ds_config(args, hidden):
    zero = {"stage": 3, "offload_optimizer": {"device": "none"}, "offload_param": {"device": "none"},
            "stage3_gather_16bit_weights_on_model_save": False}
    if args.auto:
        zero.update(reduce_bucket_size=hidden * hidden, stage3_prefetch_bucket_size=int(0.9 * hidden * hidden),
                    stage3_param_persistence_threshold=10 * hidden)
    if args.max_live:
        zero.update(stage3_max_live_parameters=args.max_live)
    if args.reuse:
        zero.update(stage3_max_reuse_distance=args.reuse)
    return {"train_micro_batch_size_per_gpu": args.batch, "gradient_accumulation_steps": 1,
            "gradient_clipping": 1.0, "bf16": {"enabled": True}, "zero_optimization": zero,
            "zero_allow_untested_optimizer": True, "steps_per_print": 10 ** 9}


def run(args):
    import transformers
    import deepspeed
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    fake_pg()
    with open(args.config) as f:
        spec = json.load(f)
    name = os.path.splitext(os.path.basename(args.config))[0]
    GT.MODELS[name] = dict(family=spec["model_type"], published=None, cfg=spec, from_file=True)
    cfg = GT.build_config(name)
    cfg.use_cache = False
    arch = GT.arch_numbers(cfg)
    B, L = args.batch, args.seq
    GT.apply_cuda_like_patches()
    conf = ds_config(args, arch["hidden"])
    deepspeed.init_distributed(dist_backend="gloo", auto_mpi_discovery=False, dist_init_required=False)
    tracker = M48.Tracker(logits_numel=B * L * arch["vocab"])
    t0 = time.time()
    tracker.__enter__()
    try:
        tracker.set_phase("init")
        with deepspeed.zero.Init(config_dict_or_path=conf):
            model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.bfloat16,
                                                                  attn_implementation=args.attn)
        if args.lora:
            # peft on the partitioned model, as the Trainer gets it (TRL's order: input grads first)
            import peft
            model.enable_input_require_grads()
            model = peft.get_peft_model(model, peft.LoraConfig(
                r=args.lora_r, lora_alpha=args.lora_r, lora_dropout=0.05, task_type="CAUSAL_LM",
                target_modules=[t for t in args.lora_targets.split(",") if t]))
        if args.gc != "off":
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": args.gc == "reentrant"})
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        nd = lambda n: "bias" in n or "norm" in n
        groups = [g for g in ({"params": [p for n, p in named if not nd(n)], "weight_decay": 0.01},
                              {"params": [p for n, p in named if nd(n)], "weight_decay": 0.0}) if g["params"]]
        opt = torch.optim.AdamW(groups, lr=1e-4, eps=1e-4, foreach=True)
        engine, _, _, _ = deepspeed.initialize(model=model, optimizer=opt, config=conf, dist_init_required=False)
        engine.train()
        tracker.mark("after_init")
        tracker.set_phase("data")
        ids = torch.randint(0, arch["vocab"], (B, L))
        labels = ids.clone()
        for t in (ids, labels):
            tracker.label(t, "inputs")
        tracker.mark("before_train")
        for it in range(1, args.iters + 1):
            tracker.set_phase(f"fwd{it}")
            out = engine(input_ids=ids, labels=labels)
            loss = out["loss"]
            del out
            tracker.mark(f"after_fwd{it}")
            tracker.set_phase(f"bwd{it}")
            engine.backward(loss)
            del loss
            tracker.mark(f"after_bwd{it}")
            tracker.set_phase(f"opt{it}")
            engine.step()
            tracker.mark(f"after_step{it}")
        tracker.set_phase("end")
    finally:
        tracker.__exit__(None, None, None)
    Mk = {k: v[0] for k, v in tracker.marks.items()}
    meas = {"after_init": Mk["after_init"], "before_train": Mk["before_train"]}
    overall = [0, None]
    for it in range(1, args.iters + 1):
        d = {}
        for ph, key in (("fwd", "peak_fwd"), ("bwd", "peak_bwd"), ("opt", "peak_step")):
            pk, sq = tracker.phase_peak[f"{ph}{it}"]
            d[key] = pk
            d.setdefault("groups_at_peak", {})[key] = tracker.groups(sq, 12)
            if pk > overall[0]:
                overall = [pk, f"{ph}{it}"]
        for k in ("fwd", "bwd", "step"):
            d["end_" + k] = Mk[f"after_{k}{it}"]
        meas[f"iter{it}"] = d
    meas["peak_overall"], meas["peak_overall_phase"] = overall
    zc = conf["zero_optimization"]
    return dict(config=spec, model=name, batch=B, seq=L, gc=args.gc, attn=args.attn, shard="deepspeed:zero3",
                gpus=2, rank=0, dtype="bf16", mode="real", optim="adamw", lora=bool(args.lora), arch=arch,
                lora_r=args.lora_r if args.lora else None,
                lora_targets=args.lora_targets if args.lora else None,
                n_trainable=sum(p.ds_numel if hasattr(p, "ds_numel") else p.numel()
                                for p in model.parameters() if p.requires_grad),
                n_params=sum(p.ds_numel if hasattr(p, "ds_numel") else p.numel() for p in model.parameters()),
                zero_config=zc, auto_buckets=bool(args.auto), measured=meas, wall_s=round(time.time() - t0, 1),
                transformers=transformers.__version__, torch=torch.__version__.split("+")[0],
                deepspeed=deepspeed.__version__, accelerator="cpu (DeepSpeed's CPU accelerator)",
                tag=args.tag,
                **({"debug_allocs": [[r[0], r[1], r[2], r[3], r[6]] for r in tracker.recs]} if tracker.debug_out else {}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--gc", default="off", choices=["off", "reentrant", "nonreentrant"])
    ap.add_argument("--attn", default="sdpa", choices=["sdpa", "eager"])
    ap.add_argument("--auto", type=int, default=0, help="bucket sizes as transformers fills 'auto'")
    ap.add_argument("--max-live", type=int, default=0, help="stage3_max_live_parameters (0: DeepSpeed's 1e9)")
    ap.add_argument("--reuse", type=int, default=0, help="stage3_max_reuse_distance (0: DeepSpeed's 1e9)")
    ap.add_argument("--lora", type=int, default=0)
    ap.add_argument("--lora-r", type=int, default=16)
    ap.add_argument("--lora-targets", default="q_proj,k_proj,v_proj,o_proj")
    ap.add_argument("--iters", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tag", default="")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    row = run(args)
    line = json.dumps(row)
    if args.out:
        with open(args.out, "a") as f:
            f.write(line + "\n")
    print(json.dumps({k: row[k] for k in ("tag", "wall_s")} | {"peak": row["measured"]["peak_overall"],
                                                                  "phase": row["measured"]["peak_overall_phase"]}))


if __name__ == "__main__":
    main()
