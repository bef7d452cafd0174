#!/usr/bin/env python3
"""Run llama.cpp b10488's own convert_hf_to_gguf.py on the tiny checkpoints of make_hf_tiny.py,
with one patch: the vocabulary. The tiny checkpoints carry no tokenizer (a real Tekken one would
have to be downloaded), so DeepseekV2Model.set_vocab / LlamaModel.set_vocab are replaced by the
byte-level SPM vocabulary of tiny_gguf.py. Tensors, their names, shapes and types, and every
hparam key come from the converter unchanged.

    ~/.gt-venv/bin/python convert_tiny.py HF_DIR OUT.gguf [extra convert_hf_to_gguf.py args]
"""
import sys

LLAMA = "/work/llama-b10488"
sys.path.insert(0, LLAMA)
sys.path.insert(1, LLAMA + "/gguf-py")

import convert_hf_to_gguf as C  # noqa: E402
import conversion.deepseek  # noqa: E402
import conversion.llama  # noqa: E402

N_VOCAB = 1024


def tiny_vocab(self) -> None:
    w = self.gguf_writer
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


conversion.deepseek.DeepseekV2Model.set_vocab = tiny_vocab
conversion.llama.LlamaModel.set_vocab = tiny_vocab

hf_dir, out = sys.argv[1], sys.argv[2]
sys.argv = ["convert_hf_to_gguf.py", hf_dir, "--outfile", out, "--outtype", "f16", *sys.argv[3:]]
C.main()
