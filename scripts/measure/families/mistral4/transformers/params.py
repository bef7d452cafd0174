#!/usr/bin/env python
"""Parameter / buffer counts of Mistral Small 4 and Mistral Large 3 in transformers 5.23, on the
meta device (no memory).  Run: ~/.gt-venv/bin/python params.py > params_out.txt"""
import copy, json, os, sys, warnings
warnings.filterwarnings("ignore")
import torch, transformers
from transformers import (AutoConfig, AutoModelForCausalLM, Mistral3Config,
                          Mistral3ForConditionalGeneration, DeepseekV3Config)

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name):
    d = json.load(open(os.path.join(HERE, name)))
    return {k: v for k, v in d.items() if not k.startswith("_") and k != "architectures"}


def text_cfg(d):
    d = copy.deepcopy(d)  # Mistral4Config.__post_init__ setdefault()s partial_rotary_factor into rope_parameters in place
    mt = d.pop("model_type")
    return AutoConfig.for_model(mt, **d)


def count(model):
    seen, n = set(), 0
    for p in model.parameters():
        if id(p) in seen:
            continue
        seen.add(id(p)); n += p.numel()
    nb = sum(b.numel() for b in model.buffers())
    return n, nb


def report(title, model, layer_prefix=None, dense_idx=None, moe_idx=None):
    n, nb = count(model)
    print(f"\n=== {title} ===")
    print(f"class={type(model).__name__}")
    print(f"params={n:,}  ({n/1e9:.3f} B)   buffers(numel)={nb:,}")
    tied = getattr(model.config, "tie_word_embeddings", None)
    print(f"tie_word_embeddings={tied}  tied_in_module={model.get_input_embeddings().weight is model.get_output_embeddings().weight}")
    print(f"embed_tokens={tuple(model.get_input_embeddings().weight.shape)}  lm_head={tuple(model.get_output_embeddings().weight.shape)}")
    for nm, b in model.named_buffers():
        print(f"  buffer {nm} {tuple(b.shape)} {b.dtype} persistent={nm.split('.')[-1] not in getattr(model.get_submodule('.'.join(nm.split('.')[:-1])), '_non_persistent_buffers_set', set())}")
    if layer_prefix is None:
        return
    layers = model.get_submodule(layer_prefix)
    for kind, idx in (("dense", dense_idx), ("moe", moe_idx)):
        if idx is None:
            continue
        L = layers[idx]
        tot = sum(p.numel() for p in L.parameters())
        print(f"-- layer {idx} ({kind}, mlp={type(L.mlp).__name__}) params={tot:,}")
        for nm, p in L.named_parameters():
            print(f"   {nm:45s} {str(tuple(p.shape)):22s} {p.numel():>14,}")
    # group totals
    groups = {}
    for nm, p in model.named_parameters():
        if ".experts." in nm and "shared" not in nm:
            g = "routed_experts"
        elif "shared_experts" in nm:
            g = "shared_experts"
        elif ".mlp.gate." in nm:
            g = "router"
        elif ".mlp." in nm:
            g = "dense_mlp"
        elif "self_attn" in nm:
            g = "attention"
        elif "layernorm" in nm or nm.endswith("norm.weight"):
            g = "norms"
        elif "embed_tokens" in nm:
            g = "embed_tokens"
        elif "lm_head" in nm:
            g = "lm_head"
        elif "vision_tower" in nm:
            g = "vision_tower"
        elif "multi_modal_projector" in nm:
            g = "projector"
        else:
            g = "other:" + nm
        groups[g] = groups.get(g, 0) + p.numel()
    print("-- totals by group:")
    for g, v in groups.items():
        print(f"   {g:18s} {v:>16,}")


print(f"torch {torch.__version__}  transformers {transformers.__version__}")
# transformers 5.23: "mistral4" is NOT in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES (models/auto/modeling_auto.py:760..),
# so AutoModelForCausalLM.from_config(Mistral4Config) raises ValueError.  Show it, then use the class directly.
from transformers import Mistral4ForCausalLM
try:
    with torch.device("meta"):
        AutoModelForCausalLM.from_config(text_cfg(load("tiny-mistral4.json")))
    print("AutoModelForCausalLM.from_config(Mistral4Config): OK")
except ValueError as e:
    print("AutoModelForCausalLM.from_config(Mistral4Config): ValueError:", str(e)[:120], "...")


def build_causal(cfg):
    if cfg.model_type == "mistral4":
        return Mistral4ForCausalLM(cfg)
    return AutoModelForCausalLM.from_config(cfg)

# 1. Mistral Small 4 text model
s4 = load("mistral-small-4-text.json")
with torch.device("meta"):
    m = build_causal(text_cfg(s4))
c = m.config
print(f"\nSmall 4 text config after __post_init__: head_dim={c.head_dim} qk_head_dim={c.qk_head_dim} "
      f"num_local_experts={c.num_local_experts} rope_parameters={c.rope_parameters}")
report("Mistral Small 4 text (Mistral4ForCausalLM, mistral-small-4-text.json)", m, "model.layers", None, 0)
a = m.model.layers[0].self_attn
print(f"attn scaling={a.scaling}  num_key_value_groups={a.num_key_value_groups}")
r = m.model.layers[0].mlp.gate
print(f"router weight dtype (bf16 model would be bf16) = {r.weight.dtype}; has e_score_correction_bias: {hasattr(r, 'e_score_correction_bias')}")
del m

