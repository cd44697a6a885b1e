// The two-tap RGB kernel of resize_kernels.h, in SSE2 and AVX2 + FMA.
//
// Layout of the work, per output row y:
//   vertical:   row[i] = w0 * in[r0][i] + w1 * in[r1][i], i < in_width * 3
//               (uint8 widened to float in registers), then kPad zeros;
//   horizontal: pixel j = w0[j] * row[3 f] + w1[j] * row[3 f + 3] with
//               f = x.first[j], one pixel (r, g, b, junk) per 4-float
//               vector, read by unaligned loads at 3 f and 3 f + 3 (the
//               junk lane is the next pixel's red, or padding); then
//               normalised and stored: for CHW four (SSE2) or eight (AVX2)
//               pixels are transposed into channel vectors, for HWC each
//               pixel vector is stored at 3 j, its junk lane overwritten by
//               the next pixel's store.
// The weights of each output column are stored pre-broadcast (4 lanes each)
// so that the loop loads them instead of shuffling.
#include "image/resize_kernels.h"

#include <atomic>
#include <cstdlib>
#include <vector>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && defined(__SSE2__)
#define SLUICE_RESIZE_X86 1
#include <immintrin.h>
#endif

namespace sluice::image::internal {
namespace {

// Zero floats after each vertical row: the second tap of a last column whose
// w1 is 0 reads row[3 * in_width .. + 3], and the junk lane one more.
constexpr int64_t kPad = 8;

// Scalar output column j of a row (the tails of the vector loops).
inline void Pixel(const float* row, const TwoTapAxis& x, int64_t j, float out[3]) {
  const float* p = row + int64_t{x.first[j]} * 3;
  const float w0 = x.w0[j], w1 = x.w1[j];
  for (int c = 0; c < 3; ++c) out[c] = w0 * p[c] + w1 * p[c + 3];
}

inline void StorePixelScalar(const float* row, const TwoTapAxis& x, int64_t j, const TwoTapRgbJob& job,
                             int64_t y) {
  float v[3];
  Pixel(row, x, j, v);
  const int64_t plane = job.out_height * job.out_width;
  for (int c = 0; c < 3; ++c) {
    const float o = v[c] * job.a[c] + job.b[c];
    if (job.chw) {
      job.out[c * plane + y * job.out_width + j] = o;
    } else {
      job.out[(y * job.out_width + j) * 3 + c] = o;
    }
  }
}

#if SLUICE_RESIZE_X86

// ---------------------------------------------------------------- SSE2 ----

// row[0, n) = w0 * r0[i] (+ w1 * r1[i] when kTwo).
template <bool kTwo>
void VerticalSse2(const uint8_t* r0, const uint8_t* r1, float w0, float w1, int64_t n, float* row) {
  const __m128i zero = _mm_setzero_si128();
  const __m128 v0 = _mm_set1_ps(w0), v1 = _mm_set1_ps(w1);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r0 + i));
    const __m128i a_lo = _mm_unpacklo_epi8(a, zero), a_hi = _mm_unpackhi_epi8(a, zero);
    __m128 f[4] = {_mm_cvtepi32_ps(_mm_unpacklo_epi16(a_lo, zero)), _mm_cvtepi32_ps(_mm_unpackhi_epi16(a_lo, zero)),
                   _mm_cvtepi32_ps(_mm_unpacklo_epi16(a_hi, zero)), _mm_cvtepi32_ps(_mm_unpackhi_epi16(a_hi, zero))};
    for (__m128& v : f) v = _mm_mul_ps(v0, v);
    if constexpr (kTwo) {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r1 + i));
      const __m128i b_lo = _mm_unpacklo_epi8(b, zero), b_hi = _mm_unpackhi_epi8(b, zero);
      f[0] = _mm_add_ps(f[0], _mm_mul_ps(v1, _mm_cvtepi32_ps(_mm_unpacklo_epi16(b_lo, zero))));
      f[1] = _mm_add_ps(f[1], _mm_mul_ps(v1, _mm_cvtepi32_ps(_mm_unpackhi_epi16(b_lo, zero))));
      f[2] = _mm_add_ps(f[2], _mm_mul_ps(v1, _mm_cvtepi32_ps(_mm_unpacklo_epi16(b_hi, zero))));
      f[3] = _mm_add_ps(f[3], _mm_mul_ps(v1, _mm_cvtepi32_ps(_mm_unpackhi_epi16(b_hi, zero))));
    }
    for (int k = 0; k < 4; ++k) _mm_storeu_ps(row + i + 4 * k, f[k]);
  }
  for (; i < n; ++i) {
    float v = w0 * static_cast<float>(r0[i]);
    if constexpr (kTwo) v += w1 * static_cast<float>(r1[i]);
    row[i] = v;
  }
}

