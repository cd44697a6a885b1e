"""sluice.io.read_file, matching_files and gfile (local files), and the native sluice.data.ops.read_file."""

import os

import numpy as np
import pytest

import sluice as sl
from sluice import errors


@pytest.fixture
def files(tmp_path):
    (tmp_path / "b.txt").write_bytes(b"bee")
    (tmp_path / "a.txt").write_bytes(b"a\x00a")
    (tmp_path / "c.bin").write_bytes(b"")
    (tmp_path / "sub").mkdir()
    return tmp_path


def test_read_file_gives_the_whole_file_as_bytes(files):
    assert sl.io.read_file(str(files / "a.txt")) == b"a\x00a"
    assert sl.io.read_file(os.fsencode(files / "c.bin")) == b""
    assert sl.io.read_file(np.array(str(files / "b.txt").encode(), dtype=object)) == b"bee"


def test_read_file_errors_are_tfs_and_name_the_file(files):
    missing = str(files / "missing.txt")
    with pytest.raises(errors.NotFoundError, match="missing.txt"):
        sl.io.read_file(missing)
    with pytest.raises(errors.FailedPreconditionError, match="sub"):
        sl.io.read_file(str(files / "sub"))
    with pytest.raises(errors.InvalidArgumentError, match="must be scalar"):
        sl.io.read_file([str(files / "a.txt")])


def test_matching_files_is_sorted_and_empty_when_nothing_matches(files):
    d = str(files)
    assert sl.io.matching_files(d + "/*.txt") == [d + "/a.txt", d + "/b.txt"]
    assert sl.io.matching_files([d + "/*.bin", d + "/a*"]) == [d + "/c.bin", d + "/a.txt"]
    assert sl.io.matching_files(d + "/*.none") == []
    assert sl.io.gfile.glob(d + "/*") == [d + "/a.txt", d + "/b.txt", d + "/c.bin", d + "/sub"]


def test_gfile_reads_writes_and_lists_local_files(files):
    g = sl.io.gfile
    d = str(files)
    with g.GFile(d + "/w.txt", "w") as f:
        f.write("héllo\n")
    assert g.GFile(d + "/w.txt").read() == "héllo\n"
    assert g.Open(d + "/w.txt", "rb").read() == "héllo\n".encode()
    assert g.exists(d + "/w.txt") and not g.exists(d + "/nope")
    assert g.isdir(d + "/sub") and not g.isdir(d + "/w.txt")
    g.makedirs(d + "/x/y/z")
    g.makedirs(d + "/x/y/z")  # an existing directory is fine
    assert sorted(g.listdir(d)) == ["a.txt", "b.txt", "c.bin", "sub", "w.txt", "x"]
    g.remove(d + "/w.txt")
    assert not g.exists(d + "/w.txt")
    assert g.Glob is g.glob and g.MakeDirs is g.makedirs and g.ListDirectory is g.listdir


def test_gfile_errors_are_tfs(files):
    g = sl.io.gfile
    d = str(files)
    with pytest.raises(errors.NotFoundError, match="nope"):
        g.remove(d + "/nope")
    with pytest.raises(errors.NotFoundError, match="Could not find directory"):
        g.listdir(d + "/nope")
    with pytest.raises(errors.NotFoundError, match="nope"):
        g.GFile(d + "/nope").read()
    with pytest.raises(errors.FailedPreconditionError):
        g.makedirs(d + "/a.txt/x")


def test_native_read_file_reads_listed_files_in_order(files):
    d = str(files)
    ds = sl.data.Dataset.list_files(d + "/*.txt", shuffle=False).map(sl.data.ops.read_file(), num_parallel_calls=2)
    assert [bytes(x) for x in ds] == [b"a\x00a", b"bee"]
    pairs = sl.data.Dataset.from_tensor_slices(([d + "/b.txt", d + "/c.bin"], [1, 2]))
    got = [(bytes(c), int(i)) for c, i in pairs.map(sl.data.ops.read_file(component=0))]
    assert got == [(b"bee", 1), (b"", 2)]


def test_native_read_file_then_decode_jpeg(tmp_path):
    rng = np.random.default_rng(3)
    images = [rng.integers(0, 255, (6 + i, 5, 3), dtype=np.uint8) for i in range(3)]
    for i, img in enumerate(images):
        (tmp_path / ("%d.jpg" % i)).write_bytes(sl.image.encode_jpeg(img))
    ds = (sl.data.Dataset.list_files(str(tmp_path / "*.jpg"), shuffle=False)
          .map(sl.data.ops.read_file()).map(sl.data.ops.decode_jpeg(channels=3)))
    got = list(ds)
    for i, img in enumerate(images):
        expected = sl.image.decode_jpeg(sl.io.read_file(str(tmp_path / ("%d.jpg" % i))), channels=3)
        np.testing.assert_array_equal(got[i], expected)


def test_native_read_file_error_names_the_file(files):
    ds = sl.data.Dataset.from_tensor_slices([str(files / "a.txt"), str(files / "gone.txt")])
    it = iter(ds.map(sl.data.ops.read_file()))
    assert bytes(next(it)) == b"a\x00a"
    with pytest.raises(errors.NotFoundError, match="gone.txt"):
        next(it)


def test_native_read_file_needs_a_string_scalar_component():
    with pytest.raises(errors.InvalidArgumentError, match="read_file"):
        sl.data.Dataset.range(3).map(sl.data.ops.read_file())
    with pytest.raises(errors.InvalidArgumentError, match="scalar"):
        sl.data.Dataset.from_tensors(["a", "b"]).map(sl.data.ops.read_file())
