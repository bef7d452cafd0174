#!/usr/bin/env python3
"""Save tiny random Hugging Face checkpoints (transformers 5.23, torch 2.15: ~/.gt-venv) for
llama.cpp b10488's own converter (convert_tiny.py):

    ~/.gt-venv/bin/python make_hf_tiny.py OUT_DIR

  OUT_DIR/hf-mistral3-m4   Mistral3ForConditionalGeneration, text_config = Mistral4Config (how
                           Mistral-Small-4-119B-2603 is published), tiny Pixtral vision tower.
  OUT_DIR/hf-mistral4-lm   Mistral4ForCausalLM alone (text-only architecture string).
  OUT_DIR/hf-mistral3-dsv3 Mistral3ForConditionalGeneration with a deepseek_v3 text config (a
                           transformers-format Mistral Large 3 layout), to see which branch of
                           conversion/mistral3.py it takes.

Text shape as tiny_gguf.py's mistral4 (ne0 divisibility by 256 as the real model): hidden 512,
4 layers (all MoE), 4 heads, q_lora 256, kv_lora 256, qk_nope 64, qk_rope 64, v_head 128,
16 experts x 256 (top-4) + 1 shared, vocabulary 1024. Weights are saved as bf16.
"""
import os
import sys

import torch
from transformers import (
    DeepseekV3Config,
    Mistral3Config,
    Mistral3ForConditionalGeneration,
    Mistral4Config,
    Mistral4ForCausalLM,
    PixtralVisionConfig,
)

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/m4hf"
torch.manual_seed(0)

text = dict(
    vocab_size=1024, hidden_size=512, intermediate_size=512, moe_intermediate_size=256,
    num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=4, n_shared_experts=1,
    n_routed_experts=16, num_experts_per_tok=4, kv_lora_rank=256, q_lora_rank=256,
    qk_rope_head_dim=64, qk_nope_head_dim=64, v_head_dim=128, first_k_dense_replace=0,
    max_position_embeddings=1048576, tie_word_embeddings=False,
)
vision = PixtralVisionConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=2, head_dim=32, image_size=64, patch_size=16)


def save(model, name):
    path = os.path.join(out, name)
    model.to(torch.bfloat16).save_pretrained(path)
    n = sum(p.numel() for p in model.parameters())
    print(f"{path}: {type(model).__name__}, {n:,} parameters")


m4 = Mistral4Config(**text)
cfg = Mistral3Config(vision_config=vision, text_config=m4, tie_word_embeddings=False)
save(Mistral3ForConditionalGeneration(cfg), "hf-mistral3-m4")
save(Mistral4ForCausalLM(Mistral4Config(**text)), "hf-mistral4-lm")

ds = DeepseekV3Config(
    vocab_size=1024, hidden_size=512, intermediate_size=512, moe_intermediate_size=256,
    num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=4, n_shared_experts=1,
    n_routed_experts=16, num_experts_per_tok=2, kv_lora_rank=256, q_lora_rank=256,
    qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128, first_k_dense_replace=1,
    n_group=1, topk_group=1, tie_word_embeddings=False,
)
save(Mistral3ForConditionalGeneration(Mistral3Config(vision_config=vision, text_config=ds,
                                                     tie_word_embeddings=False)), "hf-mistral3-dsv3")
