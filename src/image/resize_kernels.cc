// The two-tap RGB kernel of resize_kernels.h, in SSE2 and AVX2 + FMA, and
// its channel-plane form in AVX-512 (described before RunAvx512).
//
// Layout of the work (SSE2, AVX2), per output row y:
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

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/bulk_copy.h"

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

// ------------------------------------------------ AVX-512 (F, BW, VBMI) ----
//
// Channel planes instead of interleaved pixels, so that the horizontal pass
// is a table lookup rather than per-pixel loads and transposes:
//   vertical:   16 pixels (48 bytes) of each source row are loaded at once
//               and split into R, G and B as zero-extended 32-bit lanes by
//               one masked byte permute per channel (VBMI), converted, and
//               combined into three float planes of the window's width;
//   horizontal: 16 output columns at a time; their two taps lie within a
//               run of 32 (or 48) floats from the group's first source
//               column, so each tap of each channel is one two-table
//               permute (vpermt2ps) of that run, or two and a blend; a
//               downscale past ~2.9x, whose taps spread wider, gathers.
// The arithmetic is the AVX2 kernel's, in the same order (vertical
// w0 * a + w1 * b as mul then FMA, horizontal likewise, then x * a + b by
// FMA), so both give the same floats wherever both run vectors. For HWC
// the three channel vectors of 16 pixels are interleaved by two permutes
// per stored vector (HwcInterleave), faster than falling back to the AVX2
// kernel (docs/perf/resize-kernels.md).
//
// An output of 256 KiB or more (a 224x224 crop is 588 KiB) is written with
// non-temporal stores, as BulkCopy writes a batch (core/bulk_copy.h): it is
// read next by another thread (the batch assembly) or a device copy, and in
// the pipeline its lines were last held by that other thread, so a cached
// store first pays a read for ownership of each. The pipeline gains; a
// caller that rereads the output at once loses a little
// (docs/perf/resize-kernels.md).

#define SLUICE_AVX512 __attribute__((target("avx512f,avx512bw,avx512vbmi,avx2,fma")))

// Floats of zeros after each plane: the horizontal pass loads up to 48
// floats from a group's first source column.
constexpr int64_t kPlanePad = 48;

// int32 lanes as floats. (The masked forms: GCC 12's unmasked ones start
// from an undefined vector and warn under -Wmaybe-uninitialized.)
SLUICE_AVX512 inline __m512 Float(__m512i v) { return _mm512_maskz_cvtepi32_ps(0xFFFF, v); }

// The three channel planes of one vertical row. `shuffles` holds the
// byte-permute indices of R, G and B (byte 4k of lane k = 3k + c).
template <bool kTwo>
SLUICE_AVX512 void VerticalPlanesAvx512(const uint8_t* r0, const uint8_t* r1, float w0, float w1, int64_t width,
                                        const __m512i shuffles[3], float* planes[3]) {
  const __m512 v0 = _mm512_set1_ps(w0), v1 = _mm512_set1_ps(w1);
  constexpr __mmask64 kLowBytes = 0x1111111111111111ULL;  // byte 0 of each 32-bit lane
  for (int64_t i = 0; i < width; i += 16) {
    const int64_t bytes = std::min<int64_t>(48, (width - i) * 3);
    const __mmask64 load = bytes == 48 ? __mmask64{0xFFFFFFFFFFFFULL} : (__mmask64{1} << bytes) - 1;
    const __m512i a = _mm512_maskz_loadu_epi8(load, r0 + i * 3);
    __m512i b = _mm512_setzero_si512();
    if constexpr (kTwo) b = _mm512_maskz_loadu_epi8(load, r1 + i * 3);
    for (int c = 0; c < 3; ++c) {
      __m512 f = _mm512_mul_ps(v0, Float(_mm512_maskz_permutexvar_epi8(kLowBytes, shuffles[c], a)));
      if constexpr (kTwo) {
        f = _mm512_fmadd_ps(v1, Float(_mm512_maskz_permutexvar_epi8(kLowBytes, shuffles[c], b)), f);
      }
      // Lanes past `width` hold zeros and land in the plane's padding.
      _mm512_storeu_ps(planes[c] + i, f);
    }
  }
}

// How the horizontal pass reads a group's taps (one choice per job: the
// widest group decides).
enum class TapReach { k32, k48, kGather };

// Per group of 16 output columns: the first source column `base`, and the
// index of each column's first tap relative to it (absolute, for kGather);
// the second tap is the next index, and the weights are the axis's own.
struct GroupsAvx512 {
  TapReach reach = TapReach::k32;
  std::vector<int32_t> base;
  std::vector<int32_t> idx;  // 16 per group
};

