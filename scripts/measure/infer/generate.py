#!/usr/bin/env python
"""Measure the memory of transformers' `generate` (greedy, DynamicCache), op by op.

What it measures
----------------
Live tensor-storage bytes, op by op, through one call of

    model = AutoModelForCausalLM.from_config(config, dtype=..., attn_implementation=...)   # random init
    model.generate(input_ids, attention_mask=ones, max_new_tokens=N, min_new_tokens=N,
                   do_sample=False, use_cache=True, pad_token_id=...)

on random prompt ids of shape (B, P) (no padding), for any architecture transformers knows from
its config.json, in two modes:

  * --mode fake: under FakeTensorMode (no memory is allocated: 8B and MoE models run in seconds
    per step on a laptop CPU);
  * --mode real: with real CPU tensors (small configs only), to validate fake against real.

The meter is the project's ground-truth tracker (shared/groundtruth/harness/measure.py,
StorageTracker, copied here so this script is self-contained): a TorchDispatchMode that adds each
ATen op output's storage bytes when the storage is created and subtracts them when it is freed
(weakref on the storage). That is torch.cuda.memory_allocated() less the caching allocator's
512-byte rounding (a second counter, `*_r512`, adds that rounding per storage).

Phases (hooks on the top-level module's forward): `load` (from_config), `inputs`, `prep`
(generate's preamble up to the first forward), `fwd0` (the prefill forward), `post0` (the first
token: fp32 copy of the last logits, processors, argmax, cat), then `fwd<k>`/`post<k>` for each
decode step k = 1..N-1, and `end` (generate returned).

Data-dependent steps under fake tensors (--mode fake)
-----------------------------------------------------
`generate` reads tensor values in a few places (a FakeTensor has no value): stop checks
(`bool(unfinished_sequences.max() == 0)` in StopCheck.__call__), `(attention_mask == 1).all()`
(generate drops an all-ones mask), `torch.any(attention_mask[:, -1] == 0).item()` (right-padding
warning), `torch.isin(eos, pad).any()` and `(eos < 0).any()` (_prepare_special_tokens). No
transformers code is patched for them: the meter, which sits above FakeTensorMode, answers the
scalar read (`aten._local_scalar_dense`) itself with the value the real run has (ORACLE below,
keyed by the source line that asks): with min_new_tokens == max_new_tokens, EOS is masked to -inf
by MinNewTokensLengthLogitsProcessor at every step, so no sequence finishes before length P+N; the
mask is all ones; no id is negative. The ops that compute the scalar still run (same
allocations). In --mode real the same oracle runs beside the real value and every disagreement is
recorded in the row (`oracle_mismatches`, always empty in the fixture rows). transformers'
`is_tracing()` treats FakeTensors as graph tracing (and then, e.g., never skips the causal mask);
`import_utils.is_fake_tensor` is made to answer False so the eager code paths run, as with real
tensors.

CUDA behaviour where the CPU differs (--cuda-like 1, the default; both modes, so fake-vs-real
stays like for like)
------------------------------------------------------------------------------------------
  1. SDPA kernel choice (`F.scaled_dot_product_attention` replaced by `sdpa_cuda_like`): the
     backend CUDA's `select_sdp_backend` would take (flash -> memory-efficient -> math; cuDNN is
     not modelled) is chosen from the inputs, and that kernel's outputs are allocated: flash =
     output in (B, L, H, Dv) layout + fp32 logsumexp (B, H, L); memory-efficient (grouped-query
     heads natively, as torch 2.15 on NVIDIA GPUs) = bool mask converted to the query dtype
     (where(mask, 0, -inf), as torch 2.15's convert_boolean_attn_mask), padded to a multiple of 8
     along the key axis when needed (pad_bias<8>, then expanded to all heads as a view), output
     (B, L, H, Dv), no logsumexp under no_grad; math = the composite (same ops on both devices). The values are computed by
     the CPU kernel with the meter paused (not counted). On the CPU, flash takes masks and fp32
     and math takes DeepSeek's unequal q/v head dims, so the CPU allocations differ.
  2. MoE decode: GenerationMixin._optimize_model_for_decode switches `grouped_mm` experts to
     `batched_mm` for the decode loop when `model.device.type != "cpu"`; the replacement makes
     that switch as on a GPU (batched_mm gathers the selected experts' weights per token:
     (B*top_k, 2I, h) and (B*top_k, h, I) per MoE layer).
  3. bitsandbytes (--quant, real mode only: its kernels do not run under fake tensors): CUDA's
     kernels allocate their outputs only, so every bitsandbytes op counts its outputs (the CPU
     implementations' int32/fp32 intermediates are not counted), and gemm_4bit allocates what
     backends/cuda/ops.py does on an H100 (the custom kernel, output only, or
     _dequant_linear_fallback: the dequantized weight, and the absmax for double quantization),
     as _gemm_4bit_use_custom_cuda decides for (M, N, K) with 132 SMs, sm90. The CPU-only
     repacking of 4-bit weights for AVX512-BF16 (Linear4bit.forward) is switched off.
  4. Speed only (real mode): bf16/fp16 matmuls are computed in fp32 inside the dispatch handler and
     cast back (the op's output, the only thing counted, has the same shape/dtype).
Same on both devices, so not substituted: grouped_mm's histc input (float on CPU, int32 on CUDA:
both 4 bytes), DeferredStopCheck (mps only), tensor outputs of every other op.
Not seen by this meter (kernel-internal workspaces through the caching allocator): cuBLAS
workspace, grouped_mm / attention kernel workspaces, the caching allocator's fragmentation.

Byte formulas: predict(row) reproduces every measured phase value from the architecture numbers
(see NOTES.md next to this file for each mechanism and its transformers source); --check FILE
prints the % error of each row.

Usage
    PY=~/.gt-venv/bin/python
    $PY scripts/measure/infer/generate.py --config llama3.2-1b --dtype bf16 --batch 4 --prompt 1024 --new 16 --out rows.jsonl
    $PY scripts/measure/infer/generate.py --config llama3.2-1b --override '{"num_hidden_layers":2,"hidden_size":256,...}' --mode real ...
    $PY scripts/measure/infer/generate.py --config llama3.2-1b --override '{"num_hidden_layers":2}' --mode real --quant nf4 ...
    $PY scripts/measure/infer/generate.py --matrix matrix.json --out rows.jsonl      # JSON list of option dicts
    $PY scripts/measure/infer/generate.py --check crates/core/tests/fixtures/infer_transformers.jsonl
    $PY scripts/measure/infer/generate.py --compare crates/core/tests/fixtures/infer_transformers.jsonl  # fake vs real
Use OMP_NUM_THREADS=1 (and --threads 1, the default); fake runs cost about 0.3 s per forward of a
32-layer model.
Versions written for and measured with: torch 2.15.0, transformers 5.23.0, Python 3.11.
"""
import argparse
import contextlib
import gc
import json
import linecache
import math
import os
import sys
import time
import traceback
import warnings
import weakref

warnings.filterwarnings("ignore")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
HF_CONFIGS = os.path.join(REPO, "crates", "core", "tests", "fixtures", "hf_configs")

DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
DT_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}


def _lazy_torch():
    import torch  # noqa: F401
    return torch


