"""tf.train.Example / SequenceExample messages without protobuf, and
:func:`serialize_example` (exported by :mod:`sluice.train` and :mod:`sluice.io`).

The message classes (``Example``, ``Features``, ``Feature``, ``BytesList``,
``FloatList``, ``Int64List``, ``SequenceExample``, ``FeatureLists``,
``FeatureList``) take TensorFlow's protobuf field names::

    Example(features=Features(feature={
        "label": Feature(int64_list=Int64List(value=[3])),
        "image": Feature(bytes_list=BytesList(value=[jpeg_bytes])),
    })).SerializeToString()

and support ``SerializeToString()``, ``FromString(data)``,
``ParseFromString(data)``, ``CopyFrom``, ``Clear``, ``ByteSize``, ``==`` and a
text-format ``repr``; ``Feature`` has ``WhichOneof("kind")``. Serialization
runs in sluice's C++ ExampleBuilder.

Wire format: the bytes are those of TensorFlow's example.proto. Map entries
(``Features.feature``, ``FeatureLists.feature_list``) are written in
ascending bytewise key order, which is what protobuf writes with
``SerializeToString(deterministic=True)``; so sluice's bytes equal
TensorFlow's deterministic serialization of the same content, and any
TensorFlow/protobuf reader parses them. (Protobuf's default, non-deterministic
serialization may order map entries differently; the content is the same.)

Differences from protobuf messages: values are checked and converted when
they are given (ints for Int64List; numbers, rounded to float32, for
FloatList; bytes for BytesList), as protobuf does, but message fields may
also be assigned (``feature.int64_list = Int64List(...)``, a copy is kept),
and ``map[key] = message`` is allowed. As in protobuf, reading an unset
oneof member of a Feature (``f.int64_list``) returns an empty detached list
that is attached to the Feature when its values are first changed.
``FromString`` raises :class:`DecodeError` for bytes that are not the
message. Thread-safety: plain Python objects; do not mutate one from several
threads at once.
"""

import operator

import numpy as np

from sluice import _core
from sluice import errors

__all__ = ["BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList", "FeatureLists",
           "Example", "SequenceExample", "DecodeError", "serialize_example"]

# FeatureKind numbers (example_view.h): the oneof's field numbers.
_NONE, _BYTES, _FLOAT, _INT64 = 0, 1, 2, 3
_KIND_NAMES = {_BYTES: "bytes_list", _FLOAT: "float_list", _INT64: "int64_list"}
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


class DecodeError(ValueError):
    """Raised by FromString / ParseFromString for bytes that are not the message
    (protobuf's ``google.protobuf.message.DecodeError``)."""


# ---- wire helpers -------------------------------------------------------------

def _read_varint(buf, pos):
    result = 0
    shift = 0
    n = len(buf)
    while True:
        if pos >= n:
            raise DecodeError("Truncated message.")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise DecodeError("Too many bytes when decoding varint.")


def _length_delimited_fields(buf):
    """(field number, memoryview) of every length-delimited field of a message;
    other fields (and unknown ones) are skipped."""
    pos = 0
    n = len(buf)
    while pos < n:
        tag, pos = _read_varint(buf, pos)
        field, wire_type = tag >> 3, tag & 7
        if field == 0:
            raise DecodeError("Field number 0 is illegal.")
        if wire_type == 0:
            _, pos = _read_varint(buf, pos)
        elif wire_type == 1:
            pos += 8
        elif wire_type == 5:
            pos += 4
        elif wire_type == 2:
            size, pos = _read_varint(buf, pos)
            if pos + size > n:
                raise DecodeError("Truncated message.")
            yield field, buf[pos:pos + size]
            pos += size
            continue
        else:
            raise DecodeError("Unsupported wire type %d (groups are not part of example.proto)." % wire_type)
        if pos > n:
            raise DecodeError("Truncated message.")


def _strip_header(data):
    """The payload of a serialized length-delimited field (one-byte tag)."""
    _, pos = _read_varint(data, 1)
    return data[pos:]


