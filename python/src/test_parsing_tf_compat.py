"""Cross-checks against TensorFlow: random Examples and SequenceExamples (every
feature kind, missing features with defaults, empty lists, repeated keys) are
built with TF's protobuf classes and with sluice's builders, which must give
the same bytes; then parsed with tf.io and with sluice.io, whose outputs must
match exactly. Bad inputs must raise the same error classes. Skipped without
TensorFlow."""

import os
import random

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

import sluice  # noqa: E402
from sluice import io, train  # noqa: E402

SEEDS = [0, 1, 2, 3, 4]


# ---- comparison ---------------------------------------------------------------------------

def _np(t):
    v = t.numpy()
    return v


def _assert_array(ours, theirs, what):
    theirs = np.asarray(theirs)
    if isinstance(ours, bytes):
        assert ours == theirs.item(), what
        return
    ours = np.asarray(ours)
    assert ours.shape == theirs.shape, "%s: shape %s != %s" % (what, ours.shape, theirs.shape)
    if theirs.dtype == object:
        assert ours.dtype == object, what
        assert ours.tolist() == theirs.tolist(), what
    else:
        assert ours.dtype == theirs.dtype, "%s: dtype %s != %s" % (what, ours.dtype, theirs.dtype)
        np.testing.assert_array_equal(ours, theirs, err_msg=what)


def assert_same(ours, theirs, what="output"):
    """Asserts a sluice result equals a TensorFlow result, component by component."""
    if isinstance(theirs, dict):
        assert sorted(ours) == sorted(theirs), what
        for k in theirs:
            assert_same(ours[k], theirs[k], "%s[%r]" % (what, k))
    elif isinstance(theirs, tf.SparseTensor):
        assert isinstance(ours, sluice.SparseTensor), what
        _assert_array(ours.indices, _np(theirs.indices), what + ".indices")
        _assert_array(ours.values, _np(theirs.values), what + ".values")
        _assert_array(ours.dense_shape, _np(theirs.dense_shape), what + ".dense_shape")
    elif isinstance(theirs, tf.RaggedTensor):
        assert isinstance(ours, sluice.RaggedTensor), what
        _assert_array(ours.flat_values, _np(theirs.flat_values), what + ".flat_values")
        assert len(ours.nested_row_splits) == len(theirs.nested_row_splits), what
        for i, (a, b) in enumerate(zip(ours.nested_row_splits, theirs.nested_row_splits)):
            _assert_array(a, _np(b), "%s.nested_row_splits[%d]" % (what, i))
        assert ours.to_list() == theirs.to_list(), what
    else:
        _assert_array(ours, _np(theirs), what)


# ---- random content --------------------------------------------------------------------------

def _rand_bytes(rng):
    return bytes(rng.randrange(256) for _ in range(rng.randrange(6)))


def _values(rng, kind, n):
    if kind == "int64":
        return [rng.choice([0, 1, -1, 2**63 - 1, -2**63, rng.randrange(-10**6, 10**6)]) for _ in range(n)]
    if kind == "float":
        return [float(np.float32(rng.uniform(-1e3, 1e3))) for _ in range(n)]
    return [_rand_bytes(rng) for _ in range(n)]


def _random_content(rng):
    """{key: (kind, values)} for one Example; keys absent sometimes."""
    c = {}
    c["fix_i"] = ("int64", _values(rng, "int64", 2))
    if rng.random() < 0.7:
        c["fix_f"] = ("float", _values(rng, "float", 1))
    if rng.random() < 0.7:
        c["fix_s"] = ("bytes", _values(rng, "bytes", 3))
    for key, kind in (("var_i", "int64"), ("var_f", "float"), ("var_s", "bytes")):
        if rng.random() < 0.8:
            c[key] = (kind, _values(rng, kind, rng.choice([0, 0, 1, 3, 7])))
    if rng.random() < 0.8:
        n = rng.randrange(5)
        idx = rng.sample(range(10), n)
        c["sp_idx"] = ("int64", idx)
        c["sp_val"] = ("float", _values(rng, "float", n))
    n = rng.randrange(7)
    c["rg_v"] = ("int64", _values(rng, "int64", n))
    lengths = []
    left = n
    while left:
        step = rng.randrange(left + 1)
        lengths.append(step)
        left -= step
    lengths += [0] * rng.randrange(2)
    c["rg_len"] = ("int64", lengths)
    c["rg_s"] = ("bytes", _values(rng, "bytes", rng.randrange(4)))
    if rng.random() < 0.8:
        c["seq"] = ("float", _values(rng, "float", 2 * rng.randrange(4)))
    if rng.random() < 0.3:
        c["unused"] = ("bytes", [b"ignored"])
    return c


