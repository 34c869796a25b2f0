#pragma once
// A small fixed-size pool of worker threads with a blocking parallel-for, used by the CPU
// operations that OpenBLAS does not cover (attention over heads and positions, the quantised
// linear layers).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mtdesk::cpu {

/// `threads` workers in all, counting the calling thread (which takes part in every
/// parallel_for). One parallel_for at a time: calls from several threads are serialised.
///
/// A decode step is a few hundred parallel_for calls of tens of microseconds each, so the
/// hand-over matters as much as the work: after a job, workers spin for kSpin before they
/// sleep on a condition variable, and the caller spins for the others to finish the same
/// way, as OpenMP runtimes (KMP_BLOCKTIME) and OpenBLAS do. Waking sleeping threads takes tens
/// of microseconds per call; spinning threads start within a few hundred nanoseconds.
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

    /// How long an idle worker (or the caller waiting for workers) spins before it sleeps.
    static constexpr std::chrono::microseconds kSpin{200};

  private:
    void worker_loop(int index);
    /// Waits, spinning first, until `ready` holds; then under mutex_ through `cv`.
    template <typename Ready>
    void spin_then_wait(std::condition_variable& cv, Ready ready);
    /// Wakes the threads sleeping on `cv`, after the state they wait for was changed.
    void wake(std::condition_variable& cv);

    std::vector<std::thread> workers_;
    std::mutex call_mutex_;  // serialises parallel_for callers
    std::mutex mutex_;       // guards error_ and the sleeps on the condition variables
    std::condition_variable start_cv_;
    std::condition_variable done_cv_;
    // Written by parallel_for before generation_ is raised (release), read by the workers after
    // they see it raised (acquire); not written again before every worker has finished.
    const std::function<void(int64_t, int64_t)>* job_ = nullptr;
    int64_t job_n_ = 0;
    int job_chunks_ = 0;
    std::atomic<uint64_t> generation_{0};
    std::atomic<int> pending_{0};  // workers yet to finish the current job
    std::exception_ptr error_;
    std::atomic<bool> stop_{false};
    std::atomic<int> sleepers_{0};  // threads in (or about to be in) a condition variable wait
};

}  // namespace mtdesk::cpu