// Output pixel j as (r, g, b, junk): w0 * row[3 f ..] + w1 * row[3 f + 3 ..].
// `wt` holds w0[j] four times, then w1[j] four times.
inline __m128 PixelSse2(const float* row, int32_t offset, const float* wt) {
  const float* p = row + offset;
  return _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(wt), _mm_loadu_ps(p)),
                    _mm_mul_ps(_mm_loadu_ps(wt + 4), _mm_loadu_ps(p + 3)));
}

struct ColumnsSse2 {
  std::vector<int32_t> offset;  // 3 * x.first[j]
  std::vector<float> wt;        // 8 per column (see PixelSse2)
};

ColumnsSse2 MakeColumnsSse2(const TwoTapAxis& x, int64_t out_w) {
  ColumnsSse2 c;
  c.offset.resize(out_w);
  c.wt.resize(out_w * 8);
  for (int64_t j = 0; j < out_w; ++j) {
    c.offset[j] = x.first[j] * 3;
    for (int k = 0; k < 4; ++k) {
      c.wt[j * 8 + k] = x.w0[j];
      c.wt[j * 8 + 4 + k] = x.w1[j];
    }
  }
  return c;
}

void RunSse2(const TwoTapRgbJob& job) {
  const int64_t out_w = job.out_width, n = job.in_width * 3;
  const TwoTapAxis& x = *job.x;
  const ColumnsSse2 cols = MakeColumnsSse2(x, out_w);
  std::vector<float> row(n + kPad, 0.0f);
  const __m128 a_r = _mm_set1_ps(job.a[0]), a_g = _mm_set1_ps(job.a[1]), a_b = _mm_set1_ps(job.a[2]);
  const __m128 b_r = _mm_set1_ps(job.b[0]), b_g = _mm_set1_ps(job.b[1]), b_b = _mm_set1_ps(job.b[2]);
  const __m128 a_px = _mm_setr_ps(job.a[0], job.a[1], job.a[2], 0.0f);
  const __m128 b_px = _mm_setr_ps(job.b[0], job.b[1], job.b[2], 0.0f);
  const int64_t plane = job.out_height * out_w;
  for (int64_t y = 0; y < job.out_height; ++y) {
    const uint8_t* r0 = job.in + job.y->first[y] * job.row_stride;
    const float w1 = job.y->w1[y];
    if (w1 != 0.0f) {
      VerticalSse2<true>(r0, r0 + job.row_stride, job.y->w0[y], w1, n, row.data());
    } else {
      VerticalSse2<false>(r0, r0, job.y->w0[y], 0.0f, n, row.data());
    }
    int64_t j = 0;
    if (job.chw) {
      float* out_r = job.out + y * out_w;
      float* out_g = out_r + plane;
      float* out_b = out_g + plane;
      for (; j + 4 <= out_w; j += 4) {
        const __m128 p0 = PixelSse2(row.data(), cols.offset[j], &cols.wt[j * 8]);
        const __m128 p1 = PixelSse2(row.data(), cols.offset[j + 1], &cols.wt[(j + 1) * 8]);
        const __m128 p2 = PixelSse2(row.data(), cols.offset[j + 2], &cols.wt[(j + 2) * 8]);
        const __m128 p3 = PixelSse2(row.data(), cols.offset[j + 3], &cols.wt[(j + 3) * 8]);
        const __m128 t0 = _mm_unpacklo_ps(p0, p1);  // r0 r1 g0 g1
        const __m128 t1 = _mm_unpacklo_ps(p2, p3);  // r2 r3 g2 g3
        const __m128 t2 = _mm_unpackhi_ps(p0, p1);  // b0 b1 . .
        const __m128 t3 = _mm_unpackhi_ps(p2, p3);  // b2 b3 . .
        _mm_storeu_ps(out_r + j, _mm_add_ps(_mm_mul_ps(_mm_movelh_ps(t0, t1), a_r), b_r));
        _mm_storeu_ps(out_g + j, _mm_add_ps(_mm_mul_ps(_mm_movehl_ps(t1, t0), a_g), b_g));
        _mm_storeu_ps(out_b + j, _mm_add_ps(_mm_mul_ps(_mm_movelh_ps(t2, t3), a_b), b_b));
      }
    } else {
      float* out_row = job.out + y * out_w * 3;
      // Pixel j's 4-float store spills into pixel j + 1, stored next.
      for (; j + 1 < out_w; ++j) {
        const __m128 p = PixelSse2(row.data(), cols.offset[j], &cols.wt[j * 8]);
        _mm_storeu_ps(out_row + j * 3, _mm_add_ps(_mm_mul_ps(p, a_px), b_px));
      }
    }
    for (; j < out_w; ++j) StorePixelScalar(row.data(), x, j, job, y);
  }
}

