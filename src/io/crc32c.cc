// CRC32C: a portable slicing-by-8 implementation and an SSE4.2 one with three
// interleaved streams, chosen at run time.
//
// Notation: R(s, data) is the raw CRC register update (no pre/post
// inversion), so Value(data) = ~R(~0, data). R is linear over GF(2):
// R(s, A || B) = R(R(s, A), B) and R(s, X) = R(s, zeros(|X|)) ^ R(0, X).
// Three streams A, B, C of K bytes each therefore combine as
//   R(s, A || B || C) = Z(Z(R(s, A)) ^ R(0, B)) ^ R(0, C),  Z(x) = R(x, zeros(K)),
// and Z, being linear in its 32-bit argument, is four 256-entry tables.
//
// Long buffers on CPUs with AVX-512 and VPCLMULQDQ are folded instead:
// carry-less multiplication moves a 16-byte block N bytes forward,
//   R(0, A || zeros(N)) = R(0, clmul(A.lo, k1) ^ clmul(A.hi, k2)),
// where k1, k2 (32 bits each) depend only on N. Four 64-byte accumulators
// fold 256 bytes per step; they are then folded into one 16-byte block, whose
// CRC the CRC32 instruction finishes. Why: the 3-way CRC32 loop is no
// faster than the kernel copies a cached file into the read buffer, so
// TFRecord reading with checks ran at about half the speed of a plain read;
// folding is faster (docs/perf/crc32c.md).
// The constants are not tabulated: FoldKey solves for them, once, with the
// portable CRC, so they cannot drift from the definition of R.
#include "sluice/io/crc32c.h"

#include <array>
#include <bit>
#include <cassert>
#include <cstring>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SLUICE_CRC32C_X86 1
#include <immintrin.h>
#include <nmmintrin.h>
#endif

namespace sluice::io::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

using Table = std::array<std::array<uint32_t, 256>, 8>;

constexpr Table MakeTables() {
  Table t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][i] = c;
  }
  for (int s = 1; s < 8; ++s) {
    for (uint32_t i = 0; i < 256; ++i) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
  return t;
}

constexpr Table kTables = MakeTables();

inline uint32_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  return v;
}

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

// R(state, data), portable.
uint32_t RawPortable(uint32_t state, const unsigned char* p, size_t n) {
  const auto& t = kTables;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    state = t[0][(state ^ *p++) & 0xFF] ^ (state >> 8);
    --n;
  }
  while (n >= 8) {
    const uint32_t lo = state ^ Load32(reinterpret_cast<const char*>(p));
    const uint32_t hi = Load32(reinterpret_cast<const char*>(p) + 4);
    state = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
            t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    state = t[0][(state ^ *p++) & 0xFF] ^ (state >> 8);
    --n;
  }
  return state;
}

#if defined(SLUICE_CRC32C_X86)

// Z(x) = R(x, zeros(K)) as four byte-indexed tables.
struct ShiftTable {
  std::array<std::array<uint32_t, 256>, 4> t;

  explicit ShiftTable(size_t k) {
    static const unsigned char kZeros[4096] = {};
    uint32_t basis[32];
    for (int b = 0; b < 32; ++b) {
      uint32_t s = 1u << b;
      for (size_t left = k; left > 0;) {
        const size_t step = left < sizeof(kZeros) ? left : sizeof(kZeros);
        s = RawPortable(s, kZeros, step);
        left -= step;
      }
      basis[b] = s;
    }
    for (int j = 0; j < 4; ++j) {
      for (uint32_t v = 0; v < 256; ++v) {
        uint32_t acc = 0;
        for (int bit = 0; bit < 8; ++bit) {
          if (v & (1u << bit)) acc ^= basis[8 * j + bit];
        }
        t[j][v] = acc;
      }
    }
  }

  uint32_t Shift(uint32_t x) const {
    return t[0][x & 0xFF] ^ t[1][(x >> 8) & 0xFF] ^ t[2][(x >> 16) & 0xFF] ^ t[3][x >> 24];
  }
};

constexpr size_t kLongBlock = 4096;  // bytes per stream, long buffers
constexpr size_t kShortBlock = 512;  // bytes per stream, medium buffers

const ShiftTable& LongShift() {
  static const ShiftTable table(kLongBlock);
  return table;
}
const ShiftTable& ShortShift() {
  static const ShiftTable table(kShortBlock);
  return table;
}

