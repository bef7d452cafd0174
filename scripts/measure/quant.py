#!/usr/bin/env python
"""Measure the memory of quantized-base fine-tuning (QLoRA and variants) with real CPU tensors.

What it measures
----------------
Live tensor-storage bytes, op by op, through two training iterations of a Hugging Face causal LM
whose linear layers are quantized with bitsandbytes (4-bit NF4/FP4 with or without double
quantization, or LLM.int8), with peft LoRA / DoRA adapters on top, loaded the way people load
them:

    AutoModelForCausalLM.from_pretrained(ckpt, quantization_config=BitsAndBytesConfig(...),
                                         dtype=torch.bfloat16, device_map={"": "cpu"})
    [peft.prepare_model_for_kbit_training(model)]        # --kbit-prep 1 (peft defaults)
    model = peft.get_peft_model(model, LoraConfig(r, lora_alpha, target_modules, lora_dropout,
                                                  use_dora))
    opt = torch.optim.AdamW(trainable, fused=True)        # HF Trainer's default "adamw_torch_fused"
    for it in 1..2:
        [autocast(bf16) if --amp 1]: loss = model(input_ids=ids, labels=ids).loss
        loss.backward(); del loss; opt.step(); opt.zero_grad(set_to_none=True)

The checkpoint is a random-weight bf16 checkpoint of the architecture (written once with
save_pretrained into --ckpt-dir, default ~/.cache/vramfit-quant), so loading goes through
transformers' real quantize-on-load path.

The meter is the project's ground-truth tracker (shared/groundtruth/harness/measure.py,
StorageTracker, copied here so that this script is self-contained): a TorchDispatchMode that adds
each ATen op output's storage bytes when created and subtracts them when the storage is freed
(weakref). Two additions for bitsandbytes:
  * bitsandbytes custom ops (torch.ops.bitsandbytes.*) are re-dispatched with the mode pushed
    again, so the tensors their kernels allocate inside (the dequantized weight of gemm_4bit, the
    dequantized absmax of double quant, ...) are seen, not just the op's output;
  * every tensor that exists before the mode starts (the loaded, quantized model) is registered
    by walking the model: packed weights ("qweight"), quant_state tensors ("quant_state":
    absmax, code, offset, nested absmax/code; int8 SCB), other parameters, buffers.
CPU kernels are used; where they differ from CUDA the note /work/notes/quant.md says how. The
harness's CUDA-like dropout patch is applied (F.dropout -> native_dropout, 1-byte mask as CUDA's
fused dropout keeps). Speed: bf16 matmuls are computed in fp32 and cast back inside the dispatch
handler (AVX2 oneDNN bf16 GEMM is up to 40x slower; the op output, the only thing counted, is the
same). Under --amp, the no-argument torch.is_autocast_enabled() that peft's bnb LoRA layers query
reports the CPU autocast state, as the CUDA query would on a GPU. bnb optimizer kernels are not
re-entered (CUDA updates in place; the CPU fallback's temporaries are not counted).

Byte formulas: predict(row) (section "Byte formulas" below) replays every tensor with its size
formula and lifetime; --check FILE recomputes every measured phase value and prints % errors.

Output: one JSON line per configuration (schema of crates/core/tests/fixtures/lora_rows.jsonl plus
quant, double_quant, kbit_prep, dora, compute_dtype, lora_alpha, bnb_version, gc_reentrant,
config, static_bytes). --debug-out FILE appends every allocation (bytes, phase, op, shapes, alloc
and free sequence numbers, tag, label) for attribution.

How to run (see README.md next to this file for the install and the measured matrix)
    PY=~/.gt-venv/bin/python
    $PY scripts/measure/quant.py --config llama-20m --quant nf4 --double-quant 1 --kbit-prep 1 \
        --lora-r 16 --lora-targets all-linear --lora-dropout 0.05 --batch 2 --seq 256 --out rows.jsonl
    $PY scripts/measure/quant.py --matrix --threads 1 --out rows.jsonl   # QUANT_ONLY=tag,... subset
    $PY scripts/measure/quant.py --check crates/core/tests/fixtures/quant_rows.jsonl
Use --threads 1 (and at most two processes on a 2-core machine).

Versions it was written for and measured with: torch 2.15.0 (CPU), transformers 5.23.0,
peft 0.21.2, accelerate 1.15.0, bitsandbytes 0.50.0, Python 3.11.
"""
import argparse
import gc
import hashlib
import json
import os
import sys
import time
import traceback
import warnings
import weakref

warnings.filterwarnings("ignore")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.weak import WeakIdKeyDictionary

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
HF_CONFIGS = os.path.join(REPO, "crates", "core", "tests", "fixtures", "hf_configs")

_CPU_KEYSET = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)

# Speed only: on CPUs without native bf16 (AVX2), oneDNN's bf16 GEMM is 3-40x slower than fp32.
# Inside __torch_dispatch__ the mode is off, so computing a bf16 matmul as fp32 and casting the
# result back is invisible to the meter: the op's output (the only storage the meter counts) has
# the same shape, dtype and bytes as the bf16 kernel's. Numerics differ in the last bf16 bit at most.
_MM_OPS = {torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default,
           torch.ops.aten.baddbmm.default, torch.ops.aten.linear.default}


def _has_bf16(args):
    return any(isinstance(a, torch.Tensor) and a.dtype == torch.bfloat16 for a in args)


def _mm_via_fp32(func, args, kwargs):
    up = [a.float() if isinstance(a, torch.Tensor) and a.dtype == torch.bfloat16 else a for a in args]
    res = func(*up, **kwargs)
    return res.to(torch.bfloat16)


