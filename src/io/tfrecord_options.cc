#include "sluice/io/tfrecord_options.h"

#include "io/zlib_input_stream.h"

namespace sluice::io {

Result<ZlibOptions> TFRecordOptions::ToZlibOptions() const {
  ZlibOptions z;
  if (flush_mode) z.flush_mode = *flush_mode;
  if (input_buffer_size) {
    if (*input_buffer_size <= 0) return errors::InvalidArgument("input_buffer_size must be > 0");
    z.input_buffer_size = static_cast<size_t>(*input_buffer_size);
  }
  if (output_buffer_size) {
    if (*output_buffer_size <= 0) return errors::InvalidArgument("output_buffer_size must be > 0");
    z.output_buffer_size = static_cast<size_t>(*output_buffer_size);
  }
  if (window_bits) z.window_bits = *window_bits;
  if (compression_level) z.compression_level = *compression_level;
  if (mem_level) z.mem_level = *mem_level;
  if (compression_strategy) z.compression_strategy = *compression_strategy;
  SLUICE_RETURN_IF_ERROR(ValidateZlibOptions(z));
  return z;
}

Result<RecordWriterOptions> TFRecordOptions::ToWriterOptions() const {
  SLUICE_ASSIGN_OR_RETURN(RecordWriterOptions options, RecordWriterOptions::FromCompressionType(compression_type));
  SLUICE_ASSIGN_OR_RETURN(options.zlib, ToZlibOptions());
  return options;
}

Result<RecordReaderOptions> TFRecordOptions::ToReaderOptions() const {
  SLUICE_ASSIGN_OR_RETURN(RecordReaderOptions options, RecordReaderOptions::FromCompressionType(compression_type));
  SLUICE_ASSIGN_OR_RETURN(options.zlib, ToZlibOptions());
  return options;
}

}  // namespace sluice::io