// Three streams of `k` bytes each from p; returns the combined raw state.
__attribute__((target("sse4.2"))) inline uint64_t ThreeStreams(uint64_t state, const char* p, size_t k,
                                                              const ShiftTable& shift) {
  uint64_t c0 = state, c1 = 0, c2 = 0;
  const char* end = p + k;
  for (; p < end; p += 8) {
    c0 = _mm_crc32_u64(c0, Load64(p));
    c1 = _mm_crc32_u64(c1, Load64(p + k));
    c2 = _mm_crc32_u64(c2, Load64(p + 2 * k));
  }
  const uint32_t ab = shift.Shift(static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
  return shift.Shift(ab) ^ static_cast<uint32_t>(c2);
}

__attribute__((target("sse4.2"))) uint32_t RawSse42(uint32_t init, const char* p, size_t n) {
  uint64_t state = init;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    state = _mm_crc32_u8(static_cast<uint32_t>(state), static_cast<unsigned char>(*p++));
    --n;
  }
  if (n >= 3 * kLongBlock) {
    const ShiftTable& shift = LongShift();
    while (n >= 3 * kLongBlock) {
      state = ThreeStreams(state, p, kLongBlock, shift);
      p += 3 * kLongBlock;
      n -= 3 * kLongBlock;
    }
  }
  if (n >= 3 * kShortBlock) {
    const ShiftTable& shift = ShortShift();
    while (n >= 3 * kShortBlock) {
      state = ThreeStreams(state, p, kShortBlock, shift);
      p += 3 * kShortBlock;
      n -= 3 * kShortBlock;
    }
  }
  while (n >= 8) {
    state = _mm_crc32_u64(state, Load64(p));
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    state = _mm_crc32_u8(static_cast<uint32_t>(state), static_cast<unsigned char>(*p++));
    --n;
  }
  return static_cast<uint32_t>(state);
}

bool CpuHasSse42() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}

bool CpuHasVpclmul() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul") &&
         __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("vpclmulqdq");
}

// The 32-bit c with R(0, c as 4 little-endian bytes || zeros(12)) == target:
// Gaussian elimination over GF(2) (the map is linear and invertible).
uint32_t SolveFold(uint32_t target) {
  uint32_t basis[32] = {};  // basis[b]: an image whose highest set bit is b
  uint32_t combo[32] = {};  // which inputs XOR to basis[b]
  for (int i = 0; i < 32; ++i) {
    unsigned char block[16] = {};
    const uint32_t one = 1u << i;
    std::memcpy(block, &one, 4);
    uint32_t v = RawPortable(0, block, sizeof(block));
    uint32_t m = one;
    for (int b = 31; b >= 0 && v != 0; --b) {
      if (((v >> b) & 1) == 0) continue;
      if (basis[b] == 0) {
        basis[b] = v;
        combo[b] = m;
        break;
      }
      v ^= basis[b];
      m ^= combo[b];
    }
  }
  uint32_t c = 0;
  for (int b = 31; b >= 0; --b) {
    if ((target >> b) & 1) {
      target ^= basis[b];
      c ^= combo[b];
    }
  }
  assert(target == 0);
  return c;
}

// The constant that folds the low (half 0) or high (half 1) 8 bytes of a
// 16-byte block `n` bytes forward: the image of the block's first bit there.
uint64_t FoldKey(size_t n, int half) {
  std::vector<unsigned char> m(16 + n, 0);
  m[8 * static_cast<size_t>(half)] = 1;
  return SolveFold(RawPortable(0, m.data(), m.size()));
}

struct FoldKeys {
  __m128i k256, k64, k48, k32, k16;  // [low key, high key] for each distance
};

__attribute__((target("sse4.2,pclmul"))) __m128i MakeKey(size_t n) {
  return _mm_set_epi64x(static_cast<long long>(FoldKey(n, 1)), static_cast<long long>(FoldKey(n, 0)));
}

const FoldKeys& Keys() {
  static const FoldKeys keys{MakeKey(256), MakeKey(64), MakeKey(48), MakeKey(32), MakeKey(16)};
  return keys;
}

#define SLUICE_VPCLMUL_TARGET __attribute__((target("sse4.2,pclmul,avx512f,avx512vl,vpclmulqdq")))

SLUICE_VPCLMUL_TARGET inline __m512i Fold512(__m512i x, __m512i k, __m512i data) {
  // 0x96: three-way XOR.
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11), data,
                                   0x96);
}

SLUICE_VPCLMUL_TARGET inline __m128i Fold128(__m128i x, __m128i k, __m128i data) {
  return _mm_ternarylogic_epi64(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11), data, 0x96);
}

SLUICE_VPCLMUL_TARGET inline __m512i Load512(const char* p) { return _mm512_loadu_si512(p); }

// The maskz forms: GCC 12 warns (-Wuninitialized) inside the plain
// _mm512_broadcast_i32x4 and _mm512_extracti32x4_epi32, which start from an
// undefined register.
SLUICE_VPCLMUL_TARGET inline __m512i Broadcast(__m128i k) { return _mm512_maskz_broadcast_i32x4(0xFFFF, k); }
template <int kLane>
SLUICE_VPCLMUL_TARGET inline __m128i Lane(__m512i x) {
  return _mm512_maskz_extracti32x4_epi32(0xF, x, kLane);
}