# --------------------------------------------------------------------------------------
# Storage tracker (from shared/groundtruth/harness/measure.py, extended for bitsandbytes ops)
# --------------------------------------------------------------------------------------
class StorageTracker(TorchDispatchMode):
    def __init__(self, logits_numel=None):
        super().__init__()
        self.winfo = WeakIdKeyDictionary()  # storage -> (sid, weakref)
        # sid -> [nbytes, alloc_seq, free_seq, phase, tag, label, func, free_phase]
        self.recs = []
        self.seq = 0
        self.cur = 0
        self.phase = "init"
        self.phase_peak = {}
        self.phase_start = {}
        self.marks = {}
        self.logits_numel = logits_numel
        self.n_ops = 0
        self.cur_func = None
        self.depth = 0  # nesting inside bitsandbytes custom ops
        self.debug = False
        self.mod_stack = []  # module names (debug only), from global forward hooks

    def install_module_hooks(self, model):
        """Debug: remember which module each allocation happens in (forward and recompute)."""
        names = {id(m): n for n, m in model.named_modules()}

        def pre(mod, inp):
            n = names.get(id(mod))
            if n is not None:
                self.mod_stack.append(_short(n))

        def post(mod, inp, out):
            if names.get(id(mod)) is not None and self.mod_stack:
                self.mod_stack.pop()
        h1 = torch.nn.modules.module.register_module_forward_pre_hook(pre)
        h2 = torch.nn.modules.module.register_module_forward_hook(post)
        return h1, h2

    def _free(self, sid, _ref=None):
        r = self.recs[sid]
        if r[2] is None:
            self.seq += 1
            r[2] = self.seq
            r[7] = self.phase
            self.cur -= r[0]

    def _add_storage(self, st, tag=None):
        ent = self.winfo.get(st)
        if ent is not None:
            sid = ent[0]
            if st.nbytes() != self.recs[sid][0]:  # resized in place
                self._free(sid)
                self.winfo.pop(st, None)
            else:
                return sid
        nb = st.nbytes()
        sid = len(self.recs)
        self.seq += 1
        self.recs.append([nb, self.seq, None, self.phase, tag, None, self.cur_func, None])
        ref = weakref.ref(st, lambda _r, sid=sid: self._free(sid))
        self.winfo[st] = (sid, ref)
        self.cur += nb
        pk = self.phase_peak.get(self.phase)
        if pk is None or self.cur > pk[0]:
            self.phase_peak[self.phase] = [self.cur, self.seq]
        return sid

    def sid_of(self, t):
        ent = self.winfo.get(t.untyped_storage())
        return None if ent is None else ent[0]

    def track_tensor(self, t, tag=None):
        if isinstance(t, torch.Tensor):
            return self._add_storage(t.untyped_storage(), tag)

    def label(self, t, label, force=True):
        sid = self.track_tensor(t)
        if sid is not None and (force or self.recs[sid][5] is None):
            self.recs[sid][5] = label
        return sid

    def set_phase(self, ph):
        self.phase = ph
        self.seq += 1
        self.phase_start[ph] = (self.cur, self.seq)
        self.phase_peak[ph] = [self.cur, self.seq]

    def mark(self, name):
        self.seq += 1
        self.marks[name] = (self.cur, self.seq)

    def _tag_of_input(self, args):
        if args and isinstance(args[0], torch.Tensor):
            ent = self.winfo.get(args[0].untyped_storage())
            if ent is not None:
                r = self.recs[ent[0]]
                return r[4], r[5]
        return None, None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.n_ops += 1
        is_bnb = func.namespace == "bitsandbytes"
        seq0 = self.seq
        if is_bnb and "optimizer_update" in str(func):
            # bnb optimizer kernels update in place; the CUDA kernels allocate nothing, the CPU
            # fallback (backends/cpu/ops.py) allocates fp32 temporaries: do not count those
            out = func(*args, **kwargs)
            is_bnb = False
        elif is_bnb:
            # run the kernel with the mode pushed again so that its internal allocations are seen
            self.depth += 1
            try:
                with self:
                    out = func.redispatch(_CPU_KEYSET, *args, **kwargs)
            finally:
                self.depth -= 1
        elif func in _MM_OPS and _has_bf16(args):
            out = _mm_via_fp32(func, args, kwargs)
        else:
            out = func(*args, **kwargs)
        tag = None
        name = func.__name__ if hasattr(func, "__name__") else str(func)
        if is_bnb and "dequantize_4bit" in str(func):
            tag = "dequant"
        elif is_bnb and "dequantize_blockwise" in str(func):
            tag = "dequant_absmax"
        elif func is torch.ops.aten._to_copy.default:
            itag, ilab = self._tag_of_input(args)
            if ilab in ("qweight", "params_frozen", "params_trainable"):
                tag = "dequant" if ilab == "qweight" else "weight_cast"
            elif itag in ("dequant", "weight_cast"):
                tag = itag
        elif func in (torch.ops.aten.mul_.Tensor, torch.ops.aten.add_.Tensor):
            pass
        elif self.depth > 0:
            tag = "bnb_inner"
        flat, _ = tree_flatten(out)
        if self.debug:
            self.cur_func = (str(func) + ":" + ",".join(
                str(tuple(t.shape)) + str(t.dtype)[6:] for t in flat if isinstance(t, torch.Tensor))
                + "@" + (self.mod_stack[-1] if self.mod_stack else ""))
        for t in flat:
            if isinstance(t, torch.Tensor):
                tg = tag
                if tg is None and self.logits_numel and t.numel() == self.logits_numel:
                    tg = "logits"
                sid = self._add_storage(t.untyped_storage(), tg)
                if is_bnb and self.recs[sid][1] > seq0:
                    # the output of a bitsandbytes op was allocated inside its kernel (and tagged
                    # there as an inner temporary): it is this op's result, tag it as such
                    self.recs[sid][4] = tg
        return out

    def category(self, r):
        if r[5] is not None:
            return r[5]
        ph = r[3]
        kind = ("fwd" if ph.startswith("fwd") else "bwd" if ph.startswith("bwd") else
                "opt" if ph.startswith("opt") else ph.rstrip("0123456789"))
        if r[4] is not None:
            return f"{r[4]}_{kind}"
        if kind == "fwd":
            return "activations_fwd"
        if kind == "bwd":
            return "temp_bwd"
        if kind == "opt":
            return "temp_opt"
        if kind == "zg":
            return "temp_zero_grad"
        return "other_" + kind

    def breakdown(self, seq):
        out = {}
        for r in self.recs:
            if r[1] <= seq and (r[2] is None or r[2] > seq):
                c = self.category(r)
                out[c] = out.get(c, 0) + r[0]
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def _short(n):
    for p in ("base_model.model.", "model.layers.", "model."):
        n = n.replace(p, "")
    return n


def apply_cuda_like_patches():
    """As in the harness: CUDA's fused dropout keeps a 1-byte mask (CPU's F.dropout keeps a mask of
    the input dtype); SDPA with dropout_p>0 keeps the flash/efficient path (no model here has
    attention dropout)."""
    import torch.nn.functional as F
    if getattr(F, "_gt_patched", False):
        return
    _drop, _sdpa = F.dropout, F.scaled_dot_product_attention
    F._gt_orig = (_drop, _sdpa)

    def dropout(input, p=0.5, training=True, inplace=False):
        if training and 0.0 < p < 1.0 and not inplace:
            return torch.native_dropout(input, p, True)[0]
        return _drop(input, p, training, inplace)

    def sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **kw):
        return _sdpa(query, key, value, attn_mask=attn_mask, dropout_p=0.0, is_causal=is_causal, scale=scale, **kw)
    F.dropout = dropout
    F.scaled_dot_product_attention = sdpa
    F._gt_patched = True


_orig_is_autocast_enabled = torch.is_autocast_enabled


def patch_autocast_query():
    """peft's quantized LoRA layers (peft/tuners/lora/bnb.py:260 and :543) test
    `torch.is_autocast_enabled()` with no argument, which means the CUDA autocast state. On a GPU
    under the Trainer's bf16 autocast it is True: the adapter input is not cast to the adapter dtype
    and the adapter output is not cast back. On CPU it is False even under torch.autocast("cpu"),
    which would add a copy of the adapter output per layer. Make the no-argument query report the
    CPU autocast state, as CUDA's would on a GPU."""
    def is_autocast_enabled(*a, **k):
        if not a and not k:
            return _orig_is_autocast_enabled("cpu") or _orig_is_autocast_enabled("cuda")
        return _orig_is_autocast_enabled(*a, **k)
    torch.is_autocast_enabled = is_autocast_enabled


# --------------------------------------------------------------------------------------
# Model config and checkpoint
# --------------------------------------------------------------------------------------
def load_config_dict(name, overrides):
    path = name if name.endswith(".json") else os.path.join(HF_CONFIGS, name + ".json")
    with open(path) as f:
        spec = json.load(f)
    for k, v in overrides.items():
        spec[k] = v
    if "layer_types" in spec and "num_hidden_layers" in overrides:
        spec["layer_types"] = spec["layer_types"][: overrides["num_hidden_layers"]]
    spec["use_cache"] = False
    return spec


def build_config(spec):
    import transformers as T
    kw = dict(spec)
    fam = kw.pop("model_type")
    for k in ("architectures", "transformers_version", "torch_dtype", "dtype", "auto_map",
              "quantization_config"):
        kw.pop(k, None)
    cfg = T.AutoConfig.for_model(fam, **kw)
    cfg.use_cache = False
    return cfg


def ensure_checkpoint(spec, ckpt_root):
    """Random-init bf16 checkpoint of the architecture (save_pretrained, safetensors)."""
    import transformers as T
    key = hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
    d = os.path.join(ckpt_root, key)
    if os.path.exists(os.path.join(d, "config.json")):
        return d
    os.makedirs(d, exist_ok=True)
    torch.manual_seed(0)
    cfg = build_config(spec)
    m = T.AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    m.save_pretrained(d, safe_serialization=True)
    del m
    gc.collect()
    return d


# --------------------------------------------------------------------------------------
def register_model_tensors(tracker, model):
    """Register and label every tensor the (quantized, peft-wrapped) model holds."""
    import bitsandbytes as bnb
    static = {}

    def add(t, label):
        if t is None or not isinstance(t, torch.Tensor):
            return
        sid = tracker.label(t, label)
        static.setdefault(label, set()).add(sid)

    for mod in model.modules():
        if isinstance(mod, bnb.nn.Linear4bit):
            w = mod.weight
            add(w, "qweight")
            qs = w.quant_state
            if qs is not None:
                add(qs.absmax, "quant_state")
                add(qs.code, "quant_state")
                if qs.nested:
                    add(qs.offset, "quant_state")
                    add(qs.state2.absmax, "quant_state")
                    add(qs.state2.code, "quant_state")
        elif isinstance(mod, bnb.nn.Linear8bitLt):
            add(mod.weight, "qweight")
            add(getattr(mod.weight, "SCB", None), "quant_state")
            add(mod.state.SCB, "quant_state")
            if mod.state.CB is not None:
                add(mod.state.CB, "qweight")
    for p in model.parameters():
        if tracker.sid_of(p) is not None and tracker.recs[tracker.sid_of(p)][5] == "qweight":
            continue
        add(p, "params_trainable" if p.requires_grad else "params_frozen")
    for b in model.buffers():
        add(b, "buffers")
    out = {}
    for label, sids in static.items():
        out[label] = sum(tracker.recs[s][0] for s in sids if tracker.recs[s][2] is None
                         and tracker.recs[s][5] == label)
    return out


