// Hand-written SIMD kernel of ResizeFlipNormalize's common case (resize.h):
// 3-channel uint8 input, at most two taps per output along each axis
// (bilinear without antialias, and any other method whose weights reduce to
// that), normalised float32 output in CHW or HWC. It is the heart of the
// fused random resized crop (random_resized_crop.h), and faster than the
// portable resampler in resize.cc, which relies on the compiler's
// auto-vectorisation (little at -O2, a RelWithDebInfo build's level); see
// docs/perf/resize-kernels.md.
//
// Three builds, chosen once at run time (function-level target attributes,
// so that the library stays baseline and never runs an instruction the CPU
// lacks): SSE2 (baseline x86-64) and AVX2 + FMA run the same algorithm;
// AVX-512 (F, BW and VBMI) splits the pixels into channel planes
// and reads the horizontal taps by table lookup, in about half the
// instructions. Elsewhere (non-x86) only the portable resampler exists.
//
// Why AVX-512 is the default where the CPU has it: the kernel runs between
// two JPEG decodes, every vector kernel slows the decode that follows it,
// and the AVX-512 one slows it least and is itself the fastest
// (docs/perf/resize-kernels.md). VBMI also keeps the kernel off the CPUs
// where 512-bit work costs the most clock (Skylake-SP, Cascade Lake: no
// VBMI); it runs on Ice Lake and later and on AMD Zen 4 and later.
//
// Order of work (vertical pass first, unlike the portable resampler): for
// each output row, the two source rows are combined into one float32 row of
// the window's width (uint8 widened in registers; three channel planes for
// AVX-512), then each output pixel combines two pixels of that row, is
// normalised (x * a[c] + b[c]) and stored, transposed to channel planes for
// CHW. So each output element is written once, and the horizontal pass runs
// out_h times (not once per source row, which is more when downscaling, the
// usual random-crop case). The result equals the portable path's up to
// float32 rounding (summation order, and FMA on AVX2 and AVX-512): a few
// float32 ulps of 255 before normalisation.
//
// Plain functions, thread-safe; the testing override is a process-wide
// atomic.
#ifndef SLUICE_SRC_IMAGE_RESIZE_KERNELS_H_
#define SLUICE_SRC_IMAGE_RESIZE_KERNELS_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace sluice::image::internal {

enum class ResizeKernel {
  kPortable,  // resize.cc's Resample2D: any method, dtype and channel count
  kSse2,      // the two-tap RGB kernel, baseline x86-64
  kAvx2,      // the same kernel with AVX2 + FMA
  kAvx512,    // channel planes and table lookups, AVX-512 F/BW/VBMI
};

// Whether this build and CPU can run `kernel` (kPortable: always).
bool ResizeKernelSupported(ResizeKernel kernel);

// The kernel ResizeFlipNormalize uses: the one forced for testing, else the
// best supported one (chosen once).
ResizeKernel ResizeKernelInUse();

// Tests: make ResizeKernelInUse() return `kernel` (nullopt: back to the
// automatic choice); returns the override it replaces.
// REQUIRES: ResizeKernelSupported(*kernel).
std::optional<ResizeKernel> ForceResizeKernelForTesting(std::optional<ResizeKernel> kernel);

// "portable", "sse2", "avx2", "avx512" (test names).
std::string_view ResizeKernelName(ResizeKernel kernel);

// Forces `kernel` for its lifetime, then restores the previous override.
class ScopedResizeKernelForTesting {
 public:
  explicit ScopedResizeKernelForTesting(ResizeKernel kernel) : previous_(ForceResizeKernelForTesting(kernel)) {}
  ~ScopedResizeKernelForTesting() { ForceResizeKernelForTesting(previous_); }
  ScopedResizeKernelForTesting(const ScopedResizeKernelForTesting&) = delete;
  ScopedResizeKernelForTesting& operator=(const ScopedResizeKernelForTesting&) = delete;

 private:
  std::optional<ResizeKernel> previous_;
};

// One axis, two taps per output: output i = w0[i] * src[first[i]] +
// w1[i] * src[first[i] + 1]. REQUIRES: first[i] in [0, in_size), and
// w1[i] == 0 where first[i] + 1 == in_size (that tap is then not read, or
// read from zero padding).
struct TwoTapAxis {
  std::vector<int32_t> first;
  std::vector<float> w0, w1;
};

// The work of one image. `x` is indexed by output column as stored: a
// horizontal flip is already folded into it.
struct TwoTapRgbJob {
  const uint8_t* in = nullptr;  // pixel (0, 0) of the window, 3 bytes/pixel
  int64_t row_stride = 0;       // bytes from one input row to the next
  int64_t in_height = 0, in_width = 0;
  const TwoTapAxis* y = nullptr;  // out_height entries
  const TwoTapAxis* x = nullptr;  // out_width entries
  int64_t out_height = 0, out_width = 0;
  float a[3] = {1, 1, 1}, b[3] = {0, 0, 0};  // out = resampled * a[c] + b[c]
  bool chw = true;         // channel planes [3][h][w], else [h][w][3]
  float* out = nullptr;    // 3 * out_height * out_width floats
};

// Runs `job` with `kernel`. REQUIRES: kernel != kPortable and
// ResizeKernelSupported(kernel); in_width * 3 + 8 < 2^31.
void ResampleTwoTapRgb(ResizeKernel kernel, const TwoTapRgbJob& job);

}  // namespace sluice::image::internal

#endif  // SLUICE_SRC_IMAGE_RESIZE_KERNELS_H_
