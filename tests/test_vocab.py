"""The typed vocabulary: words are enums that still read, compare and serialise as the old strings."""

from __future__ import annotations

import json

import pytest

from gguf_budget.core.errors import RequestError
from gguf_budget.core.fit.types import FitRequest, FitVerdict
from gguf_budget.core.model.kv import KV_TYPES, KVType
from gguf_budget.core.model.roles import BLOCK_ROLES, TensorRole, block_role, global_role
from gguf_budget.core.model.spec import LayerAttention, LayerKind
from gguf_budget.core.plan.types import BudgetRequest, HeadMode, PlanOutcome
from gguf_budget.core.views.plan_view import BannerState
from gguf_budget.core.vocab import TextEnum

WORDS = [
    (LayerKind.SWA, "swa"),
    (LayerKind.RECURRENT, "recurrent"),
    (TensorRole.SHARED_EXPERTS, "shared_experts"),
    (KVType.Q8_0, "q8_0"),
    (HeadMode.STREAM, "stream"),
    (FitVerdict.DOES_NOT_FIT, "does_not_fit"),
    (PlanOutcome.OVERRIDDEN, "overridden"),
    (BannerState.EMPTY, "empty"),
]


@pytest.mark.parametrize(("word", "text"), WORDS)
def test_a_word_prints_compares_and_serialises_as_its_string(word: TextEnum, text: str):
    assert (str(word), f"{word}", f"{word:>20}", "%s" % word) == (text, text, f"{text:>20}", text)
    assert word == text and hash(word) == hash(text) and {text: 1}[word] == 1
    assert json.dumps({word: word}) == json.dumps({text: text})
    assert type(word)(text) is word


def test_a_layer_kind_from_a_plain_string_becomes_the_word():
    assert LayerAttention("swa", 8, 1, 64, 64, 1024).kind is LayerKind.SWA
    with pytest.raises(RequestError, match="'sliding'"):
        LayerAttention("sliding", 8, 1, 64, 64, 1024)


def test_roles_are_words_from_one_vocabulary():
    assert block_role("ffn_up_exps.weight") is TensorRole.EXPERTS
    assert global_role("output.weight") is TensorRole.OUTPUT and global_role("rope_freqs.weight") is TensorRole.OTHER
    assert BLOCK_ROLES[-1] is TensorRole.OTHER


def test_kv_types_keep_their_cli_spelling():
    assert tuple(KV_TYPES) == ("f16", "f32", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")  # llama.cpp's -ctk list
    assert all(isinstance(t, KVType) for t in KV_TYPES)


def test_requests_turn_their_plain_strings_into_words():
    request = BudgetRequest(head_mode="stream", kv_type="q8_0")
    assert (request.head_mode, request.kv_type) == (HeadMode.STREAM, KVType.Q8_0)
    assert type(request.head_mode) is HeadMode and type(request.kv_type) is KVType
    assert type(FitRequest(kv_type="bf16").kv_type) is KVType


@pytest.mark.parametrize(("verdict", "admitted"), [
    (FitVerdict.FITS_GPU, True), (FitVerdict.FITS_SPLIT, True), (FitVerdict.CPU_ONLY, True),
    (FitVerdict.DOES_NOT_FIT, False), (FitVerdict.UNKNOWN, False),
])
def test_a_verdict_knows_whether_it_admits_the_model(verdict, admitted):
    assert verdict.admitted is admitted


def test_the_banner_shows_every_plan_outcome_the_slow_headline_and_two_states_of_its_own():
    assert {str(o) for o in PlanOutcome} | {"slow", "error", "empty"} == {str(s) for s in BannerState}


def test_a_snapshot_says_where_its_figures_come_from_in_a_word():
    from gguf_budget.core.errors import RequestError
    from gguf_budget.core.machine.snapshot import HardwareSnapshot, SnapshotSource, hypothetical_machine

    assert hypothetical_machine(1 << 30).source is SnapshotSource.HYPOTHETICAL
    typed = HardwareSnapshot(captured_at=0.0, host_total=1 << 30, host_available=1 << 30, cgroup_limit=None, gpus=(),
                             gpu_error=None, source="probe")
    assert typed.source is SnapshotSource.PROBE and f"{typed.source}" == "probe"
    with pytest.raises(RequestError, match="probe, hypothetical"):
        HardwareSnapshot(captured_at=0.0, host_total=1 << 30, host_available=1 << 30, cgroup_limit=None, gpus=(),
                         gpu_error=None, source="guess")


def test_a_small_file_kind_keeps_its_words_and_its_cap():
    from gguf_budget.core.regular_file import FileKind, MiB

    assert FileKind.LOG.words == "a llama.cpp log" == FileKind.LOG and FileKind.LOG.cap == 64 * MiB
    assert all(kind.cap >= MiB for kind in FileKind)
