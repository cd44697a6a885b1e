"""Constants, placeholders, conversion and the array and math ops of sluice.compat.v1.

Each op computes on numpy values at run time (TF's semantics for the dtypes
input pipelines use: int32 for Python ints, float32 for floats, bytes for
strings); static shapes follow TF's inference where input code relies on
them (batchers need fully defined shapes), and are unknown otherwise.
"""

import builtins

import numpy as np

from sluice import _convert_ops
from sluice import dtypes as _dtypes
from sluice import errors
from sluice.compat.v1 import _graph
from sluice.compat.v1 import _native_steps
from sluice.compat.v1._graph import Tensor, as_shape, make_op

# ---- conversion -------------------------------------------------------------------------


def _infer_dtype(value):
    """TF's dtype for a Python or numpy value (int32 and float32 for Python numbers)."""
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        return _dtypes.as_dtype(value.dtype)
    if isinstance(value, builtins.bool):
        return _dtypes.bool
    if isinstance(value, (int,)):
        return _dtypes.int32 if -2**31 <= value < 2**31 else _dtypes.int64
    if isinstance(value, float):
        return _dtypes.float32
    if isinstance(value, (bytes, str)):
        return _dtypes.string
    if isinstance(value, (list, tuple)):
        flat = list(_leaves(value))
        if not flat:
            return _dtypes.float32
        kinds = [_infer_dtype(v) for v in flat]
        if any(k == _dtypes.string for k in kinds):
            return _dtypes.string
        if any(k.is_floating for k in kinds):
            return _dtypes.float32
        if all(k == _dtypes.bool for k in kinds):
            return _dtypes.bool
        return _dtypes.int64 if any(k == _dtypes.int64 for k in kinds) else _dtypes.int32
    raise TypeError("Failed to convert object of type %s to Tensor. Contents: %r." % (type(value), value))


def _leaves(value):
    for v in value:
        if isinstance(v, (list, tuple)):
            yield from _leaves(v)
        else:
            yield v


def to_numpy(value, dtype=None):
    """`value` as a numpy value of `dtype` (inferred as TF does when None); bytes for a string scalar."""
    if isinstance(value, Tensor):
        raise TypeError("to_numpy of a symbolic tensor")
    dtype = _infer_dtype(value) if dtype is None else _dtypes.as_dtype(dtype)
    if dtype == _dtypes.string:
        if isinstance(value, (bytes, str, np.bytes_, np.str_)):
            return _graph.as_string_value(bytes(value) if isinstance(value, np.bytes_) else str(value)
                                          if isinstance(value, np.str_) else value)
        arr = np.asarray(value, dtype=object)
        return np.vectorize(_graph.as_string_value, otypes=[object])(arr) if arr.size else arr
    arr = np.asarray(value)
    if arr.dtype.kind in "OSU":
        raise TypeError("Expected %s, got %r of type '%s' instead." % (dtype.name, value, type(value).__name__))
    return arr.astype(dtype.as_numpy_dtype, copy=False)


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """``tf.constant``: a tensor of `value` (reshaped or broadcast to `shape`)."""
    del verify_shape
    if isinstance(value, Tensor):
        raise TypeError("tf.constant of a tf.Tensor: use tf.identity")
    arr = to_numpy(value, dtype)
    if shape is not None:
        shape = list(as_shape(shape))
        a = np.asarray(arr, dtype=object if isinstance(arr, bytes) else None)
        arr = np.broadcast_to(a, shape).copy() if a.size == 1 else a.reshape(shape)
    out_dtype = _dtypes.as_dtype(dtype) if dtype is not None else _infer_dtype(value)
    if _graph.executing_eagerly():
        return arr
    out = make_op("Const", (), lambda: arr, [(out_dtype, _graph.shape_of_value(arr))], name=name)
    out.op.attrs["value"] = arr  # for lowering to native ops (_native_steps)
    return out


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None):
    """``tf.convert_to_tensor``: a Tensor as is (dtype checked), a Variable's value, else a constant."""
    if isinstance(value, Tensor):
        if dtype is not None and _dtypes.as_dtype(dtype) != value.dtype:
            raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype %s: %r"
                             % (_dtypes.as_dtype(dtype).name, value.dtype.name, value))
        return value
    if isinstance(value, _graph.Variable):
        return value._value_tensor
    if isinstance(value, (list, tuple)) and any(isinstance(v, (Tensor, _graph.Variable)) for v in _leaves(value)):
        return stack([convert_to_tensor(v, dtype) for v in value])
    if dtype is None and preferred_dtype is not None:
        try:
            return constant(value, preferred_dtype, name=name or "Const")
        except (TypeError, ValueError):
            pass
    return constant(value, dtype, name=name or "Const")


