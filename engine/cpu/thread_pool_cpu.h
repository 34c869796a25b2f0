#pragma once
// A small fixed-size pool of worker threads with a blocking parallel-for, used by the CPU
// operations that OpenBLAS does not cover (attention over heads and positions).

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mtdesk::cpu {

/// `threads` workers in all, counting the calling thread (which takes part in every
/// parallel_for). One parallel_for at a time: calls from several threads are serialised.
class ThreadPool {
  public:
    /// `threads` <= 0 means std::thread::hardware_concurrency().
    explicit ThreadPool(int threads = 0);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const noexcept { return static_cast<int>(workers_.size()) + 1; }

    /// Splits [0, n) into at most size() contiguous chunks and runs fn(begin, end) on each,
    /// returning when all are done. The first exception thrown by a chunk is rethrown here.
    void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn);

  private:
    void worker_loop(int index);

    std::vector<std::thread> workers_;
    std::mutex call_mutex_;  // serialises parallel_for callers
    std::mutex mutex_;
    std::condition_variable start_cv_;
    std::condition_variable done_cv_;
    const std::function<void(int64_t, int64_t)>* job_ = nullptr;
    int64_t job_n_ = 0;
    int job_chunks_ = 0;
    uint64_t generation_ = 0;
    int pending_ = 0;
    std::exception_ptr error_;
    bool stop_ = false;
};

}  // namespace mtdesk::cpu
