"""sluice.io's Example / SequenceExample parsing: every feature kind for one
record and for a batch, defaults, the errors for bad data (naming record and
key), and the dtype spellings the feature configurations accept."""

import numpy as np
import pytest

import sluice
from sluice import errors
from sluice import io
from sluice import train
from sluice.io import serialize_example


def _seq(context=None, lists=None):
    """A serialized SequenceExample from {key: Feature} and {key: [Feature]}."""
    return train.SequenceExample(
        context=train.Features(feature=context or {}),
        feature_lists=train.FeatureLists(feature_list={
            k: train.FeatureList(feature=rows) for k, rows in (lists or {}).items()})).SerializeToString()


def _i(*v):
    return train.Feature(int64_list=train.Int64List(value=list(v)))


def _f(*v):
    return train.Feature(float_list=train.FloatList(value=list(v)))


def _b(*v):
    return train.Feature(bytes_list=train.BytesList(value=list(v)))


RECORDS = [
    serialize_example({"label": 1, "w": [0.5, 1.5], "name": b"a", "tags": [b"x", b"y"], "idx": [0, 3],
                       "val": [1.0, 2.0], "rag": [1, 2, 3], "len": [2, 1]}),
    serialize_example({"label": 2, "w": [2.5, 3.5], "tags": [b"z"], "idx": [1], "val": [3.0],
                       "rag": [4], "len": [0, 1]}),
]


# ---- Example, one record -------------------------------------------------------------

def test_fixed_len_features_give_arrays_of_the_shape():
    out = io.parse_single_example(RECORDS[0], {
        "label": io.FixedLenFeature([], sluice.int64),
        "w": io.FixedLenFeature([2, 1], sluice.float32),
        "name": io.FixedLenFeature([], sluice.string),
    })
    assert out["label"].dtype == np.int64 and out["label"].shape == () and out["label"] == 1
    assert out["w"].dtype == np.float32
    np.testing.assert_array_equal(out["w"], [[0.5], [1.5]])
    assert out["name"] == b"a"


def test_fixed_len_default_is_used_when_the_feature_is_missing():
    out = io.parse_single_example(RECORDS[1], {
        "name": io.FixedLenFeature([], sluice.string, default_value="none"),
        "pair": io.FixedLenFeature([2], sluice.int64, default_value=[7, 8]),
    })
    assert out["name"] == b"none"
    np.testing.assert_array_equal(out["pair"], [7, 8])


def test_var_len_feature_gives_a_sparse_tensor():
    st = io.parse_single_example(RECORDS[0], {"tags": io.VarLenFeature(sluice.string)})["tags"]
    assert isinstance(st, sluice.SparseTensor)
    np.testing.assert_array_equal(st.indices, [[0], [1]])
    assert list(st.values) == [b"x", b"y"]
    np.testing.assert_array_equal(st.dense_shape, [2])
    assert st.indices.dtype == np.int64 and st.dense_shape.dtype == np.int64


def test_sparse_feature_places_values_at_their_indices():
    st = io.parse_single_example(RECORDS[0], {"sp": io.SparseFeature("idx", "val", sluice.float32, 5)})["sp"]
    np.testing.assert_array_equal(st.indices, [[0], [3]])
    np.testing.assert_array_equal(st.to_dense(), [1, 0, 0, 2, 0])


def test_ragged_feature_without_partitions_is_a_plain_array_for_one_record():
    out = io.parse_single_example(RECORDS[0], {"rag": io.RaggedFeature(sluice.int64)})
    np.testing.assert_array_equal(out["rag"], [1, 2, 3])


def test_ragged_feature_with_row_lengths():
    rt = io.parse_single_example(RECORDS[0], {
        "r": io.RaggedFeature(sluice.int64, value_key="rag", partitions=[io.RaggedFeature.RowLengths("len")])})["r"]
    assert isinstance(rt, sluice.RaggedTensor)
    assert rt.to_list() == [[1, 2], [3]]
    assert rt.row_splits.dtype == np.int32


def test_fixed_len_sequence_feature_in_an_example():
    out = io.parse_single_example(RECORDS[0], {
        "rag": io.FixedLenSequenceFeature([], sluice.int64, allow_missing=True)})
    np.testing.assert_array_equal(out["rag"], [1, 2, 3])


def test_example_names_appear_in_errors_of_a_single_record():
    with pytest.raises(errors.InvalidArgumentError, match="rec-7"):
        io.parse_single_example(RECORDS[1], {"name": io.FixedLenFeature([], sluice.string)},
                                example_names="rec-7")