def _as_view(data):
    if isinstance(data, memoryview):
        return data
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError("expected bytes, got %s" % type(data).__name__)
    return memoryview(data)


def _decode_key(view):
    try:
        return bytes(view).decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError("Map key is not valid UTF-8.") from None


def _escape(b):
    out = []
    for c in b:
        ch = chr(c)
        if ch in "\"'\\":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif 32 <= c < 127:
            out.append(ch)
        else:
            out.append("\\%03o" % c)
    return "".join(out)


# ---- repeated fields --------------------------------------------------------------

class _Repeated(list):
    """The `value` list of a *List message: converts what is added, and tells
    its owner when it changes (to attach a detached oneof member)."""

    __slots__ = ("_owner",)

    def __init__(self, owner, values=()):
        list.__init__(self, values)
        self._owner = owner

    def _changed(self):
        self._owner._touch()

    def append(self, v):
        list.append(self, self._owner._convert(v))
        self._changed()

    def extend(self, vs):
        list.extend(self, self._owner._convert_all(vs))
        self._changed()

    def insert(self, i, v):
        list.insert(self, i, self._owner._convert(v))
        self._changed()

    def __setitem__(self, i, v):
        if isinstance(i, slice):
            list.__setitem__(self, i, self._owner._convert_all(v))
        else:
            list.__setitem__(self, i, self._owner._convert(v))
        self._changed()

    def __iadd__(self, vs):
        self.extend(vs)
        return self

    def __delitem__(self, i):
        list.__delitem__(self, i)
        self._changed()

    def pop(self, *args):
        v = list.pop(self, *args)
        self._changed()
        return v

    def remove(self, v):
        list.remove(self, v)
        self._changed()

    def clear(self):
        list.clear(self)
        self._changed()

    def sort(self, *args, **kwargs):
        list.sort(self, *args, **kwargs)
        self._changed()

    def reverse(self):
        list.reverse(self)
        self._changed()

    def __reduce__(self):
        return list, (list(self),)


class _Message:
    """Methods every message class shares (protobuf's Message surface)."""

    __slots__ = ()

    @classmethod
    def FromString(cls, data):
        """Parses serialized bytes into a new message. Raises DecodeError."""
        msg = cls()
        msg.ParseFromString(data)
        return msg

    def CopyFrom(self, other):
        """Replaces the content with a copy of `other` (same type)."""
        if type(other) is not type(self):
            raise TypeError("CopyFrom: expected a %s, got %s" % (type(self).__name__, type(other).__name__))
        self.ParseFromString(other.SerializeToString())

    def ByteSize(self):
        """The size of the serialized message."""
        return len(self.SerializeToString())

    def __eq__(self, other):
        return type(self) is type(other) and self.SerializeToString() == other.SerializeToString()

    def __ne__(self, other):
        return not self == other

    __hash__ = None  # mutable, as protobuf messages

    def _text(self, indent):
        raise NotImplementedError

    def __str__(self):
        """Protobuf's text format."""
        return self._text(0)

    def __repr__(self):
        return str(self)

    def __reduce__(self):
        return type(self).FromString, (self.SerializeToString(),)


# ---- value lists ----------------------------------------------------------------------

