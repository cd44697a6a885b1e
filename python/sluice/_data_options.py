"""``tf.data.Options`` for sluice.data: the same classes, fields, type checks
and merge rules as TensorFlow's (tensorflow/python/data/ops/options.py).

The engine reads ``deterministic``, ``autotune.enabled/cpu_budget/ram_budget``,
``threading.*`` and ``experimental_optimization.map_and_batch_fusion`` (``_to_core``),
and sluice's own ``ram_budget`` and ``error_policy`` (_data_policy.py); every other option is accepted and kept,
so code written for tf.data runs unchanged.
"""

import enum


class OptionsBase:
    """A set of options: unknown attributes raise AttributeError, wrong types TypeError."""

    def __init__(self):
        object.__setattr__(self, "_options", {})
        object.__setattr__(self, "_mutable", True)

    def __eq__(self, other):
        if not isinstance(other, self.__class__):
            return NotImplemented
        for name in set(self._options) | set(other._options):
            if getattr(self, name) != getattr(other, name):
                return False
        return True

    def __ne__(self, other):
        if isinstance(other, self.__class__):
            return not self.__eq__(other)
        return NotImplemented

    __hash__ = None

    def __setattr__(self, name, value):
        if not self._mutable:
            raise ValueError("Mutating `tf.data.Options()` returned by `tf.data.Dataset.options()` has no effect. "
                             "Use `tf.data.Dataset.with_options(options)` to set or update dataset options.")
        if hasattr(self, name):
            object.__setattr__(self, name, value)
        else:
            raise AttributeError("Cannot set the property {} on {}.".format(name, type(self).__name__))

    def _set_mutable(self, mutable):
        object.__setattr__(self, "_mutable", mutable)
        for value in self._options.values():
            if isinstance(value, OptionsBase):
                value._set_mutable(mutable)

    def __repr__(self):
        fields = ", ".join("%s=%r" % (k, getattr(self, k)) for k in sorted(self._options))
        return "%s(%s)" % (type(self).__name__, fields)


def create_option(name, ty, docstring, default_factory=lambda: None):
    """A type-checked property whose unset value is default_factory()."""

    def get_fn(option):
        if name not in option._options:
            option._options[name] = default_factory()
        return option._options.get(name)

    def set_fn(option, value):
        if not isinstance(value, ty):
            raise TypeError("Property \"{}\" must be of type {}, got: {} (type: {})".format(
                name, ty, value, type(value)))
        option._options[name] = value

    return property(get_fn, set_fn, None, docstring)


def merge_options(*options_list):
    """TF's merge: for each option set to a non-default value, the last one wins (recursively)."""
    if len(options_list) < 1:
        raise ValueError("At least one options should be provided")
    result_type = type(options_list[0])
    for options in options_list:
        if not isinstance(options, result_type):
            raise TypeError("Could not merge incompatible options of type {} and {}.".format(
                type(options), result_type))
    if not isinstance(options_list[0], OptionsBase):
        raise TypeError("All options to be merged should inherit from `OptionsBase` but found option of type {} "
                        "which does not.".format(type(options_list[0])))
    default_options = result_type()
    result = result_type()
    for options in options_list:
        for name in options._options:
            this = getattr(result, name)
            that = getattr(options, name)
            default = getattr(default_options, name)
            if that == default:
                continue
            if this == default:
                setattr(result, name, that)
            elif isinstance(this, OptionsBase):
                setattr(result, name, merge_options(this, that))
            elif name == "framework_type":
                setattr(result, name, this + that)
            elif this != that:
                setattr(result, name, that)
    return result


class AutotuneAlgorithm(enum.Enum):
    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


class AutoShardPolicy(enum.IntEnum):
    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class ExternalStatePolicy(enum.Enum):
    WARN = 0
    IGNORE = 1
    FAIL = 2


class AutotuneOptions(OptionsBase):
    """``tf.data.experimental.AutotuneOptions``: ``options.autotune``."""
    enabled = create_option("enabled", bool, "Whether to tune AUTOTUNE stages while iterating. None: True.")
    cpu_budget = create_option("cpu_budget", int, "Cores AUTOTUNE stages may keep busy. None or 0: all cores.")
    ram_budget = create_option("ram_budget", int, "Bytes of AUTOTUNE buffers. None or 0: half of RAM.")
    autotune_algorithm = create_option("autotune_algorithm", AutotuneAlgorithm, "Accepted; sluice has one.")
    initial_parallelism = create_option("initial_parallelism", int, "Accepted; AUTOTUNE starts at 1.")
    min_parallelism = create_option("min_parallelism", int, "Accepted.")


class DistributeOptions(OptionsBase):
    """``tf.data.experimental.DistributeOptions``: accepted."""
    auto_shard_policy = create_option("auto_shard_policy", AutoShardPolicy, "Accepted.",
                                      default_factory=lambda: AutoShardPolicy.AUTO)
    num_devices = create_option("num_devices", int, "Accepted.")


