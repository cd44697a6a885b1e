// CRC32C (Castagnoli), as TensorFlow's TFRecord format and LevelDB use it.
//
// Polynomial 0x1EDC6F41 (reflected 0x82F63B78), initial value 0xFFFFFFFF,
// final xor 0xFFFFFFFF. Check value: Value("123456789") == 0xE3069283.
//
// On x86-64 CPUs with SSE4.2 the CRC32 instruction is used, with three
// interleaved streams for long buffers (combined by a table that shifts a CRC
// over a block of zeros); where AVX-512 (F, VL) and VPCLMULQDQ are present
// too, buffers of 512 bytes and more are folded with carry-less
// multiplication instead (several times faster); elsewhere a portable
// slicing-by-8 table. The choice is made once, at first use, from
// __builtin_cpu_supports.
//
// Thread-safety: every function is pure and thread-safe.
#ifndef SLUICE_IO_CRC32C_H_
#define SLUICE_IO_CRC32C_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sluice::io::crc32c {

// The CRC of concat(A, data[0, n)), where `init_crc` is the CRC of A.
// Extend(0, data, n) == Value(data, n).
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);

// The CRC of data[0, n).
inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }
inline uint32_t Value(std::string_view data) { return Extend(0, data.data(), data.size()); }

// TFRecord and LevelDB store masked CRCs: computing the CRC of a string that
// contains embedded CRCs is problematic, so the stored value is rotated and
// offset. Wire format: mask(c) = ((c >> 15) | (c << 17)) + 0xA282EAD8 mod 2^32.
inline constexpr uint32_t kMaskDelta = 0xA282EAD8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked_crc) {
  const uint32_t rot = masked_crc - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

// The implementations behind Extend, for tests and benchmarks. Hardware
// (the CRC32 instruction) returns false and does nothing when the CPU has no
// SSE4.2; Folding (VPCLMULQDQ for n >= 256, the CRC32 instruction below)
// when it has no AVX-512 F/VL or VPCLMULQDQ.
uint32_t ExtendPortable(uint32_t init_crc, const char* data, size_t n);
bool ExtendHardware(uint32_t init_crc, const char* data, size_t n, uint32_t* crc);
bool ExtendFolding(uint32_t init_crc, const char* data, size_t n, uint32_t* crc);
// True when Extend uses the hardware path.
bool HardwareAccelerated();

}  // namespace sluice::io::crc32c

#endif  // SLUICE_IO_CRC32C_H_
