"""Iterator.stats() lists every stage: the sequential stages (shuffle, repeat, take, skip, shard, zip,
concatenate, cache, filter, ...) count their elements and time a sample of them, as map and batch do."""

import numpy as np

from sluice import data as sd


def _drain(ds):
    it = iter(ds)
    n = sum(1 for _ in it)
    return it, n


def _names(it):
    return [s["name"] for s in it.stats()]


def _by_name(it):
    return {s["name"]: s for s in it.stats()}


def test_structural_stages_appear_with_their_element_counts():
    ds = (sd.Dataset.range(100).filter(lambda x: x % 2 == 0)   # 50
          .shuffle(10, seed=1).skip(5).take(30).shard(2, 1))    # 15
    ds = sd.Dataset.zip((ds, sd.Dataset.range(20))).concatenate(
        sd.Dataset.zip((sd.Dataset.range(3), sd.Dataset.range(3))))
    it, n = _drain(ds)
    assert n == 18
    assert _names(it) == ["Filter", "Shuffle", "Skip", "Take", "Shard", "Zip", "Concatenate", "Zip", "Root"]
    s = it.stats()
    assert [x["elements"] for x in s] == [44, 35, 30, 30, 15, 15, 18, 3, 18]
    assert s[1]["buffer_size"] == 10
    assert s[0]["busy_ns"] > 0 and s[0]["busy_ns_per_element"] > 0


def test_shuffle_reports_its_buffer_fill_while_running():
    it = iter(sd.Dataset.range(100).shuffle(16, seed=3))
    next(it)
    shuffle = _by_name(it)["Shuffle"]
    assert (shuffle["buffer_size"], shuffle["buffer_fill"]) == (16, 15)


def test_repeat_and_cache_count_across_epochs():
    it = iter(sd.Dataset.range(4).cache().repeat(3))
    got = [int(next(it)) for _ in range(10)]
    assert got == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    s = _by_name(it)
    assert s["Repeat"]["elements"] == 10
    assert s["Cache"]["elements"] == 2  # the third epoch's cache reader


def test_more_sequential_stages_are_listed():
    ds = (sd.Dataset.from_tensor_slices(np.array([1, 1, 2, 3, 3, 4, 5, 6], dtype=np.int64))
          .unique()                                       # 1 2 3 4 5 6
          .take_while(lambda x: x < 6)                    # 1 2 3 4 5
          .scan(np.int64(0), lambda state, x: (state + x, state + x))
          .ignore_errors()
          .padded_batch(2)
          .unbatch())
    it, n = _drain(ds)
    assert n == 5
    s = _by_name(it)
    for name, elements in (("Unique", 6), ("TakeWhile", 5), ("Scan", 5), ("IgnoreErrors", 5),
                           ("PaddedBatch", 3), ("Unbatch", 5)):
        assert s[name]["elements"] == elements, name
    assert _names(it)[-1] == "Root"


def test_wait_and_busy_split_the_stage_time_from_its_input():
    slow = sd.Dataset.range(64).map(_spin)
    it, _ = _drain(slow.take(64))
    take = _by_name(it)["Take"]
    # The input's map spins ~0.2 ms per element: Take mostly waits for it.
    assert take["wait_ns"] > 10 * take["busy_ns"]


def _spin(x):
    import time
    end = time.perf_counter() + 2e-4
    while time.perf_counter() < end:
        pass
    return x


def test_file_cache_window_rebatch_and_choose_are_listed(tmp_path):
    path = str(tmp_path / "cache")
    for epoch_elements in (6, 6):  # the first pass writes the cache file, the second reads it
        it, n = _drain(sd.Dataset.range(6).cache(path))
        assert n == 6
        assert _by_name(it)["Cache"]["elements"] == epoch_elements
    it, n = _drain(sd.Dataset.range(10).batch(4).rebatch(5))
    assert (n, _by_name(it)["Rebatch"]["elements"]) == (2, 2)
    it, n = _drain(sd.Dataset.range(7).window(3, drop_remainder=True))
    assert (n, _by_name(it)["Window"]["elements"]) == (2, 2)
    choice = sd.Dataset.from_tensor_slices(np.array([0, 1, 1, 0], dtype=np.int64))
    it, n = _drain(sd.Dataset.choose_from_datasets([sd.Dataset.range(5), sd.Dataset.range(5)], choice))
    assert (n, _by_name(it)["DirectedInterleave"]["elements"]) == (4, 4)
