// The image suite (bench/run.sh image): JPEG decoding and the fused random
// resized crop against libjpeg-turbo called directly, per core.
//
// Input: 32 JPEGs of 500x375 (16 at quality 90, 16 at 95, 4:2:0, sluice's
// EncodeJpeg), written once into --image_dir (default
// build-bench/image-data) as q90_NN.jpg / q95_NN.jpg, and read from there by
// bench/py_image_bench.py too. Each is a photograph: a 2x2 mosaic of
// tests/data's hopper.jpg, each tile a different rotation/mirror,
// upscaled bilinearly to a tile size that varies per image, plus mild
// Gaussian-like noise (sigma about 5 grey levels) so that the DCT blocks
// carry the fine detail a camera photo has (file sizes 60-110 KB, as
// ImageNet's). Deterministic: the same files on every machine.
//
// Benchmarks (each iteration is one image; items/s = images/s), each once
// per quality (suffix /q90, /q95):
//   image/decode/libjpeg_direct   jpeg_read_scanlines into a new buffer (RGB,
//                                 IFAST: TF's settings)
//   image/decode/sluice           DecodeJpeg
//   image/decode_and_crop/sluice  DecodeAndCropJpeg of the box the fused op
//                                 samples for that (image, seed): the limit
//   image/rrc/sluice              DecodeRandomResizedCropInto a batch slice:
//                                 box + partial decode + bilinear resize to
//                                 224x224 + flip + ImageNet normalise, CHW
//   image/rrc_antialias/sluice    the same with antialias (PIL's filtering)
//   image/rrc112/sluice, image/rrc112_dct/sluice  the fused op at 112x112,
//                                 without and with dct_scaling (at 224 the
//                                 boxes of a 500x375 image are never 2x the
//                                 output, so it would not engage); the
//                                 difference it makes is printed in the
//                                 context as dct_scaling_diff_112
//   image/resize_flip_normalize/sluice  the resize + flip + normalise step
//                                 alone, on 32 crops decoded beforehand
//   .../sluice_portable, _sse2, _avx2, _avx512  image/rrc/sluice and the
//                                 step above with the resize kernel forced
//                                 (src/image/resize_kernels.h), against the
//                                 kernel picked at run time (AVX-512 where
//                                 the CPU has F/BW/VBMI, else AVX2 + FMA),
//                                 A/B in one process; skipped where the CPU
//                                 lacks the kernel's instructions
//   image/rrc_hwc/sluice_avx2, _avx512  image/rrc into HWC rows
//                                 (TensorFlow's layout)
//   image/decode_after_resize/<none|sse2|avx2|avx512>  DecodeAndCropJpeg
//                                 timed alone (manual time), each right
//                                 after an untimed resize of the previous
//                                 crop by that kernel: what a kernel costs
//                                 the decode that follows it
// Iteration n uses image n % 16 of the quality and seed n % 256, so the
// decode_and_crop and rrc rows decode exactly the same boxes.
#include <benchmark/benchmark.h>
#include <jpeglib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Internal (not installed): lets the A/B rows force a resize kernel. The
// benchmark target has only include/ on its path, hence the relative path.
#include "image/resize_kernels.h"
#include "sluice/image/codec.h"
#include "sluice/image/geometry.h"
#include "sluice/image/random_resized_crop.h"
#include "sluice/image/resize.h"

namespace {

using sluice::DType;
using sluice::image::internal::ResizeKernel;
using sluice::Tensor;
using sluice::TensorShape;
namespace image = sluice::image;
namespace fs = std::filesystem;

constexpr int kImagesPerQuality = 16;
constexpr int64_t kHeight = 375, kWidth = 500;
constexpr uint64_t kSeeds = 256;
constexpr int kQualities[] = {90, 95};

std::string g_dir = "build-bench/image-data";
std::vector<std::string> g_jpegs[2];  // by quality index

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A small deterministic generator (64-bit LCG, high bits).
struct Lcg {
  uint64_t s;
  uint32_t Next() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(s >> 33);
  }
};

