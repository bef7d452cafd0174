#!/usr/bin/env python
"""Pipeline parallelism as torch 2.15's `torch.distributed.pipelining` runs it (torchtitan's way: the
model cut into contiguous stages of decoder layers, the first with the embedding, the last with the
final norm, the head and the loss), one rank's memory over two training steps, simulated under
FakeTensorMode with the fake process group.

The model is transformers 5.23's own (`AutoModelForCausalLM.from_config`, bf16), cut as torchtitan's
`pipeline_llm` cuts its models: the stage keeps `embed_tokens` on the first rank, decoder layers
[start, end) (`layers_per_stage = L // pp`, the last stage takes the remainder, as transformers'
`PipelineStage.layer_range_for_rank`), and `norm` and `lm_head` on the last; the loss is the model's
own `loss_function` (ForCausalLMLoss: the logits upcast to fp32, shifted labels, cross-entropy) as the
schedule's `loss_fn`. The schedule (GPipe, 1F1B, Interleaved1F1B with `--vpp` stages per rank,
ZBVZeroBubble) runs `--micro-batches` micro-batches of `batch / micro_batches` sequences each step.

Memory is the shared harness's tracker (every ATen storage, live bytes, phases): phase `step{i}` is the
schedule's whole step (forward and backward interleaved), `opt{i}` AdamW's step (foreach), `zg{i}`
zero_grad. The fake process group's send/recv write nothing; the stage allocates its receive buffers
itself, which the tracker sees.

Usage: ~/.gt-venv/bin/python pp.py --config CFG.json --pp 2 --rank 0 --schedule 1f1b --micro-batches 4 \\
           --batch 4 --seq 1024 [--gc off|nonreentrant] --out rows.jsonl
"""
import argparse, json, os, sys, time, warnings
warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "t4"))
import torch
import torch.distributed as dist
import measure48 as M48
GT = M48.GT

SCHEDULES = {"gpipe": "ScheduleGPipe", "1f1b": "Schedule1F1B", "interleaved_1f1b": "ScheduleInterleaved1F1B",
             "zero_bubble": "ScheduleZBVZeroBubble"}


class Stage(torch.nn.Module):
    """One pipeline stage of an HF causal LM: what torchtitan keeps of its own models per stage."""

    def __init__(self, model, start, end, first, last):
        super().__init__()
        base = model.model
        self.embed = base.embed_tokens if first else None
        self.layers = torch.nn.ModuleList(base.layers[start:end])
        self.rotary = base.rotary_emb
        self.norm = base.norm if last else None
        self.head = model.lm_head if last else None
        self.ckpt = False

    def forward(self, x):
        h = self.embed(x) if self.embed is not None else x
        pos = torch.arange(h.shape[1]).unsqueeze(0)
        pe = self.rotary(h, pos)
        for layer in self.layers:
            if self.ckpt:
                import functools
                from torch.utils.checkpoint import checkpoint
                run = functools.partial(layer, attention_mask=None, position_ids=pos, position_embeddings=pe)
                h = checkpoint(run, h, use_reentrant=False)
            else:
                h = layer(h, attention_mask=None, position_ids=pos, position_embeddings=pe)
        if self.head is not None:
            h = self.head(self.norm(h))
        return h


def stage_ranges(layers, pp, vpp, split="transformers", first_less=1, last_less=1):
    """[start, end) per stage, stages = pp * vpp.

    transformers: L // stages each, the last takes the remainder (`layer_range_for_rank`).
    torchtitan: `generate_llm_fqn_per_model_part(stages, L, input_weight, output_weight)`
    (torchtitan/distributed/pipeline_parallel.py, v0.2.2 and main; the weights are
    `pipeline_parallel_first_stage_less_layers` and `..._last_stage_less_layers`, 1 each by
    default): L + first + last effective layers, `eff // stages` each and one more for the first
    `eff % stages`; the embedding takes `first` of the first stage's and norm + output `last` of
    the last's; a stage past the last layer gets none."""
    n = pp * vpp
    if split == "transformers":
        per = layers // n
        return [(i * per, layers if i == n - 1 else (i + 1) * per) for i in range(n)]
    eff = layers + first_less + last_less
    per, extra = divmod(eff, n)
    out, cur = [], 0
    for i in range(n):
        e = per + (1 if i < extra else 0)
        take = e - (first_less if i == 0 else 0) - (last_less if i == n - 1 else 0)
        end = min(layers, cur + take)
        out.append((cur, end))
        cur = end
    return out