def _in(x, dtype=None):
    """An op input: a Tensor (a Variable's value), or in an eager scope a numpy value."""
    if isinstance(x, _graph.Variable):
        return x._value_tensor
    if isinstance(x, Tensor):
        return x
    if _graph.executing_eagerly():
        return to_numpy(x, dtype) if not isinstance(x, np.ndarray) or dtype is not None else x
    return convert_to_tensor(x, dtype)


def _dtype_of(x):
    return x.dtype if isinstance(x, Tensor) else _dtypes.as_dtype(np.asarray(x).dtype)


def _shape_of(x):
    return x.shape if isinstance(x, Tensor) else _graph.shape_of_value(x)


def placeholder(dtype, shape=None, name=None):
    """``tf.placeholder``: a value fed with feed_dict (InvalidArgumentError when it is not)."""
    dtype = _dtypes.as_dtype(dtype)

    def missing():
        raise errors.InvalidArgumentError(
            None, None, "You must feed a value for placeholder tensor '%s' with dtype %s" % (t.name, dtype.name))
    t = make_op("Placeholder", (), missing, [(dtype, as_shape(shape))], name=name or "Placeholder", stateful=True)
    return t


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TF's name
    x = _in(input)
    return make_op("PlaceholderWithDefault", (x,), lambda v: v, [(x.dtype, as_shape(shape))], name=name)


# ---- elementwise ------------------------------------------------------------------------

def _broadcast_shape(a, b):
    a, b = as_shape(a), as_shape(b)
    if a.rank is None or b.rank is None:
        return _graph.unknown_shape()
    da, db = list(a), list(b)
    n = max(len(da), len(db))
    da, db = [1] * (n - len(da)) + da, [1] * (n - len(db)) + db
    out = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)
        else:
            out.append(x)
    return as_shape(out)


def _binary(op_type, fn, x, y, name=None, out_dtype=None):
    if not isinstance(x, (Tensor, _graph.Variable)) and isinstance(y, (Tensor, _graph.Variable)):
        y = _in(y)
        x = _in(x, y.dtype)
    else:
        x = _in(x)
        y = _in(y, _dtype_of(x))
    if isinstance(x, Tensor) and isinstance(y, Tensor) and x.dtype != y.dtype:
        raise TypeError("Input 'y' of '%s' Op has type %s that does not match type %s of argument 'x'."
                        % (op_type, y.dtype.name, x.dtype.name))
    dtype = out_dtype or _dtype_of(x)
    if op_type == "RealDiv" and not dtype.is_floating:
        dtype = _dtypes.float64
    out = make_op(op_type, (x, y), fn, [(dtype, _broadcast_shape(_shape_of(x), _shape_of(y)))], name=name)
    return _native_steps.tag_scalar(out, op_type, x, y)


def _unary(op_type, fn, x, name=None, out_dtype=None):
    x = _in(x)
    return make_op(op_type, (x,), fn, [(out_dtype or _dtype_of(x), _shape_of(x))], name=name)


