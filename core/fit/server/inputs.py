"""What a person names for llama-server — slots, cache, checkpoints, a projector file, a draft file — made into settings.

One builder for every screen: `fit`, `plan` and `quants` call it with their flags, the window
with its knobs and the files it was given, so a projector or draft is read and judged the same
way everywhere.

Rule 1: a projector file is read (`projector.read_projector`) and checked against the model it
        would feed (`projector.check_projector`); a draft file is read and checked against the
        model it would draft for (`draft.read_draft`). A file that is not one raises its one line
        (`ModelLoadError`/`RequestError`/`GGUFFormatError`/`OSError`) before anything changes.
Rule 2: these read the disk: the window calls them off its GUI thread.
"""

from __future__ import annotations

from gguf_budget.core.fit.server.checkpoints import CTX_CHECKPOINTS
from gguf_budget.core.fit.server.draft import DraftModel, read_draft
from gguf_budget.core.fit.server.projector import ProjectorSpec, check_projector, read_projector
from gguf_budget.core.fit.server.image_size import ImageSize
from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.fit.server.session_spec import TYPICAL_CHAT, SessionSpec
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KVType
from gguf_budget.core.model.spec import ModelSpec


def open_projector(path: str, model: ModelSpec) -> ProjectorSpec:
    """Rule 1: the projector at `path`, if it can feed `model`."""
    projector = read_projector(path)
    check_projector(model, projector)
    return projector


def open_draft(path: str, model: ModelSpec, *, gpu_layers: int | None = None, on_gpu: bool = True,
               kv_type: KVType = DEFAULT_KV_TYPE) -> DraftModel:
    """Rule 1: the draft at `path`, if llama.cpp would let it draft for `model`, run as asked (-ngld, -devd, -ctkd)."""
    return DraftModel(read_draft(path, model), gpu_layers, on_gpu, KVType(kv_type))


def server_settings(model: ModelSpec, *, n_parallel: int | None = 1, kv_unified: bool | None = None,
                    cache_ram_mib: int | None = None, ctx_checkpoints: int = CTX_CHECKPOINTS,
                    mmproj: str | None = None, projector_offload: bool = True, image: ImageSize | None = None,
                    draft: str | None = None, draft_gpu_layers: int | None = None, draft_on_gpu: bool = True,
                    draft_kv_type: KVType = DEFAULT_KV_TYPE, session: SessionSpec = TYPICAL_CHAT,
                    worst_case: bool = False) -> ServerSettings:
    """The settings these name, the projector and draft files read and checked (Rule 1); defaults are `ServerSettings`'s."""
    projector = None if mmproj is None else open_projector(mmproj, model)
    drafted = None if draft is None else open_draft(draft, model, gpu_layers=draft_gpu_layers, on_gpu=draft_on_gpu,
                                                    kv_type=draft_kv_type)
    return ServerSettings(n_parallel=n_parallel, kv_unified=kv_unified, cache_ram_mib=cache_ram_mib,
                          ctx_checkpoints=ctx_checkpoints, projector=projector, projector_offload=projector_offload,
                          image=image, draft=drafted, session=session, worst_case=worst_case)
