"""The sources and transformations of ``sluice.data`` built on ``_core.data``'s
file lists, CSV, file cache, sampling and SparseTensor factories (datasets.h):
``Dataset.list_files``, ``Dataset.sample_from_datasets``,
``Dataset.choose_from_datasets``, ``experimental.CsvDataset`` and
``experimental.make_csv_dataset``, and the SparseTensor-aware forms of
``from_tensor_slices``, ``batch`` and ``unbatch``. ``sluice.data`` re-exports
them; the names, arguments, defaults and errors are TensorFlow 2.21's.
"""

import collections
import csv
import gzip
import os

import numpy as np

from sluice import _core
from sluice import _data_pickle
from sluice import dtypes as _dtypes

_d = _core.data

_CSV_TYPES = (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64, _dtypes.string)


def _data():
    from sluice import data  # data.py imports this module
    return data


def _text(x):
    return x.decode() if isinstance(x, bytes) else os.fspath(x)


def _patterns(file_pattern):
    if isinstance(file_pattern, (str, bytes, os.PathLike)):
        return [_text(file_pattern)]
    return [_text(p) for p in np.asarray(file_pattern, dtype=object).reshape(-1)]


def sparse_starts(structure):
    """The flat index of the first component of each SparseTensor of `structure`."""
    data = _data()
    starts, pos = [], 0
    for leaf in data._leaves(structure):
        if leaf is data._SPARSE:
            starts.append(pos)
        pos += data._count(leaf)
    return starts


# ---- Dataset static methods ----------------------------------------------------------------

def list_files(file_pattern, shuffle=None, seed=None, name=None):
    """``tf.data.Dataset.list_files``: the files matching `file_pattern` (a glob or a list of them),
    sorted, then (shuffle None or True) shuffled with `seed` as ``shuffle`` does, so a seeded
    list_files gives TF's order. InvalidArgumentError "No files matched pattern: ..." when none."""
    data = _data()
    seed, seed2 = _data_pickle.engine_seeds(data._opt_int(seed, "seed"))
    core = _d.list_files(_patterns(file_pattern), True if shuffle is None else bool(shuffle), seed, seed2)
    return data.Dataset(core, data._LEAF)


def _check_same_structure(datasets):
    data = _data()
    first = datasets[0]._structure
    for ds in datasets[1:]:
        if repr(ds._structure) != repr(first):
            raise TypeError("Invalid `datasets`. `datasets` must have compatible structure: %r vs %r" %
                            (first, ds._structure))
    return first


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                         rerandomize_each_iteration=None):
    """``tf.data.Dataset.sample_from_datasets``: each element drawn from ``datasets[i]`` with
    probability ``weights[i]`` (normalised; None: uniform; a dataset of weight vectors: element
    i drawn with its i-th vector). A seeded draw gives TF's order (the same
    random stream and categorical draw). Datasets of weight 0 are dropped. With
    `stop_on_empty_dataset`, the first exhausted dataset drawn ends the sequence; otherwise
    exhausted datasets are skipped until all are. With `rerandomize_each_iteration`, each epoch
    draws another sequence (TF's seeds); otherwise every epoch repeats the first."""
    data = _data()
    datasets = list(datasets)
    if not datasets:
        raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
    structure = _check_same_structure(datasets)
    seed, seed2 = _data_pickle.engine_seeds(data._opt_int(seed, "seed"))
    if isinstance(weights, data.DatasetV2):
        core = _d.sample_from_datasets_weighted_by([ds._core for ds in datasets], weights._core, seed, seed2,
                                                   bool(stop_on_empty_dataset), bool(rerandomize_each_iteration))
        return data.Dataset(core, structure)
    if weights is None:
        w = []
    else:
        w = np.asarray(weights)
        if w.ndim != 1 or len(w) != len(datasets):
            raise ValueError("Invalid `weights`. `weights` should have the same length as `datasets` but got "
                             "`len(weights)=%d` vs. `len(datasets)=%d`." % (w.size, len(datasets)))
        if w.dtype.kind != "f":
            raise TypeError("Invalid `weights`. `weights` type must be either `tf.float32` or `tf.float64` "
                            "but is %s." % ("tf.int32" if w.dtype.kind in "iu" else w.dtype))
        w = [float(x) for x in w]
    core = _d.sample_from_datasets([ds._core for ds in datasets], w, seed, seed2, bool(stop_on_empty_dataset),
                                   bool(rerandomize_each_iteration))
    return data.Dataset(core, structure)


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    """``tf.data.Dataset.choose_from_datasets``: element i from ``datasets[choice_dataset[i]]``
    (int64 scalars). InvalidArgumentError "Selector index out of range" at a bad index."""
    data = _data()
    datasets = list(datasets)
    if not datasets:
        raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
    structure = _check_same_structure(datasets)
    if not isinstance(choice_dataset, data.DatasetV2):
        raise TypeError("Invalid `choice_dataset`. `choice_dataset` should be a `tf.data.Dataset` but is %s." %
                        type(choice_dataset).__name__)
    spec = choice_dataset.element_spec
    if (choice_dataset._structure is not data._LEAF or spec.dtype != _dtypes.int64 or
            (spec.shape.rank is not None and spec.shape.rank != 0)):
        raise TypeError("Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar of type "
                        "`tf.int64`.")
    core = _d.choose_from_datasets([ds._core for ds in datasets], choice_dataset._core, bool(stop_on_empty_dataset))
    return data.Dataset(core, structure)


