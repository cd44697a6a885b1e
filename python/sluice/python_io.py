"""sluice.python_io: tf.compat.v1.python_io, TF 1's home of the TFRecord API.

The same objects as sluice.io's: :func:`tf_record_iterator`,
:class:`TFRecordWriter`, :class:`TFRecordOptions` and
:class:`TFRecordCompressionType`.
"""

from sluice.io import TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator

__all__ = ["tf_record_iterator", "TFRecordWriter", "TFRecordOptions", "TFRecordCompressionType"]
