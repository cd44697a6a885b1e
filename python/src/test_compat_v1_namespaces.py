"""Every namespace of sluice.compat.v1 answers a TF name it lacks with NotProvidedError naming the TF symbol and a
replacement that exists; tf.io.read_file / matching_files / gfile are provided."""

import re
import types

import pytest

import sluice as sl
import sluice.compat.v1 as tf
from sluice.compat.v1 import _namespaces
from sluice.compat.v1._graph import NotProvidedError

# TF 1 names sluice.compat.v1 does not provide, across its namespaces.
MISSING = [
    "strings.split", "strings.regex_replace", "strings.join", "strings.length", "strings.ngrams",
    "data.experimental.shuffle_and_repeat", "data.experimental.make_batched_features_dataset",
    "data.experimental.rejection_resample", "data.nope_dataset", "io.decode_base64", "io.write_file",
    "io.gfile.FastGFile", "gfile.FastGFile", "image.draw_bounding_boxes", "math.cumsum", "math.segment_sum",
    "nn.relu", "nn.softmax", "random.categorical", "train.Scaffold", "train.queue_runner.QueueRunnerNope",
    "layers.dense", "logging.set_verbosity", "logging.INFO", "sparse.reorder", "queue.StagingArea", "errors.nope",
    "dtypes.nope", "python_io.nope", "linalg.inv", "py_func", "string_split", "regex_replace", "nope_op",
]


def _lookup(path):
    obj = tf
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _message(path):
    with pytest.raises(NotProvidedError) as info:
        _lookup(path)
    return str(info.value)


@pytest.mark.parametrize("path", MISSING)
def test_missing_name_is_not_provided_error_naming_the_tf_symbol(path):
    message = _message(path)
    assert ("does not provide tf.%s." % path) in message and "sluice's eager API" in message
    owner, _, name = path.rpartition(".")
    assert not hasattr(_lookup(owner) if owner else tf, name)
    assert issubclass(NotProvidedError, NotImplementedError) and issubclass(NotProvidedError, AttributeError)


@pytest.mark.parametrize("path", MISSING)
def test_suggested_replacement_resolves(path):
    replacement = re.search(r"use: ([\w.]*\w)", _message(path)).group(1)
    assert _namespaces.resolve(replacement) is not None


def test_suggestions_name_sluice_functions_of_the_same_name_where_they_exist():
    assert "use: sl.io.gfile.GFile" in _message("gfile.FastGFile")
    assert "use: np.cumsum" in _message("math.cumsum")
    assert "use: re.sub" in _message("strings.regex_replace")
    assert "use: sl.data.Dataset.shuffle" in _message("data.experimental.shuffle_and_repeat")


def _namespaces_of(obj, path, seen):
    """(path, namespace) of `obj` and every namespace or compat module below it."""
    out = [(path, obj)]
    for name in dir(obj):
        if name.startswith("_"):
            continue
        child = getattr(obj, name)
        is_compat_module = isinstance(child, types.ModuleType) and child.__name__.startswith("sluice.compat.v1.")
        if (isinstance(child, _namespaces._NamespaceType) or is_compat_module) and id(child) not in seen:
            seen.add(id(child))
            out += _namespaces_of(child, (path + "." if path else "") + name, seen)
    return out


def test_every_namespace_is_guided():
    found = _namespaces_of(tf, "", set())
    paths = {p for p, _ in found}
    assert {"io", "io.gfile", "gfile", "strings", "data", "data.experimental", "image", "math", "train", "nn",
            "random", "queue", "sparse", "errors", "train.queue_runner"} <= paths
    for path, ns in found:
        with pytest.raises(NotProvidedError, match=re.escape("tf.%s%ssurely_not_a_tf_name" % (path, "." if path
                                                                                             else ""))):
            ns.surely_not_a_tf_name  # noqa: B018 - the attribute access is the test


def test_namespaces_keep_what_they_provide():
    assert tf.errors.OutOfRangeError is sl.errors.OutOfRangeError
    assert tf.dtypes.as_dtype("int64") is sl.int64
    assert tf.data.experimental.AUTOTUNE == sl.data.AUTOTUNE
    assert tf.io.gfile.glob is sl.io.gfile.glob and tf.gfile.Glob is sl.io.gfile.glob
    assert tf.gfile.GFile is sl.io.gfile.GFile and tf.io.gfile.exists is sl.io.gfile.exists
    assert tf.io.read_file is tf.read_file and tf.io.matching_files is tf.matching_files
    assert tf.io.parse_single_sequence_example is tf.parse_single_sequence_example
    assert tf.train.queue_runner.QueueRunner is tf.train.QueueRunner


def test_read_file_and_matching_files_are_graph_ops(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"alpha")
    (tmp_path / "b.txt").write_bytes(b"beta")
    with tf.Graph().as_default():
        names = tf.io.matching_files(str(tmp_path / "*.txt"))
        name = tf.placeholder(tf.string, [])
        contents = tf.read_file(name)
        assert names.dtype == tf.string and names.shape.as_list() == [None]
        assert contents.dtype == tf.string and contents.shape.as_list() == []
        with tf.Session() as sess:
            got = sess.run(names)
            assert [bytes(n) for n in got] == [str(tmp_path / "a.txt").encode(), str(tmp_path / "b.txt").encode()]
            assert sess.run(contents, {name: got[1]}) == b"beta"
            with pytest.raises(tf.errors.NotFoundError, match="nope"):
                sess.run(contents, {name: str(tmp_path / "nope")})
