// TFRecordOptions: tf.io.TFRecordOptions, the one options object Python
// hands to both the TFRecord writer and readers. Unset fields keep
// TensorFlow's defaults (ZlibOptions).
//
// A value type; not synchronised.
#ifndef SLUICE_IO_TFRECORD_OPTIONS_H_
#define SLUICE_IO_TFRECORD_OPTIONS_H_

#include <optional>
#include <string>

#include "sluice/core/status.h"
#include "sluice/io/record_reader.h"
#include "sluice/io/record_writer.h"

namespace sluice::io {

struct TFRecordOptions {
  // "", "ZLIB" or "GZIP".
  std::string compression_type;
  std::optional<int> flush_mode;
  std::optional<int> input_buffer_size;
  std::optional<int> output_buffer_size;
  std::optional<int> window_bits;
  std::optional<int> compression_level;
  std::optional<int> mem_level;
  std::optional<int> compression_strategy;

  // Errors: InvalidArgument for an unknown compression type or a value out
  // of zlib's range.
  [[nodiscard]] Result<RecordWriterOptions> ToWriterOptions() const;
  [[nodiscard]] Result<RecordReaderOptions> ToReaderOptions() const;
  [[nodiscard]] Result<ZlibOptions> ToZlibOptions() const;
};

}  // namespace sluice::io

#endif  // SLUICE_IO_TFRECORD_OPTIONS_H_