// R(state, p[0, n)). REQUIRES: n >= 256.
SLUICE_VPCLMUL_TARGET uint32_t RawVpclmul(uint32_t state, const char* p, size_t n) {
  const FoldKeys& keys = Keys();
  // R(s, D) = R(0, D with s xored into its first four bytes).
  __m512i x0 = _mm512_xor_si512(Load512(p), _mm512_maskz_set1_epi32(1, static_cast<int>(state)));
  __m512i x1 = Load512(p + 64);
  __m512i x2 = Load512(p + 128);
  __m512i x3 = Load512(p + 192);
  p += 256;
  n -= 256;
  const __m512i k256 = Broadcast(keys.k256);
  while (n >= 256) {
    x0 = Fold512(x0, k256, Load512(p));
    x1 = Fold512(x1, k256, Load512(p + 64));
    x2 = Fold512(x2, k256, Load512(p + 128));
    x3 = Fold512(x3, k256, Load512(p + 192));
    p += 256;
    n -= 256;
  }
  const __m512i k64 = Broadcast(keys.k64);
  x0 = Fold512(Fold512(Fold512(x0, k64, x1), k64, x2), k64, x3);
  while (n >= 64) {
    x0 = Fold512(x0, k64, Load512(p));
    p += 64;
    n -= 64;
  }
  // Lanes at bytes 0, 16, 32, 48 of the last 64: fold each onto the last.
  __m128i r = Fold128(Lane<0>(x0), keys.k48, Lane<3>(x0));
  r = Fold128(Lane<1>(x0), keys.k32, r);
  r = Fold128(Lane<2>(x0), keys.k16, r);
  while (n >= 16) {
    r = Fold128(r, keys.k16, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    p += 16;
    n -= 16;
  }
  uint64_t crc = _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(r)));
  crc = _mm_crc32_u64(crc, static_cast<uint64_t>(_mm_extract_epi64(r, 1)));
  return RawSse42(static_cast<uint32_t>(crc), p, n);
}

#endif  // SLUICE_CRC32C_X86

using ExtendFn = uint32_t (*)(uint32_t, const char*, size_t);

#if defined(SLUICE_CRC32C_X86)
uint32_t ExtendSse42(uint32_t crc, const char* data, size_t n) {
  return ~RawSse42(~crc, data, n);
}

// RawVpclmul needs 256 bytes; from there on folding is the faster
// (docs/perf/crc32c.md).
constexpr size_t kFoldMin = 256;

uint32_t ExtendVpclmul(uint32_t crc, const char* data, size_t n) {
  return n >= kFoldMin ? ~RawVpclmul(~crc, data, n) : ~RawSse42(~crc, data, n);
}
#endif

ExtendFn ChooseExtend() {
#if defined(SLUICE_CRC32C_X86)
  if (CpuHasVpclmul()) {
    Keys();
    LongShift();
    ShortShift();
    return &ExtendVpclmul;
  }
  if (CpuHasSse42()) {
    // Build the shift tables now rather than on a reader's first long record.
    LongShift();
    ShortShift();
    return &ExtendSse42;
  }
#endif
  return &ExtendPortable;
}

ExtendFn ChosenExtend() {
  static const ExtendFn fn = ChooseExtend();
  return fn;
}

}  // namespace

uint32_t ExtendPortable(uint32_t init_crc, const char* data, size_t n) {
  return ~RawPortable(~init_crc, reinterpret_cast<const unsigned char*>(data), n);
}

bool ExtendHardware(uint32_t init_crc, const char* data, size_t n, uint32_t* crc) {
#if defined(SLUICE_CRC32C_X86)
  if (!HardwareAccelerated()) return false;
  *crc = ExtendSse42(init_crc, data, n);  // the CRC32 instruction, whatever Extend uses
  return true;
#else
  (void)init_crc;
  (void)data;
  (void)n;
  (void)crc;
  return false;
#endif
}

bool ExtendFolding(uint32_t init_crc, const char* data, size_t n, uint32_t* crc) {
#if defined(SLUICE_CRC32C_X86)
  if (ChosenExtend() != &ExtendVpclmul) return false;
  *crc = ExtendVpclmul(init_crc, data, n);
  return true;
#else
  (void)init_crc;
  (void)data;
  (void)n;
  (void)crc;
  return false;
#endif
}

bool HardwareAccelerated() {
#if defined(SLUICE_CRC32C_X86)
  return ChosenExtend() != &ExtendPortable;
#else
  return false;
#endif
}

uint32_t Extend(uint32_t init_crc, const char* data, size_t n) { return ChosenExtend()(init_crc, data, n); }

}  // namespace sluice::io::crc32c
