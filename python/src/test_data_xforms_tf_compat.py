"""sluice.data's window, scan, take_while, unique, ignore_errors, rebatch,
group_by_window and bucket_by_sequence_length against TensorFlow 2's tf.data on
the same inputs: orders, remainders, cardinality, specs and errors. Skipped
without TF."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

from sluice import data as sd  # noqa: E402
from sluice import errors  # noqa: E402


def plain(x):
    """A nested value as plain Python; a nested dataset as the list of its elements."""
    if isinstance(x, (tf.data.Dataset, sd.DatasetV2)):
        return [plain(v) for v in (x.as_numpy_iterator() if isinstance(x, tf.data.Dataset) else x)]
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(plain(v) for v in x)
    if isinstance(x, (np.ndarray, tf.Tensor)):
        return np.asarray(x).tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x


def check(build):
    t = build(tf.data, tf)
    s = build(sd, np)
    tv = [plain(x) for x in (t if _has_datasets(t) else t.as_numpy_iterator())]
    sv = [plain(x) for x in s]
    assert sv == tv
    assert int(s.cardinality()) == int(t.cardinality())


def _has_datasets(ds):
    return any(isinstance(spec, tf.data.DatasetSpec) for spec in tf.nest.flatten(ds.element_spec))


def _gen():
    for n in [3, 5, 2, 8, 4, 1, 6, 7]:
        yield np.full([n], n, np.int32)


def _sequences(d, m):
    spec = (tf.TensorSpec([None], tf.int32) if d is tf.data else sd.TensorSpec([None], np.int32))
    return d.Dataset.from_generator(_gen, output_signature=spec)


def _length(m):
    return (lambda x: tf.shape(x)[0]) if m is tf else (lambda x: len(x))


PIPELINES = {
    "window": lambda d, m: d.Dataset.range(10).window(3),
    "window_shift_stride": lambda d, m: d.Dataset.range(10).window(3, 2, 2),
    "window_drop_remainder": lambda d, m: d.Dataset.range(10).window(3, 1, 3, drop_remainder=True),
    "window_shift_past_size": lambda d, m: d.Dataset.range(10).window(2, 5, 1, True),
    "window_tuple": lambda d, m: d.Dataset.zip((d.Dataset.range(5), d.Dataset.range(5).map(lambda x: x * 10))).window(2),
    "window_dict": lambda d, m: d.Dataset.from_tensor_slices({"a": np.arange(3), "b": np.arange(3) * 2}).window(2),
    "window_flat_map": lambda d, m: d.Dataset.range(7).window(3, 1, 1, True).flat_map(lambda w: w.batch(3)),
    "window_flat_map_tuple": lambda d, m: d.Dataset.zip((d.Dataset.range(5), d.Dataset.range(5))).window(2).flat_map(
        lambda a, b: d.Dataset.zip((a.batch(2), b))),
    "window_infinite": lambda d, m: d.Dataset.range(3).repeat().window(2).take(4),
    "scan": lambda d, m: d.Dataset.range(5).scan(np.int64(0), lambda s, x: (s + x, s * 2)),
    "scan_tuple_state": lambda d, m: d.Dataset.range(4).scan(
        (np.int64(0), np.int64(1)), lambda s, x: ((s[0] + x, s[1] * 2), (x, s[1]))),
    "take_while": lambda d, m: d.Dataset.range(10).take_while(lambda x: x < 4),
    "take_while_none": lambda d, m: d.Dataset.range(10).take_while(lambda x: x > 4),
    "unique_int32": lambda d, m: d.Dataset.from_tensor_slices(np.array([1, 3, 1, 2, 3], np.int32)).unique(),
    "unique_string": lambda d, m: d.Dataset.from_tensor_slices([b"b", b"a", b"b", b""]).unique(),
    "rebatch": lambda d, m: d.Dataset.range(10).batch(4).rebatch(3),
    "rebatch_drop": lambda d, m: d.Dataset.range(10).batch(4).rebatch(3, drop_remainder=True),
    "rebatch_list": lambda d, m: d.Dataset.range(10).batch(4).rebatch([1, 2]),
    "rebatch_list_drop": lambda d, m: d.Dataset.range(10).batch(4).rebatch([2, 3], True),
    "rebatch_larger": lambda d, m: d.Dataset.range(10).batch(3).rebatch(4),
    "group_by_window": lambda d, m: d.Dataset.range(10).group_by_window(
        lambda x: x % 3, lambda k, w: w.batch(2), window_size=2),
    "group_by_window_size_func": lambda d, m: d.Dataset.range(10).group_by_window(
        lambda x: x % 3, lambda k, w: w.batch(10), window_size_func=lambda k: k + 1),
    "group_by_window_key_in_output": lambda d, m: d.Dataset.range(10).group_by_window(
        lambda x: x % 2, lambda k, w: w.map(lambda v: (k, v)), window_size=3),
    "experimental_group_by_window": lambda d, m: d.Dataset.range(7).apply(d.experimental.group_by_window(
        lambda x: x % 2, lambda k, w: w.batch(3), 3)),
    "bucket_by_sequence_length": lambda d, m: _sequences(d, m).bucket_by_sequence_length(
        _length(m), [4, 7], [2, 2, 2]),
    "bucket_pad_to_boundary": lambda d, m: _sequences(d, m).take(5).bucket_by_sequence_length(
        _length(m), [4, 9], [2, 2, 2], pad_to_bucket_boundary=True, padding_values=np.int32(-1)),
    "bucket_drop_remainder": lambda d, m: _sequences(d, m).bucket_by_sequence_length(
        _length(m), [4, 7], [2, 2, 2], drop_remainder=True),
    "bucket_no_padding": lambda d, m: d.Dataset.range(9).bucket_by_sequence_length(
        (lambda x: tf.cast(x, tf.int32)) if m is tf else (lambda x: x), [4, 7], [2, 2, 2], no_padding=True),
    "experimental_bucket": lambda d, m: _sequences(d, m).apply(d.experimental.bucket_by_sequence_length(
        _length(m), [5], [3, 1])),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_same_elements_and_cardinality_as_tf(name):
    check(PIPELINES[name])


def _nan_at_2(d, m):
    ds = d.Dataset.from_tensor_slices(np.array([1, 2, np.nan, 4], np.float32))
    if d is tf.data:
        return ds.map(lambda x: tf.debugging.check_numerics(x, "bad value"))

    def check_numerics(x):
        if np.isnan(x):
            raise errors.InvalidArgumentError(None, None, "bad value : Tensor had NaN values")
        return x
    return ds.map(check_numerics)


def test_ignore_errors_skips_what_tf_skips():
    check(lambda d, m: _nan_at_2(d, m).ignore_errors())
    check(lambda d, m: _nan_at_2(d, m).apply(d.experimental.ignore_errors(log_warning=False)))


def test_element_specs_match_tf():
    for build in [lambda d: d.Dataset.range(10).batch(4, drop_remainder=True).rebatch(2),
                  lambda d: d.Dataset.range(10).batch(4, drop_remainder=True).rebatch(3),
                  lambda d: d.Dataset.range(10).batch(4).rebatch(3, drop_remainder=True),
                  lambda d: d.Dataset.range(10).batch(4).rebatch([1, 3], drop_remainder=True),
                  lambda d: d.Dataset.range(5).scan(np.int64(0), lambda s, x: (s + x, s * 2))]:
        t, s = build(tf.data).element_spec, build(sd).element_spec
        assert s.shape.as_list() == t.shape.as_list() and s.dtype.name == t.dtype.name
    t = tf.data.Dataset.range(3).window(2).element_spec
    s = sd.Dataset.range(3).window(2).element_spec
    assert s.element_spec.shape == t.element_spec.shape and s.element_spec.dtype.name == t.element_spec.dtype.name


ERRORS = {
    "window_size_0": (lambda d: d.Dataset.range(3).window(0), "Window size must be greater than zero."),
    "window_shift_0": (lambda d: d.Dataset.range(3).window(2, 0), "Window shift must be greater than zero."),
    "window_stride_0": (lambda d: d.Dataset.range(3).window(2, 1, 0), "Window stride must be greater than zero."),
    "unique_float": (lambda d: d.Dataset.from_tensor_slices(np.array([1.0], np.float32)).unique(),
                     "`tf.data.Dataset.unique` does not support type"),
    "unique_tuple": (lambda d: d.Dataset.zip((d.Dataset.range(2), d.Dataset.range(2))).unique(),
                     "UniqueDataset only supports inputs with a single component."),
    "take_while_not_bool": (lambda d: d.Dataset.range(5).take_while(lambda x: x),
                            "Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor"),
    "scan_state_dtype": (lambda d: d.Dataset.range(5).scan(
        np.int64(0), lambda s, x: (s.astype(np.int32) if isinstance(s, np.ndarray) or isinstance(s, np.generic)
                                   else tf.cast(s, tf.int32), x)),
                         "Invalid `scan_func`. The element types for the new state must match the initial state."),
    "rebatch_scalars": (lambda d: d.Dataset.range(10).rebatch(2),
                        "Invalid `batch_sizes`. Expected dataset with rank of >= 1 but found a dataset with scalar"),
    "group_by_window_both": (lambda d: d.Dataset.range(3).group_by_window(
        lambda x: x, lambda k, w: w, window_size=1, window_size_func=lambda k: k),
                             "Either the `window_size` argument or the `window_size_func` argument must be specified."),
    "group_by_window_neither": (lambda d: d.Dataset.range(3).group_by_window(lambda x: x, lambda k, w: w),
                                "Either the `window_size` argument or the `window_size_func` argument must be"),
    "group_by_window_reduce_not_dataset": (lambda d: d.Dataset.range(3).group_by_window(
        lambda x: x, lambda k, w: k, window_size=1),
                                           "Invalid `reduce_func`. `reduce_func` must return a single "
                                           "`tf.data.Dataset` object but its return type is"),
    "bucket_sizes": (lambda d: d.Dataset.range(3).bucket_by_sequence_length(lambda x: x, [4, 7], [2, 2]),
                     "`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` but "
                     "`len(bucket_batch_sizes)=2` and `len(bucket_boundaries)=2`."),
    "group_by_window_size_0": (lambda d: list(d.Dataset.range(3).group_by_window(
        lambda x: x, lambda k, w: w, window_size=0)), "Window size must be greater than zero, but got 0."),
}

_SAME_CLASS = {"ValueError": ValueError, "TypeError": TypeError}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_tf(name):
    build, message = ERRORS[name]
    with pytest.raises(Exception) as t:
        r = build(tf.data)
        if isinstance(r, tf.data.Dataset):
            list(r)
    with pytest.raises(Exception) as s:
        r = build(sd)
        if isinstance(r, sd.DatasetV2):
            list(r)
    assert message in str(t.value)
    assert message in str(s.value)
    tname = type(t.value).__name__
    if tname in _SAME_CLASS:
        assert isinstance(s.value, _SAME_CLASS[tname]), s.value
    else:  # an OpError: the same class name in sluice.errors
        assert type(s.value).__name__ == tname, s.value
