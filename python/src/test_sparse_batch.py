"""Batching SparseTensors (sluice/_sparse_batch.py over bind_sparse_batch.cc):
examples are packed (natively or in Python), batched by a queue's
dequeue_many, and unpacked into one SparseTensor per sparse component; the
batches are compared with TensorFlow's tf.compat.v1.train.batch and
shuffle_batch of the same examples (skipped without TensorFlow)."""

import numpy as np
import pytest

import sluice
from sluice import _core
from sluice import _input
from sluice import _sparse_batch as sb
from sluice import errors
from sluice import io
from sluice import queue
from sluice import train
from sluice.io import serialize_example

# One example per entry: (indices, values, dense_shape); the second is empty.
FLOATS = [([[0], [2]], [1.0, 2.0], [3]), ([], [], [0]), ([[4]], [5.0], [5]), ([[0]], [7.0], [1])]
STRINGS = [([[0], [1]], [b"a", b"bc"], [2]), ([], [], [0]), ([[3]], [b""], [4]), ([[0]], [b"x\x00y"], [1])]
RANK2 = [([[0, 1], [2, 0]], [1, 2], [3, 2]), ([[0, 4]], [3], [1, 5]), ([], [], [0, 0]), ([[1, 1]], [9], [2, 2])]


def _sparse(example, dtype):
    ix, values, shape = example
    values = np.array(values, dtype=object) if dtype is sluice.string else np.array(values, dtype=dtype.as_numpy_dtype)
    return sluice.SparseTensor(np.array(ix, np.int64).reshape(-1, len(shape)), values, shape)


def _python_batches(examples, dtype, batch_size, shuffle_seed=None):
    """Each example {"sp": SparseTensor, "id": i} packed in Python, batched by a queue, unpacked."""
    template = {"sp": sb.SparseTensorSpec([None] * len(examples[0][2]), dtype), "id": sluice.int64}
    structure = _input._Structure.of(template)
    layout = sb.describe_python(structure, structure.flatten_template(template, "dtypes"),
                                structure.flatten_template({"sp": None, "id": ()}, "shapes"))
    if shuffle_seed is None:
        q = queue.FIFOQueue(32, layout.dtypes, shapes=layout.shapes)
    else:
        q = queue.RandomShuffleQueue(32, 0, layout.dtypes, shapes=layout.shapes, seed=shuffle_seed)
    for i, example in enumerate(examples):
        components = structure.flatten({"sp": _sparse(example, dtype), "id": np.int64(i)})
        q.enqueue(sb.pack_python(components, layout))
    q.close()
    return _drain(q, layout, batch_size)


def _drain(q, layout, batch_size):
    batches = []
    while True:
        try:
            batches.append(sb.unpack(q.dequeue_up_to(batch_size), layout))
        except errors.OutOfRangeError:
            return batches


def _tf_batches(examples, dtype, batch_size, shuffle=False, enqueue_many=False):
    """TF's batch (or shuffle_batch) of [SparseTensor, id] per example, in graph mode: [(SparseTensorValue, ids)]."""
    tf = pytest.importorskip("tensorflow")
    tf1 = tf.compat.v1
    rank = len(examples[0][2])
    tf_dtype = tf.as_dtype(dtype.name)
    ix = np.concatenate([np.array(e[0], np.int64).reshape(-1, rank) for e in examples])
    flat = [v for e in examples for v in e[1]]
    values = np.array(flat, dtype=object if dtype is sluice.string else dtype.as_numpy_dtype)
    offsets = np.cumsum([0] + [len(e[1]) for e in examples]).astype(np.int64)
    shapes = np.array([e[2] for e in examples], np.int64)
    with tf.Graph().as_default():
        k = tf1.train.range_input_producer(len(examples), shuffle=False, num_epochs=1).dequeue()
        lo, hi = tf.gather(offsets, k), tf.gather(offsets, k + 1)
        st = tf.SparseTensor(tf.constant(ix)[lo:hi], tf.constant(values, dtype=tf_dtype)[lo:hi], tf.gather(shapes, k))
        inputs = [st, tf.cast(k, tf.int64)]
        if shuffle:
            out = tf1.train.shuffle_batch(inputs, batch_size, capacity=32, min_after_dequeue=0, seed=7,
                                          allow_smaller_final_batch=True)
        else:
            out = tf1.train.batch(inputs, batch_size, allow_smaller_final_batch=True)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            batches = []
            try:
                while True:
                    batches.append(sess.run(out))
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
    return batches


