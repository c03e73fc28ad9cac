"""Hypothesis over structurally valid headers with hostile values (`hostile_headers`): only the
project's own errors (`BudgetError`) escape `load_model`, and every file that loads is planned, fitted, swept,
rendered and opened in the window without an exception. A guard fails an example that runs
for a minute (a hang, not a speed budget: speed is measured by `benchmarks/`)."""

from __future__ import annotations

import json
import signal
from contextlib import contextmanager
from typing import Iterator

import pytest
from gguf.constants import GGUFValueType as V
from gui_support import child
from hostile_headers import duplicates, hostile_overrides, write_hostile
from hypothesis import HealthCheck, given, settings

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import (
    BudgetError, BudgetRequest, FitRequest, PlanError, budget_range, estimate_fit, hypothetical_machine,
    load_model, plan_dict, plan_memory, plan_text, sweep_budgets, sweep_dict, sweep_text,
)
from gguf_budget.core.views.fit_report import fit_dict, fit_text
from gguf_budget.core.views.inspect_report import inspect_dict, inspect_text

GIB = 1 << 30
HANG_S = 60
MACHINE = hypothetical_machine(host_available=64 * GIB, gpu_count=2, gpu_total=24 * GIB)
PROJECT_ERRORS = (BudgetError,)


class Hung(Exception):
    """An example ran for HANG_S seconds."""


@contextmanager
def hang_guard() -> Iterator[None]:
    def fire(signum, frame):
        raise Hung(f"still running after {HANG_S} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, HANG_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _plan_everything(spec) -> None:
    for request in (BudgetRequest(budget=Budget.unlimited()), BudgetRequest(budget=Budget.of(1 << 20)), BudgetRequest(budget=Budget.of(GIB)), BudgetRequest(budget=Budget.of(1 << 50)),
                    BudgetRequest(budget=Budget.of(GIB), ctx=4096), BudgetRequest(budget=Budget.of(GIB), n_buffers=1, force=True)):
        try:
            plan = plan_memory(spec, request)
        except PlanError:
            continue
        plan_text(plan)
        json.dumps(plan_dict(plan))
    try:
        result = sweep_budgets(spec, budget_range("1M:4G:256M"), BudgetRequest())
    except PlanError:
        return
    sweep_text(result)
    json.dumps(sweep_dict(result))


def _fit_everything(spec) -> None:
    for request in (FitRequest(), FitRequest(gpu_layers=0), FitRequest(gpu_layers=1), FitRequest(gpu_layers=65536),
                    FitRequest(ctx=1)):
        estimate = estimate_fit(spec, MACHINE, request)
        fit_text(estimate)
        json.dumps(fit_dict(estimate))


def exercise(spec) -> None:
    """Everything the CLI would do with a model that loaded."""
    inspect_text(spec)
    json.dumps(inspect_dict(spec))
    _plan_everything(spec)
    _fit_everything(spec)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(overrides=hostile_overrides(), duplicate=duplicates())
def test_hostile_values_load_as_a_model_or_one_project_error(tmp_path, overrides, duplicate):
    path = write_hostile(tmp_path, "m.gguf", overrides, duplicate)
    with hang_guard():
        try:
            spec = load_model(path)
        except PROJECT_ERRORS as e:
            assert "\n" not in str(e)
            return
        exercise(spec)


@pytest.mark.parametrize("overrides", [
    {"{arch}.context_length": (V.UINT64, 2**64 - 1)},
    {"{arch}.embedding_length": (V.UINT64, 2**64 - 1)},
    {"{arch}.context_length": (V.UINT32, 2**31)},
    {"{arch}.attention.head_count_kv": (V.UINT64, 2**63 - 1), "{arch}.attention.key_length": (V.UINT64, 2**64 - 1)},
    {"{arch}.attention.sliding_window": (V.UINT64, 2**64 - 1), "{arch}.attention.sliding_window_pattern":
        (V.UINT64, 2**64 - 1)},
    {"{arch}.expert_count": (V.UINT64, 2**64 - 1), "{arch}.expert_used_count": (V.UINT64, 2**64 - 1)},
    {"{arch}.vocab_size": (V.UINT64, 2**64 - 1), "tokenizer.ggml.tokens": (V.UINT8, 0)},
])
def test_huge_facts_are_planned_and_fitted(tmp_path, overrides):
    path = write_hostile(tmp_path, "m.gguf", overrides)
    try:
        spec = load_model(path)
    except PROJECT_ERRORS:
        return
    with hang_guard():
        exercise(spec)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(overrides=hostile_overrides(), duplicate=duplicates())
def test_the_window_opens_hostile_values_or_says_why(qtbot, make_window, tmp_path_factory, overrides, duplicate):
    path = write_hostile(tmp_path_factory.mktemp("h"), "m.gguf", overrides, duplicate)
    window = make_window()
    answers: list[str] = []
    window.modelLoaded.connect(lambda: answers.append("loaded"))
    window.loadFailed.connect(answers.append)
    window.open_path(str(path))
    qtbot.waitUntil(lambda: bool(answers), timeout=HANG_S * 1000)
    assert not child(window, "busyIndicator").isVisible()
    if answers[0] != "loaded":
        assert window.session.state.model is None and child(window, "loadError").isVisible()
