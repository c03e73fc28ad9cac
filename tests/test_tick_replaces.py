"""A ctx tick copies a frozen record only where a field moves: `dataclasses.replace` walks every field of the record
and runs its `__init__` again, and the old code made 125 of those a tick on a 70B drag — every context tier re-marked,
the session's bounds narrowed one field at a time, a server load built twice, a band's workloads and a full load's
claims copied unchanged. Each count here fails on that code."""

from __future__ import annotations

import cProfile
import dataclasses
import pstats
from collections import Counter

from gguf_budget.core import hypothetical_machine
from gguf_budget.core.explorer.ctx_tiers import marked
from gguf_budget.core.explorer.session import OpenModel, Session, SetCtx, SetMachine
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.model.spec import ModelSpec

GiB = 1 << 30
NEW_CTXS = (9472, 23808, 40448, 77056, 113664)


def _drag(model: ModelSpec) -> tuple[Session, Counter[str], Counter[str]]:
    """A session on 128 GiB and one 24 GiB GPU, dragged over NEW_CTXS: the replaces made by each caller (and "all"),
    and the calls of each function."""
    s = Session()
    s.apply(SetMachine(hypothetical_machine(128 * GiB, gpu_count=1, gpu_total=24 * GiB), Reserves(), None, None))
    s.apply(OpenModel(dataclasses.replace(model), "x" * 64))
    profile = cProfile.Profile()
    for ctx in NEW_CTXS:
        profile.enable()
        s.apply(SetCtx(ctx))
        profile.disable()
    replaces: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    for (path, _, name), (_, n, _, _, callers) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        calls[f"{path.rsplit('/', 1)[-1]}:{name}"] += n
        if name == "replace" and path.endswith("dataclasses.py"):
            replaces["all"] += n
            for (caller_path, _, caller), counts in callers.items():
                replaces[f"{caller_path.rsplit('/', 1)[-1]}:{caller}"] += counts[0]
    return s, replaces, calls


def test_a_ctx_tick_copies_only_the_records_whose_fields_move(llama70b):
    _, replaces, calls = _drag(llama70b)
    assert replaces["ctx_tiers.py:marked"] <= 2 * len(NEW_CTXS)  # the chosen and the largest tier at most
    assert replaces["ctx_tiers.py:<listcomp>"] == 0
    assert replaces["full_load.py:full_load"] == 0  # no runtime evidence: the claims are the fit's own
    assert replaces["band.py:_extras"] == 0  # no draft, projector or checkpoints: a workload is its own
    assert replaces["holdings.py:finish_server"] == calls["holdings.py:finish_server"]  # the host; the load built once
    assert replaces["estimate.py:_judge"] == calls["estimate.py:_judge"]  # the setup's held memory; the request stays
    assert replaces["session.py:_told_apart"] <= 2 * calls["session.py:_told_apart"]  # the key, the bounds at once
    assert replaces["all"] <= 80 * len(NEW_CTXS), replaces.most_common(12)  # the old code: 625 over these ticks


def test_marking_the_tiers_copies_only_those_whose_marks_move(llama70b):
    s, _, _ = _drag(llama70b)
    view = s.view
    load = view.full_load
    assert load is not None and view.kept is not None
    unmarked = dict(view.kept.tiers)
    figures = {t.ctx: unmarked[t.ctx] for t in view.tiers}
    tiers = marked(figures, load)
    assert [t.ctx for t in tiers] == sorted(figures)
    assert {t.ctx for t in tiers if t is not figures[t.ctx]} == {t.ctx for t in tiers if t.chosen or t.largest}
    assert tiers == view.tiers