# 2. Mistral Small 4 full multimodal (vision tower ASSUMED, see SOURCES.md)
full = json.load(open(os.path.join(HERE, "mistral-small-4.json")))
vc = {k: v for k, v in full["vision_config"].items() if not k.startswith("_")}
top = {k: v for k, v in full.items() if k not in ("text_config", "vision_config", "architectures", "model_type")
       and not k.startswith("_") and not k.endswith("_note")}
cfg = Mistral3Config(text_config=copy.deepcopy(s4), vision_config=vc, **top)
with torch.device("meta"):
    mm = Mistral3ForConditionalGeneration(cfg)
report("Mistral Small 4 multimodal (Mistral3ForConditionalGeneration, vision tower ASSUMED = Small 3.1 tower)", mm,
       "model.language_model.layers", None, 0)
vt = sum(p.numel() for p in mm.model.vision_tower.parameters())
pj = sum(p.numel() for p in mm.model.multi_modal_projector.parameters())
print(f"vision_tower={vt:,}  multi_modal_projector={pj:,}")
for nm, p in mm.model.multi_modal_projector.named_parameters():
    print(f"   projector {nm:35s} {tuple(p.shape)}")
print(f"top-level tie_word_embeddings={mm.config.tie_word_embeddings}; text_config.tie_word_embeddings={mm.config.text_config.tie_word_embeddings}")
del mm

# 3. Mistral Large 3 text as mistral4 (unsloth translation of params.json)
l3 = load("mistral-large-3-text-mistral4.json")
with torch.device("meta"):
    m = build_causal(text_cfg(l3))
report("Mistral Large 3 text as mistral4 (Mistral4ForCausalLM)", m, "model.layers", 0, 3)
del m

# 4. Mistral Large 3 text as deepseek_v3 (the model_type vLLM gives it), HF DeepseekV3ForCausalLM
ds = copy.deepcopy(l3); ds.pop("model_type"); ds.pop("rope_interleave", None)
rp = dict(ds.pop("rope_parameters")); rp.pop("llama_4_scaling_beta")
dcfg = DeepseekV3Config(**ds, rope_parameters=rp)
with torch.device("meta"):
    m = build_causal(dcfg)
report("Mistral Large 3 text as deepseek_v3 (DeepseekV3ForCausalLM; sigmoid router, NOT what vLLM runs)", m,
       "model.layers", None, 3)
del m

# 5. Mistral Large 3 multimodal, Mistral3ForConditionalGeneration wrapper around the mistral4 text model,
#    vision tower numbers from the params.json vision_encoder (Pixtral tower).  Illustrative: the published
#    checkpoint has no HF config; transformers 5.23 has no class registered for it.
ve = json.load(open(os.path.join(HERE, "mistral-large-3.json")))["vision_encoder"]
vc3 = dict(model_type="pixtral", hidden_size=ve["hidden_size"], intermediate_size=ve["intermediate_size"],
           num_hidden_layers=ve["num_hidden_layers"], num_attention_heads=ve["num_attention_heads"],
           head_dim=ve["hidden_size"] // ve["num_attention_heads"], patch_size=ve["patch_size"],
           image_size=ve["image_size"], hidden_act="silu", rope_theta=ve["rope_theta"])
cfg = Mistral3Config(text_config=copy.deepcopy(l3), vision_config=vc3, tie_word_embeddings=False,
                     spatial_merge_size=ve["spatial_merge_size"], image_token_index=ve["image_token_id"])
with torch.device("meta"):
    mm = Mistral3ForConditionalGeneration(cfg)
n, nb = count(mm)
vt = sum(p.numel() for p in mm.model.vision_tower.parameters())
pj = sum(p.numel() for p in mm.model.multi_modal_projector.parameters())
print(f"\n=== Mistral Large 3 multimodal via Mistral3ForConditionalGeneration (illustrative) ===\n"
      f"params={n:,} ({n/1e9:.3f} B)  buffers={nb:,}  vision_tower={vt:,}  projector={pj:,}")

# 6. Tying in the Mistral3 wrapper follows the TOP-LEVEL tie_word_embeddings (Mistral3Config default True,
#    configuration_mistral3.py:98), not text_config.tie_word_embeddings.  Tiny check:
t = load("tiny-mistral4.json")
vct = dict(model_type="pixtral", hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2,
           head_dim=32, patch_size=14, image_size=56)
print("\n=== tie check (tiny mistral4 inside Mistral3ForConditionalGeneration) ===")
for top in ({}, {"tie_word_embeddings": False}):
    c = Mistral3Config(text_config=copy.deepcopy(t), vision_config=vct, **top)
    with torch.device("meta"):
        mm = Mistral3ForConditionalGeneration(c)
    print(f"top-level kwargs={top}: config.tie_word_embeddings={c.tie_word_embeddings} "
          f"text_config.tie_word_embeddings={c.text_config.tie_word_embeddings} "
          f"lm_head is embed_tokens: {mm.lm_head.weight is mm.model.language_model.embed_tokens.weight}")

# 7. SDPA backend CPU picks for the MLA head dims (qk_head_dim, v_head_dim): Small 4 (128,128), Large 3 (192,128)
print("\n=== CPU SDPA backend choice (torch._fused_sdp_choice, causal, bf16) ===")
for dq, dv in ((128, 128), (192, 128)):
    q = torch.randn(1, 4, 64, dq, dtype=torch.bfloat16); k = torch.randn(1, 4, 64, dq, dtype=torch.bfloat16)
    v = torch.randn(1, 4, 64, dv, dtype=torch.bfloat16)
    print(f"qk_head_dim={dq} v_head_dim={dv}: {torch.nn.attention.SDPBackend(torch._fused_sdp_choice(q, k, v, is_causal=True)).name}")
