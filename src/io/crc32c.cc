// CRC32C: a portable slicing-by-8 implementation and an SSE4.2 one with three
// interleaved streams, chosen at run time.
//
// Notation: R(s, data) is the raw CRC register update (no pre/post
// inversion), so Value(data) = ~R(~0, data). R is linear over GF(2):
// R(s, A || B) = R(R(s, A), B) and R(s, X) = R(s, zeros(|X|)) ^ R(0, X).
// Three streams A, B, C of K bytes each therefore combine as
//   R(s, A || B || C) = Z(Z(R(s, A)) ^ R(0, B)) ^ R(0, C),  Z(x) = R(x, zeros(K)),
// and Z, being linear in its 32-bit argument, is four 256-entry tables.
#include "sluice/io/crc32c.h"

#include <array>
#include <bit>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SLUICE_CRC32C_X86 1
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

#endif  // SLUICE_CRC32C_X86

using ExtendFn = uint32_t (*)(uint32_t, const char*, size_t);

#if defined(SLUICE_CRC32C_X86)
uint32_t ExtendSse42(uint32_t crc, const char* data, size_t n) {
  return ~RawSse42(~crc, data, n);
}
#endif

ExtendFn ChooseExtend() {
#if defined(SLUICE_CRC32C_X86)
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
  *crc = ExtendSse42(init_crc, data, n);
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
