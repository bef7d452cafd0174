"""Text configs of google/gemma-3n-E2B-it and google/gemma-3n-E4B-it
(config.json `text_config`) as far as public copies give them; see
SOURCES.md. Keys left out take transformers 5.23's Gemma3nTextConfig
defaults, which the copies also show (rope_theta 1e6, rope_local_base_freq
1e4, rms_norm_eps 1e-6, final_logit_softcapping 30, head_dim 256,
query_pre_attn_scalar 256, sliding_window 512, max_position_embeddings 32768,
layer_types (i+1)%5==0 -> full)."""

COMMON = {
    "model_type": "gemma3n_text",
    "vocab_size": 262400,
    "vocab_size_per_layer_input": 262144,
    "hidden_size": 2048,
    "hidden_size_per_layer_input": 256,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "head_dim": 256,
    "max_position_embeddings": 32768,
    "sliding_window": 512,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0,
    "hidden_activation": "gelu_pytorch_tanh",
    "final_logit_softcapping": 30.0,
    "altup_active_idx": 0,
    "altup_coef_clip": 120.0,
    "altup_correct_scale": True,
    "altup_lr_multiplier": 1.0,
    "altup_num_inputs": 4,
    "laurel_rank": 64,
    "query_pre_attn_scalar": 256,
    "attention_bias": False,
    "torch_dtype": "bfloat16",
}


def _types(n):
    return ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention" for i in range(n)]


E2B = dict(COMMON, num_hidden_layers=30, intermediate_size=[8192] * 30,
           num_kv_shared_layers=10, layer_types=_types(30),
           activation_sparsity_pattern=[0.95] * 10 + [0.0] * 20)
E4B = dict(COMMON, num_hidden_layers=35, intermediate_size=[16384] * 35,
           num_kv_shared_layers=15, layer_types=_types(35),
           activation_sparsity_pattern=[0.95] * 10 + [0.0] * 25)

# A shrunk config with every mechanism: 10 layers (2 full: 4 and 9), the
# last 4 sharing KV (so layers 0..5 own a cache: 1 full (4), 5 sliding;
# store layers: 3 (sliding) and 4 (full)), window 8.
TINY = dict(COMMON, vocab_size=64, vocab_size_per_layer_input=48, hidden_size=64,
            hidden_size_per_layer_input=8, num_attention_heads=2, num_key_value_heads=1,
            head_dim=32, num_hidden_layers=10, intermediate_size=[128] * 10,
            num_kv_shared_layers=4, layer_types=_types(10), sliding_window=8,
            max_position_embeddings=4096, laurel_rank=4,
            activation_sparsity_pattern=[0.95] * 2 + [0.0] * 8, query_pre_attn_scalar=32)
