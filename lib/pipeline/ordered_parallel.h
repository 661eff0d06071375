// Work on many items with several threads, results taken in the items' order: the outcome is
// the same as one thread's, whatever the scheduling.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace faultline {

// Calls `work(i)` for every i in [0, count) on up to `threads` threads and `take(i, result)` on
// the calling thread in order of i. At most `threads` * 2 results wait to be taken, so memory
// stays bounded by the work in flight. An exception thrown by `work` is rethrown here, after the
// threads have stopped.
template <typename Result, typename Work, typename Take>
void for_each_in_order(size_t count, size_t threads, const Work& work, const Take& take) {
  if (threads <= 1 || count <= 1) {
    for (size_t i = 0; i < count; ++i) take(i, work(i));
    return;
  }
  const size_t window = threads * 2;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::optional<Result>> done(count);
  std::vector<std::exception_ptr> failed(count);
  size_t next = 0;   // the first item no thread has started
  size_t taken = 0;  // the first item not taken yet
  bool stop = false;

  const auto worker = [&] {
    for (;;) {
      size_t i = 0;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return stop || next == count || next < taken + window; });
        if (stop || next == count) return;
        i = next++;
      }
      std::optional<Result> result;
      std::exception_ptr error;
      try {
        result.emplace(work(i));
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard lock(mutex);
      done[i] = std::move(result);
      failed[i] = error;
      changed.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 0; t < std::min(threads, count); ++t) pool.emplace_back(worker);

  std::exception_ptr error;
  for (size_t i = 0; i < count && !error; ++i) {
    std::optional<Result> result;
    {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] { return done[i].has_value() || failed[i]; });
      error = failed[i];
      result = std::move(done[i]);
      done[i].reset();
    }
    if (error) break;
    try {
      take(i, std::move(*result));
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard lock(mutex);
      taken = i + 1;
    }
    changed.notify_all();
  }
  {
    std::lock_guard lock(mutex);
    stop = true;
  }
  changed.notify_all();
  for (std::thread& thread : pool) thread.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace faultline