FEATURES = {
    "fix_i": io.FixedLenFeature([2], "int64"),
    "fix_f": io.FixedLenFeature([], "float32", default_value=-0.5),
    "fix_s": io.FixedLenFeature([3], "string", default_value=[b"d0", b"d1", b"d2"]),
    "var_i": io.VarLenFeature("int64"),
    "var_f": io.VarLenFeature("float32"),
    "var_s": io.VarLenFeature("string"),
    "sp": io.SparseFeature("sp_idx", "sp_val", "float32", 10),
    "rg": io.RaggedFeature("int64", value_key="rg_v", partitions=[io.RaggedFeature.RowLengths("rg_len")]),
    "rg_s": io.RaggedFeature("string", row_splits_dtype="int64"),
    "seq": io.FixedLenSequenceFeature([2], "float32", allow_missing=True, default_value=9.0),
}


def _tf_dtype(dtype):
    return tf.as_dtype(sluice.as_dtype(dtype).name)


def _tf_features(features):
    """The same configurations as tf.io objects."""
    out = {}
    for k, f in features.items():
        if isinstance(f, io.FixedLenFeature):
            out[k] = tf.io.FixedLenFeature(f.shape, _tf_dtype(f.dtype), default_value=f.default_value)
        elif isinstance(f, io.VarLenFeature):
            out[k] = tf.io.VarLenFeature(_tf_dtype(f.dtype))
        elif isinstance(f, io.FixedLenSequenceFeature):
            out[k] = tf.io.FixedLenSequenceFeature(f.shape, _tf_dtype(f.dtype), allow_missing=f.allow_missing,
                                                   default_value=f.default_value)
        elif isinstance(f, io.SparseFeature):
            out[k] = tf.io.SparseFeature(f.index_key, f.value_key, _tf_dtype(f.dtype), f.size, f.already_sorted)
        elif isinstance(f, io.RaggedFeature):
            parts = [getattr(tf.io.RaggedFeature, type(p).__name__)(*p) for p in f.partitions]
            out[k] = tf.io.RaggedFeature(_tf_dtype(f.dtype), value_key=f.value_key, partitions=parts,
                                         row_splits_dtype=_tf_dtype(f.row_splits_dtype))
    return out


def _tf_feature(kind, values):
    if kind == "int64":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    if kind == "float":
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


def _sluice_feature(kind, values):
    if kind == "int64":
        return train.Feature(int64_list=train.Int64List(value=values))
    if kind == "float":
        return train.Feature(float_list=train.FloatList(value=values))
    return train.Feature(bytes_list=train.BytesList(value=values))


def _both_examples(content):
    """(tf bytes, sluice bytes) of an Example with `content`."""
    tf_ex = tf.train.Example(features=tf.train.Features(
        feature={k: _tf_feature(*v) for k, v in content.items()}))
    ours = train.Example(features=train.Features(feature={k: _sluice_feature(*v) for k, v in content.items()}))
    return tf_ex.SerializeToString(deterministic=True), ours.SerializeToString()


def _records(seed, n=8):
    rng = random.Random(seed)
    records = []
    for _ in range(n):
        theirs, ours = _both_examples(_random_content(rng))
        assert ours == theirs  # byte-identical to TF's deterministic serialization
        records.append(ours)
    return records


# ---- Examples -----------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_parse_example_matches_tensorflow(seed):
    records = _records(seed)
    assert_same(io.parse_example(records, FEATURES), tf.io.parse_example(records, _tf_features(FEATURES)))


@pytest.mark.parametrize("seed", SEEDS)
def test_parse_single_example_matches_tensorflow(seed):
    features = dict(FEATURES)
    del features["seq"]  # TF's parse_single_example rejects it only in graph mode; keep the set portable
    for record in _records(seed, n=3):
        assert_same(io.parse_single_example(record, features),
                    tf.io.parse_single_example(record, _tf_features(features)))


def test_repeated_keys_take_the_last_value_as_tensorflow_does():
    first, _ = _both_examples({"fix_i": ("int64", [1, 2]), "var_s": ("bytes", [b"old"])})
    second, _ = _both_examples({"fix_i": ("int64", [3, 4])})
    record = first + second  # concatenated messages merge: fix_i repeats
    features = {"fix_i": io.FixedLenFeature([2], "int64"), "var_s": io.VarLenFeature("string")}
    ours = io.parse_example([record], features)
    assert_same(ours, tf.io.parse_example([record], _tf_features(features)))
    np.testing.assert_array_equal(ours["fix_i"], [[3, 4]])