def count_params(model):
    import bitsandbytes as bnb
    seen = set()
    n = n_train = n_quant = 0
    qlayers = 0
    for mod in model.modules():
        if isinstance(mod, bnb.nn.Linear4bit):
            qs = mod.weight.quant_state
            k = 1
            for s in qs.shape:
                k *= s
            n_quant += k
            qlayers += 1
            seen.add(id(mod.weight))
        elif isinstance(mod, bnb.nn.Linear8bitLt):
            n_quant += mod.weight.numel()
            qlayers += 1
            seen.add(id(mod.weight))
    for p in model.parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        n += p.numel()
        if p.requires_grad:
            n_train += p.numel()
    return n + n_quant, n_train, n_quant, qlayers


def make_optimizer(name, params):
    import torch.optim as O
    lr = 1e-4
    if name in ("adamw", "adamw_foreach"):
        return O.AdamW(params, lr=lr, foreach=True)
    if name == "adamw_forloop":
        return O.AdamW(params, lr=lr, foreach=False)
    if name == "adamw_fused":
        return O.AdamW(params, lr=lr, fused=True)
    # HF Trainer's bitsandbytes names (transformers/trainer_optimizer.py _get_bitsandbytes_optimizer):
    # bnb.optim.AdamW(optim_bits=8 if "8bit" in name else 32, is_paged="paged" in name)
    if name in ("adamw_bnb_8bit", "adamw_8bit", "paged_adamw_8bit", "paged_adamw_32bit", "paged_adamw"):
        import bitsandbytes as bnb
        return bnb.optim.AdamW(params, lr=lr, optim_bits=8 if "8bit" in name else 32,
                               is_paged=name.startswith("paged"))
    raise ValueError(name)


def run(args):
    import transformers
    import peft
    import bitsandbytes as bnb
    import accelerate

    torch.manual_seed(0)
    if args.threads:
        torch.set_num_threads(args.threads)
    overrides = json.loads(args.override) if args.override else {}
    spec = load_config_dict(args.config, overrides)
    name = args.name or (os.path.splitext(os.path.basename(args.config))[0]
                         + "".join(f"-{k[:1]}{v}" for k, v in overrides.items()))
    cfg = build_config(spec)
    h = cfg.hidden_size
    nl = cfg.num_hidden_layers
    # A config whose layers differ (Gemma 4's per-layer head widths) refuses global reads
    # unless asked; the row's `arch` reads the global values only, and the flag is put back
    # before the model is built.
    flag = "allow_global_per_layer_attribute_access"
    had = cfg.__dict__.get(flag)
    cfg.__dict__[flag] = True
    try:
        arch = dict(hidden=h, layers=nl, heads=cfg.num_attention_heads,
                    kv_heads=getattr(cfg, "num_key_value_heads", cfg.num_attention_heads),
                    head_dim=getattr(cfg, "head_dim", None) or h // cfg.num_attention_heads,
                    intermediate=cfg.intermediate_size, vocab=cfg.vocab_size,
                    tied=bool(getattr(cfg, "tie_word_embeddings", False)))
    finally:
        if had is None:
            cfg.__dict__.pop(flag, None)
        else:
            cfg.__dict__[flag] = had
    B, L = args.batch, args.seq
    ckpt = ensure_checkpoint(spec, args.ckpt_dir)

    load_dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[args.load_dtype]
    compute_dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[args.compute_dtype]
    qcfg = None
    if args.quant in ("nf4", "fp4"):
        qcfg = transformers.BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type=args.quant,
            bnb_4bit_use_double_quant=bool(args.double_quant), bnb_4bit_compute_dtype=compute_dtype)
    elif args.quant == "int8":
        qcfg = transformers.BitsAndBytesConfig(load_in_8bit=True)  # llm_int8_threshold=6.0
    apply_cuda_like_patches()
    if args.amp:
        patch_autocast_query()

    # -- load (outside the meter; every tensor that survives is registered below) --
    kw = dict(dtype=load_dtype, attn_implementation=args.attn, device_map={"": "cpu"})
    if qcfg is not None:
        kw["quantization_config"] = qcfg
    model = transformers.AutoModelForCausalLM.from_pretrained(ckpt, **kw)
    gc.collect()

    tracker = StorageTracker(logits_numel=B * L * cfg.vocab_size)
    tracker.debug = bool(args.debug_out)
    static_loaded = None
    gc_reentrant = None
    tracker.__enter__()
    t0 = time.time()
    try:
        tracker.set_phase("init")
        static_loaded = register_model_tensors(tracker, model)
        if args.kbit_prep:
            if args.gc:
                if args.gc_reentrant == 0:
                    # Trainer-style override: non-reentrant
                    model = peft.prepare_model_for_kbit_training(
                        model, gradient_checkpointing_kwargs={"use_reentrant": False})
                    gc_reentrant = False
                else:
                    model = peft.prepare_model_for_kbit_training(model)  # peft defaults
                    gc_reentrant = True  # {} kwargs -> torch.utils.checkpoint default use_reentrant=True
            else:
                model = peft.prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
        elif args.gc:
            rr = bool(args.gc_reentrant == 1)
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": rr})
            gc_reentrant = rr
        targets = ("all-linear" if args.lora_targets == "all-linear"
                   else [t.strip() for t in args.lora_targets.split(",") if t.strip()])
        alpha = args.lora_alpha if args.lora_alpha is not None else 2 * args.lora_r
        lcfg = peft.LoraConfig(r=args.lora_r, lora_alpha=alpha, lora_dropout=args.lora_dropout,
                               target_modules=targets, use_dora=bool(args.dora), task_type="CAUSAL_LM")
        model = peft.get_peft_model(model, lcfg)
        if args.gc and not args.kbit_prep:
            model.enable_input_require_grads()
        model.train()
        if tracker.debug:
            hooks = tracker.install_module_hooks(model)
        static = register_model_tensors(tracker, model)
        n_params, n_train, n_quant, n_qlayers = count_params(model)
        tracker.mark("after_init")
        with_phase = tracker.set_phase
        with_phase("data")
        ids = torch.randint(0, cfg.vocab_size, (B, L))
        labels = ids.clone()
        tracker.label(ids, "inputs")
        tracker.label(labels, "inputs")
        with_phase("optim_init")
        trainable = [p for p in model.parameters() if p.requires_grad]
        opt = make_optimizer(args.optim, trainable)
        tracker.mark("before_train")
        for it in range(1, args.iters + 1):
            with_phase(f"fwd{it}")
            if args.amp:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    out = model(input_ids=ids, labels=labels)
            else:
                out = model(input_ids=ids, labels=labels)
            loss = out.loss
            del out
            tracker.mark(f"after_fwd{it}")
            with_phase(f"bwd{it}")
            loss.backward()
            del loss
            for p in trainable:
                if p.grad is not None:
                    tracker.label(p.grad, "grads")
            tracker.mark(f"after_bwd{it}")
            with_phase(f"opt{it}")
            opt.step()
            for st in opt.state.values():
                for v in st.values():
                    if isinstance(v, torch.Tensor):
                        tracker.label(v, "optimizer_state")
            for v in getattr(opt, "name2qmap", {}).values():  # bnb 8-bit quantization maps
                tracker.label(v, "optimizer_state")
            tracker.mark(f"after_step{it}")
            with_phase(f"zg{it}")
            opt.zero_grad(set_to_none=True)
            tracker.mark(f"after_zero_grad{it}")
        # parameters whose dtype changed during training (e.g. Linear4bit casts its bias to the
        # compute dtype in its first forward): relabel what is alive now
        register_model_tensors(tracker, model)
        tracker.set_phase("end")
        if tracker.debug:
            for hk in hooks:
                hk.remove()
    finally:
        tracker.__exit__(None, None, None)
    wall = time.time() - t0

    M = {k: v[0] for k, v in tracker.marks.items()}
    meas = {"after_init": M["after_init"], "before_train": M["before_train"]}
    overall = [0, 0, None]
    for it in range(1, args.iters + 1):
        d = {}
        d["peak_fwd"] = tracker.phase_peak[f"fwd{it}"][0]
        d["end_fwd"] = M[f"after_fwd{it}"]
        d["peak_bwd"] = tracker.phase_peak[f"bwd{it}"][0]
        d["end_bwd"] = M[f"after_bwd{it}"]
        d["peak_step"] = tracker.phase_peak[f"opt{it}"][0]
        d["end_step"] = M[f"after_step{it}"]
        d["peak_zero_grad"] = tracker.phase_peak[f"zg{it}"][0]
        d["end_zero_grad"] = M[f"after_zero_grad{it}"]
        d["activation_bytes_end_fwd"] = M[f"after_fwd{it}"] - tracker.phase_start[f"fwd{it}"][0]
        d["breakdown_at_peak"] = {}
        for ph, key in (("fwd", "peak_fwd"), ("bwd", "peak_bwd"), ("opt", "peak_step")):
            pk, sq = tracker.phase_peak[f"{ph}{it}"]
            d["breakdown_at_peak"][key] = tracker.breakdown(sq)
            if pk > overall[0]:
                overall = [pk, sq, f"{ph}{it}"]
        d["breakdown_end_fwd"] = tracker.breakdown(tracker.marks[f"after_fwd{it}"][1])
        meas[f"iter{it}"] = d
    meas["peak_overall"] = overall[0]
    meas["peak_overall_phase"] = overall[2]
    meas["breakdown_at_overall_peak"] = tracker.breakdown(overall[1])
    meas["breakdown_after_init"] = tracker.breakdown(tracker.marks["after_init"][1])
    it1 = meas["iter1"]
    meas["logits_sized_bytes_at_fwd_peak"] = sum(
        v for k, v in it1["breakdown_at_peak"]["peak_fwd"].items() if k.startswith("logits"))

    dtype_name = "amp_bf16" if args.amp else args.load_dtype
    res = dict(
        model=name, family=spec["model_type"], mode="real", device="cpu", dtype=dtype_name,
        optim=args.optim, batch=B, seq=L, grad_ckpt=bool(args.gc), gc_reentrant=gc_reentrant,
        attn=args.attn, lora=True, lora_r=args.lora_r,
        lora_alpha=args.lora_alpha if args.lora_alpha is not None else 2 * args.lora_r,
        lora_targets=args.lora_targets, lora_dropout=args.lora_dropout, keep_outputs=False,
        dropout0=False, cuda_like=True, iters=args.iters, fwd_only=False,
        quant=args.quant if args.quant != "none" else None, double_quant=bool(args.double_quant)
        if args.quant in ("nf4", "fp4") else False,
        kbit_prep=bool(args.kbit_prep), dora=bool(args.dora),
        compute_dtype=args.compute_dtype if args.quant in ("nf4", "fp4") else None,
        load_dtype=args.load_dtype, blocksize=64 if args.quant in ("nf4", "fp4") else None,
        n_params=n_params, n_trainable=n_train, n_quantized=n_quant, n_quant_layers=n_qlayers,
        published_params=None, arch=arch, config=spec,
        static_bytes=dict(loaded=static_loaded, after_init=static),
        measured=meas, n_ops=tracker.n_ops, n_storages=len(tracker.recs), wall_s=round(wall, 2),
        versions=dict(torch=torch.__version__, transformers=transformers.__version__,
                      peft=peft.__version__, accelerate=accelerate.__version__,
                      bitsandbytes=bnb.__version__, python=sys.version.split()[0]),
        bnb_version=bnb.__version__,
        tracker="dispatch(storage weakref)+bnb-op re-entry, real CPU tensors",
    )
    if args.debug_out:
        with open(args.debug_out, "a") as f:
            f.write(json.dumps(dict(
                tag=args.tag, model=name, marks=tracker.marks,
                phase_peak=tracker.phase_peak,
                recs=[[i] + r for i, r in enumerate(tracker.recs)])) + "\n")
    return res