def _assert_same_sparse(ours, theirs):
    np.testing.assert_array_equal(ours.indices, theirs.indices)
    assert ours.values.tolist() == theirs.values.tolist()
    np.testing.assert_array_equal(ours.dense_shape, theirs.dense_shape)


# ---- Python producers: pack in Python -> queue -> unpack --------------------------------

def test_batch_prepends_the_example_index_and_takes_the_max_shape():
    (first, second) = _python_batches(FLOATS, sluice.float32, 3)
    np.testing.assert_array_equal(first["id"], [0, 1, 2])
    sp = first["sp"]
    assert isinstance(sp, sluice.SparseTensor)
    np.testing.assert_array_equal(sp.indices, [[0, 0], [0, 2], [2, 4]])
    np.testing.assert_array_equal(sp.values, np.float32([1, 2, 5]))
    assert sp.values.dtype == np.float32
    np.testing.assert_array_equal(sp.dense_shape, [3, 5])
    np.testing.assert_array_equal(second["sp"].indices, [[0, 0]])  # the final short batch
    np.testing.assert_array_equal(second["sp"].dense_shape, [1, 1])


@pytest.mark.parametrize("examples,dtype", [(FLOATS, sluice.float32), (STRINGS, sluice.string),
                                            (RANK2, sluice.int64)], ids=["float32", "string", "rank2"])
def test_python_packed_batches_match_tensorflow_batch(examples, dtype):
    theirs = _tf_batches(examples, dtype, 3)
    ours = _python_batches(examples, dtype, 3)
    assert len(ours) == len(theirs) == 2
    for o, t in zip(ours, theirs):
        _assert_same_sparse(o["sp"], t[0])
        np.testing.assert_array_equal(o["id"], t[1])


def test_shuffle_batch_keeps_each_sparse_row_with_its_example():
    # TF's shuffle_batch: each row b of the batched SparseTensor is the
    # example whose id is ids[b]; the same holds after sluice's shuffle.
    def check(sp, ids):
        for b, i in enumerate(ids):
            rows = sp.indices[:, 0] == b
            ix, values, _ = FLOATS[int(i)]
            np.testing.assert_array_equal(sp.indices[rows, 1:], np.array(ix, np.int64).reshape(-1, 1))
            assert sp.values[rows].tolist() == values
        assert list(sp.dense_shape) == [len(ids), max(FLOATS[int(i)][2][0] for i in ids)]

    seen = []
    for batch in _python_batches(FLOATS, sluice.float32, 2, shuffle_seed=3):
        check(batch["sp"], batch["id"])
        seen.extend(batch["id"].tolist())
    assert sorted(seen) == [0, 1, 2, 3]
    if _have_tf():
        for sp, ids in _tf_batches(FLOATS, sluice.float32, 2, shuffle=True):
            check(sp, ids)


def _have_tf():
    try:
        import tensorflow  # noqa: F401,PLC0415
    except ImportError:
        return False
    return True


def test_python_packing_writes_the_bytes_of_the_native_packing():
    cases = [(FLOATS[0], sluice.float32), (FLOATS[1], sluice.float32), (STRINGS[3], sluice.string),
             (RANK2[0], sluice.int64), (([[1], [3]], [True, False], [4]), sluice.bool),
             (([[0]], [1.5 + 2j], [1]), sluice.complex64), (([[2]], [200], [3]), sluice.uint8)]
    for example, dtype in cases:
        sp = _sparse(example, dtype)
        layout = sb.describe_python(_input._Structure.of([0]), [sb.SparseTensorSpec(None, dtype)], [None])
        [python_bytes] = sb.pack_python([sp], layout)
        parts = [sp.indices, _queue_component(sp.values, dtype), sp.dense_shape]
        core = _core.python_producer(lambda parts=parts: parts,
                                     [sluice.int64.as_datatype_enum, dtype.as_datatype_enum,
                                      sluice.int64.as_datatype_enum], [[-1, -1], [-1], [-1]])
        [native_bytes] = _core.pack_sparse_producer(core, [(0, 1, 2)])()
        assert python_bytes == native_bytes, (example, dtype)


def _queue_component(values, dtype):
    return queue._to_component(values, dtype)