# ---- SparseTensor-aware transformations ---------------------------------------------------

def from_tensor_slices(tensors, structure):
    data = _data()
    values, enums = data._components(tensors, structure)
    return data.Dataset(_d.from_tensor_slices_sparse(values, enums, sparse_starts(structure)), structure)


def batch(dataset, batch_size, drop_remainder):
    data = _data()
    core = _d.batch_sparse(dataset._core, data._int(batch_size, "batch_size"), bool(drop_remainder),
                           sparse_starts(dataset._structure))
    return data.Dataset(core, dataset._structure)


def unbatch(dataset):
    data = _data()
    return data.Dataset(_d.unbatch_sparse(dataset._core, sparse_starts(dataset._structure)), dataset._structure)


# ---- CSV -------------------------------------------------------------------------------------

def _record_defaults(record_defaults):
    """(values, dtype numbers): a dtype gives a required column (an empty default), a value or a
    1-element list its default."""
    data = _data()
    values, enums = [], []
    for d in record_defaults:
        if isinstance(d, (_dtypes.DType, type)):
            dt, given = _dtypes.as_dtype(d), []
        else:
            given = list(np.reshape(d, [-1])) if isinstance(d, (list, tuple, np.ndarray)) else [d]
            dt = data._infer_dtype(d) if len(given) else _dtypes.float32
        if dt not in _CSV_TYPES:
            raise TypeError("Invalid `record_defaults`: each must be one of tf.float32, tf.float64, tf.int32, "
                            "tf.int64, tf.string, got %s" % dt.name)
        values.append(data._to_component(given, dt))
        enums.append(dt.as_datatype_enum)
    return values, enums


class CsvDataset:
    """``tf.data.experimental.CsvDataset``: one tuple of scalars per CSV record.

    `record_defaults`: one per column, a dtype (the column is required) or a
    default value (its dtype is the column's). Errors name the file, line and
    column of a bad record.
    """

    def __new__(cls, filenames, record_defaults, compression_type=None, buffer_size=None, header=False,
                field_delim=",", use_quote_delim=True, na_value="", select_cols=None, exclude_cols=None,
                _ignore_errors=False):
        # _ignore_errors: make_csv_dataset(ignore_errors=True) (TF applies ignore_errors() after it).
        data = _data()
        values, enums = _record_defaults(record_defaults)
        core = _d.csv(data._filenames(filenames), values, enums, data._compression(compression_type),
                      0 if buffer_size is None else data._int(buffer_size, "buffer_size"), bool(header),
                      _text(field_delim), bool(use_quote_delim), _text(na_value),
                      [] if select_cols is None else [int(c) for c in select_cols],
                      [] if exclude_cols is None else [int(c) for c in exclude_cols], bool(_ignore_errors))
        structure = tuple(data._LEAF for _ in values)
        return data.Dataset(core, structure)


