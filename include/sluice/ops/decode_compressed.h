// DecodeCompressed: tf.io.decode_compressed. Decompresses each string of a
// string tensor; the output has the same shape.
//
// compression_type: "" (copy), "ZLIB" (RFC 1950) or "GZIP" (RFC 1952; several
// concatenated members are decoded one after the other, the header's OS byte
// and optional fields are ignored).
//
// As in TensorFlow: an empty string decodes to an empty string for every
// type, bytes after the end of a ZLIB stream are ignored, and after the last
// GZIP member a single stray byte is ignored while more bytes that do not
// start another member are an error.
//
// Errors: InvalidArgument "Only ZLIB, GZIP or NONE are supported
// compressions" for another type, or a non-string input; DataLoss naming the
// element for corrupt or truncated data, or GZIP trailing data ("Element 2:
// ...").
#ifndef SLUICE_OPS_DECODE_COMPRESSED_H_
#define SLUICE_OPS_DECODE_COMPRESSED_H_

#include <string>
#include <string_view>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"

namespace sluice::ops {

// Thread-safe (pure function).
Result<Tensor> DecodeCompressed(const Tensor& bytes, std::string_view compression_type = "");

// One buffer: the decompressed bytes, or the error (as above, without the
// element prefix).
Result<std::string> DecompressString(std::string_view data, std::string_view compression_type);

}  // namespace sluice::ops

#endif  // SLUICE_OPS_DECODE_COMPRESSED_H_
