#!/usr/bin/env python
"""Per-phase live-tensor bytes of an HF-Trainer-like training step, for transformers 4.48 (and 5.x).

Adapted from ../harness/measure.py (its StorageTracker and model table are imported from there).
Differences to that harness:
  * works with transformers 4.48.1 + torch 2.4.1 + peft 0.13.2 (torch_dtype=, no masking_utils);
  * --attn fa2emu: attn_implementation="flash_attention_2" with flash_attn 2.7.3 emulated:
      forward saves exactly what FlashAttnFunc saves (q, k, v unexpanded, out, softmax_lse fp32,
      rng_state int64[2]); backward allocates dq/dk/dv (empty_like) and the kernel-internal
      buffers of mha_bwd (softmax_d fp32 [B,H,Lr], dq_accum fp32 [B,Lr,H,dr], and for GQA/MQA
      dk_expanded / dv_expanded [B,L,H,d]) which the caching allocator counts;
  * --gc reentrant|nonreentrant (transformers 4.48 gradient_checkpointing_enable() = reentrant);
    with LoRA + reentrant, enable_input_require_grads() before get_peft_model (TRL 0.13 order);
  * --loss native|v5|v448 : the installed version's loss, or 5.x's ForCausalLMLoss (labels
    padded+shifted, no logits slice), or 4.48's (logits.float() then logits[..., :-1, :].contiguous());
  * the step follows HF Trainer: inputs = input_ids, attention_mask (allocated, not passed: all
    ones -> transformers drops it), labels; out = model(...); loss = out["loss"]; del out;
    loss.backward(); AdamW(foreach) with the Trainer's two weight-decay groups; model.zero_grad();
  * --dump N: at each phase peak, the N largest groups of live storages (category, creating op).
"""
import argparse, json, os, sys, time, math, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
# the shared harness (StorageTracker, build_config, CUDA-like patches); read-only, imported in place
GT_HARNESS = os.environ.get("GT_HARNESS", "/work/shared/groundtruth/harness")
sys.path.insert(0, GT_HARNESS)
import measure as GT

G = 2 ** 30


def tf_major():
    import transformers
    return int(transformers.__version__.split(".")[0])


# ------------------------------------------------------------------------------------------
# flash-attn 2.7.3 emulation (memory-faithful, values meaningless: fake mode only)
# ------------------------------------------------------------------------------------------
def _maybe_contiguous(x):
    return x.contiguous() if x is not None and x.stride(-1) != 1 else x


def _round(x, m):
    return (x + m - 1) // m * m