// ---------------------------------------------------------- AVX2 + FMA ----

#define SLUICE_AVX2 __attribute__((target("avx2,fma")))

// Eight uint8 as floats.
SLUICE_AVX2 inline __m256 Widen8(const uint8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

template <bool kTwo>
SLUICE_AVX2 void VerticalAvx2(const uint8_t* r0, const uint8_t* r1, float w0, float w1, int64_t n, float* row) {
  const __m256 v0 = _mm256_set1_ps(w0), v1 = _mm256_set1_ps(w1);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 f0 = _mm256_mul_ps(v0, Widen8(r0 + i)), f1 = _mm256_mul_ps(v0, Widen8(r0 + i + 8));
    if constexpr (kTwo) {
      f0 = _mm256_fmadd_ps(v1, Widen8(r1 + i), f0);
      f1 = _mm256_fmadd_ps(v1, Widen8(r1 + i + 8), f1);
    }
    _mm256_storeu_ps(row + i, f0);
    _mm256_storeu_ps(row + i + 8, f1);
  }
  for (; i < n; ++i) {
    float v = w0 * static_cast<float>(r0[i]);
    if constexpr (kTwo) v += w1 * static_cast<float>(r1[i]);
    row[i] = v;
  }
}

// Output pixels j (low half) and j + 4 (high half), each (r, g, b, junk);
// `offsets`: their 3 * first (low and high word). `wt`: w0[j] x4,
// w0[j + 4] x4, w1[j] x4, w1[j + 4] x4.
SLUICE_AVX2 inline __m256 PixelPairAvx2(const float* row, uint64_t offsets, const float* wt) {
  const float* lo = row + static_cast<uint32_t>(offsets);
  const float* hi = row + (offsets >> 32);
  const __m256 p0 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(lo)), _mm_loadu_ps(hi), 1);
  const __m256 p1 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(lo + 3)), _mm_loadu_ps(hi + 3), 1);
  return _mm256_fmadd_ps(_mm256_loadu_ps(wt + 8), p1, _mm256_mul_ps(_mm256_loadu_ps(wt), p0));
}