# ======================================================================================
# Byte formulas (what /work/notes/quant.md describes), as an event replay, and --check
# ======================================================================================
# Every tensor the forward, the loss, the start of backward, a checkpointed layer's recompute
# and the last layer's MLP backward allocate, with its size formula and the moment it is freed.
# Llama-family decoders (llama, mistral, qwen2) with SDPA. predict(row) returns the phase values.


class StopRecompute(Exception):
    """torch.utils.checkpoint (non-reentrant) stops recomputing once the last saved tensor of the
    region is packed again (early stop): the rest of the layer forward is not run."""


class Sim:
    def __init__(self, base=0):
        self.cur = base
        self.peak = base
        self.live = {}
        self.n = 0

    def alloc(self, name, b):
        assert name not in self.live, name
        self.live[name] = b
        self.cur += b
        if self.cur > self.peak:
            self.peak = self.cur
            self.peak_at = (name, dict(self.live))
        return name

    def free(self, *names):
        for name in names:
            if name is None:
                continue
            self.cur -= self.live.pop(name)

    def tmp(self, b):
        self.n += 1
        return self.alloc(f"_t{self.n}", b)


def ceil_div(a, b):
    return -(-a // b)


class P:
    """Everything a formula needs, from a measured row (or a query)."""

    def __init__(self, row):
        ar = row["arch"]
        cfg = row.get("config", {})
        self.h = ar["hidden"]
        self.nh = ar["heads"]
        self.nkv = ar["kv_heads"]
        self.d = ar["head_dim"]
        self.q = self.nh * self.d
        self.kv = self.nkv * self.d
        self.f = ar["intermediate"]
        self.V = ar["vocab"]
        self.Lr = ar["layers"]
        self.tied = ar["tied"]
        self.bias = row["family"] == "qwen2" or bool(cfg.get("attention_bias"))
        self.B, self.L = row["batch"], row["seq"]
        self.T = self.B * self.L
        self.quant = row["quant"]  # nf4 | fp4 | int8 | None
        self.q4 = self.quant in ("nf4", "fp4")
        self.q8 = self.quant == "int8"
        self.nested = bool(row.get("double_quant")) and self.q4
        self.kbit = bool(row["kbit_prep"])
        self.amp = row["dtype"] == "amp_bf16"
        self.wl = 2  # load dtype bf16
        self.w = 4 if self.kbit else self.wl  # non-quantized params after kbit prep
        self.a = 4 if self.kbit else self.wl  # activation (residual stream) dtype bytes
        self.c = (4 if row.get("compute_dtype") == "fp32" else 2) if self.q4 else self.a
        self.r = row["lora_r"]
        self.p = row["lora_dropout"] > 0
        self.dora = bool(row["dora"])
        t = row["lora_targets"]
        self.targets = ({"q", "k", "v", "o", "gate", "up", "down"} if t == "all-linear"
                        else {x.strip().replace("_proj", "") for x in t.split(",")})
        self.gc = bool(row["grad_ckpt"])
        self.reent = bool(row.get("gc_reentrant"))
        self.optim = row["optim"]
        h, q, kv, f = self.h, self.q, self.kv, self.f
        self.linears = [("q", q, h), ("k", kv, h), ("v", kv, h), ("o", h, q),
                        ("gate", f, h), ("up", f, h), ("down", h, f)]

    # ---- static -----------------------------------------------------------------------
    def qstate(self, N, K):
        nb = ceil_div(N * K, 64)
        if self.q4:
            if self.nested:
                return nb + 4 * ceil_div(nb, 256) + 4 + 1024 + 64
            return 4 * nb + 64
        if self.q8:
            return 4 * N
        return 0

    def static(self, after_first_forward=False):
        s = dict(qweight=0, quant_state=0, params_frozen=0, params_trainable=0, buffers=4 * self.d)
        for name, N, K in self.linears:
            if self.q4:
                s["qweight"] += N * K // 2
            elif self.q8:
                s["qweight"] += N * K
            else:
                s["params_frozen"] += N * K * self.wl
            s["quant_state"] += self.qstate(N, K)
            if name in self.targets:
                s["params_trainable"] += 4 * self.r * (N + K) + (4 * N if self.dora else 0)
        for k in s:
            if k != "buffers":
                s[k] *= self.Lr
        s["params_frozen"] += self.V * self.h * self.w * (1 if self.tied else 2)
        s["params_frozen"] += (2 * self.Lr + 1) * self.h * self.w
        if self.bias:
            bw = self.w
            if after_first_forward and self.q4:
                bw = self.c  # Linear4bit.forward: bias.data = bias.data.to(x.dtype)
            elif after_first_forward and self.q8:
                bw = self.a
            s["params_frozen"] += self.Lr * (self.q + 2 * self.kv) * bw
        return s

    def n_trainable_tensors(self):
        n = sum(1 for name, N, K in self.linears if name in self.targets)
        return self.Lr * n * (3 if self.dora else 2)

    def trainable_sizes(self):
        out = []
        for _ in range(self.Lr):
            for name, N, K in self.linears:
                if name in self.targets:
                    out += [self.r * K, N * self.r] + ([N] if self.dora else [])
        return out

    def opt_state(self):
        sizes = self.trainable_sizes()
        if self.optim.startswith("adamw") and "bnb" not in self.optim and "8bit" not in self.optim:
            return 8 * sum(sizes) + 4 * len(sizes)  # exp_avg, exp_avg_sq fp32 + fp32 step tensor
        bits8 = "8bit" in self.optim
        tot = 0
        any8 = False
        for n in sizes:
            if bits8 and n >= 4096:
                tot += 2 * n + 8 * ceil_div(n, 256)
                any8 = True
            else:
                tot += 8 * n
        return tot + (2 * 256 * 4 if bits8 else 0)  # qmap1 (dynamic) + qmap2 (udynamic), fp32 256 each

    # ---- one adapted / quantized linear, forward --------------------------------------
    def linear(self, S, x, ax, K, N, name, graph, xgrad, keep):
        """x: name of the input (dtype bytes ax). Returns the output name (dtype ax).
        keep: set collecting tensors saved for backward (graph mode)."""
        T, r, c = self.T, self.r, self.c
        adapted = name in self.targets
        rec = self.rec.setdefault(name, {})
        # -- base layer
        if self.q4:
            xc = S.tmp(T * K * c) if ax != c else None           # Linear4bit: x.to(compute_dtype)
            nb = ceil_div(N * K, 64)
            if self.nested:
                t1 = S.tmp(4 * nb)                               # dequantize_blockwise(absmax_8bit)
                t2 = S.tmp(4 * nb)                               # + offset
                S.free(t1)
            W = S.tmp(N * K * c)                                 # dequantize_4bit -> compute dtype
            y = S.tmp(T * N * c)                                 # F.linear
            if self.nested:
                S.free(t2)
            S.free(W)
            if ax != c:
                y2 = S.tmp(T * N * ax)                           # .to(inp_dtype)
                S.free(y, xc)
                y = y2
            if adapted:
                cl = S.tmp(T * N * ax)                           # peft: result.clone()
                S.free(y)
                y = cl
        elif self.q8:
            W = S.tmp(N * K * ax)                                # MatMul8bitFp: CB.to(A.dtype) (CPU path)
            sc = S.tmp(4 * N)
            S.free(sc)
            y = S.tmp(T * N * ax)
            S.free(W)
            if graph and xgrad:
                keep.add(x)                                      # ctx.A = A (input kept)
                rec["x8"] = x
                self.holders[x] = self.holders.get(x, 0) + 1
            if self.gc and not self.reent:
                self.ctx_leak.add(x)
            if adapted:
                cl = S.tmp(T * N * ax)
                S.free(y)
                y = cl
        else:
            y = S.tmp(T * N * ax)                                # frozen bf16 Linear
        if not adapted:
            return y
        if self.dora:
            return self.dora_linear(S, x, ax, K, N, name, graph, xgrad, keep, y)
        # -- LoRA branch (fp32 adapters)
        x32 = None
        xl = x
        if ax != 4 and not self.amp:
            x32 = S.tmp(T * K * 4)                               # _cast_input_dtype(x, fp32)
            xl = x32
        if self.p:
            d = S.tmp(T * K * (ax if self.amp else 4))          # CUDA autocast: no fp32 cast first
            m = S.tmp(T * K)                                     # native_dropout: output + bool mask
            if graph and xgrad:
                keep.add(m)
            else:
                S.free(m)
            xin = d
        else:
            xin = xl
        if self.amp:
            # torch.autocast: the adapter weights are cast to bf16 once per autocast region and
            # cached (alive until the region exits); the adapter input is cast unless already bf16
            wa = S.tmp(r * K * 2)
            self.amp_cache.append(wa)
            xa = S.tmp(T * K * 2) if ax != 2 else xin            # autocast cast of the adapter input
            A = S.tmp(T * r * 2)
            if self.p and xa != d:
                S.free(d)                                        # only the bf16 cast is saved
            if graph:
                keep.add(xa)
                if xgrad:
                    keep.add(wa)
                keep.add(A)
            elif xa != x:
                S.free(xa)                                       # the cast, or the bf16 dropout output
            rec["A"] = A
            wb = S.tmp(N * r * 2)
            self.amp_cache.append(wb)
            B_ = S.tmp(T * N * 2)
            if graph:
                keep.add(wb)
            else:
                S.free(A)
            mu = S.tmp(T * N * 2)
            S.free(B_)
            out = S.tmp(T * N * ax)                              # result (ax) + bf16 -> ax, no copy
            S.free(y, mu)
            return out
        A = S.tmp(T * r * 4)
        rec["A"] = A
        if self.p:
            rec["d"], rec["m"] = d, m
        else:
            rec["xin"] = xin
        if graph:
            keep.add(xin)
            keep.add(A)
            if not self.p:
                self.holders[xin] = self.holders.get(xin, 0) + 1
        B_ = S.tmp(T * N * 4)
        if getattr(self, "early_stop", False) and name == "down":
            raise StopRecompute()                                # lora_B packed the last saved tensor
        if not graph:
            S.free(A)
        mu = S.tmp(T * N * 4)
        S.free(B_)
        oc = None
        if ax != 4:
            oc = S.tmp(T * N * ax)                               # output.to(expected_dtype)
            S.free(mu)
            mu = None
        out = S.tmp(T * N * ax)
        S.free(y, mu, oc)
        if x32 is not None and x32 not in keep:
            S.free(x32)
        if self.p and not graph:
            S.free(d)
        return out

    def dora_linear(self, S, x, ax, K, N, name, graph, xgrad, keep, y):
        """peft DoRA (tuners/lora/dora.py DoraLinearLayer.forward, variants.py DoraLinearVariant)."""
        T, r, c = self.T, self.r, self.c
        x32 = None
        xl = x
        if ax != 4:
            x32 = S.tmp(T * K * 4)
            xl = x32
        if self.p:
            d = S.tmp(T * K * 4)
            m = S.tmp(T * K)
            if graph and xgrad:
                keep.add(m)
            else:
                S.free(m)
            xin = d
        else:
            xin = xl
        # lora_weight = lora_B(lora_A(eye(K))).T  (grad-tracked, only its detached value is used)
        eye = S.tmp(K * K * 4)
        ea = S.tmp(K * r * 4)
        eb = S.tmp(K * N * 4)
        if not graph:
            S.free(ea, eye)  # no autograd graph holds them once lora_weight exists
            ea = eye = None
        # weight = dequantize_module_weight(base).to(x.dtype)
        if self.q4:
            nb = ceil_div(N * K, 64)
            if self.nested:
                t1 = S.tmp(4 * nb)                               # dequantize_blockwise, += offset in place
            W = S.tmp(N * K * self.wl)                           # dequantize_4bit -> quant_state.dtype
            if self.nested:
                S.free(t1)
            W32 = S.tmp(N * K * 4)
            S.free(W)
        elif self.q8:
            W = S.tmp(N * K * 4)
            W32 = W
        else:
            W32 = S.tmp(N * K * 4)                               # bf16 weight .to(fp32)
        sl = S.tmp(N * K * 4)                                    # scaling * lora_weight
        sm = S.tmp(N * K * 4)                                    # weight + ...
        S.free(sl)
        wn = S.tmp(4 * N)                                        # linalg.norm(dim=1)
        S.free(sm)
        ms = S.tmp(4 * N)                                        # magnitude / weight_norm
        if graph:
            keep.add(wn)
            keep.add(ms)
        A = S.tmp(T * r * 4)
        B_ = S.tmp(T * N * 4)
        if not graph:
            S.free(A)
        if self.p:
            base = S.tmp(T * N * 4)                              # F.linear(x, weight) (dropout path)
            if graph and xgrad:
                keep.add(W32)                                    # saved by the matmul (input needs grad)
            bres = base
        else:
            bres = y
        s1 = S.tmp(4 * N)                                        # mag_norm_scale - 1
        if graph:
            keep.update([bres, B_, A, xin])
            if xgrad:
                keep.add(s1)   # saved by (mag-1)*base_result only if base_result requires grad
        m1 = S.tmp(T * N * 4)                                    # (mag-1) * base_result
        m2 = S.tmp(T * N * 4)                                    # mag * lora_result
        m3 = S.tmp(T * N * 4)                                    # * scaling
        S.free(m2)
        dsum = S.tmp(T * N * 4)
        S.free(m1, m3)
        if not graph:
            S.free(s1, B_, ms, wn)
            if self.p:
                S.free(base)
        elif s1 not in keep:
            S.free(s1)
        S.free(ea, eye, eb)
        if W32 not in keep:
            S.free(W32)
        out = S.tmp(T * N * 4)                                   # result + dora (fp32)
        S.free(dsum)
        if ax != 4:
            oc = S.tmp(T * N * ax)                               # result.to(expected_dtype)
            S.free(out)
            out = oc
        if y not in keep:
            S.free(y)
        if x32 is not None and x32 not in keep:
            S.free(x32)
        if self.p and not graph:
            S.free(d)
        return out

    # ---- RMSNorm -----------------------------------------------------------------------
    def norm(self, S, x, graph, xgrad, keep):
        T, h, a = self.T, self.h, self.a
        x32 = x
        if a != 4:
            x32 = S.tmp(T * h * 4)
        pw = S.tmp(T * h * 4)
        mn = S.tmp(T * 4)
        S.free(pw)
        ad = S.tmp(T * 4)
        rs = S.tmp(T * 4)
        S.free(ad)
        m1 = S.tmp(T * h * 4)
        if a != 4:
            cb = S.tmp(T * h * 2)
            out = S.tmp(T * h * 2)
            S.free(cb, m1)
        else:
            out = S.tmp(T * h * 4)
            S.free(m1)
        S.free(mn)
        if graph and xgrad:
            keep.update([x32, rs])
        else:
            S.free(rs)
            if x32 != x:
                S.free(x32)
        return out

    def rope(self, S, x, heads):
        T, d, a = self.T, self.d, self.a
        m1 = S.tmp(T * heads * d * a)
        ng = S.tmp(T * heads * d // 2 * a)
        ct = S.tmp(T * heads * d * a)
        S.free(ng)
        m2 = S.tmp(T * heads * d * a)
        S.free(ct)
        out = S.tmp(T * heads * d * a)
        S.free(m1, m2)
        return out

    # ---- decoder layer --------------------------------------------------------------------
    def layer(self, S, x, graph, xgrad):
        """Forward of one decoder layer; x = its input (alive, owned by the caller).
        Returns (output, keep) where keep = names saved for backward (graph mode)."""
        T, a = self.T, self.a
        keep = set()
        self.keep_now = keep
        self.rec = {}
        self.holders = {}
        h, q, kv, f = self.h, self.q, self.kv, self.f
        xn = self.norm(S, x, graph, xgrad, keep)
        qo = self.linear(S, xn, a, h, q, "q", graph, xgrad, keep)
        ko = self.linear(S, xn, a, h, kv, "k", graph, xgrad, keep)
        vo = self.linear(S, xn, a, h, kv, "v", graph, xgrad, keep)
        qr = self.rope(S, qo, self.nh)
        kr = self.rope(S, ko, self.nkv)
        S.free(qo, ko)
        ao = a
        if self.amp and a != 2:
            # autocast runs SDPA in bf16: bf16 copies of k, v, q are what SDPA saves
            kc = S.tmp(T * kv * 2)
            vc = S.tmp(T * kv * 2)
            qc = S.tmp(T * q * 2)
            ao = 2
            sv = [qc, kc, vc]
        else:
            sv = [qr, kr, vo]
        so = S.tmp(T * q * ao)
        lse = S.tmp(self.nh * T * 4)
        if graph:
            keep.update(sv + [so, lse])
        else:
            S.free(lse, *[t for t in sv if t not in (qr, kr, vo)])
        oo = self.linear(S, so, ao, q, h, "o", graph, True, keep)
        S.free(*[t for t in (qr, kr, vo) if t not in keep])      # attention locals die at return
        if so not in keep and so not in self.ctx_leak:
            S.free(so)
        if xn not in keep and xn not in self.ctx_leak:
            S.free(xn)
        r1 = S.tmp(T * h * a)
        S.free(oo)
        xn2 = self.norm(S, r1, graph, True, keep)
        go = self.linear(S, xn2, a, h, f, "gate", graph, True, keep)
        ac = S.tmp(T * f * a)
        if not graph:
            S.free(go)
        uo = self.linear(S, xn2, a, h, f, "up", graph, True, keep)
        mu = S.tmp(T * f * a)
        if graph:
            keep.update([go, ac, uo])
        else:
            S.free(ac, uo)
        self.rec.update(go=go, ac=ac, uo=uo, mu=mu)
        dn = self.linear(S, mu, a, f, h, "down", graph, True, keep)
        if mu not in keep and mu not in self.ctx_leak:
            S.free(mu)
        if xn2 not in keep and xn2 not in self.ctx_leak:
            S.free(xn2)
        out = S.tmp(T * h * a)
        S.free(dn)
        if r1 not in keep:
            S.free(r1)
        return out, keep


def release(p, S, x):
    """One holder of x (a tensor shared by several saved contexts) is done with it."""
    if x is None or x not in p.holders:
        return
    p.holders[x] -= 1
    if p.holders[x] == 0 and x in S.live:
        S.free(x)


def linear_bwd(p, S, name, N, K, ax, g, lin, grads):
    """Backward of one linear block (LoRA branch first, then the base branch, then the sum).
    lin: dict of the block's saved tensor names (from the forward). Returns the input-grad name."""
    T, r, c = p.T, p.r, p.c
    adapted = name in p.targets
    gl = None
    if adapted and not p.dora:
        g32 = None
        if ax != 4:
            g32 = S.tmp(T * N * 4)                               # ToCopyBackward of output.to(bf16)
        mb = S.tmp(T * N * 4)                                    # grad * scaling
        S.free(g32)
        ga = S.tmp(T * r * 4)                                    # grad wrt lora_A output
        grads.append(S.tmp(N * r * 4))                           # lora_B.weight.grad
        S.free(mb, lin.get("A"))
        gd = S.tmp(T * K * 4)                                    # grad wrt lora input
        grads.append(S.tmp(r * K * 4))                           # lora_A.weight.grad
        S.free(ga)
        if p.p:
            S.free(lin.get("d"))
            gdb = S.tmp(T * K * 4)                               # native_dropout_backward
            S.free(gd, lin.get("m"))
            gl = gdb
        else:
            gl = gd
            release(p, S, lin.get("xin"))                        # lora_A's saved input
        if ax != 4:
            gl2 = S.tmp(T * K * ax)                              # ToCopyBackward of x.to(fp32)
            S.free(gl)
            gl = gl2
    # base branch
    if p.q4:
        gc_ = None
        if ax != c:
            gc_ = S.tmp(T * N * c)                               # ToCopyBackward of .to(inp_dtype)
            S.free(g) if g in lin.get("free_g", ()) else None
        nb = ceil_div(N * K, 64)
        t = S.tmp(4 * nb) if p.nested else None                  # dequantize_blockwise; += offset in place
        W = S.tmp(N * K * p.wl)                                  # dequantize_4bit -> quant_state.dtype
        S.free(t)
        if p.wl != c:
            Wc = S.tmp(N * K * c)                                # .to(grad_output.dtype)
            S.free(W)
            W = Wc
        gA = S.tmp(T * K * c)                                    # grad_output @ W
        S.free(W, gc_)
        if ax != c:
            gA2 = S.tmp(T * K * ax)                              # ToCopyBackward of x.to(compute_dtype)
            S.free(gA)
            gA = gA2
    elif p.q8:
        W = S.tmp(N * K * ax)                                    # CB.to(dtype_A, copy=True).mul_(SCB/127)
        sc = S.tmp(4 * N)
        S.free(sc)
        gA = S.tmp(T * K * ax)
        S.free(W)
        release(p, S, lin.get("x8"))                             # ctx.A
    else:
        gA = S.tmp(T * K * ax)
    if gl is not None:
        out = S.tmp(T * K * ax)
        S.free(gl, gA)
        return out
    return gA


def mlp_bwd(p, S, g, L, grads):
    """MLP backward of a layer whose forward left the names in L (dict)."""
    T, f, h, a = p.T, p.f, p.h, p.a
    gmu = linear_bwd(p, S, "down", h, f, a, g, L["down"], grads)
    gac = S.tmp(T * f * a)
    guo = S.tmp(T * f * a)
    S.free(gmu, L["uo"], L["ac"])
    L["up"]["free_g"] = (guo,)
    gxu = linear_bwd(p, S, "up", f, h, a, guo, L["up"], grads)
    if guo in S.live:
        S.free(guo)
    ggo = S.tmp(T * f * a)
    S.free(gac, L["go"])
    L["gate"]["free_g"] = (ggo,)
    gxg = linear_bwd(p, S, "gate", f, h, a, ggo, L["gate"], grads)
    if ggo in S.live:
        S.free(ggo)
    gx = S.tmp(T * h * a)
    S.free(gxu, gxg)
    return gx


def predict(row):
    """Phase values (bytes) predicted for a measured row."""
    p = P(row)
    T, h, V, a, Lr = p.T, p.h, p.V, p.a, p.Lr
    p.ctx_leak = set()
    st0 = p.static()
    static0 = sum(st0.values())
    st1 = p.static(after_first_forward=True)
    static1 = sum(st1.values())
    inputs = 2 * T * 8
    state = p.opt_state()
    grads = 4 * sum(p.trainable_sizes())
    qmaps_early = 2 * 256 * 4 if "8bit" in p.optim else 0
    out = {"after_init": static0, "before_train": static0 + inputs + qmaps_early}

    def forward(it):
        base = static1  # (Qwen2 biases are cast to the compute dtype by the first layer forward)
        extra = state if it == 2 else qmaps_early
        S = Sim(base + inputs + extra)
        p.ctx_leak = set()
        # embedding output, position ids, RoPE tables
        emb = S.alloc("emb", T * h * a)
        pos = S.alloc("pos", 8 * p.L)
        cs = S.alloc("cos", p.L * p.d * 4)
        sn = S.alloc("sin", p.L * p.d * 4)
        if a != 4:
            c2 = S.alloc("cos16", p.L * p.d * 2)
            s2 = S.alloc("sin16", p.L * p.d * 2)
            S.free("cos", "sin")
        if not p.gc:
            S.free("pos")
        p.amp_cache = []
        p.ctx_leak_all = set()
        x = emb
        xgrad = p.gc  # enable_input_require_grads (GC) makes the embedding output require grad
        saved_layers = []
        inputs_kept = []
        for li in range(Lr):
            graph = not p.gc
            y, keep = p.layer(S, x, graph, xgrad)
            # drop everything of the layer that is not kept / leaked
            if p.gc:
                inputs_kept.append(x)
            elif x == "emb" and not xgrad:
                if x not in keep:
                    S.free(x)
            elif a == 2 and x not in keep:
                S.free(x)
            saved_layers.append(keep)
            p.ctx_leak_all |= p.ctx_leak
            x = y
            xgrad = True
        # final norm + head + loss
        keepf = set()
        xf = p.norm(S, x, True, True, keepf)
        if a == 2 and not p.gc:
            S.free(x)
        elif a == 2 and p.gc:
            S.free(x)
        wcast = None
        if p.amp:
            wcast = S.alloc("lm_head_w16", V * h * 2)             # autocast copy of the head weight (saved)
            xc = S.tmp(T * h * 2)
            logits = S.tmp(T * V * 2)
            S.free(xc)
        else:
            logits = S.tmp(T * V * (4 if p.kbit else 2))
        up = S.tmp(T * V * 4) if (p.amp or not p.kbit) else None  # logits.float()
        # labels padded by one position; the shifted view is copied by .contiguous() unless B == 1
        # (a (1, L) slice of a (1, L+1) tensor is already contiguous: the padded tensor is kept)
        if p.B == 1:
            pad = None
            lab = S.alloc("labels", (p.L + 1) * 8)
        else:
            pad = S.tmp(p.B * (p.L + 1) * 8)
            lab = S.alloc("labels", p.B * p.L * 8)
        lsm = S.alloc("lsm", T * V * 4)
        nll = S.alloc("nll", 8)
        peak_loss = S.cur
        S.free(pad, up, logits, xf)
        p.leak_bytes = sum(S.live.get(t, 0) for t in p.ctx_leak_all)
        allkeep = set().union(*saved_layers) if saved_layers else set()
        S.free(*[t for t in p.amp_cache if t not in allkeep and t in S.live])  # autocast exit
        end_fwd = S.cur
        peak_fwd = S.peak
        # ---- backward of the last layer's MLP (no checkpointing): continue from end of forward
        bpk = 0
        if not p.gc and not p.dora:
            S.peak = 0
            S.free("lsm", "labels", "nll")
            S.alloc("loss+ones", 8)
            S.free(*[k for k in keepf if k in S.live])           # final norm backward done
            if wcast:
                S.free(wcast)
            g = S.tmp(T * h * a)                                 # grad of the last layer output
            mlp_bwd(p, S, g, dict(p.rec), [])
            bpk = S.peak
        return S, peak_fwd, end_fwd, peak_loss, bpk

    def recompute(it):
        """A checkpointed layer recomputed at the start of its backward, then its MLP backward.
        Layer l's backward runs with the checkpoint inputs of layers 0..l alive and the adapter
        gradients of layers l+1..Lr-1 already made: the peak is at the last layer, or at layer 0
        when one layer's adapter gradients outweigh one checkpointed input."""
        extra = state if it == 2 else qmaps_early
        tables = 2 * p.L * p.d * (4 if a == 4 else 2)
        layer_grads = grads // Lr
        best = 0
        for l in (Lr - 1, 0):
            # + inputs of int8 layers kept by ctx.A outside saved_tensors (non-reentrant checkpointing)
            base = (static1 + inputs + extra + (l + 1) * T * h * a + 8 * p.L + tables + 8
                    + p.leak_bytes * (l + 1) // Lr + (Lr - 1 - l) * layer_grads)
            S = Sim(base)
            g = S.alloc("g", T * h * a)
            p.ctx_leak = set()
            p.amp_cache = []
            p.early_stop = not p.reent and not p.dora and not p.amp and "down" in p.targets
            try:
                y, keep = p.layer(S, "x_in", True, True)
                if not p.reent:
                    S.free(y)                                    # non-reentrant: only saved tensors are rebuilt
            except StopRecompute:
                keep = p.keep_now
                S.free(*[t for t in list(S.live) if t not in keep and t != g])
            p.early_stop = False
            if not p.dora:
                mlp_bwd(p, S, g, dict(p.rec), [])
            best = max(best, S.peak)
        return best

    for it in (1, 2):
        S, pf, ef, pl, bpk = forward(it)
        base1 = static1
        d = {"peak_fwd": pf, "end_fwd": ef}
        # backward start: nll_loss_backward, _log_softmax_backward_data (labels clone and one scalar freed)
        b0 = ef - (p.B * p.L * 8 if p.B > 1 else (p.L + 1) * 8) - 4 + 4 + 2 * T * V * 4
        d["peak_bwd"] = max(b0, bpk, recompute(it) if p.gc else 0)
        extra = state if it == 2 else qmaps_early
        d["end_bwd"] = base1 + inputs + grads + extra
        d["peak_step"] = base1 + inputs + grads + state
        d["end_step"] = base1 + inputs + grads + state
        d["end_zero_grad"] = base1 + inputs + state
        d["peak_zero_grad"] = d["end_step"]
        d["activation_bytes_end_fwd"] = ef - ((static0 if it == 1 else static1) + inputs
                                              + (state if it == 2 else qmaps_early))
        d["layer_bwd_peak"] = max(bpk, recompute(it) if p.gc else 0)
        out[f"iter{it}"] = d
    return out

CHECK_PHASES = [("after_init",), ("before_train",)] + [
    (it, k) for it in ("iter1", "iter2") for k in ("peak_fwd", "end_fwd", "peak_bwd", "end_bwd", "peak_step")]


def check(path):
    """Recompute every measured phase value of a rows file from the formulas; print % errors."""
    rows = [json.loads(l) for l in open(path) if l.strip()]
    hdr = ["init", "train0"] + [f"{k.split('_')[0][0]}{k.split('_')[1][0]}{it[-1]}" for it, k in CHECK_PHASES[2:]]
    print(f"{'tag':<30} " + " ".join(f"{h:>7}" for h in hdr) + f" {'overall':>12} {'max|%|':>7}")
    worst = 0.0
    for r in rows:
        pr = predict(r)
        errs = []
        for k in CHECK_PHASES:
            m, pv = r["measured"], pr
            for kk in k:
                m, pv = m[kk], pv[kk]
            errs.append(100.0 * (pv - m) / m)
        po = max(pr[it][k] for it in ("iter1", "iter2") for k in ("peak_fwd", "peak_bwd", "peak_step"))
        eo = 100.0 * (po - r["measured"]["peak_overall"]) / r["measured"]["peak_overall"]
        mx = max(abs(e) for e in errs + [eo])
        worst = max(worst, mx)
        print(f"{r['tag']:<30} " + " ".join(f"{e:>+7.3f}" for e in errs) + f" {eo:>+11.4f}% {mx:>7.3f}")
    print(f"{len(rows)} rows; largest |error| {worst:.4f}% "
          "(columns: after_init, before_train, then p/e = peak/end of f/b/s = forward/backward/step, iteration 1|2)")
    return 0 if worst < 1.0 else 1


def parse(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="llama-20m", help="file name in fixtures/hf_configs (no .json) or a path")
    ap.add_argument("--override", default="", help='JSON dict of config overrides, e.g. {"num_hidden_layers": 8}')
    ap.add_argument("--name", default="")
    ap.add_argument("--quant", default="nf4", choices=["nf4", "fp4", "int8", "none"])
    ap.add_argument("--double-quant", type=int, default=1)
    ap.add_argument("--compute-dtype", default="bf16", choices=["bf16", "fp32"])
    ap.add_argument("--load-dtype", default="bf16", choices=["bf16", "fp32"])
    ap.add_argument("--kbit-prep", type=int, default=1)
    ap.add_argument("--gc", type=int, default=1)
    ap.add_argument("--gc-reentrant", type=int, default=-1,
                    help="-1: what the recipe does (kbit_prep: peft default = reentrant; else non-reentrant)")
    ap.add_argument("--lora-r", type=int, default=16)
    ap.add_argument("--lora-alpha", type=int, default=None, help="default 2*r")
    ap.add_argument("--lora-targets", default="all-linear")
    ap.add_argument("--lora-dropout", type=float, default=0.05)
    ap.add_argument("--dora", type=int, default=0)
    ap.add_argument("--amp", type=int, default=0, help="torch.autocast(bf16) around forward (Trainer bf16=True)")
    ap.add_argument("--optim", default="adamw_fused", choices=["adamw", "adamw_foreach", "adamw_forloop", "adamw_fused", "adamw_bnb_8bit",
                             "adamw_8bit", "paged_adamw_8bit", "paged_adamw_32bit", "paged_adamw"])
    ap.add_argument("--attn", default="sdpa", choices=["sdpa", "eager"])
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--iters", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--ckpt-dir", default=os.path.expanduser("~/.cache/vramfit-quant"))
    ap.add_argument("--debug-out", default="")
    ap.add_argument("--tag", default="")
    ap.add_argument("--out", default="")
    return ap.parse_args(argv)


# The measured matrix (fixtures/quant_rows.jsonl). Each entry: tag, argv.
A = ["--config", "llama-20m"]
Bm = ["--config", "smollm2-135m", "--override", '{"num_hidden_layers": 8}', "--name", "smollm2-135m-L8"]
Cq = ["--config", "qwen2.5-0.5b", "--override", '{"num_hidden_layers": 4}', "--name", "qwen2.5-0.5b-L4"]
Mm = ["--config", "mistral-7b", "--override", '{"num_hidden_layers": 2}', "--name", "mistral-7b-L2"]
MATRIX = [
    # the standard QLoRA recipe: nf4 + double quant + kbit prep (-> reentrant checkpointing), r16 all-linear
    ("A-qlora", A + []),
    ("A-qlora-b4s512", A + ["--batch", "4", "--seq", "512"]),
    ("A-qlora-attn", A + ["--lora-targets", "q_proj,k_proj,v_proj,o_proj"]),
    ("A-qlora-nodq", A + ["--double-quant", "0"]),
    ("A-fp4", A + ["--quant", "fp4"]),
    ("A-qlora-drop0", A + ["--lora-dropout", "0"]),
    ("A-qlora-nogc", A + ["--gc", "0"]),
    ("A-qlora-gc-nonreentrant", A + ["--gc-reentrant", "0"]),
    ("A-nf4-noprep-nogc", A + ["--kbit-prep", "0", "--gc", "0"]),
    ("A-nf4-noprep-gc", A + ["--kbit-prep", "0", "--gc", "1"]),
    ("A-nf4-cdt-fp32", A + ["--compute-dtype", "fp32"]),
    ("A-qlora-amp", A + ["--amp", "1"]),
    ("A-int8", A + ["--quant", "int8"]),
    ("A-int8-noprep-nogc", A + ["--quant", "int8", "--kbit-prep", "0", "--gc", "0"]),
    ("A-int8-gc-nonreentrant", A + ["--quant", "int8", "--gc-reentrant", "0"]),
    ("A-dora-nf4", A + ["--dora", "1"]),
    ("A-dora-nf4-drop0", A + ["--dora", "1", "--lora-dropout", "0"]),
    ("A-dora-nf4-nogc", A + ["--dora", "1", "--lora-dropout", "0", "--gc", "0"]),
    ("A-lora-bf16", A + ["--quant", "none", "--kbit-prep", "0", "--gc", "0"]),
    ("A-dora-bf16", A + ["--quant", "none", "--kbit-prep", "0", "--gc", "0", "--dora", "1"]),
    ("A-dora-bf16-drop0", A + ["--quant", "none", "--kbit-prep", "0", "--gc", "0", "--dora", "1",
                               "--lora-dropout", "0"]),
    ("A-qlora-bnb8bit", A + ["--optim", "adamw_bnb_8bit"]),
    ("B-qlora", Bm + []),
    ("B-qlora-paged8bit", Bm + ["--optim", "paged_adamw_8bit"]),
    ("B-qlora-b4s512", Bm + ["--batch", "4", "--seq", "512"]),
    ("B-int8", Bm + ["--quant", "int8"]),
    ("C-qlora", Cq + []),
    ("C-nf4-noprep-nogc", Cq + ["--kbit-prep", "0", "--gc", "0"]),
    # a 7B-shaped model cut to 2 layers (untied lm_head, 14336x4096 MLP weights)
    ("M-qlora", Mm + []),
    ("M-nf4-noprep-nogc", Mm + ["--kbit-prep", "0", "--gc", "0"]),
    ("M-int8", Mm + ["--quant", "int8"]),
    ("M-dora-nf4", Mm + ["--dora", "1"]),
    # held out: measured after the formulas below were written, to test them on unseen shapes
    ("H-llama1b-qv", ["--config", "llama3.2-1b", "--override", '{"num_hidden_layers": 2}', "--name",
                      "llama3.2-1b-L2", "--batch", "1", "--seq", "512", "--lora-r", "8",
                      "--lora-targets", "q_proj,v_proj"]),
    ("H-A-fp4-amp-nogc", A + ["--quant", "fp4", "--double-quant", "0", "--gc", "0", "--amp", "1",
                              "--batch", "1", "--seq", "384"]),
    ("H-M-cdt32-noprep-gc", Mm + ["--compute-dtype", "fp32", "--kbit-prep", "0", "--gc", "1",
                                  "--batch", "1", "--seq", "256"]),
    ("H-C-int8-noprep-gc", Cq + ["--quant", "int8", "--kbit-prep", "0", "--gc", "1", "--batch", "2",
                                 "--seq", "128"]),
    ("H-B-dora-r32-nogc", Bm + ["--dora", "1", "--gc", "0", "--lora-r", "32", "--batch", "2",
                                "--seq", "192"]),
    ("H-A-int8-amp-drop0", A + ["--quant", "int8", "--amp", "1", "--lora-dropout", "0", "--batch", "3",
                                "--seq", "200"]),
    # second held-out round (after the B=1 label, autocast-SDPA and layer-0 recompute fixes)
    ("H2-C-amp-nogc-attn", Cq + ["--gc", "0", "--amp", "1", "--batch", "1", "--seq", "256",
                                 "--lora-targets", "q_proj,k_proj,v_proj,o_proj"]),
    ("H2-M-fp4-amp-r64", Mm + ["--quant", "fp4", "--double-quant", "0", "--amp", "1", "--lora-r", "64",
                               "--batch", "1", "--seq", "384"]),
    ("H2-B-int8-nonre-r4", Bm + ["--quant", "int8", "--gc-reentrant", "0", "--lora-r", "4",
                                 "--lora-dropout", "0", "--batch", "2", "--seq", "256"]),
    ("H2-llama1b-dora-mlp-noprep-gc", ["--config", "llama3.2-1b", "--override", '{"num_hidden_layers": 2}',
                                       "--name", "llama3.2-1b-L2", "--dora", "1", "--kbit-prep", "0",
                                       "--gc", "1", "--lora-targets", "gate_proj,up_proj,down_proj",
                                       "--batch", "1", "--seq", "256"]),
]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--check"]:
        return check(argv[1] if len(argv) > 1 else os.path.join(
            REPO, "crates", "core", "tests", "fixtures", "quant_rows.jsonl"))
    if "--matrix" in argv:
        i = argv.index("--matrix")
        rest = argv[:i] + argv[i + 1:]
        only = os.environ.get("QUANT_ONLY")
        rc = 0
        for tag, av in MATRIX:
            if only and tag not in only.split(","):
                continue
            rc |= main(av + rest + ["--tag", tag])
            gc.collect()
        return rc
    args = parse(argv)
    try:
        res = run(args)
        res["status"] = "ok"
    except Exception as e:
        res = dict(model=args.config, status="error", error=f"{type(e).__name__}: {e}"[:2000],
                   traceback=traceback.format_exc()[-3000:])
    res["tag"] = args.tag
    line = json.dumps(res)
    if args.out:
        with open(args.out, "a") as f:
            f.write(line + "\n")
    print(json.dumps({k: res.get(k) for k in ("tag", "status", "error", "wall_s")}
                     | ({"peak": res["measured"]["peak_overall"], "phase": res["measured"]["peak_overall_phase"]}
                        if res["status"] == "ok" else {})), flush=True)
    return 0 if res["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