def _is_valid_int32(s):
    try:
        return np.int32(s) == np.int64(s)
    except (ValueError, OverflowError):
        return False


def _is_valid_int64(s):
    try:
        np.int64(s)
        return True
    except (ValueError, OverflowError):
        return False


def _is_valid_float(s, np_type):
    try:
        return np_type(s) < np.inf
    except ValueError:
        return False


_INFER_ORDER = [
    (_dtypes.int32, _is_valid_int32),
    (_dtypes.int64, _is_valid_int64),
    (_dtypes.float32, lambda s: _is_valid_float(s, np.float32)),
    (_dtypes.float64, lambda s: _is_valid_float(s, np.float64)),
    (_dtypes.string, lambda s: True),
]


def _infer_type(value, na_value, prev):
    """TF's _infer_type: the least permissive dtype that parses `value` and keeps `prev` valid."""
    if value in ("", na_value):
        return prev
    allowed = [t for t, _ in _INFER_ORDER]
    for i, (dtype, valid) in enumerate(_INFER_ORDER):
        if valid(value) and (prev is None or prev in allowed[:i + 1]):
            return dtype
    return _dtypes.string


def _open_text(compression_type):
    c = "" if compression_type is None else _text(compression_type)
    if c == "GZIP":
        return lambda f: gzip.open(f, "rt", encoding="utf-8")
    if c == "ZLIB":
        raise ValueError("`compression_type` %s is not supported for probing columns." % c)
    if c != "":
        raise ValueError("Received unknown `compression_type` %s. Expected: GZIP, ZLIB or  (empty string)." % c)
    return lambda f: open(f, "r", encoding="utf-8", newline="")


def _csv_kwargs(field_delim, use_quote_delim):
    return {"delimiter": field_delim, "quoting": csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE}


def _infer_column_names(filenames, kwargs, open_fn):
    names = None
    for f in filenames:
        with open_fn(f) as fh:
            try:
                row = next(csv.reader(fh, **kwargs))
            except StopIteration:
                raise ValueError("Failed when reading the header line of %s. Is it an empty file?" % f) from None
        if names is None:
            names = row
        elif row != names:
            raise ValueError("All input CSV files should have the same column names in the header row. File %s "
                             "has different column names." % f)
    return names


def _infer_column_defaults(filenames, num_cols, kwargs, na_value, header, num_rows, select_columns, open_fn):
    cols = range(num_cols) if select_columns is None else select_columns
    types = [None] * len(cols)
    seen = 0
    for f in filenames:
        if num_rows is not None and seen >= num_rows:
            break
        with open_fn(f) as fh:
            reader = csv.reader(fh, **kwargs)
            row_num = 1
            if header:
                next(reader, None)
                row_num += 1
            for row in reader:
                if num_rows is not None and seen >= num_rows:
                    break
                if len(row) != num_cols:
                    raise ValueError("Problem inferring types: CSV row %d has %d number of fields. Expected: %d." %
                                     (row_num, len(row), num_cols))
                row_num += 1
                seen += 1
                for j, c in enumerate(cols):
                    types[j] = _infer_type(row[c], na_value, types[j])
    types = [t or _dtypes.string for t in types]
    return [[""] if t is _dtypes.string else np.zeros([1], t.as_numpy_dtype) for t in types]


def _sorted_col_indices(select_columns, column_names):
    index = {n: i for i, n in enumerate(column_names)}
    out = []
    for v in select_columns:
        if isinstance(v, int):
            if v < 0 or v >= len(column_names):
                raise ValueError("Column index %d specified in `select_columns` should be > 0  and <= %d, which is "
                                 "the number of columns." % (v, len(column_names)))
            out.append(v)
        elif v not in index:
            raise ValueError("Column %s specified in `select_columns` must be of one of the columns: %s." %
                             (v, index.keys()))
        else:
            out.append(index[v])
    result = sorted(set(out))
    if len(result) != len(select_columns):
        raise ValueError("The `select_columns` argument contains duplicate columns.")
    return result


