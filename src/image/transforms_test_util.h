// Helpers of the transform tests: small tensors from literals.
#ifndef SLUICE_SRC_IMAGE_TRANSFORMS_TEST_UTIL_H_
#define SLUICE_SRC_IMAGE_TRANSFORMS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <vector>

#include "sluice/core/tensor.h"

namespace sluice::image::testing {

template <class T>
Tensor MakeTensor(TensorShape shape, const std::vector<T>& values) {
  Tensor t(DTypeOf<T>(), shape);
  EXPECT_EQ(static_cast<size_t>(t.num_elements()), values.size());
  for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
  return t;
}

template <class T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

// Element-wise |a - b| <= tol.
inline void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected, float tol) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], tol) << "at " << i;
}

// A deterministic pseudo-random uint8 image.
inline Tensor Pattern(TensorShape shape) {
  Tensor t(DType::kUInt8, shape);
  uint32_t s = 12345;
  for (auto& v : t.flat<uint8_t>()) {
    s = s * 1103515245u + 12345u;
    v = static_cast<uint8_t>(s >> 24);
  }
  return t;
}

}  // namespace sluice::image::testing

#endif  // SLUICE_SRC_IMAGE_TRANSFORMS_TEST_UTIL_H_
