#!/usr/bin/env python3
"""Write tiny Nemotron-H GGUFs that llama.cpp b10488 loads, to read how it allocates the hybrid
memory (a KV cache for the attention layers only, an RS buffer for the Mamba-2 layers only, nothing
for the MLP / MoE layers), the model buffer and the compute buffer:

- tiny-nemotronh-f16.gguf (arch `nemotron_h`, as NVIDIA-Nemotron-Nano-9B/12B-v2, Nemotron-H-8B/47B):
  10 layers, hybrid_override_pattern "M-M*-M-M*-" (4 Mamba-2, 2 attention, 4 MLP);
- tiny-nemotronh-moe-f16.gguf (arch `nemotron_h_moe`, as NVIDIA-Nemotron-3-Nano-30B-A3B):
  10 layers, pattern "MEM*EMEM*E" (4 Mamba-2, 2 attention, 4 MoE);
- tiny-nemotronh-moe-mtp-f16.gguf: the MoE file plus one trailing NextN/MTP block (block_count 11,
  nextn_predict_layers 1), as the converter writes a checkpoint with num_nextn_predict_layers 1.

    ~/.gt-venv/bin/python scripts/measure/families/nemotron_h/nemotronh_gguf.py OUT_DIR

Keys and tensors are those b10488's converter writes for NemotronHForCausalLM
(`conversion/nemotron.py` `NemotronHModel` over `conversion/granite.py` `GraniteHybridModel`,
`GraniteMoeModel`, `GraniteModel`, `conversion/llama.py` `LlamaModel`, `conversion/base.py`
`TextModel.set_gguf_parameters`) and its loader reads (`src/models/nemotron-h.cpp`
`load_arch_hparams`, `load_arch_tensors`):

- Keys: block_count; context_length 2^20 (GraniteHybridModel overwrites max_position_embeddings when
  the model has SSM layers and is not Bamba); embedding_length; feed_forward_length as a PER-LAYER
  ARRAY (intermediate_size on '-' layers, moe_intermediate_size on 'E' layers, 0 elsewhere);
  attention.head_count (scalar); attention.head_count_kv as a PER-LAYER ARRAY (num_key_value_heads on
  '*' layers, 0 elsewhere); attention.key_length = value_length = head_dim; rope.dimension_count =
  hidden_size / num_attention_heads (GraniteModel pops head_dim, LlamaModel then falls back);
  rope.freq_base only when rope_theta is in config.json (Nemotron 3 Nano has it, Nano v2 not);
  rope.scaling.finetuned false; attention.layer_norm_rms_epsilon (rms_norm_eps or norm_eps) and
  attention.layer_norm_epsilon (layer_norm_epsilon; REQUIRED by the loader, nemotron-h.cpp l.21);
  vocab_size; ssm.conv_kernel (conv_kernel), ssm.state_size (ssm_state_size), ssm.group_count
  (n_groups), ssm.inner_size (mamba_num_heads * mamba_head_dim), ssm.time_step_rank
  (mamba_num_heads); MoE only: expert_count (n_routed_experts), expert_used_count
  (num_experts_per_tok), expert_group_count (n_group), expert_group_used_count (topk_group),
  expert_feed_forward_length (moe_intermediate_size), expert_shared_feed_forward_length
  (moe_shared_expert_intermediate_size), expert_shared_count (n_shared_experts),
  expert_weights_norm (norm_topk_prob), expert_weights_scale (routed_scaling_factor); MTP only:
  nextn_predict_layers.
- Tensors (ggml ne order in the comments, numpy shapes reversed): token_embd {n_embd, n_vocab},
  output_norm, output {n_embd, n_vocab} (tie_word_embeddings false in every Nemotron-H config);
  every layer ONE norm, attn_norm (HF `backbone.layers.N.norm`), no ffn_norm. Mamba layers
  ('M'): ssm_in {n_embd, 2 d_inner + 2 n_group d_state + n_head}, ssm_conv1d.weight {d_conv,
  d_inner + 2 n_group d_state} (F32), ssm_conv1d.bias (F32, use_conv_bias true), ssm_dt.bias {n_head}
  (F32), ssm_a, ssm_d {1, n_head} (F32: no ".weight"), ssm_norm.weight {d_inner / n_group, n_group}
  (F32), ssm_out {d_inner, n_embd}. Attention layers ('*'): attn_q {n_embd, n_head*head_dim},
  attn_k / attn_v {n_embd, n_head_kv*head_dim}, attn_output {n_head*head_dim, n_embd}; no biases
  (attention_bias false), no q/k norm. MLP layers ('-'): ffn_up {n_embd, n_ff}, ffn_down {n_ff,
  n_embd} (squared ReLU, no gate; mlp_bias false). MoE layers ('E'): ffn_gate_inp {n_embd, n_expert}
  (F32: FFN_GATE_INP), exp_probs_b.bias {n_expert} (F32, the e_score_correction_bias), ffn_up_exps
  {n_embd, n_ff_exp, n_expert}, ffn_down_exps {n_ff_exp, n_embd, n_expert}, ffn_up_shexp {n_embd,
  n_ff_shexp}, ffn_down_shexp {n_ff_shexp, n_embd} (no gate anywhere). MTP block (index n_layer):
  nextn.enorm, nextn.hnorm {n_embd}, nextn.eh_proj {2 n_embd, n_embd}, nextn.shared_head_norm,
  attn_norm, attn_q/k/v/output, post_attention_norm, and the MoE tensors above.
  Matrices f16, the rest f32 (`conversion/base.py` l.934-972).

Random weights, a byte vocabulary (../glm4moe_gguf.py's `t` and `vocab`, vocabulary 1024).
Shapes (all row lengths multiples of 256, so llama-quantize's K-quants need no fallback):
dense: n_embd 512, 8 heads of head_dim 128 (NOT n_embd / n_head = 64, as Nano v2's 4480 / 40 = 112
vs 128), 2 KV heads (n_embd_k_gqa 256); Mamba 16 heads of 48 (d_inner 768), d_state 32, n_group 4,
d_conv 4; MLP n_ff 1024. MoE: the same attention; Mamba 16 heads of 64 (d_inner 1024), d_state 32,
n_group 4, d_conv 4; 16 routed experts (4 used) of 256, 1 shared expert of 512, n_group 1 /
topk_group 1, norm_topk_prob true, routed_scaling_factor 2.5.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import gguf

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from glm4moe_gguf import run, save, t, vocab  # noqa: E402

N_VOCAB = 1024  # glm4moe_gguf.vocab writes 1024 tokens
N_EMBD, N_HEAD, HEAD_DIM, N_KV = 512, 8, 128, 2
D_STATE, N_GROUP, D_CONV = 32, 4, 4

DENSE = dict(pattern="M-M*-M-M*-", n_ssm_head=16, ssm_head_dim=48, n_ff=1024)
MOE = dict(pattern="MEM*EMEM*E", n_ssm_head=16, ssm_head_dim=64,
           n_expert=16, n_expert_used=4, n_ff_exp=256, n_ff_shexp=512)


def attention(w, rng, p: str) -> None:
    # numpy shapes are the reverse of ggml's ne
    w.add_tensor(p + "attn_q.weight", t(rng, N_HEAD * HEAD_DIM, N_EMBD))
    w.add_tensor(p + "attn_k.weight", t(rng, N_KV * HEAD_DIM, N_EMBD))
    w.add_tensor(p + "attn_v.weight", t(rng, N_KV * HEAD_DIM, N_EMBD))
    w.add_tensor(p + "attn_output.weight", t(rng, N_EMBD, N_HEAD * HEAD_DIM))


def moe(w, rng, p: str, c: dict) -> None:
    f32 = np.float32
    w.add_tensor(p + "ffn_gate_inp.weight", t(rng, c["n_expert"], N_EMBD, dtype=f32))
    w.add_tensor(p + "exp_probs_b.bias", t(rng, c["n_expert"], dtype=f32))
    w.add_tensor(p + "ffn_up_exps.weight", t(rng, c["n_expert"], c["n_ff_exp"], N_EMBD))
    w.add_tensor(p + "ffn_down_exps.weight", t(rng, c["n_expert"], N_EMBD, c["n_ff_exp"]))
    w.add_tensor(p + "ffn_up_shexp.weight", t(rng, c["n_ff_shexp"], N_EMBD))
    w.add_tensor(p + "ffn_down_shexp.weight", t(rng, N_EMBD, c["n_ff_shexp"]))


def write(path: str, c: dict, is_moe: bool, mtp: bool, rng) -> None:
    arch = "nemotron_h_moe" if is_moe else "nemotron_h"
    pat = c["pattern"]
    n_layer = len(pat)
    n_all = n_layer + (1 if mtp else 0)
    d_inner = c["n_ssm_head"] * c["ssm_head_dim"]
    n_head_ssm = c["n_ssm_head"]
    conv_dim = d_inner + 2 * N_GROUP * D_STATE
    d_in_proj = 2 * d_inner + 2 * N_GROUP * D_STATE + n_head_ssm
    f32 = np.float32

    w = gguf.GGUFWriter(path, arch)
    w.add_name("vramfit tiny " + arch + (" mtp" if mtp else ""))
    w.add_block_count(n_all)
    w.add_context_length(2**20)
    w.add_embedding_length(N_EMBD)
    ff = c["n_ff_exp"] if is_moe else c["n_ff"]
    mlp_char = "E" if is_moe else "-"
    # the MTP block is registered as both an attention and an MLP/MoE layer by the converter
    w.add_feed_forward_length([ff if (i >= n_layer or pat[i] == mlp_char) else 0 for i in range(n_all)])
    w.add_head_count(N_HEAD)
    w.add_head_count_kv([N_KV if (i >= n_layer or pat[i] == "*") else 0 for i in range(n_all)])
    w.add_key_length(HEAD_DIM)
    w.add_value_length(HEAD_DIM)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    if is_moe:
        w.add_rope_freq_base(10000.0)
    w.add_rope_scaling_finetuned(False)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_layer_norm_eps(1e-5)
    w.add_vocab_size(N_VOCAB)
    if is_moe:
        w.add_expert_count(c["n_expert"])
        w.add_expert_used_count(c["n_expert_used"])
        w.add_expert_group_count(1)
        w.add_expert_group_used_count(1)
        w.add_expert_feed_forward_length(c["n_ff_exp"])
        w.add_expert_shared_feed_forward_length(c["n_ff_shexp"])
        w.add_expert_shared_count(1)
        w.add_expert_weights_norm(True)
        w.add_expert_weights_scale(2.5)
    if mtp:
        w.add_nextn_predict_layers(1)
    w.add_ssm_conv_kernel(D_CONV)
    w.add_ssm_state_size(D_STATE)
    w.add_ssm_group_count(N_GROUP)
    w.add_ssm_inner_size(d_inner)
    w.add_ssm_time_step_rank(n_head_ssm)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    vocab(w)

    w.add_tensor("token_embd.weight", t(rng, N_VOCAB, N_EMBD))
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=f32))
    w.add_tensor("output.weight", t(rng, N_VOCAB, N_EMBD))
    for i in range(n_layer):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, dtype=f32))
        k = pat[i]
        if k == "M":
            w.add_tensor(p + "ssm_in.weight", t(rng, d_in_proj, N_EMBD))
            w.add_tensor(p + "ssm_conv1d.weight", t(rng, conv_dim, D_CONV, dtype=f32))
            w.add_tensor(p + "ssm_conv1d.bias", t(rng, conv_dim, dtype=f32))
            w.add_tensor(p + "ssm_dt.bias", t(rng, n_head_ssm, dtype=f32))
            w.add_tensor(p + "ssm_a", -np.arange(1, n_head_ssm + 1, dtype=f32).reshape(n_head_ssm, 1))
            w.add_tensor(p + "ssm_d", np.ones((n_head_ssm, 1), dtype=f32))
            w.add_tensor(p + "ssm_norm.weight", np.ones((N_GROUP, d_inner // N_GROUP), dtype=f32))
            w.add_tensor(p + "ssm_out.weight", t(rng, N_EMBD, d_inner))
        elif k == "*":
            attention(w, rng, p)
        elif k == "-":
            w.add_tensor(p + "ffn_up.weight", t(rng, c["n_ff"], N_EMBD))
            w.add_tensor(p + "ffn_down.weight", t(rng, N_EMBD, c["n_ff"]))
        elif k == "E":
            moe(w, rng, p, c)
        else:
            raise ValueError(k)
    if mtp:
        p = f"blk.{n_layer}."
        w.add_tensor(p + "nextn.enorm.weight", np.ones(N_EMBD, dtype=f32))
        w.add_tensor(p + "nextn.hnorm.weight", np.ones(N_EMBD, dtype=f32))
        w.add_tensor(p + "nextn.eh_proj.weight", t(rng, N_EMBD, 2 * N_EMBD))
        w.add_tensor(p + "nextn.shared_head_norm.weight", np.ones(N_EMBD, dtype=f32))
        w.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, dtype=f32))
        attention(w, rng, p)
        w.add_tensor(p + "post_attention_norm.weight", np.ones(N_EMBD, dtype=f32))
        moe(w, rng, p, c)
    save(w)


def main(out: str) -> None:
    rng = np.random.default_rng(7)
    write(os.path.join(out, "tiny-nemotronh-f16.gguf"), DENSE, False, False, rng)
    write(os.path.join(out, "tiny-nemotronh-moe-f16.gguf"), MOE, True, False, rng)
    rng = np.random.default_rng(7)
    rng.standard_normal(1)  # a different stream; the weights do not matter
    write(os.path.join(out, "tiny-nemotronh-moe-mtp-f16.gguf"), MOE, True, True, rng)


if __name__ == "__main__":
    run(main)