class FA2Emu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, dropout_p, is_grad):
        # FlashAttnFunc.forward: head_size % 8 == 0 assumed (128 here)
        qc, kc, vc = [_maybe_contiguous(x) for x in (q, k, v)]
        out = torch.empty_like(qc)                                   # mha_fwd: out = empty_like(q)
        B, L, H, d = qc.shape
        lse = torch.empty((B, H, L), dtype=torch.float32, device=q.device)  # softmax_lse
        _p = torch.empty((0,), dtype=q.dtype, device=q.device)        # S_dmask (return_softmax False)
        rng = torch.empty((2,), dtype=torch.int64, device=q.device)   # rng_state
        del _p
        if is_grad:
            ctx.save_for_backward(q, k, v, out, lse, rng)             # originals, as FlashAttnFunc
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, out, lse, rng = ctx.saved_tensors
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        dout_c, q_c, k_c, v_c, out_c = [_maybe_contiguous(x) for x in (dout, q, k, v, out)]
        B, L, H, d = q_c.shape
        Lk, Hk = k_c.shape[1], k_c.shape[2]
        Lr = _round(L, 128)
        dr = _round(d, 32) if d <= 192 else 256
        softmax_d = torch.empty((B, H, Lr), dtype=torch.float32, device=q.device)
        dq_accum = torch.empty((B, Lr, H, dr), dtype=torch.float32, device=q.device)
        if Hk != H:
            dk_exp = torch.empty((B, Lk, H, d), dtype=q.dtype, device=q.device)
            dv_exp = torch.empty((B, Lk, H, d), dtype=q.dtype, device=q.device)
            torch.sum(dk_exp.view(B, Lk, Hk, H // Hk, d), dim=3, out=dk)
            torch.sum(dv_exp.view(B, Lk, Hk, H // Hk, d), dim=3, out=dv)
            del dk_exp, dv_exp
        del dq_accum, softmax_d, dout_c, q_c, k_c, v_c, out_c
        return dq, dk, dv, None, None


def fa2emu_flash_attention_forward(query_states, key_states, value_states, attention_mask, query_length,
                                   is_causal=True, dropout=0.0, position_ids=None, softmax_scale=None,
                                   sliding_window=None, use_top_left_mask=False, softcap=None,
                                   deterministic=None, target_dtype=None, **kwargs):
    """Stand-in for transformers.modeling_flash_attention_utils._flash_attention_forward (4.48):
    no padding mask and increasing position_ids -> flash_attn_func(q, k, v, causal=True)."""
    assert attention_mask is None, "padding masks are not emulated"
    if target_dtype is not None and query_states.dtype == torch.float32:
        query_states = query_states.to(target_dtype)
        key_states = key_states.to(target_dtype)
        value_states = value_states.to(target_dtype)
    if position_ids is not None:
        # the packed-sequence check of 4.48 (torch.diff(position_ids) >= 0).all(): tiny, data dependent
        _ = torch.diff(position_ids, dim=-1) >= 0
        del _
    is_grad = torch.is_grad_enabled() and any(x.requires_grad for x in (query_states, key_states, value_states))
    return FA2Emu.apply(query_states, key_states, value_states, dropout, is_grad)


def install_fa2emu():
    import transformers
    from transformers import modeling_utils as MU
    # let from_config(attn_implementation="flash_attention_2") pass without flash_attn installed
    def _check(cls, config, *a, **k):
        config._attn_implementation = "flash_attention_2"
        return config
    MU.PreTrainedModel._check_and_enable_flash_attn_2 = classmethod(_check)
    if hasattr(MU.PreTrainedModel, "_check_and_adjust_attn_implementation"):
        # transformers >= 4.56: the check that would import flash_attn
        _orig_check = MU.PreTrainedModel._check_and_adjust_attn_implementation

        def _check_adj(self, attn_implementation, *a, **k):
            if attn_implementation == "flash_attention_2":
                return "flash_attention_2"
            return _orig_check(self, attn_implementation, *a, **k)
        MU.PreTrainedModel._check_and_adjust_attn_implementation = _check_adj
    if tf_major() < 5:
        import transformers.integrations.flash_attention as IFA
        IFA._flash_attention_forward = fa2emu_flash_attention_forward
        import transformers.models.gpt_bigcode.modeling_gpt_bigcode as BC
        BC._flash_attention_forward = fa2emu_flash_attention_forward   # 4.48 imports it only with flash_attn installed
        import transformers.modeling_flash_attention_utils as MFU
        MFU._flash_attention_forward = fa2emu_flash_attention_forward
    else:
        # transformers 5.x: every model goes through integrations.flash_attention.flash_attention_forward,
        # which calls modeling_flash_attention_utils._flash_attention_forward (imported by name).
        import transformers.integrations.flash_attention as IFA
        IFA._flash_attention_forward = fa2emu_flash_attention_forward


# ------------------------------------------------------------------------------------------
# loss variants
# ------------------------------------------------------------------------------------------
def loss_v448(logits, labels, vocab_size, num_items_in_batch=None, ignore_index=-100, **kw):
    logits = logits.float()
    labels = labels.to(logits.device)
    shift_logits = logits[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous()
    shift_logits = shift_logits.view(-1, vocab_size)
    shift_labels = shift_labels.view(-1).to(shift_logits.device)
    red = "sum" if num_items_in_batch is not None else "mean"
    loss = torch.nn.functional.cross_entropy(shift_logits, shift_labels, ignore_index=ignore_index, reduction=red)
    return loss / num_items_in_batch if red == "sum" else loss


def loss_v5(logits, labels, vocab_size, num_items_in_batch=None, ignore_index=-100, shift_labels=None, **kw):
    logits = logits.float()
    if shift_labels is None:
        labels = torch.nn.functional.pad(labels, (0, 1), value=ignore_index)
        shift_labels = labels[..., 1:].contiguous()
    logits = logits.view(-1, vocab_size)
    shift_labels = shift_labels.view(-1).to(logits.device)
    red = "sum" if num_items_in_batch is not None else "mean"
    loss = torch.nn.functional.cross_entropy(logits, shift_labels, ignore_index=ignore_index, reduction=red)
    return loss / num_items_in_batch if red == "sum" else loss


def install_loss(model, which):
    if which == "native":
        return
    fn = {"v5": loss_v5, "v448": loss_v448}[which]
    # models using self.loss_function (Mistral in 4.48 and 5.x)
    for m in model.modules():
        if hasattr(type(m), "loss_function"):
            type(m).loss_function = property(lambda self: fn)
            return
    raise SystemExit("this model has no loss_function to replace (GPTBigCode 4.48 computes its own)")


def install_cuda_autocast_layer_norm():
    """CUDA autocast runs layer_norm in fp32 (aten::layer_norm has an AutocastCUDA kernel with the fp32
    policy; it has no AutocastCPU kernel: check torch._C._dispatch_dump("aten::layer_norm")): a bf16 input
    is copied to fp32, the weight and bias too, the output is fp32 and native_layer_norm saves the fp32
    input copy. The CPU run would keep everything bf16. Emulate the CUDA policy while CPU autocast is on."""
    import torch.nn.functional as F
    if getattr(F, "_t4_ln_patched", False):
        return
    _ln = F.layer_norm

    def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
        if torch.is_autocast_cpu_enabled() and input.dtype in (torch.bfloat16, torch.float16):
            with torch.autocast("cpu", enabled=False):
                f = lambda t: t.float() if t is not None and t.dtype in (torch.bfloat16, torch.float16) else t
                return _ln(f(input), normalized_shape, f(weight), f(bias), eps)
        return _ln(input, normalized_shape, weight, bias, eps)
    F.layer_norm = layer_norm
    F._t4_ln_patched = True


def accelerate_forward(model, autocast):
    """What accelerate's prepare_model does with mixed_precision="bf16" (Trainer bf16=True):
    model.forward = convert_outputs_to_fp32(autocast(bf16)(model.forward)): forward under
    torch.autocast, then every bf16/fp16 tensor of the output (the logits) copied to fp32."""
    if not autocast:
        return model.forward
    fwd = model.forward

    def _fp32(x):
        if isinstance(x, torch.Tensor) and x.dtype in (torch.bfloat16, torch.float16):
            return x.float()
        return x

    def wrapped(*a, **k):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = fwd(*a, **k)
        for key in list(out.keys()):
            v = out[key]
            if isinstance(v, torch.Tensor):
                out[key] = _fp32(v)
        return out
    return wrapped


# ------------------------------------------------------------------------------------------
class Tracker(GT.StorageTracker):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.debug = True  # keep the creating op + shapes of every storage
        self.debug_out = bool(os.environ.get("GT_DEBUG"))

    def groups(self, seq, top=25):
        out = {}
        for r in self.recs:
            if r[1] <= seq and (r[2] is None or r[2] > seq):
                key = (self.category(r), (r[6] or "?")[:150])
                n, b = out.get(key, (0, 0))
                out[key] = (n + 1, b + r[0])
        items = sorted(out.items(), key=lambda kv: -kv[1][1])
        return [dict(cat=k[0], op=k[1], n=v[0], bytes=v[1], GiB=round(v[1] / G, 4)) for k, v in items[:top]]


def run(args):
    import transformers
    from torch._subclasses.fake_tensor import FakeTensorMode
    V5 = tf_major() >= 5
    torch.manual_seed(0)
    with open(args.config) as f:
        spec = json.load(f)
    name = os.path.splitext(os.path.basename(args.config))[0]
    GT.MODELS[name] = dict(family=spec["model_type"], published=None, cfg=spec, from_file=True)
    cfg = GT.build_config(name)
    cfg.use_cache = bool(args.use_cache)   # build_config sets False; hub configs default to True
    arch = GT.arch_numbers(cfg)
    B, L = args.batch, args.seq
    dtype_model = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    autocast = bool(args.autocast) or args.dtype == "amp_bf16"
    fake = args.mode == "fake"
    fake_mode = FakeTensorMode() if fake else None
    if args.threads:
        torch.set_num_threads(args.threads)
    if V5 and fake:
        GT.patch_for_fake(args.optim)
    GT.apply_cuda_like_patches()
    if args.cuda_autocast:
        install_cuda_autocast_layer_norm()
    attn = args.attn
    if attn == "fa2emu":
        install_fa2emu()
        attn = "flash_attention_2"
    tracker = Tracker(logits_numel=B * L * arch["vocab"])
    marks_seq = {}
    res = {}
    t0 = time.time()
    if fake:
        fake_mode.__enter__()
    tracker.__enter__()
    try:
        tracker.set_phase("init")
        kw = dict(attn_implementation=attn)
        kw["dtype" if V5 else "torch_dtype"] = dtype_model
        model = transformers.AutoModelForCausalLM.from_config(cfg, **kw)
        if args.lora:
            import peft
            if args.gc == "reentrant":
                model.enable_input_require_grads()   # TRL 0.13 does this before get_peft_model
            # peft reads the string "all-linear" (a list holding it names a module)
            targets = ("all-linear" if args.lora_targets == "all-linear"
                       else [t.strip() for t in args.lora_targets.split(",") if t.strip()])
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
            if fake:
                torch.nn.Module.to = _fake_to
            try:
                model = peft.get_peft_model(model, lcfg)   # autocast_adapter_dtype=True: fp32 adapters
            finally:
                torch.nn.Module.to = _orig_to
        if args.gc == "reentrant":
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
        elif args.gc == "nonreentrant":
            if V5 and hasattr(model, "activation_checkpointing_enable"):
                model.activation_checkpointing_enable()
            else:
                model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            if args.lora:
                model.enable_input_require_grads()
        install_loss(model, args.loss)
        model.train()
        seen = set()
        n_params = n_train = 0
        for p in model.parameters():
            if id(p) in seen:
                continue
            seen.add(id(p))
            n_params += p.numel()
            n_train += p.numel() if p.requires_grad else 0
            sid = tracker.track_tensor(p)
            tracker.recs[sid][5] = "params"
            tracker.param_sids.add(sid)
        for b_ in model.buffers():
            tracker.label(b_, "buffers")
        tracker.mark("after_init")
        tracker.set_phase("data")
        ids = torch.randint(0, arch["vocab"], (B, L))
        att = torch.ones((B, L), dtype=torch.long)
        labels = ids.clone()
        for t in (ids, att, labels):
            tracker.label(t, "inputs")
        tracker.set_phase("optim_init")
        # HF Trainer: two groups (weight decay / none), AdamW foreach
        from transformers.trainer_pt_utils import get_parameter_names
        try:
            from transformers.pytorch_utils import ALL_LAYERNORM_LAYERS
            decay = set(n for n in get_parameter_names(model, ALL_LAYERNORM_LAYERS) if "bias" not in n)
        except Exception:
            decay = set(n for n, _ in model.named_parameters() if "bias" not in n and "norm" not in n)
        groups = [
            {"params": [p for n, p in model.named_parameters() if n in decay and p.requires_grad], "weight_decay": 0.01},
            {"params": [p for n, p in model.named_parameters() if n not in decay and p.requires_grad], "weight_decay": 0.0},
        ]
        groups = [g for g in groups if g["params"]]
        opt = torch.optim.AdamW(groups, lr=1e-4, eps=1e-4, foreach=True)
        trainable = [p for g in groups for p in g["params"]]
        tracker.mark("before_train")
        forward = accelerate_forward(model, autocast)
        for it in range(1, args.iters + 1):
            tracker.set_phase(f"fwd{it}")
            out = forward(input_ids=ids, labels=labels)
            loss = out["loss"]
            if not args.keep_outputs:
                del out
            tracker.mark(f"after_fwd{it}")
            tracker.set_phase(f"bwd{it}")
            loss.backward()
            del loss
            if args.keep_outputs:
                del out
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
            model.zero_grad(set_to_none=True)
            tracker.mark(f"after_zero_grad{it}")
        tracker.set_phase("end")
    finally:
        tracker.__exit__(None, None, None)
        if fake:
            fake_mode.__exit__(None, None, None)
    M = {k: v[0] for k, v in tracker.marks.items()}
    meas = {"after_init": M["after_init"], "before_train": M["before_train"]}
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
        d["end_fwd"] = M[f"after_fwd{it}"]
        d["end_bwd"] = M[f"after_bwd{it}"]
        d["end_step"] = M[f"after_step{it}"]
        d["peak_zero_grad"] = tracker.phase_peak[f"zg{it}"][0]
        d["end_zero_grad"] = M[f"after_zero_grad{it}"]
        d["activation_bytes_end_fwd"] = M[f"after_fwd{it}"] - tracker.phase_start[f"fwd{it}"][0]
        meas[f"iter{it}"] = d
    meas["peak_overall"] = overall[0]
    meas["peak_overall_phase"] = overall[2]
    meas["breakdown_at_overall_peak"] = tracker.breakdown(overall[1])
    res.update(dict(config=args.config, model=name, batch=B, seq=L, dtype=args.dtype, gc=args.gc, attn=args.attn,
                    loss=args.loss, use_cache=bool(args.use_cache), lora=bool(args.lora), lora_r=args.lora_r, lora_alpha=args.lora_alpha,
                    lora_dropout=args.lora_dropout, lora_targets=args.lora_targets, keep_outputs=bool(args.keep_outputs),
                    n_params=n_params, n_trainable=n_train, measured=meas, n_ops=tracker.n_ops,
                    wall_s=round(time.time() - t0, 1),
                    versions=dict(torch=torch.__version__, transformers=transformers.__version__,
                                  peft=__import__("peft").__version__ if args.lora else None)))
    res.update(stack_fields(args, autocast))
    res["arch"] = arch
    res["mode"] = args.mode
    res["optim"] = "adamw"
    res["grad_ckpt"] = args.gc != "off"
    res["gc_reentrant"] = args.gc == "reentrant"
    res["autocast"] = autocast
    res["cuda_autocast_ln"] = bool(args.cuda_autocast)
    if tracker.debug_out:
        res["debug_allocs"] = [[r[0], r[1], r[2], r[3], r[6]] for r in tracker.recs]
    return res


def _ver(mod):
    try:
        return __import__(mod).__version__
    except Exception:
        return None


def stack_fields(args, autocast):
    """Fields naming the software stack and the run's shape (beside the harness schema)."""
    import transformers
    return dict(transformers=transformers.__version__, torch=torch.__version__.split("+")[0],
                peft=_ver("peft") if args.lora else None, trl=_ver("trl"), accelerate=_ver("accelerate"),
                trainer=args.trainer, attn_impl={"fa2emu": "flash_attention_2"}.get(args.attn, args.attn),
                shard="none", gpus=1, mixed_precision="bf16" if autocast else "no")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp32", "amp_bf16"],
                    help="amp_bf16 = fp32 model + autocast (Trainer bf16=True on an fp32-loaded model)")
    ap.add_argument("--autocast", type=int, default=0,
                    help="accelerate mixed_precision=bf16 on top of --dtype: autocast + outputs copied to fp32")
    ap.add_argument("--mode", default="fake", choices=["fake", "real"])
    ap.add_argument("--cuda-autocast", type=int, default=1,
                    help="emulate CUDA autocast's fp32 layer_norm (CPU autocast keeps it in bf16)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--trainer", default="trl", choices=["trl", "hf"],
                    help="metadata: TRL SFTTrainer or plain Trainer (same step for these rows)")
    ap.add_argument("--optim", default="adamw")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--gc", default="reentrant", choices=["off", "reentrant", "nonreentrant"])
    ap.add_argument("--attn", default="fa2emu", choices=["fa2emu", "sdpa", "eager"])
    ap.add_argument("--loss", default="native", choices=["native", "v5", "v448"])
    ap.add_argument("--lora", type=int, default=0)
    ap.add_argument("--lora-r", type=int, default=16)
    ap.add_argument("--lora-alpha", type=int, default=16)
    ap.add_argument("--lora-dropout", type=float, default=0.1)
    ap.add_argument("--lora-targets", default="q_proj,k_proj,v_proj,o_proj")
    ap.add_argument("--keep-outputs", type=int, default=0)
    ap.add_argument("--use-cache", type=int, default=0, help="config.use_cache (HF default True; harness default False)")
    ap.add_argument("--iters", type=int, default=2)
    ap.add_argument("--dump", type=int, default=0)
    ap.add_argument("--tag", default="")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    try:
        res = run(args)
        res["status"] = "ok"
    except SystemExit:
        raise
    except Exception as e:
        import traceback
        res = dict(status="error", error=f"{type(e).__name__}: {e}"[:2000], traceback=traceback.format_exc()[-4000:])
    res["tag"] = args.tag
    line = json.dumps(res)
    if args.out:
        with open(args.out, "a") as f:
            f.write(line + "\n")
    print(json.dumps({k: res.get(k) for k in ("status", "error", "tag")}))
    if res["status"] != "ok":
        print(res.get("traceback"))
    return 0 if res["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
