"""Issue 28, hostile pass 20B minor 3 and pass 22B #1.

The warning for a quantized checkpoint of a format the memory model does not size lower-cased the method
(``=HYPERLINK("x")`` was said as ``=hyperlink("x")``, a value the file does not hold); a method that is not one
plain word is quoted, so where it ends is clear.

The errors about an overlay folder itself (missing, a file, no catalog files, a foreign file name) wrote its path
into the problem text, raw in the API (an ESC, a line feed, U+202E reached the caller); it goes in ``file=`` now.
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


# ---- pass 22B #1: the overlay folder's own errors carry its path escaped, in the API too

@pytest.mark.parametrize("name", ["none\x1b]0;T\x07", "x\ny", "x\u202eder"])
def test_an_overlay_folder_error_escapes_its_path(tmp_path, name: str) -> None:
    from planner import load_catalog
    from planner.core.errors import CatalogError

    with pytest.raises(CatalogError) as info:
        load_catalog(tmp_path / name)
    text = str(info.value)
    # the path goes in the error's file=, which every output escapes (the CLI printed it escaped already)
    assert not any(c in text for c in "\x1b\x07\n\u202e"), repr(text)
    assert text.startswith(f"{tmp_path}/") and ": no such catalog directory." in text
    assert "catalog= in Python" in text
