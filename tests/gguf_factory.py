"""Write real GGUF files with the `gguf` package from a compact architecture description.

Used by the tests, the benchmarks and `packaging/make_demo_model.py`. Three ways to write:
- `complete`: every tensor's bytes present (zeros) — for tiny models and `GGUFReader` checks;
- `header_only`: header and tensor directory, no data — a skeleton of a realistic shape;
- `sparse`: header, then the file extended to its full size without writing the data
  (a sparse file: a "40 GB" model costs no disk).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

import numpy as np
from gguf import GGUFWriter
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType as T, GGUFValueType as V

Mode = Literal["complete", "header_only", "sparse"]
PerLayer = int | Sequence[int]


@dataclass(frozen=True)
class SSMDesc:
    """State-space block sizes: Mamba-1 tensors, or Mamba-2 (`mamba2`: dt_rank is the head count)."""

    d_conv: int = 4
    d_inner: int = 128
    d_state: int = 16
    dt_rank: int = 4
    n_group: int = 0
    mamba2: bool = False


@dataclass(frozen=True)
class MLADesc:
    """DeepSeek-2 multi-head latent attention ranks. `key_length` / `value_length` are a head's query-key and value
    dims; `absorbed` writes the file as llama.cpp's converter has since PR 12801 (conversion/deepseek.py: one KV
    head of kv_lora_rank + rope dims, `key_length_mla` / `value_length_mla`, attn_kv_b split into attn_k_b and
    attn_v_b), else as older converters did (every head's dims, one attn_kv_b)."""

    kv_lora_rank: int = 64
    q_lora_rank: int = 0
    rope_dim: int = 32
    key_length: int = 96
    value_length: int = 64
    absorbed: bool = False


@dataclass(frozen=True)
class ArchDesc:
    """A model shape compact enough to write in a test; every field maps to GGUF keys/tensors."""

    arch: str = "llama"
    name: str = "tiny-llama"
    n_layer: int = 2
    n_embd: int = 64
    n_ff: PerLayer = 128
    n_head: PerLayer = 4
    n_head_kv: PerLayer = 2
    n_vocab: int = 256
    context_length: int = 2048
    head_dim: int | None = None
    tied: bool = False
    weight_type: T = T.Q8_0
    embd_type: T | None = None
    output_type: T | None = None
    mix: Mapping[str, T] = field(default_factory=dict)
    layer_mix: Mapping[int, Mapping[str, T]] = field(default_factory=dict)
    position_embd: bool = False
    gated_ffn: bool = True
    qk_norm: bool = False
    post_norms: bool = False
    rope_freqs: int = 0
    final_norm: str = "output_norm"
    sliding_window: int | None = None
    sliding_window_pattern: Sequence[bool] | None = None
    n_expert: int = 0
    n_expert_used: int = 0
    n_expert_shared: int = 0
    expert_ff: int | None = None
    shared_ff: int | None = None
    dense_layers: Sequence[int] = ()
    expert_bias: bool = False
    attn_bias: Sequence[str] = ()
    attn_sinks: bool = False
    fused_qkv_up: bool = False
    ffn_norm: str = "ffn_norm"
    ssm: SSMDesc | None = None
    recurrent_layers: Sequence[int] | None = None
    shortconv: int = 0
    mla: MLADesc | None = None
    tokens: int = 0
    merges: int = 0
    file_type: int | None = 7
    extra_kv: Mapping[str, Any] = field(default_factory=dict)
    string_kv: Mapping[str, str] = field(default_factory=dict)
    uint64_kv: Mapping[str, int] = field(default_factory=dict)
    typed_kv: Mapping[str, tuple[V, Any]] = field(default_factory=dict)
    """Keys ({arch} allowed) written with exactly this GGUF type, replacing any written before;
    arrays as (V.ARRAY, (element type, values))."""
    omit: Sequence[str] = ()
    tensor_types: Mapping[str, T] = field(default_factory=dict)
    biases: bool = False
    """Every block matrix and norm, and the final norm, has a bias (gpt-neox, gpt-2, bert)."""
    quantized_order: bool = False
    """Tensors in the order llama-quantize writes them (src/llama-model-loader.h `weight_name_comparer`: the
    tensors outside blocks first, then block by block, each group by name), not a converter's."""
    first: Sequence[str] = ()
    """Tensors written before all others, in this order (a converter follows its checkpoint's order, which may
    put `output` and `token_embd` ahead of the blocks)."""
    blocks_in_name_order: bool = False
    """Blocks written in the order of their names (blk.0, blk.1, blk.10, …, blk.2), as some converters write
    them: where a block lies in the file decides the span of it llama.cpp maps."""

    def per_layer(self, value: PerLayer, layer: int) -> int:
        return value if isinstance(value, int) else value[layer]

    def is_recurrent(self, layer: int) -> bool:
        if self.ssm is None and not self.shortconv:
            return False
        return self.recurrent_layers is None or layer in self.recurrent_layers


Tensor = tuple[str, tuple[int, ...], T]


def tensor_plan(d: ArchDesc) -> list[Tensor]:
    """Every tensor of the model as (name, ggml shape ne[0..], type)."""
    embd_type = d.embd_type or d.weight_type
    out: list[Tensor] = [("token_embd.weight", (d.n_embd, d.n_vocab), embd_type)]
    if d.position_embd:
        out.append(("position_embd.weight", (d.n_embd, d.context_length), T.F32))
    if d.rope_freqs:
        out.append(("rope_freqs.weight", (d.rope_freqs,), T.F32))
    for il in sorted(range(d.n_layer), key=str) if d.blocks_in_name_order else range(d.n_layer):
        out += _block(d, il)
    out.append((f"{d.final_norm}.weight", (d.n_embd,), T.F32))
    if not d.gated_ffn:
        out.append((f"{d.final_norm}.bias", (d.n_embd,), T.F32))
    if not d.tied:
        out.append(("output.weight", (d.n_embd, d.n_vocab), d.output_type or d.weight_type))
    if d.biases:
        out += [(name.removesuffix("weight") + "bias", (shape[-1] if len(shape) == 2 else shape[0],), T.F32)
                for name, shape, _ in out
                if name.startswith("blk.") or (name == f"{d.final_norm}.weight" and d.gated_ffn)]
    if d.quantized_order:
        out.sort(key=lambda t: (int(t[0].split(".")[1]) if t[0].startswith("blk.") else -1, t[0]))
    out.sort(key=lambda t: d.first.index(t[0]) if t[0] in d.first else len(d.first))
    return [(name, shape, d.tensor_types.get(name, ggml_type)) for name, shape, ggml_type in out]


def _block(d: ArchDesc, il: int) -> list[Tensor]:
    p = f"blk.{il}."

    def w(role: str, shape: tuple[int, ...]) -> Tensor:
        return (f"{p}{role}.weight", shape, d.layer_mix.get(il, {}).get(role, d.mix.get(role, d.weight_type)))

    def norm(role: str, n: int = d.n_embd) -> Tensor:
        return (f"{p}{role}.weight", (n,), T.F32)

    ts = [norm("attn_norm")]
    if d.shortconv and d.is_recurrent(il):
        ts += [
            (f"{p}shortconv.conv.weight", (d.shortconv, d.n_embd), T.F32),
            w("shortconv.in_proj", (d.n_embd, 3 * d.n_embd)),
            w("shortconv.out_proj", (d.n_embd, d.n_embd)),
        ]
    elif d.is_recurrent(il) and d.ssm is not None and d.ssm.mamba2:
        ts += _mamba2(d, d.ssm, w, p)
        if d.recurrent_layers is None:
            return ts
    elif d.is_recurrent(il):
        s = d.ssm
        assert s is not None
        ts += [
            w("ssm_in", (d.n_embd, 2 * s.d_inner)),
            (f"{p}ssm_conv1d.weight", (s.d_conv, s.d_inner), T.F32),
            w("ssm_x", (s.d_inner, s.dt_rank + 2 * s.d_state)),
            (f"{p}ssm_dt.weight", (s.dt_rank, s.d_inner), T.F32),
            (f"{p}ssm_a", (s.d_state, s.d_inner), T.F32),
            (f"{p}ssm_d", (s.d_inner,), T.F32),
            w("ssm_out", (s.d_inner, d.n_embd)),
        ]
        if d.recurrent_layers is None:
            return ts
    else:
        ts += _attention(d, il, w, norm)
        if d.post_norms:
            ts.append(norm("post_attention_norm"))
    ts.append(norm(d.ffn_norm))
    ts += _ffn(d, il, w)
    if d.post_norms:
        ts.append(norm("post_ffw_norm"))
    return ts


def _mamba2(d: ArchDesc, s: SSMDesc, w, p: str) -> list[Tensor]:
    """llama.cpp's Mamba-2 mixer (granite-hybrid, nemotron-h): dt_rank is the SSM head count."""
    conv = s.d_inner + 2 * s.n_group * s.d_state
    return [
        w("ssm_in", (d.n_embd, 2 * s.d_inner + 2 * s.n_group * s.d_state + s.dt_rank)),
        (f"{p}ssm_conv1d.weight", (s.d_conv, conv), T.F32),
        (f"{p}ssm_conv1d.bias", (conv,), T.F32),
        (f"{p}ssm_dt.bias", (s.dt_rank,), T.F32),
        (f"{p}ssm_a", (1, s.dt_rank), T.F32),
        (f"{p}ssm_d", (1, s.dt_rank), T.F32),
        (f"{p}ssm_norm.weight", (s.d_inner // max(s.n_group, 1), max(s.n_group, 1)), T.F32),
        w("ssm_out", (s.d_inner, d.n_embd)),
    ]


def _attention(d: ArchDesc, il: int, w, norm) -> list[Tensor]:
    n_head, n_kv = d.per_layer(d.n_head, il), d.per_layer(d.n_head_kv, il)
    hd = d.head_dim or d.n_embd // n_head
    if d.mla is not None:
        m = d.mla
        q = [w("attn_q", (d.n_embd, n_head * m.key_length))]
        if m.q_lora_rank:
            q = [w("attn_q_a", (d.n_embd, m.q_lora_rank)), norm("attn_q_a_norm", m.q_lora_rank),
                 w("attn_q_b", (m.q_lora_rank, n_head * m.key_length))]
        kv_b = [w("attn_k_b", (m.key_length - m.rope_dim, m.kv_lora_rank, n_head)),
                w("attn_v_b", (m.kv_lora_rank, m.value_length, n_head))] if m.absorbed else [
            w("attn_kv_b", (m.kv_lora_rank, n_head * (m.key_length - m.rope_dim + m.value_length)))]
        return q + [
            w("attn_kv_a_mqa", (d.n_embd, m.kv_lora_rank + m.rope_dim)),
            norm("attn_kv_a_norm", m.kv_lora_rank),
            *kv_b,
            w("attn_output", (n_head * m.value_length, d.n_embd)),
        ]
    if not d.gated_ffn:
        return [w("attn_qkv", (d.n_embd, 3 * d.n_embd)), w("attn_output", (d.n_embd, d.n_embd))]
    if d.fused_qkv_up:
        return [w("attn_qkv", (d.n_embd, (n_head + 2 * n_kv) * hd)), w("attn_output", (n_head * hd, d.n_embd))]
    out = {"attn_q": n_head * hd, "attn_k": n_kv * hd, "attn_v": n_kv * hd, "attn_output": d.n_embd}
    ts = [
        w("attn_q", (d.n_embd, n_head * hd)),
        w("attn_k", (d.n_embd, n_kv * hd)),
        w("attn_v", (d.n_embd, n_kv * hd)),
        w("attn_output", (n_head * hd, d.n_embd)),
    ]
    ts += [(f"blk.{il}.{role}.bias", (out[role],), T.F32) for role in d.attn_bias]
    if d.attn_sinks:
        ts.append((f"blk.{il}.attn_sinks.weight", (n_head,), T.F32))
    if d.qk_norm:
        ts += [norm("attn_q_norm", hd), norm("attn_k_norm", hd)]
    return ts


def _ffn(d: ArchDesc, il: int, w) -> list[Tensor]:
    n_ff = d.per_layer(d.n_ff, il)
    if d.n_expert and il not in d.dense_layers:
        ff = d.expert_ff or n_ff
        ts = [
            (f"blk.{il}.ffn_gate_inp.weight", (d.n_embd, d.n_expert), T.F32),
            w("ffn_gate_exps", (d.n_embd, ff, d.n_expert)),
            w("ffn_up_exps", (d.n_embd, ff, d.n_expert)),
            w("ffn_down_exps", (ff, d.n_embd, d.n_expert)),
        ]
        if d.expert_bias:
            ts += [(f"blk.{il}.ffn_gate_inp.bias", (d.n_expert,), T.F32),
                   (f"blk.{il}.ffn_gate_exps.bias", (ff, d.n_expert), T.F32),
                   (f"blk.{il}.ffn_up_exps.bias", (ff, d.n_expert), T.F32),
                   (f"blk.{il}.ffn_down_exps.bias", (d.n_embd, d.n_expert), T.F32)]
        if d.n_expert_shared or d.shared_ff:
            sh = d.shared_ff or ff * d.n_expert_shared
            ts += [w("ffn_gate_shexp", (d.n_embd, sh)), w("ffn_up_shexp", (d.n_embd, sh)),
                   w("ffn_down_shexp", (sh, d.n_embd))]
        return ts
    if d.fused_qkv_up:
        return [w("ffn_up", (d.n_embd, 2 * n_ff)), w("ffn_down", (n_ff, d.n_embd))]
    if not d.gated_ffn:
        return [w("ffn_up", (d.n_embd, n_ff)), w("ffn_down", (n_ff, d.n_embd))]
    return [w("ffn_gate", (d.n_embd, n_ff)), w("ffn_up", (d.n_embd, n_ff)), w("ffn_down", (n_ff, d.n_embd))]


def nbytes(shape: Sequence[int], ggml_type: T) -> int:
    block, size = GGML_QUANT_SIZES[ggml_type]
    n = 1
    for s in shape:
        n *= s
    return n // block * size


def _add_metadata(wr: GGUFWriter, d: ArchDesc) -> None:
    a = d.arch
    wr.add_name(d.name)
    if d.file_type is not None:
        wr.add_file_type(d.file_type)
    wr.add_quantization_version(2)
    wr.add_uint32(f"{a}.block_count", d.n_layer)
    wr.add_uint32(f"{a}.context_length", d.context_length)
    wr.add_uint32(f"{a}.embedding_length", d.n_embd)
    _add_per_layer(wr, f"{a}.feed_forward_length", d.n_ff)
    _add_per_layer(wr, f"{a}.attention.head_count", d.n_head)
    absorbed = d.mla is not None and d.mla.absorbed
    _add_per_layer(wr, f"{a}.attention.head_count_kv", 1 if absorbed else d.n_head_kv)
    wr.add_float32(f"{a}.attention.layer_norm_rms_epsilon", 1e-5)
    if d.head_dim is not None:
        wr.add_uint32(f"{a}.attention.key_length", d.head_dim)
        wr.add_uint32(f"{a}.attention.value_length", d.head_dim)
    if d.sliding_window is not None:
        wr.add_uint32(f"{a}.attention.sliding_window", d.sliding_window)
    if d.sliding_window_pattern is not None:
        wr.add_array(f"{a}.attention.sliding_window_pattern", [bool(x) for x in d.sliding_window_pattern])
    if d.n_expert:
        wr.add_uint32(f"{a}.expert_count", d.n_expert)
        wr.add_uint32(f"{a}.expert_used_count", d.n_expert_used)
        if d.expert_ff:
            wr.add_uint32(f"{a}.expert_feed_forward_length", d.expert_ff)
    if d.n_expert_shared:
        wr.add_uint32(f"{a}.expert_shared_count", d.n_expert_shared)
    if d.shared_ff:
        wr.add_uint32(f"{a}.expert_shared_feed_forward_length", d.shared_ff)
    if d.dense_layers:
        wr.add_uint32(f"{a}.leading_dense_block_count", len(d.dense_layers))
    if d.ssm is not None:
        s = d.ssm
        wr.add_uint32(f"{a}.ssm.conv_kernel", s.d_conv)
        wr.add_uint32(f"{a}.ssm.inner_size", s.d_inner)
        wr.add_uint32(f"{a}.ssm.state_size", s.d_state)
        wr.add_uint32(f"{a}.ssm.time_step_rank", s.dt_rank)
        wr.add_uint32(f"{a}.ssm.group_count", s.n_group)
    if d.shortconv:
        wr.add_uint32(f"{a}.shortconv.l_cache", d.shortconv)
    if d.mla is not None:
        m = d.mla
        wr.add_uint32(f"{a}.attention.kv_lora_rank", m.kv_lora_rank)
        if m.q_lora_rank:
            wr.add_uint32(f"{a}.attention.q_lora_rank", m.q_lora_rank)
        if m.absorbed:
            wr.add_uint32(f"{a}.attention.key_length", m.kv_lora_rank + m.rope_dim)
            wr.add_uint32(f"{a}.attention.value_length", m.kv_lora_rank)
            wr.add_uint32(f"{a}.attention.key_length_mla", m.key_length)
            wr.add_uint32(f"{a}.attention.value_length_mla", m.value_length)
        else:
            wr.add_uint32(f"{a}.attention.key_length", m.key_length)
            wr.add_uint32(f"{a}.attention.value_length", m.value_length)
        wr.add_uint32(f"{a}.rope.dimension_count", m.rope_dim)
    if d.tokens:
        wr.add_string("tokenizer.ggml.model", "gpt2")
        wr.add_array("tokenizer.ggml.tokens", [f"t{i}" for i in range(d.tokens)])
    if d.merges:
        wr.add_array("tokenizer.ggml.merges", [f"t{i % 997} t{i % 991}" for i in range(d.merges)])
    for key, text in d.string_kv.items():
        wr.add_string(key, text)
    for key in d.omit:
        wr.kv_data[0].pop(key.format(arch=a), None)
    for key, value in d.extra_kv.items():
        _add_any(wr, key, value)
    for key, number in d.uint64_kv.items():
        wr.add_uint64(key, number)
    for key, (vtype, value) in d.typed_kv.items():  # replaces the key when it was written above
        wr.kv_data[0].pop(key.format(arch=a), None)
        if vtype is V.ARRAY:
            wr.add_key_value(key.format(arch=a), list(value[1]), vtype, sub_type=value[0])
        else:
            wr.add_key_value(key.format(arch=a), value, vtype)


def _add_per_layer(wr: GGUFWriter, key: str, value: PerLayer) -> None:
    if isinstance(value, int):
        wr.add_uint32(key, value)
    else:
        wr.add_array(key, [int(v) for v in value])


def _add_any(wr: GGUFWriter, key: str, value: Any) -> None:
    if isinstance(value, bool):
        wr.add_bool(key, value)
    elif isinstance(value, int):
        wr.add_uint32(key, value)
    elif isinstance(value, float):
        wr.add_float32(key, value)
    elif isinstance(value, str):
        wr.add_string(key, value)
    else:
        wr.add_array(key, list(value))


def write_gguf(path: str | Path, d: ArchDesc, mode: Mode = "complete", split_max_tensors: int = 0) -> list[Path]:
    """Write the model; returns the file(s) written (several when split)."""
    path = Path(path)
    wr = GGUFWriter(path, d.arch, split_max_tensors=split_max_tensors)
    _add_metadata(wr, d)
    plan = tensor_plan(d)
    for name, shape, ggml_type in plan:
        wr.add_tensor_info(name, tuple(reversed(shape)), np.dtype(np.float32), nbytes(shape, ggml_type), ggml_type)
    files = wr.format_shard_names(path)
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_ti_data_to_file()
    sizes = [sum(GGUFWriter.ggml_pad(ti.nbytes, wr.data_alignment) for ti in t.values()) for t in wr.tensors]
    assert wr.fout is not None
    for fout, size in zip(wr.fout, sizes, strict=True):
        wr.write_padding(fout, fout.tell())
        if mode == "complete":
            fout.write(bytes(size))
        elif mode == "sparse":
            fout.truncate(fout.tell() + size)
    wr.close()
    return files


@dataclass(frozen=True)
class ProjectorDesc:
    """A vision projector (mmproj) as llama.cpp's clip loader reads it: a ViT and a LLaVA MLP projector.

    `text_embd` is the embedding width of the text model it feeds (llama.cpp refuses a mismatch).
    Matrices are F16 like real conversions; norms, biases and embeddings F32.
    """

    name: str = "tiny-mmproj"
    projector_type: str = "mlp"
    n_embd: int = 64
    n_ff: int = 128
    n_head: int = 4
    n_layer: int = 2
    image_size: int = 64
    patch_size: int = 8
    text_embd: int = 128
    mm_hidden: int | None = None
    class_embd: bool = True
    has_vision_encoder: bool = True
    arch: str = "clip"

    @property
    def n_patches(self) -> int:
        return (self.image_size // self.patch_size) ** 2


def projector_tensor_plan(d: ProjectorDesc) -> list[Tensor]:
    """Every tensor of the projector as (name, ggml shape ne[0..], type)."""
    E, hidden = d.n_embd, d.mm_hidden or d.text_embd
    n_pos = d.n_patches + (1 if d.class_embd else 0)
    out: list[Tensor] = [("v.patch_embd.weight", (d.patch_size, d.patch_size, 3, E), T.F16),
                         ("v.patch_embd.bias", (E,), T.F32), ("v.position_embd.weight", (E, n_pos), T.F32)]
    if d.class_embd:
        out.append(("v.class_embd", (E,), T.F32))
    out += [("v.pre_ln.weight", (E,), T.F32), ("v.pre_ln.bias", (E,), T.F32)]
    for il in range(d.n_layer):
        p = f"v.blk.{il}."
        for role in ("attn_q", "attn_k", "attn_v", "attn_out"):
            out += [(f"{p}{role}.weight", (E, E), T.F16), (f"{p}{role}.bias", (E,), T.F32)]
        for norm in ("ln1", "ln2"):
            out += [(f"{p}{norm}.weight", (E,), T.F32), (f"{p}{norm}.bias", (E,), T.F32)]
        out += [(f"{p}ffn_up.weight", (E, d.n_ff), T.F16), (f"{p}ffn_up.bias", (d.n_ff,), T.F32),
                (f"{p}ffn_down.weight", (d.n_ff, E), T.F16), (f"{p}ffn_down.bias", (E,), T.F32)]
    out += [("mm.0.weight", (E, hidden), T.F16), ("mm.0.bias", (hidden,), T.F32),
            ("mm.2.weight", (hidden, d.text_embd), T.F16), ("mm.2.bias", (d.text_embd,), T.F32)]
    return out


def write_projector(path: str | Path, d: ProjectorDesc = ProjectorDesc()) -> Path:
    """Write a complete mmproj GGUF (weights zero, norms one) that llama-server's `--mmproj` loads."""
    path = Path(path)
    wr = GGUFWriter(path, d.arch)
    wr.add_name(d.name)
    wr.add_file_type(1)
    wr.add_bool("clip.has_vision_encoder", d.has_vision_encoder)
    wr.add_string("clip.projector_type", d.projector_type)
    wr.add_bool("clip.use_gelu", True)
    for key, value in (("embedding_length", d.n_embd), ("feed_forward_length", d.n_ff), ("block_count", d.n_layer),
                       ("projection_dim", d.text_embd), ("attention.head_count", d.n_head)):
        wr.add_uint32(f"clip.vision.{key}", value)
    wr.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-6)
    wr.add_uint32("clip.vision.image_size", d.image_size)
    wr.add_uint32("clip.vision.patch_size", d.patch_size)
    wr.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    wr.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])
    for name, shape, ggml_type in projector_tensor_plan(d):
        n = 1
        for s in shape:
            n *= s
        if ggml_type is T.F32:
            data = np.ones(n, dtype=np.float32) if name.endswith(("ln1.weight", "ln2.weight", "pre_ln.weight")) \
                else np.zeros(n, dtype=np.float32)
            wr.add_tensor(name, data.reshape(tuple(reversed(shape))))
        else:
            wr.add_tensor(name, np.zeros(tuple(reversed(shape)), dtype=np.float16), raw_dtype=T.F16)
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()
    return path


MIXTRAL_8X7B = ArchDesc(name="Mixtral-8x7B-Instruct-v0.1 shape", n_layer=32, n_embd=4096, n_ff=14336, n_head=32,
                        n_head_kv=8, n_vocab=32000, context_length=32768, n_expert=8, n_expert_used=2,
                        weight_type=T.Q4_K, output_type=T.Q6_K, file_type=15)
"""Mixtral-8x7B-Instruct-v0.1's published shape (its config.json) in Q4_K with a Q6_K output, labelled Q4_K_M
(file type 15): a mixture of experts with no catalogue skeleton, for the layout matrix and the README's
screenshot."""