// Image i: a 2x2 mosaic of hopper variants with noise (see the file comment).
Tensor Photo(const Tensor& hopper, int i) {
  Lcg rng{static_cast<uint64_t>(i) * 7919 + 17};
  Tensor canvas(DType::kUInt8, TensorShape{kHeight, kWidth, 3});
  const int64_t split_y = 150 + rng.Next() % 76, split_x = 200 + rng.Next() % 101;
  const int64_t ys[3] = {0, split_y, kHeight}, xs[3] = {0, split_x, kWidth};
  for (int tile = 0; tile < 4; ++tile) {
    const int64_t y0 = ys[tile / 2], y1 = ys[tile / 2 + 1], x0 = xs[tile % 2], x1 = xs[tile % 2 + 1];
    Tensor variant = *image::Rot90(hopper, (i + tile) % 4);
    if ((i + tile) & 4) variant = *image::FlipLeftRight(variant);
    image::ResizeOptions r;
    r.height = y1 - y0;
    r.width = x1 - x0;
    const Tensor resized = *image::Resize(variant, r);
    const float* src = resized.data<float>();
    for (int64_t y = y0; y < y1; ++y) {
      uint8_t* dst = canvas.data<uint8_t>() + (y * kWidth + x0) * 3;
      for (int64_t k = 0; k < (x1 - x0) * 3; ++k) {
        // Sum of 4 uniforms in [-4, 4): roughly Gaussian, sigma ~4.6.
        int noise = -8;
        for (int n = 0; n < 4; ++n) noise += static_cast<int>(rng.Next() % 4);
        const float v = *src++ + static_cast<float>(noise) * 2.0f;
        dst[k] = static_cast<uint8_t>(std::clamp(v + 0.5f, 0.0f, 255.0f));
      }
    }
  }
  return canvas;
}

// Writes the images once (kept when present), then loads them.
bool LoadOrGenerate() {
  fs::create_directories(g_dir);
  std::unique_ptr<Tensor> hopper;
  for (int q = 0; q < 2; ++q) {
    for (int i = 0; i < kImagesPerQuality; ++i) {
      char name[32];
      std::snprintf(name, sizeof(name), "q%d_%02d.jpg", kQualities[q], i);
      const fs::path path = fs::path(g_dir) / name;
      if (!fs::exists(path)) {
        if (!hopper) {
          const std::string src = ReadFile(SLUICE_TESTDATA_DIR "/images/jpeg/pillow/hopper.jpg");
          sluice::Result<Tensor> decoded = image::DecodeJpeg(src);
          if (!decoded.ok()) {
            std::cerr << "image_benchmark: cannot read hopper.jpg: " << decoded.status() << "\n";
            return false;
          }
          hopper = std::make_unique<Tensor>(*decoded);
        }
        image::EncodeJpegOptions e;
        e.quality = kQualities[q];
        const std::string jpeg = *image::EncodeJpeg(Photo(*hopper, i), e);
        std::ofstream(path, std::ios::binary).write(jpeg.data(), static_cast<std::streamsize>(jpeg.size()));
      }
      g_jpegs[q].push_back(ReadFile(path));
    }
  }
  return true;
}

