// DecodeCSV: tf.io.decode_csv. Splits each record (one CSV line) into fields
// and converts field j to the dtype of record_defaults[j].
//
// Field rules (TensorFlow's): fields are separated by `field_delim`; with
// use_quote_delim a field that starts with '"' runs to the next '"' followed
// by the delimiter or the end, and '""' inside it stands for one '"' (it may
// hold the delimiter and newlines). A field that is empty, or equal to
// na_value, takes its default; a column whose default is empty is required.
// Newline characters ('\n', '\r') where a field would start are skipped.
// Numbers: optional leading/trailing blanks; int32/int64 take an optional '-'
// and decimal digits; float32/float64 also take exponents and inf/nan.
//
// Errors (InvalidArgument; payloads "record" and, where known, "field"):
//   "Expect 3 fields but have 4 in record 0"
//   "Field 2 is required but missing in record 3!"
//   "Field 1 in record 0 is not a valid int32: x1"   (int64/float/double too)
//   "Unquoted fields cannot have quotes/CRLFs inside (record 2, field 1)"
//   "Quote inside a string has to be escaped by another quote (record ...)"
//   "Quoted field has to end with quote followed by delim or end (record ...)"
//   bad options: "field_delim should be only 1 char", "There should only be 1
//   default per field but field 0 has 2", "select_cols is not strictly
//   increasing.", "select_cols contains negative values.", "Length of
//   select_cols and record_defaults do not match.", an unsupported dtype.
#ifndef SLUICE_OPS_DECODE_CSV_H_
#define SLUICE_OPS_DECODE_CSV_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"

namespace sluice::ops {

struct DecodeCSVOptions {
  std::string field_delim = ",";  // exactly one character
  bool use_quote_delim = true;
  std::string na_value;           // "" : only empty fields are missing
  // Columns to keep, strictly increasing; empty keeps all. With it, records
  // may have more fields than the last selected column.
  std::vector<int64_t> select_cols;
};

// `records`: a string tensor of any shape. `record_defaults`: one tensor per
// output column, of dtype int32, int64, float32, float64 or string, holding
// 0 values (column required) or 1 (its default). Returns one tensor per
// column, shaped like `records`. Thread-safe (pure function).
Result<std::vector<Tensor>> DecodeCSV(const Tensor& records, std::span<const Tensor> record_defaults,
                                      const DecodeCSVOptions& options = {});
// The same for records held elsewhere (e.g. lines of a TextLine reader);
// outputs are rank 1.
Result<std::vector<Tensor>> DecodeCSV(std::span<const std::string_view> records,
                                      std::span<const Tensor> record_defaults,
                                      const DecodeCSVOptions& options = {});

}  // namespace sluice::ops

#endif  // SLUICE_OPS_DECODE_CSV_H_