class _ValueList(_Message):
    """Base of BytesList / FloatList / Int64List: a `value` repeated field."""

    __slots__ = ("_value", "_attach")
    _KIND = _NONE

    def __init__(self, value=None):
        self._attach = None
        self._value = _Repeated(self, self._convert_all(value) if value is not None else ())

    @property
    def value(self):
        """The values (a list; append/extend convert and check what is added)."""
        return self._value

    @value.setter
    def value(self, values):
        self._value = _Repeated(self, self._convert_all(values))
        self._touch()

    def _touch(self):
        if self._attach is not None:
            attach, self._attach = self._attach, None
            attach(self)

    def _convert_all(self, values):
        if isinstance(values, (str, bytes)) and self._KIND != _BYTES:
            raise TypeError("%s.value: expected a sequence of numbers, got %s"
                            % (type(self).__name__, type(values).__name__))
        if isinstance(values, (str, bytes)):
            raise TypeError("BytesList.value: expected a sequence of bytes, got a single %s"
                            % type(values).__name__)
        return [self._convert(v) for v in values]

    def _array(self):
        raise NotImplementedError

    def SerializeToString(self, deterministic=None):
        """The serialized list message."""
        del deterministic
        return _strip_header(_core.serialize_feature(self._KIND, self._array()))

    def ParseFromString(self, data):
        """Replaces the values with those of `data`; returns len(data)."""
        view = _as_view(data)
        header = bytes([(self._KIND << 3) | 2]) + _varint(len(view))
        kind, values = _decode_feature(header + bytes(view))
        self._value = _Repeated(self, _list_of(kind, values))
        self._touch()
        return len(view)

    def CopyFrom(self, other):
        if type(other) is not type(self):
            raise TypeError("CopyFrom: expected a %s, got %s" % (type(self).__name__, type(other).__name__))
        self._value = _Repeated(self, other._value)  # already checked
        self._touch()

    def Clear(self):
        self.value = []

    def _text(self, indent):
        pad = " " * indent
        return "".join("%svalue: %s\n" % (pad, self._format(v)) for v in self._value)


class BytesList(_ValueList):
    """tf.train.BytesList: ``value`` is a list of bytes (str is rejected, as in protobuf)."""

    __slots__ = ()
    _KIND = _BYTES

    @staticmethod
    def _convert(v):
        if isinstance(v, bytes):
            return bytes(v) if type(v) is not bytes else v
        raise TypeError("BytesList.value: expected bytes, %s found" % type(v).__name__)

    def _array(self):
        return self._value

    @staticmethod
    def _format(v):
        return '"%s"' % _escape(v)


class FloatList(_ValueList):
    """tf.train.FloatList: ``value`` is a list of floats, stored rounded to float32."""

    __slots__ = ()
    _KIND = _FLOAT

    @staticmethod
    def _convert(v):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError("FloatList.value: expected a number, got %s" % type(v).__name__)
        with np.errstate(over="ignore"):
            return float(np.float32(v))

    def _convert_all(self, values):
        if isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
            with np.errstate(over="ignore"):
                return values.astype(np.float32).reshape(-1).astype(np.float64).tolist()
        if isinstance(values, (list, tuple)) and all(type(v) is float or type(v) is int for v in values):
            with np.errstate(over="ignore"):  # fast path: one numpy conversion
                return np.asarray(values, dtype=np.float32).astype(np.float64).tolist() if values else []
        return _ValueList._convert_all(self, values)

    def _array(self):
        return self._value  # checked floats: the C++ side reads the list

    @staticmethod
    def _format(v):
        return str(np.float32(v))


class Int64List(_ValueList):
    """tf.train.Int64List: ``value`` is a list of ints in the int64 range
    (bools and floats are rejected, as in protobuf)."""

    __slots__ = ()
    _KIND = _INT64

    @staticmethod
    def _convert(v):
        if isinstance(v, (bool, np.bool_)):
            raise TypeError("Int64List.value: expected an int, got a boolean")
        v = operator.index(v)  # TypeError for floats and strings
        if not _INT64_MIN <= v <= _INT64_MAX:
            raise ValueError("Int64List.value: value out of range: %d" % v)
        return v

    def _convert_all(self, values):
        if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
            if values.dtype == np.uint64 and values.size and values.max() > _INT64_MAX:
                raise ValueError("Int64List.value: value out of range: %d" % values.max())
            return values.reshape(-1).tolist()
        if isinstance(values, (list, tuple)) and all(type(v) is int for v in values):
            if values and not (_INT64_MIN <= min(values) and max(values) <= _INT64_MAX):
                raise ValueError("Int64List.value: value out of range")
            return list(values)  # fast path: plain ints in range
        return _ValueList._convert_all(self, values)

    def _array(self):
        return self._value  # checked ints: the C++ side reads the list

    @staticmethod
    def _format(v):
        return str(v)


