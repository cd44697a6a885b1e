"""sluice.data's memory budget (Options.ram_budget) and error policies (error_policy=)."""

import os
import resource

import numpy as np
import pytest

import sluice
from sluice import data as sd
from sluice import io as sio


def items(ds):
    return list(iter(ds))


def write(path, records):
    with sio.TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    return path


def corrupt_second_record(path):
    """Flips a byte of record 1's data (records of 2 bytes: 16 bytes of framing each)."""
    raw = bytearray(open(path, "rb").read())
    raw[(2 + 16) + 12] ^= 0xFF
    open(path, "wb").write(bytes(raw))


@pytest.fixture
def files(tmp_path):
    a = write(str(tmp_path / "a.tfrecord"), [b"a0", b"a1", b"a2"])
    b = write(str(tmp_path / "b.tfrecord"), [b"b0", b"b1"])
    return a, b


# ---- error policies: readers ---------------------------------------------------------

def test_corrupt_record_fails_by_default(files):
    corrupt_second_record(files[0])
    it = iter(sd.TFRecordDataset(list(files)))
    assert next(it) == b"a0"
    with pytest.raises(sluice.errors.DataLossError):
        next(it)


def test_corrupt_record_is_skipped_counted_and_reported_with_file_record_offset(files):
    corrupt_second_record(files[0])
    it = iter(sd.TFRecordDataset(list(files), error_policy="skip"))
    assert list(it) == [b"a0", b"b0", b"b1"]
    assert it.skipped_errors == 1
    [kind] = it.error_report()
    assert (kind["stage"], kind["code"], kind["policy"], kind["count"]) == ("TFRecordDataset", "DATA_LOSS", "skip", 1)
    [example] = kind["examples"]
    assert (example["file"], example["record"], example["offset"]) == (files[0], 1, 18)
    assert it.stats().errors == [kind]


def test_corrupt_record_is_replaced_by_an_empty_string_or_the_given_value(files):
    corrupt_second_record(files[0])
    assert items(sd.TFRecordDataset(list(files), error_policy="replace")) == [b"a0", b"", b"b0", b"b1"]
    given = sd.TFRecordDataset(list(files), error_policy=sd.ErrorPolicy.replace_with(b"lost"))
    assert items(given) == [b"a0", b"lost", b"b0", b"b1"]


def test_truncated_file_reaches_each_policy(files):
    os.truncate(files[0], os.path.getsize(files[0]) - 5)
    with pytest.raises(sluice.errors.OpError):
        items(sd.TFRecordDataset(list(files)))
    assert items(sd.TFRecordDataset(list(files), error_policy="skip")) == [b"a0", b"a1", b"b0", b"b1"]
    assert items(sd.TFRecordDataset(list(files), error_policy="replace")) == [b"a0", b"a1", b"", b"b0", b"b1"]


def test_options_error_policy_applies_to_readers_and_maps_without_their_own(files):
    corrupt_second_record(files[0])
    options = sd.Options()
    options.error_policy = "skip"
    ds = sd.TFRecordDataset(list(files)).with_options(options)
    assert items(ds) == [b"a0", b"b0", b"b1"]
    assert ds.options().error_policy == "skip"
    with pytest.raises(ValueError, match="error_policy"):
        bad = sd.Options()
        bad.error_policy = "ignore"
        sd.Dataset.range(1).with_options(bad)


def test_unknown_policy_is_a_value_error():
    with pytest.raises(ValueError, match="'fail', 'skip' or 'replace'"):
        sd.Dataset.range(3).map(lambda x: x, error_policy="drop")


# ---- error policies: map functions -----------------------------------------------------

@pytest.mark.parametrize("npc", [None, 2])
def test_undecodable_jpeg_in_a_map_under_each_policy(npc):
    jpeg = sluice.image.encode_jpeg(np.zeros((4, 6, 3), np.uint8))
    files = sd.Dataset.from_tensor_slices([jpeg, b"not a jpeg", jpeg])

    def decoded(policy):
        return items(files.map(sd.ops.decode_jpeg(channels=3), num_parallel_calls=npc, error_policy=policy))
    with pytest.raises(sluice.errors.InvalidArgumentError):
        decoded(None)
    assert [x.shape for x in decoded("skip")] == [(4, 6, 3), (4, 6, 3)]
    assert [x.shape for x in decoded("replace")] == [(4, 6, 3), (0, 0, 3), (4, 6, 3)]


