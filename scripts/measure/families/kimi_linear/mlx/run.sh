#!/usr/bin/env bash
# Rows of kimi.py: real config weights only (NEW -1), shrunk config at bf16/f32/4/8 bits,
# a few prompts, kv_bits 8. One JSON line per row in raw/rows.jsonl, stderr in raw/run.err.
set -u
here=$(cd "$(dirname "$0")" && pwd)
py="nice -n 10 $HOME/.mlx-venv/bin/python $here/kimi.py"
out=$here/raw/rows.jsonl; err=$here/raw/run.err
mkdir -p "$here/raw"; : > "$out"; : > "$err"
row() { echo "## $*" >> "$err"; $py "$@" 2>>"$err" | grep '^{' >> "$out"; }
real=$here/../config.json
for b in 0 4 8; do row "$real" 0 -1 '' 2048 none bf16 $b; done
s=$here/shrunk.json
row "$s" 100 0 '' 2048 none bf16 0
row "$s" 100 0 '' 2048 none float32 0
row "$s" 100 0 '{"first_k_dense_replace": 8}' 2048 none bf16 0
for b in 4 8; do
  row "$s" 100 0 '' 2048 none bf16 $b
  row "$s" 300 0 '' 2048 none bf16 $b
  row "$s" 1000 10 '' 2048 none bf16 $b
  row "$s" 1000 10 '' 256 none bf16 $b
  row "$s" 1000 10 '' 2048 8 bf16 $b
done
# wider KDA state: 8 heads (n_embd 1024) to check the state scales with heads * head_dim^2
row "$s" 300 0 '{"hidden_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 8, "linear_attn_config": {"num_heads": 8}}' 2048 none bf16 4
echo done >> "$err"