_LIST_CLASSES = {_BYTES: BytesList, _FLOAT: FloatList, _INT64: Int64List}


def _varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _decode_feature(data):
    try:
        return _core.decode_feature(bytes(data))
    except errors.InvalidArgumentError as e:
        raise DecodeError("Error parsing message: %s" % e.message) from None


def _list_of(kind, values):
    if values is None:
        return []
    return values if kind == _BYTES else values.tolist()


def _message(cls, value, what):
    """`value` (a cls instance or a dict of its fields) as a new cls instance."""
    if isinstance(value, cls):
        copy = cls()
        copy.CopyFrom(value)
        return copy
    if isinstance(value, dict):
        return cls(**value)
    raise TypeError("%s must be a %s, got %s" % (what, cls.__name__, type(value).__name__))


# ---- Feature --------------------------------------------------------------------------

class Feature(_Message):
    """tf.train.Feature: a oneof ``kind`` of ``bytes_list``, ``float_list`` or
    ``int64_list`` (or none).

    Args:
      bytes_list, float_list, int64_list: at most one, a list message (or a
        dict of its fields); it is copied.
    """

    __slots__ = ("_kind", "_list")

    def __init__(self, bytes_list=None, float_list=None, int64_list=None):
        self._kind = _NONE
        self._list = None
        given = [(k, v) for k, v in ((_BYTES, bytes_list), (_FLOAT, float_list), (_INT64, int64_list))
                 if v is not None]
        if len(given) > 1:
            raise ValueError("Feature: only one of bytes_list, float_list, int64_list may be set")
        if given:
            kind, value = given[0]
            self._set(kind, _message(_LIST_CLASSES[kind], value, _KIND_NAMES[kind]))

    def _set(self, kind, lst):
        self._kind, self._list = kind, lst

    def _get(self, kind):
        if self._kind == kind:
            return self._list
        detached = _LIST_CLASSES[kind]()
        detached._attach = lambda lst, kind=kind: self._set(kind, lst)
        return detached

    def _assign(self, kind, value):
        if value is None:
            if self._kind == kind:
                self._set(_NONE, None)
            return
        self._set(kind, _message(_LIST_CLASSES[kind], value, _KIND_NAMES[kind]))

    bytes_list = property(lambda self: self._get(_BYTES), lambda self, v: self._assign(_BYTES, v),
                          doc="The BytesList (empty and detached unless set).")
    float_list = property(lambda self: self._get(_FLOAT), lambda self, v: self._assign(_FLOAT, v),
                          doc="The FloatList (empty and detached unless set).")
    int64_list = property(lambda self: self._get(_INT64), lambda self, v: self._assign(_INT64, v),
                          doc="The Int64List (empty and detached unless set).")

    def WhichOneof(self, oneof_group):
        """'bytes_list', 'float_list', 'int64_list' or None. ValueError for a group other than 'kind'."""
        if oneof_group != "kind":
            raise ValueError('Protocol message has no oneof "%s" field.' % oneof_group)
        return _KIND_NAMES.get(self._kind)

    def HasField(self, field_name):
        if field_name not in _KIND_NAMES.values() and field_name != "kind":
            raise ValueError('Protocol message has no singular "%s" field.' % field_name)
        return self._kind != _NONE and (field_name == "kind" or _KIND_NAMES[self._kind] == field_name)

    def ClearField(self, field_name):
        if self.HasField(field_name):
            self._set(_NONE, None)

    def _item(self):
        """(kind, values) for the C++ serializer."""
        return (self._kind, None if self._kind == _NONE else self._list._array())

    def SerializeToString(self, deterministic=None):
        del deterministic
        return _core.serialize_feature(*self._item())

    def ParseFromString(self, data):
        view = _as_view(data)
        self._load(view)
        return len(view)

    def _load(self, view):
        kind, values = _decode_feature(view)
        if kind == _NONE:
            self._set(_NONE, None)
        else:
            lst = _LIST_CLASSES[kind]()
            lst._value = _Repeated(lst, _list_of(kind, values))
            self._set(kind, lst)

    def CopyFrom(self, other):
        if other._kind == _NONE:
            self._set(_NONE, None)
        else:
            lst = _LIST_CLASSES[other._kind]()
            lst._value = _Repeated(lst, list(other._list._value))
            self._set(other._kind, lst)

    def Clear(self):
        self._set(_NONE, None)

    def _text(self, indent):
        if self._kind == _NONE:
            return ""
        pad = " " * indent
        return "%s%s {\n%s%s}\n" % (pad, _KIND_NAMES[self._kind], self._list._text(indent + 2), pad)


