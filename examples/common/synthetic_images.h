// The synthetic images and per-row checks shared by examples/image_pipeline.cc,
// examples/data_image_pipeline.cc and examples/distribute_image_pipeline.cc
// (examples/synthetic_images.py is the Python twin).
//
// Image `id` is coloured by its class (id % classes): its red channel sits at
// RedOfClass(label) +- 4, so any crop of it still shows the class, and a label
// travelling with the wrong image is caught. Green and blue are smooth
// gradients with a per-image phase plus noise, so the JPEG sizes are those of
// photographs, not of flat colour. Plain functions, no state.
#ifndef SLUICE_EXAMPLES_COMMON_SYNTHETIC_IMAGES_H_
#define SLUICE_EXAMPLES_COMMON_SYNTHETIC_IMAGES_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/tensor.h"
#include "sluice/ops/example_builder.h"

namespace sluice_examples {

// The red level of a class: far enough apart to tell classes by their crops.
inline int RedOfClass(int64_t label) { return static_cast<int>(16 + 20 * label); }

inline uint32_t Hash(uint64_t x) {
  x = (x ^ (x >> 33)) * 0xFF51AFD7ED558CCDull;
  x = (x ^ (x >> 33)) * 0xC4CEB9FE1A85EC53ull;
  return static_cast<uint32_t>(x ^ (x >> 33));
}

// Image `id` (uint8 [height, width, 3]).
inline sluice::Tensor MakeImage(int64_t id, int64_t height, int64_t width, int64_t classes) {
  sluice::Tensor t(sluice::DType::kUInt8, sluice::TensorShape({height, width, 3}));
  uint8_t* p = t.data<uint8_t>();
  const int red = RedOfClass(id % classes);
  const double phase = static_cast<double>(id % 97) * 0.37;
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      const uint32_t h = Hash(static_cast<uint64_t>(id) * 1000003u + static_cast<uint64_t>(y * width + x));
      uint8_t* px = p + (y * width + x) * 3;
      px[0] = static_cast<uint8_t>(red + static_cast<int>(h % 9) - 4);
      const double g = 128 + 90 * std::sin(x * 0.031 + phase) * std::cos(y * 0.023 - phase);
      const double b = 128 + 90 * std::sin((x + y) * 0.017 + 2 * phase);
      px[1] = static_cast<uint8_t>(std::clamp(g + static_cast<int>((h >> 8) % 25) - 12, 0.0, 255.0));
      px[2] = static_cast<uint8_t>(std::clamp(b + static_cast<int>((h >> 16) % 25) - 12, 0.0, 255.0));
    }
  }
  return t;
}

// The serialized tf.train.Example {image: jpeg, label: id % classes, id}.
inline std::string ExampleRecord(std::string_view jpeg, int64_t id, int64_t classes) {
  return sluice::ops::ExampleBuilder()
      .AddBytes("image", {jpeg})
      .AddInt64s("label", {id % classes})
      .AddInt64s("id", {id})
      .Serialize();
}

// What the checks of a run found.
struct Tally {
  std::vector<int64_t> seen;  // per id
  int64_t images = 0;
  int64_t batches = 0;
  int64_t wrong_labels = 0;
  int64_t wrong_colours = 0;
  int64_t bad_shapes = 0;
};

// Checks the first n rows of a batch {ids [n], images float32 [n, 3, size,
// size] (normalised with ImageNet's mean and std, CHW), labels [n]} whose
// shapes the caller checked: each id in [0, images), its label, its colour.
inline void CheckRows(const sluice::Tensor& ids, const sluice::Tensor& images, const sluice::Tensor& labels,
                      int64_t n, int64_t size, int64_t total_images, int64_t classes, Tally* t) {
  const int64_t plane = size * size;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = ids.flat<int64_t>()[i];
    const int64_t label = labels.flat<int64_t>()[i];
    if (id < 0 || id >= total_images || label != id % classes) {
      ++t->wrong_labels;
      continue;
    }
    ++t->seen[static_cast<size_t>(id)];
    ++t->images;
    // Channel 0 (red) of the normalised crop, back on the 0..255 scale: the
    // mean of every 4th pixel of every 4th row (reading every pixel would
    // make the check a visible part of the pipeline's time).
    const float* red = images.data<float>() + i * 3 * plane;
    double sum = 0;
    int64_t count = 0;
    for (int64_t y = 0; y < size; y += 4) {
      for (int64_t x = 0; x < size; x += 4, ++count) sum += red[y * size + x];
    }
    const double level = (sum / static_cast<double>(count) * 0.229 + 0.485) * 255.0;
    if (std::abs(level - RedOfClass(label)) > 8) ++t->wrong_colours;
  }
}

}  // namespace sluice_examples

#endif  // SLUICE_EXAMPLES_COMMON_SYNTHETIC_IMAGES_H_
