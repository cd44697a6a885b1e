// libFuzzer entry point for sluice's DecodeCSV (src/ops). Any input must give
// columns or an error Status: never a crash or an out-of-bounds read.
//
// Byte 0 picks the options (delimiter, quote handling, na_value,
// select_cols); byte 1 the column types; the rest is cut into records at
// '\n' (and also decoded whole, as one record that may hold quoted newlines).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sluice/ops/decode_csv.h"

namespace {

using namespace sluice;       // NOLINT
using namespace sluice::ops;  // NOLINT

Tensor Default(uint8_t code) {
  const bool required = (code & 8) != 0;
  switch (code & 7) {
    case 0:
      return required ? Tensor(DType::kInt32, TensorShape{0}) : Tensor::FromVector<int32_t>({-1});
    case 1:
      return required ? Tensor(DType::kInt64, TensorShape{0}) : Tensor::FromVector<int64_t>({-1});
    case 2:
      return required ? Tensor(DType::kFloat32, TensorShape{0}) : Tensor::FromVector<float>({0.5f});
    case 3:
      return required ? Tensor(DType::kFloat64, TensorShape{0}) : Tensor::FromVector<double>({0.5});
    default:
      return required ? Tensor(DType::kString, TensorShape{0}) : Tensor::FromStrings({"na"});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t opts = data[0];
  const uint8_t types = data[1];
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);

  DecodeCSVOptions options;
  static constexpr char kDelims[] = {',', '\t', ';', '"'};
  options.field_delim = std::string(1, kDelims[opts & 3]);
  options.use_quote_delim = (opts & 4) == 0;
  if (opts & 8) options.na_value = "NA";
  const int columns = 1 + ((types >> 4) & 3) + ((opts >> 6) & 1) * 3;
  std::vector<Tensor> defaults;
  for (int c = 0; c < columns; ++c) defaults.push_back(Default(static_cast<uint8_t>(types + 5 * c)));
  if (opts & 16) {
    for (int c = 0; c < columns; ++c) options.select_cols.push_back(2 * c + ((opts >> 5) & 1));
  }

  std::vector<std::string_view> records;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\n') {
      records.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  DecodeCSV(records, defaults, options).status().IgnoreError();
  const std::vector<std::string_view> whole = {text};
  DecodeCSV(whole, defaults, options).status().IgnoreError();
  return 0;
}
