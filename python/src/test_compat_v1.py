"""sluice.compat.v1's symbolic layer: tensors, sessions, variables, queues, and their TF 1 semantics."""

import threading

import numpy as np
import pytest

import sluice as sl
import sluice.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def test_nothing_runs_until_session_run():
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    enqueue = q.enqueue([5])
    with tf.Session() as sess:
        assert sess.run(q.size()) == 0
        sess.run(enqueue)
        assert sess.run(q.size()) == 1


def test_tensor_has_dtype_shape_and_name():
    c = tf.constant([[1, 2, 3]], name="c")
    assert c.dtype == tf.int32 and c.shape.as_list() == [1, 3] and c.get_shape().ndims == 2
    assert c.name == "c:0"
    p = tf.placeholder(tf.float32, [None, 2])
    p.set_shape([4, None])
    assert p.shape.as_list() == [4, 2]
    assert tf.constant(1.5).dtype == tf.float32 and tf.constant("x").dtype == tf.string


def test_python_operators_follow_tf_dtypes():
    a = tf.constant([1, 2, 3])
    with tf.Session() as sess:
        add, div, floordiv, lt, neg, item = sess.run([a + 1, a / 2, a // 2, a < 2, -a, a[1]])
    assert add.tolist() == [2, 3, 4] and add.dtype == np.int32
    assert div.dtype == np.float64 and div.tolist() == [0.5, 1.0, 1.5]
    assert floordiv.tolist() == [0, 1, 1] and lt.tolist() == [True, False, False]
    assert neg.tolist() == [-1, -2, -3] and item == 2


def test_mismatched_dtypes_raise_at_graph_construction():
    with pytest.raises(TypeError, match="does not match"):
        tf.constant([1, 2]) + tf.constant([1.0, 2.0])


def test_each_op_runs_once_per_run():
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 2, 3]]))
        x = q.dequeue()
        assert sess.run([x, x * 10]) == [1, 10]  # one dequeue feeds both fetches


def test_feed_dict_and_missing_feed():
    p = tf.placeholder(tf.int32, [None])
    with tf.Session() as sess:
        assert sess.run(tf.reduce_sum(p), feed_dict={p: [1, 2, 3]}) == 6
        with pytest.raises(sl.errors.InvalidArgumentError, match="must feed a value for placeholder"):
            sess.run(p)
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            sess.run(p, feed_dict={p: [[1]]})


def test_variable_counter_per_session():
    v = tf.Variable(0)
    inc = v.assign_add(1)
    with tf.Session() as sess:
        with pytest.raises(sl.errors.FailedPreconditionError, match="uninitialized value"):
            sess.run(v)
        sess.run(tf.global_variables_initializer())
        assert [sess.run(inc) for _ in range(3)] == [1, 2, 3]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(v) == 0


def test_variable_assign_add_is_atomic_across_threads():
    v = tf.Variable(0)
    inc = v.assign_add(1)
    with tf.Session() as sess:
        sess.run(v.initializer)
        threads = [threading.Thread(target=lambda: [sess.run(inc) for _ in range(200)]) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sess.run(v) == 800


def test_interactive_session_and_eval():
    sess = tf.InteractiveSession()
    try:
        assert (tf.constant([1, 2]) * 3).eval().tolist() == [3, 6]
    finally:
        sess.close()
    with pytest.raises(ValueError, match="No default session"):
        tf.constant(1).eval()


def test_nested_fetches_keep_their_structure():
    a, b = tf.constant(1), tf.constant("s")
    with tf.Session() as sess:
        out = sess.run({"x": [a, (b,)], "y": a})
    assert out == {"x": [1, (b"s",)], "y": 1}


def test_run_options_timeout_in_ms_is_deadline_exceeded():
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    with tf.Session() as sess:
        with pytest.raises(sl.errors.DeadlineExceededError):
            sess.run(q.dequeue(), options=tf.RunOptions(timeout_in_ms=20))


def test_closed_session_refuses_runs_and_closes_its_queues():
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    sess = tf.Session()
    sess.run(q.enqueue([1]))
    ended = []
    enqueue = q.enqueue([2])

    def enqueue_again():  # blocks on the full queue until close cancels it (or finds the Session closed)
        try:
            sess.run(enqueue)
        except (sl.errors.CancelledError, RuntimeError) as e:
            ended.append(type(e))
    t = threading.Thread(target=enqueue_again)
    t.start()
    sess.close()
    t.join(10)
    assert not t.is_alive() and len(ended) == 1
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(q.size())


def test_queue_runner_takes_enqueue_ops():
    q = tf.FIFOQueue(4, tf.int32, shapes=[[]])
    counter = tf.Variable(0)
    enqueue = q.enqueue([counter.count_up_to(6)])
    qr = tf.train.QueueRunner(q, [enqueue] * 2)
    tf.train.add_queue_runner(qr)
    got = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        with pytest.raises(sl.errors.OutOfRangeError):
            while True:
                got.append(sess.run(q.dequeue()))
        coord.request_stop()
        coord.join(threads)
    assert sorted(got) == [0, 1, 2, 3, 4, 5]


def test_one_hot_reshape_stack_string_to_number():
    with tf.Session() as sess:
        hot, r, s, n = sess.run([tf.one_hot([0, 2], 3), tf.reshape(tf.range(6), [-1, 3]),
                                 tf.stack([tf.constant(1), tf.constant(2)]),
                                 tf.string_to_number(tf.constant(["1.5", "2"]))])
    assert hot.tolist() == [[1, 0, 0], [0, 0, 1]] and hot.dtype == np.float32
    assert r.tolist() == [[0, 1, 2], [3, 4, 5]] and s.tolist() == [1, 2]
    assert n.tolist() == [1.5, 2.0] and n.dtype == np.float32
    assert tf.reshape(tf.range(6), [-1, 3]).shape.as_list() == [2, 3]


def test_unprovided_names_point_to_the_eager_api():
    with pytest.raises(NotImplementedError, match="sluice's eager API"):
        tf.py_func  # noqa: B018 - the attribute access is the test
    with pytest.raises(NotImplementedError, match="Saver"):
        tf.train.Saver()
    with pytest.raises(NotImplementedError, match=r"tf\.image\.draw_bounding_boxes"):
        tf.image.draw_bounding_boxes  # noqa: B018
    assert not hasattr(tf.train, "MomentumOptimizer")


def test_sluice_compat_v1_is_reachable_from_sluice():
    assert sl.compat.v1 is tf


def test_runner_error_stops_the_coordinator_and_names_the_op(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("1,2\n3,x\n")
    fq = tf.train.string_input_producer([str(path)], num_epochs=1, shuffle=False)
    _, line = tf.TextLineReader().read(fq)
    a, b = tf.decode_csv(line, [[0], [0]], name="parse_csv")
    batch = tf.train.batch([a, b], batch_size=1)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        assert sess.run(batch)[0].tolist() == [1]
        with pytest.raises(sl.errors.InvalidArgumentError, match="parse_csv.*DecodeCSV"):
            coord.join(threads, stop_grace_period_secs=10)
