#!/usr/bin/env python3
"""Tiny llama base models and matching LoRA adapter GGUFs for llama.cpp b10488.

    ~/.gguf-venv/bin/python gen.py OUT_DIR            # gguf 0.19.0, numpy

Deterministic (fixed seeds). Writes:

  base-{f16,q8_0,q4_0}.gguf   llama, 4 layers, n_embd 1024, 8 heads x 128, 2 KV heads (k/v width
                              256), n_ff 2816, vocabulary 1024 (byte SPM), context 8192.
                              1-D norms F32; every 2-D weight (token_embd and output included)
                              in the named type (gguf.quants.quantize for Q8_0/Q4_0).
  lora-<targets>-r<rank>-<dtype>.gguf
        targets: attn (attn_q/k/v/output), all (attn + ffn_gate/up/down),
                 allo (all + output.weight, the lm_head), odd (attn_q only, rank 7),
                 gate (ffn_gate only; `gen.py OUT big`: ranks 512..4096)
  NARROW=1 gen.py OUT: narrow-f16.gguf (n_ff = 1024) and narrow-lora-all-r{8,64}-f16.gguf
  WIDE=1 gen.py OUT: wide-f16.gguf (vocabulary 32768, or VOCAB's: the output layer the compute
        peak once a batch asks for 64 outputs) and wide-lora-{all,allo}-r64-f16.gguf
        dtype:   f32, f16, q8_0 (q8_0 as convert_lora_to_gguf.py --outtype q8_0 does it:
                 a tensor whose ne0 is not a multiple of 32 falls back to F16)

Adapter layout = convert_lora_to_gguf.py (b10488): general.type = "adapter",
general.architecture = base arch, adapter.type = "lora", adapter.lora.alpha (f32),
tensors "<base tensor name>.lora_a" with ggml shape {n_in, r} and ".lora_b" {r, n_out}
(PEFT lora_A [r, n_in] / lora_B [n_out, r] in numpy order).
"""
from __future__ import annotations

import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

N_VOCAB, N_EMBD, N_HEAD, N_KV, HEAD, N_FF, N_LAYER = 1024, 1024, 8, 2, 128, 2816, 4
if os.environ.get("NARROW"):  # NARROW=1: n_ff = 1024 (FFN no wider than n_embd)
    N_FF = 1024
if os.environ.get("WIDE"):  # WIDE=1: a vocabulary of 32768 (VOCAB=N: of N)
    N_VOCAB = int(os.environ.get("VOCAB", "32768"))

# base tensor name -> (n_in = ne0, n_out = ne1)
ATTN = {"attn_q": (N_EMBD, N_HEAD * HEAD), "attn_k": (N_EMBD, N_KV * HEAD),
        "attn_v": (N_EMBD, N_KV * HEAD), "attn_output": (N_HEAD * HEAD, N_EMBD)}
FFN = {"ffn_gate": (N_EMBD, N_FF), "ffn_up": (N_EMBD, N_FF), "ffn_down": (N_FF, N_EMBD)}