// libjpeg-turbo alone: RGB, IFAST (TF's default), into a new buffer.
void DecodeDirect(const std::string& data) {
  jpeg_decompress_struct cinfo;
  jpeg_error_mgr jerr;
  cinfo.err = jpeg_std_error(&jerr);
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = JCS_RGB;
  cinfo.dct_method = JDCT_IFAST;
  jpeg_start_decompress(&cinfo);
  const size_t stride = size_t{cinfo.output_width} * 3;
  std::unique_ptr<uint8_t[]> out(new uint8_t[stride * cinfo.output_height]);
  JSAMPROW rows[16];
  while (cinfo.output_scanline < cinfo.output_height) {
    const unsigned n = std::min(16u, cinfo.output_height - cinfo.output_scanline);
    for (unsigned i = 0; i < n; ++i) rows[i] = out.get() + (cinfo.output_scanline + i) * stride;
    jpeg_read_scanlines(&cinfo, rows, n);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  benchmark::DoNotOptimize(out.get());
}

// libjpeg-turbo's own partial decode of `w`: jpeg_crop_scanline to the MCU
// columns covering it, jpeg_skip_scanlines to its first row, then its rows
// read 16 at a time into a buffer of the (MCU-aligned) decoded width; the
// caller would use the window at a column offset. No per-row copy.
void DecodeAndCropDirect(const std::string& data, const image::CropWindow& w) {
  jpeg_decompress_struct cinfo;
  jpeg_error_mgr jerr;
  cinfo.err = jpeg_std_error(&jerr);
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = JCS_RGB;
  cinfo.dct_method = JDCT_IFAST;
  jpeg_start_decompress(&cinfo);
  JDIMENSION x = static_cast<JDIMENSION>(w.x), width = static_cast<JDIMENSION>(w.width);
  jpeg_crop_scanline(&cinfo, &x, &width);
  if (w.y > 0) jpeg_skip_scanlines(&cinfo, static_cast<JDIMENSION>(w.y));
  const size_t stride = size_t{cinfo.output_width} * 3;
  const JDIMENSION rows = static_cast<JDIMENSION>(w.height);
  std::unique_ptr<uint8_t[]> out(new uint8_t[stride * rows]);
  JSAMPROW ptrs[16];
  for (JDIMENSION done = 0; done < rows;) {
    const JDIMENSION n = std::min<JDIMENSION>(16, rows - done);
    for (JDIMENSION i = 0; i < n; ++i) ptrs[i] = out.get() + (done + i) * stride;
    done += jpeg_read_scanlines(&cinfo, ptrs, n);
  }
  jpeg_skip_scanlines(&cinfo, cinfo.output_height - cinfo.output_scanline);
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  benchmark::DoNotOptimize(out.get());
}

image::RandomResizedCropOptions RrcOptions(bool antialias) {
  image::RandomResizedCropOptions o;  // 224x224, torchvision's box, ImageNet, CHW
  o.antialias = antialias;
  return o;
}

void Finish(benchmark::State& state) { state.SetItemsProcessed(static_cast<int64_t>(state.iterations())); }

void BM_DecodeLibjpeg(benchmark::State& state, int q) {
  const auto& jpegs = g_jpegs[q];
  size_t n = 0;
  for (auto _ : state) DecodeDirect(jpegs[n++ % jpegs.size()]);
  Finish(state);
}

void BM_DecodeSluice(benchmark::State& state, int q) {
  const auto& jpegs = g_jpegs[q];
  size_t n = 0;
  for (auto _ : state) benchmark::DoNotOptimize(image::DecodeJpeg(jpegs[n++ % jpegs.size()]));
  Finish(state);
}

std::vector<image::CropWindow> Boxes(const std::vector<std::string>& jpegs) {
  std::vector<image::CropWindow> boxes(kSeeds);
  for (uint64_t s = 0; s < kSeeds; ++s) {
    const std::string& jpeg = jpegs[s % jpegs.size()];
    const Tensor shape = *image::ExtractJpegShape(jpeg, DType::kInt64);
    boxes[s] = image::SampleRandomResizedCrop(shape.data<int64_t>()[0], shape.data<int64_t>()[1], RrcOptions(false), s)
                   ->window;
  }
  return boxes;
}

void BM_DecodeAndCropLibjpeg(benchmark::State& state, int q) {
  const auto& jpegs = g_jpegs[q];
  const std::vector<image::CropWindow> boxes = Boxes(jpegs);
  uint64_t n = 0;
  for (auto _ : state) {
    const uint64_t s = n++ % kSeeds;
    DecodeAndCropDirect(jpegs[s % jpegs.size()], boxes[s]);
  }
  Finish(state);
}

void BM_DecodeAndCropSluice(benchmark::State& state, int q) {
  const auto& jpegs = g_jpegs[q];
  const std::vector<image::CropWindow> boxes = Boxes(jpegs);
  uint64_t n = 0;
  for (auto _ : state) {
    const uint64_t s = n++ % kSeeds;
    benchmark::DoNotOptimize(image::DecodeAndCropJpeg(jpegs[s % jpegs.size()], boxes[s]));
  }
  Finish(state);
}

// The resize + flip + normalise step alone, on crops decoded beforehand
// (the first 32 (image, seed) boxes): what the fused op adds to the decode.
// Forces `kernel` (nullopt: the automatic choice) while a benchmark runs;
// false (and the benchmark skipped) if this CPU lacks it.
class KernelScope {
 public:
  KernelScope(benchmark::State& state, std::optional<ResizeKernel> kernel) {
    if (!kernel) return;
    if (!sluice::image::internal::ResizeKernelSupported(*kernel)) {
      state.SkipWithError("resize kernel not supported on this CPU");
      return;
    }
    force_.emplace(*kernel);
  }

 private:
  std::optional<sluice::image::internal::ScopedResizeKernelForTesting> force_;
};

// The fused step's resize options: 224x224, ImageNet normalisation, CHW.
image::ResizeFlipNormalizeOptions Resize224() {
  image::ResizeFlipNormalizeOptions o;
  o.height = 224;
  o.width = 224;
  o.normalize = RrcOptions(false).normalize;
  return o;
}

void BM_ResizeFlipNormalizeSluice(benchmark::State& state, int q, std::optional<ResizeKernel> kernel) {
  KernelScope scope(state, kernel);
  const auto& jpegs = g_jpegs[q];
  constexpr uint64_t kCrops = 32;
  std::vector<Tensor> crops;
  std::vector<bool> flips;
  for (uint64_t s = 0; s < kCrops; ++s) {
    const std::string& jpeg = jpegs[s % jpegs.size()];
    const Tensor shape = *image::ExtractJpegShape(jpeg, DType::kInt64);
    const image::RandomResizedCropParams p =
        *image::SampleRandomResizedCrop(shape.data<int64_t>()[0], shape.data<int64_t>()[1], RrcOptions(false), s);
    crops.push_back(*image::DecodeAndCropJpeg(jpeg, p.window));
    flips.push_back(p.flip);
  }
  image::ResizeFlipNormalizeOptions o = Resize224();
  Tensor out(DType::kFloat32, TensorShape{3, 224, 224});
  uint64_t n = 0;
  for (auto _ : state) {
    const uint64_t s = n++ % kCrops;
    o.flip_left_right = flips[s];
    benchmark::DoNotOptimize(image::ResizeFlipNormalizeInto(crops[s], o, out));
  }
  Finish(state);
}

// DecodeAndCropJpeg timed alone, each one right after a resize of the
// previous crop by `kernel` (untimed; none: no resize), as the fused op
// alternates them: how much a resize kernel slows the decode that follows
// it (resize_kernels.h). Manual time: the decodes only.
void BM_DecodeAfterResize(benchmark::State& state, int q, std::optional<ResizeKernel> kernel) {
  KernelScope scope(state, kernel);
  const auto& jpegs = g_jpegs[q];
  const std::vector<image::CropWindow> boxes = Boxes(jpegs);
  image::ResizeFlipNormalizeOptions o = Resize224();
  Tensor batch(DType::kFloat32, TensorShape{8, 3, 224, 224});
  uint64_t n = 0;
  for (auto _ : state) {
    const uint64_t s = n++ % kSeeds;
    const auto start = std::chrono::steady_clock::now();
    sluice::Result<Tensor> crop = image::DecodeAndCropJpeg(jpegs[s % jpegs.size()], boxes[s]);
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!crop.ok()) {
      state.SkipWithError(crop.status().ToString().c_str());
      break;
    }
    if (kernel && !image::ResizeFlipNormalizeInto(*crop, o, batch.Slice(static_cast<int64_t>(s % 8))).ok()) {
      state.SkipWithError("resize failed");
      break;
    }
  }
  Finish(state);
}

