#include "train/name_scope.h"

#include <map>

#include "sluice/core/mutex.h"
#include "sluice/core/status.h"

namespace sluice::train::internal {

std::string UniqueScope(std::string_view base) {
  static Mutex* const mu = new Mutex();                       // never destroyed
  static auto* const used = new std::map<std::string, int, std::less<>>();  // guarded by *mu
  MutexLock lock(mu);
  auto [it, inserted] = used->try_emplace(std::string(base), 0);
  if (inserted) return std::string(base);
  // Skip candidates handed out as bases themselves ("batch_1" given by a user).
  for (;;) {
    std::string candidate = StrCat(base, "_", ++it->second);
    if (used->try_emplace(candidate, 0).second) return candidate;
  }
}

}  // namespace sluice::train::internal
