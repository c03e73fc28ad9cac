"""Every printed command loads the file it names (issue 36, item 3): a priced quantization — priced, not
downloaded — is fetched from its source's Hub repository (`-hf owner/repo:TYPE`) when that is known, else there
is no command and one line says why; never a command that loads the source file with another type's offload.
Each program (llama-server, llama-cli, llama-completion, llama-cpp-python, Ollama) is read back for the model
it loads."""

from __future__ import annotations

import re
import shlex

import pytest
from gguf_factory import ArchDesc, write_gguf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gguf_budget.core import load_model
from gguf_budget.core.fit.ctx.auto_ctx import AutoFit, FitCtxReason
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.types import FitRequest
from gguf_budget.core.llama_words.reader import read_llama_args
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.views.command_view import OLLAMA, PROGRAMS, command_rows, program_text
from gguf_budget.core.views.compare_view import column_title, model_text
from gguf_budget.core.errors import RequestError
from gguf_budget.core.quant.ladder import price_types, priced_variant
from gguf_budget.core.views.remote_command import source_repo
from gguf_budget.core.views.run_it import full_load_run

GIB = 1 << 30
MACHINE = hypothetical_machine(64 * GIB, gpu_count=1, gpu_total=24 * GIB)
REPO = "someone/Tiny-GGUF"
PLACES = {"hf-cache": f"hub/models--{REPO.replace('/', '--')}/snapshots/0123abcd", "plain": "models"}


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, object]:
    """One small model in a Hugging Face cache snapshot and the same in a plain folder, each priced in every type."""
    root = tmp_path_factory.mktemp("priced")
    out = {}
    for place, folder in PLACES.items():
        (root / folder).mkdir(parents=True)
        path = write_gguf(root / folder / "tiny-Q8_0.gguf", ArchDesc(n_layer=2), "header_only")[0]
        out[place] = price_types(load_model(str(path)))
    return out


def loaded(text: str, program: str) -> str:
    """The model a program's text loads, as that program reads it."""
    if program == OLLAMA:
        return text.splitlines()[0].removeprefix("FROM ")
    if program == "llama-cpp-python":
        if "from_pretrained" in text:
            repo = re.search(r"repo_id='([^']+)'", text)[1]
            quant = re.search(r"filename='\*([^*]+)\*", text)[1]
            return f"{repo}:{quant}"
        return re.search(r"model_path='([^']+)'", text)[1]
    s = read_llama_args(shlex.split(text)).settings
    assert (s.model is None) != (s.hf_repo is None)
    return s.model if s.model is not None else s.hf_repo


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(place=st.sampled_from(sorted(PLACES)), pick=st.integers(min_value=0), program=st.sampled_from(PROGRAMS))
def test_every_printed_command_loads_the_file_it_names(sources, place, pick, program):
    priced = sources[place]
    model = priced.models[pick % len(priced.models)]
    fit = estimate_fit(model, MACHINE, FitRequest(ctx=256))
    shown = program_text(fit.recommended, program)
    own = model.priced_type is None
    if own:  # the source file's own type: the file itself
        assert loaded(shown.text, program) == priced.source.path
    elif place == "hf-cache":
        want = f"hf.co/{REPO}:{model.priced_type}" if program == OLLAMA else f"{REPO}:{model.priced_type}"
        assert loaded(shown.text, program) == want
        assert "tiny-Q8_0" not in shown.text  # never the source file
    else:
        assert shown.text == "" and len(shown.notes) == 1 and model.priced_type in shown.notes[0]
        assert "unknown" in shown.notes[0]


def test_the_run_it_line_and_the_fit_rows_say_why_a_priced_type_has_no_command(sources):
    priced = sources["plain"]
    model = next(m for m in priced.models if m.priced_type == "Q4_K_S")
    fit = estimate_fit(model, MACHINE, FitRequest(ctx=256))
    assert fit.recommended is not None and fit.recommended.argv[2] == priced.source.path  # what the fit priced
    run = full_load_run(AutoFit(fit, 256, 256, FitCtxReason.ASKED, None), None)
    assert run.command is None and "Q4_K_S is priced, not downloaded" in run.text
    assert command_rows(fit)[0][1].startswith("none — Q4_K_S is priced")


def test_the_repository_is_known_from_the_hugging_face_cache_only(tmp_path):
    assert source_repo(str(tmp_path / PLACES["hf-cache"] / "x.gguf")) == REPO
    assert source_repo(str(tmp_path / "models" / "x.gguf")) is None
    assert source_repo("models--broken/snapshots/r/x.gguf") is None


def test_compare_labels_a_priced_variant_as_such(sources):
    priced = sources["plain"]
    model = next(m for m in priced.models if m.priced_type == "Q4_K_S")
    assert column_title(model) == "Q4_K_S (priced, not downloaded) of tiny-Q8_0.gguf"
    assert column_title(priced.source) == "tiny-Q8_0.gguf"
    assert "weights priced, not downloaded" in model_text("Second", model, None)
    assert "weights in the file" in model_text("First", priced.source, None)


def test_a_priced_variant_is_found_by_its_type_in_any_case(sources):
    priced = sources["plain"]
    assert priced_variant(priced.source, "q4_k_s").priced_type == "Q4_K_S"
    with pytest.raises(RequestError, match=r"^Q9 is not a quantization this model can be priced in \(BF16, F16"):
        priced_variant(priced.source, "Q9")
