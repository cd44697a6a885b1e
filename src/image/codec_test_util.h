// Helpers of the codec tests: the shared test images and pixel access.
#ifndef SLUICE_SRC_IMAGE_CODEC_TEST_UTIL_H_
#define SLUICE_SRC_IMAGE_CODEC_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "sluice/core/tensor.h"

namespace sluice::image::testing {

// The bytes of testdata/images/<relative>; fails the test if unreadable.
inline std::string ReadImage(const std::string& relative) {
  const std::string path = std::string(SLUICE_TESTDATA_DIR) + "/images/" + relative;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Sample (y, x, c) of an HWC tensor of T.
template <class T>
T At(const Tensor& t, int64_t y, int64_t x, int64_t c) {
  const TensorShape& s = t.shape();
  return t.data<T>()[(y * s.dim(1) + x) * s.dim(2) + c];
}

// Largest |a - b| over all samples; -1 if the shapes or dtypes differ.
template <class T>
int64_t MaxAbsDiff(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return -1;
  int64_t worst = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    worst = std::max<int64_t>(worst, std::abs(int64_t{a.data<T>()[i]} - int64_t{b.data<T>()[i]}));
  }
  return worst;
}

// The window [y, y+h) x [x, x+w) of an HWC uint8 image, copied.
inline Tensor CropCopy(const Tensor& image, int64_t y, int64_t x, int64_t h, int64_t w) {
  const int64_t width = image.shape().dim(1), c = image.shape().dim(2);
  Tensor out(DType::kUInt8, TensorShape{h, w, c});
  for (int64_t r = 0; r < h; ++r) {
    const uint8_t* src = image.data<uint8_t>() + ((y + r) * width + x) * c;
    std::copy(src, src + w * c, out.data<uint8_t>() + r * w * c);
  }
  return out;
}

}  // namespace sluice::image::testing

#endif  // SLUICE_SRC_IMAGE_CODEC_TEST_UTIL_H_
