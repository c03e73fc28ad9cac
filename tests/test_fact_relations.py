"""The header's counts are checked as a whole before any work is sized by one (issue 24, part A).

Each relation has a header that breaks only it and is refused as a `GGUFFormatError` naming the
key; the issue's reproduction (`expert_used_count` far above `expert_count`) exits 2 in one line;
and a property: no valid-looking header makes `fit`, `quants` or the library's assessment do
more than a few times the work of the header it was edited from. Work is counted in Python
function calls (a profile hook), never timed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable

import pytest
from gguf.constants import GGUFValueType as V
from gguf_factory import ArchDesc, write_gguf
from hostile_headers import BASE, FACT_KEYS, MOE_BASE, PER_LAYER_KEYS, count, write_hostile
from hostile_support import assert_one_line_exit_2, run_cli
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import FitRequest, GGUFFormatError, estimate_fit, hypothetical_machine, load_model
from gguf_budget.core.library.assess import LibrarySettings, assess
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.quant.ladder import quant_ladder

GIB = 1 << 30
MACHINE = hypothetical_machine(host_available=64 * GIB, gpu_count=2, gpu_total=24 * GIB)
WORK_FACTOR = 4
"""A valid-looking edit may cost a few times the original's work (a longer ctx takes a few more
bisection steps), never more: the trained context 2^32 − 1 costs 2.6× the 4096 of the base."""

U32, U64 = V.UINT32, V.UINT64
ARCH_KEYS = tuple(key for key in FACT_KEYS if key.startswith("{arch}."))


def per_layer(*values: int, vtype: V = U32) -> tuple[V, tuple[V, list[int]]]:
    return V.ARRAY, (vtype, list(values))


RELATIONS = [
    pytest.param(MOE_BASE, {"{arch}.expert_used_count": (U32, 5)}, "llama.expert_used_count is 5, more than the 4 experts",
                 id="used-above-experts"),
    pytest.param(MOE_BASE, {"{arch}.expert_used_count": (U32, 2**31 - 1)}, "llama.expert_used_count is 2147483647",
                 id="used-2^31"),
    pytest.param(MOE_BASE, {"{arch}.expert_count": (U32, 2000)}, "llama.expert_count is 2000; llama.cpp allows at most 1024",
                 id="experts-above-cap"),
    pytest.param(MOE_BASE, {"{arch}.expert_used_count": (U32, 0)}, "llama.expert_used_count must route at least one",
                 id="experts-routing-none"),
    pytest.param(BASE, {"{arch}.expert_used_count": (U32, 2)}, "llama.expert_used_count is 2, more than the 0 experts",
                 id="used-without-experts"),
    pytest.param(MOE_BASE, {"{arch}.expert_count": (U32, 8)}, "llama.expert_count is 8 but blk.0.ffn_gate_exps.weight holds 4",
                 id="experts-unlike-tensors"),
    pytest.param(MOE_BASE, {"{arch}.expert_shared_count": (U32, 5000)}, "llama.expert_shared_count is 5000",
                 id="shared-above-cap"),
    pytest.param(BASE, {"{arch}.attention.head_count_kv": (U32, 3)}, "does not divide its 4 heads",
                 id="kv-heads-not-dividing"),
    pytest.param(BASE, {"{arch}.attention.head_count": per_layer(4, 0, 4)}, "gives layer 1 2 KV heads but it has no heads",
                 id="kv-heads-without-heads"),
    pytest.param(BASE, {"{arch}.attention.head_count": (U32, 3), "{arch}.attention.head_count_kv": (U32, 1)},
                 "llama.attention.head_count is 3, which does not divide the embedding length 64", id="heads-not-dividing-embd"),
    pytest.param(BASE, {"{arch}.embedding_length": (U32, 128)}, "token_embd.weight has rows of 64",
                 id="embd-unlike-tensor"),
    pytest.param(BASE, {"{arch}.context_length": (U64, 2**40)}, "llama.context_length is 1099511627776, more than llama.cpp",
                 id="ctx-above-uint32"),
    pytest.param(BASE, {"{arch}.attention.sliding_window": (U64, 2**33)}, "sliding_window is 8589934592",
                 id="window-above-uint32"),
    pytest.param(BASE, {"{arch}.feed_forward_length": per_layer(128, 2**32, 128, vtype=U64)}, "feed_forward_length is 4294967296",
                 id="per-layer-above-uint32"),
]


@pytest.mark.parametrize(("base", "overrides", "words"), RELATIONS)
def test_a_header_that_breaks_a_relation_is_refused_naming_the_key(tmp_path, base, overrides, words):
    path = write_hostile(tmp_path, "m.gguf", overrides, base=base)
    with pytest.raises(GGUFFormatError) as e:
        load_model(path)
    assert words in str(e.value) and "\n" not in str(e.value)
    assert e.value.offset is not None  # the key's byte offset: where to look in the file


def test_more_blocks_than_llama_cpp_loads_are_refused(tmp_path):
    path = write_gguf(tmp_path / "deep.gguf", ArchDesc(n_layer=513, n_embd=32, n_ff=32, n_head=2, n_head_kv=1,
                                                       n_vocab=32), "header_only")[0]
    with pytest.raises(GGUFFormatError, match="llama.block_count is 513; llama.cpp loads at most 512 layers"):
        load_model(path)


def test_the_unedited_bases_load(tmp_path):
    for base in (BASE, MOE_BASE):
        spec = load_model(write_hostile(tmp_path, "m.gguf", {"general.name": (V.STRING, b"ok")}, base=base))
        assert spec.expert_used_count == (base.n_expert_used or None)


@pytest.fixture(scope="module")
def huge_moe(tmp_path_factory) -> Path:
    """The issue's reproduction: a MoE header whose `expert_used_count` is 10^6 (39 s and 2.5 GB in `fit` before)."""
    return write_hostile(tmp_path_factory.mktemp("moe"), "moe.gguf", {"{arch}.expert_used_count": (U32, 10**6)},
                         base=MOE_BASE)