# ---- maps and lists of messages ----------------------------------------------------------

class _MessageMap(dict):
    """A protobuf map<string, Message>: reading a missing key inserts an empty message."""

    __slots__ = ("_cls",)

    def __init__(self, cls, items=None):
        dict.__init__(self)
        self._cls = cls
        if items:
            for k, v in dict(items).items():
                self[k] = v

    def __missing__(self, key):
        self._check_key(key)
        value = self._cls()
        dict.__setitem__(self, key, value)
        return value

    @staticmethod
    def _check_key(key):
        if not isinstance(key, str):
            raise TypeError("map keys must be str, got %s" % type(key).__name__)

    def __setitem__(self, key, value):
        self._check_key(key)
        if not isinstance(value, self._cls):
            value = _message(self._cls, value, "map value")
        dict.__setitem__(self, key, value)

    def get_or_create(self, key):
        return self[key]

    def update(self, *args, **kwargs):
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def __reduce__(self):
        return dict, (dict(self),)


class _FeatureRepeated(list):
    """FeatureList.feature: a list of Feature with protobuf's add()."""

    __slots__ = ()

    def add(self, **kwargs):
        """Appends a new Feature (made from kwargs) and returns it."""
        f = Feature(**kwargs)
        list.append(self, f)
        return f

    def __reduce__(self):
        return list, (list(self),)


def _map_entries(view):
    """(key, value) of each entry of a map<string, message> field (number 1)
    in `view`, in wire order; value is None for an entry without one."""
    for field, entry in _length_delimited_fields(view):
        if field != 1:
            continue
        key, value = "", None
        for f, v in _length_delimited_fields(entry):
            if f == 1:
                key = _decode_key(v)
            elif f == 2:
                value = v
        yield key, value


def _map_text(mapping, name, indent):
    """Text format of a map<string, message> field, keys in byte order."""
    pad = " " * indent
    out = []
    for key in sorted(mapping, key=lambda k: k.encode("utf-8")):
        out.append('%s%s {\n%s  key: "%s"\n%s  value {\n%s%s  }\n%s}\n' % (
            pad, name, pad, _escape(key.encode("utf-8")), pad, mapping[key]._text(indent + 4), pad, pad))
    return "".join(out)


def _features_items(feature_map, what):
    items = []
    for key, feature in feature_map.items():
        if not isinstance(feature, Feature):
            raise TypeError("%s[%r] must be a Feature, got %s" % (what, key, type(feature).__name__))
        kind, values = feature._item()
        items.append((key, kind, values))
    return items


class Features(_Message):
    """tf.train.Features: ``feature`` maps str keys to Feature."""

    __slots__ = ("_feature",)

    def __init__(self, feature=None):
        self._feature = _MessageMap(Feature, feature)

    @property
    def feature(self):
        """dict of key -> Feature; reading a missing key adds an empty Feature."""
        return self._feature

    @feature.setter
    def feature(self, value):
        self._feature = _MessageMap(Feature, value)

    def _items(self):
        return _features_items(self._feature, "feature")

    def SerializeToString(self, deterministic=None):
        """The serialized Features message (keys in ascending order)."""
        del deterministic
        return _core.serialize_features(self._items())

    def ParseFromString(self, data):
        self._feature = _MessageMap(Feature)
        view = _as_view(data)
        self._merge(view)
        return len(view)

    def _merge(self, view):
        for key, value in _map_entries(view):
            feature = Feature()
            if value is not None:
                feature._load(value)
            dict.__setitem__(self._feature, key, feature)

    def Clear(self):
        self._feature = _MessageMap(Feature)

    def _text(self, indent):
        return _map_text(self._feature, "feature", indent)