def _truediv(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "iu" and a.dtype.itemsize <= 2:
        return np.true_divide(a, b, dtype=np.float32)
    return np.true_divide(a, b)


def _floordiv(a, b):
    return np.floor_divide(a, b)


def add(x, y, name=None):
    if _dtype_of(_in(x)) == _dtypes.string:
        return _binary("Add", lambda a, b: np.char.add(np.asarray(a, dtype=bytes), np.asarray(b, dtype=bytes))
                       .astype(object) if np.ndim(a) or np.ndim(b) else a + b, x, y, name)
    return _binary("AddV2", np.add, x, y, name)


def subtract(x, y, name=None):
    return _binary("Sub", np.subtract, x, y, name)


def multiply(x, y, name=None):
    return _binary("Mul", np.multiply, x, y, name)


def truediv(x, y, name=None):
    return _binary("RealDiv", _truediv, x, y, name)


def divide(x, y, name=None):
    return truediv(x, y, name)


def div(x, y, name=None):
    """TF 1's ``tf.div``: floor division for integers, true division for floats."""
    if _dtype_of(_in(x)).is_floating:
        return truediv(x, y, name)
    return floordiv(x, y, name)


def floordiv(x, y, name=None):
    return _binary("FloorDiv", _floordiv, x, y, name)


def floormod(x, y, name=None):
    return _binary("FloorMod", np.mod, x, y, name)


mod = floormod


def pow(x, y, name=None):  # noqa: A001 - TF's name
    return _binary("Pow", np.power, x, y, name)


def maximum(x, y, name=None):
    return _binary("Maximum", np.maximum, x, y, name)


def minimum(x, y, name=None):
    return _binary("Minimum", np.minimum, x, y, name)


def squared_difference(x, y, name=None):
    return _binary("SquaredDifference", lambda a, b: np.square(np.subtract(a, b)), x, y, name)


def _compare(op_type, fn):
    def op(x, y, name=None):
        return _binary(op_type, fn, x, y, name, out_dtype=_dtypes.bool)
    op.__name__ = op_type
    return op


equal = _compare("Equal", np.equal)
not_equal = _compare("NotEqual", np.not_equal)
less = _compare("Less", np.less)
less_equal = _compare("LessEqual", np.less_equal)
greater = _compare("Greater", np.greater)
greater_equal = _compare("GreaterEqual", np.greater_equal)
logical_and = _compare("LogicalAnd", np.logical_and)
logical_or = _compare("LogicalOr", np.logical_or)
logical_xor = _compare("LogicalXor", np.logical_xor)


def logical_not(x, name=None):
    return _unary("LogicalNot", np.logical_not, x, name)


def _elementwise(op_type, fn):
    def op(x, name=None):
        return _unary(op_type, fn, x, name)
    op.__name__ = op_type
    return op


negative = _elementwise("Neg", np.negative)
abs = _elementwise("Abs", np.abs)  # noqa: A001 - TF's name
square = _elementwise("Square", np.square)
sqrt = _elementwise("Sqrt", np.sqrt)
exp = _elementwise("Exp", np.exp)
log = _elementwise("Log", np.log)
sign = _elementwise("Sign", np.sign)
floor = _elementwise("Floor", np.floor)
ceil = _elementwise("Ceil", np.ceil)
round = _elementwise("Round", np.round)  # noqa: A001 - TF's name (banker's rounding, as numpy)
sigmoid = _elementwise("Sigmoid", lambda a: 1 / (1 + np.exp(-a)))
tanh = _elementwise("Tanh", np.tanh)
reciprocal = _elementwise("Reciprocal", np.reciprocal)
identity = _elementwise("Identity", lambda a: a)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    t = _in(t)
    lo, hi = _in(clip_value_min, _dtype_of(t)), _in(clip_value_max, _dtype_of(t))
    return make_op("ClipByValue", (t, lo, hi), lambda a, b, c: np.clip(a, b, c).astype(np.asarray(a).dtype),
                   [(_dtype_of(t), _shape_of(t))], name=name)


def add_n(inputs, name=None):
    inputs = [_in(x) for x in inputs]
    return make_op("AddN", (inputs,), lambda vs: np.sum(np.stack(vs), axis=0).astype(np.asarray(vs[0]).dtype),
                   [(_dtype_of(inputs[0]), _shape_of(inputs[0]))], name=name)


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    a, b = _in(a), _in(b)

    def fn(x, y):
        return np.matmul(np.transpose(x) if transpose_a else x, np.transpose(y) if transpose_b else y)
    return make_op("MatMul", (a, b), fn, [(_dtype_of(a), _graph.unknown_shape())], name=name)


# ---- reductions -------------------------------------------------------------------------

def _reduced_shape(shape, axis, keepdims):
    shape = as_shape(shape)
    if shape.rank is None:
        return shape
    if axis is None:
        return as_shape([1] * shape.rank if keepdims else [])
    axes = {a % shape.rank for a in ([axis] if isinstance(axis, int) else axis)}
    return as_shape([1 if i in axes else d for i, d in enumerate(shape) if keepdims or i not in axes])


def _reduction(op_type, fn, bool_out=False):
    def op(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        x = _in(input_tensor)
        axis = reduction_indices if axis is None else axis
        axis = tuple(axis) if isinstance(axis, (list, tuple)) else axis
        keep = builtins.bool(keepdims or keep_dims)
        dtype = _dtypes.bool if bool_out else _dtype_of(x)

        def compute(v):
            out = fn(np.asarray(v), axis=axis, keepdims=keep)
            return out if bool_out else np.asarray(out).astype(dtype.as_numpy_dtype)
        return make_op(op_type, (x,), compute, [(dtype, _reduced_shape(_shape_of(x), axis, keep))], name=name)
    op.__name__ = op_type
    return op


reduce_sum = _reduction("Sum", np.sum)
reduce_mean = _reduction("Mean", np.mean)
reduce_max = _reduction("Max", np.max)
reduce_min = _reduction("Min", np.min)
reduce_prod = _reduction("Prod", np.prod)
reduce_any = _reduction("Any", np.any, bool_out=True)
reduce_all = _reduction("All", np.all, bool_out=True)


def argmax(input, axis=None, name=None, dimension=None, output_type=_dtypes.int64):  # noqa: A002
    axis = dimension if axis is None else (axis if axis is not None else 0)
    x = _in(input)
    out = _dtypes.as_dtype(output_type)
    return make_op("ArgMax", (x,), lambda v: np.argmax(v, axis=axis or 0).astype(out.as_numpy_dtype),
                   [(out, _reduced_shape(_shape_of(x), axis or 0, False))], name=name)


def argmin(input, axis=None, name=None, dimension=None, output_type=_dtypes.int64):  # noqa: A002
    axis = dimension if axis is None else axis
    x = _in(input)
    out = _dtypes.as_dtype(output_type)
    return make_op("ArgMin", (x,), lambda v: np.argmin(v, axis=axis or 0).astype(out.as_numpy_dtype),
                   [(out, _reduced_shape(_shape_of(x), axis or 0, False))], name=name)


# ---- casts ------------------------------------------------------------------------------

def cast(x, dtype, name=None):
    """``tf.cast`` (sluice.cast's semantics: truncation toward zero, TF's string errors)."""
    dtype = _dtypes.as_dtype(dtype)
    if hasattr(x, "_map_values"):  # a SparseTensor of tensors
        return x._map_values(lambda v: cast(v, dtype))
    x = _in(x)
    out = make_op("Cast", (x,), lambda v: _convert_ops.cast(v, dtype), [(dtype, _shape_of(x))], name=name)
    return _native_steps.tag_cast(out, dtype)


def to_float(x, name="ToFloat"):
    return cast(x, _dtypes.float32, name)


def to_double(x, name="ToDouble"):
    return cast(x, _dtypes.float64, name)


def to_int32(x, name="ToInt32"):
    return cast(x, _dtypes.int32, name)


def to_int64(x, name="ToInt64"):
    return cast(x, _dtypes.int64, name)


def saturate_cast(value, dtype, name=None):
    dtype = _dtypes.as_dtype(dtype)
    x = _in(value)
    info = np.iinfo(dtype.as_numpy_dtype) if not dtype.is_floating else np.finfo(dtype.as_numpy_dtype)
    return make_op("SaturateCast", (x,), lambda v: _convert_ops.cast(np.clip(v, info.min, info.max), dtype),
                   [(dtype, _shape_of(x))], name=name)


def string_to_number(string_tensor, out_type=_dtypes.float32, name=None):
    out_type = _dtypes.as_dtype(out_type)
    x = _in(string_tensor, _dtypes.string)
    return make_op("StringToNumber", (x,), lambda v: _convert_ops.string_to_number(v, out_type),
                   [(out_type, _shape_of(x))], name=name)


# ---- shapes -----------------------------------------------------------------------------

def _static_ints(x):
    """A shape argument as a list of ints (-1 allowed), or None if it is only known at run time."""
    if isinstance(x, Tensor):
        return None
    if isinstance(x, _graph.TensorShape):
        return list(x)
    return [builtins.int(d) for d in np.asarray(x).reshape(-1)]


def reshape(tensor, shape, name=None):
    x = _in(tensor)
    if isinstance(shape, Tensor):
        shape_in, static = shape, None
    elif isinstance(shape, (list, tuple)) and any(isinstance(d, (Tensor, _graph.Variable)) for d in shape):
        shape_in, static = stack([_in(d, _dtypes.int32) for d in shape]), None
    else:
        static = _static_ints(shape)
        shape_in = _in(np.asarray(static, dtype=np.int64))
    out_shape = _graph.unknown_shape()
    if static is not None:
        dims = [None if d < 0 else d for d in static]
        known = _shape_of(x)
        if dims.count(None) == 1 and known.is_fully_defined():
            rest = builtins.int(np.prod([d for d in dims if d is not None]))
            if rest:
                dims[dims.index(None)] = known.num_elements() // rest
        out_shape = as_shape(dims)

    def compute(v, s):
        v = np.asarray(v, dtype=object) if isinstance(v, bytes) else np.asarray(v)
        try:
            return v.reshape([builtins.int(d) for d in np.asarray(s).reshape(-1)])
        except ValueError:
            raise errors.InvalidArgumentError(
                None, None, "Input to reshape is a tensor with %d values, but the requested shape has %d"
                % (v.size, builtins.int(np.prod(np.asarray(s))))) from None
    out = make_op("Reshape", (x, shape_in), compute, [(_dtype_of(x), out_shape)], name=name)
    return _native_steps.tag(out, "reshape", shape=static) if static is not None else out


def shape(input, name=None, out_type=_dtypes.int32):  # noqa: A002 - TF's name
    x = _in(input)
    out_type = _dtypes.as_dtype(out_type)
    return make_op("Shape", (x,), lambda v: np.asarray(np.shape(v), dtype=out_type.as_numpy_dtype),
                   [(out_type, [_shape_of(x).rank])], name=name)


def size(input, name=None, out_type=_dtypes.int32):  # noqa: A002
    x = _in(input)
    return make_op("Size", (x,), lambda v: np.asarray(np.size(v), dtype=_dtypes.as_dtype(out_type).as_numpy_dtype),
                   [(out_type, [])], name=name)


def rank(input, name=None):  # noqa: A002
    x = _in(input)
    return make_op("Rank", (x,), lambda v: np.int32(np.ndim(v)), [(_dtypes.int32, [])], name=name)


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    axis = dim if axis is None else axis
    x = _in(input)
    s = _shape_of(x)
    out = _graph.unknown_shape()
    if s.rank is not None:
        dims = list(s)
        dims.insert(axis if axis >= 0 else len(dims) + 1 + axis, 1)
        out = as_shape(dims)
    return make_op("ExpandDims", (x,), lambda v: np.expand_dims(_arr(v), axis), [(_dtype_of(x), out)], name=name)


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    axis = squeeze_dims if axis is None else axis
    axis = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    x = _in(input)
    s = _shape_of(x)
    out = _graph.unknown_shape()
    if s.rank is not None and (axis is not None or s.is_fully_defined()):
        axes = ({a % s.rank for a in ([axis] if isinstance(axis, int) else axis)} if axis is not None
                else {i for i, d in enumerate(s) if d == 1})
        out = as_shape([d for i, d in enumerate(s) if i not in axes])
    return make_op("Squeeze", (x,), lambda v: np.squeeze(_arr(v), axis), [(_dtype_of(x), out)], name=name)


def _arr(v):
    return np.asarray(v, dtype=object) if isinstance(v, bytes) else np.asarray(v)


def stack(values, axis=0, name="stack"):
    """``tf.stack`` (``tf.pack``): one tensor from a list of tensors of one shape."""
    values = [_in(v) for v in values]
    if not values:
        raise ValueError("stack of an empty list")
    dtype = _dtype_of(values[0])
    values = [v if isinstance(v, Tensor) or _dtype_of(v) == dtype else to_numpy(v, dtype) for v in values]
    s = _shape_of(values[0])
    for v in values[1:]:
        s = s.merge_with(_shape_of(v)) if s.is_compatible_with(_shape_of(v)) else s
    out = _graph.unknown_shape()
    if s.rank is not None:
        dims = list(s)
        dims.insert(axis if axis >= 0 else len(dims) + 1 + axis, len(values))
        out = as_shape(dims)
    return make_op("Pack", (values,), lambda vs: np.stack([_arr(v) for v in vs], axis=axis),
                   [(dtype, out)], name=name)


pack = stack


def unstack(value, num=None, axis=0, name="unstack"):
    x = _in(value)
    s = _shape_of(x)
    if num is None:
        if s.rank is None or s[axis] is None:
            raise ValueError("Cannot infer argument `num` from shape %s" % s)
        num = s[axis]
    rest = _graph.unknown_shape() if s.rank is None else as_shape([d for i, d in enumerate(s) if i != axis % s.rank])
    if num == 1:
        return [make_op("Unpack", (x,), lambda v: np.moveaxis(_arr(v), axis, 0)[0], [(_dtype_of(x), rest)], name=name)]
    return make_op("Unpack", (x,), lambda v: tuple(np.moveaxis(_arr(v), axis, 0)),
                   [(_dtype_of(x), rest)] * num, name=name)


unpack = unstack


def concat(values, axis, name="concat"):
    values = [_in(v) for v in values]
    shapes = [_shape_of(v) for v in values]
    out = _graph.unknown_shape()
    if all(s.rank is not None for s in shapes) and shapes:
        dims = list(shapes[0])
        ax = axis % len(dims)
        parts = [s[ax] for s in shapes]
        dims[ax] = None if any(p is None for p in parts) else builtins.sum(parts)
        out = as_shape(dims)
    return make_op("ConcatV2", (values,), lambda vs: np.concatenate([_arr(v) for v in vs], axis=axis),
                   [(_dtype_of(values[0]), out)], name=name)


def transpose(a, perm=None, name="transpose"):
    x = _in(a)
    s = _shape_of(x)
    out = _graph.unknown_shape()
    p = None
    if s.rank is not None:
        p = list(perm) if perm is not None else list(range(s.rank))[::-1]
        out = as_shape([s[i] for i in p])
    t = make_op("Transpose", (x,), lambda v: np.transpose(_arr(v), perm), [(_dtype_of(x), out)], name=name)
    if p is not None and builtins.all(isinstance(i, (builtins.int, np.integer)) for i in p):
        _native_steps.tag(t, "transpose", perm=[builtins.int(i) for i in p])
    return t


def tile(input, multiples, name=None):  # noqa: A002
    x = _in(input)
    m = _static_ints(multiples)
    s = _shape_of(x)
    out = as_shape([None if d is None else d * k for d, k in zip(s, m)]) if m is not None and s.rank else \
        _graph.unknown_shape()
    mt = _in(multiples)
    return make_op("Tile", (x, mt), lambda v, k: np.tile(_arr(v), list(np.asarray(k))), [(_dtype_of(x), out)],
                   name=name)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """``tf.one_hot``: float32 by default; indices outside [0, depth) give a row of `off_value`."""
    x = _in(indices)
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else (
        _dtype_of(_in(on_value)) if on_value is not None and not isinstance(on_value, (int, float))
        else _dtypes.float32)
    on = 1 if on_value is None else on_value
    off = 0 if off_value is None else off_value
    s = _shape_of(x)
    depth_static = depth if isinstance(depth, (int, np.integer)) else None
    out = _graph.unknown_shape()
    if s.rank is not None:
        dims = list(s)
        dims.insert(len(dims) if axis in (None, -1) else axis, depth_static)
        out = as_shape(dims)

    def compute(idx, d):
        idx = np.asarray(idx).astype(np.int64)
        d = builtins.int(d)
        hot = (idx[..., None] == np.arange(d))
        res = np.where(hot, np.asarray(on, dtype=dtype.as_numpy_dtype), np.asarray(off, dtype=dtype.as_numpy_dtype))
        if axis not in (None, -1):
            res = np.moveaxis(res, -1, axis)
        return res.astype(dtype.as_numpy_dtype)
    return make_op("OneHot", (x, _in(depth)), compute, [(dtype, out)], name=name)


def _full(op_type, shape, value, dtype, name):
    dtype = _dtypes.as_dtype(dtype)
    static = _static_ints(shape)
    out = as_shape(static) if static is not None else _graph.unknown_shape()
    shape_t = _in(shape, _dtypes.int32) if isinstance(shape, Tensor) or static is None else \
        _in(np.asarray(static, dtype=np.int32))
    return make_op(op_type, (shape_t,),
                   lambda s: np.full([builtins.int(d) for d in np.asarray(s).reshape(-1)], value,
                                     dtype=dtype.as_numpy_dtype), [(dtype, out)], name=name)


def zeros(shape, dtype=_dtypes.float32, name=None):
    return _full("Zeros", shape, b"" if _dtypes.as_dtype(dtype) == _dtypes.string else 0, dtype, name)


def ones(shape, dtype=_dtypes.float32, name=None):
    return _full("Ones", shape, 1, dtype, name)


def fill(dims, value, name=None):
    v = _in(value)
    dtype = _dtype_of(v)
    return make_op("Fill", (_in(dims, _dtypes.int32), v),
                   lambda s, x: np.full([builtins.int(d) for d in np.asarray(s).reshape(-1)], x,
                                        dtype=dtype.as_numpy_dtype),
                   [(dtype, as_shape(_static_ints(dims)) if _static_ints(dims) is not None else None)], name=name)


def zeros_like(tensor, dtype=None, name=None):
    x = _in(tensor)
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else _dtype_of(x)
    return make_op("ZerosLike", (x,), lambda v: np.zeros(np.shape(v), dtype=dtype.as_numpy_dtype),
                   [(dtype, _shape_of(x))], name=name)


def ones_like(tensor, dtype=None, name=None):
    x = _in(tensor)
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else _dtype_of(x)
    return make_op("OnesLike", (x,), lambda v: np.ones(np.shape(v), dtype=dtype.as_numpy_dtype),
                   [(dtype, _shape_of(x))], name=name)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - TF's name
    if limit is None:
        start, limit = 0, start
    args = [_in(a) for a in (start, limit, delta)]
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else (
        _dtypes.float32 if any(_dtype_of(a).is_floating for a in args) else _dtype_of(args[1]))
    static = [a for a in (start, limit, delta) if not isinstance(a, (Tensor, _graph.Variable))]
    out = as_shape([len(np.arange(start, limit, delta))]) if len(static) == 3 else as_shape([None])
    return make_op("Range", (args,), lambda v: np.arange(*v).astype(dtype.as_numpy_dtype), [(dtype, out)], name=name)


def gather(params, indices, axis=0, name=None):
    p, i = _in(params), _in(indices)
    ps, ins = _shape_of(p), _shape_of(i)
    out = _graph.unknown_shape()
    if ps.rank is not None and ins.rank is not None:
        ax = axis % ps.rank
        out = as_shape(list(ps)[:ax] + list(ins) + list(ps)[ax + 1:])
    return make_op("GatherV2", (p, i), lambda pv, iv: np.take(_arr(pv), np.asarray(iv), axis=axis),
                   [(_dtype_of(p), out)], name=name)


def slice(input_, begin, size, name=None):  # noqa: A001 - TF's name
    x = _in(input_)

    def compute(v, b, s):
        v = _arr(v)
        idx = tuple(builtins.slice(bb, None if ss == -1 else bb + ss) for bb, ss in zip(np.asarray(b), np.asarray(s)))
        return v[idx]
    sizes = _static_ints(size)
    out = as_shape([None if d == -1 else d for d in sizes]) if sizes is not None else _graph.unknown_shape()
    return make_op("Slice", (x, _in(begin, _dtypes.int32), _in(size, _dtypes.int32)), compute,
                   [(_dtype_of(x), out)], name=name)


def strided_slice(input_, begin, end, strides=None, name=None, **masks):
    """``tf.strided_slice`` with constant begin, end and strides (no masks)."""
    if masks and any(masks.values()):
        _graph.not_provided("strided_slice with masks", "index the tensor with Python slices: t[a:b, ..., None]")
    b, e = _static_ints(begin), _static_ints(end)
    st = _static_ints(strides) if strides is not None else [1] * len(b)
    if b is None or e is None or st is None:
        _graph.not_provided("strided_slice of run-time bounds", "index the tensor with Python slices")
    out = getitem(input_, tuple(builtins.slice(x, y, z) for x, y, z in zip(b, e, st)))
    return _native_steps.tag(out, "strided_slice", begin=b, end=e, strides=st)


def where(condition, x=None, y=None, name=None):
    c = _in(condition)
    if x is None and y is None:
        return make_op("Where", (c,), lambda v: np.argwhere(v).astype(np.int64),
                       [(_dtypes.int64, [None, _shape_of(c).rank])], name=name)
    x, y = _in(x), _in(y)
    return make_op("Select", (c, x, y), np.where, [(_dtype_of(x), _shape_of(x))], name=name)


def getitem(tensor, key):
    """``tensor[key]`` (TF's strided slice): ints, slices, Ellipsis, newaxis."""
    x = _in(tensor)
    key_t = key if isinstance(key, tuple) else (key,)
    tensors, rebuild = _graph.flatten_args(key_t)
    s = _shape_of(x)
    out = _graph.unknown_shape()
    if s.rank is not None and not tensors and builtins.all(isinstance(k, (int, builtins.slice)) for k in key_t):
        dims = []
        for i, d in enumerate(s):
            k = key_t[i] if i < len(key_t) else builtins.slice(None)
            if isinstance(k, builtins.slice):
                dims.append(len(np.arange(d)[k]) if d is not None else None)
        out = as_shape(dims)

    def compute(v, *ks):
        return _arr(v)[tuple(builtins.int(k) if isinstance(k, (np.ndarray, np.integer)) else k
                             for k in rebuild(list(ks)))]
    return make_op("StridedSlice", (x, tensors), lambda v, ks: compute(v, *ks), [(_dtype_of(x), out)])


# ---- random -----------------------------------------------------------------------------

def _random(op_type, draw, shape, dtype, seed, name):
    dtype = _dtypes.as_dtype(dtype)
    static = _static_ints(shape)
    rng = np.random.default_rng(seed)
    return make_op(op_type, (_in(np.asarray(static)) if static is not None else _in(shape),),
                   lambda s: np.asarray(draw(rng, [builtins.int(d) for d in np.asarray(s).reshape(-1)]))
                   .astype(dtype.as_numpy_dtype),
                   [(dtype, as_shape(static) if static is not None else None)], name=name, stateful=True)


def random_uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None, name=None):
    dtype = _dtypes.as_dtype(dtype)
    hi = 1 if maxval is None else maxval
    if dtype.is_floating:
        return _random("RandomUniform", lambda r, s: r.uniform(minval, hi, s), shape, dtype, seed, name)
    return _random("RandomUniformInt", lambda r, s: r.integers(minval, hi, s), shape, dtype, seed, name)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    return _random("RandomStandardNormal", lambda r, s: r.normal(mean, stddev, s), shape, dtype, seed, name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    def draw(r, s):
        v = r.normal(0, 1, s)
        while np.any(np.abs(v) > 2):
            bad = np.abs(v) > 2
            v[bad] = r.normal(0, 1, builtins.int(bad.sum()))
        return mean + stddev * v
    return _random("TruncatedNormal", draw, shape, dtype, seed, name)


def random_shuffle(value, seed=None, name=None):
    x = _in(value)
    rng = np.random.default_rng(seed)
    return make_op("RandomShuffle", (x,), lambda v: rng.permutation(_arr(v)), [(_dtype_of(x), _shape_of(x))],
                   name=name, stateful=True)


# ---- Tensor's operators -----------------------------------------------------------------

def _install_operators():
    def rev(fn):
        return lambda self, other: fn(other, self)
    ops = {"__add__": add, "__sub__": subtract, "__mul__": multiply, "__truediv__": truediv,
           "__floordiv__": floordiv, "__mod__": floormod, "__pow__": pow, "__lt__": less, "__le__": less_equal,
           "__gt__": greater, "__ge__": greater_equal, "__and__": logical_and, "__or__": logical_or,
           "__xor__": logical_xor, "__matmul__": matmul}
    for name, fn in ops.items():
        setattr(Tensor, name, (lambda f: lambda self, other: f(self, other))(fn))
        if name not in ("__lt__", "__le__", "__gt__", "__ge__"):
            setattr(Tensor, "__r" + name[2:], rev(fn))
    Tensor.__neg__ = lambda self: negative(self)
    Tensor.__abs__ = lambda self: abs(self)
    Tensor.__invert__ = lambda self: logical_not(self)
    Tensor.__getitem__ = getitem


_install_operators()