@pytest.mark.parametrize("command", [["fit", "--host-available", "64G", "--no-gpu"], ["quants", "--no-gpu"],
                                     ["inspect"]])
def test_the_commands_refuse_the_edited_moe_header_in_one_line(huge_moe, command):
    result = run_cli([command[0], str(huge_moe), *command[1:]])
    assert_one_line_exit_2(result, "expert_used_count is 1000000, more than the 4 experts")


def test_the_library_lists_the_edited_moe_header_as_unreadable(huge_moe):
    result = run_cli(["library", "--add", str(huge_moe.parent), "--no-gpu", "--host-available", "64G", "--json"])
    assert result.returncode == 0, result.stderr
    text = json.dumps(json.loads(result.stdout))
    assert "expert_used_count is 1000000" in text


class TooMuchWork(Exception):
    """More Python calls than the limit: the work is being sized by a count it should not trust."""


def calls_made(work: Callable[[], object], limit: int) -> int:
    """How many Python functions `work` called; stops it with `TooMuchWork` past `limit`."""
    made = 0

    def counting(frame, event, arg):
        nonlocal made
        if event == "call":
            made += 1
            if made > limit:
                raise TooMuchWork(f"more than {limit} calls")

    sys.setprofile(counting)
    try:
        work()
    finally:
        sys.setprofile(None)
    return made


def everything(spec: ModelSpec) -> None:
    """What `fit`, `quants` and `library` do with a model that loaded."""
    estimate_fit(spec, MACHINE, FitRequest())
    quant_ladder(spec, MACHINE)
    assess(spec, LibrarySettings(MACHINE, Budget.of(8 * GIB)))


@pytest.fixture(scope="module")
def base_work(tmp_path_factory) -> dict[str, int]:
    folder = tmp_path_factory.mktemp("bases")
    work = {}
    for base in (BASE, MOE_BASE):
        spec = load_model(write_gguf(folder / f"{base.name}.gguf", base, "header_only")[0])
        work[base.name] = calls_made(lambda spec=spec: everything(spec), 10**8)
    return work


@st.composite
def valid_looking(draw: st.DrawFn) -> tuple[ArchDesc, dict]:
    """Well-typed counts of hostile sizes, one to three keys, on the dense or the MoE base."""
    base = draw(st.sampled_from([BASE, MOE_BASE]))
    keys = draw(st.lists(st.sampled_from(ARCH_KEYS), min_size=1, max_size=3, unique=True))
    return base, {key: draw(count(key in PER_LAYER_KEYS)) for key in keys}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(case=valid_looking())
@example(case=(MOE_BASE, {"{arch}.expert_used_count": (U32, 2**31 - 1)}))
@example(case=(MOE_BASE, {"{arch}.expert_count": (U32, 2**32 - 1), "{arch}.expert_used_count": (U32, 2**32 - 1)}))
def test_no_valid_looking_header_makes_fit_quants_or_library_work_more_than_a_few_times_the_original(
        tmp_path, base_work, case):
    base, overrides = case
    path = write_hostile(tmp_path, "m.gguf", overrides, base=base)
    try:
        spec = load_model(path)
    except GGUFFormatError:
        return
    limit = WORK_FACTOR * base_work[base.name]
    calls_made(lambda: everything(spec), limit)  # TooMuchWork fails the example


def test_the_issue_reproduction_does_bounded_work(huge_moe, base_work):
    def load_and_use() -> None:
        try:
            spec = load_model(huge_moe)
        except GGUFFormatError:
            return
        everything(spec)

    calls_made(load_and_use, WORK_FACTOR * base_work[MOE_BASE.name])
