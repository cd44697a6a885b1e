"""sluice's tf.train.Example builders (sluice.train.Example & co.) and
sluice.io.serialize_example: construction, checks, serialization round trips
through sluice's own parser and FromString."""

import pickle

import numpy as np
import pytest

import sluice
from sluice import train
from sluice.io import serialize_example
from sluice._example import DecodeError


def _int64(*v):
    return train.Feature(int64_list=train.Int64List(value=list(v)))


def _example(**features):
    return train.Example(features=train.Features(feature=features))


# ---- messages -------------------------------------------------------------------

def test_example_round_trips_through_from_string():
    ex = _example(a=_int64(1, -2, 2**63 - 1),
                  f=train.Feature(float_list=train.FloatList(value=[0.5, -1.25])),
                  b=train.Feature(bytes_list=train.BytesList(value=[b"x", b"", b"\x00\xff"])),
                  e=train.Feature())
    back = train.Example.FromString(ex.SerializeToString())
    assert back == ex
    assert back.features.feature["a"].int64_list.value == [1, -2, 2**63 - 1]
    assert back.features.feature["f"].float_list.value == [0.5, -1.25]
    assert back.features.feature["b"].bytes_list.value == [b"x", b"", b"\x00\xff"]
    assert back.features.feature["e"].WhichOneof("kind") is None


def test_serialization_orders_keys_so_insertion_order_does_not_matter():
    a = _example(z=_int64(1), a=_int64(2))
    b = _example(a=_int64(2), z=_int64(1))
    assert a.SerializeToString() == b.SerializeToString()
    assert a == b


def test_empty_example_and_empty_features_serialize_like_protobuf():
    assert train.Example().SerializeToString() == b""
    assert train.Example(features=train.Features()).SerializeToString() == b"\n\x00"
    assert not train.Example().HasField("features")
    assert train.Example(features=train.Features()).HasField("features")


def test_which_oneof_reports_the_list_kind():
    assert _int64(1).WhichOneof("kind") == "int64_list"
    assert train.Feature(bytes_list=train.BytesList(value=[b"a"])).WhichOneof("kind") == "bytes_list"
    assert train.Feature(float_list=train.FloatList()).WhichOneof("kind") == "float_list"
    assert train.Feature().WhichOneof("kind") is None
    with pytest.raises(ValueError):
        train.Feature().WhichOneof("nope")


def test_reading_an_unset_list_does_not_set_it_but_appending_does():
    f = train.Feature()
    lst = f.int64_list
    assert f.WhichOneof("kind") is None
    lst.value.append(3)
    assert f.WhichOneof("kind") == "int64_list"
    assert f.int64_list.value == [3]


def test_protobuf_style_mutation_builds_the_same_example():
    ex = train.Example()
    ex.features.feature["label"].int64_list.value.append(7)
    ex.features.feature["name"].bytes_list.value.extend([b"cat"])
    expected = _example(label=_int64(7), name=train.Feature(bytes_list=train.BytesList(value=[b"cat"])))
    assert ex.SerializeToString() == expected.SerializeToString()


def test_setting_a_second_kind_replaces_the_first():
    f = _int64(1)
    f.float_list = train.FloatList(value=[2.0])
    assert f.WhichOneof("kind") == "float_list"
    assert f.int64_list.value == []


def test_constructor_rejects_two_kinds():
    with pytest.raises(ValueError, match="only one"):
        train.Feature(int64_list=train.Int64List(value=[1]), float_list=train.FloatList(value=[1.0]))


def test_value_lists_check_types_like_protobuf():
    with pytest.raises(TypeError):
        train.Int64List(value=[1.5])
    with pytest.raises(TypeError, match="boolean"):
        train.Int64List(value=[True])
    with pytest.raises(ValueError, match="range"):
        train.Int64List(value=[2**63])
    with pytest.raises(TypeError):
        train.BytesList(value=["text"])
    with pytest.raises(TypeError):
        train.FloatList(value=["1.0"])
    lst = train.Int64List()
    with pytest.raises(TypeError):
        lst.value.append("x")
    assert lst.value == []


