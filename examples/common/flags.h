// The command-line flags of the Dataset image examples (common/image_example.h):
// a table of positive integer flags and one of bool flags, given as
// "--name value" or "--name=value" (bool flags take no value). Plain
// functions, no state.
#ifndef SLUICE_EXAMPLES_COMMON_FLAGS_H_
#define SLUICE_EXAMPLES_COMMON_FLAGS_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace sluice_examples {

struct IntFlag {
  std::string_view name;  // with its "--"
  int64_t* value;
};

struct BoolFlag {
  std::string_view name;
  bool* value;
};

// Sets the flags named in argv[1..argc). Returns false after printing
// "bad flag NAME VALUE" on an unknown flag, a missing value or one that is
// not an integer >= 1.
inline bool ParseFlags(int argc, char** argv, const std::vector<IntFlag>& ints, const std::vector<BoolFlag>& bools) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    const auto b = std::find_if(bools.begin(), bools.end(), [&](const BoolFlag& f) { return f.name == arg; });
    if (b != bools.end()) {
      *b->value = true;
      continue;
    }
    std::string value;
    if (const size_t eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    }
    const auto it = std::find_if(ints.begin(), ints.end(), [&](const IntFlag& f) { return f.name == arg; });
    char* end = nullptr;
    const long long n = std::strtoll(value.c_str(), &end, 10);
    if (it == ints.end() || value.empty() || *end != '\0' || n < 1) {
      std::fprintf(stderr, "bad flag %s %s\n", arg.c_str(), value.c_str());
      return false;
    }
    *it->value = n;
  }
  return true;
}

}  // namespace sluice_examples

#endif  // SLUICE_EXAMPLES_COMMON_FLAGS_H_
