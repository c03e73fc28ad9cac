"""A speculative-decoding draft model (`-md FILE`): whether llama-server accepts it, and how it runs.

Read in `core.llama_cpp.LLAMA_CPP_SOURCE`:

Rule 1: the draft must speak the target's vocabulary (common/speculative.cpp
        `common_speculative_are_compatible`): the same tokenizer type, the same BOS and EOS
        (whether added, and which id), token counts at most 128 apart
        (`SPEC_VOCAB_MAX_SIZE_DIFFERENCE`), and the same text for every token from id 5
        (`SPEC_VOCAB_CHECK_START_TOKEN_ID`) up to the smaller count. A draft that is not a
        language model at all (a projector, an embedding model without a vocabulary) is refused
        before that.
Rule 2: its context is the target's: n_ctx cells (`common_speculative_init_result`: `cparams.n_ctx =
        llama_n_ctx(ctx_tgt)`), the same slots and KV sharing (`common_base_params_to_speculative`
        copies the target's parameters), in its own cache type (`-ctkd`/`-ctvd`, default f16).
Rule 3: placement: `-ngld N` layers on the GPUs (default -1, which llama.cpp reads as every layer
        and the output: src/llama-model.cpp `n_gpu_layers`), split like the target's; `-devd none`
        keeps it in host RAM. llama.cpp's fit counts the draft's memory before it chooses the
        target's layers (common/fit.cpp `common_fit_extra_model`), so the target gets what the
        draft leaves.
Rule 4: llama-server keeps the draft only with a speculative type: with `-md` alone it loads the
        draft, finds no implementation and frees it again (tools/server/server-context.cpp
        `load_model`), so the command says `--spec-type draft-simple`. That type drafts up to 3
        tokens a step (`--spec-draft-n-max`, common/common.h), so the target reserves
        N · (1 + 3) output rows (`slots` Rule 5) and the draft N (`n_outputs_max = n_parallel`).
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import GGUFFormatError, ModelLoadError, RequestError
from gguf_budget.core.gguf.constants import Keys
from gguf_budget.core.gguf.header import read_header
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KVType
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.model.spec import ModelSpec

SPEC_TYPE = "draft-simple"
DRAFT_N_MAX = 3
VOCAB_MAX_DIFFERENCE = 128
VOCAB_CHECK_START = 5
TOKEN_LIST_MAX = 1 << 20
_SPECIALS = ((Keys.Tokenizer.ADD_BOS, Keys.Tokenizer.BOS_ID, "BOS"), (Keys.Tokenizer.ADD_EOS, Keys.Tokenizer.EOS_ID, "EOS"))


@dataclass(frozen=True)
class DraftModel:
    """The draft and how it is run: `gpu_layers` None = llama.cpp's default (every layer), `on_gpu`
    False = `-devd none`."""

    spec: ModelSpec
    gpu_layers: int | None = None
    on_gpu: bool = True
    kv_type: KVType = DEFAULT_KV_TYPE

    def __post_init__(self) -> None:
        if self.gpu_layers is not None and self.gpu_layers < 0:
            raise RequestError("draft GPU layers must be 0 or more")

    def layers_on_gpu(self, have_gpus: bool) -> int:
        """Rule 3: the `-ngld` count llama.cpp acts on."""
        if not have_gpus or not self.on_gpu:
            return 0
        return self.spec.n_layer + 1 if self.gpu_layers is None else min(self.gpu_layers, self.spec.n_layer + 1)


def _tokens(path: str) -> tuple[str, ...] | None:
    tokens = read_header(path, keep_array_max=TOKEN_LIST_MAX).metadata.get(Keys.Tokenizer.LIST)
    return tokens if isinstance(tokens, tuple) else None


def vocab_mismatch(target: ModelSpec, draft: ModelSpec) -> str | None:
    """Rule 1: why llama.cpp would refuse `draft` beside `target`, in words; None when it accepts it."""
    t_meta, d_meta = target.metadata, draft.metadata
    kind_t, kind_d = t_meta.get(Keys.Tokenizer.MODEL), d_meta.get(Keys.Tokenizer.MODEL)
    if kind_d is None or not draft.n_vocab:
        return "it has no vocabulary (not a language model)"
    if kind_t != kind_d:
        return f"its tokenizer is {kind_d!r}, the model's is {kind_t!r}"
    for add, token, word in _SPECIALS:
        if t_meta.get(add) != d_meta.get(add) or (t_meta.get(add) is not False and t_meta.get(token) != d_meta.get(token)):
            return f"its {word} token differs from the model's ({d_meta.get(token)} vs {t_meta.get(token)})"
    n_t, n_d = target.n_vocab or 0, draft.n_vocab
    if abs(n_t - n_d) > VOCAB_MAX_DIFFERENCE:
        return f"its vocabulary has {n_d} tokens, the model's {n_t} (llama.cpp allows {VOCAB_MAX_DIFFERENCE} apart)"
    try:
        tokens_t, tokens_d = _tokens(target.shards[0]), _tokens(draft.shards[0])
    except GGUFFormatError:
        return None
    if tokens_t is not None and tokens_d is not None:
        for i in range(VOCAB_CHECK_START, min(len(tokens_t), len(tokens_d))):
            if tokens_t[i] != tokens_d[i]:
                return f"token {i} differs ({tokens_d[i]!r} vs the model's {tokens_t[i]!r})"
    return None


def read_draft(path: str, target: ModelSpec) -> ModelSpec:
    """The draft at `path`, checked against `target` (Rule 1); one line (`ModelLoadError`/`RequestError`) if it is not one."""
    arch = read_header(path).metadata.get(Keys.General.ARCHITECTURE)
    if arch == "clip":
        raise ModelLoadError(f"{path} is a vision projector (architecture 'clip'), not a draft model: give it as --mmproj")
    draft = load_model(path)
    check_draft(target, draft)
    return draft


def check_draft(target: ModelSpec, draft: ModelSpec) -> None:
    """Rule 1 as one line a person can act on (RequestError)."""
    why = vocab_mismatch(target, draft)
    if why is not None:
        raise RequestError(f"{draft.path} cannot draft for {target.path}: {why}")
