// BufferedInput: a large buffer over an InputStream that parsers read
// records out of in place (TensorFlow's BufferedInputStream/InputBuffer,
// with views instead of copies).
//
// Ensure(n) makes n bytes available contiguously at data(); the parser looks
// at them and Consume()s what it used. Refills read as much as the free space
// holds (one pread or one inflate call per buffer, not one per record). A
// record larger than the buffer grows it, doubling, only as far as bytes
// actually arrive, so a corrupt length cannot allocate more than twice the
// bytes left in the stream.
//
// Views into data() stay valid until the next Ensure/Seek/Skip/ReadLine.
// Not thread-safe.
#ifndef SLUICE_SRC_IO_BUFFERED_INPUT_H_
#define SLUICE_SRC_IO_BUFFERED_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/core/status.h"
#include "sluice/io/input_stream.h"

namespace sluice::io {

class BufferedInput {
 public:
  static constexpr size_t kDefaultBufferSize = 256 << 10;

  BufferedInput(std::unique_ptr<InputStream> stream, size_t buffer_size = kDefaultBufferSize);
  BufferedInput(const BufferedInput&) = delete;
  BufferedInput& operator=(const BufferedInput&) = delete;

  // Offset (in the stream) of data()[0].
  uint64_t Tell() const { return buf_start_ + pos_; }
  const char* data() const { return buf_.get() + pos_; }
  size_t available() const { return limit_ - pos_; }

  // Makes min(n, bytes left in the stream) bytes available and returns that
  // count. Errors: the stream's, only when fewer than n bytes could be made
  // available (bytes before a failure are served first).
  [[nodiscard]] Result<size_t> Ensure(size_t n);

  // REQUIRES: n <= available().
  void Consume(size_t n) { pos_ += n; }

  // Moves to `offset`; inside the buffer this costs nothing.
  [[nodiscard]] Status Seek(uint64_t offset);
  // Moves forward n bytes; returns how many (fewer at the end of a
  // compressed stream; a plain file may report bytes past its end).
  [[nodiscard]] Result<uint64_t> Skip(uint64_t n);

  // The next line without its '\n' and without one trailing '\r'. The last
  // line is returned without a '\n' when it is non-empty after removing the
  // '\r'. OutOfRange at the end. `*line` is a view, valid as data().
  [[nodiscard]] Status ReadLine(std::string_view* line);

  const std::string& name() const { return stream_->name(); }
  InputStream* stream() { return stream_.get(); }

 private:
  void Compact();
  void Grow(size_t min_capacity);

  std::unique_ptr<InputStream> stream_;
  const size_t initial_capacity_;
  std::unique_ptr<char[]> buf_;
  size_t capacity_;
  size_t pos_ = 0;          // next unread byte
  size_t limit_ = 0;        // end of valid bytes
  uint64_t buf_start_ = 0;  // stream offset of buf_[0]
  bool eof_ = false;        // the stream returned 0 bytes at limit_
};

}  // namespace sluice::io

#endif  // SLUICE_SRC_IO_BUFFERED_INPUT_H_
