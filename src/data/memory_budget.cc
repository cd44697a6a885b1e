// MemoryBudget and BudgetAccount (memory_budget.h); IteratorMemory of
// datasets.h.
#include "data/memory_budget.h"

#include <utility>

#include "data/error_policy.h"
#include "data/model.h"

namespace sluice::data {

namespace {

void RaiseTo(std::atomic<int64_t>& peak, int64_t v) {
  int64_t p = peak.load(std::memory_order_relaxed);
  while (v > p && !peak.compare_exchange_weak(p, v, std::memory_order_relaxed)) {
  }
}

}  // namespace

// ---- MemoryBudget ---------------------------------------------------------------------

void MemoryBudget::SetLimit(int64_t limit) {
  MutexLock lock(&mu_);
  limit_.store(limit > 0 ? limit : 0, std::memory_order_relaxed);
}

MemoryBudget::AccountList::iterator MemoryBudget::Register(std::string stage) {
  MutexLock lock(&mu_);
  accounts_.push_back(AccountState{std::move(stage)});
  ++unknown_;
  return std::prev(accounts_.end());
}

void MemoryBudget::Unregister(AccountList::iterator a, int64_t held) {
  MutexLock lock(&mu_);
  bytes_.fetch_sub(held, std::memory_order_relaxed);
  reserve_ -= a->largest;
  if (!a->charged) --unknown_;
  accounts_.erase(a);
  cv_.SignalAll();
}

void MemoryBudget::AddUnlimited(int64_t bytes) {
  RaiseTo(peak_, bytes_.fetch_add(bytes, std::memory_order_relaxed) + bytes);
}

bool MemoryBudget::RoomLocked(int64_t bytes) const {
  mu_.AssertHeld();
  // While a stage has yet to charge, the reserve does not know its element:
  // the others take at most half of the room, leaving it the other half.
  const int64_t room = limit() - reserve_;
  return bytes_.load(std::memory_order_relaxed) + bytes <= (unknown_ == 0 ? room : room / 2);
}

Status MemoryBudget::TooSmallLocked() const {
  mu_.AssertHeld();
  std::string stages;
  for (const AccountState& a : accounts_) {
    if (a.largest == 0) continue;
    stages += (stages.empty() ? "" : ", ") + a.stage + " " + std::to_string(a.largest);
  }
  return errors::ResourceExhausted("Options.ram_budget of " + std::to_string(limit()) +
                                   " bytes cannot hold one element in each buffering stage, which takes " +
                                   std::to_string(reserve_) + " bytes (" + stages +
                                   "): raise ram_budget or make the elements or buffers smaller")
      .WithPayload(kRamBudgetPayload, std::to_string(limit()));
}

Status MemoryBudget::Charge(AccountList::iterator a, int64_t bytes, const std::function<bool()>* needed_now) {
  const int64_t limit = limit_.load(std::memory_order_relaxed);
  if (limit <= 0) {
    AddUnlimited(bytes);
    return Status();
  }
  MutexLock lock(&mu_);
  if (a->cancelled) return errors::Cancelled("iterator was cancelled");
  if (bytes > a->largest) {
    reserve_ += bytes - a->largest;
    a->largest = bytes;
  }
  if (!a->charged) {
    a->charged = true;
    --unknown_;
    cv_.SignalAll();
  }
  if (reserve_ > limit) return TooSmallLocked();
  int64_t wait_start = 0;
  while (needed_now != nullptr && !RoomLocked(bytes) && !(*needed_now)()) {
    if (wait_start == 0) {
      wait_start = NowNanos();
      ++waits_;
    }
    cv_.Wait(&mu_);
    if (a->cancelled) return errors::Cancelled("iterator was cancelled");
  }
  if (wait_start != 0) wait_ns_ += NowNanos() - wait_start;
  AddUnlimited(bytes);
  return Status();
}

bool MemoryBudget::HasRoomFor(AccountList::iterator a, int64_t bytes) const {
  const int64_t limit = limit_.load(std::memory_order_relaxed);
  if (limit <= 0) return true;
  MutexLock lock(&mu_);
  return RoomLocked(bytes < 0 ? a->largest : bytes);
}

void MemoryBudget::Release(int64_t bytes) {
  if (limit_.load(std::memory_order_relaxed) <= 0) {
    bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    return;
  }
  MutexLock lock(&mu_);
  bytes_.fetch_sub(bytes, std::memory_order_relaxed);
  cv_.SignalAll();
}

void MemoryBudget::Cancel(AccountList::iterator a) {
  MutexLock lock(&mu_);
  a->cancelled = true;
  cv_.SignalAll();
}

MemoryStats MemoryBudget::Snapshot() const {
  MemoryStats s;
  s.limit = limit();
  s.bytes = bytes_.load(std::memory_order_relaxed);
  s.peak_bytes = peak_.load(std::memory_order_relaxed);
  MutexLock lock(&mu_);
  s.reserve_bytes = reserve_;
  s.waits = waits_;
  s.wait_ns = wait_ns_;
  return s;
}

// ---- BudgetAccount --------------------------------------------------------------------

BudgetAccount::BudgetAccount(std::shared_ptr<MemoryBudget> budget, std::string stage) : budget_(std::move(budget)) {
  if (budget_) self_ = budget_->Register(std::move(stage));
}

BudgetAccount::~BudgetAccount() {
  if (budget_) budget_->Unregister(self_, held_.load(std::memory_order_relaxed));
}

Status BudgetAccount::Charge(int64_t bytes, const std::function<bool()>& needed_now) {
  if (!budget_) return Status();
  SLUICE_RETURN_IF_ERROR(budget_->Charge(self_, bytes, &needed_now));
  held_.fetch_add(bytes, std::memory_order_relaxed);
  return Status();
}

Status BudgetAccount::ChargeNoWait(int64_t bytes) {
  if (!budget_) return Status();
  SLUICE_RETURN_IF_ERROR(budget_->Charge(self_, bytes, nullptr));
  held_.fetch_add(bytes, std::memory_order_relaxed);
  return Status();
}

bool BudgetAccount::HasRoom() const {
  if (!budget_) return true;
  return budget_->HasRoomFor(self_, -1);
}

bool BudgetAccount::HasRoomFor(int64_t bytes) const { return !budget_ || budget_->HasRoomFor(self_, bytes); }

bool BudgetAccount::CouldHold(int64_t total) const {
  if (!budget_) return true;
  const int64_t limit = budget_->limit();
  if (limit <= 0) return true;
  MutexLock lock(&budget_->mu_);
  return total <= limit - budget_->reserve_;
}

void BudgetAccount::Release(int64_t bytes) {
  if (!budget_ || bytes == 0) {
    if (budget_) budget_->Release(0);  // wakes charges waiting on the consumer's progress
    return;
  }
  held_.fetch_sub(bytes, std::memory_order_relaxed);
  budget_->Release(bytes);
}

void BudgetAccount::Cancel() {
  if (budget_) budget_->Cancel(self_);
}

// ---- IteratorMemory -------------------------------------------------------------------

MemoryStats IteratorMemory(const IteratorBase& root) {
  std::shared_ptr<Model> m = root.model();
  return m ? m->memory()->Snapshot() : MemoryStats{};
}

}  // namespace sluice::data
