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

}  // namespace

ThreadPool::ThreadPool(int threads) {
    if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
    threads = std::max(threads, 1);
    workers_.reserve(threads - 1);
    for (int i = 1; i < threads; ++i)
        workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    start_cv_.notify_all();
    for (auto& t : workers_)
        t.join();
}

void ThreadPool::worker_loop(int index) {
    uint64_t seen = 0;
    for (;;) {
        const std::function<void(int64_t, int64_t)>* job = nullptr;
        int64_t n = 0;
        int chunks = 0;
        {
            std::unique_lock lock(mutex_);
            start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            job = job_;
            n = job_n_;
            chunks = job_chunks_;
        }
        if (index < chunks) {
            auto [begin, end] = chunk_range(n, chunks, index);
            try {
                (*job)(begin, end);
            } catch (...) {
                std::lock_guard lock(mutex_);
                if (!error_) error_ = std::current_exception();
            }
        }
        {
            std::lock_guard lock(mutex_);
            if (--pending_ == 0) done_cv_.notify_one();
        }
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
    {
        std::lock_guard lock(mutex_);
        job_ = &fn;
        job_n_ = n;
        job_chunks_ = chunks;
        pending_ = static_cast<int>(workers_.size());
        error_ = nullptr;
        ++generation_;
    }
    start_cv_.notify_all();
    std::exception_ptr own_error;
    auto [begin, end] = chunk_range(n, chunks, 0);
    try {
        fn(begin, end);
    } catch (...) {
        own_error = std::current_exception();
    }
    std::unique_lock lock(mutex_);
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
    if (own_error) std::rethrow_exception(own_error);
    if (error_) std::rethrow_exception(error_);
}

}  // namespace mtdesk::cpu