def test_empty_lists_match_tensorflow():
    _, record = _both_examples({"var_i": ("int64", []), "var_s": ("bytes", []), "rg_s": ("bytes", [])})
    features = {"var_i": io.VarLenFeature("int64"), "var_s": io.VarLenFeature("string"),
                "rg_s": io.RaggedFeature("string")}
    assert_same(io.parse_example([record, record], features),
                tf.io.parse_example([record, record], _tf_features(features)))


# ---- SequenceExamples ---------------------------------------------------------------------------

CONTEXT = {
    "c_len": io.FixedLenFeature([], "int64", default_value=-1),
    "c_vf": io.VarLenFeature("float32"),
    "c_rs": io.RaggedFeature("string"),
}
SEQUENCE = {
    "s_f": io.FixedLenSequenceFeature([2], "float32", allow_missing=True),
    "s_vi": io.VarLenFeature("int64"),
    "s_rs": io.RaggedFeature("string"),
    "s_s": io.FixedLenSequenceFeature([], "string"),
}


def _random_sequence(rng):
    context, lists = {}, {}
    if rng.random() < 0.7:
        context["c_len"] = ("int64", _values(rng, "int64", 1))
    context["c_vf"] = ("float", _values(rng, "float", rng.randrange(4)))
    context["c_rs"] = ("bytes", _values(rng, "bytes", rng.randrange(3)))
    steps = rng.randrange(5)
    if rng.random() < 0.7:
        lists["s_f"] = [("float", _values(rng, "float", 2)) for _ in range(steps)]
    lists["s_vi"] = [("int64", _values(rng, "int64", rng.randrange(4))) for _ in range(rng.randrange(4))]
    lists["s_rs"] = [("bytes", _values(rng, "bytes", rng.randrange(3))) for _ in range(rng.randrange(4))]
    lists["s_s"] = [("bytes", _values(rng, "bytes", 1)) for _ in range(rng.randrange(4))]
    return context, lists


def _both_sequences(context, lists):
    tf_seq = tf.train.SequenceExample(
        context=tf.train.Features(feature={k: _tf_feature(*v) for k, v in context.items()}),
        feature_lists=tf.train.FeatureLists(feature_list={
            k: tf.train.FeatureList(feature=[_tf_feature(*r) for r in rows]) for k, rows in lists.items()}))
    ours = train.SequenceExample(
        context=train.Features(feature={k: _sluice_feature(*v) for k, v in context.items()}),
        feature_lists=train.FeatureLists(feature_list={
            k: train.FeatureList(feature=[_sluice_feature(*r) for r in rows]) for k, rows in lists.items()}))
    return tf_seq.SerializeToString(deterministic=True), ours.SerializeToString()


def _sequence_records(seed, n=6):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        theirs, ours = _both_sequences(*_random_sequence(rng))
        assert ours == theirs
        out.append(ours)
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_parse_sequence_example_matches_tensorflow(seed):
    records = _sequence_records(seed)
    ours = io.parse_sequence_example(records, CONTEXT, SEQUENCE)
    theirs = tf.io.parse_sequence_example(records, _tf_features(CONTEXT), _tf_features(SEQUENCE))
    assert_same(ours[0], theirs[0], "context")
    assert_same(ours[1], theirs[1], "feature_lists")
    assert_same(ours[2], {k: v for k, v in theirs[2].items() if k in ours[2]}, "lengths")


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_parse_single_sequence_example_matches_tensorflow(seed):
    for record in _sequence_records(seed, n=3):
        ours = io.parse_single_sequence_example(record, CONTEXT, SEQUENCE)
        theirs = tf.io.parse_single_sequence_example(record, _tf_features(CONTEXT), _tf_features(SEQUENCE))
        assert_same(ours[0], theirs[0], "context")
        assert_same(ours[1], theirs[1], "feature_lists")


# ---- errors ------------------------------------------------------------------------------------------

def _good():
    return _both_examples({"fix_i": ("int64", [1, 2]), "var_s": ("bytes", [b"a"])})[1]


BAD_EXAMPLES = [
    ("missing required", [_good()], {"absent": io.FixedLenFeature([], "int64")}),
    ("wrong dense type", [_good()], {"fix_i": io.FixedLenFeature([2], "float32")}),
    ("wrong sparse type", [_good()], {"var_s": io.VarLenFeature("int64")}),
    ("wrong length", [_good()], {"fix_i": io.FixedLenFeature([3], "int64")}),
    ("malformed", [_good(), b"\x0a\x10\x01"], {"fix_i": io.FixedLenFeature([2], "int64")}),
    ("bytes as float", [_good()], {"var_s": io.FixedLenFeature([1], "float32")}),
]