def test_float_values_are_rounded_to_float32():
    assert train.FloatList(value=[0.1]).value[0] == float(np.float32(0.1))
    assert train.FloatList(value=np.array([1, 2], np.int32)).value == [1.0, 2.0]


def test_numpy_arrays_fill_int64_lists():
    assert train.Int64List(value=np.arange(3, dtype=np.uint8)).value == [0, 1, 2]
    with pytest.raises(ValueError):
        train.Int64List(value=np.array([2**64 - 1], np.uint64))


def test_sequence_example_round_trips_and_keeps_row_order():
    seq = train.SequenceExample(
        context=train.Features(feature={"id": train.Feature(bytes_list=train.BytesList(value=[b"s1"]))}),
        feature_lists=train.FeatureLists(feature_list={
            "tok": train.FeatureList(feature=[_int64(3), _int64(1, 2), train.Feature()]),
            "empty": train.FeatureList(),
        }))
    back = train.SequenceExample.FromString(seq.SerializeToString())
    assert back == seq
    rows = back.feature_lists.feature_list["tok"].feature
    assert [r.int64_list.value for r in rows] == [[3], [1, 2], []]
    assert rows[2].WhichOneof("kind") is None
    assert len(back.feature_lists.feature_list["empty"].feature) == 0


def test_sequence_example_presence_of_context_and_feature_lists():
    assert train.SequenceExample().SerializeToString() == b""
    assert train.SequenceExample(context=train.Features()).SerializeToString() == b"\n\x00"
    assert train.SequenceExample(feature_lists=train.FeatureLists()).SerializeToString() == b"\x12\x00"


def test_feature_list_add_appends_a_feature():
    fl = train.FeatureList()
    fl.feature.add(int64_list=train.Int64List(value=[5]))
    fl.feature.add().float_list.value.append(1.5)
    back = train.FeatureList.FromString(fl.SerializeToString())
    assert back.feature[0].int64_list.value == [5]
    assert back.feature[1].float_list.value == [1.5]


def test_parts_serialize_and_parse_on_their_own():
    for msg in (train.Int64List(value=[1, 300, -5]), train.FloatList(value=[1.5]), train.BytesList(value=[b"ab"]),
                _int64(4), train.Features(feature={"k": _int64(1)}),
                train.FeatureLists(feature_list={"l": train.FeatureList(feature=[_int64(1)])})):
        assert type(msg).FromString(msg.SerializeToString()) == msg
        assert msg.ByteSize() == len(msg.SerializeToString())


def test_from_string_rejects_malformed_bytes_with_decode_error():
    good = _example(a=_int64(1)).SerializeToString()
    with pytest.raises(DecodeError):
        train.Example.FromString(good[:-1])
    with pytest.raises(DecodeError):
        train.Example.FromString(b"\x0a\x05\x0a\x03\x12\x01\xff")  # Feature body is malformed
    with pytest.raises(TypeError):
        train.Example.FromString("not bytes")


def test_from_string_merges_repeated_features_and_last_key_wins():
    one = _example(a=_int64(1), b=_int64(2)).SerializeToString()
    two = _example(a=_int64(3)).SerializeToString()
    ex = train.Example.FromString(one + two)  # concatenated messages merge
    assert ex.features.feature["a"].int64_list.value == [3]
    assert ex.features.feature["b"].int64_list.value == [2]


def test_copy_clear_and_pickle():
    ex = _example(a=_int64(1))
    other = train.Example()
    other.CopyFrom(ex)
    assert other == ex
    assert pickle.loads(pickle.dumps(ex)) == ex
    other.Clear()
    assert other.SerializeToString() == b""


