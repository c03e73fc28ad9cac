"""The llama-server options `fit`, `plan` and `quants` share: slots, prompt cache, checkpoints, projector, draft.

Rule 1: every option is llama-server's own, under the same meaning (`core.fit.server.holdings` cites the
        sources): `--parallel N|auto` (-np), `--kv-unified`/`--no-kv-unified`, `--cache-ram MiB`
        (-1 no limit, 0 off), `--ctx-checkpoints N`, `--mmproj FILE`, `--no-mmproj-offload`,
        `--draft FILE` (-md), `--draft-gpu-layers N|auto` (-ngld), `--draft-device auto|none` (-devd),
        `--draft-kv-type` (-ctkd/-ctvd); `--image-size WxH` is this tool's: the image to price, as are
        `--session SPEC` (the traffic: `session_spec` Rule 1) and `--worst-case`.
Rule 2: defaults are stated in --help: one slot (llama-server's own is auto: 4 slots, unified KV),
        the cache sized by the tool, 32 checkpoints, no projector, no draft.
Rule 3: `plan` takes `--mmproj` and `--image-size` only (`projector_args`): the projector runs in RAM
        beside the Budget plan, so its weights and one image's compute come out of the budget first.
Rule 4: a projector or draft that is not one (another architecture, a text model given as a
        projector, a vocabulary llama.cpp would refuse) is one line on stderr, exit 2, and nothing
        is estimated.
"""

from __future__ import annotations

import argparse

from gguf_budget.core.errors import RequestError
from gguf_budget.core.fit.server.checkpoints import CTX_CHECKPOINTS
from gguf_budget.core.fit.server.prompt_cache import DEFAULT_CACHE_RAM_MIB
from gguf_budget.core.fit.server.types import CACHE_RAM, CHECKPOINTS, DRAFT_LAYERS, SLOTS, ServerSettings
from gguf_budget.core.fit.server.inputs import server_settings
from gguf_budget.core.fit.server.session_spec import SPELLING, TYPICAL_CHAT, SessionSpec
from gguf_budget.core.fit.server.slots import AUTO_SLOTS
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KV_TYPES, KVType
from gguf_budget.core.model.spec import ModelSpec

from gguf_budget.gui.cli.args import ranged
from gguf_budget.gui.cli.commands.projector_args import image_size


AUTO = "auto"


def _slots(text: str) -> int | None:
    if text.strip().lower() == AUTO:
        return None
    return ranged(SLOTS)(text)


def _draft_layers(text: str) -> int | None:
    if text.strip().lower() == AUTO:
        return None
    return ranged(DRAFT_LAYERS)(text)


def _session(text: str) -> SessionSpec:
    try:
        return SessionSpec.parse(text)
    except RequestError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_server_arguments(p: argparse.ArgumentParser) -> None:
    """Rules 1–2."""
    g = p.add_argument_group("llama-server")
    g.add_argument("-np", "--parallel", type=_slots, default=1, metavar="N|auto",
                   help=f"parallel slots (requests served at once), {SLOTS.text}, or 'auto' (default 1; "
                        f"llama-server's own default is auto: {AUTO_SLOTS} slots sharing one unified KV cache)")
    unified = g.add_mutually_exclusive_group()
    unified.add_argument("--kv-unified", dest="kv_unified", action="store_const", const=True, default=None,
                         help="the slots share one KV cache (default: only with --parallel auto)")
    unified.add_argument("--no-kv-unified", dest="kv_unified", action="store_const", const=False,
                         help="each slot gets its own share of the context")
    g.add_argument("--cache-ram", type=ranged(CACHE_RAM), metavar="MIB",
                   help=f"host prompt cache limit in MiB, as llama-server's --cache-ram: -1 no limit, 0 off "
                        f"(default: one context's worth, at most llama-server's {DEFAULT_CACHE_RAM_MIB}, within what "
                        "the host has left)")
    g.add_argument("--ctx-checkpoints", type=ranged(CHECKPOINTS), default=CTX_CHECKPOINTS, metavar="N",
                   help=f"context checkpoints kept per slot by sliding-window and recurrent models "
                        f"(default {CTX_CHECKPOINTS}, llama-server's)")
    g.add_argument("--mmproj", metavar="FILE", help="a vision projector (mmproj GGUF) loaded beside the model")
    g.add_argument("--no-mmproj-offload", action="store_true", help="keep the projector in host RAM")
    g.add_argument("--image-size", type=image_size, metavar="WxH",
                   help="the image to price the projector for (default: the projector's own size)")
    g.add_argument("--draft", metavar="FILE", help="a draft model for speculative decoding (llama-server -md)")
    g.add_argument("--draft-gpu-layers", type=_draft_layers, metavar="N|auto",
                   help="draft layers on the GPUs, as -ngld (default auto: every layer)")
    g.add_argument("--draft-device", choices=(AUTO, "none"), default=AUTO,
                   help="'none' keeps the draft in host RAM, as -devd none (default: the GPUs)")
    g.add_argument("--draft-kv-type", choices=[t.value for t in KV_TYPES], default=DEFAULT_KV_TYPE.value,
                   help="the draft's KV cache type, as -ctkd/-ctvd (default f16)")
    g.add_argument("--session", type=_session, metavar="SPEC",
                   help=f"the traffic to plan for, {SPELLING}; each turn resends its chat, 'k' is 1000 (default: a "
                        f"typical chat, {TYPICAL_CHAT.text}, said as an assumption): the server's memory is predicted "
                        "after each request and the verdict counts the session's peak")
    g.add_argument("--worst-case", action="store_true",
                   help="judge on the worst case instead: the prompt cache and every slot's checkpoints full")


def server_settings_from(args: argparse.Namespace, model: ModelSpec) -> ServerSettings:
    """The settings the options describe, with the projector and the draft read and checked (Rule 4; the core's builder)."""
    return server_settings(model, n_parallel=args.parallel, kv_unified=args.kv_unified, cache_ram_mib=args.cache_ram,
                           ctx_checkpoints=args.ctx_checkpoints, mmproj=args.mmproj,
                           projector_offload=not args.no_mmproj_offload, image=args.image_size, draft=args.draft,
                           draft_gpu_layers=args.draft_gpu_layers, draft_on_gpu=args.draft_device != "none",
                           draft_kv_type=KVType(args.draft_kv_type),
                           session=args.session if args.session is not None else TYPICAL_CHAT,
                           worst_case=args.worst_case)
