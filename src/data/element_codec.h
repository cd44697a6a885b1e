// One element as bytes: the encoding of file caches and checkpoints.
//   u32 components, then per component u8 dtype | u8 rank | i64 dims[rank] |
//   data: the raw values, or for strings u64 length + bytes each.
#ifndef SLUICE_SRC_DATA_ELEMENT_CODEC_H_
#define SLUICE_SRC_DATA_ELEMENT_CODEC_H_

#include <string>
#include <string_view>

#include "sluice/core/element.h"

namespace sluice::data {

// Appends the encoding of `e` to *out.
void EncodeElement(const Element& e, std::string* out);
inline std::string EncodeElement(const Element& e) {
  std::string out;
  EncodeElement(e, &out);
  return out;
}
// Decodes exactly `in` into *out; false if it does not parse.
bool DecodeElement(std::string_view in, Element* out);

}  // namespace sluice::data

#endif  // SLUICE_SRC_DATA_ELEMENT_CODEC_H_
