"""_core.BatchOptions: the batchers' options bound once, filled by keyword, with the C++ defaults."""
import pytest

from sluice import _core
from sluice import dtypes


def test_defaults_are_the_cpp_structs():
    o = _core.BatchOptions()
    assert (o.batch_size, o.num_threads, o.capacity, o.enqueue_many) == (0, 1, 32, False)
    assert (o.dtypes, o.shapes, o.dynamic_pad, o.allow_smaller_final_batch) == ([], [], False, False)
    assert (o.shared_name, o.name, o.min_after_dequeue, o.seed) == ("", "", 0, None)


def test_options_given_by_keyword_replace_only_those_defaults():
    o = _core.BatchOptions(batch_size=4, dtypes=[dtypes.int64.as_datatype_enum, dtypes.string.as_datatype_enum],
                           shapes=[[2, -1], None], seed=7)
    assert (o.batch_size, o.seed, o.capacity) == (4, 7, 32)
    assert o.dtypes == [dtypes.int64.as_datatype_enum, dtypes.string.as_datatype_enum]
    assert o.shapes == [[2, -1], None]


def test_positional_arguments_are_refused():
    with pytest.raises(TypeError):
        _core.BatchOptions(4)


def test_new_batcher_takes_the_options_object_only():
    with pytest.raises(TypeError):
        _core.new_batcher("batch", [], False, True, 4, 1, 32, False, [], [], False, False, "", "", 0, None)
