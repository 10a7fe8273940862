"""A GGUF is parsed once per conversion, however many times transformers asks for it."""

import gguf
import numpy as np
import pytest

from llm.providers.transformers_provider import gguf_read_once

pytestmark = pytest.mark.model


def load_gguf_checkpoint(*args, **kwargs):
    # Imported when called: every pass of `make test` collects this module, and transformers (torch
    # with it) costs 3.5 s to import in the PostgreSQL pass, which runs no model test.
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint as read

    return read(*args, **kwargs)


@pytest.fixture
def tiny_gguf(tmp_path):
    """A one-layer llama GGUF of a few bytes: what transformers reads of the built-in model's, in small."""
    path = tmp_path / "tiny.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(1)
    writer.add_context_length(16)
    writer.add_embedding_length(8)
    writer.add_feed_forward_length(16)
    writer.add_head_count(2)
    writer.add_head_count_kv(2)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(4)
    writer.add_token_list(["<s>", "xin", "chào", "Việt"])
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.fixture
def readers_built(monkeypatch):
    built = []

    class CountingReader(gguf.GGUFReader):
        def __init__(self, *args, **kwargs):
            built.append(args[0])
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(gguf, "GGUFReader", CountingReader)
    return built


def test_it_parses_the_file_once_for_the_config_the_tokenizer_and_the_weights(tiny_gguf, readers_built):
    with gguf_read_once():
        # transformers' own reader of a GGUF checkpoint, called as a conversion calls it: three times.
        configs = [load_gguf_checkpoint(str(tiny_gguf), return_tensors=False)["config"] for _ in range(3)]
    assert len(readers_built) == 1
    assert configs[0] == configs[2] and configs[0]["num_hidden_layers"] == 1 and configs[0]["vocab_size"] == 4


def test_it_builds_the_tensor_name_table_once_per_architecture(readers_built):
    with gguf_read_once():
        first = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 30)
        assert gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 30) is first
        assert gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 2) is not first
    assert gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 30) is not first


def test_it_reads_the_file_afresh_after_the_conversion(tiny_gguf, readers_built):
    with gguf_read_once():
        load_gguf_checkpoint(str(tiny_gguf), return_tensors=False)
    load_gguf_checkpoint(str(tiny_gguf), return_tensors=False)
    load_gguf_checkpoint(str(tiny_gguf), return_tensors=False)
    # Outside a conversion every read is the library's own: a file replaced on disk is read as it now is.
    assert len(readers_built) == 3


def test_it_reads_the_same_fields_and_tensors_as_the_library_from_a_plain_array(tiny_gguf):
    plain = gguf.GGUFReader(str(tiny_gguf))
    with gguf_read_once():
        reader = gguf.GGUFReader(str(tiny_gguf))
    # Slicing a memmap runs Python code for each of the millions of slices a tokenizer's strings take.
    assert type(plain.data) is np.memmap and type(reader.data) is np.ndarray
    # A view over the mapped file, not a copy of it in memory.
    assert type(reader.data.base) is np.memmap and not reader.data.flags.writeable
    assert list(reader.fields) == list(plain.fields)
    for name, field in plain.fields.items():
        assert reader.fields[name].contents() == field.contents(), name
    assert [(t.name, t.shape.tolist(), t.data.tolist()) for t in reader.tensors] == [
        (t.name, t.shape.tolist(), t.data.tolist()) for t in plain.tensors
    ]