def test_enqueue_many_packs_one_string_per_row_as_the_native_packing():
    batch = sluice.SparseTensor([[0, 1], [0, 3], [2, 0]], np.float32([1, 2, 3]), [3, 4])
    layout = sb.describe_python(_input._Structure.of([0]), [sb.SparseTensorSpec([None], sluice.float32)], [None])
    [rows] = sb.pack_python([batch], layout, enqueue_many=True)
    assert rows.shape == (3,)
    core = _core.python_producer(lambda: [batch.indices, batch.values, batch.dense_shape],
                                 [9, 1, 9], [None, None, None])
    [native_rows] = _core.pack_sparse_producer(core, [(0, 1, 2)], enqueue_many=True)()
    assert rows.tolist() == native_rows.tolist()
    q = queue.FIFOQueue(8, layout.dtypes, shapes=layout.shapes)
    q.enqueue_many([rows])
    again = sb.unpack(q.dequeue_many(3), layout)
    np.testing.assert_array_equal(again.indices, batch.indices)
    np.testing.assert_array_equal(again.values, batch.values)
    np.testing.assert_array_equal(again.dense_shape, batch.dense_shape)


def test_enqueue_many_rejects_unsorted_indices():
    layout = sb.describe_python(_input._Structure.of([0]), [sb.SparseTensorSpec(None, sluice.float32)], [None])
    unsorted = sluice.SparseTensor([[1, 0], [0, 0]], np.float32([1, 2]), [2, 2])
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = \[0,0\] is out of order"):
        sb.pack_python([unsorted], layout, enqueue_many=True)


def test_packing_a_sparse_component_checks_it():
    layout = sb.describe_python(_input._Structure.of([0]), [sb.SparseTensorSpec([None], sluice.float32)], [None])
    with pytest.raises(errors.InvalidArgumentError, match="expected a SparseTensor"):
        sb.pack_python([np.float32([1])], layout)
    with pytest.raises(errors.InvalidArgumentError, match="rank 2 for a component declared"):
        sb.pack_python([sluice.SparseTensor([[0, 0]], np.float32([1]), [1, 1])], layout)
    bad = sluice.SparseTensor(np.zeros((1, 1), np.int64), np.float32([1]), [1])
    bad._values = np.float32([1, 2])  # parts that disagree, as a hand-built value may
    with pytest.raises(errors.InvalidArgumentError, match=r"indices and values rows .* \(indices = 1, values = 2\)"):
        sb.pack_python([bad], layout)


def test_describe_python_without_sparse_specs_is_none():
    assert sb.describe_python(_input._Structure.of([0, 0]), [sluice.int64, sluice.string], [(), ()]) is None


def test_tensorflow_sparse_tensor_spec_declares_a_sparse_component():
    tf = pytest.importorskip("tensorflow")
    structure = _input._Structure.of({"a": 0, "sp": 0})
    layout = sb.describe_python(structure, [tf.int64, tf.SparseTensorSpec([None, 3], tf.string)], [(), None])
    assert layout.sparse == {1: sb.SparseTensorSpec([None, 3], sluice.string)}
    assert layout.dtypes == [sluice.int64, sluice.string] and layout.shapes == [(), ()]


# ---- unpack errors -----------------------------------------------------------------------

def test_batch_of_mismatched_ranks_is_invalid_argument():
    rows = [sb._pack_one(*sb._sparse_parts(_sparse(e, sluice.int64), sb.SparseTensorSpec(None, sluice.int64),
                                          False), sluice.int64) for e in (RANK2[0], ([[1]], [2], [3]))]
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Inconsistent rank across SparseTensors: rank prior to SparseTensor\[1\] was: 3 "
                             r"but rank of SparseTensor\[1\] is: 2"):
        _core.unpack_sparse_batch(np.array(rows, dtype=object))


def test_corrupt_packed_string_is_invalid_argument():
    layout = sb.describe_python(_input._Structure.of([0]), [sb.SparseTensorSpec(None, sluice.float32)], [None])
    [good] = sb.pack_python([_sparse(FLOATS[0], sluice.float32)], layout)
    for bad in (good[:-1], good + b"\0", b"\x07" + good[1:]):
        with pytest.raises(errors.InvalidArgumentError, match=r"Corrupt packed SparseTensor\[1\]"):
            sb.unpack([np.array([good, bad], dtype=object)], layout)


def test_unpack_checks_the_declared_dtype():
    layout = sb.describe_python(_input._Structure.of([0]), [sb.SparseTensorSpec(None, sluice.float32)], [None])
    [packed] = sb.pack_python([_sparse(FLOATS[0], sluice.float32)], layout)
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Requested SparseTensor of type int64 but SparseTensor\[0\].values.dtype\(\) == "
                             r"float32"):
        _core.unpack_sparse_batch([packed], sluice.int64.as_datatype_enum)
    with pytest.raises(TypeError, match="not one string"):
        _core.unpack_sparse_batch(packed)
    with pytest.raises(TypeError, match="bytes items"):
        _core.unpack_sparse_batch([packed, 3])


