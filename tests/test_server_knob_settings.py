"""llama-server's window knobs in the core: remembered between runs (validated), one builder for CLI and window, and a
projector or draft never follows the person to another model."""

from __future__ import annotations

from dataclasses import replace

from gguf_factory import ArchDesc, ProjectorDesc, write_gguf, write_projector
from hypothesis import given
from hypothesis import strategies as st

from gguf_budget.core.explorer.persist import ExplorerSettings, server_from, server_words, settings_dict, settings_from, \
    state_from
from gguf_budget.core.explorer.session import OpenModel, Session, SetServer
from gguf_budget.core.fit.server.inputs import open_draft, open_projector, server_settings
from gguf_budget.core.fit.server.types import CACHE_RAM, CHECKPOINTS, SLOTS, ServerSettings
from gguf_budget.core.fit.runtime_types import Runtime
from gguf_budget.core.model.loader import load_model

TEXT = ArchDesc(n_layer=2, n_embd=128, tokens=300, context_length=4096)

knobs = st.builds(
    ServerSettings,
    n_parallel=st.none() | st.integers(SLOTS.low, SLOTS.high),
    kv_unified=st.sampled_from((None, True, False)),
    cache_ram_mib=st.none() | st.integers(CACHE_RAM.low, CACHE_RAM.high),
    ctx_checkpoints=st.integers(CHECKPOINTS.low, CHECKPOINTS.high),
    worst_case=st.booleans(),
)


@given(knobs, st.sampled_from(tuple(Runtime)))
def test_every_server_knob_and_program_comes_back_as_it_was_stored(server, runtime):
    stored = settings_dict(replace(ExplorerSettings(), runtime=runtime.value, **server_words(server)))
    as_text = {k: None if v is None else str(v) for k, v in stored.items()}  # what an INI file gives back
    settings, refused = settings_from(as_text)
    assert refused == ()
    state = state_from(settings)
    assert (state.server, state.runtime) == (server, runtime)


def test_stored_server_knobs_that_are_not_valid_fall_back_to_fits_defaults():
    raw = {"parallel": "0", "kv_unified": "maybe", "cache_ram": "-2", "ctx_checkpoints": "-1", "runtime": "ollama",
           "worst_case": "perhaps"}
    settings, refused = settings_from(raw)
    assert {r.key for r in refused} == set(raw)
    assert server_from(settings) == ServerSettings() and state_from(settings).runtime is Runtime.LLAMA_SERVER
    assert settings_from({"parallel": "auto", "cache_ram": "-1"})[0] == replace(ExplorerSettings(), parallel="auto",
                                                                                 cache_ram="-1")


def test_the_cli_and_the_window_build_the_same_settings(tmp_path):
    model = load_model(str(write_gguf(tmp_path / "m.gguf", TEXT, "header_only")[0]))
    mm = str(write_projector(tmp_path / "mm.gguf", ProjectorDesc(text_embd=128)))
    draft = str(write_gguf(tmp_path / "d.gguf", replace(TEXT, n_layer=1), "header_only")[0])
    built = server_settings(model, n_parallel=None, cache_ram_mib=64, mmproj=mm, draft=draft)
    assert built == ServerSettings(n_parallel=None, cache_ram_mib=64, projector=open_projector(mm, model),
                                   draft=open_draft(draft, model))


def test_another_model_opens_without_the_projector_and_draft_but_keeps_the_slots(tmp_path):
    model = load_model(str(write_gguf(tmp_path / "m.gguf", TEXT, "header_only")[0]))
    other = load_model(str(write_gguf(tmp_path / "o.gguf", replace(TEXT, name="other"), "header_only")[0]))
    mm = open_projector(str(write_projector(tmp_path / "mm.gguf", ProjectorDesc(text_embd=128))), model)
    session = Session()
    session.apply(OpenModel(model, "a" * 64))
    session.apply(SetServer(ServerSettings(n_parallel=3, projector=mm)))
    assert session.state.server.projector is mm
    session.apply(OpenModel(other, "b" * 64))
    assert session.state.server == ServerSettings(n_parallel=3)
