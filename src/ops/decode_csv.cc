#include "sluice/ops/decode_csv.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <deque>
#include <string>
#include <system_error>

#include "op_util.h"

namespace sluice::ops {
namespace {

// Splits one record into fields, TensorFlow's way (decode_csv_op.cc). Fields
// are views into the record, or into `owned` for quoted fields holding "".
class FieldSplitter {
 public:
  FieldSplitter(char delim, bool use_quote_delim, std::span<const int64_t> select_cols)
      : delim_(delim), quote_(use_quote_delim), select_cols_(select_cols) {}

  Status Split(std::string_view input, int64_t record, std::vector<std::string_view>* fields) {
    fields->clear();
    owned_.clear();
    if (input.empty()) return Status();
    const size_t size = input.size();
    size_t cur = 0;
    int64_t parsed = 0;
    size_t selected = 0;
    while (cur < size) {
      if (input[cur] == '\n' || input[cur] == '\r') {  // newlines between fields are skipped
        ++cur;
        continue;
      }
      const bool include = Included(selected, parsed);
      std::string_view field;
      if (quote_ && input[cur] == '"') {
        SLUICE_RETURN_IF_ERROR(QuotedField(input, &cur, &field, record, parsed));
      } else {
        const size_t start = cur;
        while (cur < size && input[cur] != delim_) {
          const char c = input[cur];
          if ((quote_ && c == '"') || c == '\n' || c == '\r') {
            return Error("Unquoted fields cannot have quotes/CRLFs inside", record, parsed);
          }
          ++cur;
        }
        field = input.substr(start, cur - start);
        ++cur;  // past the delimiter
      }
      ++parsed;
      if (include) {
        fields->push_back(field);
        ++selected;
        if (!select_cols_.empty() && selected == select_cols_.size()) return Status();
      }
    }
    // A trailing delimiter ends with an empty last field.
    if (Included(selected, parsed) && input[size - 1] == delim_) fields->push_back(std::string_view());
    return Status();
  }

 private:
  bool Included(size_t selected, int64_t parsed) const {
    return select_cols_.empty() || (selected < select_cols_.size() && select_cols_[selected] == parsed);
  }

  static Status Error(std::string_view what, int64_t record, int64_t field) {
    return errors::InvalidArgument(what, " (record ", record, ", field ", field, ")")
        .WithPayload("record", std::to_string(record))
        .WithPayload("field", std::to_string(field));
  }

  // A field starting with '"' at *cur: runs to a '"' followed by the
  // delimiter or the end; "" inside stands for one quote.
  Status QuotedField(std::string_view input, size_t* cur, std::string_view* field, int64_t record,
                     int64_t parsed) {
    const size_t size = input.size();
    size_t i = *cur + 1;
    const size_t start = i;
    std::string* unescaped = nullptr;
    while (i < size - 1 && (input[i] != '"' || input[i + 1] != delim_)) {
      if (input[i] != '"') {
        if (unescaped != nullptr) unescaped->push_back(input[i]);
        ++i;
        continue;
      }
      if (input[i + 1] != '"') {
        return Error("Quote inside a string has to be escaped by another quote", record, parsed);
      }
      if (unescaped == nullptr) unescaped = &owned_.emplace_back(input.substr(start, i - start));
      unescaped->push_back('"');
      i += 2;
    }
    if (!(i < size && input[i] == '"' && (i == size - 1 || input[i + 1] == delim_))) {
      return Error("Quoted field has to end with quote followed by delim or end", record, parsed);
    }
    *field = unescaped != nullptr ? std::string_view(*unescaped) : input.substr(start, i - start);
    *cur = i + 2;
    return Status();
  }

