"""A log belongs to a model when its tensor count and printed size agree — to the precision printed.

llama.cpp prints the loaded tensors' size with two decimals of MiB below 1 GiB and of GiB from
there (`llama_model_loader::print_info`): a 4.58 GiB figure is only known to ±5 MiB, so a model
of 1 GiB or more must be judged to that precision, not to a hundredth of a MiB.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, strategies as st
from recorded_models import SMOLLM2
from gguf_factory import write_gguf

from gguf_budget.core import load_model
from gguf_budget.core.evidence.compare import EvidenceMismatch, check_model
from gguf_budget.core.evidence.log_records import LoadRecord, ModelFacts, PrintedSize

MiB = 1 << 20
GiB = 1 << 30


def llama_cpp_prints(nbytes: int) -> PrintedSize:
    """`print_info`'s `file size = %.2f MiB` below 1 GiB, `%.2f GiB` from there."""
    return PrintedSize(f"{nbytes / MiB:.2f}", "MiB") if nbytes < GiB else PrintedSize(f"{nbytes / GiB:.2f}", "GiB")


def _run(size: PrintedSize, n_tensors: int) -> LoadRecord:
    facts = ModelFacts(path="m.gguf", n_tensors=n_tensors, n_kv_pairs=None, architecture="llama", name=None,
                       n_layer=None, n_vocab=None, n_embd=None, n_ctx_train=None, file_size=size, type_counts=())
    return LoadRecord(model=facts, dry_run=False, load_mode="mmap", offloaded=None, buffers=(), caches=(),
                      settings=None, breakdown=(), repacked=())  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    return load_model(write_gguf(tmp_path_factory.mktemp("m") / "m.gguf", SMOLLM2, "header_only")[0])


@given(nbytes=st.integers(min_value=1, max_value=400 * GiB))
def test_a_model_is_accepted_by_the_size_llama_cpp_prints_for_it(spec, nbytes):
    """Every size, MiB or GiB: the figure llama.cpp prints for these bytes matches them."""
    check_model(_run(llama_cpp_prints(nbytes), spec.n_tensors), replace(spec, tensor_bytes=nbytes))


@given(nbytes=st.integers(min_value=1, max_value=400 * GiB), off=st.sampled_from([-1, 1]))
def test_a_model_a_printed_digit_away_is_refused(spec, nbytes, off):
    printed = llama_cpp_prints(nbytes)
    unit = GiB if printed.unit == "GiB" else MiB
    other = nbytes + off * unit // 100 + off * unit // 200  # 1.5 hundredths of the unit away
    if other < 1:
        return
    with pytest.raises(EvidenceMismatch, match=rf"holds {printed.value} {printed.unit} of tensors"):
        check_model(_run(printed, spec.n_tensors), replace(spec, tensor_bytes=other))


def test_the_8b_q4_k_m_figure_is_read_with_its_own_precision(spec):
    """4.58 GiB (the Llama-3.1-8B Q4_K_M line): 4,920,734,720 tensor bytes is 4.5828 GiB — 3.4 MiB
    from the printed figure, refused before when held to 0.011 MiB."""
    printed = PrintedSize("4.58", "GiB")
    assert printed.resolution == 0.005 * GiB and printed.nbytes == round(4.58 * GiB)
    check_model(_run(printed, spec.n_tensors), replace(spec, tensor_bytes=4_920_734_720))
