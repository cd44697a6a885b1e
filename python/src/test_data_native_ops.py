"""sluice.data.ops element ops (C++ NativeMaps): values, signatures, fusion of
consecutive maps, per-element randomness from (seed, epoch, index), errors."""

import numpy as np
import pytest

import sluice
from sluice import data as sd

ops = sd.ops
RECORD = 1 + 32 * 32 * 3


def records(n):
    rs = np.random.RandomState(0)
    out = []
    for i in range(n):
        out.append(bytes([i % 10]) + rs.randint(0, 256, RECORD - 1, dtype=np.uint8).tobytes())
    return out


def cifar_image_ops(seed):
    """CIFAR-10's distorted_inputs on a record's image bytes (label dropped)."""
    return [ops.decode_raw(sluice.uint8), ops.slice([1], [-1]), ops.reshape([3, 32, 32]), ops.transpose([1, 2, 0]),
            ops.cast(sluice.float32), ops.random_crop([24, 24, 3], seed=seed), ops.random_flip_left_right(seed=seed),
            ops.random_brightness(63, seed=seed), ops.random_contrast(0.2, 1.8, seed=seed),
            ops.per_image_standardization()]


def run(ds):
    return [x for x in ds]


def test_decode_reshape_transpose_gives_hwc_pixels():
    rs = records(2)
    ds = sd.Dataset.from_tensor_slices(rs)
    for f in cifar_image_ops(0)[:4]:
        ds = ds.map(f)
    got = run(ds)
    want = np.frombuffer(rs[1], np.uint8)[1:].reshape(3, 32, 32).transpose(1, 2, 0)
    np.testing.assert_array_equal(got[1], want)
    assert got[1].dtype == np.uint8


def test_consecutive_native_maps_fuse_into_one_stage():
    ds = sd.Dataset.from_tensor_slices(records(3))
    fused = ds
    for f in cifar_image_ops(1):
        fused = fused.map(f)
    # One map stage over the source, holding every op.
    assert fused._native_chain[0] is ds and len(fused._native_chain[3]) == 10
    unfused = ds
    for i, f in enumerate(cifar_image_ops(1)):
        unfused = unfused.map(f, num_parallel_calls=1 + i % 2)  # a new npc starts a new stage
    assert unfused._native_chain[0] is not ds
    chained = ds.map(ops.chain(*cifar_image_ops(1)))
    a, b, c = run(fused), run(unfused), run(chained)
    for x, y, z in zip(a, b, c):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(x, z)
    assert a[0].shape == (24, 24, 3) and a[0].dtype == np.float32
    assert abs(float(a[0].mean())) < 1e-4


def test_element_spec_follows_the_chain():
    ds = sd.Dataset.from_tensor_slices(records(1)).map(ops.chain(*cifar_image_ops(2)))
    spec = ds.element_spec
    assert spec.dtype == sluice.float32
    assert list(spec.shape) == [24, 24, 3]


def test_random_ops_depend_on_seed_epoch_and_index_only():
    ds = sd.Dataset.from_tensor_slices(records(8)).repeat(2)

    def images(npc, seed):
        return np.stack(run(ds.map(ops.chain(*cifar_image_ops(seed)), num_parallel_calls=npc)))
    one, four = images(None, 7), images(4, 7)
    np.testing.assert_array_equal(one, four)
    assert not np.array_equal(one[0], one[8])  # epoch 2 draws anew
    assert not np.array_equal(one, images(None, 8))


def test_component_by_key_leaves_the_others():
    ds = sd.Dataset.from_tensor_slices({"image": np.arange(24, dtype=np.uint8).reshape(2, 2, 2, 3),
                                        "label": np.array([1, 2], np.int64)})
    ds = ds.map(ops.one_hot(3, component="label")).map(ops.cast(sluice.float32, component="image"))
    got = run(ds)
    np.testing.assert_array_equal(got[1]["label"], [0, 0, 1])
    assert got[1]["image"].dtype == np.float32 and got[1]["image"][0, 0, 0] == 12


def test_resize_normalize_and_strided_slice():
    img = np.arange(4 * 4 * 3, dtype=np.uint8).reshape(4, 4, 3)
    ds = sd.Dataset.from_tensors(img)
    got = run(ds.map(ops.strided_slice([0, 0, 0], [0, 0, 2], [2, -1, 1], begin_mask=2, end_mask=3)))[0]
    np.testing.assert_array_equal(got, img[::2, ::-1, :2])
    got = run(ds.map(ops.resize([2, 2])).map(ops.normalize(0.5, 0.25)))[0]
    assert got.shape == (2, 2, 3) and got.dtype == np.float32


def test_errors_at_build_and_per_element():
    ds = sd.Dataset.from_tensor_slices(np.zeros((2, 4), np.int64))
    with pytest.raises(sluice.errors.InvalidArgumentError, match="decode_raw"):
        ds.map(ops.decode_raw(sluice.uint8))
    with pytest.raises(ValueError):
        ops.random_contrast(1.0, 0.5)
    bad = sd.Dataset.from_tensor_slices([b"abc", b"abcd"]).map(ops.decode_raw(sluice.uint8)).map(ops.reshape([4]))
    it = iter(bad)
    with pytest.raises(sluice.errors.InvalidArgumentError, match="reshape"):
        next(it)
    with pytest.raises(TypeError, match="chain"):
        ops.chain(lambda x: x)
