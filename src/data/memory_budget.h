// The byte budget of one iterator tree (Options.ram_budget). Every buffer
// that holds elements between stages (prefetch, shuffle, parallel map,
// parallel interleave's read-ahead, which is prefetch, the in-memory cache,
// batch assembly) charges the tensor bytes of what it holds to the tree's
// MemoryBudget through a BudgetAccount of its own, and releases them when
// the elements leave the buffer. Elements handed to the consumer, and the
// one element a stage is passing on, are not tracked.
//
// The rule that keeps the tracked total within the limit without a hang:
// the budget holds back a reserve, the sum over live accounts of the largest
// element each has charged. A charge the stage could do without (its buffer
// holds something its consumer can take) waits while the total would pass
// limit - reserve; a charge the consumer needs now (the buffer has nothing
// else to hand out) never waits, and fits in the reserve. So the total stays
// within the limit, except that an element larger than every element its
// stage charged before may pass it by the difference; and every stage can
// always make progress, so a budget never causes a hang. Until every
// account has charged once (the reserve then knows its largest element),
// charges that could wait keep to half of limit - reserve, so the limit
// holds if the first elements of the stages yet to charge take at most the
// other half (a pipeline's first batch and its prefetch, in practice). A
// limit smaller
// than the reserve (one element per buffering stage) cannot be kept: the
// charge that shows it fails with ResourceExhausted (at the first elements).
//
// Without a limit (0) accounts still count (current and peak bytes) with
// relaxed atomics and never wait.
//
// Thread-safety: MemoryBudget and BudgetAccount are thread-safe. Lock order:
// a stage's own mutex may be held when calling Release/Cancel (they take mu_);
// Charge must be called without the stage's locks, since it may wait.
// Ownership: the Model owns the tree's MemoryBudget; each stage owns its
// BudgetAccount, which keeps the budget alive and releases what it still
// holds when destroyed.
#ifndef SLUICE_SRC_DATA_MEMORY_BUDGET_H_
#define SLUICE_SRC_DATA_MEMORY_BUDGET_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>

#include "sluice/core/mutex.h"
#include "sluice/core/status.h"
#include "sluice/data/datasets.h"

namespace sluice::data {

class BudgetAccount;

class MemoryBudget {
 public:
  MemoryBudget() = default;
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // The limit in bytes (0: none). Set once, when the root starts, before
  // any charge.
  void SetLimit(int64_t limit) SLUICE_EXCLUDES(mu_);
  int64_t limit() const { return limit_.load(std::memory_order_relaxed); }

  MemoryStats Snapshot() const SLUICE_EXCLUDES(mu_);

 private:
  friend class BudgetAccount;
  struct AccountState {
    std::string stage;
    int64_t largest = 0;
    bool charged = false;  // once
    bool cancelled = false;
  };
  using AccountList = std::list<AccountState>;

  AccountList::iterator Register(std::string stage) SLUICE_EXCLUDES(mu_);
  void Unregister(AccountList::iterator a, int64_t held) SLUICE_EXCLUDES(mu_);
  // needed_now null: never waits.
  Status Charge(AccountList::iterator a, int64_t bytes, const std::function<bool()>* needed_now) SLUICE_EXCLUDES(mu_);
  // bytes < 0: the account's largest element.
  bool HasRoomFor(AccountList::iterator a, int64_t bytes) const SLUICE_EXCLUDES(mu_);
  void Release(int64_t bytes) SLUICE_EXCLUDES(mu_);
  void Cancel(AccountList::iterator a) SLUICE_EXCLUDES(mu_);
  // Without a limit: relaxed atomics, no lock.
  void AddUnlimited(int64_t bytes);
  Status TooSmallLocked() const SLUICE_REQUIRES(mu_);
  // True if `bytes` more leave the reserve free (half of the rest while
  // an account has yet to charge).
  bool RoomLocked(int64_t bytes) const SLUICE_REQUIRES(mu_);

  std::atomic<int64_t> limit_{0};
  std::atomic<int64_t> bytes_{0};
  std::atomic<int64_t> peak_{0};

  mutable Mutex mu_;
  CondVar cv_;  // bytes released, or an account cancelled
  AccountList accounts_ SLUICE_GUARDED_BY(mu_);
  int64_t reserve_ SLUICE_GUARDED_BY(mu_) = 0;  // sum of the accounts' largest elements
  int64_t unknown_ SLUICE_GUARDED_BY(mu_) = 0;  // accounts that have not charged yet
  int64_t waits_ SLUICE_GUARDED_BY(mu_) = 0;
  int64_t wait_ns_ SLUICE_GUARDED_BY(mu_) = 0;
};

// One buffering stage's share of a MemoryBudget. With a null budget (an
// IteratorContext without a model) every call does nothing.
class BudgetAccount {
 public:
  BudgetAccount(std::shared_ptr<MemoryBudget> budget, std::string stage);
  ~BudgetAccount();
  BudgetAccount(const BudgetAccount&) = delete;
  BudgetAccount& operator=(const BudgetAccount&) = delete;

  // Adds `bytes` to what this stage holds. Blocks while the budget has no
  // room for them, unless needed_now() is true (evaluated again on every
  // wake-up, under the budget's lock: it must only read atomics). Wakes on
  // a Release anywhere in the tree and on Cancel. Errors: Cancelled after
  // Cancel (nothing charged); ResourceExhausted if the limit cannot hold
  // one element per buffering stage (nothing charged).
  [[nodiscard]] Status Charge(int64_t bytes, const std::function<bool()>& needed_now);
  // As Charge, never blocking: for a stage that holds elements on its
  // consumer's thread (shuffle, cache, batch), which checks HasRoom before
  // it takes an element it could do without.
  [[nodiscard]] Status ChargeNoWait(int64_t bytes);
  // True if one more element as large as this stage's largest fits without
  // passing limit - reserve (always true without a limit).
  bool HasRoom() const;
  // True if `bytes` more fit without passing limit - reserve (AUTOTUNE's
  // growth of a buffer plans within the budget).
  bool HasRoomFor(int64_t bytes) const;
  // True if this stage alone could hold `total` bytes within limit -
  // reserve (always true without a limit): a stage that cannot give its
  // elements back (cache) fails instead of passing that.
  bool CouldHold(int64_t total) const;
  // Takes `bytes` (charged before) off; wakes the tree's waiting charges.
  void Release(int64_t bytes);
  // Ends this stage's waits for good (its iterator is going away).
  void Cancel();

  int64_t held() const { return held_.load(std::memory_order_relaxed); }
  // The budget's limit (0: none, or no budget).
  int64_t limit() const { return budget_ ? budget_->limit() : 0; }

 private:
  const std::shared_ptr<MemoryBudget> budget_;  // may be null
  MemoryBudget::AccountList::iterator self_;    // in budget_->accounts_
  std::atomic<int64_t> held_{0};
};

}  // namespace sluice::data

#endif  // SLUICE_SRC_DATA_MEMORY_BUDGET_H_