# ---- Example, batch -----------------------------------------------------------------------

def test_batch_of_every_feature_kind():
    out = io.parse_example(RECORDS, {
        "label": io.FixedLenFeature([], sluice.int64),
        "w": io.FixedLenFeature([2], sluice.float32),
        "name": io.FixedLenFeature([], sluice.string, default_value=b"?"),
        "tags": io.VarLenFeature(sluice.string),
        "sp": io.SparseFeature(["idx"], "val", sluice.float32, [4]),
        "rag": io.RaggedFeature(sluice.int64, row_splits_dtype=sluice.int64),
        "seq": io.FixedLenSequenceFeature([], sluice.int64, allow_missing=True, default_value=-1),
    })
    np.testing.assert_array_equal(out["label"], [1, 2])
    np.testing.assert_array_equal(out["w"], [[0.5, 1.5], [2.5, 3.5]])
    assert list(out["name"]) == [b"a", b"?"]
    np.testing.assert_array_equal(out["tags"].indices, [[0, 0], [0, 1], [1, 0]])
    np.testing.assert_array_equal(out["tags"].dense_shape, [2, 2])
    np.testing.assert_array_equal(out["sp"].to_dense(), [[1, 0, 0, 2], [0, 3, 0, 0]])
    assert out["rag"].to_list() == [[1, 2, 3], [4]]
    assert out["rag"].row_splits.dtype == np.int64
    assert out["seq"].shape == (2, 0)  # no "seq" feature: zero rows, padded


def test_batch_accepts_tuples_and_numpy_arrays():
    spec = {"label": io.FixedLenFeature([], "int64")}
    for batch in (tuple(RECORDS), np.array(RECORDS, dtype=object), np.array(RECORDS)):
        np.testing.assert_array_equal(io.parse_example(batch, spec)["label"], [1, 2])


def test_empty_batch_gives_empty_outputs():
    out = io.parse_example([], {"label": io.FixedLenFeature([3], "int64"), "v": io.VarLenFeature("float32")})
    assert out["label"].shape == (0, 3)
    np.testing.assert_array_equal(out["v"].dense_shape, [0, 0])


def test_big_batch_parses_correctly_without_the_gil():
    records = [serialize_example({"x": np.arange(i % 50), "y": float(i)}) for i in range(2000)]
    out = io.parse_example(records, {"x": io.VarLenFeature("int64"), "y": io.FixedLenFeature([], "float32")})
    np.testing.assert_array_equal(out["y"], np.arange(2000, dtype=np.float32))
    assert out["x"].values.shape[0] == sum(i % 50 for i in range(2000))


# ---- errors -----------------------------------------------------------------------------------

def test_missing_required_feature_names_key_and_index():
    with pytest.raises(errors.InvalidArgumentError) as info:
        io.parse_example(RECORDS, {"name": io.FixedLenFeature([], sluice.string)})
    msg = str(info.value)
    assert "Key: name" in msg and "Index: 1" in msg and "is required but could not be found" in msg
    assert info.value.error_code == errors.INVALID_ARGUMENT


def test_missing_required_feature_uses_example_names():
    with pytest.raises(errors.InvalidArgumentError, match="Name: second"):
        io.parse_example(RECORDS, {"name": io.FixedLenFeature([], sluice.string)},
                         example_names=["first", "second"])


def test_wrong_type_is_an_error():
    with pytest.raises(errors.InvalidArgumentError, match="Data types don't match"):
        io.parse_example(RECORDS, {"label": io.FixedLenFeature([], sluice.float32)})
    with pytest.raises(errors.InvalidArgumentError, match="Expected type: string"):
        io.parse_example(RECORDS, {"label": io.VarLenFeature(sluice.string)})


def test_wrong_length_is_an_error():
    with pytest.raises(errors.InvalidArgumentError, match="Key: w, Index: 0.*Values size: 2 but output shape: \\[3\\]"):
        io.parse_example(RECORDS, {"w": io.FixedLenFeature([3], sluice.float32)})


def test_malformed_record_is_an_error_naming_its_index():
    with pytest.raises(errors.InvalidArgumentError, match="Index: 1.*Could not parse example input"):
        io.parse_example([RECORDS[0], b"\xff\xff garbage"], {"label": io.FixedLenFeature([], "int64")})


