"""What transformers 5.23's torch fallback of the chunked gated delta rule
keeps for backward, listed by storage through saved-tensor hooks (real CPU
tensors, fp32 inputs as the model passes them after its casts).

    ~/.gt-venv/bin/python scripts/measure/hybrid/saved_hooks.py [v] [S ...]

Prints, per sequence length S (batch 1, 4 value heads, Dk 32, Dv 48), the
bytes of the distinct storages saved; with `v`, each storage and the shape
that first saved it. Output of `v 63 64 65 129`: saved_hooks.txt.
"""
import sys

import torch
from transformers.models.qwen3_5.modeling_qwen3_5 import torch_chunk_gated_delta_rule as rule


def run(S):
    B, H, Dk, Dv = 1, 4, 32, 48
    q = torch.randn(B, S, H, Dk, requires_grad=True)
    k = torch.randn(B, S, H, Dk, requires_grad=True)
    v = torch.randn(B, S, H, Dv, requires_grad=True)
    g = (-torch.rand(B, S, H)).requires_grad_()
    b = torch.rand(B, S, H, requires_grad=True)
    seen = {}

    def pack(t):
        st = t.untyped_storage()
        seen.setdefault(st.data_ptr(), (st.nbytes(), tuple(t.shape)))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        rule(q, k, v, g, b, use_qk_l2norm_in_kernel=True)
    return seen


args = [a for a in sys.argv[1:] if a != "v"]
for S in [int(a) for a in args] or (63, 65, 129):
    s = run(S)
    print(S, sum(x[0] for x in s.values()))
    if "v" in sys.argv[1:]:
        for n, sh in sorted(s.values(), key=lambda x: -x[0]):
            print("  ", n, sh)
