"""CPU features in llama.cpp's names, from /proc/cpuinfo (probed or recorded) and from a log — one path.

tests/data/cpuinfo holds the first processor of this project's x86 machine kind (AVX-512, where the
recorded logs were made) and an Arm Neoverse V1 (dot product, i8mm, SVE).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from machine_fixtures import fake_nvml
from recorded_models import LOGS

from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.machine.cpu_features import LLAMA_CPP_NAMES, cpu_features_from_cpuinfo, read_cpu_features
from gguf_budget.core.machine.probe import probe_hardware

CPUINFO = Path(__file__).parent / "data" / "cpuinfo"


@pytest.mark.parametrize("name, expected", [
    ("x86_64_avx512.txt", {"AVX2", "AVX512"}),
    ("aarch64_neoverse_v1.txt", {"NEON", "DOTPROD", "MATMUL_INT8", "SVE"}),
])
def test_recorded_cpuinfo(name, expected):
    assert read_cpu_features(CPUINFO / name) == frozenset(expected)


@pytest.mark.parametrize("text, expected", [
    ("flags\t: fpu sse2 avx\n", frozenset()),          # a flags line without the kernels' features
    ("processor : 0\nmodel name : x\n", None),         # no flags line: unknown, not empty
    ("", None),
    ("flags : avx2\nflags : avx512f\n", frozenset({"AVX2"})),  # the first processor speaks for all
])
def test_cpuinfo_text(text, expected):
    assert cpu_features_from_cpuinfo(text) == expected


def test_an_unreadable_cpuinfo_is_unknown(tmp_path):
    assert read_cpu_features(tmp_path / "missing") is None


def test_the_probe_reads_cpuinfo_and_says_when_it_cannot(tmp_path):
    probed = probe_hardware(fake_nvml([]), drm_root=tmp_path, platform="linux", cgroup_root=tmp_path,
                            proc_self_cgroup=tmp_path / "none", cpuinfo=CPUINFO / "aarch64_neoverse_v1.txt")
    assert probed.cpu_features == frozenset({"NEON", "DOTPROD", "MATMUL_INT8", "SVE"})
    blind = probe_hardware(fake_nvml([]), drm_root=tmp_path, platform="linux", cgroup_root=tmp_path,
                           proc_self_cgroup=tmp_path / "none", cpuinfo=tmp_path / "none")
    assert blind.cpu_features is None


def test_a_log_and_the_machine_it_ran_on_name_the_same_kernel_features():
    log = parse_llamacpp_log((LOGS / "gemma3-270m-q4_k_m_ctx2048_f16.log").read_text())
    assert log.cpu_features & LLAMA_CPP_NAMES == read_cpu_features(CPUINFO / "x86_64_avx512.txt")
