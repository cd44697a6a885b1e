"""Parsing and decoding ops of sluice.compat.v1 (parse_example & co., decode_raw, decode_csv).

Each op runs sluice's eager function (the C++ parser) on the run's value;
the static shapes are TF's: FixedLenFeature's shape, a SparseTensor per
VarLenFeature, ``input.shape + [None]`` for decode_raw.
"""

from sluice import _parsing
from sluice import dtypes as _dtypes
from sluice.compat.v1 import _graph
from sluice.compat.v1 import _math_ops
from sluice.compat.v1 import _native_steps
from sluice.compat.v1 import _sparse
from sluice.compat.v1._graph import as_shape, make_op
from sluice.sparse_tensor import SparseTensor as _EagerSparse
from sluice._parsing import (FixedLenFeature, FixedLenSequenceFeature, SparseFeature,  # noqa: F401
                             VarLenFeature)


def _feature_specs(features, batch):
    """[(key, kind, specs)] in sorted key order; kind 'dense' (one output) or 'sparse' (three)."""
    lead = [None] if batch else []
    out = []
    for key in sorted(features):
        f = features[key]
        if isinstance(f, FixedLenFeature):
            out.append((key, "dense", [(_dtypes.as_dtype(f.dtype), as_shape(lead + list(f.shape)))]))
        elif isinstance(f, FixedLenSequenceFeature):
            out.append((key, "dense", [(_dtypes.as_dtype(f.dtype), as_shape(lead + [None] + list(f.shape)))]))
        elif isinstance(f, VarLenFeature):
            out.append((key, "sparse", _sparse.sparse_specs(f.dtype, len(lead) + 1)))
        elif isinstance(f, SparseFeature):
            size = f.size if isinstance(f.size, (list, tuple)) else [f.size]
            out.append((key, "sparse", _sparse.sparse_specs(f.dtype, len(lead) + len(size))))
        else:
            _graph.not_provided("io.%s in parse_example" % type(f).__name__,
                                "use sluice.parse_example (eager) in a tf.data map function")
    return out


def _parse_op(op_type, eager, serialized, features, batch, name, example_names=None):
    specs = _feature_specs(features, batch)
    flat_specs = [s for _, _, group in specs for s in group]
    x = _math_ops._in(serialized, _dtypes.string)

    def fn(value):
        parsed = eager(value, features, example_names=example_names)
        out = []
        for key, kind, _ in specs:
            v = parsed[key]
            out.extend(_sparse.eager_parts(v) if kind == "sparse" else [v])
        return tuple(out) if len(out) != 1 else out[0]

    if _graph.executing_eagerly() and not isinstance(x, _graph.Tensor):
        return eager(x, features, example_names=example_names)
    outputs = make_op(op_type, (x,), fn, flat_specs, name=name)
    outputs = outputs if isinstance(outputs, list) else [outputs]
    if not batch and example_names is None:  # what sluice.compat.v1._native can run in C++
        outputs[0].op.attrs["native"] = ("parse", features, [key for key, _, group in specs for _ in group])
    result, i = {}, 0
    for key, kind, group in specs:
        if kind == "sparse":
            result[key] = _sparse.from_eager_outputs(outputs[i:i + 3])
        else:
            result[key] = outputs[i]
        i += len(group)
    return result


def parse_single_example(serialized, features, name=None, example_names=None):
    return _parse_op("ParseSingleExample", _parsing.parse_single_example, serialized, features, False, name,
                     example_names)


def parse_example(serialized, features, name=None, example_names=None):
    return _parse_op("ParseExampleV2", _parsing.parse_example, serialized, features, True, name, example_names)


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None, example_name=None,
                                  name=None):
    _graph.not_provided("parse_single_sequence_example", "call sluice.parse_single_sequence_example in a tf.data "
                        "map function (tf.data.Dataset.map), where it runs eagerly")


def decode_raw(input_bytes=None, out_type=None, little_endian=True, fixed_length=None, name=None, bytes=None):  # noqa: A002
    x = _math_ops._in(input_bytes if input_bytes is not None else bytes, _dtypes.string)
    out_type = _dtypes.as_dtype(out_type)
    shape = _math_ops._shape_of(x)
    size = out_type.as_numpy_dtype(0).itemsize if out_type != _dtypes.string else None
    last = (fixed_length // size) if fixed_length is not None and size else None
    out_shape = shape.concatenate([last]) if shape.rank is not None else None
    out = make_op("DecodeRaw", (x,), lambda v: _parsing.decode_raw(v, out_type, little_endian, fixed_length),
                  [(out_type, out_shape)], name=name)
    if fixed_length is None and _native_steps.castable(out_type):
        _native_steps.tag(out, "decode_raw", out_type=out_type.as_datatype_enum, little_endian=bool(little_endian))
    return out


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None):
    """``tf.io.decode_csv``: one tensor per column, each of `records`' shape."""
    x = _math_ops._in(records, _dtypes.string)
    static_defaults = [_static_default(d) for d in record_defaults]
    dtypes = [_dtypes.as_dtype(_parsing._csv_default(i, d)[0]) if not isinstance(d, _graph.Tensor) else d.dtype
              for i, d in enumerate(static_defaults)]
    shape = _math_ops._shape_of(x)

    def fn(v, defaults):
        cols = _parsing.decode_csv(v, defaults, field_delim, use_quote_delim, na_value=na_value,
                                   select_cols=select_cols)
        return tuple(cols) if len(cols) != 1 else cols[0]
    if _graph.executing_eagerly() and not isinstance(x, _graph.Tensor):
        return fn(x, record_defaults) if len(dtypes) != 1 else [fn(x, record_defaults)]
    out = make_op("DecodeCSV", (x, static_defaults), fn, [(d, shape) for d in dtypes], name=name)
    return out if isinstance(out, list) else [out]


def _static_default(d):
    if isinstance(d, _graph.Tensor):
        return d
    if isinstance(d, (list, tuple)) and d and isinstance(d[0], _graph.Tensor):
        return d[0]
    return d


def serialize_sparse(sp_input, name=None, out_type=_dtypes.string):
    return _sparse.pack(sp_input)


def is_eager_sparse(v):
    return isinstance(v, _EagerSparse)