class FeatureList(_Message):
    """tf.train.FeatureList: ``feature`` is a list of Feature (one per step)."""

    __slots__ = ("_feature",)

    def __init__(self, feature=None):
        self._feature = _FeatureRepeated()
        for f in feature or ():
            self._feature.append(_message(Feature, f, "FeatureList.feature"))

    @property
    def feature(self):
        """The list of Feature; ``feature.add(int64_list=...)`` appends one."""
        return self._feature

    @feature.setter
    def feature(self, value):
        self.__init__(value)

    def _rows(self):
        rows = []
        for i, f in enumerate(self._feature):
            if not isinstance(f, Feature):
                raise TypeError("FeatureList.feature[%d] must be a Feature, got %s" % (i, type(f).__name__))
            rows.append(f._item())
        return rows

    def SerializeToString(self, deterministic=None):
        del deterministic
        return _core.serialize_feature_list(self._rows())

    def ParseFromString(self, data):
        self._feature = _FeatureRepeated()
        view = _as_view(data)
        self._merge(view)
        return len(view)

    def _merge(self, view):
        for field, value in _length_delimited_fields(view):
            if field == 1:
                f = Feature()
                f._load(value)
                list.append(self._feature, f)

    def Clear(self):
        self._feature = _FeatureRepeated()

    def _text(self, indent):
        pad = " " * indent
        return "".join("%sfeature {\n%s%s}\n" % (pad, f._text(indent + 2), pad) for f in self._feature)


class FeatureLists(_Message):
    """tf.train.FeatureLists: ``feature_list`` maps str keys to FeatureList."""

    __slots__ = ("_feature_list",)

    def __init__(self, feature_list=None):
        self._feature_list = _MessageMap(FeatureList, feature_list)

    @property
    def feature_list(self):
        """dict of key -> FeatureList; reading a missing key adds an empty one."""
        return self._feature_list

    @feature_list.setter
    def feature_list(self, value):
        self._feature_list = _MessageMap(FeatureList, value)

    def _entries(self):
        entries = []
        for key, fl in self._feature_list.items():
            if not isinstance(fl, FeatureList):
                raise TypeError("feature_list[%r] must be a FeatureList, got %s" % (key, type(fl).__name__))
            entries.append((key, fl._rows()))
        return entries

    def SerializeToString(self, deterministic=None):
        """The serialized FeatureLists message (keys in ascending order)."""
        del deterministic
        return _core.serialize_feature_lists(self._entries())

    def ParseFromString(self, data):
        self._feature_list = _MessageMap(FeatureList)
        view = _as_view(data)
        self._merge(view)
        return len(view)

    def _merge(self, view):
        for key, value in _map_entries(view):
            fl = FeatureList()
            if value is not None:
                fl._merge(value)
            dict.__setitem__(self._feature_list, key, fl)

    def Clear(self):
        self._feature_list = _MessageMap(FeatureList)

    def _text(self, indent):
        return _map_text(self._feature_list, "feature_list", indent)


# ---- top-level messages --------------------------------------------------------------------

class _Submessage:
    """A singular message field with protobuf's presence: set when assigned,
    given to the constructor, or non-empty."""

    def __init__(self, cls, attr):
        self._cls = cls
        self._attr = attr

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return getattr(obj, self._attr)[0]

    def __set__(self, obj, value):
        setattr(obj, self._attr, [_message(self._cls, value, self._cls.__name__), True])


