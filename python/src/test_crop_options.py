"""_core.RandomResizedCropOptions: the fused crop's options bound once, filled by keyword, with the C++ defaults."""
import pytest

import numpy as np

from sluice import _core
from sluice import _crop_options
from sluice import _input


def test_defaults_are_the_cpp_structs():
    o = _core.RandomResizedCropOptions()
    assert (o.height, o.width) == (224, 224)
    assert o.scale == pytest.approx((0.08, 1.0))
    assert o.ratio == pytest.approx((3.0 / 4.0, 4.0 / 3.0))
    assert o.flip_probability == pytest.approx(0.5)
    assert o.mean == pytest.approx([0.485, 0.456, 0.406])
    assert o.std == pytest.approx([0.229, 0.224, 0.225])
    assert (o.data_format, o.sampler, o.method) == ("CHW", "torchvision", "bilinear")
    assert (o.antialias, o.channels, o.max_attempts, o.dct_scaling, o.dct_method) == (False, 3, 10, False, "")


def test_options_given_by_keyword_replace_only_those_defaults():
    o = _core.RandomResizedCropOptions(height=32, width=48, data_format="HWC", sampler="tensorflow")
    assert (o.height, o.width, o.data_format, o.sampler) == (32, 48, "HWC", "tensorflow")
    assert o.max_attempts == 10 and o.method == "bilinear"


def test_positional_arguments_are_refused():
    with pytest.raises(TypeError):
        _core.RandomResizedCropOptions(32, 48)


@pytest.mark.parametrize("bad", [{"data_format": "CWH"}, {"sampler": "pil"}, {"method": "cubicle"}])
def test_unknown_names_are_value_errors(bad):
    with pytest.raises(ValueError):
        _core.RandomResizedCropOptions(**bad)


def _crop(**options):
    return _crop_options.crop_options(_input._as_int, **options)


def test_python_spellings_map_onto_the_struct_and_none_keeps_the_default():
    o = _crop(size=(32, 48), flip=False, mean=None, channels=1)
    assert (o.height, o.width, o.flip_probability, o.channels) == (32, 48, 0.0, 1)
    assert o.mean == pytest.approx([0.485, 0.456, 0.406])
    assert _crop(size=64).height == 64
    assert _crop(flip=True).flip_probability == pytest.approx(0.5)
    assert _crop(flip=True, flip_probability=0.25).flip_probability == pytest.approx(0.25)
    assert _crop(mean=np.array([[0.5]]), std=()).mean == [0.5]
    assert _crop(std=()).std == []


def test_a_pair_option_must_hold_two_values():
    with pytest.raises(ValueError, match="'scale' must be a pair"):
        _crop(scale=(0.1, 0.5, 1.0))


def test_an_unknown_option_is_a_type_error():
    with pytest.raises(TypeError, match="colour"):
        _crop(colour="red")


def test_every_front_end_declares_no_default_of_its_own():
    """The defaults live in the bound struct only: each front end's options default to None."""
    import inspect
    from sluice import data, image
    from sluice._input import NativeProducer
    fronts = [image.decode_random_resized_crop, image.sample_random_resized_crop,
              NativeProducer.map_random_resized_crop, data.ops.random_resized_crop]
    for fn in fronts:
        for name, p in inspect.signature(fn).parameters.items():
            if name in ("scale", "ratio", "mean", "std", "data_format", "sampler", "method", "antialias",
                        "channels", "max_attempts", "flip_probability", "dct_scaling", "dct_method"):
                assert p.default is None, (fn.__qualname__, name)