def run(args):
    import transformers
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.testing._internal.distributed.fake_pg import FakeStore
    import torch.distributed.pipelining as P
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    dist.init_process_group("fake", store=FakeStore(), rank=args.rank, world_size=args.pp)
    torch.manual_seed(0)
    with open(args.config) as f:
        spec = json.load(f)
    name = os.path.splitext(os.path.basename(args.config))[0]
    GT.MODELS[name] = dict(family=spec["model_type"], published=None, cfg=spec, from_file=True)
    cfg = GT.build_config(name)
    cfg.use_cache = False
    arch = GT.arch_numbers(cfg)
    B, L, m = args.batch, args.seq, args.micro_batches
    mb = B // m
    GT.apply_cuda_like_patches()
    GT.patch_for_fake("adamw")
    tracker = M48.Tracker(logits_numel=mb * L * arch["vocab"])
    fake = FakeTensorMode()
    t0 = time.time()
    fake.__enter__()
    # The stages' example inputs and outputs (shapes for the P2P buffers), made before the tracker
    # starts: torchtitan infers them on the meta device, no GPU memory.
    examples = {}
    for i in range(args.pp * args.vpp):
        last = i == args.pp * args.vpp - 1
        inp = (torch.randint(0, cfg.vocab_size, (mb, L)) if i == 0
               else torch.empty(mb, L, cfg.hidden_size, dtype=torch.bfloat16, requires_grad=True))
        out = torch.empty(mb, L, cfg.vocab_size if last else cfg.hidden_size, dtype=torch.bfloat16, requires_grad=True)
        examples[i] = (inp, out)
    tracker.__enter__()
    try:
        tracker.set_phase("init")
        model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16, attn_implementation="sdpa")
        loss_of = model.loss_function
        vocab = cfg.vocab_size
        ranges = stage_ranges(cfg.num_hidden_layers, args.pp, args.vpp, args.split,
                              args.first_less, args.last_less)
        n_stages = len(ranges)
        # stage i lives on rank i % pp (looped), or, for ZBV, the V shape: rank r holds r and 2pp-1-r
        if args.schedule == "zero_bubble":
            mine = [args.rank, 2 * args.pp - 1 - args.rank]
        else:
            mine = [i for i in range(n_stages) if i % args.pp == args.rank]
        stages, mods = [], []
        for i in mine:
            s, e = ranges[i]
            mod = Stage(model, s, e, i == 0, i == n_stages - 1)
            mod.ckpt = args.gc != "off"
            mods.append(mod)
        # what this rank does not hold (the other layers, the embedding, the head) goes with the model
        del model
        for mod in mods:
            mod.train()
        for mod in mods:
            for p in mod.parameters():
                sid = tracker.track_tensor(p)
                if sid is not None:
                    tracker.recs[sid][5] = "params"
                    tracker.param_sids.add(sid)
            for b_ in mod.buffers():
                tracker.label(b_, "buffers")
        # forget the storages of the parts this rank does not hold (freed with the model)
        import gc
        gc.collect()
        tracker.mark("after_init")
        for i, mod in zip(mine, mods):
            inp, out = examples[i]
            stages.append(P.PipelineStage(mod, i, n_stages, torch.device("cpu"), input_args=(inp,), output_args=(out,)))

        def loss_fn(logits, labels):
            return loss_of(logits, labels, vocab_size=vocab)
        cls = getattr(P, SCHEDULES[args.schedule])
        sched = cls(stages if len(stages) > 1 or args.schedule in ("interleaved_1f1b", "zero_bubble") else stages[0],
                    n_microbatches=m, loss_fn=loss_fn)
        ids = torch.randint(0, vocab, (B, L))
        labels = ids.clone()
        tracker.label(ids, "inputs")
        tracker.label(labels, "inputs")
        params = [p for mod in mods for p in mod.parameters()]
        opt = torch.optim.AdamW(params, lr=1e-4, eps=1e-4, foreach=True)
        tracker.mark("before_train")
        holds_first = 0 in mine
        holds_last = n_stages - 1 in mine
        for it in range(1, args.iters + 1):
            tracker.set_phase(f"step{it}")
            losses = []
            kw = {}
            if holds_last:
                kw = dict(target=labels, losses=losses)
            if holds_first:
                sched.step(ids, **kw)
            else:
                sched.step(**kw)
            del losses
            for p in params:
                if p.grad is not None:
                    tracker.label(p.grad, "grads")
            tracker.mark(f"after_step{it}")
            tracker.set_phase(f"opt{it}")
            opt.step()
            for st in opt.state.values():
                for v in st.values():
                    if isinstance(v, torch.Tensor):
                        tracker.label(v, "optimizer_state")
            tracker.mark(f"after_opt{it}")
            tracker.set_phase(f"zg{it}")
            opt.zero_grad(set_to_none=True)
            tracker.mark(f"after_zg{it}")
        tracker.set_phase("end")
    finally:
        tracker.__exit__(None, None, None)
        fake.__exit__(None, None, None)
    if os.environ.get("PP_DUMP"):
        dump_peak(tracker, f"step{args.iters}")
    Mk = {k: v[0] for k, v in tracker.marks.items()}
    meas = {"after_init": Mk["after_init"], "before_train": Mk["before_train"]}
    for it in range(1, args.iters + 1):
        d = {}
        for ph, key in (("step", "peak_pipeline"), ("opt", "peak_step"), ("zg", "peak_zero_grad")):
            pk, sq = tracker.phase_peak[f"{ph}{it}"]
            d[key] = pk
            d.setdefault("breakdown_at_peak", {})[key] = tracker.breakdown(sq)
        d["end_pipeline"], d["end_step"] = Mk[f"after_step{it}"], Mk[f"after_opt{it}"]
        meas[f"iter{it}"] = d
    meas["peak_overall"] = max(meas[f"iter{i}"][k] for i in range(1, args.iters + 1)
                               for k in ("peak_pipeline", "peak_step", "peak_zero_grad"))
    return dict(config=os.path.basename(args.config), model=name, family=spec["model_type"], batch=B, seq=L,
                micro_batches=m, pp=args.pp, vpp=args.vpp, split=args.split, rank=args.rank, schedule=args.schedule,
                **({} if (args.first_less, args.last_less) == (1, 1)
                   else dict(first_less=args.first_less, last_less=args.last_less)),
                stages=[ranges[i] for i in mine], gc=args.gc, grad_ckpt=args.gc != "off", dtype="bf16",
                optim="adamw", attn="sdpa", use_cache=False, lora=False, mode="fake", cuda_like=True,
                measured=meas, arch=arch, wall_s=round(time.time() - t0, 1),
                transformers=transformers.__version__, torch=torch.__version__.split("+")[0],
                n_params_local=sum(p.numel() for p in params))