def _present(slot):
    msg, explicit = slot
    return explicit or bool(msg._feature if isinstance(msg, Features) else msg._feature_list)


class Example(_Message):
    """tf.train.Example: ``features`` (a Features message).

    ``Example()`` serializes to b"" and ``Example(features=Features())`` to
    b"\\n\\x00", as in protobuf: the features field is written once it is
    given, assigned or has an entry.
    """

    __slots__ = ("_features",)
    features = _Submessage(Features, "_features")

    def __init__(self, features=None):
        self._features = [Features(), False]
        if features is not None:
            self.features = features

    def HasField(self, field_name):
        if field_name != "features":
            raise ValueError('Protocol message has no singular "%s" field.' % field_name)
        return _present(self._features)

    def SerializeToString(self, deterministic=None):
        """The serialized Example (feature keys in ascending order)."""
        del deterministic
        return _core.serialize_example(self._features[0]._items(), _present(self._features))

    def ParseFromString(self, data):
        """Replaces the content with the Example in `data`; returns len(data)."""
        view = _as_view(data)
        self._features = [Features(), False]
        for field, value in _length_delimited_fields(view):
            if field == 1:
                self._features[0]._merge(value)
                self._features[1] = True
        return len(view)

    def Clear(self):
        self._features = [Features(), False]

    def _text(self, indent):
        if not _present(self._features):
            return ""
        return "features {\n%s}\n" % self._features[0]._text(2)


class SequenceExample(_Message):
    """tf.train.SequenceExample: ``context`` (Features) and ``feature_lists``
    (FeatureLists), each written once given, assigned or non-empty."""

    __slots__ = ("_context", "_feature_lists")
    context = _Submessage(Features, "_context")
    feature_lists = _Submessage(FeatureLists, "_feature_lists")

    def __init__(self, context=None, feature_lists=None):
        self._context = [Features(), False]
        self._feature_lists = [FeatureLists(), False]
        if context is not None:
            self.context = context
        if feature_lists is not None:
            self.feature_lists = feature_lists

    def HasField(self, field_name):
        if field_name == "context":
            return _present(self._context)
        if field_name == "feature_lists":
            return _present(self._feature_lists)
        raise ValueError('Protocol message has no singular "%s" field.' % field_name)

    def SerializeToString(self, deterministic=None):
        """The serialized SequenceExample (map keys in ascending order)."""
        del deterministic
        context = self._context[0]._items() if _present(self._context) else None
        lists = self._feature_lists[0]._entries() if _present(self._feature_lists) else None
        return _core.serialize_sequence_example(context, lists)

    def ParseFromString(self, data):
        view = _as_view(data)
        self.Clear()
        for field, value in _length_delimited_fields(view):
            if field == 1:
                self._context[0]._merge(value)
                self._context[1] = True
            elif field == 2:
                self._feature_lists[0]._merge(value)
                self._feature_lists[1] = True
        return len(view)

    def Clear(self):
        self._context = [Features(), False]
        self._feature_lists = [FeatureLists(), False]

    def _text(self, indent):
        out = ""
        if _present(self._context):
            out += "context {\n%s}\n" % self._context[0]._text(2)
        if _present(self._feature_lists):
            out += "feature_lists {\n%s}\n" % self._feature_lists[0]._text(2)
        return out


# ---- serialize_example -----------------------------------------------------------------------

_INT_TYPES = (int, np.integer, np.bool_)  # bool is an int
_FLOAT_TYPES = (float, np.floating)
_BYTES_TYPES = (bytes, str, np.bytes_, np.str_)


def _int64_array(arr, key):
    if arr.dtype == np.uint64 and arr.size and arr.max() > _INT64_MAX:
        raise ValueError("serialize_example: feature %r: value %d is out of the int64 range" % (key, arr.max()))
    return np.ascontiguousarray(arr, dtype=np.int64).reshape(-1)


