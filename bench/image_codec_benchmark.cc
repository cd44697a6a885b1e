// Image decoding against libjpeg-turbo and libpng called directly
// (bench/run.sh image). The peers do what a decoder returning a new image
// must: allocate the output, decode into it with the same settings. The
// images are synthetic (a noisy gradient, 1440x1080 and 224x224), encoded
// by sluice at quality 95 with 4:2:0 chroma, like a typical photo dataset.
#include <benchmark/benchmark.h>
#include <jpeglib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>

#include "sluice/image/codec.h"

namespace {

using sluice::DType;
using sluice::Tensor;
using sluice::TensorShape;
namespace image = sluice::image;

Tensor Picture(int64_t h, int64_t w) {
  Tensor t(DType::kUInt8, TensorShape{h, w, 3});
  std::mt19937 rng(1);
  uint8_t* p = t.data<uint8_t>();
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      for (int64_t c = 0; c < 3; ++c) *p++ = static_cast<uint8_t>(((x * (c + 1) + y * 2) / 3 + (x * y) % 97 + rng() % 24) & 255);
    }
  }
  return t;
}

const std::string& Jpeg(int64_t h, int64_t w) {
  static const std::string large = *image::EncodeJpeg(Picture(1080, 1440));
  static const std::string small = *image::EncodeJpeg(Picture(224, 224));
  return h > 224 ? large : small;
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

void BM_DecodeJpeg_Sluice(benchmark::State& state) {
  const std::string& data = Jpeg(state.range(0), state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(image::DecodeJpeg(data));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(data.size()));
}

void BM_DecodeJpeg_Libjpeg(benchmark::State& state) {
  const std::string& data = Jpeg(state.range(0), state.range(0));
  for (auto _ : state) DecodeDirect(data);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(data.size()));
}

// A 224x224 window of the large image: only its rows and MCU columns.
void BM_DecodeAndCropJpeg_Sluice(benchmark::State& state) {
  const std::string& data = Jpeg(1080, 1440);
  for (auto _ : state) benchmark::DoNotOptimize(image::DecodeAndCropJpeg(data, {400, 500, 224, 224}));
}

void BM_DecodePng_Sluice(benchmark::State& state) {
  static const std::string png = *image::EncodePng(Picture(1080, 1440));
  for (auto _ : state) benchmark::DoNotOptimize(image::DecodePng(png));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(png.size()));
}

BENCHMARK(BM_DecodeJpeg_Sluice)->Arg(224)->Arg(1440)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecodeJpeg_Libjpeg)->Arg(224)->Arg(1440)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecodeAndCropJpeg_Sluice)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecodePng_Sluice)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