# ---- native producers: map_parse_example -> pack in C++ -> queue -> unpack ---------------

RECORDS = [serialize_example({"label": 0, "v": [1.0, 2.0], "s": [b"a", b"bc"]}),
           serialize_example({"label": 1}),  # no v, no s: empty SparseTensors
           serialize_example({"label": 2, "v": [5.0, 6.0, 7.0], "s": [b""]}),
           serialize_example({"label": 3, "v": [8.0]})]
FEATURES = {"label": io.FixedLenFeature([], sluice.int64), "v": io.VarLenFeature(sluice.float32),
            "s": io.VarLenFeature(sluice.string)}


def _records_producer(records):
    q = queue.FIFOQueue(len(records) + 1, [sluice.string], shapes=[()])
    q.enqueue_many([np.array(records, dtype=object)])
    q.close()
    return train.dequeue_producer(q)


def _native_batches(batch_size):
    parsed = _records_producer(RECORDS).map_parse_example(FEATURES, value_index=0)
    core, layout = sb.pack_native(parsed)
    assert layout.keys == ["label", "s", "v"]
    assert sorted(layout.sparse) == [1, 2]
    q = queue.FIFOQueue(16, layout.dtypes, shapes=layout.shapes)
    while True:
        try:
            q.enqueue(core())
        except errors.OutOfRangeError:
            break
    q.close()
    return _drain(q, layout, batch_size)


def test_pack_native_maps_the_unpacked_shapes_to_the_packed_components():
    parsed = _records_producer(RECORDS).map_parse_example(FEATURES, value_index=0)
    _, layout = sb.pack_native(parsed)
    assert layout.source == [0, 1, 4]  # label, s/indices, v/indices
    assert layout.packed_shapes(["L", "si", "sv", "sd", "vi", "vv", "vd"]) == ["L", (), ()]
    assert layout.dtypes == [sluice.int64, sluice.string, sluice.string] and layout.shapes == [(), (), ()]


def test_native_packed_batch_is_one_sparse_tensor_per_feature():
    first, second = _native_batches(3)
    assert sorted(first) == ["label", "s", "v"]
    np.testing.assert_array_equal(first["label"], [0, 1, 2])
    np.testing.assert_array_equal(first["v"].indices, [[0, 0], [0, 1], [2, 0], [2, 1], [2, 2]])
    np.testing.assert_array_equal(first["v"].values, np.float32([1, 2, 5, 6, 7]))
    np.testing.assert_array_equal(first["v"].dense_shape, [3, 3])
    assert first["s"].values.tolist() == [b"a", b"bc", b""]
    np.testing.assert_array_equal(first["s"].indices, [[0, 0], [0, 1], [2, 0]])
    np.testing.assert_array_equal(first["s"].dense_shape, [3, 2])
    np.testing.assert_array_equal(second["v"].dense_shape, [1, 1])
    np.testing.assert_array_equal(second["s"].dense_shape, [1, 0])  # no values at all


def test_native_packed_batches_match_tensorflow_batch_of_parsed_examples():
    tf = pytest.importorskip("tensorflow")
    tf1 = tf.compat.v1
    with tf.Graph().as_default():
        record = tf1.train.input_producer(tf.constant(RECORDS), shuffle=False, num_epochs=1).dequeue()
        parsed = tf1.io.parse_single_example(record, {"label": tf.io.FixedLenFeature([], tf.int64),
                                                      "v": tf.io.VarLenFeature(tf.float32),
                                                      "s": tf.io.VarLenFeature(tf.string)})
        out = tf1.train.batch(parsed, 3, allow_smaller_final_batch=True)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            theirs = [sess.run(out), sess.run(out)]
            coord.request_stop()
            coord.join(threads)
    ours = _native_batches(3)
    for o, t in zip(ours, theirs):
        assert sorted(o) == sorted(t)
        np.testing.assert_array_equal(o["label"], t["label"])
        _assert_same_sparse(o["v"], t["v"])
        _assert_same_sparse(o["s"], t["s"])


