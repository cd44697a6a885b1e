"""sluice.data's file lists, CSV, file cache, sampling and SparseTensor
components (bind_data_sources.cc, sluice/_data_sources.py). TensorFlow
cross-checks are in test_data_sources_tf_compat.py."""

import os
import threading

import numpy as np
import pytest

import sluice
from sluice import data as sd
from sluice import errors
from sluice import io as sio


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return str(path)


def sparse_rows(ds):
    return [(x.indices.tolist(), x.values.tolist(), x.dense_shape.tolist()) for x in ds]


# ---- list_files and readers over a dataset of names

def test_list_files_unshuffled_is_sorted_and_no_match_is_invalid_argument(tmp_path):
    for n in ["b.txt", "a.txt", "c.bin"]:
        write(tmp_path / n, n)
    got = list(sd.Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False))
    assert got == [str(tmp_path / "a.txt").encode(), str(tmp_path / "b.txt").encode()]
    with pytest.raises(errors.InvalidArgumentError, match="No files matched pattern: .*none"):
        sd.Dataset.list_files(str(tmp_path / "*.none"))


def test_seeded_list_files_repeats_its_order_and_reshuffles_each_epoch(tmp_path):
    for i in range(12):
        write(tmp_path / ("f%02d" % i), "x")
    pattern = str(tmp_path / "f*")
    a = sd.Dataset.list_files(pattern, seed=7)
    epochs = list(a.repeat(2))
    assert epochs == list(sd.Dataset.list_files(pattern, seed=7).repeat(2))
    assert sorted(epochs[:12]) == sorted(epochs[12:]) and epochs[:12] != epochs[12:]


def test_text_line_dataset_reads_a_dataset_of_names_lazily(tmp_path):
    a, b = write(tmp_path / "a", "1\n2\n"), write(tmp_path / "b", "3\n")
    names = sd.Dataset.from_tensor_slices([b, a]).repeat()  # infinite: must not be read eagerly
    assert list(sd.TextLineDataset(names).take(5)) == [b"3", b"1", b"2", b"3", b"1"]
    assert list(sd.TextLineDataset(sd.Dataset.list_files(str(tmp_path / "*"), shuffle=False),
                                   num_parallel_reads=2)) == [b"1", b"3", b"2"]


def test_tfrecord_dataset_of_names_reports_a_missing_file(tmp_path):
    names = sd.Dataset.from_tensor_slices([str(tmp_path / "missing.tfrecord")])
    with pytest.raises(errors.NotFoundError):
        list(sd.TFRecordDataset(names))


# ---- CsvDataset and make_csv_dataset

def test_csv_dataset_decodes_columns_with_defaults(tmp_path):
    f = write(tmp_path / "a.csv", 'a,b,c\n1,2.5,x\n3,,"y\nz"\n')
    ds = sd.experimental.CsvDataset(f, [sluice.int32, 0.0, "d"], header=True)
    got = list(ds)
    assert [(int(a), float(b), c) for a, b, c in got] == [(1, 2.5, b"x"), (3, 0.0, b"y\nz")]
    assert [s.dtype for s in ds.element_spec] == [sluice.int32, sluice.float32, sluice.string]


def test_csv_dataset_bad_field_names_file_line_and_column(tmp_path):
    f = write(tmp_path / "bad.csv", "1,2\n3,x\n")
    with pytest.raises(errors.InvalidArgumentError,
                       match=r'Field 1 in record is not a valid int32: x \(file ".*bad.csv", line 2, column 2\)'):
        list(sd.experimental.CsvDataset(f, [0, 0]))


def test_make_csv_dataset_infers_types_and_batches_dicts(tmp_path):
    f = write(tmp_path / "a.csv", "x,y,name,big\n1,2.5,a,5000000000\n3,4,b,1\n5,6,c,2\n")
    ds = sd.experimental.make_csv_dataset(f, 2, label_name="name", shuffle=False, num_epochs=1)
    features, label = ds.element_spec
    assert {k: v.dtype for k, v in features.items()} == {"x": sluice.int32, "y": sluice.float32,
                                                          "big": sluice.int64}
    got = list(ds)
    assert [b["x"].tolist() for b, _ in got] == [[1, 3], [5]]
    assert [lab.tolist() for _, lab in got] == [[b"a", b"b"], [b"c"]]


def test_make_csv_dataset_repeats_for_ever_with_whole_batches(tmp_path):
    f = write(tmp_path / "a.csv", "x\n1\n2\n3\n")
    ds = sd.experimental.make_csv_dataset(f, 2, shuffle=False)
    assert [b["x"].tolist() for b in ds.take(3)] == [[1, 2], [3, 1], [2, 3]]
    assert ds.cardinality() == sd.INFINITE_CARDINALITY


# ---- cache(filename)

