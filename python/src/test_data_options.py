"""sluice.data.Options (tf.data.Options), with_options / options(), and
Iterator.stats(): the per-stage statistics AUTOTUNE reads."""

import pytest

from sluice import data as sd


def test_unknown_option_raises_attribute_error():
    o = sd.Options()
    with pytest.raises(AttributeError):
        o.no_such_option = 1
    with pytest.raises(AttributeError):
        o.autotune.no_such_option = 1


def test_option_of_the_wrong_type_raises_type_error():
    o = sd.Options()
    with pytest.raises(TypeError):
        o.deterministic = "yes"
    with pytest.raises(TypeError):
        o.autotune.cpu_budget = 1.5


def test_every_tf_option_is_accepted():
    o = sd.Options()
    o.deterministic = False
    o.autotune.enabled = True
    o.autotune.cpu_budget = 2
    o.autotune.ram_budget = 1 << 20
    o.threading.private_threadpool_size = 4
    o.threading.max_intra_op_parallelism = 1
    o.experimental_optimization.map_parallelization = True
    o.experimental_optimization.apply_default_optimizations = False
    o.experimental_slack = True
    o.experimental_deterministic = True  # an alias of deterministic
    assert o.deterministic is True
    assert o.experimental_threading is o.threading


def test_options_of_a_dataset_are_read_only():
    ds = sd.Dataset.range(3)
    with pytest.raises(ValueError):
        ds.options().deterministic = False


def test_with_options_needs_options():
    with pytest.raises(TypeError):
        sd.Dataset.range(3).with_options({"deterministic": False})


def test_options_flow_to_datasets_made_from_it():
    o = sd.Options()
    o.deterministic = False
    ds = sd.Dataset.range(10).with_options(o).map(lambda x: x + 1).batch(2)
    assert ds.options().deterministic is False
    assert list(x.tolist() for x in ds) == [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]]


def test_later_options_win_and_unset_ones_keep_earlier_values():
    a = sd.Options()
    a.deterministic = False
    a.autotune.cpu_budget = 3
    b = sd.Options()
    b.autotune.cpu_budget = 5
    ds = sd.Dataset.range(3).with_options(a).with_options(b)
    assert ds.options().deterministic is False
    assert ds.options().autotune.cpu_budget == 5


def test_zip_merges_the_options_of_its_inputs():
    a = sd.Options()
    a.deterministic = False
    b = sd.Options()
    b.autotune.ram_budget = 1 << 20
    ds = sd.Dataset.zip((sd.Dataset.range(2).with_options(a), sd.Dataset.range(2).with_options(b)))
    assert ds.options().deterministic is False
    assert ds.options().autotune.ram_budget == 1 << 20


def test_negative_budget_is_invalid_argument():
    o = sd.Options()
    o.autotune.cpu_budget = -1
    from sluice import errors
    with pytest.raises(errors.InvalidArgumentError):
        sd.Dataset.range(3).with_options(o)


def stages(it):
    return {s["name"]: s for s in it.stats()}


def test_stats_count_the_elements_each_stage_produced():
    ds = (sd.Dataset.range(100).map(lambda x: x * 2, num_parallel_calls=2)
          .batch(10).prefetch(2))
    options = sd.Options()  # the map and the batch as stages of their own
    options.experimental_optimization.map_and_batch_fusion = False
    it = iter(ds.with_options(options))
    got = list(it)
    assert len(got) == 10
    s = stages(it)
    assert s["ParallelMap"]["elements"] == 100
    assert s["ParallelMap"]["parallelism"] == 2
    assert s["Batch"]["elements"] == 10
    assert s["Batch"]["bytes"] == 100 * 8
    assert s["Prefetch"]["elements"] == 10
    assert s["Root"]["elements"] == 10
    assert [x["name"] for x in it.stats()][-1] == "Root"
    for x in it.stats():
        assert 0 <= x["buffer_fill"] <= x["buffer_size"] or x["buffer_size"] == 0


def test_autotune_stages_are_marked_and_run_at_most_two_calls_per_core_of_the_budget():
    o = sd.Options()
    o.autotune.cpu_budget = 2
    ds = (sd.Dataset.range(2000).map(lambda x: x, num_parallel_calls=sd.AUTOTUNE)
          .prefetch(sd.AUTOTUNE).with_options(o))
    it = iter(ds)
    for _ in it:
        for x in it.stats():
            assert x["parallelism"] <= 4
    s = stages(it)
    assert s["ParallelMap"]["autotune"] and s["Prefetch"]["autotune"]
    assert s["ParallelMap"]["elements"] == 2000


def test_stats_of_a_closed_iterator_are_empty():
    it = iter(sd.Dataset.range(3))
    it.close()
    assert it.stats() == []
