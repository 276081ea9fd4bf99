// One value computed off the frame path: the most recently requested key wins, a finished result stays
// visible (and is labelled stale by its key) until the next one lands, and nothing ever blocks the frame.
// Used by the model for O as it stands in HBM, the reference rows and the HBM-bytes-against-N sweep.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace flashviz {

template <class Value>
class BackgroundValue {
 public:
  // `cancel` turns true when the result is no longer wanted; long loops check it and return early.
  using Compute = std::function<Value(const std::atomic<bool>& cancel)>;

  BackgroundValue() = default;
  BackgroundValue(const BackgroundValue&) = delete;
  BackgroundValue& operator=(const BackgroundValue&) = delete;
  ~BackgroundValue() {
    Cancel();
    for (auto& job : abandoned_) job.result.wait();
    if (running_) running_->result.wait();
  }

  // Asks for the value of `key`. `run_here`: compute it now on this thread (cheap work, no latency).
  void Request(std::uint64_t key, Compute compute, bool run_here) {
    requested_ = key;
    if ((value_ || !error_.empty()) && key_ == key) return;  // there, or failed: no retry every frame
    if (running_ && running_->key == key) return;
    if (run_here) {
      if (running_) {  // its older result must not land over this one
        running_->cancel->store(true);
        abandoned_.push_back(std::move(*running_));
        running_.reset();
      }
      pending_.reset();
      std::atomic<bool> never{false};
      Store(key, [&] { return compute(never); });
      return;
    }
    pending_ = Pending{key, std::move(compute)};
    if (!running_) StartPending();
  }

  // Takes a finished result and starts what is pending. Call once per frame.
  void Poll() {
    for (auto it = abandoned_.begin(); it != abandoned_.end();)
      it = Ready(it->result) ? abandoned_.erase(it) : it + 1;
    if (running_ && Ready(running_->result)) {
      Store(running_->key, [&] { return running_->result.get(); });
      running_.reset();
    }
    if (!running_ && pending_) StartPending();
  }

  // Blocks until the requested key is computed (tests, screenshots).
  void Wait() {
    while (running_ || pending_) {
      if (running_) running_->result.wait();
      Poll();
    }
  }

  // Forgets the value and everything requested (the problem changed); running work is told to stop.
  void Reset() {
    Cancel();
    if (running_) abandoned_.push_back(std::move(*running_));
    running_.reset();
    pending_.reset();
    value_.reset();
    requested_ = 0;
  }

  const Value* get() const { return value_ ? &*value_ : nullptr; }
  // Replaces the value from this thread (an incremental update that made background work unnecessary);
  // running work is dropped.
  void Set(std::uint64_t key, Value value) {
    if (running_) {
      running_->cancel->store(true);
      abandoned_.push_back(std::move(*running_));
      running_.reset();
    }
    pending_.reset();
    value_ = std::move(value);
    key_ = requested_ = key;
    error_.clear();
  }
  // The value to update in place; call Set-like bookkeeping through Rekey afterwards.
  Value* mutable_get() { return value_ ? &*value_ : nullptr; }
  void Rekey(std::uint64_t key) {
    if (running_) {
      running_->cancel->store(true);
      abandoned_.push_back(std::move(*running_));
      running_.reset();
    }
    pending_.reset();
    key_ = requested_ = key;
  }
  // Why the last computation failed (out of memory, say), or empty.
  const std::string& error() const { return error_; }
  std::uint64_t key() const { return key_; }
  bool current() const { return value_ && key_ == requested_; }
  bool busy() const { return running_.has_value() || pending_.has_value(); }

 private:
  struct Job {
    std::uint64_t key;
    std::shared_ptr<std::atomic<bool>> cancel;
    std::future<Value> result;
  };
  struct Pending {
    std::uint64_t key;
    Compute compute;
  };

  template <class Get>
  void Store(std::uint64_t key, Get get) {
    key_ = key;
    try {
      value_ = get();
      error_.clear();
    } catch (const std::exception& e) {
      value_.reset();
      error_ = e.what();
    }
  }
  static bool Ready(std::future<Value>& f) {
    return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }
  void Cancel() {
    if (running_) running_->cancel->store(true);
    for (auto& job : abandoned_) job.cancel->store(true);
  }
  void StartPending() {
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    Compute compute = std::move(pending_->compute);
    const std::uint64_t key = pending_->key;
    pending_.reset();
    running_ = Job{key, cancel, std::async(std::launch::async, [compute = std::move(compute), cancel] {
                     return compute(*cancel);
                   })};
  }

  std::optional<Value> value_;
  std::uint64_t key_ = 0;
  std::string error_;
  std::uint64_t requested_ = 0;
  std::optional<Job> running_;
  std::optional<Pending> pending_;
  std::vector<Job> abandoned_;
};

}  // namespace flashviz