@pytest.mark.parametrize("npc", [None, 2])
def test_parse_error_in_parse_example_under_each_policy(npc):
    good = sluice.train.Example(features=sluice.train.Features(feature={
        "label": sluice.train.Feature(int64_list=sluice.train.Int64List(value=[7]))})).SerializeToString()
    records = sd.Dataset.from_tensor_slices([good, b"garbage", good])
    parse = sd.ops.parse_example({"label": sio.FixedLenFeature([], sluice.int64)})

    def labels(policy):
        it = iter(records.map(parse, num_parallel_calls=npc, error_policy=policy))
        return [int(e["label"]) for e in it], it
    with pytest.raises(sluice.errors.InvalidArgumentError):
        labels("fail")
    skipped, it = labels("skip")
    assert skipped == [7, 7] and it.skipped_errors == 1
    assert it.error_report()[0]["examples"][0]["element"] == 1
    assert labels("replace")[0] == [7, 0, 7]
    assert labels(sd.ErrorPolicy.replace_with({"label": -1}))[0] == [7, -1, 7]


def test_python_map_function_error_is_replaced():
    def f(x):
        if x == 2:
            raise ValueError("two")
        return x * 10
    ds = sd.Dataset.range(4).map(f, error_policy="replace")
    assert [int(x) for x in ds] == [0, 10, 0, 30]
    it = iter(sd.Dataset.range(4).map(f, error_policy="skip"))
    assert [int(x) for x in it] == [0, 10, 30]
    assert it.error_report()[0]["code"] == "UNKNOWN"


def test_ignore_errors_keeps_its_meaning_and_is_reported():
    ds = sd.Dataset.from_tensor_slices([1.0, 0.0, 2.0]).map(lambda x: 1 / x if x else None).ignore_errors()
    it = iter(ds)
    assert len(list(it)) == 2
    assert it.skipped_errors == 1
    assert it.error_report()[0]["stage"] == "IgnoreErrors"


# ---- memory budget ------------------------------------------------------------------------

def budget_pipeline(ram_budget):
    """parallel map -> shuffle -> batch -> prefetch over 16 KiB float vectors."""
    ds = (sd.Dataset.range(256)
          .map(lambda x: np.full(4096, x, np.float32), num_parallel_calls=2)
          .shuffle(64, seed=1).batch(4).prefetch(8))
    if ram_budget is None:
        return ds
    options = sd.Options()
    options.ram_budget = ram_budget
    return ds.with_options(options)


def test_budget_is_never_exceeded_in_tracked_bytes():
    budget = 256 << 10
    it = iter(budget_pipeline(budget))
    total = sum(float(b.sum()) for b in it) / 4096
    assert total == 255 * 256 / 2  # every element once
    memory = it.memory_stats()
    assert memory["limit"] == budget
    assert budget // 4 < memory["peak_bytes"] <= budget
    assert it.stats().memory["bytes"] == 0


def test_without_budget_the_same_pipeline_holds_more():
    it = iter(budget_pipeline(None))
    list(it)
    assert it.memory_stats()["peak_bytes"] > 256 << 10


def test_budget_of_a_few_bytes_is_an_error_at_start_not_a_hang():
    it = iter(budget_pipeline(16))
    with pytest.raises(sluice.errors.ResourceExhaustedError, match="ram_budget"):
        next(it)


def _peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@pytest.mark.skipif(os.environ.get("SLUICE_BUDGET_RSS") != "1",
                    reason="RSS check of the image pipeline: set SLUICE_BUDGET_RSS=1 (a fresh process)")
def test_image_pipeline_rss_stays_within_budget_plus_fixed_overhead(tmp_path):
    # The docs' fixed overhead: what the process holds before the pipeline
    # (interpreter, libraries), plus the untracked elements in flight
    # (one per stage and worker) and allocator slack: 128 MiB.
    budget, overhead = 256 << 20, 128 << 20
    path = str(tmp_path / "images.tfrecord")
    rng = np.random.RandomState(1)
    with sio.TFRecordWriter(path) as w:
        for i in range(64):
            jpeg = sluice.image.encode_jpeg(rng.randint(0, 255, (375, 500, 3), dtype=np.uint8), quality=90)
            w.write(sluice.train.Example(features=sluice.train.Features(feature={
                "image": sluice.train.Feature(bytes_list=sluice.train.BytesList(value=[jpeg])),
                "label": sluice.train.Feature(int64_list=sluice.train.Int64List(value=[i])),
            })).SerializeToString())
    features = {"image": sio.FixedLenFeature([], sluice.string), "label": sio.FixedLenFeature([], sluice.int64)}
    options = sd.Options()
    options.ram_budget = budget
    ds = (sd.TFRecordDataset(path).repeat(8)
          .map(sd.ops.parse_example(features), num_parallel_calls=sd.AUTOTUNE)
          .map(sd.ops.random_resized_crop(224, component="image", seed=1), num_parallel_calls=sd.AUTOTUNE)
          .shuffle(1000, seed=1).batch(64).prefetch(sd.AUTOTUNE).with_options(options))
    before = _peak_rss_bytes()
    it = iter(ds)
    n = sum(b["label"].shape[0] for b in it)
    assert n == 64 * 8
    memory = it.memory_stats()
    assert memory["peak_bytes"] <= budget
    assert memory["waits"] > 0  # the shuffle buffer alone would hold 600 MB
    assert _peak_rss_bytes() - before <= budget + overhead
