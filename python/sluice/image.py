"""sluice.image: tf.image's ops on numpy arrays, computed in C++.

Decoders and encoders come from sluice._image_codec (also in sluice.io, as
in TensorFlow); resize, crop, flip, colour and the fused training paths from
sluice._image_ops.
"""

from sluice._image_codec import *  # noqa: F401,F403
from sluice._image_codec import __all__ as _codec_all
from sluice._image_ops import *  # noqa: F401,F403
from sluice._image_ops import __all__ as _ops_all

__all__ = list(_codec_all) + list(_ops_all)