def test_repr_is_protobuf_text_format():
    text = repr(_example(a=_int64(1, 2)))
    assert text == ('features {\n  feature {\n    key: "a"\n    value {\n      int64_list {\n'
                    '        value: 1\n        value: 2\n      }\n    }\n  }\n}\n')


def test_map_keys_must_be_str():
    with pytest.raises(TypeError):
        train.Features(feature={1: _int64(1)})


def test_builders_are_exported_from_sluice_train():
    for name in ("Example", "Features", "Feature", "BytesList", "FloatList", "Int64List", "FeatureList",
                 "FeatureLists", "SequenceExample"):
        assert name in train.__all__
        assert getattr(train, name) is getattr(sluice._example, name)


# ---- serialize_example ---------------------------------------------------------------

def _parse(record, features):
    return sluice.io.parse_single_example(record, features)


def test_serialize_example_infers_the_list_kind():
    record = serialize_example({
        "i": 3, "b": True, "ni": np.int16(-4), "f": 0.5, "nf": np.float64(1.5),
        "s": "tëxt", "by": b"\x00", "nb": np.bytes_(b"nb"),
    })
    ex = train.Example.FromString(record)
    kinds = {k: f.WhichOneof("kind") for k, f in ex.features.feature.items()}
    assert kinds == {"i": "int64_list", "b": "int64_list", "ni": "int64_list", "f": "float_list",
                     "nf": "float_list", "s": "bytes_list", "by": "bytes_list", "nb": "bytes_list"}
    assert ex.features.feature["b"].int64_list.value == [1]
    assert ex.features.feature["s"].bytes_list.value == ["tëxt".encode()]


def test_serialize_example_sequences_and_arrays():
    record = serialize_example({
        "ints": [1, 2, 3], "mixed": (1, 2.5), "strs": ["a", b"b"],
        "image": np.arange(6, dtype=np.uint8).reshape(2, 3), "empty": np.zeros(0, np.float32),
        "unicode": np.array(["x", "yz"]),
    })
    out = _parse(record, {"ints": sluice.io.FixedLenFeature([3], "int64"),
                          "mixed": sluice.io.FixedLenFeature([2], "float32"),
                          "strs": sluice.io.FixedLenFeature([2], "string"),
                          "image": sluice.io.FixedLenFeature([6], "int64"),
                          "empty": sluice.io.VarLenFeature("float32"),
                          "unicode": sluice.io.FixedLenFeature([2], "string")})
    np.testing.assert_array_equal(out["ints"], [1, 2, 3])
    np.testing.assert_array_equal(out["mixed"], [1.0, 2.5])
    assert list(out["strs"]) == [b"a", b"b"]
    np.testing.assert_array_equal(out["image"], np.arange(6))
    assert out["empty"].values.shape == (0,)
    assert list(out["unicode"]) == [b"x", b"yz"]


def test_serialize_example_matches_the_builders():
    record = serialize_example({"a": [1, 2], "b": b"x"})
    assert record == _example(a=_int64(1, 2),
                              b=train.Feature(bytes_list=train.BytesList(value=[b"x"]))).SerializeToString()


@pytest.mark.parametrize("value, fragment", [
    ([], "empty list"),
    ([[1, 2]], "nested"),
    ([1, b"x"], "mixes"),
    (None, "NoneType"),
    ({"x": 1}, "dict"),
    (np.array([1 + 2j]), "complex"),
])
def test_serialize_example_rejects_unsupported_values_naming_the_key(value, fragment):
    with pytest.raises(TypeError, match="'bad_key'") as info:
        serialize_example({"bad_key": value})
    assert fragment in str(info.value)


def test_serialize_example_rejects_out_of_range_ints_and_non_str_keys():
    with pytest.raises(ValueError, match="'big'"):
        serialize_example({"big": 2**63})
    with pytest.raises(TypeError, match="str"):
        serialize_example({1: 1})
    with pytest.raises(TypeError):
        serialize_example([("a", 1)])