def test_bad_default_size_is_an_error():
    with pytest.raises(errors.InvalidArgumentError):
        io.parse_example(RECORDS, {"x": io.FixedLenFeature([2], "int64", default_value=[1, 2, 3])})


def test_bad_configurations_raise_before_parsing():
    with pytest.raises(ValueError, match="Unsupported dtype"):
        io.parse_example(RECORDS, {"label": io.FixedLenFeature([], sluice.int32)})
    with pytest.raises(ValueError, match="fully defined"):
        io.parse_example(RECORDS, {"label": io.FixedLenFeature([None], sluice.int64)})
    with pytest.raises(TypeError):
        io.parse_example(RECORDS, {"label": "int64"})
    with pytest.raises(TypeError):
        io.parse_example(RECORDS, [io.FixedLenFeature([], "int64")])
    with pytest.raises(ValueError, match="vector"):
        io.parse_example(RECORDS[0], {"label": io.FixedLenFeature([], "int64")})
    with pytest.raises(TypeError):
        io.parse_example([1, 2], {"label": io.FixedLenFeature([], "int64")})
    with pytest.raises(ValueError, match="example_names"):
        io.parse_example(RECORDS, {"label": io.FixedLenFeature([], "int64")}, example_names=["one"])


# ---- dtype spellings -------------------------------------------------------------------------

class _FakeTfDType:
    """Duck-types tf.DType: only `.name` is used."""

    def __init__(self, name):
        self.name = name


@pytest.mark.parametrize("dtype", [sluice.float32, np.float32, np.dtype("float32"), "float32", "float",
                                   _FakeTfDType("float32")])
def test_dtype_spellings(dtype):
    out = io.parse_example(RECORDS, {"w": io.FixedLenFeature([2], dtype)})
    assert out["w"].dtype == np.float32


@pytest.mark.parametrize("dtype", ["string", bytes, str, np.bytes_, _FakeTfDType("string")])
def test_string_dtype_spellings(dtype):
    st = io.parse_example(RECORDS, {"tags": io.VarLenFeature(dtype)})["tags"]
    assert list(st.values) == [b"x", b"y", b"z"]


def test_feature_configs_are_namedtuples_with_tf_defaults():
    f = io.FixedLenFeature([2], "int64")
    assert f.default_value is None and f._fields == ("shape", "dtype", "default_value")
    s = io.FixedLenSequenceFeature([], "int64")
    assert s.allow_missing is False and s.default_value is None
    sp = io.SparseFeature("i", "v", "float32", 3)
    assert sp.already_sorted is False
    r = io.RaggedFeature("int64")
    assert r.value_key is None and r.partitions == () and r.row_splits_dtype == sluice.int32 and not r.validate


# ---- SequenceExample ----------------------------------------------------------------------------

SEQ = [
    _seq({"id": _b(b"s0"), "n": _i(3)},
         {"tok": [_i(1), _i(2), _i(3)], "emb": [_f(0.5, 1.0), _f(1.5, 2.0)], "words": [_b(b"a", b"b"), _b()]}),
    _seq({"id": _b(b"s1")}, {"tok": [_i(9)], "emb": [], "words": [_b(b"c")]}),
]


def test_single_sequence_example():
    context, lists = io.parse_single_sequence_example(
        SEQ[0], context_features={"id": io.FixedLenFeature([], "string"), "n": io.VarLenFeature("int64")},
        sequence_features={"tok": io.FixedLenSequenceFeature([], "int64"),
                           "emb": io.FixedLenSequenceFeature([2], "float32"),
                           "words": io.VarLenFeature("string")})
    assert context["id"] == b"s0"
    np.testing.assert_array_equal(context["n"].values, [3])
    np.testing.assert_array_equal(lists["tok"], [1, 2, 3])
    np.testing.assert_array_equal(lists["emb"], [[0.5, 1.0], [1.5, 2.0]])
    np.testing.assert_array_equal(lists["words"].indices, [[0, 0], [0, 1]])
    np.testing.assert_array_equal(lists["words"].dense_shape, [2, 2])


def test_batch_of_sequence_examples_pads_and_reports_lengths():
    context, lists, lengths = io.parse_sequence_example(
        SEQ, context_features={"id": io.FixedLenFeature([], "string")},
        sequence_features={"tok": io.FixedLenSequenceFeature([], "int64"),
                           "emb": io.FixedLenSequenceFeature([2], "float32"),
                           "words": io.RaggedFeature("string")})
    assert list(context["id"]) == [b"s0", b"s1"]
    np.testing.assert_array_equal(lists["tok"], [[1, 2, 3], [9, 0, 0]])
    assert lists["emb"].shape == (2, 2, 2)
    np.testing.assert_array_equal(lengths["tok"], [3, 1])
    np.testing.assert_array_equal(lengths["emb"], [2, 0])
    assert lists["words"].to_list() == [[[b"a", b"b"], []], [[b"c"]]]


