// Helpers for the io tests: status assertions, a scratch directory, test
// data paths, and one-shot zlib/gzip (de)compression with zlib itself.
#ifndef SLUICE_SRC_IO_IO_TEST_UTIL_H_
#define SLUICE_SRC_IO_IO_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/io/file_system.h"

#ifndef SLUICE_TESTDATA_DIR
#error "SLUICE_TESTDATA_DIR must point at tests/data"
#endif

namespace sluice::io::testing {

inline ::testing::AssertionResult IsOk(const Status& s) {
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected OK, got " << s;
}
template <class T>
::testing::AssertionResult IsOk(const Result<T>& r) {
  return IsOk(r.status());
}

// The code is `code` and the message contains `fragment`.
inline ::testing::AssertionResult HasError(const Status& s, Code code, std::string_view fragment = "") {
  if (s.code() != code) {
    return ::testing::AssertionFailure() << "expected " << CodeName(code) << ", got " << s;
  }
  if (s.message().find(fragment) == std::string::npos) {
    return ::testing::AssertionFailure() << "expected a message containing \"" << fragment << "\", got " << s;
  }
  return ::testing::AssertionSuccess();
}
template <class T>
::testing::AssertionResult HasError(const Result<T>& r, Code code, std::string_view fragment = "") {
  return HasError(r.status(), code, fragment);
}

#define SLUICE_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  SLUICE_ASSERT_OK_AND_ASSIGN_IMPL_(SLUICE_STATUS_CONCAT_(_io_test_result_, __LINE__), lhs, expr)
#define SLUICE_ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                      \
  ASSERT_TRUE(::sluice::io::testing::IsOk(tmp));          \
  lhs = std::move(tmp).value()

// A fresh directory, removed with its contents when the object goes.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/sluice_io_test_XXXXXX";
    path_ = ::mkdtemp(tmpl.data()) != nullptr ? tmpl : "";
    EXPECT_FALSE(path_.empty());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

inline std::string TestdataPath(std::string_view relative) {
  return std::string(SLUICE_TESTDATA_DIR) + "/" + std::string(relative);
}

// zlib's compress2() (a zlib stream, memLevel 8).
inline std::string ZlibCompress(std::string_view data, int level = Z_DEFAULT_COMPRESSION) {
  uLongf size = compressBound(static_cast<uLong>(data.size()));
  std::string out(size, '\0');
  EXPECT_EQ(compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(data.data()),
                      static_cast<uLong>(data.size()), level),
            Z_OK);
  out.resize(size);
  return out;
}

// A one-shot deflate with the given container (window_bits 15 / 31).
inline std::string Deflate(std::string_view data, int window_bits, int level = Z_DEFAULT_COMPRESSION) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

inline std::string Gzip(std::string_view data) { return Deflate(data, 15 + 16); }

// Inflates a whole zlib (window_bits 15) or gzip (31) or either (47) stream.
inline std::string Inflate(std::string_view data, int window_bits = 47) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, window_bits), Z_OK);
  std::string out;
  char buf[16384];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  inflateEnd(&z);
  return out;
}

inline void WriteFileOrDie(const std::string& path, std::string_view data) {
  ASSERT_TRUE(IsOk(WriteStringToFile(nullptr, path, data)));
}

}  // namespace sluice::io::testing

#endif  // SLUICE_SRC_IO_IO_TEST_UTIL_H_
