"""Frozen records are frozen all the way down, and a ModelSpec checks itself on construction."""

from __future__ import annotations

import copy
import dataclasses
import enum
import os
import pickle
from collections.abc import Mapping

import pytest
from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc, SSMDesc

from gguf_budget.core.errors import RequestError
from gguf_budget.core.frozen import FrozenMap
from gguf_budget.core.gguf.header import SkippedArray, SkippedString, read_header
from gguf_budget.core.machine.drm import DrmCardReading
from gguf_budget.core.plan.ledger import LEDGER_LINES, MemLedger

# Every kind of container a spec holds: per-layer arrays, MoE roles, SSM sizes, a hybrid's
# recurrent and attention layers, sliding windows, metadata with arrays and long strings.
RICH = ArchDesc(arch="jamba", n_layer=4, n_head_kv=(0, 0, 2, 0), n_ff=(64, 128, 64, 96), ssm=SSMDesc(),
                recurrent_layers=(0, 1, 3), n_expert=4, n_expert_used=2, weight_type=T.Q4_0, tokens=300,
                extra_kv={"general.tags": ["a", "b"]})
SCALARS = (str, int, float, bool, bytes, type(None), enum.Enum, SkippedArray, SkippedString)


def assert_deeply_frozen(value: object, path: str) -> None:
    """Try to change `value` through every door it has; recurse into what it holds."""
    if isinstance(value, SCALARS):
        return
    if dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(value, f.name, None)
            assert_deeply_frozen(getattr(value, f.name), f"{path}.{f.name}")
    elif isinstance(value, Mapping):
        assert not hasattr(value, "__setitem__") and not hasattr(value, "update"), f"{path} is a mutable mapping"
        for key, item in value.items():
            with pytest.raises(TypeError):
                value[key] = 0  # type: ignore[index]
            with pytest.raises(TypeError):
                del value[key]  # type: ignore[attr-defined]
            assert_deeply_frozen(item, f"{path}[{key!r}]")
    elif isinstance(value, tuple):
        for i, item in enumerate(value[:8]):
            assert_deeply_frozen(item, f"{path}[{i}]")
    else:
        pytest.fail(f"{path} is a mutable {type(value).__name__}")


def test_no_attribute_of_a_model_spec_can_be_changed(model):
    spec = model(RICH)
    assert spec.ssm is not None and spec.metadata["general.tags"] == ("a", "b")
    assert_deeply_frozen(spec, "spec")


def test_the_layer_roles_cannot_drift_from_the_layer_bytes(model):
    spec = model(RICH)
    with pytest.raises(TypeError):
        spec.layer_role_bytes[0]["attention"] = 0  # type: ignore[index]
    assert spec.layer_bytes[0] == sum(spec.layer_role_bytes[0].values())


def test_a_spec_hashes_and_equal_specs_hash_alike(gguf_file):
    from gguf_budget.core import load_model

    path = gguf_file(RICH, "header_only")
    first, again = load_model(path), load_model(path)
    assert first == again and hash(first) == hash(again)
    assert len({first, again}) == 1


SPEC_FROM_ANOTHER_PROCESS = """
import pickle, sys
from gguf_budget.core import load_model
spec = load_model(sys.argv[1])
hash(spec), spec.routed_expert_bytes
sys.stdout.buffer.write(pickle.dumps(spec))
"""


