"""Python peers of the image suite (bench/run.sh image): random resized crop
to a normalised 224x224 float32 tensor, single-threaded, per image.

Input: the JPEGs bench/image_benchmark.cc writes into --image-dir (16 at
quality 90, 16 at quality 95, 500x375). One measurement is one pass over 256
(image, seed) pairs: image n % 16 with seed n. Every peer runs once per
repetition, in a shuffled order (interleaved, so load on the shared machine
hits all of them); the report takes the median.

Peers (each returns a float32 tensor normalised with ImageNet's mean/std):
  sluice            sluice.image.decode_random_resized_crop (CHW)
  sluice_antialias  the same with antialias=True (PIL-like filtering)
  pil_torchvision   what torchvision's ImageFolder loader + RandomResizedCrop
                    + RandomHorizontalFlip + ToTensor + Normalize do on a PIL
                    image, written out here because torchvision is not
                    installed: Image.open + convert("RGB") (no draft mode),
                    get_params (torchvision's algorithm, below), img.crop +
                    img.resize(BILINEAR) (F.resized_crop on PIL), transpose
                    FLIP_LEFT_RIGHT, then numpy: HWC uint8 -> CHW float32 / 255,
                    (x - mean) / std
  opencv            cv2.imdecode + crop + cv2.resize(INTER_LINEAR) + cv2.flip
                    + BGR->RGB + numpy normalise + CHW
  tf_eager          tf.io.extract_jpeg_shape, get_params in Python,
                    tf.image.decode_and_crop_jpeg, tf.image.resize (bilinear),
                    flip_left_right, normalise, transpose to CHW; eager ops
  tf_data           the same ops in a tf.data map (1 private thread, autotune
                    off); the boxes are drawn in Python beforehand (TF has no
                    graph op for torchvision's loop), so its box sampling is
                    not timed
TF uses 1 intra-op and 1 inter-op thread; OpenCV setNumThreads(1).
Time is the process's CPU time (time.process_time, all its threads), as
the C++ side's items/s, so that load from others on the shared machine
slows no peer's figure; images/s = 256 / CPU seconds, per core.
"""

import argparse
import io
import json
import math
import os
import random
import sys
import time

import numpy as np

MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)
SIZE = 224
PAIRS = 256
QUALITIES = (90, 95)


def get_params(height, width, rng, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0)):
    """torchvision.transforms.RandomResizedCrop.get_params (Python's random)."""
    area = height * width
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(10):
        target_area = area * rng.uniform(scale[0], scale[1])
        aspect = math.exp(rng.uniform(log_ratio[0], log_ratio[1]))
        w = int(round(math.sqrt(target_area * aspect)))
        h = int(round(math.sqrt(target_area / aspect)))
        if 0 < w <= width and 0 < h <= height:
            return rng.randint(0, height - h), rng.randint(0, width - w), h, w
    in_ratio = width / height
    if in_ratio < min(ratio):
        w, h = width, int(round(width / min(ratio)))
    elif in_ratio > max(ratio):
        h, w = height, int(round(height * max(ratio)))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


def sluice_peer(antialias):
    from sluice import image as simg

    def run(contents, seed):
        return simg.decode_random_resized_crop(contents, SIZE, seed=seed, antialias=antialias)
    return run


def pil_peer():
    from PIL import Image
    mean, std = MEAN[:, None, None], STD[:, None, None]

    def run(contents, seed):
        rng = random.Random(seed)
        img = Image.open(io.BytesIO(contents)).convert("RGB")
        top, left, h, w = get_params(img.height, img.width, rng)
        img = img.crop((left, top, left + w, top + h)).resize((SIZE, SIZE), Image.BILINEAR)
        if rng.random() < 0.5:
            img = img.transpose(Image.FLIP_LEFT_RIGHT)
        x = np.ascontiguousarray(np.asarray(img).transpose(2, 0, 1), dtype=np.float32)
        x /= 255.0
        x -= mean
        x /= std
        return x
    return run


def opencv_peer():
    import cv2
    cv2.setNumThreads(1)

    def run(contents, seed):
        rng = random.Random(seed)
        a = cv2.imdecode(np.frombuffer(contents, np.uint8), cv2.IMREAD_COLOR)
        top, left, h, w = get_params(a.shape[0], a.shape[1], rng)
        r = cv2.resize(a[top:top + h, left:left + w], (SIZE, SIZE), interpolation=cv2.INTER_LINEAR)
        if rng.random() < 0.5:
            r = cv2.flip(r, 1)
        r = cv2.cvtColor(r, cv2.COLOR_BGR2RGB)
        x = (r.astype(np.float32) * np.float32(1.0 / 255.0) - MEAN) / STD
        return np.ascontiguousarray(x.transpose(2, 0, 1))
    return run