// Columns in groups of 8, as 4 pairs (j, j + 4): a pair's offsets
// 3 * first in one word (low: j, high: j + 4; one load for both), and its
// 16 weights (see PixelPairAvx2). Columns past the last whole group are
// left to the scalar tail.
struct ColumnsAvx2 {
  std::vector<uint64_t> pair_offset;
  std::vector<float> wt;
};

ColumnsAvx2 MakeColumnsAvx2(const TwoTapAxis& x, int64_t out_w) {
  ColumnsAvx2 c;
  const int64_t groups = out_w / 8;
  c.wt.resize(groups * 4 * 16);
  c.pair_offset.resize(groups * 4);
  for (int64_t g = 0; g < groups; ++g) {
    for (int i = 0; i < 4; ++i) {
      float* w = &c.wt[(g * 4 + i) * 16];
      const int64_t lo = g * 8 + i, hi = lo + 4;
      c.pair_offset[g * 4 + i] =
          static_cast<uint32_t>(x.first[lo] * 3) | uint64_t{static_cast<uint32_t>(x.first[hi] * 3)} << 32;
      for (int k = 0; k < 4; ++k) {
        w[k] = x.w0[lo];
        w[4 + k] = x.w0[hi];
        w[8 + k] = x.w1[lo];
        w[12 + k] = x.w1[hi];
      }
    }
  }
  return c;
}

SLUICE_AVX2 void RunAvx2(const TwoTapRgbJob& job) {
  const int64_t out_w = job.out_width, n = job.in_width * 3;
  const TwoTapAxis& x = *job.x;
  const ColumnsAvx2 cols = MakeColumnsAvx2(x, out_w);
  std::vector<float> row(n + kPad, 0.0f);
  const __m256 a_r = _mm256_set1_ps(job.a[0]), a_g = _mm256_set1_ps(job.a[1]), a_b = _mm256_set1_ps(job.a[2]);
  const __m256 b_r = _mm256_set1_ps(job.b[0]), b_g = _mm256_set1_ps(job.b[1]), b_b = _mm256_set1_ps(job.b[2]);
  const __m256 a_px = _mm256_setr_ps(job.a[0], job.a[1], job.a[2], 0.0f, job.a[0], job.a[1], job.a[2], 0.0f);
  const __m256 b_px = _mm256_setr_ps(job.b[0], job.b[1], job.b[2], 0.0f, job.b[0], job.b[1], job.b[2], 0.0f);
  const int64_t plane = job.out_height * out_w;
  const float* r = row.data();
  for (int64_t y = 0; y < job.out_height; ++y) {
    const uint8_t* r0 = job.in + job.y->first[y] * job.row_stride;
    const float w1 = job.y->w1[y];
    if (w1 != 0.0f) {
      VerticalAvx2<true>(r0, r0 + job.row_stride, job.y->w0[y], w1, n, row.data());
    } else {
      VerticalAvx2<false>(r0, r0, job.y->w0[y], 0.0f, n, row.data());
    }
    int64_t j = 0;
    if (job.chw) {
      float* out_r = job.out + y * out_w;
      float* out_g = out_r + plane;
      float* out_b = out_g + plane;
      for (; j + 8 <= out_w; j += 8) {
        const uint64_t* o = &cols.pair_offset[j / 2];
        const float* wt = &cols.wt[j / 8 * 64];
        const __m256 p0 = PixelPairAvx2(r, o[0], wt);
        const __m256 p1 = PixelPairAvx2(r, o[1], wt + 16);
        const __m256 p2 = PixelPairAvx2(r, o[2], wt + 32);
        const __m256 p3 = PixelPairAvx2(r, o[3], wt + 48);
        const __m256 t0 = _mm256_unpacklo_ps(p0, p1);  // r0 r1 g0 g1 | r4 r5 g4 g5
        const __m256 t1 = _mm256_unpacklo_ps(p2, p3);  // r2 r3 g2 g3 | r6 r7 g6 g7
        const __m256 t2 = _mm256_unpackhi_ps(p0, p1);  // b0 b1 . .   | b4 b5 . .
        const __m256 t3 = _mm256_unpackhi_ps(p2, p3);  // b2 b3 . .   | b6 b7 . .
        _mm256_storeu_ps(out_r + j, _mm256_fmadd_ps(_mm256_shuffle_ps(t0, t1, 0x44), a_r, b_r));
        _mm256_storeu_ps(out_g + j, _mm256_fmadd_ps(_mm256_shuffle_ps(t0, t1, 0xEE), a_g, b_g));
        _mm256_storeu_ps(out_b + j, _mm256_fmadd_ps(_mm256_shuffle_ps(t2, t3, 0x44), a_b, b_b));
      }
    } else {
      float* out_row = job.out + y * out_w * 3;
      // Pixels j..j+7 stored in order, each spilling into the next; the
      // last one into pixel j + 8, which must exist.
      for (; j + 8 < out_w; j += 8) {
        const uint64_t* o = &cols.pair_offset[j / 2];
        const float* wt = &cols.wt[j / 8 * 64];
        __m256 q[4];
        for (int i = 0; i < 4; ++i) q[i] = _mm256_fmadd_ps(PixelPairAvx2(r, o[i], wt + 16 * i), a_px, b_px);
        for (int i = 0; i < 4; ++i) _mm_storeu_ps(out_row + (j + i) * 3, _mm256_castps256_ps128(q[i]));
        for (int i = 0; i < 4; ++i) _mm_storeu_ps(out_row + (j + 4 + i) * 3, _mm256_extractf128_ps(q[i], 1));
      }
    }
    for (; j < out_w; ++j) StorePixelScalar(r, x, j, job, y);
  }
}

