"""Compiling a batcher's input subgraph into the engine's native stage chain.

Filled in below; returns None when the subgraph is not all native.
"""


def try_native_batch(kind_name, tensors_list, batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                     allow_smaller_final_batch, num_threads, min_after_dequeue, seed, keep_input, structure, name):
    return None