GroupsAvx512 MakeGroupsAvx512(const TwoTapAxis& x, int64_t out_w) {
  GroupsAvx512 g;
  const int64_t groups = out_w / 16;
  g.base.resize(groups);
  g.idx.resize(groups * 16);
  int32_t widest = 0;
  for (int64_t k = 0; k < groups; ++k) {
    const auto first = x.first.begin() + k * 16;
    const int32_t lo = *std::min_element(first, first + 16), hi = *std::max_element(first, first + 16);
    g.base[k] = lo;
    widest = std::max(widest, hi - lo);
  }
  // The second tap is at most `widest` + 1 past the base.
  g.reach = widest + 1 < 32 ? TapReach::k32 : widest + 1 < 48 ? TapReach::k48 : TapReach::kGather;
  for (int64_t k = 0; k < groups; ++k) {
    const int32_t origin = g.reach == TapReach::kGather ? 0 : g.base[k];
    for (int64_t l = 0; l < 16; ++l) g.idx[k * 16 + l] = x.first[k * 16 + l] - origin;
  }
  return g;
}

// The taps `idx` (relative to `p`, see TapReach) of one plane.
template <TapReach kReach>
SLUICE_AVX512 inline __m512 Taps(const float* p, __m512i idx) {
  if constexpr (kReach == TapReach::k32) {
    return _mm512_permutex2var_ps(_mm512_loadu_ps(p), idx, _mm512_loadu_ps(p + 16));
  } else if constexpr (kReach == TapReach::k48) {
    const __m512 a = _mm512_loadu_ps(p), b = _mm512_loadu_ps(p + 16), c = _mm512_loadu_ps(p + 32);
    const __mmask16 far = _mm512_cmpge_epi32_mask(idx, _mm512_set1_epi32(32));
    return _mm512_mask_blend_ps(far, _mm512_permutex2var_ps(a, idx, b),
                                _mm512_permutex2var_ps(b, _mm512_sub_epi32(idx, _mm512_set1_epi32(16)), c));
  } else {
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), 0xFFFF, idx, p, 4);
  }
}

// Permute indices that interleave three channel vectors of 16 pixels into
// HWC order (r0 g0 b0 r1 ...): output vector k (floats 16k..16k+15) takes its
// R and G lanes from one two-table permute of (R, G), then its B lanes from
// a second of (that, B).
struct HwcInterleave {
  __m512i rg[3], b[3];
};

SLUICE_AVX512 HwcInterleave MakeHwcInterleave() {
  alignas(64) int32_t rg[3][16], b[3][16];
  for (int k = 0; k < 3; ++k) {
    for (int l = 0; l < 16; ++l) {
      const int t = 16 * k + l, pixel = t / 3, channel = t % 3;
      rg[k][l] = channel == 0 ? pixel : channel == 1 ? 16 + pixel : 0;
      b[k][l] = channel == 2 ? 16 + pixel : l;
    }
  }
  HwcInterleave h;
  for (int k = 0; k < 3; ++k) {
    h.rg[k] = _mm512_load_si512(rg[k]);
    h.b[k] = _mm512_load_si512(b[k]);
  }
  return h;
}

template <bool kStream>
SLUICE_AVX512 inline void Store(float* p, __m512 v) {
  if constexpr (kStream) {
    _mm512_stream_ps(p, v);  // REQUIRES: 64-byte aligned
  } else {
    _mm512_storeu_ps(p, v);
  }
}

// One output row's whole groups of 16 columns. `out`: the row of each
// channel plane (CHW), or the row itself in out[0] (HWC).
template <TapReach kReach, bool kStream, bool kChw>
SLUICE_AVX512 void HorizontalPlanesAvx512(const GroupsAvx512& g, const TwoTapAxis& x, const float* const planes[3],
                                          const float a[3], const float b[3], const HwcInterleave& hwc,
                                          int64_t groups, float* const out[3]) {
  for (int64_t k = 0; k < groups; ++k) {
    const int64_t j = k * 16;
    const __m512i i0 = _mm512_loadu_si512(&g.idx[j]), i1 = _mm512_add_epi32(i0, _mm512_set1_epi32(1));
    const __m512 w0 = _mm512_loadu_ps(&x.w0[j]), w1 = _mm512_loadu_ps(&x.w1[j]);
    const int64_t origin = kReach == TapReach::kGather ? 0 : g.base[k];
    __m512 o[3];
    for (int c = 0; c < 3; ++c) {
      const float* p = planes[c] + origin;
      const __m512 v = _mm512_fmadd_ps(w1, Taps<kReach>(p, i1), _mm512_mul_ps(w0, Taps<kReach>(p, i0)));
      o[c] = _mm512_fmadd_ps(v, _mm512_set1_ps(a[c]), _mm512_set1_ps(b[c]));
      if constexpr (kChw) Store<kStream>(out[c] + j, o[c]);
    }
    if constexpr (!kChw) {
      for (int v = 0; v < 3; ++v) {
        const __m512 rg = _mm512_permutex2var_ps(o[0], hwc.rg[v], o[1]);
        Store<kStream>(out[0] + j * 3 + 16 * v, _mm512_permutex2var_ps(rg, hwc.b[v], o[2]));
      }
    }
  }
}

using HorizontalFn = void (*)(const GroupsAvx512&, const TwoTapAxis&, const float* const[3], const float[3],
                             const float[3], const HwcInterleave&, int64_t, float* const[3]);

