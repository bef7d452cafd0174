#!/usr/bin/env python
"""Shim: run the project's unmodified generate harness (scripts/measure/infer/generate.py) on
mistral4 configs.  transformers 5.23 does not list "mistral4" in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
so AutoModelForCausalLM.from_config(Mistral4Config) raises "Unrecognized configuration class".
This registers the existing Mistral4ForCausalLM for Mistral4Config (the only change), then calls
generate.main() with the same arguments (--config, --mode, --check, --compare, ...)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
INFER = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "infer"))
sys.path.insert(0, INFER)
from transformers import AutoModelForCausalLM, Mistral4Config, Mistral4ForCausalLM  # noqa: E402

AutoModelForCausalLM.register(Mistral4Config, Mistral4ForCausalLM, exist_ok=True)
import generate  # noqa: E402

if __name__ == "__main__":
    sys.exit(generate.main())
