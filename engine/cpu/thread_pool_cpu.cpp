#include "cpu/thread_pool_cpu.h"

#include <algorithm>
#include <exception>

namespace mtdesk::cpu {

namespace {

// Chunk `c` of `chunks` over [0, n): sizes differ by at most one.
std::pair<int64_t, int64_t> chunk_range(int64_t n, int chunks, int c) {
    const int64_t base = n / chunks;
    const int64_t extra = n % chunks;
    const int64_t begin = c * base + std::min<int64_t>(c, extra);
    return {begin, begin + base + (c < extra ? 1 : 0)};
}

// A hint to the core that this is a spin-wait loop (fewer pipeline flushes, the sibling
// hyper-thread gets the core).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#else
    std::this_thread::yield();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
    if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
    threads = std::max(threads, 1);
    workers_.reserve(threads - 1);
    for (int i = 1; i < threads; ++i)
        workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true);
    wake(start_cv_);
    for (auto& t : workers_)
        t.join();
}

template <typename Ready>
void ThreadPool::spin_then_wait(std::condition_variable& cv, Ready ready) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (unsigned spins = 1; !ready(); ++spins) {
        if (spins % 64 == 0 && std::chrono::steady_clock::now() > until) {
            // seq_cst, as in wake(): either the waker sees this sleeper, or this thread sees
            // the state the waker changed before it looked.
            sleepers_.fetch_add(1);
            {
                std::unique_lock lock(mutex_);
                cv.wait(lock, ready);
            }
            sleepers_.fetch_sub(1);
            return;
        }
        cpu_relax();
    }
}

void ThreadPool::wake(std::condition_variable& cv) {
    if (sleepers_.load() == 0) return;
    // Taking the mutex orders this after a sleeper's last check of its condition: it is then
    // inside cv.wait and gets the notification.
    { std::lock_guard lock(mutex_); }
    cv.notify_all();
}

void ThreadPool::worker_loop(int index) {
    uint64_t seen = 0;
    for (;;) {
        spin_then_wait(start_cv_, [&] {
            return stop_.load(std::memory_order_acquire) ||
                   generation_.load(std::memory_order_acquire) != seen;
        });
        if (stop_.load(std::memory_order_acquire)) return;
        seen = generation_.load(std::memory_order_acquire);
        const int chunks = job_chunks_;
        if (index < chunks) {
            auto [begin, end] = chunk_range(job_n_, chunks, index);
            try {
                (*job_)(begin, end);
            } catch (...) {
                std::lock_guard lock(mutex_);
                if (!error_) error_ = std::current_exception();
            }
        }
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) wake(done_cv_);
    }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0) return;
    const int chunks = static_cast<int>(std::min<int64_t>(n, size()));
    if (chunks == 1) {
        fn(0, n);
        return;
    }
    std::lock_guard call_lock(call_mutex_);
    job_ = &fn;
    job_n_ = n;
    job_chunks_ = chunks;
    error_ = nullptr;  // no job runs: no worker touches it now
    pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1);  // seq_cst: publishes the job (see spin_then_wait)
    wake(start_cv_);
    std::exception_ptr own_error;
    auto [begin, end] = chunk_range(n, chunks, 0);
    try {
        fn(begin, end);
    } catch (...) {
        own_error = std::current_exception();
    }
    spin_then_wait(done_cv_, [&] { return pending_.load(std::memory_order_acquire) == 0; });
    job_ = nullptr;
    if (own_error) std::rethrow_exception(own_error);
    std::lock_guard lock(mutex_);
    if (error_) std::rethrow_exception(error_);
}

}  // namespace mtdesk::cpu
