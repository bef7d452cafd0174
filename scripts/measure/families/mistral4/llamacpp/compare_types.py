"""Per-tensor table of an f16 GGUF and its Q4_K_M (gguf-py of b10488):
name, ggml shape (ne0, ne1, ...), type and bytes in each file.
    ~/.gguf-venv/bin/python compare_types.py F16.gguf Q4_K_M.gguf"""
import sys
import gguf

a = {t.name: t for t in gguf.GGUFReader(sys.argv[1]).tensors}
b = {t.name: t for t in gguf.GGUFReader(sys.argv[2]).tensors}
print(f"{'tensor':<34} {'ggml shape':<18} {'f16 type':<5} {'f16 bytes':>10}  {'q type':<5} {'q bytes':>10}")
for n, t in a.items():
    q = b[n]
    shape = "x".join(str(int(x)) for x in t.shape)
    print(f"{n:<34} {shape:<18} {t.tensor_type.name:<5} {int(t.n_bytes):>10,}  {q.tensor_type.name:<5} {int(q.n_bytes):>10,}")
print(f"total {len(a)} tensors: f16 file {sum(int(t.n_bytes) for t in a.values()):,} bytes; "
      f"Q4_K_M file {sum(int(t.n_bytes) for t in b.values()):,} bytes")