def tf_module():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    return tf


def tf_normalize(tf, img, flip):
    img = tf.image.resize(img, [SIZE, SIZE])
    if flip is True:
        img = tf.image.flip_left_right(img)
    elif flip is not False:
        img = tf.cond(flip, lambda: tf.image.flip_left_right(img), lambda: img)
    x = (img / 255.0 - MEAN) / STD
    return tf.transpose(x, [2, 0, 1])


def tf_eager_peer(tf, tensors):
    def run(contents, seed):
        c = tensors[contents]
        rng = random.Random(seed)
        shape = tf.io.extract_jpeg_shape(c).numpy()
        top, left, h, w = get_params(int(shape[0]), int(shape[1]), rng)
        img = tf.image.decode_and_crop_jpeg(c, [top, left, h, w], channels=3)
        return tf_normalize(tf, img, rng.random() < 0.5).numpy()
    return run


def tf_data_pass(tf, work):
    """A function running one pass of `work` through a tf.data map."""
    contents, boxes, flips = [], [], []
    for data, seed in work:
        rng = random.Random(seed)
        shape = tf.io.extract_jpeg_shape(data).numpy()
        boxes.append(get_params(int(shape[0]), int(shape[1]), rng))
        flips.append(rng.random() < 0.5)
        contents.append(data)
    ds = tf.data.Dataset.from_tensor_slices((contents, np.array(boxes, np.int32), np.array(flips)))
    ds = ds.map(lambda c, box, flip: tf_normalize(tf, tf.image.decode_and_crop_jpeg(c, box, channels=3), flip))
    options = tf.data.Options()
    options.threading.private_threadpool_size = 1
    options.threading.max_intra_op_parallelism = 1
    options.autotune.enabled = False
    ds = ds.with_options(options)

    def run_pass():
        for _ in ds:
            pass
    return run_pass


def one_pass(fn, items):
    """Runs fn over items, dropping each result (as a pipeline that consumes
    its batches: the allocator recycles the memory)."""
    for contents, seed in items:
        fn(contents, seed)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image-dir", required=True)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--json", required=True)
    parser.add_argument("--peers", default="sluice,sluice_antialias,pil_torchvision,opencv,tf_eager,tf_data")
    args = parser.parse_args()

    wanted = args.peers.split(",")
    per_image = {}   # name -> fn(contents, seed)
    passes = {}      # (name, quality) -> fn() running one whole pass
    work = {}
    for q in QUALITIES:
        files = sorted(f for f in os.listdir(args.image_dir) if f.startswith(f"q{q}_") and f.endswith(".jpg"))
        if not files:
            sys.exit(f"no q{q}_*.jpg in {args.image_dir} (run image_benchmark --generate_only)")
        images = [open(os.path.join(args.image_dir, f), "rb").read() for f in files]
        work[q] = [(images[n % len(images)], n) for n in range(PAIRS)]

    makers = {"sluice": lambda: sluice_peer(False), "sluice_antialias": lambda: sluice_peer(True),
              "pil_torchvision": pil_peer, "opencv": opencv_peer}
    for name, make in makers.items():
        if name in wanted:
            try:
                per_image[name] = make()
            except ImportError as e:
                print(f"{name}: skipped ({e})", file=sys.stderr)
    if "tf_eager" in wanted or "tf_data" in wanted:
        try:
            tf = tf_module()
            if "tf_eager" in wanted:
                tensors = {data: tf.constant(data) for q in QUALITIES for data, _ in work[q]}
                per_image["tf_eager"] = tf_eager_peer(tf, tensors)
            if "tf_data" in wanted:
                for q in QUALITIES:
                    passes[("tf_data", q)] = tf_data_pass(tf, work[q])
        except ImportError as e:
            print(f"tf: skipped ({e})", file=sys.stderr)

    for name, fn in per_image.items():
        for q in QUALITIES:
            passes[(name, q)] = (lambda fn=fn, items=work[q]: one_pass(fn, items))

    results = {f"py/rrc/{name}/q{q}": [] for name, q in passes}
    for _, fn in passes.items():  # warm-up: imports, graph tracing, caches
        fn()
    order = list(passes.items())
    shuffle = random.Random(1)
    for rep in range(args.repetitions):
        shuffle.shuffle(order)
        for (name, q), fn in order:
            start = time.process_time()
            fn()
            elapsed = time.process_time() - start
            results[f"py/rrc/{name}/q{q}"].append(PAIRS / elapsed)
        print(f"repetition {rep + 1}/{args.repetitions} done", file=sys.stderr)
    with open(args.json, "w") as f:
        json.dump({"unit": "images/s", "pairs_per_measurement": PAIRS, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
