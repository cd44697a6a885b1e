"""The namespaces of sluice.compat.v1 (``tf.io``, ``tf.io.gfile``, ``tf.strings``, ``tf.nn``, ...) and the error
for a TF name that sluice.compat.v1 does not provide.

A namespace is a class whose metaclass answers a missing attribute with
NotProvidedError (also an AttributeError, so ``hasattr`` is False), naming
the TF symbol and what to write instead: the same error as the top level's
and the modules' (``module_getattr``). Each suggestion names something that
exists (``suggestion`` resolves it): a sluice function of the same name, a
numpy or Python one, or else a Python function in ``sl.data.Dataset.map``.
"""

import builtins
import importlib

import numpy as np

# TF symbols (paths below tf.) whose replacement is not found by name: (replacement, how).
_REPLACEMENTS = {
    "strings.split": ("bytes.split", "on each string (tf.strings.split's ragged result becomes a list)"),
    "string_split": ("bytes.split", "on each string"),
    "strings.regex_replace": ("re.sub", "on each string (with bytes patterns)"),
    "regex_replace": ("re.sub", "on each string (with bytes patterns)"),
    "strings.regex_full_match": ("re.fullmatch", "on each string"),
    "strings.join": ("bytes.join", ""),
    "string_join": ("bytes.join", ""),
    "strings.length": ("len", "of each string"),
    "strings.lower": ("bytes.lower", ""),
    "strings.upper": ("bytes.upper", ""),
    "strings.strip": ("bytes.strip", ""),
    "strings.substr": ("bytes", "slicing (s[pos:pos + len])"),
    "substr": ("bytes", "slicing (s[pos:pos + len])"),
    "strings.format": ("str.format", ""),
    "strings.as_string": ("str", ""),
    "as_string": ("str", ""),
    "strings.unicode_decode": ("bytes.decode", ""),
    "data.experimental.shuffle_and_repeat": (
        "sl.data.Dataset.shuffle", "then .repeat(count): dataset.shuffle(buffer_size, seed).repeat(count)"),
    "data.experimental.make_batched_features_dataset": (
        "sl.data.TFRecordDataset",
        "over sl.data.Dataset.list_files(pattern), then .batch(batch_size).map(sl.data.ops.parse_example(features))"),
    "data.experimental.make_tf_record_dataset": ("sl.data.TFRecordDataset", "then .batch(batch_size)"),
    "py_func": ("sl.data.Dataset.map", "with the Python function (compat ops run eagerly there)"),
    "py_function": ("sl.data.Dataset.map", "with the Python function (compat ops run eagerly there)"),
    "numpy_function": ("sl.data.Dataset.map", "with the Python function (compat ops run eagerly there)"),
    "cond": ("sl.data.Dataset.map", "with a Python if (compat ops run eagerly there)"),
    "while_loop": ("sl.data.Dataset.map", "with a Python loop (compat ops run eagerly there)"),
    "get_variable": ("sl.compat.v1.Variable", "(tf.Variable)"),
    "gfile.FastGFile": ("sl.io.gfile.GFile", ""),
    "io.gfile.GFile": ("sl.io.gfile.GFile", ""),
}

# Where a TF namespace's names are looked for in sluice (then numpy, then the top level of sluice).
_EAGER_HOMES = {
    "": ["sl", "np"],
    "io": ["sl.io"],
    "io.gfile": ["sl.io.gfile"],
    "gfile": ["sl.io.gfile"],
    "data": ["sl.data", "sl.data.Dataset"],
    "data.experimental": ["sl.data.experimental", "sl.data.Dataset"],
    "image": ["sl.image"],
    "train": ["sl.train"],
    "train.queue_runner": ["sl.train"],
    "queue": ["sl.queue"],
    "python_io": ["sl.python_io"],
    "errors": ["sl.errors"],
    "dtypes": ["sl.dtypes"],
    "sparse": ["sl"],
    "math": ["np"],
    "random": ["np.random"],
    "linalg": ["np.linalg"],
    "nn": [],
    "logging": ["logging"],
}

