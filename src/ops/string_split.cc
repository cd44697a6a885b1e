#include "sluice/ops/string_split.h"

#include <algorithm>
#include <string>
#include <vector>

#include "op_util.h"
#include "value_buffer.h"

namespace sluice::ops {
namespace {

bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Tokens of each string, collected as units of a ValueBuffer.
template <class SplitFn>
Result<SparseTensor> SplitAll(const Tensor& strings, SplitFn split) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string_view> input,
                          internal::StringViews(strings, "input", /*require_rank1=*/true));
  internal::ValueBuffer tokens;
  tokens.dtype = DType::kString;
  for (std::string_view s : input) {
    split(s, &tokens.bytes);
    tokens.EndUnit();
  }
  return internal::BuildVarLenSparse(tokens, /*batched=*/true);
}

}  // namespace

Result<SparseTensor> StringSplit(const Tensor& strings, std::string_view delimiter, bool skip_empty) {
  return SplitAll(strings, [&](std::string_view s, std::vector<std::string_view>* out) {
    auto add = [&](std::string_view token) {
      if (!skip_empty || !token.empty()) out->push_back(token);
    };
    if (delimiter.empty()) {  // single bytes
      if (s.empty()) add(s);
      for (size_t i = 0; i < s.size(); ++i) add(s.substr(i, 1));
      return;
    }
    size_t start = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (delimiter.find(s[i]) != std::string_view::npos) {
        add(s.substr(start, i - start));
        start = i + 1;
      }
    }
    add(s.substr(start));
  });
}

Result<SparseTensor> StringSplitV2(const Tensor& strings, std::string_view sep, int64_t maxsplit) {
  return SplitAll(strings, [&](std::string_view s, std::vector<std::string_view>* out) {
    int64_t splits = 0;
    auto more = [&] { return maxsplit < 0 || splits < maxsplit; };
    if (!sep.empty()) {  // Python: "1,,2".split(",") == ["1", "", "2"]; "".split(",") == [""]
      size_t start = 0;
      size_t pos;
      while (more() && (pos = s.find(sep, start)) != std::string_view::npos) {
        out->push_back(s.substr(start, pos - start));
        start = pos + sep.size();
        ++splits;
      }
      out->push_back(s.substr(start));
      return;
    }
    // Python: runs of whitespace separate; no empty tokens.
    size_t i = 0;
    while (true) {
      while (i < s.size() && IsAsciiSpace(s[i])) ++i;
      if (i == s.size()) return;
      if (!more()) {  // the rest, trailing whitespace kept (as Python)
        out->push_back(s.substr(i));
        return;
      }
      const size_t start = i;
      while (i < s.size() && !IsAsciiSpace(s[i])) ++i;
      out->push_back(s.substr(start, i - start));
      ++splits;
    }
  });
}

}  // namespace sluice::ops