void RandomResizedCrop(benchmark::State& state, int q, bool antialias, int64_t size, bool dct_scaling,
                       std::optional<ResizeKernel> kernel, image::DataFormat format) {
  KernelScope scope(state, kernel);
  const auto& jpegs = g_jpegs[q];
  image::RandomResizedCropOptions o = RrcOptions(antialias);
  o.height = o.width = size;
  o.dct_scaling = dct_scaling;
  o.normalize.data_format = format;
  Tensor batch(DType::kFloat32, format == image::DataFormat::kCHW ? TensorShape{8, 3, o.height, o.width}
                                                                  : TensorShape{8, o.height, o.width, 3});
  uint64_t n = 0;
  for (auto _ : state) {
    const uint64_t s = n++ % kSeeds;
    sluice::Status st = image::DecodeRandomResizedCropInto(jpegs[s % jpegs.size()], o, s, batch.Slice(s % 8));
    if (!st.ok()) state.SkipWithError(st.ToString().c_str());
  }
  Finish(state);
}

void BM_RandomResizedCropSluice(benchmark::State& state, int q, bool antialias, int64_t size, bool dct_scaling,
                                std::optional<ResizeKernel> kernel) {
  RandomResizedCrop(state, q, antialias, size, dct_scaling, kernel, image::DataFormat::kCHW);
}

// The same into HWC rows (TensorFlow's layout).
void BM_RandomResizedCropHwc(benchmark::State& state, int q, std::optional<ResizeKernel> kernel) {
  RandomResizedCrop(state, q, /*antialias=*/false, 224, /*dct_scaling=*/false, kernel, image::DataFormat::kHWC);
}

