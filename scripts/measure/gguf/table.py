#!/usr/bin/env python3
"""Published GGUF file sizes held to predict.py; writes crates/core/tests/fixtures/gguf_file_sizes.jsonl.

Every row is a published file whose exact byte size a public source states (see SOURCES), the
Hugging Face config the file was made from (a fixture in crates/core/tests/fixtures/hf_configs,
plus the published values predict.py reads where the fixture differs or is missing: `overrides`),
and how it was made as far as the publisher says (imatrix, llama.cpp era). predict.py gives the
tensor bytes; the residual (file - tensor data section) is the GGUF header: metadata KVs
(hyperparameters, tokenizer tokens / token types / scores / merges, chat template) and the tensor
info records. The row also carries the residual predicted from the vocabulary (predict.py's
tokenizer estimate) so the two can be compared.

    python3 scripts/measure/gguf/table.py            # print the table
    python3 scripts/measure/gguf/table.py --write    # and write the jsonl fixture
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import predict  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
OUT = os.path.join(ROOT, "crates", "core", "tests", "fixtures", "gguf_file_sizes.jsonl")

# Where each size was read. All four list the byte count of the published file; the first three
# also give its checksum, so the row names one file version.
SOURCES = {
    "lmstudio": "github:lmstudio-ai/model-catalog@78bd5602295154a6477fa440fa45e024c62a26f5 "
                "(git history; {path}: files.all[].sizeBytes + sha256checksum)",
    "gpt4all": "github:nomic-ai/gpt4all@cd70db29edaf0f02a567f5eea94f5e52240be3e9 "
               "(git history of gpt4all-chat/metadata/models3.json: filesize + md5sum)",
    "pocketpal": "github:a-ghorbani/pocketpal-ai@82c636b5a8180e7fc39de9e46c72626f46d53590 "
                 "src/store/defaultModels.ts (hfModelFile.lfs.size + lfs.oid = sha256, the "
                 "Hugging Face API's LFS fields)",
    "rllama": "github:docusealco/rllama@e8baf3b91daf30b02e11fcc0ec0338ea87406a18 "
              "lib/rllama/cli.rb POPULAR_MODELS size (no checksum)",
}

# Published config values predict.py reads, where the fixture is not the model's own config.
LLAMA3_ROPE = {"rope_scaling": {"rope_type": "llama3", "factor": 8.0}}
LLAMA32_ROPE = {"rope_scaling": {"rope_type": "llama3", "factor": 32.0}}
LLAMA3_8B = {"rope_scaling": None, "rope_parameters": None}          # Llama 3 (not 3.1): no rope_freqs
QWEN25_14B = {"model_type": "qwen2", "hidden_size": 5120, "num_hidden_layers": 48,
              "num_attention_heads": 40, "num_key_value_heads": 8, "intermediate_size": 13824,
              "vocab_size": 152064, "tie_word_embeddings": False}
QWEN15_7B = {"model_type": "qwen2", "hidden_size": 4096, "num_hidden_layers": 32,
             "num_attention_heads": 32, "num_key_value_heads": 32, "intermediate_size": 11008,
             "vocab_size": 151936, "tie_word_embeddings": False}
SMOLLM2_17B = {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 24,
               "num_attention_heads": 32, "num_key_value_heads": 32, "intermediate_size": 8192,
               "vocab_size": 49152, "tie_word_embeddings": True, "head_dim": 64,
               "rope_parameters": None}
LLAMA2_7B = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
             "num_attention_heads": 32, "num_key_value_heads": 32, "intermediate_size": 11008,
             "vocab_size": 32000, "tie_word_embeddings": False, "head_dim": 128,
             "rope_parameters": None}
LLAMA2_13B = {**LLAMA2_7B, "hidden_size": 5120, "num_hidden_layers": 40, "num_attention_heads": 40,
              "num_key_value_heads": 40, "intermediate_size": 13824}

# id, model, hf_config fixture, overrides, gguf repo, file, ftype, bytes, source key, source path,
# imatrix (True/False/None = not stated), made (date the catalog entry says / era), tokenizer
ROWS = [
    # ---------------------------------------------------------------- llama (Llama 3 / 3.1 / 3.2)
    ("llama3.1-8b-instruct", "meta-llama/Llama-3.1-8B-Instruct", "llama3.1-8b", LLAMA3_ROPE,
     "lmstudio-community/Meta-Llama-3.1-8B-Instruct-GGUF", "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf",
     "Q4_K_M", 4920739168, "lmstudio", "models/Llama-3.1-8B-Instruct.json", None, "2024-07", "llama3"),
    ("llama3.1-8b-instruct", "meta-llama/Llama-3.1-8B-Instruct", "llama3.1-8b", LLAMA3_ROPE,
     "lmstudio-community/Meta-Llama-3.1-8B-Instruct-GGUF",
     "Meta-Llama-3.1-8B-Instruct-Q4_K_M-take2.gguf (first upload)", "Q4_K_M", 4920734656,
     "lmstudio", "models/Llama-3.1-8B-Instruct.json @9a82679", None, "2024-07", "llama3"),
    ("llama3-8b-instruct", "meta-llama/Meta-Llama-3-8B-Instruct", "llama3.1-8b", LLAMA3_8B,
     "lmstudio-community/Meta-Llama-3-8B-Instruct-GGUF", "Meta-Llama-3-8B-Instruct-Q4_K_M.gguf",
     "Q4_K_M", 4920733888, "lmstudio", "models/Llama-3-8B-Instruct.json", None, "2024-04", "llama3"),
    ("llama3-8b-instruct", "meta-llama/Meta-Llama-3-8B-Instruct", "llama3.1-8b", LLAMA3_8B,
     "gpt4all (gpt4all.io/models/gguf)", "Meta-Llama-3-8B-Instruct.Q4_0.gguf", "Q4_0", 4661724384,
     "gpt4all", "", None, "2024-04", "llama3"),
    ("llama3.1-8b-instruct", "meta-llama/Llama-3.1-8B-Instruct", "llama3.1-8b", LLAMA3_ROPE,
     "3Simplex/Meta-Llama-3.1-8B-Instruct-gguf", "Meta-Llama-3.1-8B-Instruct-Q4_0.gguf", "Q4_0",
     4661211808, "gpt4all", "", None, "2024-07", "llama3"),
    ("deepseek-r1-distill-llama-8b", "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "llama3.1-8b",
     LLAMA3_ROPE, "bartowski/DeepSeek-R1-Distill-Llama-8B-GGUF",
     "DeepSeek-R1-Distill-Llama-8B-Q4_0.gguf", "Q4_0", 4675894112, "gpt4all", "", True, "2025-01",
     "llama3"),
    ("llama3.2-1b-instruct", "meta-llama/Llama-3.2-1B-Instruct", "llama3.2-1b", LLAMA32_ROPE,
     "bartowski/Llama-3.2-1B-Instruct-GGUF", "Llama-3.2-1B-Instruct-Q4_0.gguf", "Q4_0", 773025920,
     "gpt4all", "", True, "2024-09", "llama3"),
    ("llama3.2-1b-instruct", "meta-llama/Llama-3.2-1B-Instruct", "llama3.2-1b", LLAMA32_ROPE,
     "hugging-quants/Llama-3.2-1B-Instruct-Q8_0-GGUF", "llama-3.2-1b-instruct-q8_0.gguf", "Q8_0",
     1321079200, "pocketpal", "", None, "2024-09", "llama3"),
    ("llama3.2-3b-instruct", "meta-llama/Llama-3.2-3B-Instruct", "llama3.2-3b", {},
     "bartowski/Llama-3.2-3B-Instruct-GGUF", "Llama-3.2-3B-Instruct-Q4_0.gguf", "Q4_0", 1921909280,
     "gpt4all", "", True, "2024-09", "llama3"),
    ("llama3.2-3b-instruct", "meta-llama/Llama-3.2-3B-Instruct", "llama3.2-3b", {},
     "bartowski/Llama-3.2-3B-Instruct-GGUF", "Llama-3.2-3B-Instruct-Q4_K_M.gguf", "Q4_K_M",
     2019377696, "rllama", "", True, "2024-09", "llama3"),
    ("llama3.2-3b-instruct", "meta-llama/Llama-3.2-3B-Instruct", "llama3.2-3b", {},
     "bartowski/Llama-3.2-3B-Instruct-GGUF", "Llama-3.2-3B-Instruct-Q6_K.gguf", "Q6_K", 2643853856,
     "pocketpal", "", True, "2024-09", "llama3"),
    ("smollm2-1.7b-instruct", "HuggingFaceTB/SmolLM2-1.7B-Instruct", "smollm2-135m", SMOLLM2_17B,
     "bartowski/SmolLM2-1.7B-Instruct-GGUF", "SmolLM2-1.7B-Instruct-Q8_0.gguf", "Q8_0", 1820414944,
     "pocketpal", "", True, "2024-11", "smollm"),
    # ---------------------------------------------------------------- llama arch, Mistral / Llama 2
    ("mistral-7b-instruct-v0.2", "mistralai/Mistral-7B-Instruct-v0.2", "mistral-7b", {},
     "TheBloke/Mistral-7B-Instruct-v0.2-GGUF", "mistral-7b-instruct-v0.2.Q4_K_S.gguf", "Q4_K_S",
     4140374304, "lmstudio", "models/Mistral-7B-Instruct-v0.2.json", False, "2023-12", "spm32k"),
    ("mistral-7b-instruct-v0.2", "mistralai/Mistral-7B-Instruct-v0.2", "mistral-7b", {},
     "TheBloke/Mistral-7B-Instruct-v0.2-GGUF", "mistral-7b-instruct-v0.2.Q6_K.gguf", "Q6_K",
     5942065440, "lmstudio", "models/Mistral-7B-Instruct-v0.2.json", False, "2023-12", "spm32k"),
    ("mistral-7b-instruct-v0.1", "mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b", {},
     "gpt4all (gpt4all.io/models/gguf)", "mistral-7b-instruct-v0.1.Q4_0.gguf", "Q4_0", 4108916384,
     "gpt4all", "", False, "2023-10", "spm32k"),
    ("mistral-7b-instruct-v0.1", "mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b", {},
     "TheBloke/Mistral-7B-Instruct-v0.1-GGUF", "mistral-7b-instruct-v0.1.Q4_K_S.gguf", "Q4_K_S",
     4140373664, "lmstudio", "models/Mistral-7B-Instruct-v0.1.json", False, "2023-10", "spm32k"),
    ("mistral-7b-instruct-v0.1", "mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b", {},
     "TheBloke/Mistral-7B-Instruct-v0.1-GGUF", "mistral-7b-instruct-v0.1.Q6_K.gguf", "Q6_K",
     5942064800, "lmstudio", "models/Mistral-7B-Instruct-v0.1.json", False, "2023-10", "spm32k"),
    ("nous-hermes-2-mistral-7b-dpo", "NousResearch/Nous-Hermes-2-Mistral-7B-DPO", "mistral-7b",
     {"vocab_size": 32002}, "NousResearch/Nous-Hermes-2-Mistral-7B-DPO-GGUF",
     "Nous-Hermes-2-Mistral-7B-DPO.Q4_0.gguf", "Q4_0", 4108928000, "gpt4all", "", None, "2024-02",
     "spm32k"),
    ("codellama-7b-instruct", "codellama/CodeLlama-7b-Instruct-hf", "llama3.1-8b",
     {**LLAMA2_7B, "vocab_size": 32016}, "TheBloke/CodeLlama-7B-Instruct-GGUF",
     "codellama-7b-instruct.Q4_K_S.gguf", "Q4_K_S", 3856831168, "lmstudio",
     "models/CodeLlama-7B-Instruct.json", False, "2023-08", "spm32k"),
    ("codellama-7b-instruct", "codellama/CodeLlama-7b-Instruct-hf", "llama3.1-8b",
     {**LLAMA2_7B, "vocab_size": 32016}, "TheBloke/CodeLlama-7B-Instruct-GGUF",
     "codellama-7b-instruct.Q6_K.gguf", "Q6_K", 5529302208, "lmstudio",
     "models/CodeLlama-7B-Instruct.json", False, "2023-08", "spm32k"),
    ("llama2-7b (orca-2-7b)", "microsoft/Orca-2-7b", "llama3.1-8b", {**LLAMA2_7B, "vocab_size": 32003},
     "gpt4all (gpt4all.io/models/gguf)", "orca-2-7b.Q4_0.gguf", "Q4_0", 3825824192, "gpt4all", "",
     False, "2023-11", "spm32k"),
    ("starling-lm-7b-beta", "Nexusflow/Starling-LM-7B-beta", "mistral-7b", {"vocab_size": 32002},
     "bartowski/Starling-LM-7B-beta-GGUF", "Starling-LM-7B-beta-IQ4_XS.gguf", "IQ4_XS", 3944399776,
     "lmstudio", "models/Starling-LM-7B-beta.json", None, "2024-03", "spm32k"),
    ("llama2-13b (orca-2-13b)", "microsoft/Orca-2-13b", "llama3.1-8b", {**LLAMA2_13B, "vocab_size": 32003},
     "gpt4all (gpt4all.io/models/gguf)", "orca-2-13b.Q4_0.gguf", "Q4_0", 7365856064, "gpt4all", "",
     False, "2023-11", "spm32k"),
    # ---------------------------------------------------------------- qwen2 (Qwen1.5 / 2.5 / R1 distill)
    ("qwen2.5-1.5b-instruct", "Qwen/Qwen2.5-1.5B-Instruct", "qwen2.5-1.5b", {"tie_word_embeddings": False},
     "Qwen/Qwen2.5-1.5B-Instruct-GGUF", "qwen2.5-1.5b-instruct-q8_0.gguf", "Q8_0", 1894532128,
     # Qwen's own GGUFs of tied-embedding models carry a separate output.weight [inferred from size]
     "pocketpal", "", None, "2024-09", "qwen2"),
    ("qwen2.5-3b-instruct", "Qwen/Qwen2.5-3B-Instruct", "qwen2.5-3b", {"tie_word_embeddings": False},
     "Qwen/Qwen2.5-3B-Instruct-GGUF", "qwen2.5-3b-instruct-q5_k_m.gguf", "Q5_K_M", 2438740384,
     "pocketpal", "", None, "2024-09", "qwen2"),
    ("qwen2.5-coder-7b-instruct", "Qwen/Qwen2.5-Coder-7B-Instruct", "qwen2.5-7b", {},
     "Qwen/Qwen2.5-Coder-7B-Instruct-GGUF", "qwen2.5-coder-7b-instruct-q4_0.gguf", "Q4_0",
     4431390720, "gpt4all", "", None, "2024-11", "qwen2"),
    ("deepseek-r1-distill-qwen-7b", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "qwen2.5-7b", {},
     "bartowski/DeepSeek-R1-Distill-Qwen-7B-GGUF", "DeepSeek-R1-Distill-Qwen-7B-Q4_0.gguf", "Q4_0",
     4444121056, "gpt4all", "", True, "2025-01", "qwen2"),
    ("deepseek-r1-distill-qwen-14b", "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "qwen2.5-7b",
     QWEN25_14B, "bartowski/DeepSeek-R1-Distill-Qwen-14B-GGUF",
     "DeepSeek-R1-Distill-Qwen-14B-Q4_0.gguf", "Q4_0", 8544267680, "gpt4all", "", True, "2025-01",
     "qwen2"),
    ("deepseek-r1-distill-qwen-1.5b", "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "qwen2.5-1.5b",
     {"tie_word_embeddings": False}, "bartowski/DeepSeek-R1-Distill-Qwen-1.5B-GGUF",
     "DeepSeek-R1-Distill-Qwen-1.5B-Q4_0.gguf", "Q4_0", 1068807776, "gpt4all", "", True, "2025-01",
     "qwen2"),
    ("qwen1.5-7b-chat", "Qwen/Qwen1.5-7B-Chat", "qwen2.5-7b", QWEN15_7B, "Qwen/Qwen1.5-7B-Chat-GGUF",
     "qwen1_5-7b-chat-q5_k_m.gguf", "Q5_K_M", 5530664160, "lmstudio", "models/qwen-1.5.json", None,
     "2024-02", "qwen2"),
    # ---------------------------------------------------------------- gemma / gemma2
    ("gemma-2-9b-it", "google/gemma-2-9b-it", "gemma2-9b", {}, "lmstudio-community/gemma-2-9b-it-GGUF",
     "gemma-2-9b-it-Q4_K_M.gguf", "Q4_K_M", 5761057728, "lmstudio", "models/gemma-2-9b.json", None,
     "2024-07", "gemma"),
    ("gemma-2-2b-it", "google/gemma-2-2b-it", "gemma2-2b", {}, "bartowski/gemma-2-2b-it-GGUF",
     "gemma-2-2b-it-Q6_K.gguf", "Q6_K", 2151393120, "pocketpal", "", True, "2024-07", "gemma"),
    ("gemma-2b-it", "google/gemma-2b-it", "gemma-2b", {}, "lmstudio-ai/gemma-2b-it-GGUF",
     "gemma-2b-it-q8_0.gguf", "Q8_0", 2669351840, "lmstudio", "models/google-gemma-2b.json", None,
     "2024-02", "gemma"),
    ("gemma-7b-it", "google/gemma-7b-it", "gemma-7b", {}, "gpt4all (gpt4all.io/models/gguf)",
     "gemma-7b-it.Q4_0.gguf", "Q4_0", 4809316512, "gpt4all", "", None, "2024-02", "gemma"),
    # ---------------------------------------------------------------- phi3 (fused qkv / gate_up)
    ("phi-3.1-mini-4k-instruct", "microsoft/Phi-3-mini-4k-instruct (2024-07 update)", "phi3-mini", {},
     "lmstudio-community/Phi-3.1-mini-4k-instruct-GGUF", "Phi-3.1-mini-4k-instruct-Q4_K_M.gguf",
     "Q4_K_M", 2393232096, "lmstudio", "models/phi-3.1-mini-4k.json", None, "2024-07", "phi3"),
    ("phi-3.1-mini-4k-instruct", "microsoft/Phi-3-mini-4k-instruct (2024-07 update)", "phi3-mini", {},
     "lmstudio-community/Phi-3.1-mini-4k-instruct-GGUF", "Phi-3.1-mini-4k-instruct-Q5_K_M.gguf",
     "Q5_K_M", 2815275232, "lmstudio", "models/phi-3.1-mini-4k.json @0bbfc5e", None, "2024-07", "phi3"),
    ("phi-3.5-mini-instruct", "microsoft/Phi-3.5-mini-instruct", "phi3.5-mini", {},
     "MaziyarPanahi/Phi-3.5-mini-instruct-GGUF", "Phi-3.5-mini-instruct.Q4_K_M.gguf", "Q4_K_M",
     2393232608, "pocketpal", "", None, "2024-08", "phi3"),
    ("phi-3-mini-4k-instruct", "microsoft/Phi-3-mini-4k-instruct", "phi3-mini", {},
     "gpt4all (gpt4all.io/models/gguf)", "Phi-3-mini-4k-instruct.Q4_0.gguf", "Q4_0", 2176181568,
     "gpt4all", "", None, "2024-04", "phi3"),
    ("phi-4", "microsoft/phi-4", "phi4", {}, "microsoft/phi-4-gguf", "phi-4-Q4_K_S.gguf", "Q4_K_S",
     8440762560, "rllama", "", None, "2025-01", "phi4"),
    # ---------------------------------------------------------------- gpt-oss (MXFP4 experts)
    ("gpt-oss-20b", "openai/gpt-oss-20b", "gpt-oss-20b", {}, "lmstudio-community/gpt-oss-20b-GGUF",
     "gpt-oss-20b-MXFP4.gguf", "MXFP4_MOE", 12109565632, "rllama", "", None, "2025-08", "gpt-oss"),
    # ---------------------------------------------------------------- qwen3moe
    ("qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b", {}, "unsloth/Qwen3-30B-A3B-GGUF",
     "Qwen3-30B-A3B-Q3_K_S.gguf", "Q3_K_S", 13292468800, "rllama", "", True, "2025-05", "qwen2"),
]


# Files made before llama.cpp build 2248 (PR #5650, 2024-02-22): a tied token_embd (Gemma) was
# quantized at the default type, not with the output rule. [inferred from the size: the gemma-7b-it
# Q4_0 file is 202.75 MB smaller than a Q6_K token_embd would make it, exactly the Q6_K-Q4_0
# difference of a 256000 x 3072 matrix]
OLD_TIED_EMBD = {("gemma-7b-it.Q4_0.gguf")}
# gpt4all's Meta-Llama-3-8B-Instruct.Q4_0.gguf (April 2024) has 513,056 B more header than the
# other Llama-3 files: 128256 x 4 B = 513,024 B, a per-token f32 array (tokenizer.ggml.scores,
# written by the early Llama-3 conversions) [inferred].


def load_cfg(fixture: str, overrides: dict) -> dict:
    path = os.path.join(ROOT, "crates", "core", "tests", "fixtures", "hf_configs", fixture + ".json")
    with open(path) as f:
        cfg = json.load(f)
    cfg.update(overrides)
    return cfg


def evaluate(row, rules="legacy"):
    (mid, hf, fixture, ov, repo, fname, ftype, size, src, spath, imat, made, tok) = row
    cfg = load_cfg(fixture, ov)
    opts = {"tied_embd_as_output": fname not in OLD_TIED_EMBD}
    est = predict.tokenizer_bytes(tok) if tok else None
    variants = {}
    for im in ([imat] if imat is not None else [False, True]):
        variants[bool(im)] = predict.predict(cfg, ftype, imatrix=bool(im), rules=rules, **opts)
    # an unstated imatrix: keep the variant whose residual is closest to the vocabulary estimate
    # (the variants differ by whole tensors, MBs; the estimate is good to a few hundred KB)
    im, r = min(variants.items(),
                key=lambda kv: abs(size - kv[1]["tensor_data_bytes"] - kv[1]["tensor_info_bytes"] - (est or 0)))
    return dict(model=mid, hf=hf, fixture=fixture, ov=ov, repo=repo, file=fname, ftype=ftype,
                size=size, src=src, spath=spath, imat=imat, im=im, made=made, tok=tok, est=est, r=r,
                opts=opts, ambiguous=len(variants) > 1 and
                variants[False]["tensor_data_bytes"] != variants[True]["tensor_data_bytes"])


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--rules", default="legacy", choices=["legacy", "b8973"])
    a = ap.parse_args(argv)
    rows = [evaluate(row, a.rules) for row in ROWS]
    # the header of files that share a tokenizer is the same to a few KB: the family's median
    # residual is the reference header; a single-file family uses the vocabulary estimate
    fam: dict[str, list[int]] = {}
    for e in rows:
        fam.setdefault(e["tok"], []).append(e["size"] - e["r"]["tensor_data_bytes"])
    lines = []
    print(f"{'model':30s} {'file':44s} {'ftype':9s} {'size':>14s} {'pred tensors':>14s} "
          f"{'residual':>11s} {'ref hdr':>10s} {'raw%':>7s} {'w err%':>7s}")
    for e in rows:
        r, size = e["r"], e["size"]
        res = size - r["tensor_data_bytes"]
        vals = sorted(fam[e["tok"]])
        if len(vals) >= 3:
            ref, how = vals[len(vals) // 2], f"median residual of the {len(vals)} files with the {e['tok']} tokenizer"
        else:
            ref, how = r["tensor_info_bytes"] + (e["est"] or 0) + 24, "tensor infos + vocabulary estimate"
        implied = size - ref
        werr = 100.0 * (r["tensor_data_bytes"] - implied) / implied
        raw = 100.0 * (r["tensor_data_bytes"] - size) / size
        print(f"{e['model'][:30]:30s} {e['file'][:44]:44s} {e['ftype']:9s} {size:>14,} "
              f"{r['tensor_data_bytes']:>14,} {res:>11,} {ref:>10,} {raw:>7.3f} {werr:>7.3f}")
        src = SOURCES[e["src"]].format(path=e["spath"])
        if e["spath"] and "{path}" not in SOURCES[e["src"]]:
            src += f" [{e['spath']}]"
        rec = {
            "model": e["model"], "hf_repo": e["hf"].split(" ")[0], "config_fixture": e["fixture"],
            "config_overrides": e["ov"], "gguf_repo": e["repo"], "file": e["file"],
            "file_type": e["ftype"], "size_bytes": size,
            "exactness": "exact bytes as listed by the source" +
                         (" with the file's checksum" if e["src"] != "rllama" else " (no checksum)"),
            "source": src, "made": e["made"],
            "imatrix_stated": e["imatrix" if False else "imat"], "imatrix_assumed": e["im"],
            "imatrix_changes_prediction": e["ambiguous"],
            "llama_cpp_rules": a.rules + ("" if e["opts"]["tied_embd_as_output"] else "+pre-b2248-tied-embd"),
            "predicted_tensor_count": r["n_tensors"],
            "predicted_by_type": {k: v["count"] for k, v in r["by_type"].items()},
            "predicted_tensor_bytes": r["tensor_bytes"],
            "predicted_tensor_data_bytes": r["tensor_data_bytes"],
            "tensor_info_bytes": r["tensor_info_bytes"],
            "residual_bytes": res,
            "tokenizer": e["tok"],
            "residual_estimate_bytes": (r["tensor_info_bytes"] + e["est"] + 24) if e["est"] else None,
            "reference_header_bytes": ref, "reference_header_from": how,
            "raw_error_pct": round(raw, 4),
            "weights_error_pct": round(werr, 4),
        }
        lines.append(json.dumps(rec))
    if a.write:
        with open(OUT, "w") as f:
            f.write("\n".join(lines) + "\n")
        print("wrote", OUT)


if __name__ == "__main__":
    main()