_ROOTS = {"sl": "sluice", "np": "numpy", "re": "re", "os": "os", "logging": "logging"}

_FALLBACK = ("sl.data.Dataset.map", "with a Python function (compat ops run eagerly there), or numpy on the "
             "fetched values")


def resolve(dotted):
    """The object `dotted` names ("sl.io.read_file", "np.cumsum", "bytes.split"); AttributeError if none."""
    head, _, rest = dotted.partition(".")
    if head in _ROOTS:
        obj = importlib.import_module(_ROOTS[head])
    else:
        obj = getattr(builtins, head)
    for part in rest.split(".") if rest else ():
        obj = getattr(obj, part)
    return obj


def _exists(dotted):
    try:
        resolve(dotted)
    except (AttributeError, ImportError, NotImplementedError):
        return False
    return True


def suggestion(path):
    """(replacement, how) for TF symbol `path` (below tf.): a dotted name that resolves, and a note."""
    if path in _REPLACEMENTS:
        return _REPLACEMENTS[path]
    module, _, name = path.rpartition(".")
    homes = _EAGER_HOMES.get(module, ["sl." + module] if module else [])
    for home in homes + ["sl"]:
        candidate = "%s.%s" % (home, name)
        if _exists(candidate):
            return candidate, ""
    if module in ("math", "") and _exists("np." + name):
        return "np." + name, "on the fetched values"
    return _FALLBACK


def not_provided_error(path):
    """NotProvidedError for TF symbol `path` (below tf.), naming what to write instead."""
    from sluice.compat.v1._graph import NotProvidedError  # noqa: PLC0415 - _graph imports this module
    replacement, how = suggestion(path)
    return NotProvidedError(
        "sluice.compat.v1 does not provide tf.%s. It is a layer for TF 1 input pipelines (queues, readers, "
        "producers, batchers, parsing, image ops, tf.data); write this step with sluice's eager API (import sluice "
        "as sl; import numpy as np) in a tf.data map function or on the fetched values. Instead of tf.%s, use: %s%s. "
        "See docs/porting-tf1.md." % (path, path, replacement, " " + how if how else ""))


class _NamespaceType(type):
    """The metaclass of a namespace: a missing name is NotProvidedError; a delegate is asked first."""

    def __getattr__(cls, name):
        if name.startswith("_"):
            raise AttributeError(name)
        delegate = cls.__dict__.get("_delegate")
        if delegate is not None and hasattr(delegate, name):
            return getattr(delegate, name)
        raise not_provided_error("%s.%s" % (cls._tf_path, name))

    def __dir__(cls):
        names = set(super().__dir__())
        delegate = cls.__dict__.get("_delegate")
        if delegate is not None:
            names.update(n for n in dir(delegate) if not n.startswith("_"))
        return sorted(names)

    def __repr__(cls):
        return "<sluice.compat.v1 namespace tf.%s>" % cls._tf_path


def namespace(tf_path, names=None, delegate=None):
    """A namespace ``tf.<tf_path>`` holding `names` (a dict), then `delegate`'s attributes."""
    attrs = {k: (staticmethod(v) if callable(v) and not isinstance(v, (type, staticmethod)) else v)
             for k, v in (names or {}).items()}
    attrs.update(_tf_path=tf_path, _delegate=delegate, __doc__="``tf.%s`` of sluice.compat.v1." % tf_path)
    return _NamespaceType(tf_path.rpartition(".")[2], (), attrs)


# TF 1's namespaces that sluice.compat.v1 has nothing of: each name in them is NotProvidedError.
EMPTY_NAMESPACES = (
    "app", "audio", "autograph", "bitwise", "config", "debugging", "distribute", "distributions", "estimator",
    "experimental", "feature_column", "flags", "graph_util", "initializers", "keras", "layers", "linalg", "lite",
    "logging", "lookup", "losses", "manip", "metrics", "mixed_precision", "nn", "profiler", "quantization", "ragged",
    "raw_ops", "resource_loader", "saved_model", "sets", "signal", "spectral", "summary", "sysconfig", "test", "tpu",
    "user_ops", "xla",
)