def test_cache_file_is_written_once_and_replayed(tmp_path):
    calls = []

    def f(x):
        calls.append(int(x))
        return x * 2
    ds = sd.Dataset.range(4).map(f).cache(str(tmp_path / "c"))
    calls.clear()  # map traced the function once
    assert [int(x) for x in ds] == [0, 2, 4, 6]
    assert [int(x) for x in ds] == [0, 2, 4, 6]
    assert calls == [0, 1, 2, 3]
    assert sorted(os.listdir(tmp_path)) == ["c"]


def test_cache_file_second_writer_is_already_exists_and_corruption_is_data_loss(tmp_path):
    path = str(tmp_path / "c")
    ds = sd.Dataset.range(10).cache(path)
    first = iter(ds)
    next(first)
    with pytest.raises(errors.AlreadyExistsError):
        list(ds)
    first.close()
    assert list(ds)
    with open(path, "r+b") as fh:
        fh.seek(20)
        fh.write(b"\xff\xff")
    with pytest.raises(errors.DataLossError, match="c"):
        list(ds)


def test_cache_file_round_trips_sparse_and_strings(tmp_path):
    st = sluice.SparseTensor([[0, 1], [2, 0]], [1.5, 2.5], [3, 4])
    ds = sd.Dataset.from_tensors((st, np.array([b"a", b""], dtype=object))).cache(str(tmp_path / "c"))
    list(ds)
    (got, strings), = list(ds)
    assert sparse_rows([got]) == [([[0, 1], [2, 0]], [1.5, 2.5], [3, 4])]
    assert strings.tolist() == [b"a", b""]


# ---- sample_from_datasets and choose_from_datasets

def test_choose_from_datasets_follows_the_choices():
    choice = sd.Dataset.from_tensor_slices(np.array([0, 1, 1, 0], np.int64))
    ds = sd.Dataset.choose_from_datasets([sd.Dataset.range(3), sd.Dataset.range(10, 13)], choice)
    assert [int(x) for x in ds] == [0, 10, 11, 1]
    with pytest.raises(TypeError, match="tf.int64"):
        sd.Dataset.choose_from_datasets([sd.Dataset.range(3)], sd.Dataset.from_tensor_slices([0.5]))


def test_sample_from_datasets_is_deterministic_with_a_seed_and_follows_the_weights():
    inputs = [sd.Dataset.range(1).repeat(), sd.Dataset.range(1, 2).repeat()]
    a = [int(x) for x in sd.experimental.sample_from_datasets(inputs, [0.2, 0.8], seed=3).take(2000)]
    b = [int(x) for x in sd.Dataset.sample_from_datasets(inputs, [0.2, 0.8], seed=3).take(2000)]
    assert a == b
    assert abs(sum(a) / 2000 - 0.8) < 0.04
    with pytest.raises(ValueError, match="same length"):
        sd.Dataset.sample_from_datasets(inputs, [1.0])


# ---- SparseTensor components

def test_from_tensor_slices_batch_and_unbatch_of_a_sparse_tensor():
    st = sluice.SparseTensor([[0, 1], [2, 0], [2, 3]], np.array([1, 2, 3], np.int64), [3, 4])
    ds = sd.Dataset.from_tensor_slices(({"s": st}, np.arange(3)))
    rows = [(sparse_rows([s["s"]])[0], int(d)) for s, d in ds]
    assert rows == [(([[1]], [1], [4]), 0), (([], [], [4]), 1), (([[0], [3]], [2, 3], [4]), 2)]
    batched = list(ds.batch(2))
    assert sparse_rows([b[0]["s"] for b in batched]) == [([[0, 1]], [1], [2, 4]), ([[0, 0], [0, 3]], [2, 3], [1, 4])]
    assert [b[1].tolist() for b in batched] == [[0, 1], [2]]
    assert sparse_rows([s["s"] for s, _ in ds.batch(2).unbatch()]) == sparse_rows([s["s"] for s, _ in ds])


def test_parsed_var_len_features_batch_as_sparse_tensors(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    with sio.TFRecordWriter(path) as w:
        for i in range(3):
            w.write(sluice.train.Example(features=sluice.train.Features(feature={
                "tags": sluice.train.Feature(int64_list=sluice.train.Int64List(value=list(range(i)))),
            })).SerializeToString())
    ds = sd.TFRecordDataset(path).map(sd.ops.parse_example({"tags": sio.VarLenFeature(sluice.int64)})).batch(3)
    (batch,) = list(ds)
    assert sparse_rows([batch["tags"]]) == [([[1, 0], [2, 0], [2, 1]], [0, 0, 1], [3, 2])]


def test_fixed_length_record_dataset_reads_a_dataset_of_names(tmp_path):
    with open(tmp_path / "a.bin", "wb") as f:
        f.write(b"HHabcdef")
    with open(tmp_path / "b.bin", "wb") as f:
        f.write(b"HHgh")
    names = sd.Dataset.list_files(str(tmp_path / "*.bin"), shuffle=False)
    ds = sd.FixedLengthRecordDataset(names, record_bytes=2, header_bytes=2)
    assert list(ds) == [b"ab", b"cd", b"ef", b"gh"]