def test_a_spec_pickled_by_another_process_hashes_as_one_read_here(gguf_file):
    """The spec keeps its hash once computed; a pickle must not carry it, since a string's hash is per process (nor
    what else it keeps: its routed experts' bytes, summed again where read)."""
    import subprocess
    import sys

    from gguf_budget.core import load_model

    path = gguf_file(RICH, "header_only")
    here = load_model(path)
    done = subprocess.run([sys.executable, "-c", SPEC_FROM_ANOTHER_PROCESS, str(path)], capture_output=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": "1"})
    there = pickle.loads(done.stdout)
    assert there == here and hash(there) == hash(here) and {here: "found"}[there] == "found"
    assert set(vars(there)) == {f.name for f in dataclasses.fields(there)} | {"_kept_hash"}
    assert there.routed_expert_bytes == here.routed_expert_bytes
    assert hash(dataclasses.replace(here, name="other")) != hash(here)
    assert copy.copy(here) == here and hash(copy.copy(here)) == hash(here)


def test_plain_containers_given_to_a_spec_are_frozen_on_the_way_in(model):
    spec = model(ArchDesc())
    rebuilt = dataclasses.replace(spec, metadata=dict(spec.metadata), unknown=["n_vocab"],
                                  layer_role_bytes=[dict(r) for r in spec.layer_role_bytes])
    assert isinstance(rebuilt.metadata, FrozenMap) and rebuilt.unknown == ("n_vocab",)
    assert all(isinstance(r, FrozenMap) for r in rebuilt.layer_role_bytes)
    assert rebuilt == dataclasses.replace(spec, unknown=("n_vocab",))


def _roles_plus(spec, il: int, extra: int):
    roles = [dict(r) for r in spec.layer_role_bytes]
    roles[il]["ffn"] += extra
    return roles


@pytest.mark.parametrize(("change", "message"), [
    (lambda s: {"layers": s.layers[:-1]}, "layers has 1 entries for 2 layers"),
    (lambda s: {"layer_bytes": s.layer_bytes + (5,)}, "layer_bytes has 3 entries for 2 layers"),
    (lambda s: {"n_layer": 3}, "layers has 2 entries for 3 layers"),
    (lambda s: {"file_bytes": -1}, "negative byte counts: file_bytes -1"),
    (lambda s: {"recurrent_state_bytes": -8}, "recurrent_state_bytes -8"),
    (lambda s: {"layer_role_bytes": _roles_plus(s, 1, 7)}, r"layer_bytes\[1\] is 39680 but its roles sum to 39687"),
    (lambda s: {"layer_bytes": (39680, 39679)}, r"layer_bytes\[1\] is 39679 but its roles sum to 39680"),
    (lambda s: {"global_bytes": dataclasses.replace(s.global_bytes, other=-1)}, "GlobalBytes has negative"),
], ids=["layers", "layer-bytes", "n-layer", "file-bytes", "state", "roles", "bytes", "globals"])
def test_a_spec_refuses_to_be_inconsistent(model, change, message):
    spec = model(ArchDesc())
    with pytest.raises(RequestError, match=message):
        dataclasses.replace(spec, **change(spec))


def test_a_header_is_frozen_all_the_way_down_and_hashes(gguf_file):
    path = gguf_file(RICH, "header_only")
    header = read_header(str(path))
    assert_deeply_frozen(header, "header")
    assert hash(header) == hash(read_header(str(path)))


def test_a_drm_reading_keeps_no_dict_it_was_given():
    files = {"device/vendor": "0x1002"}
    reading = DrmCardReading("card0", files)
    files["device/vendor"] = "0x10de"
    assert reading.files == {"device/vendor": "0x1002"}
    assert_deeply_frozen(reading, "reading")


def test_a_frozen_map_reads_like_a_dict_and_never_changes():
    m = FrozenMap({"a": 1, "b": (2, 3)})
    assert m == {"a": 1, "b": (2, 3)} and m != {"a": 1} and dict(m) == {"a": 1, "b": (2, 3)}
    assert hash(m) == hash(FrozenMap([("b", (2, 3)), ("a", 1)])) and list(m) == ["a", "b"]
    assert pickle.loads(pickle.dumps(m)) == m and copy.deepcopy(m) == m and repr(m) == "FrozenMap({'a': 1, 'b': (2, 3)})"
    with pytest.raises(TypeError):
        m["a"] = 2  # type: ignore[index]
    with pytest.raises(AttributeError):
        m._items = {}  # type: ignore[misc]


def test_the_ledger_lines_are_the_ledger_fields_and_the_total_sums_them_all():
    assert LEDGER_LINES == tuple(f.name for f in dataclasses.fields(MemLedger))
    ledger = MemLedger(**{name: 1 << i for i, name in enumerate(LEDGER_LINES)})
    assert ledger.total() == (1 << len(LEDGER_LINES)) - 1 and [n for n, _ in ledger.items()] == list(LEDGER_LINES)
