"""`plan`'s vision projector: `--mmproj FILE` and `--image-size WxH`, the projector in RAM beside the Budget plan.

Rule 1: the options are llama-server's (`server_args` Rule 1), the projector's weights and one image's
        compute come out of the budget first; a budget they alone take is one line, exit 2.
Rule 2: the projector's reader and pricing are imported only when `--mmproj` is given, so `plan`
        without one imports none of the full load's modules (`tests/test_cli_imports.py`).
"""

from __future__ import annotations

import argparse
from typing import Any

from gguf_budget.core.errors import CommandError, RequestError
from gguf_budget.core.fit.server.image_size import ImageSize
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.units import human_bytes


def image_size(text: str) -> ImageSize:
    """`--image-size`'s argparse type (fit's, quants' and plan's)."""
    try:
        return ImageSize.parse(text)
    except RequestError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_projector_arguments(p: argparse.ArgumentParser) -> None:
    """Rule 1: a projector beside the Budget plan, and the image to price it for."""
    g = p.add_argument_group("vision projector")
    g.add_argument("--mmproj", metavar="FILE", help="a vision projector (mmproj GGUF) run beside the plan, in RAM: its "
                                                    "weights and one image's compute come out of the budget")
    g.add_argument("--image-size", type=image_size, metavar="WxH",
                   help="the image to price the projector for (default: the projector's own size)")


def projector_beside_plan(args: argparse.Namespace, model: ModelSpec,
                          budget: Budget) -> tuple[Budget, tuple[str, dict[str, Any]] | None]:
    """The budget left for the plan once the projector (`server_args` Rule 4: checked) holds its weights and one image's compute
    in RAM, and what to say of it; the budget unchanged without one (unlimited stays unlimited)."""
    if args.mmproj is None:
        return budget, None
    from gguf_budget.core.fit.server.holdings import priced_image  # Rule 2
    from gguf_budget.core.fit.server.inputs import open_projector

    spec = open_projector(args.mmproj, model)
    w, h = priced_image(spec, args.image_size)
    weights, compute = spec.weight_bytes, spec.compute_bytes(w, h)
    total = weights + compute
    limit = budget.limit
    if limit is not None and limit <= total:
        raise CommandError(f"the projector alone takes {human_bytes(total)} (weights {human_bytes(weights)} + compute "
                           f"{human_bytes(compute)}): nothing of the {budget} budget is left for the model")
    left = budget if limit is None else Budget.of(limit - total)
    text = (f"Vision projector  {spec.path} ({spec.projector_type}) in RAM beside the plan: weights {human_bytes(weights)} "
            f"+ compute {human_bytes(compute)} for one {w}x{h} image ({spec.image_tokens(w, h)} tokens of context); "
            + (f"the plan gets the other {left} of the budget" if limit is not None else "the budget is unlimited"))
    return left, (text, {"path": spec.path, "type": spec.projector_type, "weights": weights, "compute": compute,
                         "image": [w, h], "image_tokens": spec.image_tokens(w, h), "approximate": spec.approximate,
                         "budget_left": left.cli_bytes})