# ======================================================================================
# Meter
# ======================================================================================
def make_tracker_class():
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten
    from torch.utils.weak import WeakIdKeyDictionary

    mm_ops = {torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default,
              torch.ops.aten.baddbmm.default}
    scalar_ops = {torch.ops.aten._local_scalar_dense.default}
    cpu_keyset = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)

    class StorageTracker(TorchDispatchMode):
        """Live storage bytes, op by op (the shared harness's tracker, with pause, a 512-byte
        rounded counter and the scalar-read oracle)."""

        def __init__(self, fake, oracle, logits_numel=None, fast_mm=False):
            super().__init__()
            self.fake = fake
            self.oracle = oracle
            self.winfo = WeakIdKeyDictionary()
            # sid -> [nbytes, alloc_seq, free_seq, phase, tag, label, func]
            self.recs = []
            self.seq = 0
            self.cur = 0
            self.cur_r = 0
            self.phase = "init"
            self.phase_peak = {}
            self.phase_peak_r = {}
            self.phase_start = {}
            self.marks = {}
            self.logits_numel = logits_numel
            self.n_ops = 0
            self.paused = 0
            self.fast_mm = fast_mm
            self.debug = bool(os.environ.get("GT_DEBUG"))
            self.cur_func = None
            self.oracle_log = []
            self.bnb_cuda_like = True
            self.bnb_calls = []

        @staticmethod
        def r512(nb):
            return 0 if nb == 0 else ((nb + 511) // 512) * 512

        def _free(self, sid, _ref=None):
            r = self.recs[sid]
            if r[2] is None:
                self.seq += 1
                r[2] = self.seq
                self.cur -= r[0]
                self.cur_r -= self.r512(r[0])

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
            self.recs.append([nb, self.seq, None, self.phase, tag, None, self.cur_func])
            ref = weakref.ref(st, lambda _r, sid=sid: self._free(sid))
            self.winfo[st] = (sid, ref)
            self.cur += nb
            self.cur_r += self.r512(nb)
            pk = self.phase_peak.get(self.phase)
            if pk is None or self.cur > pk[0]:
                self.phase_peak[self.phase] = [self.cur, self.seq]
            pkr = self.phase_peak_r.get(self.phase)
            if pkr is None or self.cur_r > pkr:
                self.phase_peak_r[self.phase] = self.cur_r
            return sid

        def sid_of(self, t):
            ent = self.winfo.get(t.untyped_storage())
            return None if ent is None else ent[0]

        def track_tensor(self, t, tag=None):
            if isinstance(t, torch.Tensor):
                return self._add_storage(t.untyped_storage(), tag)

        def label(self, t, label, only_if_unlabelled=False):
            sid = self.track_tensor(t)
            if sid is not None and (not only_if_unlabelled or self.recs[sid][5] is None):
                self.recs[sid][5] = label
            return sid

        def set_phase(self, ph):
            self.phase = ph
            self.seq += 1
            self.phase_start[ph] = (self.cur, self.seq)
            self.phase_peak[ph] = [self.cur, self.seq]
            self.phase_peak_r[ph] = self.cur_r

        def mark(self, name):
            self.seq += 1
            self.marks[name] = (self.cur, self.seq, self.cur_r)

        @contextlib.contextmanager
        def pause(self):
            self.paused += 1
            try:
                yield
            finally:
                self.paused -= 1

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func in scalar_ops:
                return self._scalar_read(func, args, kwargs)
            if func.namespace == "bitsandbytes":
                if self.bnb_cuda_like:
                    # CUDA's bitsandbytes kernels are C kernels that allocate their outputs only;
                    # the CPU implementations (backends/default/ops.py) build int32/fp32
                    # intermediates instead. Run the CPU kernel unseen, count its outputs, and for
                    # gemm_4bit allocate what backends/cuda/ops.py does (see bnb_gemm4bit_cuda).
                    out = func(*args, **kwargs)
                    if "gemm_4bit" in str(func):
                        self._bnb_gemm4bit_cuda(args, kwargs, out)
                else:
                    # the CPU kernel with the meter pushed again (its internals seen), as
                    # scripts/measure/quant.py does
                    with self:
                        out = func.redispatch(cpu_keyset, *args, **kwargs)
            elif self.fast_mm and func in mm_ops and any(
                    isinstance(a, torch.Tensor) and a.dtype in (torch.bfloat16, torch.float16) for a in args):
                dt = next(a.dtype for a in args if isinstance(a, torch.Tensor) and a.is_floating_point())
                up = [a.float() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
                out = func(*up, **kwargs).to(dt)
            else:
                out = func(*args, **kwargs)
            if self.paused:
                return out
            self.n_ops += 1
            tag = None
            if func is torch.ops.aten._to_copy.default and args and isinstance(args[0], torch.Tensor):
                ent = self.winfo.get(args[0].untyped_storage())
                if ent is not None and self.recs[ent[0]][5] == "logits":
                    tag = "logits_fp32"  # generate's next_token_logits copy
            flat, _ = tree_flatten(out)
            if self.debug:
                self.cur_func = str(func).replace("aten.", "") + ":" + ",".join(
                    str(tuple(t.shape)) + str(t.dtype)[6:] for t in flat if isinstance(t, torch.Tensor))
            for t in flat:
                if isinstance(t, torch.Tensor):
                    tg = tag
                    if (tg is None and self.logits_numel and t.numel() == self.logits_numel[0]
                            and t.dim() >= 2 and t.shape[-1] == self.logits_numel[1] and t.is_floating_point()):
                        tg = "logits"  # (B, 1, V) in the forward, (B, V) in the token step
                    self._add_storage(t.untyped_storage(), tg)
            return out

        def _bnb_gemm4bit_cuda(self, args, kwargs, out):
            """bitsandbytes 0.50 backends/cuda/ops.py gemm_4bit: the custom kernel (output only)
            when _gemm_4bit_use_custom_cuda says so for an H100 SXM (132 SMs, sm90), else
            _dequant_linear_fallback: [nested: absmax_dq (fp32) and absmax_dq + offset], the
            dequantized weight B_dq (N x K, A's dtype), F.linear's output (allocated by the caller
            of this hook as the op's output)."""
            import bitsandbytes.backends.cuda.ops as CO
            names = ["A", "B", "shapeB", "absmax", "blocksize", "quant_type", "bias", "absmax_8bit",
                     "absmax_code", "absmax_offset"]
            kw = dict(zip(names, args))
            kw.update(kwargs)
            A, shapeB = kw["A"], kw["shapeB"]
            K = A.shape[-1]
            M = A.numel() // K
            N = shapeB[0]
            orig = CO._gpu_dispatch_props
            CO._gpu_dispatch_props = lambda idx: (132, 9, 0)
            try:
                if M > CO._gemm_4bit_custom_max_m or K % kw["blocksize"] != 0:
                    custom = False
                else:
                    custom = CO._gemm_4bit_use_custom_cuda.__wrapped__(0, A.dtype, M, N, K) \
                        if hasattr(CO._gemm_4bit_use_custom_cuda, "__wrapped__") else \
                        CO._gemm_4bit_use_custom_cuda(0, A.dtype, M, N, K)
            finally:
                CO._gpu_dispatch_props = orig
            self.bnb_calls.append((M, N, K, bool(custom)))
            if custom:
                return
            tmp = []
            if kw.get("absmax_8bit") is not None:
                a1 = torch.empty(kw["absmax_8bit"].shape, dtype=torch.float32)
                self._add_storage(a1.untyped_storage())
                a2 = torch.empty(kw["absmax_8bit"].shape, dtype=torch.float32)
                self._add_storage(a2.untyped_storage())
                tmp += [a1, a2]
            bdq = torch.empty(tuple(shapeB), dtype=A.dtype)
            self._add_storage(bdq.untyped_storage())
            tmp.append(bdq)
            self._add_storage(out.untyped_storage())   # F.linear's output, while B_dq is alive
            del tmp

        # -- data-dependent scalar reads ------------------------------------------------
        def _scalar_read(self, func, args, kwargs):
            site = _call_site()
            if self.fake:
                val = self.oracle(site)
                if val is None:
                    raise RuntimeError(f"no oracle answer for the scalar read at {site}")
                self.oracle_log.append([site[0], site[1], site[3].strip()[:80], val])
                return val
            real = func(*args, **kwargs)
            pred = self.oracle(site)
            if pred is not None and bool(pred) != bool(real):
                self.oracle_log.append(["MISMATCH", site[0], site[1], site[3].strip()[:80], pred, real])
            elif pred is None:
                self.oracle_log.append(["UNANSWERED", site[0], site[1], site[3].strip()[:80], real])
            return real

        # -- analysis -------------------------------------------------------------------
        def category(self, r):
            if r[5] is not None:
                return r[5]
            ph = r[3]
            if r[4] is not None:
                if r[4] == "logits" and ph.startswith("post"):
                    return "logits_processed"  # processors' clone / where on (B, V) fp32
                return r[4]
            if ph.startswith("fwd"):
                return "activations"
            if ph.startswith("post") or ph == "prep":
                return "generate_other"
            return "other_" + ph

        def breakdown(self, seq):
            out = {}
            for r in self.recs:
                if r[1] <= seq and (r[2] is None or r[2] > seq):
                    c = self.category(r)
                    out[c] = out.get(c, 0) + r[0]
            return dict(sorted(out.items(), key=lambda kv: -kv[1]))

        def live_bytes_of(self, label, seq):
            return sum(r[0] for r in self.recs
                       if r[5] == label and r[1] <= seq and (r[2] is None or r[2] > seq))

    return StorageTracker


def _call_site():
    """(file basename, function, line number, source line) of the innermost frame outside torch
    and this script that caused a scalar read."""
    f = sys._getframe(2)
    here = os.path.abspath(__file__)
    while f is not None:
        fn = f.f_code.co_filename
        if ("/torch/" not in fn and os.path.abspath(fn) != here and "contextlib" not in fn):
            return (os.path.basename(fn), f.f_code.co_name, f.f_lineno, _instr_source(f), f)
        f = f.f_back
    return ("?", "?", 0, "", None)


def _instr_source(f):
    """The source lines of the instruction a frame is executing (a multi-line `if` included)."""
    fn = f.f_code.co_filename
    try:
        l0, l1, _c0, _c1 = list(f.f_code.co_positions())[f.f_lasti // 2]
    except Exception:
        l0 = l1 = None
    if not l0:
        l0 = l1 = f.f_lineno
    # the condition of a multi-line `if` is reported at its first line: read three more
    return " ".join(linecache.getline(fn, i).strip() for i in range(l0, max(l1 or l0, l0 + 3) + 1))


def make_oracle(run):
    """The value each data-dependent scalar read of generate has in the real run (see the module
    docstring). `run` holds B, P, N, the pad and eos ids."""

    def oracle(site):
        fname, func, _line, src, frame = site
        s = src.strip()
        if func == "__call__" and "unfinished_sequences.max() == 0" in s:
            # StopCheck: all sequences finish together when the length reaches P + N (EOS is masked
            # by MinNewTokensLengthLogitsProcessor until then)
            length = frame.f_locals.get("length")
            return bool(length >= run["P"] + run["N"])
        if "(model_kwargs[\"attention_mask\"] == 1).all()" in s:
            return True  # no padding: generate drops the mask
        if "torch.any(attention_mask[:, -1] == 0).item()" in s:
            return False  # no right padding
        if "torch.sum(inputs_tensor[:, -1] == generation_config._pad_token_tensor) > 0" in s:
            return False
        if "torch.isin(eos_token_tensor, pad_token_tensor).any()" in s:
            return run["pad"] in run["eos"]
        if "(eos_token_tensor < 0).any()" in s:
            return False
        if "not (encoder_input_ids < 0).any()" in s:
            return False  # _get_logits_processor: the prompt ids are non-negative
        if "torch.isin(inputs_tensor, pad_token_id).any()" in s:
            return False
        if "(packed_sequence_mask[:, -1] == 0).all()" in s:
            return True  # positions 0..P-1: not packed
        return None

    return oracle


# ======================================================================================
# CUDA-like substitutions
# ======================================================================================
_ACTIVE_TRACKER = [None]  # the meter of the run in progress (runs of a --matrix share the patches)


def remove_cuda_like():
    import torch.nn.functional as F
    if getattr(F, "_infer_cuda_like", False):
        from transformers.generation import utils as GU
        F.scaled_dot_product_attention = F._infer_orig_sdpa
        GU.GenerationMixin._optimize_model_for_decode = GU.GenerationMixin._infer_orig_optimize
        F._infer_cuda_like = False


def install_cuda_like(tracker_ref):
    """See the module docstring (1, 2). Idempotent; tracker_ref() returns the active meter."""
    import torch
    import torch.nn.functional as F
    if getattr(F, "_infer_cuda_like", False):
        return
    orig_sdpa = F.scaled_dot_product_attention
    F._infer_orig_sdpa = orig_sdpa

    def choose_backend(q, k, v, attn_mask, dropout_p, is_causal, enable_gqa):
        half = q.dtype in (torch.float16, torch.bfloat16)
        E, Ek, Ev = q.shape[-1], k.shape[-1], v.shape[-1]
        H, Hk = q.shape[-3], k.shape[-3]
        L, S = q.shape[-2], k.shape[-2]
        gqa = H != Hk
        # flash (sdp_utils.cpp can_use_flash_attention): no mask, fp16/bf16, equal head dims <= 256,
        # causal only for square shapes, GQA only with enable_gqa
        if (attn_mask is None and half and E == Ek == Ev and E <= 256
                and not (is_causal and L != S) and (not gqa or enable_gqa)):
            return "flash"
        # memory-efficient (can_use_mem_efficient_attention): q/k head dims equal, aligned to 8
        # (half) / 4 (fp32) on sm80+; grouped-query heads natively on NVIDIA CUDA since torch 2.15
        # (check_batch_size_and_num_heads_dense<supports_gqa=true, true, supports_mqa=true>:
        # Hk == Hv, Hq % Hk == 0, with enable_gqa or a single key/value head)
        align = 8 if half else 4
        Hv = v.shape[-3]
        heads_ok = not gqa or (Hk == Hv and H % Hk == 0 and (enable_gqa or Hk == 1))
        if E == Ek and E % align == 0 and Ev % align == 0 and heads_ok:
            return "efficient"
        return "math"

    def sdpa_cuda_like(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                       enable_gqa=False):
        tr = tracker_ref()
        backend = choose_backend(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa)
        if backend == "math" or tr is None:
            conv = attn_mask
            if attn_mask is not None and attn_mask.dtype == torch.bool:  # convert_boolean_attn_mask
                conv = torch.where(attn_mask, 0.0, torch.scalar_tensor(float("-inf"), dtype=query.dtype))
            return torch.ops.aten._scaled_dot_product_attention_math(
                query, key, value, conv, dropout_p, is_causal, None, scale=scale, enable_gqa=enable_gqa)[0]
        with tr.pause():  # the values, from the CPU kernel (not counted)
            ref = orig_sdpa(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                            is_causal=is_causal, scale=scale, enable_gqa=enable_gqa)
        B, H, L = query.shape[0], query.shape[-3], query.shape[-2]
        Ev = value.shape[-1]
        if backend == "flash":
            out = torch.empty((B, L, H, Ev), dtype=query.dtype, device=query.device).transpose(1, 2)
            lse = torch.empty((B, H, L), dtype=torch.float32, device=query.device)
            out.copy_(ref)
            del lse
            return out
        # memory-efficient
        S = key.shape[-2]
        m = None
        if attn_mask is not None:
            m = attn_mask
            if m.dtype == torch.bool:  # convert_boolean_attn_mask (torch 2.15): where(mask, 0, -inf)
                m = torch.where(attn_mask, 0.0, torch.scalar_tensor(float("-inf"), dtype=query.dtype))
            # preprocess_mask: padded to a multiple of 8 keys (pad_bias<8>) unless aligned, then
            # expanded (a view) to all heads
            if any(st % 8 for st in m.stride()[:-1]) or m.stride(-1) != 1:
                pc = 8 - S % 8
                m = F.pad(m, (0, pc))[..., :S]
            m = m.expand(B, H, L, S)
        out = torch.empty((B, L, H, Ev), dtype=query.dtype, device=query.device).transpose(1, 2)
        lse = torch.empty((B, H, 0), dtype=torch.float32, device=query.device)
        out.copy_(ref)
        del lse, m
        return out

    F.scaled_dot_product_attention = sdpa_cuda_like
    torch.nn.functional.scaled_dot_product_attention = sdpa_cuda_like

    # (2) the decode-time experts switch, as on a GPU
    from transformers.generation import utils as GU

    @contextlib.contextmanager
    def _optimize_model_for_decode(self):
        original = self.get_experts_implementation()
        switch = "grouped_mm" in original.values()  # device test dropped: as when model.device is cuda
        if switch:
            self.set_experts_implementation(
                {k: "batched_mm" if v == "grouped_mm" else v for k, v in original.items()})
        try:
            yield
        finally:
            if switch:
                self.set_experts_implementation(original)

    GU.GenerationMixin._infer_orig_optimize = GU.GenerationMixin._optimize_model_for_decode
    GU.GenerationMixin._optimize_model_for_decode = _optimize_model_for_decode
    F._infer_cuda_like = True


def patch_fake_tracing():
    """transformers' is_tracing() reports FakeTensors as tracing; make it answer as for real
    tensors (values are answered by the oracle instead)."""
    from transformers.utils import import_utils as IU
    IU.is_fake_tensor = lambda *a, **k: False


# ======================================================================================
# Config, model
# ======================================================================================
def resolve_config_path(name):
    if os.path.exists(name):
        return name
    p = os.path.join(HF_CONFIGS, name if name.endswith(".json") else name + ".json")
    if os.path.exists(p):
        return p
    raise FileNotFoundError(name)


def merge(base, over):
    """`over` applied onto `base`, nested dicts merged key by key (a shrunk `text_config` keeps
    the file's other text fields, so the row's `config` is the whole config that ran)."""
    out = dict(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_spec(path, override):
    with open(path) as f:
        spec = json.load(f)
    spec = merge(spec, override or {})
    n = spec.get("num_hidden_layers")
    lt = spec.get("layer_types")
    if override and "layer_types" not in override and isinstance(lt, list) and n is not None and len(lt) != n:
        spec["layer_types"] = lt[:n]  # a shrunk config keeps the first n layer kinds
    return spec


def build_config(spec):
    import transformers as T
    kw = dict(spec)
    fam = kw.pop("model_type")
    for k in ("architectures", "transformers_version", "torch_dtype", "dtype", "auto_map",
              "quantization_config"):
        kw.pop(k, None)
    cfg = T.AutoConfig.for_model(fam, **kw)
    return cfg


def default_attn(model_type):
    # transformers refuses SDPA for these (softcapping / attention sinks)
    return "eager" if model_type in ("gemma2", "gpt_oss") else "sdpa"


def arch_numbers(cfg, spec):
    """The architecture numbers predict() needs, as transformers resolved them."""
    tc = cfg.get_text_config(decoder=True)
    # A config whose layers differ (Gemma 4's per-layer head widths) refuses global reads unless
    # asked; predict() reads the global values only, and the flag is put back before the model
    # is built.
    flag = "allow_global_per_layer_attribute_access"
    had = tc.__dict__.get(flag)
    tc.__dict__[flag] = True
    try:
        return _arch_numbers(tc)
    finally:
        if had is None:
            tc.__dict__.pop(flag, None)
        else:
            tc.__dict__[flag] = had


def _arch_numbers(tc):
    g = lambda *names, d=None: next((getattr(tc, n) for n in names if getattr(tc, n, None) is not None), d)
    h = g("hidden_size", "n_embd")
    heads = g("num_attention_heads", "n_head")
    a = dict(
        layers=g("num_hidden_layers", "n_layer"), hidden=h, heads=heads,
        kv_heads=g("num_key_value_heads", d=heads), head_dim=g("head_dim", d=h // heads),
        vocab=tc.vocab_size, intermediate=g("intermediate_size", "n_inner", d=4 * h),
        sliding_window=g("sliding_window"), layer_types=getattr(tc, "layer_types", None),
        tie=bool(getattr(tc, "tie_word_embeddings", False)),
        experts=g("num_local_experts", "num_experts", "n_routed_experts"),
        top_k=g("num_experts_per_tok", "experts_per_token"),
        moe_intermediate=g("moe_intermediate_size"),
        first_k_dense=g("first_k_dense_replace"), shared_experts=g("n_shared_experts"),
        kv_lora_rank=g("kv_lora_rank"), q_lora_rank=g("q_lora_rank"),
        qk_nope_head_dim=g("qk_nope_head_dim"), qk_rope_head_dim=g("qk_rope_head_dim"),
        v_head_dim=g("v_head_dim"), multi_query=g("multi_query"),
        final_logit_softcapping=g("final_logit_softcapping"),
        attn_logit_softcapping=g("attn_logit_softcapping"),
    )
    return a


# ======================================================================================
# One run
# ======================================================================================
def run(args):
    import torch
    import transformers
    from torch._subclasses.fake_tensor import FakeTensorMode

    torch.manual_seed(0)
    if args.threads:
        torch.set_num_threads(args.threads)
    path = resolve_config_path(args.config)
    override = json.loads(args.override) if args.override else {}
    spec = load_spec(path, override)
    cfg = build_config(spec)
    model_type = spec["model_type"]
    attn = args.attn if args.attn != "auto" else default_attn(model_type)
    dtype = getattr(torch, DTYPES[args.dtype])
    B, P, N = args.batch, args.prompt, args.new
    fake = args.mode == "fake"
    V = cfg.get_text_config(decoder=True).vocab_size

    # A multimodal config keeps its special tokens in its text config, where generate finds them.
    text = spec.get("text_config") if isinstance(spec.get("text_config"), dict) else {}
    pad = spec.get("pad_token_id", text.get("pad_token_id"))
    eos = spec.get("eos_token_id", text.get("eos_token_id"))
    eos_list = [] if eos is None else (eos if isinstance(eos, list) else [eos])
    if pad is None:
        pad = eos_list[0] if eos_list else 0
    info = dict(B=B, P=P, N=N, pad=pad, eos=eos_list)

    if fake:
        patch_fake_tracing()
    tracker_box = _ACTIVE_TRACKER
    if args.cuda_like:
        install_cuda_like(lambda: _ACTIVE_TRACKER[0])
    else:
        remove_cuda_like()

    StorageTracker = make_tracker_class()
    tracker = StorageTracker(fake=fake, oracle=make_oracle(info), logits_numel=(B * V, V),
                             fast_mm=(not fake and args.fast_mm))
    tracker_box[0] = tracker
    fake_mode = FakeTensorMode(allow_non_fake_inputs=False) if fake else None

    quant_cfg = None
    if args.quant != "none":
        quant_cfg = make_bnb_config(args.quant, dtype)

    t0 = time.time()
    ctxs = []
    if fake:
        fake_mode.__enter__()
        ctxs.append(fake_mode)
    state = dict(i=0, cache=None, cache_bytes=[], fwd_seq=[])
    try:
        # ---------------- load ----------------
        if quant_cfg is None:
            tracker.__enter__()
            ctxs.append(tracker)
            tracker.set_phase("load")
            model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=dtype, attn_implementation=attn)
        else:
            # bitsandbytes quantizes on load: load a random bf16 checkpoint outside the meter, then
            # register every tensor of the loaded model
            model = load_quantized(spec, cfg, dtype, attn, quant_cfg, args)
            for mod in model.modules():
                # bitsandbytes repacks 4-bit weights for AVX512-BF16 CPUs at the first eval
                # forward (nn/modules.py Linear4bit.forward): a CPU-only layout change, off here
                if hasattr(mod, "support_avx512bf16_for_cpu"):
                    mod.support_avx512bf16_for_cpu = False
            tracker.bnb_cuda_like = bool(args.cuda_like)
            tracker.__enter__()
            ctxs.append(tracker)
            tracker.set_phase("load")
        model.eval()
        seen = set()
        n_params = 0
        for p in model.parameters():
            if id(p) in seen:
                continue
            seen.add(id(p))
            n_params += p.numel()
            tracker.label(p, "weights")
        for name, b in model.named_buffers():
            tracker.label(b, "buffers")
        if quant_cfg is not None:
            label_quant_state(model, tracker)
        weights_bytes = sum(r[0] for r in tracker.recs if r[5] == "weights" and r[2] is None)
        buffers_bytes = sum(r[0] for r in tracker.recs if r[5] in ("buffers", "quant_state") and r[2] is None)
        tracker.mark("after_load")
        gen_cfg_cache_impl = getattr(model.generation_config, "cache_implementation", None)

        # ---------------- inputs ----------------
        tracker.set_phase("inputs")
        if fake:
            ids = torch.randint(0, V, (B, P))
        else:
            ids = torch.randint(0, V, (B, P))
            specials = set(eos_list) | {pad}
            for s in specials:  # no special token in the prompt (keeps the oracle's premises)
                if s is not None and 0 <= s < V:
                    ids[ids == s] = (s + 1) % V
        am = torch.ones((B, P), dtype=torch.long)
        tracker.label(ids, "inputs")
        tracker.label(am, "inputs")
        tracker.mark("after_inputs")

        # ---------------- hooks ----------------
        def label_cache(cache):
            tot = 0
            seen_st = set()
            layers = getattr(cache, "layers", None) or []
            for lyr in layers:
                for nm, v in list(vars(lyr).items()):
                    if isinstance(v, torch.Tensor):
                        lab = "kv_cache" if nm in ("keys", "values", "indexer_keys") else "kv_cache_meta"
                        tracker.label(v, lab)
                        if lab == "kv_cache":
                            st = v.untyped_storage()
                            key = id(st) if fake else st.data_ptr()
                            sid = tracker.sid_of(v)
                            if sid not in seen_st:
                                seen_st.add(sid)
                                tot += tracker.recs[sid][0]
            return tot

        def pre_hook(mod, a, kw):
            i = state["i"]
            if i > 0:
                tracker.mark(f"post_end{i - 1}")
            tracker.set_phase(f"fwd{i}")
            tracker.mark(f"fwd_start{i}")
            pkv = kw.get("past_key_values")
            if pkv is not None:
                state["cache"] = weakref.ref(pkv)  # no strong reference: `end` must not keep it
                label_cache(pkv)

        def post_hook(mod, a, kw, out):
            i = state["i"]
            logits = getattr(out, "logits", None)
            if logits is not None:
                tracker.label(logits, "logits")
            pkv = getattr(out, "past_key_values", None) or (state["cache"]() if state["cache"] else None)
            cb = label_cache(pkv) if pkv is not None else 0
            if pkv is not None:
                state["cache_class"] = type(pkv).__name__
                state["layer_classes"] = sorted({type(l).__name__ for l in getattr(pkv, "layers", [])})
            state["cache_bytes"].append(cb)
            tracker.mark(f"fwd_end{i}")
            tracker.set_phase(f"post{i}")
            state["i"] = i + 1

        h1 = model.register_forward_pre_hook(pre_hook, with_kwargs=True)
        h2 = model.register_forward_hook(post_hook, with_kwargs=True)

        # ---------------- generate ----------------
        tracker.set_phase("prep")
        tracker.mark("gen_start")
        out = model.generate(input_ids=ids, attention_mask=am, max_new_tokens=N, min_new_tokens=N,
                             do_sample=False, use_cache=True, pad_token_id=pad)
        n_fwd = state["i"]
        tracker.mark(f"post_end{n_fwd - 1}")
        tracker.set_phase("end")
        tracker.label(out, "output_ids")
        tracker.mark("end")
        cache_class, layer_classes = state.get("cache_class"), state.get("layer_classes", [])
        out_shape = list(out.shape)
        del out
        state["cache"] = None
        gc.collect()
        tracker.mark("after_free")
        h1.remove()
        h2.remove()
    finally:
        for c in reversed(ctxs):
            c.__exit__(None, None, None)
        tracker_box[0] = None
    wall = time.time() - t0

    # ---------------- assemble ----------------
    M = tracker.marks
    PP = tracker.phase_peak
    PR = tracker.phase_peak_r

    def peak_of(phases):
        best = None
        for ph in phases:
            if ph in PP and (best is None or PP[ph][0] > best[0]):
                best = (PP[ph][0], PP[ph][1], ph)
        return best

    def peak_r_of(phases):
        return max(PR[ph] for ph in phases if ph in PR)

    pre = peak_of(["prep", "fwd0", "post0"])
    prefill = dict(
        peak=pre[0], peak_in=pre[2], peak_r512=peak_r_of(["prep", "fwd0", "post0"]),
        fwd_peak=PP["fwd0"][0], token_peak=PP["post0"][0], prep_peak=PP["prep"][0],
        end_fwd=M["fwd_end0"][0], end=M["post_end0"][0],
        breakdown_at_peak=tracker.breakdown(pre[1]),
        breakdown_end=tracker.breakdown(M["post_end0"][1]),
    )
    steps = []
    for k in range(1, n_fwd):
        pk = peak_of([f"fwd{k}", f"post{k}"])
        steps.append(pk)
    decode = None
    if steps:
        mx = max(range(len(steps)), key=lambda j: steps[j][0])
        decode = dict(
            steps=len(steps),
            peaks=[s[0] for s in steps],
            fwd_peaks=[PP[f"fwd{k}"][0] for k in range(1, n_fwd)],
            token_peaks=[PP[f"post{k}"][0] for k in range(1, n_fwd)],
            ends=[M[f"post_end{k}"][0] for k in range(1, n_fwd)],
            first=dict(step=1, peak=steps[0][0], peak_in=steps[0][2],
                       breakdown_at_peak=tracker.breakdown(steps[0][1])),
            last=dict(step=len(steps), peak=steps[-1][0], peak_in=steps[-1][2],
                      breakdown_at_peak=tracker.breakdown(steps[-1][1])),
            max=dict(step=mx + 1, peak=steps[mx][0], peak_in=steps[mx][2],
                     breakdown_at_peak=tracker.breakdown(steps[mx][1])),
            peak_r512=max(peak_r_of([f"fwd{k}", f"post{k}"]) for k in range(1, n_fwd)),
        )
    allph = ["prep"] + [f"{x}{k}" for k in range(n_fwd) for x in ("fwd", "post")]
    ov = peak_of(allph)
    measured = dict(
        after_load=M["after_load"][0], weights_bytes=weights_bytes, buffers_bytes=buffers_bytes,
        inputs_bytes=M["after_inputs"][0] - M["after_load"][0],
        load_peak=PP["load"][0],
        prefill=prefill, decode=decode,
        peak_overall=ov[0], peak_overall_phase=ov[2], peak_overall_r512=peak_r_of(allph),
        breakdown_at_overall_peak=tracker.breakdown(ov[1]),
        kv_cache_after_prefill=state["cache_bytes"][0],
        kv_cache_bytes=state["cache_bytes"][-1],
        kv_cache_per_forward=state["cache_bytes"],
        end=M["end"][0], after_free=M["after_free"][0],
    )
    row = dict(
        tag=args.tag, name=args.name or os.path.splitext(os.path.basename(path))[0],
        config_file=os.path.basename(path), override=override or None, model_type=model_type,
        mode=args.mode, dtype=args.dtype, attn=attn, batch=B, prompt=P, new=N,
        cuda_like=bool(args.cuda_like), quant=args.quant, n_params=n_params,
        n_forwards=n_fwd, output_shape=out_shape, cache_class=cache_class, cache_layer_classes=layer_classes,
        generation_cache_implementation=gen_cfg_cache_impl,
        experts_implementation=getattr(cfg, "_experts_implementation", None),
        pad_token_id=pad, eos_token_id=eos_list,
        arch=arch_numbers(cfg, spec),
        measured=measured,
        product=dict(weights_bytes=weights_bytes, kv_cache_bytes=state["cache_bytes"][-1],
                     peak_allocated_bytes=ov[0]),
        oracle_mismatches=[x for x in tracker.oracle_log if x and x[0] in ("MISMATCH", "UNANSWERED")],
        oracle_reads=len(tracker.oracle_log),
        n_ops=tracker.n_ops, n_storages=len(tracker.recs), wall_s=round(wall, 2),
        versions=dict(torch=torch.__version__, transformers=transformers.__version__,
                      python=sys.version.split()[0]),
        tracker="dispatch(storage weakref)" + ("+FakeTensorMode" if fake else "") + ("+cuda_like" if args.cuda_like else ""),
        config=spec,
    )
    if args.quant != "none":
        import bitsandbytes
        row["versions"]["bitsandbytes"] = bitsandbytes.__version__
        calls = {}
        for c in tracker.bnb_calls:
            key = f"M{c[0]} {'custom' if c[3] else 'dequant+linear'}"
            calls[key] = calls.get(key, 0) + 1
        row["bnb_gemm_4bit_calls"] = calls
    if tracker.debug:
        row["debug_allocs"] = [[r[0], r[1], r[2], r[3], r[4], r[5], r[6]] for r in tracker.recs]
    return row


# ======================================================================================
# bitsandbytes (real CPU tensors only)
# ======================================================================================
def make_bnb_config(quant, dtype):
    from transformers import BitsAndBytesConfig
    if quant in ("nf4", "fp4"):
        return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=quant,
                                  bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=dtype)
    if quant == "int8":
        return BitsAndBytesConfig(load_in_8bit=True)
    raise ValueError(quant)


def load_quantized(spec, cfg, dtype, attn, quant_cfg, args):
    import hashlib
    import torch
    import transformers
    key = hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
    ckpt = os.path.join(os.path.expanduser(args.ckpt_dir), key)
    if not os.path.exists(os.path.join(ckpt, "config.json")):
        torch.manual_seed(0)
        m = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
        m.save_pretrained(ckpt)
        del m
    return transformers.AutoModelForCausalLM.from_pretrained(
        ckpt, quantization_config=quant_cfg, dtype=dtype, device_map={"": "cpu"}, attn_implementation=attn)


def label_quant_state(model, tracker):
    import torch
    for mod in model.modules():
        w = getattr(mod, "weight", None)
        qs = getattr(w, "quant_state", None) if w is not None else None
        if qs is not None:
            for nm in ("absmax", "code", "offset"):
                t = getattr(qs, nm, None)
                if isinstance(t, torch.Tensor):
                    tracker.label(t, "quant_state", only_if_unlabelled=True)
            st2 = getattr(qs, "state2", None)
            if st2 is not None:
                for nm in ("absmax", "code"):
                    t = getattr(st2, nm, None)
                    if isinstance(t, torch.Tensor):
                        tracker.label(t, "quant_state", only_if_unlabelled=True)
        scb = getattr(w, "SCB", None) if w is not None else None
        if isinstance(scb, torch.Tensor):
            tracker.label(scb, "quant_state", only_if_unlabelled=True)


# ======================================================================================
# Byte formulas
# ======================================================================================
def _flatten(d, pre=""):
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(_flatten(v, f"{pre}.{k}" if pre else k))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            out.update(_flatten(v, f"{pre}[{i}]"))
    else:
        out[pre] = d
    return out


def compare_file(path):
    """Pair real and fake rows of the same configuration; print every measured value that differs."""
    rows = [json.loads(l) for l in open(path) if l.strip()]
    key = lambda r: json.dumps([r.get("name"), r.get("override"), r.get("dtype"), r.get("attn"), r.get("batch"),
                                r.get("prompt"), r.get("new"), r.get("quant"), r.get("cuda_like")])
    real = {key(r): r for r in rows if r.get("status") == "ok" and r["mode"] == "real"}
    fake = {key(r): r for r in rows if r.get("status") == "ok" and r["mode"] == "fake"}
    n_eq = n_diff = 0
    for k, r in real.items():
        f = fake.get(k)
        if f is None:
            continue
        a, b = _flatten(r["measured"]), _flatten(f["measured"])
        diffs = [(x, a.get(x), b.get(x)) for x in sorted(set(a) | set(b)) if a.get(x) != b.get(x)]
        same_other = (r["n_params"] == f["n_params"] and r["output_shape"] == f["output_shape"])
        tag = f"{r['name']} {r['dtype']} {r['attn']} B{r['batch']} P{r['prompt']} N{r['new']}"
        if diffs or not same_other:
            n_diff += 1
            print(f"DIFF {tag}: {len(diffs)} values", diffs[:8])
        else:
            n_eq += 1
            print(f"same {tag}: {len(a)} values equal (peak {r['measured']['peak_overall']})")
    print(f"{n_eq} pairs equal to the byte, {n_diff} differ")
    return 0 if n_diff == 0 else 1


# ======================================================================================
# Byte formulas: predict(row) replays every tensor generate() allocates (size formula and
# lifetime, in Python's freeing order) from the architecture numbers, B, P, N and the dtype.
# NOTES.md gives the closed forms of the moments that set each peak.
# ======================================================================================
class Sim:
    """Live bytes, fed with allocations and frees in program order; peak per phase."""

    def __init__(self):
        self.cur = 0
        self.live = {}
        self.n = 0
        self.ph = "load"
        self.peak = {}
        self.peak_at = {}
        self.marks = {}
        self.where = ""

    def phase(self, name):
        self.ph = name
        self.peak[name] = self.cur
        self.peak_at[name] = self.where

    def a(self, nbytes):
        k = self.n
        self.n += 1
        nb = int(nbytes)
        self.live[k] = nb
        self.cur += nb
        if self.cur > self.peak.get(self.ph, -1):
            self.peak[self.ph] = self.cur
            self.peak_at[self.ph] = self.where
        return k

    def f(self, *ks):
        for k in ks:
            if k is not None:
                self.cur -= self.live.pop(k)

    def mark(self, name):
        self.marks[name] = self.cur


class Arch:
    """The numbers the formulas use, from a row (its `arch`, `config` and knobs)."""

    def __init__(self, row):
        a, c = row["arch"], row["config"]
        self.row = row
        self.mt = row["model_type"]
        self.B, self.P, self.N = row["batch"], row["prompt"], row["new"]
        self.dt = DT_BYTES[row["dtype"]]
        self.attn = row["attn"]
        self.L, self.h, self.H = a["layers"], a["hidden"], a["heads"]
        self.Hkv, self.hd, self.V, self.I = a["kv_heads"], a["head_dim"], a["vocab"], a["intermediate"]
        if self.mt == "gpt_bigcode":
            self.Hkv = 1 if c.get("multi_query", True) else self.H
            self.I = c.get("n_inner") or 4 * self.h
        self.w = a.get("sliding_window")
        self.kinds = self.layer_kinds(a, c)
        self.E, self.k, self.Im = a.get("experts"), a.get("top_k"), a.get("moe_intermediate")
        self.c = c
        self.n_params = row["n_params"]
        eos = row.get("eos_token_id") or []
        self.nproc = 2 if eos else 0  # MinLength + MinNewTokens logits processors (need an EOS id)
        bos = c.get("bos_token_id")
        self.nscal = 1 + (1 if eos else 0) + (1 if bos is not None else 0)  # pad, eos, bos tensors

    def layer_kinds(self, a, c):
        lt = a.get("layer_types")
        if lt:
            return ["sliding" if t == "sliding_attention" else "full" for t in lt]
        if a.get("sliding_window") is not None and self.mt in ("mistral", "phi3", "qwen2", "mixtral",
                                                                 "qwen3", "qwen3_moe"):
            return ["sliding"] * self.L
        return ["full"] * self.L

    def rope_dim(self):
        if self.mt == "deepseek_v2":
            return self.c["qk_rope_head_dim"]
        return int(self.hd * (self.c.get("partial_rotary_factor") or 1.0))

    def buffer_bytes(self):
        """Registered buffers: RoPE inv_freq and original_inv_freq (fp32, rd/2 each); Gemma's
        embedding normalizer (a scalar in the model dtype); GPT-BigCode's causal-mask buffer
        (n_positions^2 bool)."""
        if self.mt == "gpt_bigcode":
            n = self.c.get("n_positions") or self.c.get("max_position_embeddings")
            return n * n
        b = 4 * self.rope_dim()
        if self.mt == "gemma3_text":
            b *= 2  # local and global rotary embeddings
        if self.mt in ("gemma2", "gemma3_text"):
            b += self.dt
        return b

    # ---------------- KV cache ----------------
    def kv_token_bytes(self):
        """Bytes per token per layer of the cache's stored tensors ("keys" + "values")."""
        if self.mt == "deepseek_v2":  # latent: keys = normed kv_nope (kv_lora_rank), values = k_pe (rope dim)
            return (self.c["kv_lora_rank"] + self.c["qk_rope_head_dim"]) * self.dt
        return 2 * self.Hkv * self.hd * self.dt

    def stored_tokens(self, kind, i):
        """Tokens in a layer's storage after forward i (0 = prefill): a sliding layer keeps the
        cat output (its last window-1 tokens are a view of it)."""
        if kind == "full" or i == 0:
            return self.P + i
        return min(self.P + i, self.w)

    def cache_bytes(self, i):
        return sum(self.B * self.kv_token_bytes() * self.stored_tokens(k, i) for k in self.kinds)


def predict(row):
    """Predicted values of row["measured"] (the same keys), from the architecture alone."""
    A = Arch(row)
    S = Sim()
    G = GenerateProgram(A, S)
    return G.run()


class GenerateProgram:
    """The allocations of one generate() call, in program order (transcribed from transformers
    5.23 and torch 2.15; every function names the code it follows)."""

    def __init__(self, A, S):
        self.A, self.S = A, S
        self.cache = {}

    # ------------------------------------------------------------------ norms
    def rms(self, T, n):
        """LlamaRMSNorm (llama, qwen2/3, mistral, phi3, mixtral, qwen3_moe, deepseek_v2):
        x.to(fp32); pow(2).mean; rsqrt; x * rsqrt; .to(dtype); weight * x."""
        S, dt = self.S, self.A.dt
        c32 = S.a(4 * n) if dt != 4 else None
        p = S.a(4 * n)
        m = S.a(4 * T)
        S.f(p)
        e = S.a(4 * T)
        r = S.a(4 * T)
        S.f(e)
        y = S.a(4 * n)
        S.f(r, c32)
        if dt != 4:
            c2 = S.a(dt * n)
            o = S.a(dt * n)
            S.f(c2)
        else:
            o = S.a(4 * n)
        S.f(y, m)
        return o

    def rms_wfirst(self, T, n):
        """Olmo2RMSNorm / GptOssRMSNorm: (weight * x_fp32).to(dtype) (the weight product in fp32)."""
        S, dt = self.S, self.A.dt
        c32 = S.a(4 * n) if dt != 4 else None
        p = S.a(4 * n)
        m = S.a(4 * T)
        S.f(p)
        e = S.a(4 * T)
        r = S.a(4 * T)
        S.f(e)
        y = S.a(4 * n)
        S.f(r, c32)
        w = S.a(4 * n)
        if dt != 4:
            o = S.a(dt * n)
            S.f(w)
        else:
            o = w
        S.f(y, m)
        return o

    def gnorm(self, T, n, width):
        """GemmaRMSNorm: _norm(x.float()) * (1 + weight.float()), type_as(x)."""
        S, dt = self.S, self.A.dt
        c32 = S.a(4 * n) if dt != 4 else None
        p = S.a(4 * n)
        m = S.a(4 * T)
        S.f(p)
        e = S.a(4 * T)
        S.f(m)
        r = S.a(4 * T)
        S.f(e)
        y = S.a(4 * n)
        S.f(r, c32)
        wf = S.a(4 * width) if dt != 4 else None
        wa = S.a(4 * width)
        S.f(wf)
        o32 = S.a(4 * n)
        S.f(wa, y)
        if dt != 4:
            o = S.a(dt * n)
            S.f(o32)
            return o
        return o32

    def layernorm(self, T, n):
        """nn.LayerNorm (native_layer_norm: output, mean and rstd; mean/rstd dropped at once)."""
        S, dt = self.S, self.A.dt
        o = S.a(dt * n)
        mu = S.a(dt * T)
        rs = S.a(dt * T)
        S.f(mu, rs)
        return o

    def norm(self, T, n):
        mt = self.A.mt
        if mt in ("gemma2", "gemma3_text"):
            return self.gnorm(T, n, self.A.h)
        if mt in ("olmo2", "gpt_oss"):
            return self.rms_wfirst(T, n)
        if mt == "gpt_bigcode":
            return self.layernorm(T, n)
        return self.rms(T, n)

    # ------------------------------------------------------------------ rotary
    def rotary(self, T, rd, keep_fp32=False):
        """Default/YaRN RoPE (LlamaRotaryEmbedding): (inv_freq @ pos) in fp32, cat, cos and sin
        times attention_scaling, cast to the model dtype (Olmo2 keeps fp32)."""
        S, dt = self.S, self.A.dt
        pf = S.a(4 * T)
        fr = S.a(4 * T * rd // 2)
        S.f(pf)
        em = S.a(4 * T * rd)
        c = S.a(4 * T * rd)
        cm = S.a(4 * T * rd)
        S.f(c)
        s = S.a(4 * T * rd)
        sm = S.a(4 * T * rd)
        S.f(s)
        if dt != 4 and not keep_fp32:
            cd = S.a(dt * T * rd)
            sd = S.a(dt * T * rd)
            S.f(fr, em, cm, sm)
            return [cd, sd]
        S.f(fr, em)
        return [cm, sm]

    def rotary_half(self, T, rd):
        """GptOssRotaryEmbedding: cos/sin over rd/2 frequencies (no cat)."""
        S, dt = self.S, self.A.dt
        pf = S.a(4 * T)
        fr = S.a(4 * T * rd // 2)
        S.f(pf)
        c = S.a(4 * T * rd // 2)
        cm = S.a(4 * T * rd // 2)
        S.f(c)
        s = S.a(4 * T * rd // 2)
        sm = S.a(4 * T * rd // 2)
        S.f(s)
        if dt != 4:
            cd = S.a(dt * T * rd // 2)
            sd = S.a(dt * T * rd // 2)
            S.f(fr, cm, sm)
            return [cd, sd]
        S.f(fr)
        return [cm, sm]

    def rotary_complex(self, T, r):
        """DeepseekV2RotaryEmbedding: freqs_cis = polar(1, freqs) * mscale, complex64 (T, r/2)."""
        S = self.S
        pf = S.a(4 * T)
        fr = S.a(4 * T * r // 2)
        S.f(pf)
        on = S.a(4 * T * r // 2)
        po = S.a(8 * T * r // 2)
        S.f(on)
        fc = S.a(8 * T * r // 2)
        S.f(po, fr)
        return [fc]

    def rope_apply(self, n):
        """apply_rotary_pos_emb: q * cos + rotate_half(q) * sin, n elements (model dtype)."""
        S, dt = self.S, self.A.dt
        qc = S.a(dt * n)
        ng = S.a(dt * n // 2)
        ct = S.a(dt * n)
        S.f(ng)
        qs = S.a(dt * n)
        S.f(ct)
        qe = S.a(dt * n)
        S.f(qc, qs)
        return qe

    def rope_apply_fp32cos(self, n):
        """Olmo2: q (model dtype) * cos (fp32) promotes to fp32; rotate_half in the model dtype."""
        S, dt = self.S, self.A.dt
        qc = S.a(4 * n)
        ng = S.a(dt * n // 2)
        ct = S.a(dt * n)
        S.f(ng)
        qs = S.a(4 * n)
        S.f(ct)
        qe = S.a(4 * n)
        S.f(qc, qs)
        return qe

    def rope_apply_half(self, n):
        """gpt_oss _apply_rotary_emb: halves; first*cos - second*sin; second*cos + first*sin; cat."""
        S, dt = self.S, self.A.dt
        m1, m2 = S.a(dt * n // 2), S.a(dt * n // 2)
        sb = S.a(dt * n // 2)
        S.f(m1, m2)
        m3, m4 = S.a(dt * n // 2), S.a(dt * n // 2)
        ad = S.a(dt * n // 2)
        S.f(m3, m4)
        qe = S.a(dt * n)
        S.f(sb, ad)
        return qe

    # ------------------------------------------------------------------ masks
    def sliding_mask(self, q, Skv):
        """masking_utils.sdpa_mask with the sliding-window overlay: bool (1, 1, q, Skv)."""
        S, B = self.S, self.A.B
        ab = S.a(8 * B)
        ah = S.a(8)
        t = S.a(8 * q)
        qa = S.a(8 * q)
        S.f(t)
        t = S.a(8 * Skv)
        ka = S.a(8 * Skv)
        S.f(t)
        one = S.a(1)
        sub = S.a(8 * q)
        gt = S.a(q * Skv)
        S.f(sub)
        an = S.a(q * Skv)
        S.f(gt, one)
        le = S.a(q * Skv)
        m = S.a(q * Skv)
        S.f(le, an, ab, ah, qa, ka)
        return m

    def eager_mask(self, q, Skv, sliding):
        """eager_mask: the bool mask, then torch.where(mask, 0, min) broadcast to (B, 1, q, Skv)."""
        S, A = self.S, self.A
        B, dt = A.B, A.dt
        if sliding:
            m = self.sliding_mask(q, Skv)
        else:
            ab = S.a(8 * B)
            ah = S.a(8)
            t = S.a(8 * q)
            qa = S.a(8 * q)
            S.f(t)
            t = S.a(8 * Skv)
            ka = S.a(8 * Skv)
            S.f(t)
            m = S.a(q * Skv)
            S.f(ab, ah, qa, ka)
        z = S.a(dt)
        sc = S.a(dt)
        w = S.a(dt * B * q * Skv)
        S.f(sc, z, m)
        return w

    def masks_for(self, q, i):
        """create_causal_mask / create_sliding_window_causal_mask. SDPA, no padding: a full layer's
        mask is skipped (is_causal); a sliding layer's is built once its key length reaches the
        window. Eager: always built, as float (B, 1, q, kv)."""
        A = self.A
        masks = {}
        for kind in [k for k in ("full", "sliding") if k in A.kinds]:
            Skv = self.kv_len(kind, i)
            if A.attn == "sdpa":
                if kind == "sliding" and Skv >= A.w:
                    masks[kind] = self.sliding_mask(q, Skv)
            else:
                masks[kind] = self.eager_mask(q, Skv, sliding=(kind == "sliding"))
        return masks

    # ------------------------------------------------------------------ cache
    def kv_len(self, kind, i):
        A = self.A
        if i == 0:
            return A.P
        if kind == "sliding":
            return min(A.P + i, A.w)  # the last window-1 cached tokens + the new one
        return A.P + i

    def cache_update(self, l, i, kbytes_per_tok=None, vbytes_per_tok=None):
        """DynamicLayer.update: keys = cat([keys, k]); values = cat([values, v]);
        DynamicSlidingWindowLayer.update: both cats first, then both reassigned (as views)."""
        S, A = self.S, self.A
        kind = A.kinds[l]
        tok = A.stored_tokens(kind, i)
        kb = kbytes_per_tok if kbytes_per_tok is not None else A.kv_token_bytes() // 2
        vb = vbytes_per_tok if vbytes_per_tok is not None else A.kv_token_bytes() // 2
        kn = S.a(A.B * kb * tok)
        if kind == "sliding":
            vn = S.a(A.B * vb * tok)
            S.f(self.cache.get((l, "k")), self.cache.get((l, "v")))
        else:
            S.f(self.cache.get((l, "k")))
            vn = S.a(A.B * vb * tok)
            S.f(self.cache.get((l, "v")))
        self.cache[(l, "k")] = kn
        self.cache[(l, "v")] = vn

    # ------------------------------------------------------------------ attention kernels
    def attention(self, q, Skv, mask, hdq, hdv, H=None, Hkv=None):
        """The attention interface on query (B, H, q, hdq) and the cache's keys/values
        (B, Hkv, Skv, .); returns the output (as (B, q, H, hdv)) and what the layer keeps."""
        S, A = self.S, self.A
        dt, B = A.dt, A.B
        H = H or A.H
        Hkv = Hkv or A.Hkv
        if A.attn == "eager":
            return self.attn_eager(q, Skv, mask, hdq, hdv, H, Hkv)
        rep = []
        Hq, Hk, qq = H, Hkv, q
        if H != Hkv:
            if mask is None and hdq == hdv <= 256:
                pass                              # use_gqa_in_sdpa -> enable_gqa=True
            elif q == 1:
                Hq, qq = Hkv, H // Hkv            # pack_gqa: (B, Hkv, n_rep, d) queries, views
            else:                                 # repeat_kv(k), repeat_kv(v): a copy unless Hkv == 1
                if Hkv > 1:                       # (expand + reshape of a size-1 head dim is a view)
                    rep = [S.a(dt * B * H * Skv * hdq), S.a(dt * B * H * Skv * hdv)]
                Hk = H
        out = self.attn_kernel(qq, Hq, Hk, Skv, hdq, hdv, mask, q_is_causal=(q > 1 and mask is None), qm=q)
        S.f(*rep)
        return out, []

    def attn_kernel(self, q, Hq, Hk, Skv, hdq, hdv, mask, q_is_causal=False, qm=None):
        """CUDA SDPA backend choice (sdp_utils.cpp: flash, then memory-efficient, then math) and
        the allocations of that kernel (see sdpa_cuda_like)."""
        S, A = self.S, self.A
        B, dt = A.B, A.dt
        half = dt == 2
        if mask is None and half and hdq == hdv <= 256:
            out = S.a(dt * B * q * Hq * hdv)      # (B, q, H, d) output
            lse = S.a(4 * B * Hq * q)             # fp32 logsumexp
            S.f(lse)
            return out
        align = 8 if half else 4
        # grouped-query heads: native in the memory-efficient kernel since torch 2.15 (gqa here
        # means enable_gqa=True: repeat_kv and pack_gqa leave equal head counts)
        if not (hdq % align == 0 and hdv % align == 0):
            return self.attn_math(q, Hq, Hk, Skv, hdq, hdv, mask, q_is_causal)
        m = None
        if mask is not None:
            qm = qm or q                          # the mask's query length (pack_gqa leaves it at 1)
            s0, s1 = S.a(dt), S.a(dt)             # convert_boolean_attn_mask (torch 2.15):
            m = S.a(dt * B * qm * Skv)            # where(mask, 0, -inf), batch-expanded
            S.f(s1, s0)
            if Skv % 8:                           # preprocess_mask: pad_bias<8>, then expand (a view)
                pd = S.a(dt * B * qm * (Skv + 8 - Skv % 8))
                S.f(m)
                m = pd
        out = S.a(dt * B * q * Hq * hdv)          # no logsumexp under no_grad
        S.f(m)
        return out

    def attn_math(self, q, Hq, Hk, Skv, hdq, hdv, mask, is_causal):
        """aten::_scaled_dot_product_attention_math (composite: same ops on CPU and CUDA)."""
        S, A = self.S, self.A
        dt, B = A.dt, A.B
        if dt != 4:
            raise NotImplementedError("math SDPA in 16-bit (fp32 upcast) not modelled")
        qs = S.a(4 * B * Hq * q * hdq)              # q * sqrt(scale)
        wm = None
        if is_causal:
            o1 = S.a(q * Skv)
            tr = S.a(q * Skv)
            S.f(o1)
            s1, s2 = S.a(4), S.a(4)
            wm = S.a(4 * q * Skv)                   # bool -> float mask
            S.f(s2, s1, tr)
        elif mask is not None:
            raise NotImplementedError("math SDPA with a mask")
        rep = []
        if Hq != Hk:
            rep = [S.a(4 * B * Hq * Skv * hdq), S.a(4 * B * Hq * Skv * hdv)]
        kt = S.a(4 * B * Hq * hdq * Skv)            # k^T * sqrt(scale)
        qc = S.a(4 * B * Hq * q * hdq) if q > 1 else None
        sc = S.a(4 * B * Hq * q * Skv)
        S.f(qc, kt)
        if wm is not None:
            ad = S.a(4 * B * Hq * q * Skv)
            S.f(sc)
            sc = ad
        sm = S.a(4 * B * Hq * q * Skv)
        S.f(sc)
        o = S.a(4 * B * Hq * q * hdv)
        S.f(*rep)
        S.f(qs, wm, sm)
        if q > 1:                                   # transformers: transpose(1, 2).contiguous()
            oc = S.a(4 * B * Hq * q * hdv)
            S.f(o)
            o = oc
        return o

    def attn_eager(self, q, Skv, mask, hdq, hdv, H, Hkv):
        """eager_attention_forward: repeat_kv, q @ k^T * scaling [softcap] (+ mask), softmax in fp32
        (gpt_oss: sinks, softmax in the model dtype), cast back (kept as attn_weights to the end of
        the decoder layer), @ v, transpose(1, 2).contiguous()."""
        S, A = self.S, self.A
        dt, B = A.dt, A.B
        rep = []
        if H != Hkv and Hkv > 1:                     # repeat_kv (a view when Hkv == 1)
            rep = [S.a(dt * B * H * Skv * hdq), S.a(dt * B * H * Skv * hdv)]
        # the rotated query is a permuted view for llama-style rope: bmm copies it (q > 1)
        qc = S.a(dt * B * H * q * hdq) if (q > 1 and A.mt != "gpt_oss") else None
        n = B * H * q * Skv
        sc = S.a(dt * n)
        S.f(qc)
        x = S.a(dt * n)                              # * scaling
        S.f(sc)
        if A.mt == "gemma2" and A.c.get("attn_logit_softcapping"):
            d = S.a(dt * n)
            S.f(x)
            t = S.a(dt * n)
            S.f(d)
            x = S.a(dt * n)
            S.f(t)
        if mask is not None:
            y = S.a(dt * n)
            S.f(x)
            x = y
        if A.mt == "gpt_oss":                       # sinks: cat, max, subtract, softmax (model dtype)
            n1 = B * H * q * (Skv + 1)
            cb = S.a(dt * n1)
            mv = S.a(dt * B * H * q)
            mi = S.a(8 * B * H * q)
            S.f(mi)
            sb = S.a(dt * n1)
            S.f(mv, cb)
            w = S.a(dt * n1)
            S.f(x)
            keep_sub = sb
        else:
            if dt != 4:
                c = S.a(4 * n)
                smx = S.a(4 * n)
                S.f(c)
                w = S.a(dt * n)
                S.f(smx, x)
            else:
                w = S.a(4 * n)
                S.f(x)
            keep_sub = None
        o = S.a(dt * B * H * q * hdv)
        if q > 1:
            oc = S.a(dt * B * H * q * hdv)
            S.f(o)
            o = oc
        S.f(*rep)
        S.f(keep_sub)
        return o, [w]

    # ------------------------------------------------------------------ decoder layers
    def attn_block(self, l, x, T, q, i, masks, rot):
        """Self-attention of one decoder layer; returns (o_proj output, handles to free after it)."""
        S, A = self.S, self.A
        dt, h, H, Hkv, hd, B, mt = A.dt, A.h, A.H, A.Hkv, A.hd, A.B, A.mt
        kind = A.kinds[l]
        Skv = self.kv_len(kind, i)
        mask = masks.get(kind)
        if mt == "deepseek_v2":
            return self.attn_mla(l, T, q, i, mask)
        n1 = None if mt == "olmo2" else self.norm(T, T * h)   # Olmo2 normalizes after attention
        if mt == "phi3":
            qkv = S.a(dt * T * (H + 2 * Hkv) * hd)      # fused qkv_proj; q/k/v are views
            qr = self.rope_apply(T * H * hd)
            qe = S.a(dt * T * H * hd)                   # cat([q_rot, q_pass])
            S.f(qr)
            kr = self.rope_apply(T * Hkv * hd)
            ke = S.a(dt * T * Hkv * hd)
            S.f(kr)
            self.cache_update(l, i)
            S.f(ke)
            out, keep = self.attention(q, Skv, mask, hd, hd)
            o = S.a(dt * T * h)
            S.f(out, qkv, qe, n1)
            return o, keep
        if mt == "gpt_bigcode":
            qkv = S.a(dt * T * (h + 2 * Hkv * hd))      # c_attn; views
            self.cache_update(l, i)
            out, keep = self.attention(q, Skv, mask, hd, hd)
            o = S.a(dt * T * h)                         # c_proj (kept by the block until it returns)
            S.f(out, qkv)
            return o, keep + [n1]
        qp = S.a(dt * T * H * hd)
        if mt == "gemma3_text":                       # q, k, v projections, then q_norm / k_norm
            kp = S.a(dt * T * Hkv * hd)
            vp = S.a(dt * T * Hkv * hd)
            qn = self.gnorm(T * H, T * H * hd, hd)
            S.f(qp)
            kn = self.gnorm(T * Hkv, T * Hkv * hd, hd)
            S.f(kp)
            qe = self.rope_apply(T * H * hd)
            ke = self.rope_apply(T * Hkv * hd)
            S.f(qn, kn)
        elif mt in ("qwen3", "qwen3_moe"):            # q_proj -> q_norm, k_proj -> k_norm, v_proj
            qn = self.rms(T * H, T * H * hd)
            S.f(qp)
            kp = S.a(dt * T * Hkv * hd)
            kn = self.rms(T * Hkv, T * Hkv * hd)
            S.f(kp)
            vp = S.a(dt * T * Hkv * hd)
            qe = self.rope_apply(T * H * hd)
            ke = self.rope_apply(T * Hkv * hd)
            S.f(qn, kn)
        elif mt == "olmo2":                           # q_norm / k_norm over the whole projection
            qn = self.rms_wfirst(T, T * H * hd)
            S.f(qp)
            kp = S.a(dt * T * Hkv * hd)
            kn = self.rms_wfirst(T, T * Hkv * hd)
            S.f(kp)
            vp = S.a(dt * T * Hkv * hd)
            q32 = self.rope_apply_fp32cos(T * H * hd)
            k32 = self.rope_apply_fp32cos(T * Hkv * hd)
            if dt != 4:
                qe = S.a(dt * T * H * hd)
                ke = S.a(dt * T * Hkv * hd)
                S.f(q32, k32)
            else:
                qe, ke = q32, k32
            S.f(qn, kn)
        else:
            kp = S.a(dt * T * Hkv * hd)
            vp = S.a(dt * T * Hkv * hd)
            if mt == "gpt_oss":
                qe = self.rope_apply_half(T * H * hd)
                ke = self.rope_apply_half(T * Hkv * hd)
            else:
                qe = self.rope_apply(T * H * hd)
                ke = self.rope_apply(T * Hkv * hd)
            S.f(qp, kp)
        self.cache_update(l, i)
        S.f(ke, vp)
        out, keep = self.attention(q, Skv, mask, hd, hd)
        o = S.a(dt * T * h)
        S.f(out, qe, n1)
        return o, keep

    def attn_mla(self, l, T, q, i, mask):
        """DeepseekV2Attention (q_lora_rank None): q_proj; kv_a_proj_with_mqa -> (kv_nope, k_pe);
        kv_a_layernorm; complex RoPE on q_pe / k_pe; the cache stores the latent (kv_nope, k_pe);
        expand_kv runs kv_b_proj over every cached token; SDPA with q/k dim 192, v dim 128."""
        S, A = self.S, self.A
        dt, h, H, B = A.dt, A.h, A.H, A.B
        c = A.c
        R, r, nope, vd = c["kv_lora_rank"], c["qk_rope_head_dim"], c["qk_nope_head_dim"], c["v_head_dim"]
        qk = nope + r
        Skv = self.kv_len(A.kinds[l], i)
        n1 = self.rms(T, T * h)
        qp = S.a(dt * T * H * qk)
        ckv = S.a(dt * T * (R + r))
        kn = self.rms(T, T * R)
        xq = S.a(4 * T * H * r)
        xk = S.a(4 * T * r)
        cq = S.a(4 * T * H * r)
        qpe = S.a(dt * T * H * r)
        S.f(cq)
        ck = S.a(4 * T * r)
        kpe = S.a(dt * T * r)
        S.f(ck, xq, xk)
        self.cache_update(l, i, kbytes_per_tok=R * dt, vbytes_per_tok=r * dt)
        S.f(kn, kpe)
        qs = S.a(dt * T * H * qk)                    # cat((q_nope, q_pe))
        kvb = S.a(dt * B * Skv * H * (nope + vd))    # kv_b_proj over the cached latents
        ks = S.a(dt * B * H * Skv * qk)              # key_states new_empty, filled
        out, keep = self.attention(q, Skv, mask, qk, vd)
        o = S.a(dt * T * h)
        S.f(out, qp, qpe, ckv, qs, ks, kvb, n1)
        return o, keep

    def mlp_dense(self, T, x_in, I=None, act_first=True):
        """gate/up/down MLP: act(gate(x)) * up(x) -> down (llama, gemma: gelu)."""
        S, A = self.S, self.A
        dt, h = A.dt, A.h
        I = I or A.I
        if A.mt == "phi3":                        # fused gate_up_proj, chunk views
            gu = S.a(dt * T * 2 * I)
            sg = S.a(dt * T * I)
            m = S.a(dt * T * I)
            S.f(sg)
            d = S.a(dt * T * h)
            S.f(m, gu)
            return d
        if A.mt == "gpt_bigcode":                 # c_fc -> gelu -> c_proj
            fc = S.a(dt * T * I)
            g = S.a(dt * T * I)
            S.f(fc)
            d = S.a(dt * T * h)
            S.f(g)
            return d
        g = S.a(dt * T * I)
        sg = S.a(dt * T * I)
        S.f(g)
        u = S.a(dt * T * I)
        m = S.a(dt * T * I)
        S.f(sg, u)
        d = S.a(dt * T * h)
        S.f(m)
        return d

    def moe(self, l, T, q, i, x_in):
        """Sparse MoE block: router, then the experts: grouped_mm in prefill (and on the CPU),
        batched_mm in decode on a GPU (GenerationMixin._optimize_model_for_decode)."""
        S, A = self.S, self.A
        dt, h, E, k, mt = A.dt, A.h, A.E, A.k, A.mt
        Im = A.Im if A.Im else A.I
        # ---- router
        if mt == "deepseek_v2":                   # F.linear(hidden.float(), weight.float()), softmax, topk, * scaling
            hf = S.a(4 * T * h)
            wf = S.a(4 * E * h)
            rl = S.a(4 * T * E)
            S.f(hf, wf)
            sm = S.a(4 * T * E)
            tv = S.a(4 * T * k)
            ti = S.a(8 * T * k)
            tw = S.a(4 * T * k)
            S.f(tv, sm)
            router_keep, wbytes = [rl, tw, ti], 4
        elif mt == "gpt_oss":                     # linear+bias, topk on logits, softmax over the k (model dtype)
            rl = S.a(dt * T * E)
            tv = S.a(dt * T * k)
            ti = S.a(8 * T * k)
            tw = S.a(dt * T * k)
            S.f(tv)
            router_keep, wbytes = [rl, ti, tw], dt
        else:                                     # mixtral / qwen3_moe: softmax(fp32), topk, renormalize
            rl = S.a(dt * T * E)
            rf = S.a(4 * T * E)
            sm = S.a(4 * T * E)
            S.f(rf)
            tv = S.a(4 * T * k)
            ti = S.a(8 * T * k)
            su = S.a(4 * T)
            S.f(su)
            if mt == "qwen3_moe":                 # routing_weights.to(router_logits.dtype)
                tw = S.a(dt * T * k)
                S.f(tv, sm)
                router_keep, wbytes = [rl, ti, tw], dt
            else:
                S.f(sm)
                router_keep, wbytes = [rl, tv, ti], 4
        Sx = T * k
        bias = mt == "gpt_oss"
        if i > 0 and self.decode_batched:
            out = self.experts_batched(T, Sx, Im, wbytes, bias)
        else:
            out = self.experts_grouped(T, Sx, Im, wbytes, bias)
        if mt == "deepseek_v2":                   # + shared experts on the block input
            I_s = Im * (A.c.get("n_shared_experts") or 1)
            d = self.mlp_dense(T, x_in, I=I_s)
            y = S.a(dt * T * h)
            S.f(d, out)
            out = y
        S.f(*router_keep)
        return out

    def gate_glu(self, Sx, Im):
        """_apply_gate: default act(gate) * up; gpt_oss: clamp, sigmoid GLU, (up + 1) * glu."""
        S, A = self.S, self.A
        dt = A.dt
        if A.mt == "gpt_oss":
            g = S.a(dt * Sx * Im)
            u = S.a(dt * Sx * Im)
            m = S.a(dt * Sx * Im)
            sg = S.a(dt * Sx * Im)
            S.f(m)
            gl = S.a(dt * Sx * Im)
            S.f(sg)
            ad = S.a(dt * Sx * Im)
            o = S.a(dt * Sx * Im)
            S.f(ad, g, u, gl)
            return o
        sg = S.a(dt * Sx * Im)
        m = S.a(dt * Sx * Im)
        S.f(sg)
        return m

    def experts_grouped(self, T, Sx, Im, wbytes, bias):
        """grouped_mm_experts_forward: sort by expert, gather tokens (S = T * top_k rows), histc/cumsum
        offsets, grouped_mm up (S, 2I), gate, grouped_mm down (S, h), * routing weights, un-permute,
        sum over top_k."""
        S, A = self.S, self.A
        dt, h, E = A.dt, A.h, A.E
        sv, pm = S.a(8 * Sx), S.a(8 * Sx)
        fd = S.a(8 * Sx)
        hs = S.a(dt * Sx * h)
        S.f(fd)
        sw = S.a(wbytes * Sx)
        hi = S.a(4 * Sx)
        hc = S.a(4 * E)
        of = S.a(4 * E)
        gb = S.a(dt * Sx * 2 * Im) if bias else None
        gu = S.a(dt * Sx * 2 * Im)
        if A.mt == "gpt_oss":
            act = self.gate_glu(Sx, Im)
            S.f(gu)
            db = S.a(dt * Sx * h)
            S.f(gb)
        else:
            act = self.gate_glu(Sx, Im)
            S.f(gu)
            db = None
        dn = S.a(dt * Sx * h)
        S.f(act)
        wo = S.a(wbytes * Sx * h)                 # proj_out * routing weights (promotes to fp32 for fp32 weights)
        ip = S.a(8 * Sx)
        ar = S.a(8 * Sx)
        S.f(ar)
        ro = S.a(wbytes * Sx * h)                 # weighted_out[inv_perm]
        S.f(wo)
        sm = S.a(wbytes * T * h)                  # .view(T, k, h).sum(1)
        S.f(sv, pm, hs, sw, hi, hc, of, db, dn, ro, ip)
        if wbytes != dt:
            out = S.a(dt * T * h)                 # .to(hidden dtype)
            S.f(sm)
            return out
        return sm

    def experts_batched(self, T, Sx, Im, wbytes, bias):
        """batched_mm_experts_forward (the decode path on a GPU): gathers every selected expert's
        weights per token: gate_up_proj[expert_ids] (S, 2I, h) and down_proj[expert_ids] (S, h, I)
        are alive together (the second gather happens before the first is released)."""
        S, A = self.S, self.A
        dt, h = A.dt, A.h
        hs = S.a(dt * Sx * h)                     # repeat_interleave
        gw = S.a(dt * Sx * 2 * Im * h)
        gb = S.a(dt * Sx * 2 * Im) if bias else None
        bm = S.a(dt * Sx * 2 * Im)
        act = self.gate_glu(Sx, Im)
        S.f(bm)
        dw = S.a(dt * Sx * h * Im)
        S.f(gw)
        db = S.a(dt * Sx * h) if bias else None
        S.f(gb)
        dn = S.a(dt * Sx * h)
        S.f(act)
        wo = S.a(wbytes * Sx * h)
        sm = S.a(wbytes * T * h)
        S.f(hs, dw, db, dn, wo)
        if wbytes != dt:
            out = S.a(dt * T * h)
            S.f(sm)
            return out
        return sm

    def is_moe_layer(self, l):
        A = self.A
        if A.mt in ("mixtral", "qwen3_moe", "gpt_oss"):
            return True
        if A.mt == "deepseek_v2":
            return l >= (A.c.get("first_k_dense_replace") or 0)
        return False

    def layer(self, l, x, T, q, i, masks, rot):
        """One decoder layer, its residual structure by family."""
        S, A = self.S, self.A
        dt, h, mt = A.dt, A.h, A.mt
        S.where = "attention"
        o, keep = self.attn_block(l, x, T, q, i, masks, rot)
        S.where = "mlp"
        if mt in ("gemma2", "gemma3_text"):       # post_attention_layernorm, residual,
            on = self.gnorm(T, T * h, h)          # pre/post_feedforward_layernorm
            S.f(o)
            r1 = S.a(dt * T * h)
            S.f(on)
            n2 = self.gnorm(T, T * h, h)
            d = self.mlp_dense(T, n2)
            S.f(n2)
            dn = self.gnorm(T, T * h, h)
            S.f(d)
            r2 = S.a(dt * T * h)
            S.f(dn, r1, *keep)
            return r2
        if mt == "olmo2":                         # post-norm: norm(attn) + x; norm(mlp(h)) + h
            on = self.rms_wfirst(T, T * h)
            S.f(o)
            r1 = S.a(dt * T * h)
            S.f(on)
            d = self.mlp_dense(T, r1)
            dn = self.rms_wfirst(T, T * h)
            S.f(d)
            r2 = S.a(dt * T * h)
            S.f(dn, r1, *keep)
            return r2
        r1 = S.a(dt * T * h)                      # residual + attn output
        if mt == "gpt_bigcode":
            n1 = keep.pop()                       # ln_1 output, released after the residual add
            S.f(n1)
            n2 = self.layernorm(T, T * h)
            d = self.mlp_dense(T, n2)
            r2 = S.a(dt * T * h)
            S.f(n2, r1, o, d, *keep)
            return r2
        S.f(o)
        n2 = self.norm(T, T * h)
        if self.is_moe_layer(l):
            S.where = "experts"
            d = self.moe(l, T, q, i, n2)
        elif mt == "deepseek_v2":
            d = self.mlp_dense(T, n2)
        else:
            d = self.mlp_dense(T, n2)
        S.f(n2)
        r2 = S.a(dt * T * h)
        S.f(d, r1, *keep)
        return r2

    def forward(self, i):
        S, A = self.S, self.A
        B, dt, h, mt = A.B, A.dt, A.h, A.mt
        q = A.P if i == 0 else 1
        T = B * q
        carried = []
        if mt in ("gemma2", "gemma3_text"):       # embed_tokens * normalizer
            e = S.a(dt * T * h)
            emb = S.a(dt * T * h)
            S.f(e)
        elif mt == "gpt_bigcode":                 # wte + wpe (both kept), their sum is layer 0's input
            te = S.a(dt * T * h)
            pe = S.a(dt * T * h)
            carried = [te, pe]
            emb = S.a(dt * T * h)
        else:
            emb = S.a(dt * T * h)
        masks = self.masks_for(q, i)
        if mt == "gpt_bigcode":
            rot = []
        elif mt == "deepseek_v2":
            rot = self.rotary_complex(T, A.c["qk_rope_head_dim"])
        elif mt == "gpt_oss":
            rot = self.rotary_half(T, A.rope_dim())
        elif mt == "olmo2":
            rot = self.rotary(T, A.rope_dim(), keep_fp32=True)
        elif mt == "gemma3_text":
            rot = self.rotary(T, A.rope_dim()) + self.rotary(T, A.rope_dim())
        else:
            rot = self.rotary(T, A.rope_dim())
        x = emb
        S.where = "embeddings / masks / rotary"
        for l in range(A.L):
            y = self.layer(l, x, T, q, i, masks, rot)
            if x != emb or mt == "gpt_bigcode":
                S.f(x)
            x = y
        S.where = "final norm / lm_head"
        nf = self.norm(T, T * h)
        S.f(x)
        if mt != "gpt_bigcode":
            S.f(emb)
        S.f(*carried, *rot, *masks.values())
        logits = S.a(dt * B * A.V)                # lm_head on the last position (logits_to_keep=1)
        S.f(nf)
        if mt == "gemma2" and A.c.get("final_logit_softcapping"):
            d = S.a(dt * B * A.V)
            S.f(logits)
            t = S.a(dt * B * A.V)
            S.f(d)
            logits = S.a(dt * B * A.V)
            S.f(t)
        return logits

    # ---- generate ----
    def run(self):
        S, A = self.S, self.A
        B, P, N, V, dt = A.B, A.P, A.N, A.V, A.dt
        S.phase("load")
        S.a(A.n_params * dt)
        S.a(A.buffer_bytes())
        S.mark("after_load")
        S.phase("inputs")
        S.a(8 * B * P)
        S.a(8 * B * P)
        S.mark("after_inputs")
        # generate's preamble (_prepare_special_tokens, position ids, checks, unfinished_sequences)
        S.phase("prep")
        scal = [S.a(8) for _ in range(A.nscal)]
        cs = S.a(8 * B * P)
        sb = S.a(8 * B * P)
        S.f(cs)
        eq = S.a(B * P)
        pos0 = S.a(8 * B * P)
        S.f(eq, sb)
        t = S.a(B * P)
        S.f(t)
        t = S.a(B * P)
        S.f(t)
        unf = S.a(8 * B)
        ids_clone = S.a(8 * B * P)
        # DynamicCache(config): a DynamicSlidingWindowLayer keeps torch.tensor(sliding_window)
        scal += [S.a(8) for k in A.kinds if k == "sliding"]
        self.cache = {}
        self.decode_batched = True   # CUDA-like: batched_mm experts in decode
        cache_bytes = []
        ids = None          # generate's input_ids (the user's until the first cat)
        pos = pos0
        lf = sc = nt = None
        clones = [ids_clone]
        res = {}
        for i in range(N):
            S.where = "forward start"
            S.phase(f"fwd{i}")
            S.mark(f"fwd_start{i}")
            logits = self.forward(i)
            cache_bytes.append(sum(S.live[k] for k in self.cache.values()))
            S.mark(f"fwd_end{i}")
            S.where = "token step (fp32 logits, processors)"
            S.phase(f"post{i}")
            if i == 0:
                S.f(*clones)   # _prefill's model inputs
                clones = []
            # position_ids += 1 (cat)
            ar = S.a(8)
            a1 = S.a(8 * B)
            S.f(ar)
            a2 = S.a(8 * B)
            S.f(a1)
            posn = S.a(8 * B * (P + i + 1))
            S.f(a2)
            if pos is not pos0:
                S.f(pos)
            pos = posn
            # next_token_logits: fp32 copy of the last position
            lfn = S.a(4 * B * V)
            S.f(lf)
            lf = lfn
            if A.nproc:
                # MinLengthLogitsProcessor: arange(V), isin, clone, where
                ar1 = S.a(8 * V)
                isn = S.a(V)
                cl = S.a(4 * B * V)
                s4 = S.a(4)
                w1 = S.a(4 * B * V)
                S.f(s4, cl, ar1, isn)
                # MinNewTokensLengthLogitsProcessor: clone, arange(V), isin, where
                cl = S.a(4 * B * V)
                ar1 = S.a(8 * V)
                isn = S.a(V)
                s4 = S.a(4)
                w2 = S.a(4 * B * V)
                S.f(s4, cl, ar1, isn, w1)
                S.f(sc)
                sc = w2
            am = S.a(8 * B)             # argmax
            if nt is not None:
                S.f(nt)
            if A.nproc:
                m1 = S.a(8 * B)
                r = S.a(8 * B)
                m2 = S.a(8 * B)
                S.f(r)
                nt = S.a(8 * B)
                S.f(m1, m2, am)
            else:
                nt = am
            idn = S.a(8 * B * (P + i + 1))   # input_ids = cat([input_ids, next_tokens])
            if ids is not None:
                S.f(ids)
            ids = idn
            # stopping criteria, unfinished_sequences &= ~is_done
            f1 = S.a(B)
            f2 = S.a(B)
            o1 = S.a(B)
            S.f(f2, f1)
            if A.nproc:
                i1 = S.a(B)
                i2 = S.a(B)
                S.f(i1)
                o2 = S.a(B)
                S.f(i2, o1)
                o1 = o2
            nn = S.a(B)
            S.f(o1)
            un = S.a(8 * B)
            S.f(nn, unf)
            unf = un
            mx = S.a(8)
            e1 = S.a(1)
            S.f(mx, e1)
            S.f(logits)                 # del outputs
            S.mark(f"post_end_pre{i}")
            if i < N - 1:
                c1 = S.a(8 * B)             # prepare_inputs_for_generation: input_ids[:, -1:].clone()
                c2 = S.a(8 * B)             # position_ids[..., -1:].clone()
                S.f(*clones)
                clones = [c1, c2]
            S.mark(f"post_end{i}")
        # generate returns input_ids; everything else is dropped
        S.phase("end")
        S.f(*clones, pos, unf, lf, sc, nt, *scal, pos0, *self.cache.values())
        self.cache = {}
        S.mark("end")
        S.marks[f"post_end{N - 1}"] = S.marks["end"]
        return self.collect(cache_bytes)

    def collect(self, cache_bytes):
        S, A = self.S, self.A
        PK, M = S.peak, S.marks
        N = A.N
        pre = max(PK["prep"], PK["fwd0"], PK["post0"])
        out = dict(weights_bytes=A.n_params * A.dt, buffers_bytes=A.buffer_bytes(), after_load=M["after_load"],
                   prefill=dict(peak=pre, fwd_peak=PK["fwd0"], token_peak=PK["post0"], prep_peak=PK["prep"],
                                end_fwd=M["fwd_end0"], end=M["post_end0"]),
                   kv_cache_after_prefill=cache_bytes[0], kv_cache_bytes=cache_bytes[-1],
                   kv_cache_per_forward=cache_bytes, end=M["end"])
        if N > 1:
            peaks = [max(PK[f"fwd{k}"], PK[f"post{k}"]) for k in range(1, N)]
            out["decode"] = dict(peaks=peaks, fwd_peaks=[PK[f"fwd{k}"] for k in range(1, N)],
                                 token_peaks=[PK[f"post{k}"] for k in range(1, N)],
                                 ends=[M[f"post_end{k}"] for k in range(1, N)],
                                 first=dict(peak=peaks[0]), last=dict(peak=peaks[-1]), max=dict(peak=max(peaks)))
        out["peak_overall"] = max([pre] + (out["decode"]["peaks"] if N > 1 else []))
        ph = max(["prep", "fwd0", "post0"] + [f"{x}{k}" for k in range(1, N) for x in ("fwd", "post")],
                 key=lambda p: PK[p])
        out["peak_overall_phase"] = ph
        out["peak_overall_moment"] = S.peak_at.get(ph, "")
        out["prefill"]["peak_moment"] = S.peak_at.get(max(["prep", "fwd0", "post0"], key=lambda p: PK[p]), "")
        if N > 1:
            k = 1 + max(range(N - 1), key=lambda j: out["decode"]["peaks"][j])
            p2 = f"fwd{k}" if PK[f"fwd{k}"] >= PK[f"post{k}"] else f"post{k}"
            out["decode"]["max"]["step"] = k
            out["decode"]["max"]["moment"] = S.peak_at.get(p2, "")
        return out


CHECK_FIELDS = ["weights_bytes", "buffers_bytes", "after_load", "prefill.prep_peak", "kv_cache_after_prefill", "kv_cache_bytes", "prefill.peak", "prefill.fwd_peak",
                "prefill.token_peak", "prefill.end_fwd", "prefill.end", "decode.first.peak", "decode.last.peak",
                "decode.max.peak", "peak_overall", "end"]


LIST_FIELDS = ["kv_cache_per_forward", "decode.peaks", "decode.fwd_peaks", "decode.token_peaks", "decode.ends"]


def _get(d, path):
    for p in path.split("."):
        if d is None:
            return None
        d = d.get(p) if isinstance(d, dict) else None
    return d


def check_file(path, verbose=0):
    """predict() against every row of a rows file: % error per field and overall."""
    rows = [json.loads(l) for l in open(path) if l.strip()]
    worst = {}
    n = 0
    skipped = 0
    for r in rows:
        if r.get("status") != "ok" or r.get("quant", "none") != "none":
            skipped += 1  # bitsandbytes rows: measured only (NOTES.md section 10)
            continue
        n += 1
        tag = f"{r['name']:20s} {r['dtype']} {r['attn']:5s} B{r['batch']:<3d}P{r['prompt']:<6d}N{r['new']:<4d}"
        try:
            p = predict(r)
        except NotImplementedError as e:
            print(f"{tag} not modelled: {e}")
            continue
        errs = []
        for fld in CHECK_FIELDS:
            mv, pv = _get(r["measured"], fld), _get(p, fld)
            if mv is None or pv is None:
                continue
            e = (pv - mv) / mv * 100 if mv else 0.0
            errs.append((fld, e, pv - mv))
            worst[fld] = max(worst.get(fld, 0.0), abs(e))
        for fld in LIST_FIELDS:
            mv, pv = _get(r["measured"], fld), _get(p, fld)
            if mv is None or pv is None:
                continue
            diffs = [b - a for a, b in zip(mv, pv)] + ([None] if len(mv) != len(pv) else [])
            nbad = sum(1 for d in diffs if d != 0)
            worst_abs = max([abs(d) for d in diffs if d is not None] or [0])
            e = max([abs(b - a) / a * 100 for a, b in zip(mv, pv) if a] or [0.0])
            errs.append((fld + f"[{len(mv)}]", e, worst_abs if nbad else 0))
            worst[fld] = max(worst.get(fld, 0.0), e)
        bad = [x for x in errs if x[2] != 0]
        line = f"{tag} peak {r['measured']['peak_overall']:>14d} err {_get(p,'peak_overall') - r['measured']['peak_overall']:>+10d} B"
        if bad and (verbose or True):
            line += "  | " + ", ".join(f"{f} {d:+d}" for f, e, d in bad[:6])
        print(line)
    print(f"{n} rows checked ({skipped} bitsandbytes or failed rows not modelled); worst |error| per field (%):")
    for k, v in worst.items():
        print(f"  {k:28s} {v:.4f}")
    return 0


# ======================================================================================
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="", help="a file in crates/core/tests/fixtures/hf_configs or a path")
    ap.add_argument("--override", default="", help="JSON dict applied over the config (shrink for real runs)")
    ap.add_argument("--name", default="")
    ap.add_argument("--mode", default="fake", choices=["fake", "real"])
    ap.add_argument("--dtype", default="bf16", choices=list(DTYPES))
    ap.add_argument("--attn", default="auto", choices=["auto", "sdpa", "eager"])
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--new", type=int, default=16)
    ap.add_argument("--cuda-like", type=int, default=1)
    ap.add_argument("--fast-mm", type=int, default=1, help="(real) bf16/fp16 matmuls in fp32, cast back")
    ap.add_argument("--quant", default="none", choices=["none", "nf4", "fp4", "int8"])
    ap.add_argument("--ckpt-dir", default="~/.cache/vramfit-infer")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tag", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("--matrix", default="", help="JSON file: a list of option dicts, run in this process")
    ap.add_argument("--check", default="", help="rows file: print predict() vs measured, %% errors")
    ap.add_argument("--check-verbose", type=int, default=0)
    ap.add_argument("--compare", default="", help="rows file: real vs fake rows of the same configuration")
    args = ap.parse_args(argv)
    if args.check:
        return check_file(args.check, verbose=args.check_verbose)
    if args.compare:
        return compare_file(args.compare)
    if args.matrix:
        with open(args.matrix) as f:
            items = json.load(f)
        rc = 0
        for it in items:
            av = []
            for k, v in it.items():
                av += [f"--{k.replace('_', '-')}", v if isinstance(v, str) else json.dumps(v)]
            for k in ("out", "threads"):
                if k not in it and getattr(args, k):
                    av += [f"--{k}", str(getattr(args, k))]
            rc |= main(av)
            gc.collect()
        return rc
    try:
        row = run(args)
        row["status"] = "ok"
    except Exception as e:
        row = dict(tag=args.tag, config_file=args.config, mode=args.mode, dtype=args.dtype, batch=args.batch,
                   prompt=args.prompt, new=args.new, status="error", error=f"{type(e).__name__}: {e}"[:2000],
                   traceback=traceback.format_exc()[-4000:])
    line = json.dumps(row)
    if args.out:
        import fcntl
        with open(args.out, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.write(line + "\n")
            fcntl.flock(f, fcntl.LOCK_UN)
    short = {k: row.get(k) for k in ("name", "mode", "dtype", "batch", "prompt", "new", "status", "error", "wall_s")}
    if row.get("status") == "ok":
        m = row["measured"]
        short.update(peak=m["peak_overall"], phase=m["peak_overall_phase"], prefill=m["prefill"]["peak"],
                     kv=m["kv_cache_bytes"], w=m["weights_bytes"], oracle=row["oracle_mismatches"])
    print(json.dumps(short), flush=True)
    if row.get("status") != "ok":
        print(row.get("traceback", ""), file=sys.stderr)
    return 0 if row.get("status") == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
