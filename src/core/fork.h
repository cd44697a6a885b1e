// The fork generation: how many times this process's ancestry forked since
// the library loaded. A child of fork() inherits memory, but not threads: an
// object that records the generation it started threads in can tell, in a
// child, that those threads do not exist (and that locks they held may never
// be released), and must neither wait for them nor touch what they shared.
#ifndef SLUICE_CORE_FORK_H_
#define SLUICE_CORE_FORK_H_

#include <cstdint>

namespace sluice::internal {

// 0 in the process that loaded the library; +1 in each fork() child (a
// pthread_atfork child handler). Async-signal-safe; never blocks.
uint64_t ForkGeneration();

}  // namespace sluice::internal

#endif  // SLUICE_CORE_FORK_H_
