"""sluice.data's file lists, CSV, file cache, sampling and SparseTensor
components against TensorFlow 2's tf.data on the same inputs: orders,
values, dtypes, cardinalities and error classes. Skipped without TF."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

import sluice  # noqa: E402
from sluice import data as sd  # noqa: E402
from sluice import errors  # noqa: E402


def plain(x):
    """A nested value as plain Python (lists, dicts, bytes, numbers); SparseTensors as triples."""
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(plain(v) for v in x)
    if isinstance(x, (sluice.SparseTensor, tf.SparseTensor)):
        return ("sparse", plain(np.asarray(x.indices)), plain(np.asarray(x.values)), plain(np.asarray(x.dense_shape)))
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x


def tf_values(ds):
    return [plain(x) for x in ds.as_numpy_iterator()] if not _has_sparse(ds) else [
        plain(tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, x)) for x in ds]


def _has_sparse(ds):
    return any(isinstance(s, tf.SparseTensorSpec) for s in tf.nest.flatten(ds.element_spec))


def sluice_values(ds):
    return [plain(x) for x in ds]


def files(tmp_path, n, prefix="f"):
    for i in range(n):
        with open(tmp_path / ("%s%02d.txt" % (prefix, i)), "w") as f:
            f.write("%d\n" % i)
    return str(tmp_path / ("%s*.txt" % prefix))


@pytest.mark.parametrize("seed", [None, 1, 42])
def test_list_files_order_matches(tmp_path, seed):
    pattern = files(tmp_path, 15)
    if seed is None:  # unseeded: only the set is TF's
        t = tf.data.Dataset.list_files(pattern, shuffle=False)
        s = sd.Dataset.list_files(pattern, shuffle=False)
    else:
        t = tf.data.Dataset.list_files(pattern, seed=seed).repeat(2)
        s = sd.Dataset.list_files(pattern, seed=seed).repeat(2)
    assert sluice_values(s) == tf_values(t)
    assert int(sd.Dataset.list_files(pattern).cardinality()) == int(tf.data.Dataset.list_files(pattern).cardinality())


def test_list_files_of_several_patterns_and_no_match(tmp_path):
    a, b = files(tmp_path, 3, "a"), files(tmp_path, 2, "b")
    assert (sluice_values(sd.Dataset.list_files([b, a], shuffle=False)) ==
            tf_values(tf.data.Dataset.list_files([b, a], shuffle=False)))
    none = str(tmp_path / "*.none")
    with pytest.raises(tf.errors.InvalidArgumentError) as t:
        tf.data.Dataset.list_files([none, a + "x"])
    with pytest.raises(errors.InvalidArgumentError) as s:
        sd.Dataset.list_files([none, a + "x"])
    assert str(s.value) == t.value.message


def test_text_line_dataset_of_list_files_matches(tmp_path):
    pattern = files(tmp_path, 6)
    for npr in (None, 3):
        t = tf.data.TextLineDataset(tf.data.Dataset.list_files(pattern, seed=5), num_parallel_reads=npr)
        s = sd.TextLineDataset(sd.Dataset.list_files(pattern, seed=5), num_parallel_reads=npr)
        assert sluice_values(s) == tf_values(t)


@pytest.mark.parametrize("weights,seed", [(None, 1), ([0.3, 0.7], 5), ([0.5, 0.1, 0.4], 123), ([0.0, 1.0, 2.0], 9)])
def test_seeded_sample_from_datasets_gives_tf_order(weights, seed):
    def build(d):
        n = 3 if weights is not None and len(weights) == 3 else 2
        inputs = [d.Dataset.range(100 * i, 100 * i + 40) for i in range(n)]
        return d.Dataset.sample_from_datasets(inputs, weights=weights, seed=seed)
    t, s = build(tf.data), build(sd)
    assert sluice_values(s) == tf_values(t)
    assert int(s.cardinality()) == int(t.cardinality())


def test_sample_from_datasets_stop_on_empty_matches():
    def build(d):
        return d.Dataset.sample_from_datasets([d.Dataset.range(5), d.Dataset.range(100, 200)], seed=3,
                                              stop_on_empty_dataset=True)
    assert sluice_values(build(sd)) == tf_values(build(tf.data))


@pytest.mark.parametrize("stop", [True, False])
def test_choose_from_datasets_matches(stop):
    def build(d):
        choice = d.Dataset.from_tensor_slices(np.array([0, 1, 2, 0, 0, 0, 1, 2, 2], np.int64))
        return d.Dataset.choose_from_datasets([d.Dataset.range(2), d.Dataset.range(10, 12),
                                               d.Dataset.range(20, 30)], choice, stop_on_empty_dataset=stop)
    t, s = build(tf.data), build(sd)
    assert sluice_values(s) == tf_values(t)
    assert int(s.cardinality()) == int(t.cardinality())


def test_choose_from_datasets_bad_index_raises_invalid_argument():
    def build(d):
        return d.Dataset.choose_from_datasets([d.Dataset.range(2)],
                                              d.Dataset.from_tensor_slices(np.array([3], np.int64)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Selector index out of range"):
        list(build(tf.data))
    with pytest.raises(errors.InvalidArgumentError, match="Selector index out of range: 3 >= 1"):
        list(build(sd))


CSV = 'a,b,c,d\n1,2.5,x,7\n3,,"y\nz",8\n-4,5e3,w,9\n'


def test_csv_dataset_matches(tmp_path):
    path = str(tmp_path / "a.csv")
    with open(path, "w") as f:
        f.write(CSV)
    for kwargs in ({"header": True}, {"header": True, "select_cols": [0, 2, 3]},
                   {"header": True, "exclude_cols": [1]}):
        n = 4 if len(kwargs) == 1 else 3

        def build(d, dtype_int):
            defaults = [dtype_int, 0.0, "d", np.int64(0)][:n] if n == 4 else [dtype_int, "d", np.int64(0)]
            return d.experimental.CsvDataset(path, defaults, **kwargs)
        t, s = build(tf.data, tf.int32), build(sd, sluice.int32)
        assert sluice_values(s) == tf_values(t)
        assert [x.dtype.name for x in s.element_spec] == [x.dtype.name for x in t.element_spec]


@pytest.mark.parametrize("text,defaults", [("1,2\n3,x\n", [0, 0]), ("1,2,3\n", [0, 0]), ("1\n", [0, 0]),
                                           (",1\n", [tf.int32, 0])])
def test_csv_dataset_errors_match_tf_wording(tmp_path, text, defaults):
    path = str(tmp_path / "bad.csv")
    with open(path, "w") as f:
        f.write(text)
    with pytest.raises(tf.errors.InvalidArgumentError) as t:
        list(tf.data.experimental.CsvDataset(path, defaults))
    s_defaults = [sluice.int32 if d is tf.int32 else d for d in defaults]
    with pytest.raises(errors.InvalidArgumentError) as s:
        list(sd.experimental.CsvDataset(path, s_defaults))
    tf_text = t.value.message.split("} ", 1)[-1].split(" [Op:")[0]
    assert str(s.value).startswith(tf_text.replace("have more", "have 3")), (str(s.value), tf_text)
    assert path in str(s.value)


@pytest.mark.parametrize("kwargs", [
    {"shuffle": False, "num_epochs": 1},
    {"shuffle": False, "num_epochs": 1, "label_name": "lab", "select_columns": ["x", "lab"]},
    {"shuffle": True, "shuffle_seed": 4, "num_epochs": 2},
    {"shuffle": True, "shuffle_seed": 4, "shuffle_buffer_size": 3, "num_epochs": 1, "num_parallel_reads": 2},
    {"shuffle": False, "num_epochs": 1, "ignore_errors": True, "column_defaults": [0, 0.0, "", np.int64(0)]},
])
def test_make_csv_dataset_matches(tmp_path, kwargs):
    for i in range(3):
        with open(tmp_path / ("p%d.csv" % i), "w") as f:
            f.write("x,y,lab,big\n")
            for r in range(5):
                f.write("%d,%s,%s,%d\n" % (10 * i + r, "2.5" if r else "", "abc"[r % 3], r * 3000000000))
            if "ignore_errors" in kwargs:
                f.write("bad,row,x,1\n")
    pattern = str(tmp_path / "p*.csv")
    t = tf.data.experimental.make_csv_dataset(pattern, 4, **kwargs)
    s = sd.experimental.make_csv_dataset(pattern, 4, **kwargs)
    norm = (lambda v: (dict(v[0]), v[1]) if isinstance(v, tuple) else dict(v))
    assert [norm(v) for v in sluice_values(s)] == [norm(v) for v in tf_values(t)]
    t_spec, s_spec = t.element_spec, s.element_spec
    flat_t = t_spec[0] if isinstance(t_spec, tuple) else t_spec
    flat_s = s_spec[0] if isinstance(s_spec, tuple) else s_spec
    assert {k: v.dtype.name for k, v in flat_s.items()} == {k: v.dtype.name for k, v in flat_t.items()}


def test_cache_file_replays_the_same_elements_and_second_writer_error_class(tmp_path):
    t = tf.data.Dataset.range(6).map(lambda x: x * 3).cache(str(tmp_path / "t"))
    s = sd.Dataset.range(6).map(lambda x: x * 3).cache(str(tmp_path / "s"))
    assert sluice_values(s) == tf_values(t)
    assert sluice_values(s) == tf_values(t)  # the second pass reads the files
    assert int(s.cardinality()) == int(t.cardinality())
    t2 = tf.data.Dataset.range(6).cache(str(tmp_path / "t2"))
    s2 = sd.Dataset.range(6).cache(str(tmp_path / "s2"))
    it_t, it_s = iter(t2), iter(s2)
    next(it_t)
    next(it_s)
    with pytest.raises(tf.errors.AlreadyExistsError):
        list(t2)
    with pytest.raises(errors.AlreadyExistsError):
        list(s2)


def test_sparse_from_tensor_slices_batch_unbatch_match():
    indices, values, shape = [[0, 1], [2, 0], [2, 3], [3, 2]], np.array([1.5, 2.5, 3.5, 4.5], np.float32), [4, 5]

    def build(d, st):
        return d.Dataset.from_tensor_slices((st, np.arange(4))).batch(3)
    t = build(tf.data, tf.SparseTensor(indices, values, shape))
    s = build(sd, sluice.SparseTensor(indices, values, shape))
    assert sluice_values(s) == tf_values(t)
    assert sluice_values(s.unbatch()) == tf_values(t.unbatch())
    assert int(s.cardinality()) == int(t.cardinality())


@pytest.mark.parametrize("rerandomize", [None, True])
def test_sample_from_datasets_epochs_match(rerandomize):
    def build(d):
        return d.Dataset.sample_from_datasets([d.Dataset.range(3), d.Dataset.range(100, 103)], seed=8,
                                              rerandomize_each_iteration=rerandomize).repeat(3)
    assert sluice_values(build(sd)) == tf_values(build(tf.data))


def test_sample_from_datasets_with_a_dataset_of_weights_matches():
    def build(d):
        weights = d.Dataset.from_tensor_slices(np.array([[0.9, 0.1], [0.1, 0.9], [0.5, 0.5]] * 5, np.float32))
        return d.Dataset.sample_from_datasets([d.Dataset.range(20), d.Dataset.range(100, 120)], weights, seed=2)
    t, s = build(tf.data), build(sd)
    assert sluice_values(s) == tf_values(t)
    assert int(s.cardinality()) == int(t.cardinality())
