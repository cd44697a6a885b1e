#ifndef SLUICE_SRC_IO_ZLIB_INPUT_STREAM_H_
#define SLUICE_SRC_IO_ZLIB_INPUT_STREAM_H_

#include <memory>

#include "sluice/io/input_stream.h"

namespace sluice::io {

// See input_stream.h. REQUIRES: type is kZlib or kGzip.
Result<std::unique_ptr<InputStream>> NewZlibInputStream(std::unique_ptr<RandomAccessFile> file, CompressionType type,
                                                        const ZlibOptions& options);

// Checks window_bits, compression_level, mem_level, strategy and flush_mode.
Status ValidateZlibOptions(const ZlibOptions& options);

}  // namespace sluice::io

#endif  // SLUICE_SRC_IO_ZLIB_INPUT_STREAM_H_