def test_native_rank2_sparse_feature_batches_to_rank3():
    features = {"m": io.SparseFeature(["i", "j"], "x", sluice.float32, [3, 4])}
    records = [serialize_example({"i": [0, 2], "j": [1, 3], "x": [1.0, 2.0]}), serialize_example({}),
               serialize_example({"i": [1], "j": [0], "x": [3.0]})]
    parsed = _records_producer(records).map_parse_example(features, value_index=0)
    core, layout = sb.pack_native(parsed)
    assert layout.sparse == {0: sb.SparseTensorSpec([None, None], sluice.float32)}
    q = queue.FIFOQueue(8, layout.dtypes, shapes=layout.shapes)
    for _ in records:
        q.enqueue(core())
    m = sb.unpack(q.dequeue_many(3), layout)["m"]
    np.testing.assert_array_equal(m.indices, [[0, 0, 1], [0, 2, 3], [2, 1, 0]])
    np.testing.assert_array_equal(m.values, np.float32([1, 2, 3]))
    np.testing.assert_array_equal(m.dense_shape, [3, 3, 4])


def test_pack_native_without_sparse_components_changes_nothing():
    parsed = _records_producer(RECORDS).map_parse_example({"label": io.FixedLenFeature([], sluice.int64)}, 0)
    core, layout = sb.pack_native(parsed)
    assert core is parsed.core and layout is None


def test_pack_native_refuses_a_key_collision():
    parsed = _records_producer(RECORDS).map_parse_example(FEATURES, value_index=0)
    assert parsed.names[4:] == ["v/indices", "v/values", "v/dense_shape"]
    selected = parsed.map_select([4, 5, 6, 0])  # keeps the names: v's parts, then label
    structure = _input._Structure("dict", keys=["v/indices", "v/values", "v/dense_shape", "v"])
    with pytest.raises(ValueError, match="the same key"):
        sb.pack_native(selected.core, structure)


# ---- through the batchers (sluice.train.batch & co.) ------------------------------------------


def _batches_to_end(batch_queue):
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    got = list(batch_queue.batches())
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=10)
    return got


def test_batch_of_parsed_examples_gives_one_sparse_tensor_per_var_len_feature():
    with train.Graph().as_default():
        parsed = _records_producer(RECORDS).map_parse_example(FEATURES, value_index=0)
        batch_queue = train.batch(parsed, batch_size=3, allow_smaller_final_batch=True)  # no dynamic_pad
        assert sorted(batch_queue.keys()) == ["label", "s", "v"]
        first, second = _batches_to_end(batch_queue)
    np.testing.assert_array_equal(first["label"], [0, 1, 2])
    assert isinstance(first["v"], sluice.SparseTensor)
    np.testing.assert_array_equal(first["v"].indices, [[0, 0], [0, 1], [2, 0], [2, 1], [2, 2]])
    np.testing.assert_array_equal(first["v"].dense_shape, [3, 3])
    np.testing.assert_array_equal(second["v"].dense_shape, [1, 1])


def test_a_python_producer_of_sparse_tensors_batches_them_with_inferred_or_declared_specs():
    examples = [sluice.SparseTensor([[0], [2]], np.float32([1, 2]), [3]),
                sluice.SparseTensor(np.zeros((0, 1), np.int64), np.float32([]), [1]),
                sluice.SparseTensor([[1]], np.float32([5]), [2])]
    for dtypes in (None, [sluice.SparseTensorSpec([None], sluice.float32), sluice.int64]):
        with train.Graph().as_default():
            it = iter(enumerate(examples))

            def produce():
                i, sp = next(it)
                return [sp, np.int64(i)]

            batch_queue = train.batch(produce, batch_size=3, dtypes=dtypes, shapes=[None, []] if dtypes else None)
            [(sp, ids)] = _batches_to_end(batch_queue)
        np.testing.assert_array_equal(ids, [0, 1, 2])
        np.testing.assert_array_equal(sp.indices, [[0, 0], [0, 2], [2, 1]])
        np.testing.assert_array_equal(sp.values, np.float32([1, 2, 5]))
        np.testing.assert_array_equal(sp.dense_shape, [3, 3])


def test_unpacked_components_of_a_sparse_batch_come_from_one_batch():
    with train.Graph().as_default():
        parsed = _records_producer(RECORDS).map_parse_example(FEATURES, value_index=0)
        batch_queue = train.batch(parsed, batch_size=3)
        with train.Session() as sess:
            coord = train.Coordinator()
            threads = train.start_queue_runners(sess, coord)
            label, v = sess.run([batch_queue["label"], batch_queue["v"]])
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    np.testing.assert_array_equal(label, [0, 1, 2])
    np.testing.assert_array_equal(v.dense_shape, [3, 3])