#undef SLUICE_AVX2

bool CpuHasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

#endif  // SLUICE_RESIZE_X86

// -1: automatic; else the forced ResizeKernel.
std::atomic<int> g_forced{-1};

ResizeKernel BestKernel() {
#if SLUICE_RESIZE_X86
  return CpuHasAvx2() ? ResizeKernel::kAvx2 : ResizeKernel::kSse2;
#else
  return ResizeKernel::kPortable;
#endif
}

}  // namespace

bool ResizeKernelSupported(ResizeKernel kernel) {
  switch (kernel) {
    case ResizeKernel::kPortable: return true;
#if SLUICE_RESIZE_X86
    case ResizeKernel::kSse2: return true;
    case ResizeKernel::kAvx2: return CpuHasAvx2();
#endif
    default: return false;
  }
}

ResizeKernel ResizeKernelInUse() {
  const int forced = g_forced.load(std::memory_order_relaxed);
  return forced >= 0 ? static_cast<ResizeKernel>(forced) : BestKernel();
}

std::optional<ResizeKernel> ForceResizeKernelForTesting(std::optional<ResizeKernel> kernel) {
  const int previous = g_forced.exchange(kernel ? static_cast<int>(*kernel) : -1, std::memory_order_relaxed);
  return previous >= 0 ? std::optional(static_cast<ResizeKernel>(previous)) : std::nullopt;
}

std::string_view ResizeKernelName(ResizeKernel kernel) {
  switch (kernel) {
    case ResizeKernel::kPortable: return "portable";
    case ResizeKernel::kSse2: return "sse2";
    case ResizeKernel::kAvx2: return "avx2";
  }
  return "?";
}

void ResampleTwoTapRgb(ResizeKernel kernel, const TwoTapRgbJob& job) {
#if SLUICE_RESIZE_X86
  if (kernel == ResizeKernel::kAvx2) return RunAvx2(job);
  if (kernel == ResizeKernel::kSse2) return RunSse2(job);
#endif
  (void)job;
  std::abort();  // a bug: kPortable, or a kernel this build or CPU lacks
}

}  // namespace sluice::image::internal
