"""The typed machine figures in the core's settings: the bandwidths, the GPU backend and the GPU and CPU compute rates
come back as they were stored (`explorer.persist` Rules 2 and 5), and a value out of its range is refused alone."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from gguf_budget.core.explorer.persist import ExplorerSettings, settings_dict, settings_from, state_from, typed_words
from gguf_budget.core.explorer.state import TypedBandwidths
from gguf_budget.core.machine.backend import GPU_BACKENDS
from gguf_budget.core.ranges import BANDWIDTH, CPU_GFLOPS, GPU_TFLOPS

typed_figures = st.builds(
    TypedBandwidths,
    ram=st.none() | st.integers(BANDWIDTH.low, BANDWIDTH.high),
    disk=st.none() | st.integers(BANDWIDTH.low, BANDWIDTH.high),
    vram=st.none() | st.integers(BANDWIDTH.low, BANDWIDTH.high),
    backend=st.none() | st.sampled_from(GPU_BACKENDS),
    gpu_flops=st.none() | st.integers(int(GPU_TFLOPS.low * GPU_TFLOPS.scale), int(GPU_TFLOPS.high * GPU_TFLOPS.scale)),
    cpu_flops=st.none() | st.integers(int(CPU_GFLOPS.low * CPU_GFLOPS.scale) + 1, int(CPU_GFLOPS.high * CPU_GFLOPS.scale)),
)


def _as_ini(settings: ExplorerSettings) -> dict[str, str | None]:
    """What an INI file gives back: text, a removed key absent."""
    return {k: None if v is None else str(v) for k, v in settings_dict(settings).items()}


@given(typed_figures)
def test_every_typed_figure_comes_back_as_it_was_stored(typed):
    settings, refused = settings_from(_as_ini(replace(ExplorerSettings(), **typed_words(typed))))
    assert refused == ()
    state = state_from(settings)
    assert state.typed_bandwidths == typed and state.bandwidths == typed.over(None)


@given(typed_figures, st.sampled_from(("gpu_flops", "cpu_flops", "backend")),
       st.sampled_from(("0", "-1", "1e30", "10" * 30, "cuda ", "OpenCL", "CPU", "nan")))
def test_a_bad_stored_figure_is_refused_alone(typed, key, bad):
    raw = {**_as_ini(replace(ExplorerSettings(), **typed_words(typed))), key: bad}
    settings, refused = settings_from(raw)
    assert [r.key for r in refused] == [key]
    kept = state_from(settings).typed_bandwidths
    assert kept == replace(typed, **{"backend" if key == "backend" else key: None})