def test_sparse_index_out_of_range_is_an_error_where_tensorflow_keeps_it():
    # A documented difference: TF's parser does not check SparseFeature
    # indices against `size`; sluice reports them.
    record = _both_examples({"i": ("int64", [12]), "v": ("float", [1.0])})[1]
    spec = {"sp": io.SparseFeature("i", "v", "float32", 10)}
    with pytest.raises(sluice.errors.InvalidArgumentError, match="sp"):
        io.parse_example([record], spec)
    out = tf.io.parse_example([record], _tf_features(spec))
    assert out["sp"].indices.numpy().tolist() == [[0, 12]]


@pytest.mark.parametrize("what, records, features", BAD_EXAMPLES, ids=[b[0] for b in BAD_EXAMPLES])
def test_bad_examples_raise_the_same_error_class_as_tensorflow(what, records, features):
    with pytest.raises(sluice.errors.OpError) as ours:
        io.parse_example(records, features)
    with pytest.raises(tf.errors.OpError) as theirs:
        tf.io.parse_example(records, _tf_features(features))
    assert type(ours.value).__name__ == type(theirs.value).__name__, (what, ours.value, theirs.value)


def test_bad_sequence_example_error_class_matches_tensorflow():
    record = _both_sequences({}, {"s_s": [("int64", [1])]})[1]
    for records in ([record], [b"\x12\x03\x0a"]):
        with pytest.raises(sluice.errors.OpError) as ours:
            io.parse_sequence_example(records, sequence_features={"s_s": io.FixedLenSequenceFeature([], "string")})
        with pytest.raises(tf.errors.OpError) as theirs:
            tf.io.parse_sequence_example(records, sequence_features={
                "s_s": tf.io.FixedLenSequenceFeature([], tf.string)})
        assert type(ours.value).__name__ == type(theirs.value).__name__


# ---- serialization cross-checks ----------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_serialize_example_is_read_back_by_protobuf(seed):
    rng = random.Random(seed)
    content = {
        "i": rng.randrange(-2**63, 2**63), "f": rng.uniform(-1, 1), "s": "ü" * rng.randrange(3),
        "li": [rng.randrange(-100, 100) for _ in range(rng.randrange(1, 5))],
        "arr": np.array([rng.uniform(-5, 5) for _ in range(4)]).reshape(2, 2),
        "lb": [_rand_bytes(rng) for _ in range(rng.randrange(1, 4))],
    }
    record = io.serialize_example(content)
    ex = tf.train.Example.FromString(record)
    feat = ex.features.feature
    assert list(feat["i"].int64_list.value) == [content["i"]]
    assert list(feat["f"].float_list.value) == [float(np.float32(content["f"]))]
    assert list(feat["s"].bytes_list.value) == [content["s"].encode()]
    assert list(feat["li"].int64_list.value) == content["li"]
    np.testing.assert_array_equal(np.array(feat["arr"].float_list.value, np.float32),
                                  content["arr"].astype(np.float32).ravel())
    assert list(feat["lb"].bytes_list.value) == content["lb"]
    assert record == ex.SerializeToString(deterministic=True)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_from_string_reads_protobuf_bytes(seed):
    rng = random.Random(seed)
    theirs, _ = _both_examples(_random_content(rng))
    tf_nondeterministic = tf.train.Example.FromString(theirs).SerializeToString()
    ours = train.Example.FromString(tf_nondeterministic)
    assert ours.SerializeToString() == theirs
    seq_theirs, _ = _both_sequences(*_random_sequence(rng))
    assert train.SequenceExample.FromString(seq_theirs).SerializeToString() == seq_theirs


def test_empty_messages_are_byte_identical():
    pairs = [
        (tf.train.Example(), train.Example()),
        (tf.train.Example(features=tf.train.Features()), train.Example(features=train.Features())),
        (tf.train.Example(features=tf.train.Features(feature={"": tf.train.Feature()})),
         train.Example(features=train.Features(feature={"": train.Feature()}))),
        (tf.train.SequenceExample(feature_lists=tf.train.FeatureLists(
            feature_list={"x": tf.train.FeatureList()})),
         train.SequenceExample(feature_lists=train.FeatureLists(feature_list={"x": train.FeatureList()}))),
        (tf.train.Feature(int64_list=tf.train.Int64List()), train.Feature(int64_list=train.Int64List())),
        (tf.train.FloatList(value=[1.5, -2.0]), train.FloatList(value=[1.5, -2.0])),
    ]
    for theirs, ours in pairs:
        assert ours.SerializeToString() == theirs.SerializeToString(deterministic=True), repr(theirs)
