"""Issue 28, hostile pass 20B minor 3: a config.json's quant_method is quoted as the config writes it.

The warning for a quantized checkpoint of a format the memory model does not size lower-cased the method
(``=HYPERLINK("x")`` was said as ``=hyperlink("x")``, a value the file does not hold); a method that is not one
plain word is quoted, so where it ends is clear.
"""

from __future__ import annotations

import pytest

from planner.model.architecture import from_hf_config
from planner.workload.checks import checkpoint_format

# Llama-2-7B's published config.json (meta-llama/Llama-2-7b-hf), the keys planner reads
_LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
          "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "intermediate_size": 11008,
          "vocab_size": 32000, "max_position_embeddings": 4096, "torch_dtype": "float16"}


@pytest.mark.parametrize("method, words", [
    ('=HYPERLINK("x")', "quant_method '=HYPERLINK(\"x\")', bits 4"),
    ("hqq", "quant_method hqq, bits 4"),
    ("", "quant_method ?, bits 4"),
])
def test_an_unsized_quant_method_is_quoted_as_written(method: str, words: str) -> None:
    arch = from_hf_config({**_LLAMA, "quantization_config": {"quant_method": method, "bits": 4}}, "config.json")
    assert checkpoint_format(arch) == (None, None, words)