  const char delim_;
  const bool quote_;
  const std::span<const int64_t> select_cols_;
  std::deque<std::string> owned_;  // stable addresses for the views
};

std::string_view TrimSpaces(std::string_view s) {
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Blanks, an optional '-' or '+', decimal digits, blanks, as TF 2.21's
// decode_csv accepts: "+5" and " +05 " are 5; "+", "++5", "+-5" and "+ 5"
// are rejected.
template <class T>
bool ParseInt(std::string_view s, T* out) {
  s = TrimSpaces(s);
  if (s.size() >= 2 && s[0] == '+' && std::isdigit(static_cast<unsigned char>(s[1]))) s.remove_prefix(1);
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// strtof/strtod on all of `s`, which has no leading blanks or '+'.
template <class T>
bool StrToFloat(std::string_view s, T* out) {
  const std::string copy(s);
  char* end = nullptr;
  if constexpr (std::is_same_v<T, float>) {
    *out = std::strtof(copy.c_str(), &end);
  } else {
    *out = std::strtod(copy.c_str(), &end);
  }
  return end == copy.c_str() + copy.size();
}

// Blanks, an optional sign, a decimal or exponent number, a hexadecimal one
// ("0x1.8p1", "0x10", which TF 2.21 accepts, parsed by strtod), inf or
// nan, blanks. Overflow gives inf and underflow 0, as in TF.
template <class T>
bool ParseFloat(std::string_view s, T* out) {
  s = TrimSpaces(s);
  if (s.size() >= 2 && s[0] == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const std::string_view unsigned_part = s[0] == '-' ? s.substr(1) : s;
  if (unsigned_part.size() >= 3 && unsigned_part[0] == '0' && (unsigned_part[1] == 'x' || unsigned_part[1] == 'X')) {
    // Hex digits or '.' must follow, so that strtod does not take "0x-1" or
    // "0xinf" (it would stop after the "0", failing anyway; this is explicit).
    const char c = unsigned_part[2];
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != '.') return false;
    return StrToFloat(s, out);
  }
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, std::chars_format::general);
  if (ptr != s.data() + s.size()) return false;
  if (ec == std::errc::result_out_of_range) return StrToFloat(s, out);  // overflow to inf, underflow to 0
  return ec == std::errc();
}

bool SupportedColumnType(DType d) {
  return d == DType::kInt32 || d == DType::kInt64 || d == DType::kFloat32 || d == DType::kFloat64 ||
         d == DType::kString;
}

Status CheckOptions(std::span<const Tensor> defaults, const DecodeCSVOptions& options) {
  if (options.field_delim.size() != 1) return errors::InvalidArgument("field_delim should be only 1 char");
  if (defaults.empty()) return errors::InvalidArgument("record_defaults must not be empty");
  for (size_t j = 0; j < defaults.size(); ++j) {
    if (!SupportedColumnType(defaults[j].dtype())) {
      return errors::InvalidArgument("Field ", j, " has unsupported dtype ", DTypeName(defaults[j].dtype()),
                                     "; record_defaults must be int32, int64, float32, float64 or string");
    }
    if (defaults[j].num_elements() > 1) {
      return errors::InvalidArgument("There should only be 1 default per field but field ", j, " has ",
                                     defaults[j].num_elements());
    }
  }
  const std::vector<int64_t>& cols = options.select_cols;
  if (!cols.empty()) {
    if (cols.size() != defaults.size()) {
      return errors::InvalidArgument("Length of select_cols and record_defaults do not match.");
    }
    if (cols[0] < 0) return errors::InvalidArgument("select_cols contains negative values.");
    for (size_t i = 1; i < cols.size(); ++i) {
      if (cols[i - 1] >= cols[i]) return errors::InvalidArgument("select_cols is not strictly increasing.");
    }
  }
  return Status();
}

Status FieldError(int64_t f, int64_t record, std::string msg) {
  return errors::InvalidArgument(std::move(msg))
      .WithPayload("record", std::to_string(record))
      .WithPayload("field", std::to_string(f));
}

template <class T, class Parse>
Status ConvertNumber(std::string_view field, std::string_view type_name, int64_t f, int64_t record, Parse parse,
                     T* out) {
  if (!parse(field, out)) {
    return FieldError(f, record,
                      StrCat("Field ", f, " in record ", record, " is not a valid ", type_name, ": ", field));
  }
  return Status();
}

// Stores field `f` of record `i` in column tensor `out`.
Status StoreField(std::string_view field, const Tensor& def, const std::string& na_value, int64_t f, int64_t i,
                  const Tensor& out) {
  if (field.empty() || field == na_value) {
    if (def.num_elements() != 1) {
      return FieldError(f, i, StrCat("Field ", f, " is required but missing in record ", i, "!"));
    }
    switch (out.dtype()) {
      case DType::kInt32:
        out.data<int32_t>()[i] = def.data<int32_t>()[0];
        break;
      case DType::kInt64:
        out.data<int64_t>()[i] = def.data<int64_t>()[0];
        break;
      case DType::kFloat32:
        out.data<float>()[i] = def.data<float>()[0];
        break;
      case DType::kFloat64:
        out.data<double>()[i] = def.data<double>()[0];
        break;
      default:
        out.data<std::string>()[i] = def.data<std::string>()[0];
    }
    return Status();
  }
  switch (out.dtype()) {
    case DType::kInt32:
      return ConvertNumber(field, "int32", f, i, ParseInt<int32_t>, out.data<int32_t>() + i);
    case DType::kInt64:
      return ConvertNumber(field, "int64", f, i, ParseInt<int64_t>, out.data<int64_t>() + i);
    case DType::kFloat32:
      return ConvertNumber(field, "float", f, i, ParseFloat<float>, out.data<float>() + i);
    case DType::kFloat64:
      return ConvertNumber(field, "double", f, i, ParseFloat<double>, out.data<double>() + i);
    default:
      out.data<std::string>()[i].assign(field.data(), field.size());
      return Status();
  }
}

Result<std::vector<Tensor>> Decode(std::span<const std::string_view> records, const TensorShape& shape,
                                   std::span<const Tensor> defaults, const DecodeCSVOptions& options) {
  SLUICE_RETURN_IF_ERROR(CheckOptions(defaults, options));
  std::vector<Tensor> columns;
  columns.reserve(defaults.size());
  for (const Tensor& d : defaults) columns.emplace_back(d.dtype(), shape);
  FieldSplitter splitter(options.field_delim[0], options.use_quote_delim, options.select_cols);
  std::vector<std::string_view> fields;
  for (size_t r = 0; r < records.size(); ++r) {
    const auto i = static_cast<int64_t>(r);
    SLUICE_RETURN_IF_ERROR(splitter.Split(records[r], i, &fields));
    if (fields.size() != defaults.size()) {
      return errors::InvalidArgument("Expect ", defaults.size(), " fields but have ", fields.size(), " in record ",
                                     i)
          .WithPayload("record", std::to_string(i));
    }
    for (size_t f = 0; f < fields.size(); ++f) {
      SLUICE_RETURN_IF_ERROR(
          StoreField(fields[f], defaults[f], options.na_value, static_cast<int64_t>(f), i, columns[f]));
    }
  }
  return columns;
}

}  // namespace

Result<std::vector<Tensor>> DecodeCSV(const Tensor& records, std::span<const Tensor> record_defaults,
                                      const DecodeCSVOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string_view> views,
                          internal::StringViews(records, "records", /*require_rank1=*/false));
  return Decode(views, records.shape(), record_defaults, options);
}

Result<std::vector<Tensor>> DecodeCSV(std::span<const std::string_view> records,
                                      std::span<const Tensor> record_defaults, const DecodeCSVOptions& options) {
  return Decode(records, TensorShape{static_cast<int64_t>(records.size())}, record_defaults, options);
}

}  // namespace sluice::ops
