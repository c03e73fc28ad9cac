"""`priced_model(model, mix)`: a model as it would be in another quantization — priced, not downloaded.

Rule 1: every fact of the source stays (shapes, layers, KV, context); only tensor types and
        bytes change, and the per-layer inventory follows them (`facts.with_tensors`).
Rule 2: the result is a header-only model: its complete size is the priced file size, its
        name ends in "(<type>, priced, not downloaded)", so no screen can take it for a file.
Rule 3: it names the type it is priced as (`priced_type`) unless that is the source file's own type, so a
        command never loads the source file for another type (`views.remote_command` Rule 4).
"""

from __future__ import annotations

from dataclasses import replace

from gguf_budget.core.gguf.constants import Keys

from gguf_budget.core.model.facts import with_tensors
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.quant.mix import QuantMix

PRICED_LABEL = "priced, not downloaded"


def priced_name(model: ModelSpec, mix: QuantMix) -> str:
    base = model.name or model.architecture
    return f"{mix.file_type.name.value} ({PRICED_LABEL}) of {base}"


def priced_model(model: ModelSpec, mix: QuantMix) -> ModelSpec:
    """Rules 1–2."""
    tensors = tuple(t if t.ggml_type == c.ggml_type else replace(t, ggml_type=c.ggml_type, nbytes=c.nbytes)
                    for t, c in zip(model.tensors, mix.tensors, strict=True))
    ftype = mix.file_type
    metadata = {**model.metadata, Keys.General.FILE_TYPE: int(ftype.llama_ftype),
                Keys.General.NAME: priced_name(model, mix)}
    return replace(
        with_tensors(model, tensors), name=priced_name(model, mix), file_type=int(ftype.llama_ftype),
        file_type_name=ftype.name.value, header_only=True, file_bytes=mix.header_bytes,
        complete_file_bytes=mix.file_bytes, metadata=metadata,
        priced_type=None if ftype.name.value == model.file_type_name else ftype.name.value,
    )
