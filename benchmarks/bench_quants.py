"""Quant-ladder speed: pricing every file type of a model (once per model) and judging the ladder
on a machine (again whenever the machine, ctx or budget changes; the Quants dock runs both off
the GUI thread, the `quants` command once).

Medians on catalogue skeletons: Llama-3.1-70B (724 tensors, 80 blocks), Llama-4-Scout (627
tensors, 48 blocks of 16 experts) and Qwen3-30B-A3B (579 tensors).

Run: .venv/bin/python benchmarks/bench_quants.py [--runs 5]
"""

from __future__ import annotations

import argparse

from bench_shapes import GiB, median_seconds

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, hypothetical_machine, load_model
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.quant.ladder import LadderRequest, price_types, quant_ladder

MODELS = ("llama-3.1-70b-instruct", "llama-4-scout-17b-16e-instruct", "qwen3-30b-a3b-instruct-2507")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    runs = ap.parse_args().runs
    machine = hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=24 * GiB)
    request = LadderRequest(budget=BudgetRequest(budget=Budget.of(32 * GiB)))
    for name in MODELS:
        model = load_model(catalogue_path(find_entry(name)))
        priced = price_types(model)
        price = median_seconds(lambda m=model: price_types(m), runs) * 1000
        judge = median_seconds(lambda m=model, p=priced: quant_ladder(m, machine, request, p), runs) * 1000
        print(f"{name:<32} {len(priced.mixes)} types: price_types median {price:7.1f} ms, "
              f"quant_ladder (priced, with budget plans) median {judge:7.1f} ms")


if __name__ == "__main__":
    main()
