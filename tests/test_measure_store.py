"""The evidence store: records as JSON beside their logs, keyed by the header fingerprint, damage skipped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import platformdirs
import pytest
from gguf_factory import ArchDesc, write_gguf

from gguf_budget.core.gguf.fingerprint import header_fingerprint
from gguf_budget.core.errors import ModelLoadError
from gguf_budget.core.measure.command import MeasureSettings
from gguf_budget.core.measure.progress import STARTING, stage_after
from gguf_budget.core.measure.record import DamagedRecord, EvidenceRecord, Origin, record_from_json, record_to_json
from gguf_budget.core import paths
from gguf_budget.core.measure.store import EvidenceStore


def record(key: str = "k" * 64, at: float = 1_700_000_000.0, **kw) -> EvidenceRecord:
    fields = dict(model_key=key, model_path="/m/model.gguf", origin=Origin.MEASURED, recorded_at=at,
                  log_name="pending", source="llama-completion (/b/llama-completion)",
                  command=("/b/llama-completion", "-m", "/m/model.gguf"), settings=MeasureSettings(2048, 0, "q8_0"),
                  peak_rss_polled=123_456_789, seconds=1.5)
    return EvidenceRecord(**{**fields, **kw})


def test_record_json_round_trip_for_measured_and_imported():
    for r in (record(), record(origin=Origin.IMPORTED, command=(), settings=None, peak_rss_polled=None, seconds=None)):
        assert record_from_json(json.loads(json.dumps(record_to_json(r)))) == r


@pytest.mark.parametrize("damage", [
    lambda d: d.pop("model_key"), lambda d: d.update(origin="guessed"), lambda d: d.update(recorded_at="noon"),
    lambda d: d.update(command=[1, 2]), lambda d: d.update(settings={"ctx": "big", "kv_type": "f16"}),
    lambda d: d.update(peak_rss_polled=-5), lambda d: d.update(peak_rss_polled=True),
    lambda d: d.update(settings={"ctx": 0, "kv_type": "f16"}), lambda d: d.update(settings={"ctx": 8, "kv_type": "q3"}),
])
def test_damaged_records_are_refused(damage):
    data = record_to_json(record())
    damage(data)
    with pytest.raises(DamagedRecord):
        record_from_json(data)


def test_store_keeps_logs_per_model_newest_first_and_reads_them_back(tmp_path: Path):
    store = EvidenceStore(tmp_path)
    old = store.save(record(at=1_700_000_000.0), "old log\n")
    new = store.save(record(at=1_700_000_100.0, origin=Origin.IMPORTED), "new log\n")
    same_second = store.save(record(at=1_700_000_100.2, origin=Origin.IMPORTED), "twin\n")
    store.save(record(key="o" * 64), "another model\n")
    assert [r.log_name for r in store.records("k" * 64)] == [same_second.log_name, new.log_name, old.log_name]
    assert (new.log_name, same_second.log_name) == ("20231114-221500-imported.log", "20231114-221500-imported-2.log")
    assert store.log(new) == "new log\n" and store.log(old) == "old log\n"
    assert store.log_path(old) == tmp_path / "evidence" / ("k" * 64) / old.log_name
    assert store.records("nothing-here") == ()


def test_store_skips_damaged_records_and_records_without_logs(tmp_path: Path):
    store = EvidenceStore(tmp_path)
    good = store.save(record(at=1.0), "good\n")
    lost = store.save(record(at=2.0), "lost\n")
    store.log_path(lost).unlink()
    folder = store.root / ("k" * 64)
    (folder / "garbage.json").write_text("{not json")
    (folder / "wrong.json").write_text(json.dumps({"model_key": "k" * 64}))
    assert store.records("k" * 64) == (good,)


def test_each_folder_follows_its_variable_else_the_platforms_folder():
    """core.paths Rules 1-2: the override wins; without it, platformdirs' per-user folder named gguf-budget."""
    for folder, variable in ((paths.data_dir, paths.ENV_DATA_DIR), (paths.config_dir, paths.ENV_CONFIG_DIR),
                             (paths.cache_dir, paths.ENV_CACHE_DIR)):
        assert folder({variable: "/tmp/d"}) == Path("/tmp/d")
        assert folder({}).name == "gguf-budget"
        assert "gguf-budget/gguf-budget" not in folder({}).as_posix()  # no author folder on Windows-style layouts
    assert paths.data_dir({}) == Path(platformdirs.user_data_dir("gguf-budget", False))


def test_tests_never_write_the_users_folders(tmp_path_factory: pytest.TempPathFactory):
    """conftest points every app folder at a temporary one for every test."""
    base = tmp_path_factory.getbasetemp()
    assert all(folder().is_relative_to(base) for folder in (paths.data_dir, paths.config_dir, paths.cache_dir))
    assert EvidenceStore().root.is_relative_to(base)


def test_fingerprint_is_the_header_not_the_path_or_the_data(tmp_path: Path):
    desc = ArchDesc()
    full = write_gguf(tmp_path / "a.gguf", desc)[0]
    skeleton = write_gguf(tmp_path / "b.gguf", desc, mode="header_only")[0]
    copy = tmp_path / "renamed.gguf"
    shutil.copy(full, copy)
    other = write_gguf(tmp_path / "c.gguf", ArchDesc(n_layer=3))[0]
    key = header_fingerprint(full)
    assert len(key) == 64 and header_fingerprint(skeleton) == key and header_fingerprint(copy) == key
    assert header_fingerprint(other) != key


def test_fingerprint_covers_every_shard(tmp_path: Path):
    files = write_gguf(tmp_path / "split.gguf", ArchDesc(n_layer=4), split_max_tensors=8)
    assert len(files) > 1
    key = header_fingerprint(files[-1])
    assert key == header_fingerprint(files[0])
    files[-1].unlink()
    with pytest.raises(ModelLoadError, match="missing shard"):
        header_fingerprint(files[0])


@pytest.mark.parametrize("pieces, expected", [
    ([""], STARTING),
    (["llama_model_loader: loaded meta data"], ("reading the model header", 0.15)),
    (["load_tensors: CPU_Mapped", "llama_kv_cache: size", "sched_reserve: CPU compute"],
     ("reserving compute buffers", 0.6)),
    # a later stage is never undone by an earlier marker printed again (the fit dry run repeats them)
    (["llama_kv_cache: size", "llama_model_loader: again"], ("allocating the KV cache", 0.5)),
    (["eval time =  76.03 ms"], ("decoding done", 0.95)),
])
def test_progress_stage_follows_the_latest_marker(pieces, expected):
    stage = STARTING
    for text in pieces:
        stage = stage_after(text, stage)
    assert stage == expected
