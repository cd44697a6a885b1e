#include "sluice/image/normalize.h"

#include <cmath>
#include <vector>

#include "image/internal.h"
#include "sluice/image/image.h"

namespace sluice::image {

namespace internal {

Status NormalizeCoefficients(const NormalizeOptions& options, int64_t channels, float scale, const char* op,
                             std::vector<float>* a, std::vector<float>* b) {
  auto check = [&](const std::vector<float>& v, const char* name) -> Status {
    if (v.size() > 1 && static_cast<int64_t>(v.size()) != channels) {
      return errors::InvalidArgument(op, ": '", name, "' has ", v.size(), " values for ", channels,
                                     " channels (give 1 or one per channel)");
    }
    return Status::OK();
  };
  SLUICE_RETURN_IF_ERROR(check(options.mean, "mean"));
  SLUICE_RETURN_IF_ERROR(check(options.stddev, "std"));
  a->assign(channels, 0.0f);
  b->assign(channels, 0.0f);
  for (int64_t c = 0; c < channels; ++c) {
    const float mean = options.mean.empty() ? 0.0f : options.mean[options.mean.size() == 1 ? 0 : c];
    const float sd = options.stddev.empty() ? 1.0f : options.stddev[options.stddev.size() == 1 ? 0 : c];
    if (!(sd > 0.0f) || !std::isfinite(sd)) {
      return errors::InvalidArgument(op, ": 'std' values must be positive and finite, got ", sd);
    }
    (*a)[c] = scale / sd;
    (*b)[c] = -mean / sd;
  }
  return Status::OK();
}

}  // namespace internal

namespace {

template <class T>
void NormalizeImages(const T* in, float* out, const ImageGeometry& g, bool chw, const std::vector<float>& a,
                     const std::vector<float>& b) {
  const int64_t n = g.is_batch ? g.batch : 1;
  const int64_t pixels = g.height * g.width, c_count = g.channels;
  for (int64_t img = 0; img < n; ++img, in += pixels * c_count, out += pixels * c_count) {
    if (!chw) {
      for (int64_t p = 0; p < pixels; ++p) {
        for (int64_t c = 0; c < c_count; ++c) {
          out[p * c_count + c] = static_cast<float>(in[p * c_count + c]) * a[c] + b[c];
        }
      }
      continue;
    }
    for (int64_t c = 0; c < c_count; ++c) {
      float* __restrict plane = out + c * pixels;
      const T* __restrict src = in + c;
      const float ac = a[c], bc = b[c];
      for (int64_t p = 0; p < pixels; ++p) plane[p] = static_cast<float>(src[p * c_count]) * ac + bc;
    }
  }
}

}  // namespace

Result<Tensor> Normalize(const Tensor& image, const NormalizeOptions& options) {
  constexpr const char* op = "normalize";
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, GetGeometry(image, op));
  float scale;
  switch (image.dtype()) {
    case DType::kUInt8: scale = 1.0f / 255.0f; break;
    case DType::kUInt16: scale = 1.0f / 65535.0f; break;
    case DType::kFloat32:
    case DType::kFloat64: scale = 1.0f; break;
    default:
      return errors::InvalidArgument(op, ": 'image' must be uint8, uint16, float32 or float64, got ",
                                     DTypeName(image.dtype()));
  }
  std::vector<float> a, b;
  SLUICE_RETURN_IF_ERROR(internal::NormalizeCoefficients(options, g.channels, scale, op, &a, &b));
  const bool chw = options.data_format == DataFormat::kCHW;
  TensorShape shape = chw ? TensorShape{g.channels, g.height, g.width} : TensorShape{g.height, g.width, g.channels};
  if (g.is_batch) shape = shape.WithFirstDim(g.batch);
  Tensor out(DType::kFloat32, shape);
  SLUICE_RETURN_IF_ERROR(internal::DispatchReal(image.dtype(), op, [&](auto tag) {
    NormalizeImages(image.data<decltype(tag)>(), out.data<float>(), g, chw, a, b);
    return Status::OK();
  }));
  return out;
}

Result<Tensor> PerImageStandardization(const Tensor& image) {
  constexpr const char* op = "per_image_standardization";
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, GetGeometry(image, op));
  Tensor out(DType::kFloat32, image.shape());
  const int64_t n = g.is_batch ? g.batch : 1;
  const int64_t count = g.height * g.width * g.channels;
  SLUICE_RETURN_IF_ERROR(internal::DispatchReal(image.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t img = 0; img < n; ++img) {
      const T* in = image.data<T>() + img * count;
      float* o = out.data<float>() + img * count;
      double sum = 0.0;
      for (int64_t i = 0; i < count; ++i) sum += static_cast<float>(in[i]);
      const double mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
      double sq = 0.0;
      for (int64_t i = 0; i < count; ++i) {
        const double d = static_cast<float>(in[i]) - mean;
        sq += d * d;
      }
      const float stddev = count > 0 ? static_cast<float>(std::sqrt(sq / static_cast<double>(count))) : 0.0f;
      const float min_stddev = 1.0f / std::sqrt(static_cast<float>(count));
      const float adjusted = std::max(stddev, min_stddev);
      const float fmean = static_cast<float>(mean);
      for (int64_t i = 0; i < count; ++i) o[i] = (static_cast<float>(in[i]) - fmean) / adjusted;
    }
    return Status::OK();
  }));
  return out;
}

}  // namespace sluice::image
