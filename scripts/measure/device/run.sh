#!/usr/bin/env bash
# The device-level measurements of issue 29, on a lent GPU, in one call of
# the device tool (from the repository root):
#   scripts/measure/device/run.sh            # writes to $OUT (the tool's), else ./device-out
# Stages, most wanted first, each under its own time limit, each result
# written as soon as it exists (a stage cut short loses only itself):
#   1. outside the allocator (context.py): lazy loading, NCCL (seconds)
#   2. training (record.py over configs.txt), plain and expandable segments
#   3. generate (generate_cuda.py), 13B shape, batch 1, 4, 16, plain and expandable
#   4. the context with eager module loading (context.py)
# Out: log.txt, train.jsonl, generate.jsonl, context.jsonl, traces_train.tgz,
# traces_gen_plain.tgz, traces_gen_exp.tgz.
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
R="${OUT:-$PWD/device-out}"
W=/tmp/vramfit-device
mkdir -p "$R" "$W/train" "$W/gen_plain" "$W/gen_exp"
exec > >(tee -a "$R/log.txt") 2>&1
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
EXP=expandable_segments:True
t0=$(date +%s)
el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
el start
nvidia-smi
python3 -c "import torch, transformers, peft; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', transformers.__version__, 'peft', peft.__version__)"

el "outside the allocator"
timeout 60 python3 "$HERE/context.py" lazy >> "$R/context.jsonl"
timeout 90 env NCCL_DEBUG=INFO python3 "$HERE/context.py" nccl >> "$R/context.jsonl"

el "training, plain"
timeout 170 python3 "$HERE/record.py" "$HERE/configs.txt" "$R/train.jsonl" "$W/train/plain" --deadline-s 120
el "training, expandable"
timeout 170 env PYTORCH_CUDA_ALLOC_CONF=$EXP python3 "$HERE/record.py" "$HERE/configs.txt" "$R/train.jsonl" "$W/train/exp" --deadline-s 120
tar czf "$R/traces_train.tgz" -C "$W" train

el "generate, plain"
timeout 150 python3 "$HERE/generate_cuda.py" "$R/generate.jsonl" "$W/gen_plain" 1 4 16 --deadline-s 90
tar czf "$R/traces_gen_plain.tgz" -C "$W" gen_plain
el "generate, expandable"
timeout 150 env PYTORCH_CUDA_ALLOC_CONF=$EXP python3 "$HERE/generate_cuda.py" "$R/generate.jsonl" "$W/gen_exp" 1 4 16 --deadline-s 90
tar czf "$R/traces_gen_exp.tgz" -C "$W" gen_exp

el "eager loading"
timeout 90 env CUDA_MODULE_LOADING=EAGER python3 "$HERE/context.py" eager >> "$R/context.jsonl"
el done
ls -la "$R"
