"""sluice.data.Options against TensorFlow 2's tf.data.Options: the same
merges, the same errors. Skipped without TF."""

import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

from sluice import data as sd  # noqa: E402


def as_dict(o, prefix=""):
    """Every option TF knows, as {dotted name: value} (enums by name)."""
    out = {}
    for name in sorted(o._options):
        v = getattr(o, name)
        if hasattr(v, "_options"):
            out.update(as_dict(v, prefix + name + "."))
        else:
            out[prefix + name] = getattr(v, "name", v)
    return out


def build(ns):
    a = ns.Options()
    a.deterministic = False
    a.autotune.cpu_budget = 3
    a.threading.private_threadpool_size = 2
    b = ns.Options()
    b.autotune.cpu_budget = 5
    b.autotune.enabled = True
    b.experimental_optimization.map_parallelization = False
    c = ns.Options()
    c.deterministic = True
    x = ns.Dataset.range(4).with_options(a)
    y = ns.Dataset.range(4).with_options(b)
    return [
        x.options(),
        x.with_options(b).options(),
        ns.Dataset.zip((x, y)).options(),
        ns.Dataset.zip((x, y)).with_options(c).options(),
        x.map(lambda v: v).batch(2).options(),
        a.merge(b),
    ]


def test_merged_options_match_tf():
    tf_opts = build(tf.data)
    s_opts = build(sd)
    keys = ["deterministic", "autotune.cpu_budget", "autotune.enabled", "autotune.ram_budget",
            "threading.private_threadpool_size", "experimental_optimization.map_parallelization"]
    for t, s in zip(tf_opts, s_opts):
        for k in keys:
            obj_t, obj_s = t, s
            for part in k.split("."):
                obj_t, obj_s = getattr(obj_t, part), getattr(obj_s, part)
            assert obj_s == obj_t, k


def test_the_same_fields_as_tf():
    t = tf.data.Options()
    s = sd.Options()
    for group in ("autotune", "threading", "experimental_optimization", "experimental_distribute"):
        t_fields = {n for n, v in vars(type(getattr(t, group))).items() if isinstance(v, property)}
        s_fields = {n for n, v in vars(type(getattr(s, group))).items() if isinstance(v, property)}
        assert t_fields <= s_fields, group
    t_top = {n for n, v in vars(tf.data.Options).items() if isinstance(v, property)}
    s_top = {n for n, v in vars(sd.Options).items() if isinstance(v, property)}
    assert t_top <= s_top


@pytest.mark.parametrize("ns", ["tf", "sd"])
def test_errors_match_tf(ns):
    mod = tf.data if ns == "tf" else sd
    o = mod.Options()
    with pytest.raises(AttributeError):
        o.no_such_option = 1
    with pytest.raises(TypeError):
        o.deterministic = 1
    ds = mod.Dataset.range(2)
    with pytest.raises(ValueError):
        ds.options().deterministic = False