def vocab(w: gguf.GGUFWriter) -> None:
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)]
    types = [2, 3, 3] + [6] * 256
    i = 0
    letters = 3 if N_VOCAB <= 17835 else 4  # 26**3 words and the 259 above
    while len(tokens) < N_VOCAB:
        tokens.append("\u2581" + "".join(chr(97 + (i // 26 ** k) % 26) for k in range(letters)))
        types.append(1)
        i += 1
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([-float(j) for j in range(N_VOCAB)])
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)


def put(w: gguf.GGUFWriter, name: str, a: np.ndarray, qt: Q) -> None:
    if qt == Q.F32:
        w.add_tensor(name, a.astype(np.float32))
    elif qt == Q.F16:
        w.add_tensor(name, a.astype(np.float16))
    else:
        w.add_tensor(name, gguf.quants.quantize(a.astype(np.float32), qt), raw_dtype=qt)


def finish(w: gguf.GGUFWriter) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def base(path: str, qt: Q, ftype: gguf.LlamaFileType) -> None:
    rng = np.random.default_rng(7)
    w = gguf.GGUFWriter(path, "llama")
    w.add_type("model")
    w.add_name("vramfit lora base")
    w.add_block_count(N_LAYER)
    w.add_context_length(8192)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_KV)
    w.add_rope_dimension_count(HEAD)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(ftype)
    vocab(w)

    def r(n_out, n_in):
        return rng.standard_normal((n_out, n_in)).astype(np.float32) * 0.02

    put(w, "token_embd.weight", r(N_VOCAB, N_EMBD), qt)
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    put(w, "output.weight", r(N_VOCAB, N_EMBD), qt)
    for i in range(N_LAYER):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        w.add_tensor(p + "ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        for n, (n_in, n_out) in {**ATTN, **FFN}.items():
            put(w, p + n + ".weight", r(n_out, n_in), qt)
    finish(w)


def adapter(path: str, targets: str, rank: int, dt: str, alpha: float = 16.0) -> None:
    rng = np.random.default_rng(1000 + rank)
    w = gguf.GGUFWriter(path, "llama")
    w.add_type(gguf.GGUFType.ADAPTER)
    w.add_name("vramfit lora")
    w.add_string(gguf.Keys.Adapter.TYPE, "lora")
    w.add_float32(gguf.Keys.Adapter.LORA_ALPHA, alpha)
    FFN = {"ffn_gate": (N_EMBD, N_FF), "ffn_up": (N_EMBD, N_FF), "ffn_down": (N_FF, N_EMBD)}
    names = dict(ATTN) if targets in ("attn",) else {**ATTN, **FFN}
    if targets == "odd":
        names = {"attn_q": ATTN["attn_q"]}
    if targets == "gate":
        names = {"ffn_gate": FFN["ffn_gate"]}
    per_layer = [(f"blk.{i}.{n}.weight", s) for i in range(N_LAYER) for n, s in names.items()]
    if targets == "allo":
        per_layer.append(("output.weight", (N_EMBD, N_VOCAB)))
    for name, (n_in, n_out) in per_layer:
        a = rng.standard_normal((rank, n_in)).astype(np.float32) * 0.01   # ggml {n_in, r}
        b = rng.standard_normal((n_out, rank)).astype(np.float32) * 0.01  # ggml {r, n_out}
        for suf, t in ((".lora_a", a), (".lora_b", b)):
            if dt == "f32":
                put(w, name + suf, t, Q.F32)
            elif dt == "f16":
                put(w, name + suf, t, Q.F16)
            else:  # q8_0, with the converter's F16 fallback when ne0 % 32 != 0
                put(w, name + suf, t, Q.Q8_0 if t.shape[-1] % 32 == 0 else Q.F16)
    finish(w)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    if os.environ.get("WIDE"):
        base(os.path.join(out, "wide-f16.gguf"), Q.F16, gguf.LlamaFileType.MOSTLY_F16)
        for targets in ("all", "allo"):
            adapter(os.path.join(out, f"wide-lora-{targets}-r64-f16.gguf"), targets, 64, "f16")
        sys.exit(0)
    if os.environ.get("NARROW"):
        base(os.path.join(out, "narrow-f16.gguf"), Q.F16, gguf.LlamaFileType.MOSTLY_F16)
        for rank in (8, 64):
            adapter(os.path.join(out, f"narrow-lora-all-r{rank}-f16.gguf"), "all", rank, "f16")
        sys.exit(0)
    if len(sys.argv) > 2 and sys.argv[2] == "big":  # gate-only adapters of large rank
        for rank in (512, 1024, 2048, 4096):
            adapter(os.path.join(out, f"lora-gate-r{rank}-f16.gguf"), "gate", rank, "f16")
        sys.exit(0)
    LF = gguf.LlamaFileType
    for qt, ft, tag in ((Q.F16, LF.MOSTLY_F16, "f16"), (Q.Q8_0, LF.MOSTLY_Q8_0, "q8_0"),
                        (Q.Q4_0, LF.MOSTLY_Q4_0, "q4_0")):
        p = os.path.join(out, f"base-{tag}.gguf")
        if not os.path.exists(p):
            base(p, qt, ft)
    for targets, rank, dt in (("attn", 8, "f16"), ("attn", 64, "f16"), ("all", 8, "f16"),
                              ("all", 64, "f16"), ("all", 64, "f32"), ("all", 64, "q8_0"),
                              ("all", 8, "q8_0"), ("allo", 64, "f16"), ("odd", 7, "f32"),
                              ("all", 256, "f16")):
        adapter(os.path.join(out, f"lora-{targets}-r{rank}-{dt}.gguf"), targets, rank, dt)