class OptimizationOptions(OptionsBase):
    """``tf.data.experimental.OptimizationOptions``: accepted (sluice rewrites no graph)."""
    apply_default_optimizations = create_option("apply_default_optimizations", bool, "Accepted.")
    filter_fusion = create_option("filter_fusion", bool, "Accepted.")
    filter_parallelization = create_option("filter_parallelization", bool, "Accepted.")
    inject_prefetch = create_option("inject_prefetch", bool, "Accepted.")
    seq_interleave_prefetch = create_option("seq_interleave_prefetch", bool, "Accepted.")
    map_and_batch_fusion = create_option("map_and_batch_fusion", bool,
                                         "A parallel map followed by batch runs as one stage. None: True.")
    map_and_filter_fusion = create_option("map_and_filter_fusion", bool, "Accepted.")
    map_fusion = create_option("map_fusion", bool, "Accepted.")
    map_parallelization = create_option("map_parallelization", bool, "Accepted.")
    noop_elimination = create_option("noop_elimination", bool, "Accepted.")
    parallel_batch = create_option("parallel_batch", bool, "Accepted.")
    shuffle_and_repeat_fusion = create_option("shuffle_and_repeat_fusion", bool, "Accepted.")


class ServiceOptions(OptionsBase):
    """``tf.data.experimental.ServiceOptions``: accepted."""
    pinned = create_option("pinned", bool, "Accepted.")


class ThreadingOptions(OptionsBase):
    """``tf.data.ThreadingOptions``: accepted and carried to the engine (stages keep their own threads)."""
    max_intra_op_parallelism = create_option("max_intra_op_parallelism", int, "Accepted.")
    private_threadpool_size = create_option("private_threadpool_size", int, "Accepted.")


class Options(OptionsBase):
    """``tf.data.Options``: set with ``Dataset.with_options``, read with ``Dataset.options()``."""
    autotune = create_option("autotune", AutotuneOptions, "AUTOTUNE's options.", default_factory=AutotuneOptions)
    deterministic = create_option("deterministic", bool,
                                  "Whether ops whose own `deterministic` is unset keep the order. None: True.")
    experimental_deterministic = create_option("experimental_deterministic", bool, "Use `deterministic`.")
    experimental_distribute = create_option("experimental_distribute", DistributeOptions, "Accepted.",
                                            default_factory=DistributeOptions)
    experimental_external_state_policy = create_option("experimental_external_state_policy",
                                                       ExternalStatePolicy, "Accepted.")
    experimental_optimization = create_option("experimental_optimization", OptimizationOptions, "Accepted.",
                                              default_factory=OptimizationOptions)
    experimental_slack = create_option("experimental_slack", bool, "Accepted.")
    experimental_symbolic_checkpoint = create_option("experimental_symbolic_checkpoint", bool, "Accepted.")
    experimental_service = create_option("experimental_service", ServiceOptions, "Accepted.",
                                         default_factory=ServiceOptions)
    experimental_threading = create_option("experimental_threading", ThreadingOptions, "Use `threading`.")
    experimental_warm_start = create_option("experimental_warm_start", bool, "Accepted.")
    dataset_name = create_option("dataset_name", str, "A name for the dataset.")
    ram_budget = create_option("ram_budget", int,
                               "sluice: the hard byte budget of the pipeline's buffers (see sluice.data's "
                               "_data_policy); AUTOTUNE plans within it where autotune.ram_budget is unset. "
                               "None or 0: none.")
    error_policy = create_option("error_policy", str,
                                 "sluice: 'fail' (None: the default), 'skip' or 'replace', for every reader and "
                                 "map whose own error_policy is unset.")
    framework_type = create_option("framework_type", list, "Accepted.")
    threading = create_option("threading", ThreadingOptions, "Threading options.",
                              default_factory=ThreadingOptions)

    _ALIASES = {"experimental_threading": "threading", "experimental_deterministic": "deterministic"}

    def __getattribute__(self, name):
        alias = Options._ALIASES.get(name)
        return super().__getattribute__(alias or name)

    def __setattr__(self, name, value):
        super().__setattr__(Options._ALIASES.get(name, name), value)

    def merge(self, options):
        """A new Options: self with every option `options` sets (to a non-default value) taking its value."""
        return merge_options(self, options)

    def _to_core(self):
        """The options the engine reads, as keyword arguments of ``_core.data.with_options``."""
        a, t = self.autotune, self.threading
        return dict(deterministic=self.deterministic, autotune_enabled=a.enabled, cpu_budget=a.cpu_budget,
                    ram_budget=a.ram_budget, private_threadpool_size=t.private_threadpool_size,
                    max_intra_op_parallelism=t.max_intra_op_parallelism,
                    map_and_batch_fusion=self.experimental_optimization.map_and_batch_fusion)
