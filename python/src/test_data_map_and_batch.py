"""map_and_batch_fusion in sluice.data: a parallel map followed by batch runs
as one C++ stage (MapAndBatch) that gives the batches map then batch gives."""

import numpy as np
import pytest

from sluice import data as sd
from sluice import errors
from sluice import image as simage


def _no_fusion(ds):
    options = sd.Options()
    options.experimental_optimization.map_and_batch_fusion = False
    return ds.with_options(options)


def _jpegs(n):
    rng = np.random.default_rng(3)
    return [simage.encode_jpeg(rng.integers(0, 255, (30 + i, 41, 3), dtype=np.uint8)) for i in range(n)]


def test_batch_of_a_parallel_map_is_one_stage():
    ds = sd.Dataset.range(10).map(lambda x: x * 2, num_parallel_calls=2).batch(4)
    assert ds._core.debug_name() == "MapAndBatch"
    assert sd.Dataset.range(10).map(lambda x: x * 2).batch(4)._core.debug_name() == "Batch"


@pytest.mark.parametrize("drop_remainder", [False, True])
def test_fused_crop_gives_the_batches_of_map_then_batch(drop_remainder):
    def build():
        return (sd.Dataset.from_tensor_slices({"image": _jpegs(10), "label": np.arange(10)})
                .map(sd.ops.random_resized_crop(16, component="image", seed=5), num_parallel_calls=3)
                .batch(4, drop_remainder=drop_remainder))
    fused, plain = list(build()), list(_no_fusion(build()))
    assert len(fused) == (2 if drop_remainder else 3)
    assert len(fused) == len(plain)
    for f, p in zip(fused, plain):
        np.testing.assert_array_equal(f["image"], p["image"])
        np.testing.assert_array_equal(f["label"], p["label"])
    assert fused[0]["image"].shape == (4, 3, 16, 16)


def test_a_failing_python_function_fails_its_batch_and_the_next_batch_follows():
    def fn(x):
        if x == 5:
            raise ValueError("bad element")
        return x
    it = iter(sd.Dataset.range(12).map(fn, num_parallel_calls=2).batch(4))
    assert next(it).tolist() == [0, 1, 2, 3]
    with pytest.raises(errors.UnknownError, match="bad element"):
        next(it)
    assert next(it).tolist() == [8, 9, 10, 11]
    with pytest.raises(StopIteration):
        next(it)


def test_experimental_map_and_batch_is_fused():
    ds = sd.Dataset.range(7).apply(sd.experimental.map_and_batch(lambda x: x + 1, 3, num_parallel_calls=2))
    assert ds._core.debug_name() == "MapAndBatch"
    assert [b.tolist() for b in ds] == [[1, 2, 3], [4, 5, 6], [7]]


def test_options_set_after_the_batch_turn_the_fusion_off():
    def names(ds):
        it = iter(ds)
        list(it)
        return [s["name"] for s in it.stats()]
    ds = sd.Dataset.range(8).map(lambda x: x, num_parallel_calls=2).batch(4).prefetch(1)
    assert "MapAndBatch" in names(ds)
    unfused = names(_no_fusion(ds))
    assert "Batch" in unfused and "ParallelMap" in unfused and "MapAndBatch" not in unfused