def _file_names(file_pattern):
    if isinstance(file_pattern, list):
        if not file_pattern:
            raise ValueError("Argument `file_pattern` should not be empty.")
    names = _core.match_filenames_once(_patterns(file_pattern))
    if not names:
        raise ValueError("No files match `file_pattern` %s." % (file_pattern,))
    return [_text(n) for n in names]


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None, label_name=None,
                     select_columns=None, field_delim=",", use_quote_delim=True, na_value="", header=True,
                     num_epochs=None, shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False, num_rows_for_inference=100,
                     compression_type=None, ignore_errors=False, encoding="utf-8"):
    """``tf.data.experimental.make_csv_dataset``: batches of CSV records as dicts of column name to
    a [batch] tensor (with `label_name`: (features, label) pairs), the files and records shuffled
    and repeated as TF does (the same seeds give the same order). Column names come from the header
    and dtypes, unless given, are inferred from the first `num_rows_for_inference` rows as TF infers
    them (int32, int64, float32, float64, then string)."""
    data = _data()
    npr = 1 if num_parallel_reads is None else data._int(num_parallel_reads, "num_parallel_reads")
    prefetch = data.AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size
    filenames = _file_names(file_pattern)
    dataset = data.Dataset.from_tensor_slices(np.array([f.encode() for f in filenames], dtype=object))
    if shuffle:
        dataset = dataset.shuffle(len(filenames), shuffle_seed)
    kwargs = _csv_kwargs(field_delim, use_quote_delim)
    open_fn = None
    if column_names is None or column_defaults is None:
        open_fn = _open_text(compression_type)
    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` arguments. Neither is provided.")
        column_names = _infer_column_names(filenames, kwargs, open_fn)
    column_names = list(column_names)
    if len(column_names) != len(set(column_names)):
        raise ValueError("Either `column_names` argument or CSV header row contains duplicate column names.")
    if select_columns is not None:
        select_columns = _sorted_col_indices(select_columns, column_names)
    if column_defaults is None:
        column_defaults = _infer_column_defaults(filenames, len(column_names), kwargs, na_value, header,
                                                 num_rows_for_inference, select_columns, open_fn)
    if select_columns is not None and len(column_defaults) != len(select_columns):
        raise ValueError("If specified, `column_defaults` and `select_columns` must have the same length: "
                         "`column_defaults` has length %d, `select_columns` has length %d." %
                         (len(column_defaults), len(select_columns)))
    if select_columns is not None and len(column_names) > len(select_columns):
        column_names = [column_names[i] for i in select_columns]
    if label_name is not None and label_name not in column_names:
        raise ValueError("`label_name` provided must be one of the columns: %s. Received: %s." %
                         (column_names, label_name))

    def filename_to_dataset(filename):
        return CsvDataset(filename, record_defaults=column_defaults, field_delim=field_delim,
                          use_quote_delim=use_quote_delim, na_value=na_value, select_cols=select_columns,
                          header=header, compression_type=compression_type, _ignore_errors=ignore_errors)

    # The interleave is built directly: Dataset.interleave would open the first file to learn the
    # structure, and that pass would advance the file shuffle's epoch (TF's order would be lost).
    def open_file(components):
        return filename_to_dataset(components[0])._core
    _, enums = _record_defaults(column_defaults)
    parallel = npr if npr == data.AUTOTUNE or npr > 1 else None
    core = _d.interleave_py(dataset._core, open_file, enums, [[]] * len(enums), npr, 1, parallel, not sloppy)
    dataset = data.Dataset(core, tuple(data._LEAF for _ in enums))
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None)
    # Columns to a dict (with the label apart): a change of structure, no copy.
    features = collections.OrderedDict((n, data._LEAF) for n in column_names)
    label_index = None if label_name is None else column_names.index(label_name)
    core = _d.select(dataset._core, _dict_order(column_names, label_index))
    if label_name is None:
        structure = {n: data._LEAF for n in sorted(column_names)}
    else:
        del features[label_name]
        structure = ({n: data._LEAF for n in sorted(features)}, data._LEAF)
    return data.Dataset(core, structure).prefetch(prefetch)


def _dict_order(column_names, label_index):
    """The flat component order of the dict structure: sorted feature names, then the label."""
    features = [(n, i) for i, n in enumerate(column_names) if i != label_index]
    order = [i for _, i in sorted(features)]
    if label_index is not None:
        order.append(label_index)
    return order
