// Byte streams that readers parse records out of: a plain file, or a file
// holding one zlib (RFC 1950) or gzip (RFC 1952) stream over the whole
// content, decompressed on the fly (TensorFlow's ZlibInputStream), and a
// compressing WritableFile for writers (ZlibOutputStream).
//
// Offsets are positions in the uncompressed stream. Seeking a compressed
// stream backwards rewinds it and decompresses again from the start.
//
// Decompression copes with full-flush and sync-flush blocks inside the
// stream and with several concatenated members; the gzip header's OS byte,
// file name and comment are ignored. A stream that ends before its end
// marker is DataLoss ("truncated compressed stream"), corrupt compressed
// data is DataLoss too; both name the file and the uncompressed offset
// (payloads "file" and "offset").
//
// Thread-safety: a stream is used by one thread at a time.
#ifndef SLUICE_IO_INPUT_STREAM_H_
#define SLUICE_IO_INPUT_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "sluice/core/status.h"
#include "sluice/io/file_system.h"

namespace sluice::io {

// How a whole file is compressed. TensorFlow's names: "", "ZLIB", "GZIP".
enum class CompressionType { kNone = 0, kZlib = 1, kGzip = 2 };

// "" and "NONE" -> kNone, "ZLIB", "GZIP" (case as TensorFlow spells them).
// Anything else: InvalidArgument.
[[nodiscard]] Result<CompressionType> ParseCompressionType(std::string_view name);
// "", "ZLIB" or "GZIP".
std::string_view CompressionTypeName(CompressionType type);

// zlib parameters, TensorFlow's ZlibCompressionOptions::DEFAULT().
struct ZlibOptions {
  // Compressed bytes read (or uncompressed bytes gathered) per zlib call.
  size_t input_buffer_size = 256 << 10;
  // Compressed bytes gathered before writing them to the file.
  size_t output_buffer_size = 256 << 10;
  // log2 of the window, 8..15. The container (zlib or gzip) comes from the
  // CompressionType, not from here.
  int window_bits = 15;
  // -1 (zlib's default, 6) or 0..9.
  int compression_level = -1;
  // 1..9; TensorFlow uses 9, zlib's compress() uses 8 (both give the same
  // bytes for inputs below about 16 KiB).
  int mem_level = 9;
  // Z_DEFAULT_STRATEGY (0), Z_FILTERED (1), Z_HUFFMAN_ONLY (2), Z_RLE (3),
  // Z_FIXED (4).
  int compression_strategy = 0;
  // What WritableFile::Flush() asks deflate for: Z_NO_FLUSH (0, the default:
  // flushing only hands gathered input to zlib), Z_SYNC_FLUSH (2) or
  // Z_FULL_FLUSH (3) (a reader can then decompress everything written so
  // far).
  int flush_mode = 0;
};

class InputStream {
 public:
  virtual ~InputStream() = default;

  // Reads up to `n` bytes into `dst`; returns how many. Fewer than `n` only
  // at the end of the stream (0 there). When an error occurs after some
  // bytes were produced, those bytes are returned and the error comes from
  // the next call. Errors: the file's read errors; DataLoss for corrupt or
  // truncated compressed data. After an error the stream may be retried or
  // Seek()'d.
  [[nodiscard]] virtual Result<size_t> Read(size_t n, char* dst) = 0;

  // Moves forward `n` bytes; returns how many were skipped (fewer only at the
  // end). Errors as Read.
  [[nodiscard]] virtual Result<uint64_t> Skip(uint64_t n);

  // Moves to `offset` (may be past the end: reads then return 0). Errors as
  // Read (a compressed stream decompresses up to `offset`).
  [[nodiscard]] virtual Status Seek(uint64_t offset) = 0;

  // The offset of the next byte Read returns.
  virtual uint64_t Tell() const = 0;

  // The file being read (for messages).
  virtual const std::string& name() const = 0;
};

// A stream over `file`, decompressed per `type`. Errors: InvalidArgument for
// bad zlib options.
[[nodiscard]] Result<std::unique_ptr<InputStream>> NewInputStream(std::unique_ptr<RandomAccessFile> file,
                                                                   CompressionType type,
                                                                   const ZlibOptions& options = {});

// A WritableFile that compresses what is appended into `dest` as one zlib
// (kZlib) or gzip (kGzip) stream. Close() finishes the stream and closes
// `dest`. With default options a kZlib stream is byte-identical to zlib's
// compress() of the same bytes (for inputs below about 16 KiB; beyond that
// mem_level 8 gives compress()'s bytes). Errors: InvalidArgument for
// kNone or bad options.
[[nodiscard]] Result<std::unique_ptr<WritableFile>> NewZlibOutputStream(std::unique_ptr<WritableFile> dest,
                                                                        CompressionType type,
                                                                        const ZlibOptions& options = {});

}  // namespace sluice::io

#endif  // SLUICE_IO_INPUT_STREAM_H_