def _array_item(arr, key):
    """(kind, values) of a numpy array (flattened)."""
    k = arr.dtype.kind
    if k in "biu":
        return _INT64, _int64_array(arr, key)
    if k == "f":
        return _FLOAT, np.ascontiguousarray(arr, dtype=np.float32).reshape(-1)
    if k in "SU":
        return _BYTES, [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in arr.reshape(-1).tolist()]
    if k == "O":
        return _sequence_item(arr.reshape(-1).tolist(), key)
    raise TypeError("serialize_example: feature %r: unsupported array dtype %s (use integers, floats or bytes)"
                    % (key, arr.dtype))


def _sequence_item(values, key):
    """(kind, values) of a list of Python/numpy scalars of one kind."""
    if not values:
        raise TypeError("serialize_example: feature %r: cannot tell the type of an empty list; pass a typed "
                        "numpy array (e.g. np.zeros(0, np.int64)) or a Feature" % (key,))
    if all(isinstance(v, _BYTES_TYPES) for v in values):
        return _BYTES, [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in values]
    if all(isinstance(v, _INT_TYPES) for v in values):
        ints = [int(v) for v in values]
        if not (_INT64_MIN <= min(ints) and max(ints) <= _INT64_MAX):
            raise ValueError("serialize_example: feature %r: value out of the int64 range" % (key,))
        return _INT64, ints  # a list of ints: read by the C++ side as is
    if all(isinstance(v, _INT_TYPES + _FLOAT_TYPES) for v in values):
        return _FLOAT, [float(v) for v in values]
    bad = next((v for v in values if not isinstance(v, _INT_TYPES + _FLOAT_TYPES + _BYTES_TYPES)), None)
    if bad is not None:
        raise TypeError("serialize_example: feature %r: unsupported value %r of type %s (features hold ints, "
                        "floats or bytes; nested lists are not allowed)" % (key, bad, type(bad).__name__))
    raise TypeError("serialize_example: feature %r mixes bytes/str with numbers" % (key,))


def _feature_item(key, value):
    if isinstance(value, Feature):
        return value._item()
    if isinstance(value, np.ndarray):
        return _array_item(value, key)
    if isinstance(value, _BYTES_TYPES):
        return _BYTES, [value.encode("utf-8") if isinstance(value, str) else bytes(value)]
    if isinstance(value, _INT_TYPES):
        v = int(value)
        if not _INT64_MIN <= v <= _INT64_MAX:
            raise ValueError("serialize_example: feature %r: value %d is out of the int64 range" % (key, v))
        return _INT64, [v]
    if isinstance(value, _FLOAT_TYPES):
        return _FLOAT, [float(value)]
    if isinstance(value, (list, tuple)):
        return _sequence_item(value, key)
    raise TypeError("serialize_example: feature %r: unsupported value of type %s (expected an int, float, "
                    "bytes/str, a 1-D list of them, a numpy array or a Feature)" % (key, type(value).__name__))


def serialize_example(features):
    """Serializes a dict of features as a tf.train.Example.

    Args:
      features: dict of str key -> value. Values: ints, bools and integer
        numpy values -> Int64List; floats and float numpy values ->
        FloatList (float32); bytes, str (UTF-8) and numpy bytes/str ->
        BytesList. A value is a scalar, a list/tuple of scalars of one kind
        (ints mixed with floats make a FloatList), a numpy array (any shape,
        flattened in C order), or a sluice Feature.

    Returns:
      The serialized Example (bytes), keys in ascending order.

    Raises:
      TypeError: a key that is not a str, an unsupported value (naming its
        key), an empty list (its type is unknown), or a nested list.
      ValueError: an integer outside the int64 range.
    """
    if not isinstance(features, dict):
        raise TypeError("serialize_example: features must be a dict, got %s" % type(features).__name__)
    items = []
    for key, value in features.items():
        if not isinstance(key, str):
            raise TypeError("serialize_example: feature keys must be str, got %r" % (key,))
        kind, values = _feature_item(key, value)
        items.append((key, kind, values))
    return _core.serialize_example(items, True)
