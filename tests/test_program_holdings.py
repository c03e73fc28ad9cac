"""The prompt cache and the context checkpoints are priced only for a program that keeps them.

llama.cpp 0c1e570 gives `--cache-ram` and `--ctx-checkpoints` to llama-server and llama-cli only (common/arg.cpp:
`set_examples({LLAMA_EXAMPLE_SERVER, LLAMA_EXAMPLE_CLI})`); they live in tools/server's context, which llama-cli runs
in-process, and tools/completion has neither. The real programs of the CI build are asked which accept them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from gguf_factory import ArchDesc, write_gguf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llama_support import llama_engine

from gguf_budget.core import load_model
from gguf_budget.core.explorer.llama_question import RUNTIME_OF
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.runtime_memory import serves_sessions
from gguf_budget.core.fit.runtime_types import EngineSettings, Runtime
from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.fit.types import FitRequest
from gguf_budget.core.llama_words.options import PRICED
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.measure.engine import EngineKind

GiB = 1 << 30
SWA = ArchDesc(arch="gemma3", n_layer=6, n_head=4, n_head_kv=1, head_dim=256, sliding_window=512, qk_norm=True,
               post_norms=True, tied=True)


@pytest.fixture(scope="module")
def swa(tmp_path_factory):
    return load_model(write_gguf(tmp_path_factory.mktemp("swa") / "m.gguf", SWA, "header_only")[0])


def _fit(model, runtime: Runtime, server: ServerSettings | None = None):
    server = server if server is not None else ServerSettings()
    return estimate_fit(model, hypothetical_machine(16 * GiB),
                        FitRequest(ctx=4096, engine=EngineSettings(runtime=runtime), server=server))


def test_the_programs_that_keep_a_cache_and_checkpoints_are_those_llama_cpp_gives_the_options_to():
    for program, runtime in RUNTIME_OF.items():
        takes = program in PRICED["cache_ram"].programs and program in PRICED["ctx_checkpoints"].programs
        assert serves_sessions(runtime) == takes, program
    assert not serves_sessions(Runtime.LLAMA_CPP_PYTHON)


def test_the_real_programs_accept_the_options_exactly_where_they_are_priced():
    folder = Path(llama_engine().executable).parent
    for kind in (EngineKind.COMPLETION, EngineKind.CLI, EngineKind.SERVER):
        run = subprocess.run([str(folder / kind.value), "--cache-ram", "0", "--ctx-checkpoints", "0", "--version"],
                             capture_output=True, text=True, timeout=60)
        refused = "invalid argument: --cache-ram" in run.stdout + run.stderr
        assert refused == (run.returncode != 0), run.stderr[-500:]
        assert refused != serves_sessions(Runtime(kind.value)), kind


def test_llama_completion_holds_no_checkpoints_or_cache_where_llama_server_holds_both(swa):
    server, completion = _fit(swa, Runtime.LLAMA_SERVER), _fit(swa, Runtime.LLAMA_COMPLETION)
    assert server.server.checkpoints and server.server.cache_ram_mib and server.devices[0].server
    assert completion.server.checkpoints == 0 and completion.server.prompt_cache == 0
    assert completion.devices[0].server == 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cache=st.sampled_from([None, 0, 64, 8192, -1]), checkpoints=st.integers(0, 64),
       runtime=st.sampled_from([Runtime.LLAMA_COMPLETION, Runtime.LLAMA_CPP_PYTHON]))
def test_what_llama_server_alone_keeps_never_changes_another_programs_verdict(swa, cache, checkpoints, runtime):
    asked = _fit(swa, runtime, ServerSettings(cache_ram_mib=cache, ctx_checkpoints=checkpoints))
    none = _fit(swa, runtime, ServerSettings(cache_ram_mib=0, ctx_checkpoints=0))
    assert asked.devices == none.devices and asked.verdict == none.verdict
    assert asked.memory == none.memory
