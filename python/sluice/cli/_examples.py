"""Records as readable JSON, and the schema of a set of Examples.

A record is decoded as a tf.train.SequenceExample when it has a
``feature_lists`` field (2), as a tf.train.Example when its only field is
``features`` (1), and otherwise shown as raw bytes. The wire format is read
by sluice's own Example decoder (sluice._example, C++ underneath); no
protobuf is needed.
"""

import math

import numpy as np

from sluice import _example

KIND_NAMES = {1: "bytes_list", 2: "float_list", 3: "int64_list"}
_DTYPES = {"bytes_list": "string", "float_list": "float32", "int64_list": "int64"}
SHORT_BYTES = 64  # bytes values longer than this are shortened unless --full


class NotAnExample(ValueError):
    pass


def _top_level_fields(view):
    """Field numbers at the top level of a message; DecodeError on bad wire data."""
    fields = set()
    pos, n = 0, len(view)
    while pos < n:
        tag, pos = _example._read_varint(view, pos)
        field, wire = tag >> 3, tag & 7
        if field == 0 or wire not in (0, 1, 2, 5):
            raise _example.DecodeError("bad tag")
        if wire == 0:
            _, pos = _example._read_varint(view, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            size, pos = _example._read_varint(view, pos)
            pos += size
        if pos > n:
            raise _example.DecodeError("truncated")
        fields.add((field, wire))
    return fields


def _features(view):
    """{name: (kind name or None, values)} of a Features message."""
    out = {}
    for key, value in _example._map_entries(view):
        if value is None:
            out[key] = (None, [])
            continue
        kind, values = _example._decode_feature(value)
        out[key] = (KIND_NAMES.get(kind), [] if values is None else values)
    return out


def _feature_lists(view):
    out = {}
    for key, value in _example._map_entries(view):
        rows = []
        if value is not None:
            for field, f in _example._length_delimited_fields(value):
                if field == 1:
                    kind, values = _example._decode_feature(f)
                    rows.append((KIND_NAMES.get(kind), [] if values is None else values))
        out[key] = rows
    return out


def decode(record):
    """("example", features) or ("sequence_example", context, feature_lists).

    Raises NotAnExample when the record is neither.
    """
    view = memoryview(record)
    try:
        fields = _top_level_fields(view)
        numbers = {f for f, _ in fields}
        if any(w != 2 for _, w in fields) or not numbers <= {1, 2}:
            raise NotAnExample("not an Example")
        context, lists = {}, {}
        for field, value in _example._length_delimited_fields(view):
            if field == 1:
                context.update(_features(value))
            elif field == 2:
                lists.update(_feature_lists(value))
    except (_example.DecodeError, ValueError) as e:
        raise NotAnExample(str(e)) from None
    if 2 in numbers:
        return ("sequence_example", context, lists)
    return ("example", context)


# ---- JSON ----------------------------------------------------------------------------

def bytes_text(b, full=False):
    """A readable str of bytes: the text itself when it is printable UTF-8,
    else C-style escapes; shortened past SHORT_BYTES unless `full`."""
    b = bytes(b)
    shown = b if full or len(b) <= SHORT_BYTES else b[:SHORT_BYTES // 2]
    try:
        text = shown.decode("utf-8")
        if not text.isprintable():
            raise UnicodeDecodeError("utf-8", shown, 0, 1, "unprintable")
    except UnicodeDecodeError:
        text = _example._escape(shown)
    if len(shown) < len(b):
        text += "... (%d bytes)" % len(b)
    return text


def _float_json(v):
    f = np.float32(v)
    if math.isnan(f) or math.isinf(f):
        return str(f)  # JSON has no NaN/inf: "nan", "inf", "-inf"
    return float(str(f))  # float32's shortest repr, not float64's digits


def _values_json(kind, values, full):
    if kind == "bytes_list":
        return [bytes_text(v, full) for v in values]
    if kind == "float_list":
        return [_float_json(v) for v in np.asarray(values, np.float32).tolist()]
    if kind == "int64_list":
        return [int(v) for v in np.asarray(values).tolist()]
    return []


def _feature_json(kind, values, full):
    if kind is None:
        return {}
    return {kind: _values_json(kind, values, full)}


def to_json(decoded, full=False):
    """A JSON-ready dict of decode()'s result, feature names in sorted order."""
    if decoded[0] == "example":
        feats = decoded[1]
        return {"features": {k: _feature_json(*feats[k], full) for k in sorted(feats)}}
    _, context, lists = decoded
    return {"context": {k: _feature_json(*context[k], full) for k in sorted(context)},
            "feature_lists": {k: [_feature_json(kind, v, full) for kind, v in lists[k]] for k in sorted(lists)}}


# ---- schema --------------------------------------------------------------------------

class _FeatureStats:
    __slots__ = ("kinds", "present", "min_count", "max_count", "min_len", "max_len")

    def __init__(self):
        self.kinds = set()
        self.present = 0
        self.min_count = None
        self.max_count = None
        self.min_len = None  # sequence features: steps per record
        self.max_len = None

    def add_count(self, n):
        self.min_count = n if self.min_count is None else min(self.min_count, n)
        self.max_count = n if self.max_count is None else max(self.max_count, n)

    def add_len(self, n):
        self.min_len = n if self.min_len is None else min(self.min_len, n)
        self.max_len = n if self.max_len is None else max(self.max_len, n)


class Schema:
    """What a pass over records finds: features, kinds and value counts."""

    def __init__(self):
        self.records = 0
        self.examples = 0
        self.sequence_examples = 0
        self.other = 0
        self.context = {}
        self.sequence = {}

    def add(self, record):
        self.records += 1
        try:
            decoded = decode(record)
        except NotAnExample:
            self.other += 1
            return
        if decoded[0] == "example":
            self.examples += 1
        else:
            self.sequence_examples += 1
        for name, (kind, values) in decoded[1].items():
            s = self.context.setdefault(name, _FeatureStats())
            s.present += 1
            if kind is not None:
                s.kinds.add(kind)
            s.add_count(len(values))
        if decoded[0] == "sequence_example":
            for name, rows in decoded[2].items():
                s = self.sequence.setdefault(name, _FeatureStats())
                s.present += 1
                s.add_len(len(rows))
                for kind, values in rows:
                    if kind is not None:
                        s.kinds.add(kind)
                    s.add_count(len(values))

    @property
    def is_sequence(self):
        return self.sequence_examples > 0

    def _entry(self, name, s, total):
        kind = sorted(s.kinds)[0] if len(s.kinds) == 1 else ("mixed: " + ", ".join(sorted(s.kinds)) if s.kinds
                                                               else None)
        return {"name": name, "kind": kind, "present_in": s.present, "of": total,
                "values_min": s.min_count, "values_max": s.max_count}

    def to_json(self):
        total = self.examples + self.sequence_examples
        out = {"records": self.records, "examples": self.examples, "sequence_examples": self.sequence_examples,
               "not_examples": self.other,
               "features": [self._entry(n, self.context[n], total) for n in sorted(self.context)]}
        if self.is_sequence:
            seq = []
            for n in sorted(self.sequence):
                e = self._entry(n, self.sequence[n], self.sequence_examples)
                e["steps_min"], e["steps_max"] = self.sequence[n].min_len, self.sequence[n].max_len
                seq.append(e)
            out["sequence_features"] = seq
        return out

    # The feature spec, as Python source for sluice.io.parse_(single_)(sequence_)example.

    def _spec_line(self, name, s, total, sequence):
        if len(s.kinds) != 1:
            return "    # %r: %s; no spec" % (name, "mixed kinds" if s.kinds else "never has values")
        dtype = "sluice." + _DTYPES[next(iter(s.kinds))]
        fixed = s.min_count == s.max_count and (sequence or s.present == total)
        if sequence:
            if fixed:
                shape = "[]" if s.min_count == 1 else "[%d]" % s.min_count
                return "    %r: sluice.io.FixedLenSequenceFeature(%s, %s)," % (name, shape, dtype)
            return "    %r: sluice.io.VarLenFeature(%s)," % (name, dtype)
        if fixed:
            shape = "[]" if s.min_count == 1 else "[%d]" % s.min_count
            return "    %r: sluice.io.FixedLenFeature(%s, %s)," % (name, shape, dtype)
        return "    %r: sluice.io.VarLenFeature(%s)," % (name, dtype)

    def spec_source(self):
        total = self.examples + self.sequence_examples
        lines = ["import sluice", ""]
        name = "context_features" if self.is_sequence else "features"
        lines.append("%s = {" % name)
        lines += [self._spec_line(n, self.context[n], total, False) for n in sorted(self.context)]
        lines.append("}")
        if self.is_sequence:
            lines.append("sequence_features = {")
            lines += [self._spec_line(n, self.sequence[n], self.sequence_examples, True)
                      for n in sorted(self.sequence)]
            lines.append("}")
            lines.append("# context, sequences = sluice.io.parse_single_sequence_example("
                         "record, context_features, sequence_features)")
        else:
            lines.append("# parsed = sluice.io.parse_single_example(record, features)")
        return "\n".join(lines)
