"""llama-server's host prompt cache (`--cache-ram`): what it may grow to, and the size the tool picks.

Read in `core.llama_cpp.LLAMA_CPP_SOURCE`:

Rule 1: `--cache-ram N` in MiB (common/arg.cpp `-cram`; default 8192, common/common.h
        `cache_ram_mib`): 0 turns the cache off, -1 lifts the byte limit
        (tools/server/server-context.cpp `load_model`: `server_prompt_cache(cache_ram_mib, n_ctx)`).
Rule 2: with N > 0 the cache never holds more than N MiB (tools/server/server-task.cpp
        `server_prompt_cache::alloc` evicts the oldest states before it allocates, and skips a
        state larger than the limit; `update` evicts down to it). Its token limit, n_ctx, grows
        to N MiB / bytes per token, so the byte limit is the one that binds: a full cache is N MiB.
Rule 3: with -1 only the token limit holds: the cached states of at most n_ctx tokens. A token's
        state is at most one cell of every layer's K and V (a sliding layer keeps fewer), each
        state carries its slot's checkpoints and recurrent state: priced as n_ctx cells of every
        layer plus every slot's checkpoints — an estimate of the most it can hold.
Rule 4: the states live in host RAM (`std::vector`), whatever device holds the KV cache — a
        speculative draft's state beside the target's (`server_prompt_data::drft`).
Rule 5 (this tool's choice, not llama.cpp's): when the person does not set `--cache-ram`, the
        full load sizes it for one context's worth of prompts — the MiB of one sequence's KV cache
        at n_ctx (llama-server's own token limit is n_ctx, Rule 3) — never above llama-server's
        8192 MiB, and lowered to what the host has left once everything else is placed (0: off),
        the way llama.cpp's own `--fit` lowers the context rather than fail. The command it prints
        says the number, so the server holds no more than the verdict counted.
"""

from __future__ import annotations

from gguf_budget.core.errors import RequestError

MiB = 1024 * 1024
DEFAULT_CACHE_RAM_MIB = 8192
NO_LIMIT = -1
MAX_CACHE_RAM_MIB = 2**31 - 1  # an int32 in llama.cpp


def check_cache_ram(mib: int | None) -> None:
    """Rule 1's values: -1, 0 or a positive MiB count fitting llama.cpp's int32 (None: the tool picks)."""
    if mib is not None and not (mib == NO_LIMIT or 0 <= mib <= MAX_CACHE_RAM_MIB):
        raise RequestError(f"--cache-ram must be -1 (no limit), 0 (off) or 1 to {MAX_CACHE_RAM_MIB} MiB")


def full_cache_bytes(cache_ram_mib: int, unlimited_full: int | None) -> int | None:
    """Rules 2–3: the bytes a full cache holds; `unlimited_full` is Rule 3's estimate for -1."""
    if cache_ram_mib == NO_LIMIT:
        return unlimited_full
    return cache_ram_mib * MiB


def chosen_cache_ram_mib(one_context: int, room: int) -> int:
    """Rule 5: one context's worth (`one_context` bytes, rounded up to whole MiB), at most llama-server's
    default and at most the whole MiB the host has left."""
    return max(min(DEFAULT_CACHE_RAM_MIB, -(-one_context // MiB), room // MiB), 0)
