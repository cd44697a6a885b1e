#include "bulk_copy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace sluice::internal {
namespace {

// Every size around the streaming threshold and every destination
// misalignment copies exactly the bytes asked for, and nothing beyond them.
TEST(BulkCopyTest, CopiesExactlyAtEverySizeAndAlignment) {
  const std::vector<size_t> sizes = {0, 1, 63, 64, 4096, kStreamingCopyMinBytes - 1, kStreamingCopyMinBytes,
                                     kStreamingCopyMinBytes + 1, kStreamingCopyMinBytes + 63, 602112};
  for (size_t n : sizes) {
    std::vector<uint8_t> src(n + 64);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
    for (size_t dst_off : {0, 1, 8, 15, 33}) {
      for (size_t src_off : {0, 5}) {
        std::vector<uint8_t> dst(n + 128, 0xEE);
        BulkCopy(dst.data() + dst_off, src.data() + src_off, n);
        for (size_t i = 0; i < dst_off; ++i) ASSERT_EQ(dst[i], 0xEE) << "n=" << n;
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(dst[dst_off + i], src[src_off + i]) << "n=" << n << " dst_off=" << dst_off << " i=" << i;
        }
        for (size_t i = dst_off + n; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xEE) << "n=" << n;
      }
    }
  }
}

}  // namespace
}  // namespace sluice::internal
