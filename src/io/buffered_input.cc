#include "io/buffered_input.h"

#include <algorithm>
#include <cstring>

namespace sluice::io {

BufferedInput::BufferedInput(std::unique_ptr<InputStream> stream, size_t buffer_size)
    : stream_(std::move(stream)),
      initial_capacity_(std::max<size_t>(buffer_size, 64)),
      buf_(new char[initial_capacity_]),
      capacity_(initial_capacity_) {
  buf_start_ = stream_->Tell();
}

void BufferedInput::Compact() {
  if (pos_ == 0) return;
  const size_t avail = limit_ - pos_;
  if (avail > 0) std::memmove(buf_.get(), buf_.get() + pos_, avail);
  buf_start_ += pos_;
  limit_ = avail;
  pos_ = 0;
}

void BufferedInput::Grow(size_t min_capacity) {
  size_t cap = capacity_;
  while (cap < min_capacity) cap *= 2;
  std::unique_ptr<char[]> bigger(new char[cap]);
  std::memcpy(bigger.get(), buf_.get() + pos_, limit_ - pos_);
  buf_start_ += pos_;
  limit_ -= pos_;
  pos_ = 0;
  buf_ = std::move(bigger);
  capacity_ = cap;
}

Result<size_t> BufferedInput::Ensure(size_t n) {
  if (limit_ - pos_ >= n) return n;
  if (eof_) return limit_ - pos_;
  if (pos_ == limit_ && capacity_ > 4 * initial_capacity_ && n <= initial_capacity_) {
    // Give back the memory a huge record needed.
    buf_start_ += pos_;
    pos_ = limit_ = 0;
    buf_.reset(new char[initial_capacity_]);
    capacity_ = initial_capacity_;
  }
  if (capacity_ - pos_ < n) Compact();
  while (limit_ - pos_ < n) {
    // Grow only when the buffer is full of bytes that really arrived.
    if (limit_ == capacity_) Grow(capacity_ * 2);
    Result<size_t> got = stream_->Read(capacity_ - limit_, buf_.get() + limit_);
    if (!got.ok()) return got.status();
    if (*got == 0) {
      eof_ = true;
      break;
    }
    limit_ += *got;
  }
  return std::min(n, limit_ - pos_);
}

Status BufferedInput::Seek(uint64_t offset) {
  if (offset >= buf_start_ && offset <= buf_start_ + limit_) {
    pos_ = static_cast<size_t>(offset - buf_start_);
    return Status::OK();
  }
  pos_ = limit_ = 0;
  eof_ = false;
  Status s = stream_->Seek(offset);
  buf_start_ = stream_->Tell();
  return s;
}

Result<uint64_t> BufferedInput::Skip(uint64_t n) {
  const size_t avail = limit_ - pos_;
  if (n <= avail) {
    pos_ += static_cast<size_t>(n);
    return n;
  }
  pos_ = limit_;
  if (eof_) return uint64_t{avail};
  buf_start_ += limit_;
  pos_ = limit_ = 0;
  Result<uint64_t> skipped = stream_->Skip(n - avail);
  buf_start_ = stream_->Tell();
  if (!skipped.ok()) return skipped.status();
  return avail + *skipped;
}

Status BufferedInput::ReadLine(std::string_view* line) {
  size_t scanned = 0;
  for (;;) {
    const size_t avail = available();
    const void* nl = std::memchr(data() + scanned, '\n', avail - scanned);
    size_t len;
    if (nl != nullptr) {
      len = static_cast<size_t>(static_cast<const char*>(nl) - data());
      *line = std::string_view(data(), len);
      Consume(len + 1);
    } else {
      scanned = avail;
      SLUICE_ASSIGN_OR_RETURN(size_t got, Ensure(avail + 1));
      if (got > avail) continue;
      // End of stream: the last line has no '\n'.
      len = avail;
      *line = std::string_view(data(), len);
      Consume(len);
    }
    if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
    if (nl == nullptr && line->empty()) return errors::OutOfRange("end of file");
    return Status::OK();
  }
}

}  // namespace sluice::io
