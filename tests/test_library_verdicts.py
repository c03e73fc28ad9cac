"""The library's kept verdicts: keyed by what decides them, at the precision they are judged at (`assess` Rules 4–5).

Work is counted, never timed (`benchmarks/bench_library_rescan.py` times it): headers read (the
`reads` fixture) and models judged per rescan. A probed machine probed again a minute later — its
free RAM moved by a few MiB, its probe time later — reads no header and judges nothing; the key is
the same in every process; a verdict depends on nothing its key does not name.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from gguf_factory import ArchDesc, write_gguf
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core.library.assess import MEMORY_STEP, LibrarySettings, assess, assessment_key, judged_settings
from gguf_budget.core.library.scan import scan
from gguf_budget.core.library.stores import StoreKind, StoreRoot
from gguf_budget.core.machine.gpu import GpuInfo, Vendor
from gguf_budget.core.machine.snapshot import HardwareSnapshot, SnapshotSource, hypothetical_machine
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.plan.budget import Budget

GIB, MIB = 1 << 30, 1 << 20
SMALL = ArchDesc(name="small-llama", n_layer=4, n_embd=256, n_ff=512, n_head=4, n_head_kv=2, n_vocab=512,
                 context_length=65536)
FEATURES = frozenset({"AVX2", "AVX512", "AVX_VNNI", "FMA", "F16C", "SSE3"})


def probed(host_available: int, captured_at: float = 1_700_000_000.0, gpu_free: int | None = None) -> HardwareSnapshot:
    """A machine as the probe reports it (a probe's figures, typed here so that the test controls them)."""
    gpus = () if gpu_free is None else (GpuInfo(index=0, name="GPU", total=8 * GIB, free=gpu_free,
                                                used=8 * GIB - gpu_free, vendor=Vendor.NVIDIA),)
    return HardwareSnapshot(captured_at=captured_at, host_total=32 * GIB, host_available=host_available,
                            cgroup_limit=None, gpus=gpus, gpu_error=None, source=SnapshotSource.PROBE,
                            cpu_features=FEATURES)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    top = tmp_path / "models"
    top.mkdir()
    for i in range(5):
        write_gguf(top / f"m{i}.gguf", replace(SMALL, n_layer=4 + i), "header_only")
    return top


class Judge:
    """`assess` with a count of the models it judged."""

    def __init__(self) -> None:
        self.judged = 0

    def scan(self, folder: Path, chosen: LibrarySettings):
        def counted(spec):
            self.judged += 1
            return assess(spec, chosen)

        result = scan([StoreRoot(StoreKind.USER, folder)], counted, assess_key=assessment_key(chosen), workers=1)
        assert result.complete and all(e.assessment is not None for e in result.entries)
        return result


def test_a_machine_probed_again_reads_no_header_and_judges_nothing(folder, reads):
    judge = Judge()
    first = LibrarySettings(probed(20 * GIB + 300 * MIB, gpu_free=6 * GIB + 100 * MIB), Budget.of(4 * GIB))
    before = judge.scan(folder, first)
    assert judge.judged == 5 and len(reads) == 5
    reads.clear()
    judge.judged = 0
    a_minute_later = replace(first, machine=probed(20 * GIB + 290 * MIB, captured_at=1_700_000_060.0,
                                                   gpu_free=6 * GIB + 120 * MIB))
    after = judge.scan(folder, a_minute_later)
    assert (judge.judged, reads) == (0, [])
    assert [e.assessment for e in after.entries] == [e.assessment for e in before.entries]


def test_free_ram_moved_a_step_judges_again_without_reading_a_header(folder, reads):
    judge = Judge()
    judge.scan(folder, LibrarySettings(probed(20 * GIB + 300 * MIB), Budget.of(4 * GIB)))
    reads.clear()
    judge.judged = 0
    judge.scan(folder, LibrarySettings(probed(20 * GIB + 300 * MIB - MEMORY_STEP), Budget.of(4 * GIB)))
    assert (judge.judged, reads) == (5, [])


def test_a_typed_machine_is_judged_as_typed():
    """Rule 5: typed figures do not move, so they are not rounded: one MiB more is other settings."""
    one, other = (LibrarySettings(hypothetical_machine(16 * GIB + n * MIB), Budget.of(4 * GIB)) for n in (1, 2))
    assert judged_settings(one).machine.host_available == 16 * GIB + MIB
    assert assessment_key(one) != assessment_key(other)


KEY_CODE = """
from gguf_budget.core.library.assess import LibrarySettings, assessment_key
from gguf_budget.core.machine.snapshot import HardwareSnapshot, SnapshotSource
from gguf_budget.core.plan.budget import Budget
machine = HardwareSnapshot(captured_at=1.0, host_total=2**35, host_available=2**34, cgroup_limit=None, gpus=(),
                           gpu_error=None, source=SnapshotSource.PROBE,
                           cpu_features=frozenset({"AVX2", "AVX512", "AVX_VNNI", "FMA", "F16C", "SSE3"}))
print(assessment_key(LibrarySettings(machine, Budget.of(2**32))))
"""


def test_the_key_is_the_same_in_every_process():
    """Rule 4: a set is named sorted; `repr` of the CPU's features changes with the string hash seed of the run."""
    keys = {subprocess.run([sys.executable, "-c", KEY_CODE], capture_output=True, text=True, check=True, timeout=120,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in range(6)}
    assert len(keys) == 1


@settings(max_examples=40, deadline=None)
@given(step=st.integers(8, 120), offsets=st.tuples(st.integers(0, MEMORY_STEP - 1), st.integers(0, MEMORY_STEP - 1)),
       budget=st.integers(64 * MIB, 24 * GIB), later=st.floats(0, 1e6))
def test_settings_of_one_key_get_one_verdict(small_spec, step, offsets, budget, later):
    """Free RAM anywhere within one step, a probe at any time: one key, and one verdict (the verdict is judged on
    what the key names, so a kept verdict is the one judging again would give)."""
    one, other = (LibrarySettings(probed(step * MEMORY_STEP + off, captured_at=1e9 + later * n), Budget.of(budget))
                  for n, off in enumerate(offsets))
    assert assessment_key(one) == assessment_key(other)
    assert assess(small_spec, one) == assess(small_spec, other)


@pytest.fixture(scope="module")
def small_spec(tmp_path_factory):
    return load_model(write_gguf(tmp_path_factory.mktemp("spec") / "small.gguf", SMALL, "header_only")[0])

