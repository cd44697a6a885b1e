"""A TF 1 program's shape: train for some steps, stop, then evaluate to the end of the input.

TensorFlow 1 builds the training and the evaluation pipelines in one graph
and runs each phase in its own Session: the second session starts from fresh
queues, so evaluation sees every example exactly once. sluice does the same
with sluice.train.Session. Prints "OK" after checking the evaluation saw each
of its 100 examples once.
"""
import sys

import numpy as np

import sluice as sl


def main(train_steps=3):
    graph = sl.train.Graph()
    with graph.as_default():
        train_rows = sl.train.slice_input_producer([np.arange(10000, 20000)], shuffle=True)
        train_batch = sl.train.batch(train_rows, batch_size=32)
        eval_rows = sl.train.slice_input_producer([np.arange(100)], num_epochs=1, shuffle=False)
        eval_batch = sl.train.batch(eval_rows, batch_size=32, allow_smaller_final_batch=True)

    with sl.train.Session(graph=graph) as sess:
        coord = sl.train.Coordinator()
        threads = sl.train.start_queue_runners(sess=sess, coord=coord)
        for step in range(train_steps):
            sess.run(train_batch)  # a training step
        coord.request_stop()
        coord.join(threads)
        print("trained %d steps" % train_steps)

    seen = []
    with sl.train.Session(graph=graph) as sess:
        coord = sl.train.Coordinator()
        threads = sl.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while not coord.should_stop():
                seen.extend(sess.run(eval_batch).tolist())
        except sl.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads)
    assert sorted(seen) == list(range(100)), "evaluation lost or repeated examples"
    print("OK: evaluated %d examples, each once" % len(seen))


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:]])
