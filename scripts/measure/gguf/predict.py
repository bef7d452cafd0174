#!/usr/bin/env python3
"""Predict the tensors of the GGUF file llama.cpp would write for a Hugging Face config.

Given a `config.json` and a llama-quantize file type (Q4_K_M, Q8_0, IQ4_XS, MXFP4_MOE, F16, ...),
list every tensor `convert_hf_to_gguf.py` + `llama-quantize` would put in the file (name, ggml
shape ne0..ne3, ggml type, bytes), and sum them. It is a PREDICTION for a file not yet read: a
published file may differ (imatrix-dependent rules, custom recipes such as Unsloth "UD" quants,
--tensor-type / --output-tensor-type overrides, an older or newer llama.cpp). Only the file's own
header gives its exact bytes (see NOTES.md).

The rules follow llama.cpp at 3142f1dbb9d8b492a721a9194872f7901322f622 (build 8973, 2026-04-29):
src/llama-quant.cpp (tensor_allows_quantization, llama_tensor_get_type_impl,
tensor_type_fallback, llama_ftype_get_default_type), convert_hf_to_gguf.py (which tensors are
written, and in which float type), ggml/src/ggml.c type_traits + ggml-common.h (block sizes).
`--rules legacy` selects the behaviour before PR #19770 (build 8266, 2026-03-10), which every file
published before March 2026 was made with: attn_qkv / attn_kv_b did not take the attn_v rules, and
the Q2_K/Q3_K fallback was IQ4_NL. See NOTES.md for the rules in prose, with citations.

Standard library only. Usage:

    python3 predict.py --config crates/core/tests/fixtures/hf_configs/llama3.1-8b.json --ftype Q4_K_M
    python3 predict.py --config CFG --ftype Q4_K_M --list           # every tensor
    python3 predict.py --config CFG --ftype Q4_0 --imatrix --json   # machine-readable
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field

# ----------------------------------------------------------------------------- ggml types
# name: (ggml_type id, block size in elements, bytes per block)
# ggml/src/ggml.c type_traits[] (.blck_size, .type_size) and ggml-common.h static_asserts.
GGML_TYPES = {
    "F32": (0, 1, 4), "F16": (1, 1, 2), "Q4_0": (2, 32, 18), "Q4_1": (3, 32, 20),
    "Q5_0": (6, 32, 22), "Q5_1": (7, 32, 24), "Q8_0": (8, 32, 34), "Q8_1": (9, 32, 36),
    "Q2_K": (10, 256, 84), "Q3_K": (11, 256, 110), "Q4_K": (12, 256, 144), "Q5_K": (13, 256, 176),
    "Q6_K": (14, 256, 210), "Q8_K": (15, 256, 292), "IQ2_XXS": (16, 256, 66), "IQ2_XS": (17, 256, 74),
    "IQ3_XXS": (18, 256, 98), "IQ1_S": (19, 256, 50), "IQ4_NL": (20, 32, 18), "IQ3_S": (21, 256, 110),
    "IQ2_S": (22, 256, 82), "IQ4_XS": (23, 256, 136), "I8": (24, 1, 1), "I16": (25, 1, 2),
    "I32": (26, 1, 4), "I64": (27, 1, 8), "F64": (28, 1, 8), "IQ1_M": (29, 256, 56),
    "BF16": (30, 1, 2), "TQ1_0": (34, 256, 54), "TQ2_0": (35, 256, 66), "MXFP4": (39, 32, 17),
    "NVFP4": (40, 64, 36), "Q1_0": (41, 128, 18),
    # ggml HEAD d99724f2 (2026-08-21, synced to llama.cpp d3cf1f14) adds Q2_0 = 42: 64 elements, 18 B.
    "Q2_0": (42, 64, 18),
}
GGML_TYPE_NAMES = {v[0]: k for k, v in GGML_TYPES.items()}

# llama_ftype (include/llama.h) -> default ggml type (llama_ftype_get_default_type)
FTYPES = {
    "F32": (0, "F32"), "F16": (1, "F16"), "Q4_0": (2, "Q4_0"), "Q4_1": (3, "Q4_1"),
    "Q8_0": (7, "Q8_0"), "Q5_0": (8, "Q5_0"), "Q5_1": (9, "Q5_1"), "Q2_K": (10, "Q2_K"),
    "Q3_K_S": (11, "Q3_K"), "Q3_K_M": (12, "Q3_K"), "Q3_K_L": (13, "Q3_K"), "Q4_K_S": (14, "Q4_K"),
    "Q4_K_M": (15, "Q4_K"), "Q5_K_S": (16, "Q5_K"), "Q5_K_M": (17, "Q5_K"), "Q6_K": (18, "Q6_K"),
    "IQ2_XXS": (19, "IQ2_XXS"), "IQ2_XS": (20, "IQ2_XS"), "Q2_K_S": (21, "Q2_K"),
    "IQ3_XS": (22, "IQ3_S"), "IQ3_XXS": (23, "IQ3_XXS"), "IQ1_S": (24, "IQ1_S"),
    "IQ4_NL": (25, "IQ4_NL"), "IQ3_S": (26, "IQ3_S"), "IQ3_M": (27, "IQ3_S"), "IQ2_S": (28, "IQ2_XS"),
    "IQ2_M": (29, "IQ2_S"), "IQ4_XS": (30, "IQ4_XS"), "IQ1_M": (31, "IQ1_M"), "BF16": (32, "BF16"),
    "TQ1_0": (36, "TQ1_0"), "TQ2_0": (37, "TQ2_0"), "MXFP4_MOE": (38, "MXFP4"), "Q1_0": (40, "Q1_0"),
}
FTYPE_ALIASES = {"Q3_K": "Q3_K_M", "Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M"}
FLOAT_TYPES = {"F32", "F16", "BF16", "F64"}
ALIGN = 32  # GGUF_DEFAULT_ALIGNMENT (ggml/include/gguf.h); llama-quantize always writes with it


def is_quantized(t: str) -> bool:
    """ggml_is_quantized: every block type; not the float or integer types."""
    return t not in FLOAT_TYPES and t not in ("I8", "I16", "I32", "I64")


def blck(t: str) -> int:
    return GGML_TYPES[t][1]


def nbytes(t: str, ne: list[int]) -> int:
    """ggml_nbytes for a contiguous tensor: ne0/blck * type_size * ne1 * ne2 * ne3."""
    _, b, s = GGML_TYPES[t]
    if ne[0] % b:
        raise ValueError(f"ne0={ne[0]} not a multiple of {t}'s block {b}")
    n = ne[0] // b * s
    for d in ne[1:]:
        n *= d
    return n


def pad(n: int, a: int = ALIGN) -> int:
    return (n + a - 1) // a * a


# ----------------------------------------------------------------------------- the tensor list
@dataclass
class T:
    name: str
    ne: list[int]           # ggml order: ne0 is the row length (the HF tensor's last dim)
    src: str = "W"          # "W": written at the convert outtype; "F32": convert forces f32
    type: str = ""
    nbytes: int = 0


@dataclass
class Model:
    arch: str
    n_layer: int
    n_expert: int
    n_head: int
    n_head_kv: int
    tensors: list[T] = field(default_factory=list)
    is_70b: bool = False

    @property
    def n_gqa(self) -> int:
        return self.n_head // self.n_head_kv if self.n_head_kv else 0


def _g(cfg: dict, *keys, default=None):
    for k in keys:
        if k in cfg and cfg[k] is not None:
            return cfg[k]
    return default


def _rope_type(cfg: dict) -> str:
    rs = cfg.get("rope_scaling") or cfg.get("rope_parameters") or {}
    if isinstance(rs, dict) and "full_attention" in rs:
        rs = rs["full_attention"]
    return str((rs or {}).get("rope_type", (rs or {}).get("type", "")) or "").lower()


MODELLED = ("llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "gemma",
            "gemma2", "gemma3", "gemma3_text", "phi3", "gpt_oss", "deepseek_v2", "deepseek_v3",
            "kimi_k2")


def build(cfg: dict, n_vocab: int | None = None, tied: bool | None = None,
          deepseek_split_kv_b: bool = True) -> Model:
    """The tensors convert_hf_to_gguf.py writes (at 3142f1db) for the text model of `cfg`."""
    if "text_config" in cfg and "num_hidden_layers" not in cfg:
        cfg = {**cfg, **cfg["text_config"]}
    mt = cfg.get("model_type", "")
    archs = cfg.get("architectures") or [""]
    if mt not in MODELLED:
        raise SystemExit(f"model_type {mt!r} ({archs[0]}) is not modelled by predict.py")
    H = cfg["hidden_size"]
    L = cfg["num_hidden_layers"]
    nh = _g(cfg, "num_attention_heads", "n_head")
    nkv = _g(cfg, "num_key_value_heads", default=nh)
    hd = _g(cfg, "head_dim", default=H // nh)
    ff = _g(cfg, "intermediate_size")
    V = n_vocab if n_vocab is not None else cfg["vocab_size"]
    if tied is None:
        tied = bool(cfg.get("tie_word_embeddings", mt in ("gemma", "gemma2", "gemma3", "gemma3_text")))
    out: list[T] = []
    add = lambda name, ne, src="W": out.append(T(name, list(ne), src))  # noqa: E731
    n_expert = 0

    def head():
        add("token_embd.weight", [H, V])
        add("output_norm.weight", [H], "F32")
        if not tied:
            add("output.weight", [H, V])

    if mt in ("llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe"):
        arch = {"llama": "llama", "mistral": "llama", "mixtral": "llama", "qwen2": "qwen2",
                "qwen3": "qwen3", "qwen2_moe": "qwen2moe", "qwen3_moe": "qwen3moe"}[mt]
        head()
        if arch == "llama" and _rope_type(cfg) == "llama3":
            add("rope_freqs.weight", [hd // 2], "F32")      # LlamaModel.generate_extra_tensors
        qkv_bias = mt in ("qwen2", "qwen2_moe") or bool(cfg.get("attention_bias"))
        n_expert = _g(cfg, "num_local_experts", "num_experts", default=0) or 0
        moe_ff = _g(cfg, "moe_intermediate_size", default=ff)
        sparse_step = cfg.get("decoder_sparse_step", 1) or 1
        mlp_only = set(cfg.get("mlp_only_layers") or [])
        for i in range(L):
            p = f"blk.{i}."
            add(p + "attn_norm.weight", [H], "F32")
            add(p + "attn_q.weight", [H, nh * hd])
            add(p + "attn_k.weight", [H, nkv * hd])
            add(p + "attn_v.weight", [H, nkv * hd])
            add(p + "attn_output.weight", [nh * hd, H])
            if qkv_bias:
                add(p + "attn_q.bias", [nh * hd], "F32")
                add(p + "attn_k.bias", [nkv * hd], "F32")
                add(p + "attn_v.bias", [nkv * hd], "F32")
            if mt in ("qwen3", "qwen3_moe"):
                add(p + "attn_q_norm.weight", [hd], "F32")
                add(p + "attn_k_norm.weight", [hd], "F32")
            add(p + "ffn_norm.weight", [H], "F32")
            moe_layer = n_expert > 1 and i not in mlp_only and (i + 1) % sparse_step == 0
            if moe_layer:
                add(p + "ffn_gate_inp.weight", [H, n_expert], "F32")   # router: forced F32
                add(p + "ffn_gate_exps.weight", [H, moe_ff, n_expert])
                add(p + "ffn_up_exps.weight", [H, moe_ff, n_expert])
                add(p + "ffn_down_exps.weight", [moe_ff, H, n_expert])
                sh = cfg.get("shared_expert_intermediate_size")
                if mt == "qwen2_moe" and sh:
                    add(p + "ffn_gate_inp_shexp.weight", [H], "F32")
                    add(p + "ffn_gate_shexp.weight", [H, sh])
                    add(p + "ffn_up_shexp.weight", [H, sh])
                    add(p + "ffn_down_shexp.weight", [sh, H])
            else:
                add(p + "ffn_gate.weight", [H, ff])
                add(p + "ffn_up.weight", [H, ff])
                add(p + "ffn_down.weight", [ff, H])
                if cfg.get("mlp_bias"):
                    for n, d in (("ffn_gate", ff), ("ffn_up", ff), ("ffn_down", H)):
                        add(p + n + ".bias", [d], "F32")
    elif mt in ("gemma", "gemma2", "gemma3", "gemma3_text"):
        arch = {"gemma": "gemma", "gemma2": "gemma2", "gemma3": "gemma3", "gemma3_text": "gemma3"}[mt]
        head()
        for i in range(L):
            p = f"blk.{i}."
            add(p + "attn_norm.weight", [H], "F32")
            add(p + "attn_q.weight", [H, nh * hd])
            add(p + "attn_k.weight", [H, nkv * hd])
            add(p + "attn_v.weight", [H, nkv * hd])
            add(p + "attn_output.weight", [nh * hd, H])
            if arch == "gemma3":
                add(p + "attn_q_norm.weight", [hd], "F32")
                add(p + "attn_k_norm.weight", [hd], "F32")
            if arch in ("gemma2", "gemma3"):
                add(p + "post_attention_norm.weight", [H], "F32")
                add(p + "post_ffw_norm.weight", [H], "F32")
            add(p + "ffn_norm.weight", [H], "F32")
            add(p + "ffn_gate.weight", [H, ff])
            add(p + "ffn_up.weight", [H, ff])
            add(p + "ffn_down.weight", [ff, H])
    elif mt == "phi3":
        arch = "phi3"
        head()
        rot = int(cfg.get("partial_rotary_factor", 1.0) * H) // nh
        rs = cfg.get("rope_scaling")
        if rs:                                                  # Phi3MiniModel.generate_extra_tensors
            add("rope_factors_long.weight", [rot // 2], "F32")
            add("rope_factors_short.weight", [rot // 2], "F32")
        for i in range(L):
            p = f"blk.{i}."
            add(p + "attn_norm.weight", [H], "F32")
            add(p + "attn_qkv.weight", [H, (nh + 2 * nkv) * hd])   # fused qkv_proj kept fused
            add(p + "attn_output.weight", [nh * hd, H])
            add(p + "ffn_norm.weight", [H], "F32")
            add(p + "ffn_up.weight", [H, 2 * ff])                    # fused gate_up_proj -> ffn_up
            add(p + "ffn_down.weight", [ff, H])
    elif mt == "gpt_oss":
        arch = "gpt-oss"
        head()
        n_expert = cfg["num_local_experts"]
        for i in range(L):
            p = f"blk.{i}."
            add(p + "attn_norm.weight", [H], "F32")
            add(p + "post_attention_norm.weight", [H], "F32")
            for n, d_in, d_out in (("attn_q", H, nh * hd), ("attn_k", H, nkv * hd),
                                   ("attn_v", H, nkv * hd), ("attn_output", nh * hd, H)):
                add(p + n + ".weight", [d_in, d_out])
                add(p + n + ".bias", [d_out], "F32")
            add(p + "attn_sinks.weight", [nh], "F32")
            add(p + "ffn_gate_inp.weight", [H, n_expert], "F32")
            add(p + "ffn_gate_inp.bias", [n_expert], "F32")
            # experts arrive as MXFP4 blocks and are repacked, not converted (GptOssModel.repack_mxfp4)
            add(p + "ffn_gate_exps.weight", [H, ff, n_expert], "MXFP4")
            add(p + "ffn_up_exps.weight", [H, ff, n_expert], "MXFP4")
            add(p + "ffn_down_exps.weight", [ff, H, n_expert], "MXFP4")
            add(p + "ffn_gate_exps.bias", [ff, n_expert], "F32")
            add(p + "ffn_up_exps.bias", [ff, n_expert], "F32")
            add(p + "ffn_down_exps.bias", [H, n_expert], "F32")
    elif mt in ("deepseek_v2", "deepseek_v3", "kimi_k2"):
        arch = "deepseek2"
        head()
        n_expert = cfg["n_routed_experts"]
        qlr = cfg.get("q_lora_rank")
        kvlr = cfg["kv_lora_rank"]
        nope, rope, vhd = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"]
        moe_ff = cfg["moe_intermediate_size"]
        n_shared = cfg.get("n_shared_experts") or 0
        first_dense = cfg.get("first_k_dense_replace", 0)
        freq = cfg.get("moe_layer_freq", 1)
        for i in range(L):
            p = f"blk.{i}."
            add(p + "attn_norm.weight", [H], "F32")
            if qlr:
                add(p + "attn_q_a.weight", [H, qlr])
                add(p + "attn_q_a_norm.weight", [qlr], "F32")
                add(p + "attn_q_b.weight", [qlr, nh * (nope + rope)])
            else:
                add(p + "attn_q.weight", [H, nh * (nope + rope)])
            add(p + "attn_kv_a_mqa.weight", [H, kvlr + rope])
            add(p + "attn_kv_a_norm.weight", [kvlr], "F32")
            if deepseek_split_kv_b:   # convert >= build 5137 (PR #12801): k_b transposed, 3-D
                add(p + "attn_k_b.weight", [nope, kvlr, nh])
                add(p + "attn_v_b.weight", [kvlr, vhd, nh])
            else:
                add(p + "attn_kv_b.weight", [kvlr, nh * (nope + vhd)])
            add(p + "attn_output.weight", [nh * vhd, H])
            add(p + "ffn_norm.weight", [H], "F32")
            if i >= first_dense and i % freq == 0:
                add(p + "ffn_gate_inp.weight", [H, n_expert], "F32")
                if cfg.get("topk_method") == "noaux_tc":
                    add(p + "exp_probs_b.bias", [n_expert], "F32")
                add(p + "ffn_gate_exps.weight", [H, moe_ff, n_expert])
                add(p + "ffn_up_exps.weight", [H, moe_ff, n_expert])
                add(p + "ffn_down_exps.weight", [moe_ff, H, n_expert])
                if n_shared:
                    add(p + "ffn_gate_shexp.weight", [H, moe_ff * n_shared])
                    add(p + "ffn_up_shexp.weight", [H, moe_ff * n_shared])
                    add(p + "ffn_down_shexp.weight", [moe_ff * n_shared, H])
            else:
                add(p + "ffn_gate.weight", [H, ff])
                add(p + "ffn_up.weight", [H, ff])
                add(p + "ffn_down.weight", [ff, H])
    else:
        raise SystemExit(f"model_type {mt!r} ({archs[0]}) is not modelled by predict.py")

    # llama_model_loader::weights_map order: by layer (-1 for non-layer tensors), then by name
    def key(t: T):
        lay = int(t.name.split(".")[1]) if t.name.startswith("blk.") else -1
        return (lay, t.name)
    out.sort(key=key)
    m = Model(arch, L, n_expert, nh, nkv, out)
    # LLM_TYPE_70B (src/llama-model.cpp load_hparams): llama with 80 layers and GQA (not 8
    # experts); qwen2 with 80 layers (Qwen2/2.5-72B). Also deci/olmo 80, jais2 68 (not modelled).
    m.is_70b = (arch == "llama" and L == 80 and nh != nkv and n_expert != 8) or (arch == "qwen2" and L == 80)
    return m


# ----------------------------------------------------------------------------- llama-quantize
def allows_quantization(t: T) -> bool:
    """tensor_allows_quantization (src/llama-quant.cpp) for the names these archs produce."""
    n = t.name
    if len(t.ne) < 2:
        return False                      # ggml_n_dims < 2 (1-D: norms, biases, sinks, rope tables)
    q = n.endswith("weight")
    q &= "_norm.weight" not in n
    # output.weight is quantized unless --leave-output-tensor (quantize_output_tensor = false)
    q &= "ffn_gate_inp.weight" not in n   # MoE router
    for s in ("altup", "laurel", "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight",
              "attn_rel_b.weight", ".position_embd", "ffn_gate_tid2eid.weight",
              "indexer.k_proj.weight", "indexer.q_proj.weight"):
        q &= s not in n
    q &= n not in ("position_embd.weight", "token_types.weight")
    return q


def category(n: str) -> str:
    """tensor_get_category (b8973); order matters (attn_qkv before attn_v, ffn_up before ffn_gate)."""
    if n == "output.weight":
        return "OUTPUT"
    if n in ("token_embd.weight", "per_layer_token_embd.weight"):
        return "TOKEN_EMBD"
    for s, c in (("attn_qkv.weight", "QKV"), ("attn_kv_b.weight", "KV_B"), ("attn_v.weight", "V"),
                 ("attn_k.weight", "K"), ("attn_q.weight", "Q"), ("attn_output.weight", "O"),
                 ("ffn_up", "UP"), ("ffn_gate", "GATE"), ("ffn_down", "DOWN")):
        if s in n:
            return c
    return "OTHER"


def use_more_bits(i: int, n: int) -> bool:
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


class Quantizer:
    def __init__(self, m: Model, ftype: str, imatrix: bool = False, rules: str = "b8973",
                 tied_embd_as_output: bool = True):
        self.m, self.ftype, self.imatrix, self.rules = m, ftype, imatrix, rules
        # False = llama.cpp before build 2248 (PR #5650, 2024-02-22): a tied token_embd was
        # quantized like any other tensor, not with the output tensor's rule
        self.tied_embd_as_output = tied_embd_as_output
        self.default = FTYPES[ftype][1]
        legacy = rules == "legacy"
        self.attn_v_cats = {"V"} if legacy else {"V", "QKV", "KV_B"}
        # both eras count attn_v + attn_qkv + attn_kv_b tensors for n_attention_wv
        self.n_attention_wv = sum(1 for t in m.tensors if category(t.name) in ("V", "QKV", "KV_B"))
        self.has_tied = not any(t.name == "output.weight" for t in m.tensors)
        self.i_attention_wv = self.i_ffn_down = self.i_ffn_gate = self.i_ffn_up = 0
        self.n_ffn = m.n_layer
        self.n_fallback = 0

    def layer_of(self, counter: int, name: str) -> int:
        # layer_info: with n_expert > 1 the layer is parsed from the name; else the running counter
        if max(1, self.m.n_expert) > 1:
            return int(name.split(".")[1])
        return counter

    def impl(self, t: T, new: str, cat: str) -> str:
        """llama_tensor_get_type_impl (b8973 src/llama-quant.cpp), one branch per ftype rule."""
        f, m = self.ftype, self.m
        IQ2_FAM = ("IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M")
        if cat == "OUTPUT" or (self.has_tied and self.tied_embd_as_output and cat == "TOKEN_EMBD"):
            nx = t.ne[0]
            if f == "MXFP4_MOE":
                new = "Q8_0"
            elif m.arch == "falcon" or nx % blck(new) != 0:
                new = "Q8_0"
            elif f in ("IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"):
                new = "Q5_K"
            elif new != "Q8_0":
                new = "Q6_K"
        elif f == "MXFP4_MOE":
            new = "MXFP4" if len(t.ne) > 2 and t.ne[2] > 1 else "Q8_0"
        elif cat == "TOKEN_EMBD":
            if f in ("IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M"):
                new = "Q2_K"
            elif f in ("IQ2_S", "IQ2_M", "IQ3_XXS"):
                new = "IQ3_S"
            elif f in ("TQ1_0", "TQ2_0"):
                new = "Q4_K"
        elif f in IQ2_FAM:
            if cat in self.attn_v_cats:
                if m.n_gqa >= 4 or m.n_expert >= 4:
                    new = "Q4_K"
                else:
                    new = "IQ3_S" if f in ("IQ2_S", "IQ2_M") else "Q2_K"
                self.i_attention_wv += 1
            elif m.n_expert == 8 and cat == "K":
                new = "Q4_K"
            elif cat == "DOWN":
                if self.i_ffn_down < self.n_ffn // 8:
                    new = "IQ3_S" if f in ("IQ2_S", "IQ2_M") else "Q2_K"
                self.i_ffn_down += 1
            elif cat == "O":
                if m.n_expert == 8:
                    new = "Q5_K"
                elif f in ("IQ1_S", "IQ1_M"):
                    new = "IQ2_XXS"
                elif f in ("IQ2_S", "IQ2_M"):
                    new = "IQ3_S"
        elif cat in self.attn_v_cats:
            i, n = self.i_attention_wv, self.n_attention_wv
            if f == "Q2_K":
                new = "Q4_K" if m.n_gqa >= 4 else "Q3_K"
            elif f == "Q2_K_S" and m.n_gqa >= 4:
                new = "Q4_K"
            elif f == "IQ3_XXS":
                new = "Q4_K" if m.n_gqa >= 4 else ("IQ3_S" if not self.imatrix else "IQ3_XXS")
            elif f in ("IQ3_XS", "IQ3_S") and m.n_gqa >= 4:
                new = "Q4_K"
            elif f == "IQ3_M":
                new = "Q4_K"
            elif f == "Q3_K_M":
                new = "Q5_K" if i < 2 else "Q4_K"
            elif f == "Q3_K_L":
                new = "Q5_K"
            elif f in ("IQ4_NL", "IQ4_XS") and m.n_gqa >= 4:
                new = "Q5_K"
            elif f in ("Q4_K_M", "Q5_K_M") and use_more_bits(i, n):
                new = "Q6_K"
            elif f == "Q4_K_S" and i < 4:
                new = "Q5_K"
            if m.is_70b and new in ("Q3_K", "Q4_K"):
                new = "Q5_K"
            if m.n_expert == 8:
                new = "Q8_0"
            self.i_attention_wv += 1
        elif cat == "K":
            if m.n_expert == 8:
                new = "Q8_0"
            elif f == "IQ3_XS":
                new = "IQ3_XXS"
            elif f == "IQ3_XXS":
                new = "IQ2_S"
        elif cat == "Q":
            if f == "IQ3_XS":
                new = "IQ3_XXS"
            elif f == "IQ3_XXS":
                new = "IQ2_S"
        elif cat == "DOWN":
            il, nl = self.layer_of(self.i_ffn_down, t.name), self.n_ffn
            falcon = m.arch == "falcon"
            if f == "Q2_K":
                new = "Q3_K"
            elif f == "Q2_K_S":
                if il < nl // 8:
                    new = "Q4_K"
            elif f == "IQ3_XXS" and not self.imatrix:
                new = "Q4_K" if il < nl // 8 else "Q3_K"
            elif f == "Q3_K_M":
                new = ("Q5_K" if il < nl // 16 else
                       "Q4_K" if (not falcon or use_more_bits(il, nl)) else "Q3_K")
            elif f == "IQ3_M" and (il < nl // 8 or (m.n_expert == 8 and use_more_bits(il, nl))):
                new = "Q4_K"
            elif f == "Q3_K_L":
                new = "Q4_K" if falcon else "Q5_K"
            elif f == "Q4_K_M":
                if falcon:
                    new = "Q6_K" if il < nl // 16 else ("Q5_K" if use_more_bits(il, nl) else "Q4_K")
                elif use_more_bits(il, nl):
                    new = "Q6_K"
            elif il < nl // 8 and f in ("IQ4_NL", "IQ4_XS") and not self.imatrix:
                new = "Q5_K"
            elif f == "Q5_K_M" and use_more_bits(il, nl):
                new = "Q6_K"
            elif f == "Q4_K_S" and not falcon and il < nl // 8:
                new = "Q5_K"
            elif f in ("Q4_0", "Q5_0") and self.imatrix and il < nl // 8:
                new = "Q4_1" if f == "Q4_0" else "Q5_1"
            self.i_ffn_down += 1
        elif cat == "O":
            if m.arch != "falcon":
                if m.n_expert == 8:
                    if f in ("Q2_K", "IQ3_XS", "IQ3_XXS", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S",
                             "Q4_K_M", "IQ3_S", "IQ3_M", "IQ4_XS"):
                        new = "Q5_K"
                else:
                    new = {"Q2_K": "Q3_K", "IQ3_XXS": "IQ3_S", "Q3_K_M": "Q4_K", "Q3_K_L": "Q5_K",
                           "IQ3_M": "Q4_K"}.get(f, new)
            elif f == "Q3_K_L":
                new = "Q4_K"
        elif cat == "QKV":      # reached only under --rules legacy (b8973 sends QKV to the attn_v rules)
            if f in ("Q3_K_M", "Q3_K_L", "IQ3_M"):
                new = "Q4_K"
            elif f == "Q4_K_M":
                new = "Q5_K"
            elif f == "Q5_K_M":
                new = "Q6_K"
        elif cat == "GATE":
            il, nl = self.layer_of(self.i_ffn_gate, t.name), self.n_ffn
            if f == "IQ3_XS" and nl // 8 <= il < 7 * nl // 8:
                new = "IQ3_XXS"
            self.i_ffn_gate += 1
        elif cat == "UP":
            il, nl = self.layer_of(self.i_ffn_up, t.name), self.n_ffn
            if f == "IQ3_XS" and nl // 8 <= il < 7 * nl // 8:
                new = "IQ3_XXS"
            self.i_ffn_up += 1
        return new

    def fallback(self, t: T, new: str) -> str:
        """tensor_type_fallback (b8973); legacy = the switch at the end of the old get_type."""
        if t.ne[0] % blck(new) == 0:
            return new
        self.n_fallback += 1
        table = {"IQ1_S": "IQ4_NL", "IQ1_M": "IQ4_NL", "IQ2_XXS": "IQ4_NL", "IQ2_XS": "IQ4_NL",
                 "IQ2_S": "IQ4_NL", "IQ3_XXS": "IQ4_NL", "IQ3_S": "IQ4_NL", "IQ4_XS": "IQ4_NL",
                 "Q2_K": "Q4_0", "Q3_K": "Q4_0", "TQ1_0": "Q4_0", "TQ2_0": "Q4_0",
                 "Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0"}
        if self.rules == "legacy":
            table.update({"Q2_K": "IQ4_NL", "Q3_K": "IQ4_NL"})
        if new not in table:
            raise ValueError(f"{t.name}: no fallback for {new} with ne0={t.ne[0]}")
        r = table[new]
        return r if t.ne[0] % blck(r) == 0 else "F16"

    def run(self, outtype: str = "BF16") -> None:
        """Assign t.type / t.nbytes. `outtype`: the float type convert_hf_to_gguf wrote (the input
        of llama-quantize); it is what every tensor llama-quantize does not quantize keeps."""
        for t in self.m.tensors:
            src = outtype if t.src == "W" else t.src
            if self.ftype in ("F32", "F16", "BF16"):
                # a convert --outtype f32/f16/bf16 file: 2-D+ weights in that type, the rest f32
                t.type = src if t.src != "W" else self.ftype
            elif not allows_quantization(t):
                t.type = src
            else:
                new = self.default
                if is_quantized(self.default):
                    new = self.impl(t, new, category(t.name))
                    new = self.fallback(t, new)
                t.type = new
            t.nbytes = nbytes(t.type, t.ne)


# ----------------------------------------------------------------------------- header estimate
def gguf_string(s: str) -> int:
    return 8 + len(s.encode())


def tensor_info_bytes(ts: list[T]) -> int:
    """Exact: per tensor name (u64 len + bytes), n_dims u32, ne i64 * n_dims, type i32, offset u64."""
    return sum(gguf_string(t.name) + 4 + 8 * len(t.ne) + 4 + 8 for t in ts)


# Tokenizer KV bytes: n_vocab * (8 + avg token bytes) [tokens] + 4 * n_vocab [token_type]
# (+ 4 * n_vocab [scores], SentencePiece only) + n_merges * (8 + avg merge bytes) [BPE merges].
# Average lengths measured on llama.cpp's models/ggml-vocab-{llama-spm,phi-3,gpt-2}.gguf
# (3142f1db): SPM 32000 tokens -> 466,964 B of strings (6.59 B/token + 8);
# GPT-2 BPE 50257 tokens -> 758,836 B (7.10 B/token + 8), 50000 merges -> 806,349 B (8.13 B + 8).
# [inferred] larger BPE vocabularies have longer tokens and merges; the per-family figures below
# are estimates, not measurements.
TOKENIZERS = {
    # family: (kind, n_vocab, n_merges, avg token bytes, avg merge bytes)
    "llama3": ("bpe", 128256, 280147, 7.0, 9.5),
    "qwen2": ("bpe", 151936, 151387, 6.8, 9.5),
    "gpt-oss": ("bpe", 201088, 446189, 7.0, 9.5),
    "spm32k": ("spm", 32000, 0, 6.59, 0),
    "phi3": ("spm", 32064, 0, 6.59, 0),
    "gemma": ("spm", 256000, 0, 8.0, 0),
    "gemma3": ("spm", 262144, 0, 8.0, 0),
    "smollm": ("bpe", 49152, 48900, 7.0, 9.0),
    "phi4": ("bpe", 100352, 100000, 7.0, 9.5),
}


def tokenizer_bytes(family: str, n_vocab: int | None = None) -> int:
    kind, nv, nm, lt, lm = TOKENIZERS[family]
    nv = n_vocab or nv
    b = int(nv * (8 + lt)) + 4 * nv + int(nm * (8 + lm))
    if kind == "spm":
        b += 4 * nv
    return b


# ----------------------------------------------------------------------------- main
def predict(cfg: dict, ftype: str, imatrix: bool = False, rules: str = "b8973",
            n_vocab: int | None = None, tied: bool | None = None, outtype: str = "BF16",
            deepseek_split_kv_b: bool = True, tied_embd_as_output: bool = True) -> dict:
    ftype = FTYPE_ALIASES.get(ftype.upper(), ftype.upper())
    m = build(cfg, n_vocab=n_vocab, tied=tied, deepseek_split_kv_b=deepseek_split_kv_b)
    q = Quantizer(m, ftype, imatrix=imatrix, rules=rules, tied_embd_as_output=tied_embd_as_output)
    q.run(outtype=outtype)
    by_type: dict[str, list[int]] = {}
    for t in m.tensors:
        c = by_type.setdefault(t.type, [0, 0])
        c[0] += 1
        c[1] += t.nbytes
    raw = sum(t.nbytes for t in m.tensors)
    padded = sum(pad(t.nbytes) for t in m.tensors)
    n_el = sum(_prod(t.ne) for t in m.tensors)
    return {
        "arch": m.arch, "ftype": ftype, "rules": rules, "imatrix": imatrix,
        "n_tensors": len(m.tensors), "n_elements": n_el,
        "tensor_bytes": raw,                 # sum of ggml_nbytes (llama.cpp's "file size" print)
        "tensor_data_bytes": padded,         # with each tensor padded to 32 B (the data section)
        "tensor_info_bytes": tensor_info_bytes(m.tensors),
        "bpw": round(raw * 8 / n_el, 4),
        "by_type": {k: {"count": v[0], "bytes": v[1]} for k, v in sorted(by_type.items())},
        "n_fallback": q.n_fallback,
        "tensors": [{"name": t.name, "ne": t.ne, "type": t.type, "bytes": t.nbytes} for t in m.tensors],
    }


def _prod(xs):
    r = 1
    for x in xs:
        r *= x
    return r


def load_config(path: str) -> dict:
    if not os.path.exists(path):
        here = os.path.dirname(os.path.abspath(__file__))
        alt = os.path.join(here, "..", "..", "..", "crates", "core", "tests", "fixtures",
                           "hf_configs", path if path.endswith(".json") else path + ".json")
        if os.path.exists(alt):
            path = alt
    with open(path) as f:
        return json.load(f)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", required=True, help="config.json path or a hf_configs fixture id")
    ap.add_argument("--ftype", required=True, help="llama-quantize type: Q4_K_M, Q8_0, IQ4_XS, "
                    "MXFP4_MOE, F16, BF16, ...")
    ap.add_argument("--imatrix", action="store_true", help="an importance matrix was given "
                    "(changes Q4_0/Q5_0 ffn_down, IQ4_NL/IQ4_XS ffn_down, IQ3_XXS)")
    ap.add_argument("--rules", choices=["b8973", "legacy"], default="b8973",
                    help="legacy = llama.cpp before build 8266 (PR #19770, 2026-03-10)")
    ap.add_argument("--outtype", default="BF16", help="float type of the converted input file")
    ap.add_argument("--n-vocab", type=int, help="rows of token_embd/output if not vocab_size")
    ap.add_argument("--tied", choices=["yes", "no"], help="override tie_word_embeddings")
    ap.add_argument("--deepseek-kv-b", choices=["split", "fused"], default="split",
                    help="fused = files converted before build 5137 (attn_kv_b, no attn_k_b/v_b)")
    ap.add_argument("--old-tied-embd", action="store_true",
                    help="llama.cpp before build 2248 (2024-02-22): tied token_embd at the default type")
    ap.add_argument("--tokenizer", choices=sorted(TOKENIZERS), help="add a header estimate")
    ap.add_argument("--list", action="store_true", help="print every tensor")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    cfg = load_config(a.config)
    r = predict(cfg, a.ftype, imatrix=a.imatrix, rules=a.rules, n_vocab=a.n_vocab,
                tied=None if a.tied is None else a.tied == "yes", outtype=a.outtype.upper(),
                deepseek_split_kv_b=a.deepseek_kv_b == "split",
                tied_embd_as_output=not a.old_tied_embd)
    if a.tokenizer:
        r["tokenizer_kv_bytes_est"] = tokenizer_bytes(a.tokenizer, a.n_vocab)
        r["file_bytes_est"] = pad(24 + r["tensor_info_bytes"] + r["tokenizer_kv_bytes_est"] + 4096) \
            + r["tensor_data_bytes"]
    if a.json:
        if not a.list:
            r = {k: v for k, v in r.items() if k != "tensors"}
        json.dump(r, sys.stdout, indent=1)
        print()
        return 0
    if a.list:
        for t in r["tensors"]:
            print(f"{t['name']:40s} {str(t['ne']):28s} {t['type']:8s} {t['bytes']:>14,}")
    print(f"arch={r['arch']} ftype={r['ftype']} rules={r['rules']} imatrix={r['imatrix']}")
    for k, v in r["by_type"].items():
        print(f"  {k:8s} {v['count']:5d} tensors {v['bytes']:>16,} B")
    print(f"tensors {r['n_tensors']}, elements {r['n_elements']:,}, bytes {r['tensor_bytes']:,} "
          f"({r['tensor_bytes'] / 2**30:.2f} GiB, {r['bpw']} bpw); data section "
          f"{r['tensor_data_bytes']:,}; tensor infos {r['tensor_info_bytes']:,}; "
          f"fallbacks {r['n_fallback']}")
    if "file_bytes_est" in r:
        print(f"tokenizer KV ~{r['tokenizer_kv_bytes_est']:,} B; file ~{r['file_bytes_est']:,} B")
    return 0


if __name__ == "__main__":
    sys.exit(main())
