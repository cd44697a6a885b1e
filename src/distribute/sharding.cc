// Sharding's pure functions (see the header).
#include "sluice/distribute/sharding.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <charconv>

#include "sluice/data/index_permutation.h"

namespace sluice::distribute {
namespace {

// "<b>-<e>,<b>-<e>" (empty for no ranges).
std::string EncodeRanges(const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  std::string out;
  for (const auto& [b, e] : ranges) out += StrCat(out.empty() ? "" : ",", b, "-", e);
  return out;
}

Result<std::vector<std::pair<uint64_t, uint64_t>>> DecodeRanges(std::string_view s) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  if (!s.empty() && s.back() == ',') return errors::DataLoss("left ends with ','");
  while (!s.empty()) {
    const size_t comma = s.find(',');
    const std::string_view item = s.substr(0, comma);
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
    const size_t dash = item.find('-');
    uint64_t b = 0, e = 0;
    const auto parse = [](std::string_view v, uint64_t* out) {
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
      return ec == std::errc() && end == v.data() + v.size() && !v.empty();
    };
    if (dash == std::string_view::npos || !parse(item.substr(0, dash), &b) || !parse(item.substr(dash + 1), &e) ||
        b >= e || (!out.empty() && b < out.back().second)) {
      return errors::DataLoss("bad range \"", item, "\" in left (expected ascending <begin>-<end>, begin < end)");
    }
    out.emplace_back(b, e);
  }
  return out;
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

constexpr ShardingPolicy kPolicies[] = {ShardingPolicy::kOff,  ShardingPolicy::kAuto,    ShardingPolicy::kFile,
                                        ShardingPolicy::kData, ShardingPolicy::kHint,    ShardingPolicy::kDynamic,
                                        ShardingPolicy::kRecord};

}  // namespace

std::string_view ShardingPolicyName(ShardingPolicy policy) {
  switch (policy) {
    case ShardingPolicy::kOff: return "OFF";
    case ShardingPolicy::kAuto: return "AUTO";
    case ShardingPolicy::kFile: return "FILE";
    case ShardingPolicy::kData: return "DATA";
    case ShardingPolicy::kHint: return "HINT";
    case ShardingPolicy::kDynamic: return "DYNAMIC";
    case ShardingPolicy::kRecord: return "RECORD";
  }
  return "?";
}

Result<ShardingPolicy> ParseShardingPolicy(std::string_view name) {
  const std::string upper = Upper(name);
  for (ShardingPolicy p : kPolicies) {
    if (upper == ShardingPolicyName(p)) return p;
  }
  return errors::InvalidArgument("unknown sharding policy \"", name,
                                 "\" (expected OFF, AUTO, FILE, DATA, HINT, DYNAMIC or RECORD)");
}

std::string_view UnevenName(Uneven uneven) {
  switch (uneven) {
    case Uneven::kDrop: return "drop";
    case Uneven::kPad: return "pad";
    case Uneven::kAllow: return "allow";
  }
  return "?";
}

Result<Uneven> ParseUneven(std::string_view name) {
  const std::string upper = Upper(name);
  for (Uneven u : {Uneven::kDrop, Uneven::kPad, Uneven::kAllow}) {
    if (upper == Upper(UnevenName(u))) return u;
  }
  return errors::InvalidArgument("unknown uneven mode \"", name, "\" (expected drop, pad or allow)");
}

ShardingPolicy ResolvePolicy(ShardingPolicy policy, int64_t num_files, int num_ranks) {
  if (policy != ShardingPolicy::kAuto) return policy;
  return num_files >= num_ranks ? ShardingPolicy::kFile : ShardingPolicy::kData;
}

uint64_t GlobalRecordAt(uint64_t n, uint64_t seed, uint64_t epoch, uint64_t p) {
  return data::IndexPermutation(n, seed, epoch).Apply(p);
}

uint64_t StridePlan::CountFor(int rank) const {
  assert(rank >= 0 && rank < num_ranks);
  const uint64_t left = n > start ? n - start : 0;
  const uint64_t ranks = static_cast<uint64_t>(num_ranks);
  const uint64_t base = left / ranks, rem = left % ranks;
  switch (uneven) {
    case Uneven::kDrop: return base;
    case Uneven::kPad: return base + (rem > 0 ? 1 : 0);
    case Uneven::kAllow: return base + (static_cast<uint64_t>(rank) < rem ? 1 : 0);
  }
  return base;
}

uint64_t StridePlan::PositionAt(int rank, uint64_t k) const {
  assert(k < CountFor(rank));
  const uint64_t offset = static_cast<uint64_t>(rank) + k * static_cast<uint64_t>(num_ranks);
  // Only kPad reaches past n: it wraps onto the first remaining positions.
  return start + offset % (n - start);
}

uint64_t StridePlan::PositionAfterSteps(uint64_t steps) const {
  return std::min(n, start + steps * static_cast<uint64_t>(num_ranks));
}

std::vector<std::vector<uint64_t>> AssignFiles(uint64_t num_files, int num_ranks, uint64_t seed, uint64_t epoch,
                                               const std::vector<uint64_t>& records_per_file) {
  assert(num_ranks >= 1);
  assert(records_per_file.empty() || records_per_file.size() == num_files);
  std::vector<std::vector<uint64_t>> out(static_cast<size_t>(num_ranks));
  const data::IndexPermutation perm(num_files, seed, epoch);
  std::vector<uint64_t> load(static_cast<size_t>(num_ranks), 0);
  for (uint64_t p = 0; p < num_files; ++p) {
    const uint64_t file = perm.Apply(p);
    size_t rank = static_cast<size_t>(p % static_cast<uint64_t>(num_ranks));
    if (!records_per_file.empty()) {
      rank = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
      load[rank] += records_per_file[file];
    }
    out[rank].push_back(file);
  }
  return out;
}

uint64_t FileModeCount(const std::vector<uint64_t>& rank_totals, int rank, Uneven uneven) {
  switch (uneven) {
    case Uneven::kDrop: return *std::min_element(rank_totals.begin(), rank_totals.end());
    case Uneven::kPad: return *std::max_element(rank_totals.begin(), rank_totals.end());
    case Uneven::kAllow: break;
  }
  return rank_totals[static_cast<size_t>(rank)];
}

std::string DistributedState::Serialize() const {
  return StrCat("sluice-dist v", kVersion, " seed=", seed, " epoch=", epoch, " policy=", ShardingPolicyName(policy),
                " world_size=", world_size, " position=", position, rest > 0 ? StrCat(" rest=", rest) : "",
                left ? StrCat(" left=", EncodeRanges(*left)) : "");
}

Result<DistributedState> DistributedState::Parse(std::string_view bytes) {
  const auto corrupt = [&](std::string_view why) {
    return errors::DataLoss("corrupt distributed iterator state \"", bytes, "\": ", why);
  };
  const std::string prefix = StrCat("sluice-dist v", kVersion, " ");
  if (bytes.substr(0, prefix.size()) != prefix) return corrupt(StrCat("expected it to start with \"", prefix, "\""));
  DistributedState state;
  std::string_view rest = bytes.substr(prefix.size());
  int fields = 0;
  while (!rest.empty()) {
    const size_t space = rest.find(' ');
    const std::string_view field = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    const size_t eq = field.find('=');
    if (eq == std::string_view::npos) return corrupt(StrCat("field \"", field, "\" has no '='"));
    const std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "left" && fields == 5 && !state.left) {
      Result<std::vector<std::pair<uint64_t, uint64_t>>> ranges = DecodeRanges(value);
      if (!ranges.ok()) return corrupt(ranges.status().message());
      state.left = std::move(*ranges);
      continue;
    }
    if (key == "policy") {
      Result<ShardingPolicy> p = ParseShardingPolicy(value);
      if (!p.ok()) return corrupt(p.status().message());
      state.policy = *p;
      ++fields;
      continue;
    }
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size()) return corrupt(StrCat("bad number in \"", field, "\""));
    if (key == "seed") {
      state.seed = v;
    } else if (key == "epoch") {
      state.epoch = v;
    } else if (key == "world_size" && v >= 1 && v <= (1u << 30)) {
      state.world_size = static_cast<int>(v);
    } else if (key == "position") {
      state.position = v;
    } else if (key == "rest" && fields == 5 && state.rest == 0 && v > 0) {
      state.rest = v;
      continue;
    } else {
      return corrupt(StrCat("unexpected field \"", field, "\""));
    }
    ++fields;
  }
  if (fields != 5) return corrupt("expected seed, epoch, policy, world_size and position (then rest or left)");
  return state;
}

}  // namespace sluice::distribute