def test_missing_feature_list_is_an_error_unless_allowed():
    spec = {"absent": io.FixedLenSequenceFeature([], "int64")}
    with pytest.raises(errors.InvalidArgumentError, match="Feature list 'absent' is required"):
        io.parse_sequence_example(SEQ, sequence_features=spec)
    _, lists, lengths = io.parse_sequence_example(
        SEQ, sequence_features={"absent": io.FixedLenSequenceFeature([], "int64", allow_missing=True)})
    assert lists["absent"].shape == (2, 0)
    np.testing.assert_array_equal(lengths["absent"], [0, 0])


def test_sequence_wrong_type_and_length_are_errors():
    with pytest.raises(errors.InvalidArgumentError, match="Feature list: tok"):
        io.parse_single_sequence_example(SEQ[0], sequence_features={"tok": io.VarLenFeature("string")})
    with pytest.raises(errors.InvalidArgumentError, match="Key: emb"):
        io.parse_single_sequence_example(SEQ[0], sequence_features={"emb": io.FixedLenSequenceFeature([3], "float32")})


def test_malformed_sequence_example_is_an_error():
    with pytest.raises(errors.InvalidArgumentError, match="Could not parse example input"):
        io.parse_sequence_example([SEQ[0], b"\x0a\xff"], sequence_features={"tok": io.VarLenFeature("int64")})


def test_sequence_parsing_needs_some_features():
    with pytest.raises(ValueError):
        io.parse_single_sequence_example(SEQ[0])


# ---- SparseTensor / RaggedTensor ---------------------------------------------------------------

def test_sparse_to_dense_and_repr():
    st = sluice.SparseTensor([[0, 1], [1, 0]], [b"a", b"b"], [2, 2])
    np.testing.assert_array_equal(st.to_dense(), np.array([[b"", b"a"], [b"b", b""]], dtype=object))
    assert st.to_dense(default_value="-")[0, 0] == b"-"
    assert "dense_shape=[2, 2]" in repr(st)
    with pytest.raises(errors.InvalidArgumentError, match="out of bounds"):
        sluice.SparseTensor([[2, 0]], [1], [2, 2]).to_dense()
    with pytest.raises(errors.InvalidArgumentError, match="out of order"):
        sluice.SparseTensor([[1, 0], [0, 0]], [1, 2], [2, 2]).to_dense()
    with pytest.raises(ValueError):
        sluice.SparseTensor([[0]], [1, 2], [3])


def test_ragged_tensor_surface():
    rt = sluice.RaggedTensor.from_nested_row_splits(np.arange(5), [np.array([0, 2, 3]), np.array([0, 1, 1, 5])])
    assert rt.to_list() == [[[0], []], [[1, 2, 3, 4]]]
    assert rt.ragged_rank == 2 and rt.nrows() == 2 and len(rt) == 2
    np.testing.assert_array_equal(rt.flat_values, np.arange(5))
    assert len(rt.nested_row_splits) == 2
    np.testing.assert_array_equal(rt.row_lengths(), [2, 1])
    assert rt[1].to_list() == [[1, 2, 3, 4]]
    np.testing.assert_array_equal(rt.to_tensor(), [[[0, 0, 0, 0], [0, 0, 0, 0]], [[1, 2, 3, 4], [0, 0, 0, 0]]])
    assert repr(rt).startswith("<sluice.RaggedTensor")
    with pytest.raises(errors.InvalidArgumentError):
        sluice.RaggedTensor.from_row_splits(np.arange(3), np.array([0, 4]))


def test_string_split():
    st = io.string_split([b"a b", "c", ""], sep=" ")
    np.testing.assert_array_equal(st.indices, [[0, 0], [0, 1], [1, 0]])
    assert list(st.values) == [b"a", b"b", b"c"]
    np.testing.assert_array_equal(st.dense_shape, [3, 2])
    rt = io.string_split(["a,b,,c"], sep=",", skip_empty=False, result_type="RaggedTensor")
    assert rt.to_list() == [[b"a", b"b", b"", b"c"]]
