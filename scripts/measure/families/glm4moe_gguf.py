#!/usr/bin/env python3
"""Write a tiny GLM-4.5 (`glm4moe`) GGUF that llama.cpp b10488 loads, with one MTP (NextN) layer,
to read how llama.cpp allocates it: the NextN layer's weights (`TENSOR_SKIP`) and its KV cache.

    ~/.llama-venv/bin/python scripts/measure/families/glm4moe_gguf.py OUT_DIR

Random f16 weights, a byte vocabulary (as scripts/measure/llamacpp/devices/make_models.py in main).
Shape: 3 blocks = 2 layers + 1 NextN layer (`nextn_predict_layers` 1), the first dense
(`leading_dense_block_count` 1), n_embd 512, 8 heads of 64, 2 KV heads, rotary on 32 of 64
(`rope.dimension_count`, GLM's partial_rotary_factor 0.5), q/k/v biases, 8 experts (2 used) of
512, one shared expert, vocabulary 1024, context 8192.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import gguf

N_VOCAB, N_EMBD, N_HEAD, N_KV, HEAD = 1024, 512, 8, 2, 64
N_LAYER, N_NEXTN, N_FF, N_EXP, N_FF_EXP = 2, 1, 1024, 8, 512
if os.environ.get("SMALL"):
    # The test fixture (crates/core/tests/fixtures/gguf/tiny-glm4moe.gguf): the same layout
    # at n_embd 64, 2 heads of 32, 1 KV head, 4 experts of 64, vocabulary 300.
    N_VOCAB, N_EMBD, N_HEAD, N_KV, HEAD = 300, 64, 2, 1, 32
    N_FF, N_EXP, N_FF_EXP = 128, 4, 64


def vocab(w: gguf.GGUFWriter) -> None:
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)]
    types = [2, 3, 3] + [6] * 256
    i = 0
    while len(tokens) < N_VOCAB:
        tokens.append("\u2581" + "".join(chr(97 + (i // 26 ** k) % 26) for k in range(3)))
        types.append(1)
        i += 1
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([-float(j) for j in range(N_VOCAB)])
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)


def t(rng, *shape, dtype=np.float16):
    return (rng.standard_normal(shape) * 0.02).astype(dtype)


def save(w: gguf.GGUFWriter) -> None:
    """Write the header, the metadata and the tensors, and close the file."""
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def run(main) -> None:
    """`main(OUT_DIR)`, the directory from the command line (default `.`), made if missing."""
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    main(out)


def main(out: str) -> None:
    rng = np.random.default_rng(3)
    name = "tiny-glm4moe.gguf" if os.environ.get("SMALL") else "tiny-glm4moe-f16.gguf"
    path = os.path.join(out, name)
    w = gguf.GGUFWriter(path, "glm4moe")
    blocks = N_LAYER + N_NEXTN
    w.add_name("vramfit tiny glm4moe")
    w.add_block_count(blocks)
    w.add_context_length(8192)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_KV)
    w.add_key_length(HEAD)
    w.add_value_length(HEAD)
    w.add_rope_dimension_count(HEAD // 2)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_expert_count(N_EXP)
    w.add_expert_used_count(2)
    w.add_expert_feed_forward_length(N_FF_EXP)
    w.add_expert_shared_count(1)
    w.add_leading_dense_block_count(1)
    w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    w.add_expert_weights_scale(1.0)
    w.add_expert_weights_norm(True)
    w.add_nextn_predict_layers(N_NEXTN)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    vocab(w)
    w.add_tensor("token_embd.weight", t(rng, N_VOCAB, N_EMBD))
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    w.add_tensor("output.weight", t(rng, N_VOCAB, N_EMBD))
    for i in range(blocks):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        w.add_tensor(p + "attn_q.weight", t(rng, N_HEAD * HEAD, N_EMBD))
        w.add_tensor(p + "attn_q.bias", np.zeros(N_HEAD * HEAD, dtype=np.float32))
        w.add_tensor(p + "attn_k.weight", t(rng, N_KV * HEAD, N_EMBD))
        w.add_tensor(p + "attn_k.bias", np.zeros(N_KV * HEAD, dtype=np.float32))
        w.add_tensor(p + "attn_v.weight", t(rng, N_KV * HEAD, N_EMBD))
        w.add_tensor(p + "attn_v.bias", np.zeros(N_KV * HEAD, dtype=np.float32))
        w.add_tensor(p + "attn_output.weight", t(rng, N_EMBD, N_HEAD * HEAD))
        w.add_tensor(p + "post_attention_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        if i == 0:
            w.add_tensor(p + "ffn_gate.weight", t(rng, N_FF, N_EMBD))
            w.add_tensor(p + "ffn_up.weight", t(rng, N_FF, N_EMBD))
            w.add_tensor(p + "ffn_down.weight", t(rng, N_EMBD, N_FF))
        else:
            w.add_tensor(p + "ffn_gate_inp.weight", t(rng, N_EXP, N_EMBD, dtype=np.float32))
            w.add_tensor(p + "exp_probs_b.bias", np.zeros(N_EXP, dtype=np.float32))
            w.add_tensor(p + "ffn_gate_exps.weight", t(rng, N_EXP, N_FF_EXP, N_EMBD))
            w.add_tensor(p + "ffn_up_exps.weight", t(rng, N_EXP, N_FF_EXP, N_EMBD))
            w.add_tensor(p + "ffn_down_exps.weight", t(rng, N_EXP, N_EMBD, N_FF_EXP))
            w.add_tensor(p + "ffn_gate_shexp.weight", t(rng, N_FF_EXP, N_EMBD))
            w.add_tensor(p + "ffn_up_shexp.weight", t(rng, N_FF_EXP, N_EMBD))
            w.add_tensor(p + "ffn_down_shexp.weight", t(rng, N_EMBD, N_FF_EXP))
        if i >= N_LAYER:
            w.add_tensor(p + "nextn.eh_proj.weight", t(rng, N_EMBD, 2 * N_EMBD))
            w.add_tensor(p + "nextn.enorm.weight", np.ones(N_EMBD, dtype=np.float32))
            w.add_tensor(p + "nextn.hnorm.weight", np.ones(N_EMBD, dtype=np.float32))
            w.add_tensor(p + "nextn.shared_head_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    save(w)


if __name__ == "__main__":
    run(main)
