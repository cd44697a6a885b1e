"""tf.data API completions: Dataset.reduce, get_single_element, counter, random,
Iterator.get_next_as_optional (Optional), experimental.assert_cardinality, sluice.TensorSpec,
and the NotImplementedError of ragged_batch / save / load / snapshot."""

import pickle

import numpy as np
import pytest

import sluice
from sluice import data as sd
from sluice import errors


def ints(ds):
    return [int(x) for x in ds]


# ---- reduce

def test_reduce_folds_every_element_into_the_state():
    assert int(sd.Dataset.range(5).reduce(np.int64(0), lambda s, x: s + x)) == 10


def test_reduce_passes_a_tuple_element_whole_and_keeps_a_nested_state():
    ds = sd.Dataset.from_tensor_slices((np.arange(4, dtype=np.int64), np.ones(4, np.float32)))
    total, weight = ds.reduce((np.int64(0), np.float32(0)), lambda s, e: (s[0] + e[0], s[1] + e[1]))
    assert (int(total), float(weight)) == (6, 4.0)
    assert total.dtype == np.int64 and weight.dtype == np.float32


def test_reduce_of_an_empty_dataset_is_the_initial_state():
    assert int(sd.Dataset.range(0).reduce(np.int64(7), lambda s, x: s + x)) == 7


def test_reduce_state_changing_dtype_is_type_error():
    with pytest.raises(TypeError, match="must match the initial state"):
        sd.Dataset.range(3).reduce(0, lambda s, x: s + x)  # int32 state + int64 -> int64


def test_reduce_state_changing_component_count_is_invalid_argument():
    with pytest.raises(errors.InvalidArgumentError, match=r"initial_state=1, output=2"):
        sd.Dataset.range(3).reduce(np.int64(0), lambda s, x: (s, s))


# ---- get_single_element

def test_get_single_element_returns_the_only_element():
    assert sd.Dataset.from_tensors({"a": np.int64(3)}).get_single_element() == {"a": 3}
    assert int(sd.experimental.get_single_element(sd.Dataset.range(4, 5))) == 4


@pytest.mark.parametrize("n, message", [(0, "Dataset was empty."), (2, "Dataset had more than one element.")])
def test_get_single_element_of_zero_or_several_is_invalid_argument(n, message):
    with pytest.raises(errors.InvalidArgumentError, match=message):
        sd.Dataset.range(n).get_single_element()


# ---- counter, random

def test_counter_counts_for_ever_in_its_dtype():
    c = sd.Dataset.counter(start=3, step=-2, dtype=sluice.int32)
    assert c.cardinality() == sd.INFINITE_CARDINALITY
    assert c.element_spec == sd.TensorSpec([], sluice.int32)
    assert ints(c.take(3)) == [3, 1, -1]
    assert ints(sd.experimental.Counter().take(2)) == [0, 1]


def test_random_is_seeded_infinite_and_below_2_to_32():
    ds = sd.Dataset.random(seed=4)
    assert ds.cardinality() == sd.INFINITE_CARDINALITY
    assert ds.element_spec == sd.TensorSpec([], sluice.int64)
    a = ints(ds.take(100))
    assert a == ints(sd.Dataset.random(seed=4).take(100)) == ints(ds.take(100))
    assert a != ints(sd.Dataset.random(seed=5).take(100))
    assert all(0 <= v < 2**32 for v in a) and len(set(a)) > 95
    assert ints(sd.experimental.RandomDataset(seed=4).take(100)) == a


def test_random_rerandomizes_each_iteration_when_asked():
    ds = sd.Dataset.random(seed=4, rerandomize_each_iteration=True)
    assert ints(ds.take(5)) != ints(ds.take(5))


def test_random_and_counter_iterators_save_and_restore():
    for ds in (sd.Dataset.random(seed=1).take(10), sd.Dataset.counter(5).take(10)):
        it = iter(ds)
        [next(it) for _ in range(4)]
        state = it.save()
        rest = ints(it)
        again = iter(ds)
        again.restore(state)
        assert ints(again) == rest


def test_counter_and_random_pickle_by_recipe():
    ds = pickle.loads(pickle.dumps(sd.Dataset.counter(2).take(3)))
    assert ints(ds) == [2, 3, 4]


# ---- get_next_as_optional

def test_get_next_as_optional_holds_each_element_then_is_empty():
    it = iter(sd.Dataset.range(1))
    opt = it.get_next_as_optional()
    assert opt.has_value() and int(opt.get_value()) == 0
    assert opt.element_spec == sd.TensorSpec([], sluice.int64)
    opt = it.get_next_as_optional()
    assert not opt.has_value()
    with pytest.raises(errors.InvalidArgumentError, match="The given optional does not have a value."):
        opt.get_value()


def test_optional_from_value_and_empty():
    assert sd.experimental.Optional.from_value(3).get_value() == 3
    assert not sd.experimental.Optional.empty(sd.TensorSpec([], sluice.int32)).has_value()


# ---- assert_cardinality

def test_assert_cardinality_sets_the_cardinality_of_a_matching_input():
    ds = sd.Dataset.range(5).filter(lambda x: True).apply(sd.experimental.assert_cardinality(5))
    assert ds.cardinality() == 5
    assert ints(ds) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("n, message", [
    (3, "Input dataset was expected to contain 5 elements but contained only 3 elements."),
    (10, "Input dataset was expected to contain 5 elements but contained at least 6 elements."),
])
def test_assert_cardinality_mismatch_fails_at_iteration(n, message):
    ds = sd.Dataset.range(n).apply(sd.experimental.assert_cardinality(5))
    with pytest.raises(errors.FailedPreconditionError) as e:
        list(ds)
    assert e.value.message == message


# ---- names

def test_top_level_tensor_spec_is_the_element_spec_class():
    assert sluice.TensorSpec is sd.TensorSpec
    ds = sd.Dataset.from_generator(lambda: iter([1, 2]), output_signature=sluice.TensorSpec([], sluice.int64))
    assert ints(ds) == [1, 2]


def test_unimplemented_names_say_what_to_use_instead(tmp_path):
    ds = sd.Dataset.range(3)
    with pytest.raises(NotImplementedError, match="padded_batch"):
        ds.ragged_batch(2)
    for call in (lambda: ds.save(str(tmp_path)), lambda: sd.Dataset.load(str(tmp_path)),
                 lambda: ds.snapshot(str(tmp_path)), lambda: sd.experimental.save(ds, str(tmp_path))):
        with pytest.raises(NotImplementedError, match=r"cache\(filename\).*TFRecordWriter"):
            call()