template <bool kStream, bool kChw>
HorizontalFn PickHorizontal(TapReach reach) {
  switch (reach) {
    case TapReach::k32: return HorizontalPlanesAvx512<TapReach::k32, kStream, kChw>;
    case TapReach::k48: return HorizontalPlanesAvx512<TapReach::k48, kStream, kChw>;
    case TapReach::kGather: break;
  }
  return HorizontalPlanesAvx512<TapReach::kGather, kStream, kChw>;
}

HorizontalFn PickHorizontal(TapReach reach, bool stream, bool chw) {
  if (chw) return stream ? PickHorizontal<true, true>(reach) : PickHorizontal<false, true>(reach);
  return stream ? PickHorizontal<true, false>(reach) : PickHorizontal<false, false>(reach);
}

SLUICE_AVX512 void RunAvx512(const TwoTapRgbJob& job) {
  const int64_t in_w = job.in_width, out_w = job.out_width;
  const TwoTapAxis& x = *job.x;
  const GroupsAvx512 g = MakeGroupsAvx512(x, out_w);
  const int64_t groups = out_w / 16;
  const int64_t stride = (in_w + 15) / 16 * 16 + kPlanePad;
  std::vector<float> plane_data(stride * 3, 0.0f);
  float* planes[3] = {plane_data.data(), plane_data.data() + stride, plane_data.data() + 2 * stride};
  alignas(64) uint8_t index_bytes[3][64] = {};
  for (int c = 0; c < 3; ++c) {
    for (int l = 0; l < 16; ++l) index_bytes[c][4 * l] = static_cast<uint8_t>(3 * l + c);
  }
  const __m512i shuffles[3] = {_mm512_load_si512(index_bytes[0]), _mm512_load_si512(index_bytes[1]),
                               _mm512_load_si512(index_bytes[2])};
  const int64_t plane = job.out_height * out_w;
  // Streaming stores need every vector store 64-byte aligned: whole groups
  // of 16 floats, and an aligned start.
  const bool stream = out_w % 16 == 0 && reinterpret_cast<uintptr_t>(job.out) % 64 == 0 &&
                      static_cast<uint64_t>(plane) * 3 * sizeof(float) >= sluice::internal::kStreamingCopyMinBytes;
  const HorizontalFn horizontal = PickHorizontal(g.reach, stream, job.chw);
  const HwcInterleave hwc = job.chw ? HwcInterleave{} : MakeHwcInterleave();  // HWC only
  for (int64_t y = 0; y < job.out_height; ++y) {
    const uint8_t* r0 = job.in + job.y->first[y] * job.row_stride;
    const float w1 = job.y->w1[y];
    if (w1 != 0.0f) {
      VerticalPlanesAvx512<true>(r0, r0 + job.row_stride, job.y->w0[y], w1, in_w, shuffles, planes);
    } else {
      VerticalPlanesAvx512<false>(r0, r0, job.y->w0[y], 0.0f, in_w, shuffles, planes);
    }
    float* const row = job.out + y * out_w * (job.chw ? 1 : 3);
    float* const out[3] = {row, job.chw ? row + plane : nullptr, job.chw ? row + 2 * plane : nullptr};
    horizontal(g, x, planes, job.a, job.b, hwc, groups, out);
    // The last out_w % 16 columns, one at a time from the planes.
    for (int64_t j = groups * 16; j < out_w; ++j) {
      const int64_t f = x.first[j];
      for (int c = 0; c < 3; ++c) {
        const float v = (x.w0[j] * planes[c][f] + x.w1[j] * planes[c][f + 1]) * job.a[c] + job.b[c];
        if (job.chw) {
          out[c][j] = v;
        } else {
          out[0][j * 3 + c] = v;
        }
      }
    }
  }
  // Orders the streaming stores before whatever publishes the output.
  if (stream) _mm_sfence();
}

#undef SLUICE_AVX512
#undef SLUICE_AVX2

bool CpuHasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx2") &&
                          __builtin_cpu_supports("fma");
  return has;
}

bool CpuHasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

#endif  // SLUICE_RESIZE_X86

// -1: automatic; else the forced ResizeKernel.
std::atomic<int> g_forced{-1};

ResizeKernel BestKernel() {
#if SLUICE_RESIZE_X86
  if (CpuHasAvx512()) return ResizeKernel::kAvx512;
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
    case ResizeKernel::kAvx512: return CpuHasAvx512();
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
    case ResizeKernel::kAvx512: return "avx512";
  }
  return "?";
}

void ResampleTwoTapRgb(ResizeKernel kernel, const TwoTapRgbJob& job) {
#if SLUICE_RESIZE_X86
  if (kernel == ResizeKernel::kAvx512) return RunAvx512(job);
  if (kernel == ResizeKernel::kAvx2) return RunAvx2(job);
  if (kernel == ResizeKernel::kSse2) return RunSse2(job);
#endif
  (void)job;
  std::abort();  // a bug: kPortable, or a kernel this build or CPU lacks
}

}  // namespace sluice::image::internal