def dump_peak(tracker, phase):
    """With PP_DUMP=1 (and GT_DEBUG=1 for the ops' names): what is alive at `phase`'s peak, the
    step's own allocations grouped by the op that made them and by their size, on stderr."""
    pk, sq = tracker.phase_peak[phase]
    groups = {}
    for r in tracker.recs:
        if r[1] <= sq and (r[2] is None or r[2] > sq):
            key = (tracker.category(r), r[3], (r[6] or "")[:110], r[0])
            groups[key] = groups.get(key, 0) + 1
    print(f"peak of {phase}: {pk} bytes (seq {sq})", file=sys.stderr)
    for (cat, ph, func, nb), n in sorted(groups.items(), key=lambda kv: -kv[0][3] * kv[1]):
        print(f"{n * nb:>14} = {n:>4} x {nb:>12}  {cat:<16} {ph:<6} {func}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--pp", type=int, default=2)
    ap.add_argument("--vpp", type=int, default=1)
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--schedule", default="1f1b", choices=sorted(SCHEDULES))
    ap.add_argument("--micro-batches", type=int, default=4)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--gc", default="off", choices=["off", "nonreentrant"])
    ap.add_argument("--split", default="transformers", choices=["transformers", "torchtitan"],
                    help="how the decoder layers are cut into stages (stage_ranges)")
    ap.add_argument("--first-less", type=int, default=1, help="torchtitan's input_weight")
    ap.add_argument("--last-less", type=int, default=1, help="torchtitan's output_weight")
    ap.add_argument("--iters", type=int, default=2)
    ap.add_argument("--tag", default="")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    if args.schedule == "zero_bubble":
        args.vpp = 2
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