// How far dct_scaling moves the 112x112 output from the plain path, over
// the 256 (image, seed) pairs of quality 90: "mean|max" absolute difference
// on the normalised scale, and the fraction of boxes it engaged on.
std::string DctScalingDifference() {
  image::RandomResizedCropOptions plain = RrcOptions(false), scaled = RrcOptions(false);
  plain.height = plain.width = scaled.height = scaled.width = 112;
  scaled.dct_scaling = true;
  double sum = 0, worst = 0;
  int64_t count = 0, engaged = 0;
  for (uint64_t s = 0; s < kSeeds; ++s) {
    const std::string& jpeg = g_jpegs[0][s % g_jpegs[0].size()];
    const Tensor a = *image::DecodeRandomResizedCrop(jpeg, plain, s);
    const Tensor b = *image::DecodeRandomResizedCrop(jpeg, scaled, s);
    double image_sum = 0;
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      const double d = std::abs(double{a.data<float>()[i]} - double{b.data<float>()[i]});
      image_sum += d;
      worst = std::max(worst, d);
    }
    sum += image_sum;
    count += a.num_elements();
    engaged += image_sum > 0 ? 1 : 0;
  }
  char text[96];
  std::snprintf(text, sizeof(text), "mean %.4f max %.3f, engaged on %.2f of boxes", sum / double(count), worst,
                double(engaged) / kSeeds);
  return text;
}

void RegisterAll() {
  for (int q = 0; q < 2; ++q) {
    const std::string suffix = "/q" + std::to_string(kQualities[q]);
    const auto add = [&](const std::string& name, auto fn, auto... args) {
      benchmark::RegisterBenchmark((name + suffix).c_str(), fn, q, args...)->Unit(benchmark::kMicrosecond);
    };
    add("image/decode/libjpeg_direct", BM_DecodeLibjpeg);
    add("image/decode/sluice", BM_DecodeSluice);
    add("image/decode_and_crop/libjpeg_direct", BM_DecodeAndCropLibjpeg);
    add("image/decode_and_crop/sluice", BM_DecodeAndCropSluice);
    const std::optional<ResizeKernel> automatic, portable = ResizeKernel::kPortable, sse2 = ResizeKernel::kSse2,
                                      avx2 = ResizeKernel::kAvx2, avx512 = ResizeKernel::kAvx512;
    add("image/resize_flip_normalize/sluice", BM_ResizeFlipNormalizeSluice, automatic);
    add("image/resize_flip_normalize/sluice_portable", BM_ResizeFlipNormalizeSluice, portable);
    add("image/resize_flip_normalize/sluice_sse2", BM_ResizeFlipNormalizeSluice, sse2);
    add("image/resize_flip_normalize/sluice_avx2", BM_ResizeFlipNormalizeSluice, avx2);
    add("image/resize_flip_normalize/sluice_avx512", BM_ResizeFlipNormalizeSluice, avx512);
    for (const auto& [kernel_name, kernel] :
         {std::pair{"none", std::optional<ResizeKernel>()}, std::pair{"sse2", sse2}, std::pair{"avx2", avx2},
          std::pair{"avx512", avx512}}) {
      benchmark::RegisterBenchmark((std::string("image/decode_after_resize/") + kernel_name + suffix).c_str(),
                                   BM_DecodeAfterResize, q, kernel)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
    add("image/rrc/sluice", BM_RandomResizedCropSluice, false, int64_t{224}, false, automatic);
    add("image/rrc/sluice_portable", BM_RandomResizedCropSluice, false, int64_t{224}, false, portable);
    add("image/rrc/sluice_sse2", BM_RandomResizedCropSluice, false, int64_t{224}, false, sse2);
    add("image/rrc/sluice_avx2", BM_RandomResizedCropSluice, false, int64_t{224}, false, avx2);
    add("image/rrc/sluice_avx512", BM_RandomResizedCropSluice, false, int64_t{224}, false, avx512);
    add("image/rrc_hwc/sluice_avx2", BM_RandomResizedCropHwc, avx2);
    add("image/rrc_hwc/sluice_avx512", BM_RandomResizedCropHwc, avx512);
    add("image/rrc_antialias/sluice", BM_RandomResizedCropSluice, true, int64_t{224}, false, automatic);
    add("image/rrc112/sluice", BM_RandomResizedCropSluice, false, int64_t{112}, false, automatic);
    add("image/rrc112_dct/sluice", BM_RandomResizedCropSluice, false, int64_t{112}, true, automatic);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool generate_only = false;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string_view a(argv[i]);
    if (a.starts_with("--image_dir=")) {
      g_dir = std::string(a.substr(std::strlen("--image_dir=")));
    } else if (a == "--generate_only") {
      generate_only = true;
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (!LoadOrGenerate()) return 1;
  if (generate_only) return 0;
  RegisterAll();
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 1;
  benchmark::AddCustomContext("image_dir", g_dir);
  benchmark::AddCustomContext("dct_scaling_diff_112", DctScalingDifference());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
