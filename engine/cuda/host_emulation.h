#pragma once
// Runs the engine's CUDA kernels on the CPU, so that their index arithmetic, fragment layouts,
// split-K and dequantisation can be checked where no GPU is present (the CI machines, a
// laptop). A kernel header includes this file when MTDESK_CUDA_HOST_EMULATION is defined and
// the translation unit is compiled by the host compiler (g++ / clang++, not nvcc).
//
// The model: every CUDA thread of a block is a fiber on the calling thread (on x86-64 switched
// by a few instructions that swap the callee-saved registers and the stack pointer; elsewhere
// by POSIX ucontext, whose switches also save the signal mask with a system call each);
// the blocks of a grid run one after another, in a shuffled order (block_order_seed()), as the
// GPU promises no order either. A fiber runs until it reaches a barrier, then
// the next one runs: warp-collective operations (__shfl_sync, __shfl_xor_sync, mma.sync,
// __syncwarp) meet at a per-warp barrier and exchange registers through the warp's slots;
// __syncthreads() is the block's barrier; a __shared__ array is a function-local static (one block
// runs at a time, so its threads share it as on the GPU). cp.async copies are kept per thread and
// made when a cp.async.wait_group requires them, as late as the PTX ISA allows: a kernel that reads
// its shared memory before waiting for the copy reads stale data here too. A thread that returns
// leaves its warp's and block's barriers, as an exited thread no longer takes part in bar.sync on
// the GPU. A block whose threads all wait at barriers that can never complete is a deadlock on the
// GPU too: the emulation aborts with a message.
//
// Semantics follow the PTX ISA: prmt (byte permute, default mode), shfl.sync.bfly, and the
// fragment layouts of mma.sync.aligned.m16n8k16 with 16-bit inputs and fp32 accumulators
// ("Matrix Fragments for mma.m16n8k16 with floating point type"). The mma sums its 16 products
// in fp32 in k order; the hardware's order and intermediate precision differ, so results agree
// with the GPU to rounding, not bit for bit.
//
// For tests with small shapes: a barrier costs a context switch per thread. Compile with
// -fno-strict-aliasing: kernels reinterpret registers between 16-bit pairs and words.

#if defined(__CUDACC__)
#error "host_emulation.h is compiled by the host compiler; nvcc builds the real kernels"
#endif

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <ucontext.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <tuple>
#include <type_traits>
#include <vector>

namespace mtdesk::cuda::emulation {

inline constexpr int kWarpSize = 32;

/// Returns control to the block's scheduler (defined below).
void yield();
/// Counts what moves a block forward (arrivals, completed barriers, finished threads): a pass
/// of the scheduler without any is a deadlock.
inline uint64_t& progress() {
    static uint64_t count = 0;
    return count;
}

/// A barrier of `expected` threads (bar.sync of a block, or a warp's convergence point).
struct Barrier {
    explicit Barrier(int threads) : expected(threads) {}
    int expected;
    int arrived = 0;
    uint64_t phase = 0;

    void arrive_and_wait() {
        ++progress();
        const uint64_t mine = phase;
        if (++arrived == expected) {
            arrived = 0;
            ++phase;
            return;
        }
        while (phase == mine)
            yield();
    }
    /// A thread that returned: it no longer counts, and may be the one the others wait for.
    void drop() {
        ++progress();
        if (--expected > 0 && arrived == expected) {
            arrived = 0;
            ++phase;
        }
    }
};

/// The registers the lanes of one warp exchange in a collective operation.
struct Warp {
    explicit Warp(int lanes) : barrier(lanes) {}
    Barrier barrier;
    uint64_t word[kWarpSize] = {};
    uint32_t a[kWarpSize][4] = {};  // mma A fragments
    uint32_t b[kWarpSize][2] = {};  // mma B fragments
};

/// One running block: its barrier and its warps.
struct Block {
    explicit Block(int threads) : barrier(threads) {
        for (int w = 0; w * kWarpSize < threads; ++w)
            warps.push_back(std::make_unique<Warp>(std::min(kWarpSize, threads - w * kWarpSize)));
    }
    Barrier barrier;
    std::vector<std::unique_ptr<Warp>> warps;
};

/// One cp.async: `bytes` at dst, the first `src_bytes` of them from src, the rest zeros.
struct AsyncCopy {
    void* dst;
    const void* src;
    int bytes;
    int src_bytes;
};

/// What a CUDA thread knows about itself.
struct ThreadContext {
    uint3 thread_idx{};
    uint3 block_idx{};
    dim3 block_dim{};
    dim3 grid_dim{};
    Block* block = nullptr;
    int linear = 0;                              // thread index within the block
    std::vector<AsyncCopy> uncommitted;          // cp.async since the last commit_group
    std::vector<std::vector<AsyncCopy>> groups;  // committed groups still pending, oldest first

    int lane() const { return linear % kWarpSize; }
    Warp& warp() const { return *block->warps[static_cast<std::size_t>(linear / kWarpSize)]; }
};

#if defined(__x86_64__)
// switch_stack(from, to): pushes the callee-saved registers of the System V x86-64 ABI (rbp,
// rbx, r12-r15) on the current stack, stores the stack pointer in *from, loads `to` and pops
// them from there; `ret` then resumes whatever saved that stack. Weak: every translation unit
// that includes this header defines it, the linker keeps one.
extern "C" void mtdesk_emulation_switch_stack(void** from, void* to);
asm(R"(
    .pushsection .text
    .weak mtdesk_emulation_switch_stack
    .type mtdesk_emulation_switch_stack, @function
mtdesk_emulation_switch_stack:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size mtdesk_emulation_switch_stack, .-mtdesk_emulation_switch_stack
    .popsection
)");

/// A suspended execution: the stack pointer switch_stack saved.
struct ExecutionContext {
    void* sp = nullptr;
};
/// Prepares `stack` so that switching to `c` calls entry() on it (entry must never return).
inline void make_context(ExecutionContext& c, std::vector<char>& stack, void (*entry)()) {
    auto top = reinterpret_cast<std::uintptr_t>(stack.data() + stack.size()) & ~std::uintptr_t(15);
    void** sp = reinterpret_cast<void**>(top);
    *--sp = nullptr;                         // entry's return address: it never returns
    *--sp = reinterpret_cast<void*>(entry);  // popped by switch_stack's ret
    for (int r = 0; r < 6; ++r)
        *--sp = nullptr;  // rbp, rbx, r12-r15
    c.sp = sp;
}
inline void switch_context(ExecutionContext& from, ExecutionContext& to) {
    mtdesk_emulation_switch_stack(&from.sp, to.sp);
}
#else
struct ExecutionContext {
    ucontext_t uc{};
};
inline void make_context(ExecutionContext& c, std::vector<char>& stack, void (*entry)()) {
    getcontext(&c.uc);
    c.uc.uc_stack.ss_sp = stack.data();
    c.uc.uc_stack.ss_size = stack.size();
    c.uc.uc_link = nullptr;  // entry never returns
    makecontext(&c.uc, entry, 0);
}
inline void switch_context(ExecutionContext& from, ExecutionContext& to) {
    swapcontext(&from.uc, &to.uc);
}
#endif

/// One CUDA thread: its fiber, stack and identity.
struct Fiber {
    ExecutionContext context;
    std::vector<char> stack;
    ThreadContext thread;
    bool done = false;
};

/// The scheduler's state while a block runs.
struct Scheduler {
    ExecutionContext context;
    std::vector<Fiber> fibers;
    Fiber* current = nullptr;
    std::function<void()> body;  // runs the kernel with its arguments for the current fiber
};

inline Scheduler& scheduler() {
    static Scheduler s;
    return s;
}

inline ThreadContext& context() {
    return scheduler().current->thread;
}

inline void yield() {
    Scheduler& s = scheduler();
    switch_context(s.current->context, s.context);
}

inline void syncthreads() {
    context().block->barrier.arrive_and_wait();
}

inline void syncwarp() {
    context().warp().barrier.arrive_and_wait();
}

/// cp.async.{ca,cg}.shared.global: queued until a wait_group requires it.
inline void cp_async(void* dst, const void* src, int bytes, int src_bytes) {
    context().uncommitted.push_back({dst, src, bytes, src_bytes});
}

/// cp.async.commit_group (an empty group too, as on the GPU).
inline void cp_async_commit() {
    ThreadContext& c = context();
    c.groups.push_back(std::move(c.uncommitted));
    c.uncommitted.clear();
}

/// cp.async.wait_group n: makes the copies of all but the n most recent committed groups.
inline void cp_async_wait(int n) {
    ThreadContext& c = context();
    while (c.groups.size() > static_cast<std::size_t>(n)) {
        for (const AsyncCopy& copy : c.groups.front()) {
            std::memcpy(copy.dst, copy.src, static_cast<std::size_t>(copy.src_bytes));
            std::memset(static_cast<char*>(copy.dst) + copy.src_bytes, 0,
                        static_cast<std::size_t>(copy.bytes - copy.src_bytes));
        }
        c.groups.erase(c.groups.begin());
    }
}

/// The value `v` of lane `src` of the calling thread's warp: every lane posts its value, then
/// reads another's (the warp-wide exchange under shfl.sync).
template <typename V>
V exchange(V v, int src) {
    static_assert(std::is_trivially_copyable_v<V> && sizeof(V) <= sizeof(uint64_t));
    Warp& w = context().warp();
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(V));
    w.word[context().lane()] = bits;
    w.barrier.arrive_and_wait();
    const uint64_t other = w.word[src & (kWarpSize - 1)];
    w.barrier.arrive_and_wait();  // the slots are written again by the next exchange
    V r;
    std::memcpy(&r, &other, sizeof(V));
    return r;
}

/// shfl.sync.bfly over the whole warp: the value of lane (lane ^ lane_mask).
template <typename V>
V shfl_xor(V v, int lane_mask) {
    return exchange(v, context().lane() ^ lane_mask);
}

/// shfl.sync.idx over the whole warp: the value of lane `src`.
template <typename V>
V shfl(V v, int src) {
    return exchange(v, src);
}

/// prmt.b32 (default mode): byte i of the result is byte (s >> 4i) & 7 of {y, x} (x bytes
/// 0-3, y bytes 4-7), replaced by its sign replicated when bit 3 of that selector is set.
inline uint32_t byte_perm(uint32_t x, uint32_t y, uint32_t s) {
    const uint64_t v = (static_cast<uint64_t>(y) << 32) | x;
    uint32_t r = 0;
    for (int i = 0; i < 4; ++i) {
        const uint32_t sel = (s >> (4 * i)) & 0xfu;
        uint32_t byte = static_cast<uint32_t>(v >> (8 * (sel & 7u))) & 0xffu;
        if (sel & 8u) byte = (byte & 0x80u) ? 0xffu : 0u;
        r |= byte << (8 * i);
    }
    return r;
}

template <typename T>
float half_bits_to_float(uint16_t bits) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
        return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
    else
        return __half2float(__ushort_as_half(bits));
}

/// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32, D = A · B + C in place.
/// Per lane (g = lane / 4, t = lane % 4): A registers a0 (row g, cols 2t, 2t+1), a1 (row g+8),
/// a2 (row g, cols 2t+8, 2t+9), a3 (row g+8, cols 2t+8, 2t+9); B registers b0 (k 2t, 2t+1 of
/// col g), b1 (k 2t+8, 2t+9); accumulators d0, d1 (row g, cols 2t, 2t+1), d2, d3 (row g+8).
/// The lower-indexed element of a pair is the low half of its register.
template <typename T>
void mma_m16n8k16(float* d, const uint32_t* a, const uint32_t* b) {
    Warp& w = context().warp();
    const int lane = context().lane();
    std::memcpy(w.a[lane], a, sizeof(w.a[lane]));
    std::memcpy(w.b[lane], b, sizeof(w.b[lane]));
    w.barrier.arrive_and_wait();
    auto element = [](uint32_t reg, int half) {
        return half_bits_to_float<T>(static_cast<uint16_t>(half ? reg >> 16 : reg & 0xffffu));
    };
    auto A = [&](int row, int col) {
        const int owner = (row & 7) * 4 + ((col & 7) >> 1);
        const int reg = (row >= 8 ? 1 : 0) + (col >= 8 ? 2 : 0);
        return element(w.a[owner][reg], col & 1);
    };
    auto B = [&](int k, int col) {
        const int owner = col * 4 + ((k & 7) >> 1);
        return element(w.b[owner][k >= 8 ? 1 : 0], k & 1);
    };
    const int g = lane >> 2, t = lane & 3;
    float out[4];
    for (int e = 0; e < 4; ++e) {
        const int row = g + (e >= 2 ? 8 : 0), col = 2 * t + (e & 1);
        float s = d[e];
        for (int k = 0; k < 16; ++k)
            s = std::fma(A(row, k), B(k, col), s);
        out[e] = s;
    }
    w.barrier.arrive_and_wait();  // every lane has read the fragments
    std::memcpy(d, out, sizeof(out));
}

/// ldmatrix.sync.aligned.m8n8.x2[.trans].shared.b16: lanes 0-7 give the row addresses of
/// matrix 0 and lanes 8-15 those of matrix 1 (8 b16 each); register i of lane l receives
/// elements (l / 4, 2 (l % 4)) and (l / 4, 2 (l % 4) + 1) of matrix i, or with .trans
/// (2 (l % 4), l / 4) and (2 (l % 4) + 1, l / 4).
inline void ldmatrix_x2(uint32_t& r0, uint32_t& r1, const void* p, bool trans) {
    Warp& w = context().warp();
    const int lane = context().lane();
    w.word[lane] = reinterpret_cast<std::uintptr_t>(p);
    w.barrier.arrive_and_wait();
    uint32_t r[2];
    for (int m = 0; m < 2; ++m) {
        uint32_t e[2];
        for (int h = 0; h < 2; ++h) {
            const int row = trans ? 2 * (lane % 4) + h : lane / 4;
            const int col = trans ? lane / 4 : 2 * (lane % 4) + h;
            e[h] = reinterpret_cast<const uint16_t*>(w.word[8 * m + row])[col];
        }
        r[m] = e[0] | e[1] << 16;
    }
    w.barrier.arrive_and_wait();
    r0 = r[0];
    r1 = r[1];
}

inline void fiber_entry() {
    Scheduler& s = scheduler();
    s.body();
    Fiber& f = *s.current;
    f.thread.warp().barrier.drop();
    f.thread.block->barrier.drop();
    f.done = true;
    ++progress();
    switch_context(f.context, s.context);  // for good: the scheduler never resumes a done fiber
    std::abort();
}

/// The running launch's dynamic shared memory (shared_bytes of launch_with_shared), 16-byte
/// aligned.
inline std::vector<float4>& dynamic_shared_storage() {
    static std::vector<float4> storage;
    return storage;
}
inline void* dynamic_shared() {
    return dynamic_shared_storage().data();
}

/// The seed of the order in which launch() runs a grid's blocks (a permutation drawn with
/// std::mt19937); 0 runs them in index order, x fastest. Shuffled by default, so that a kernel
/// relying on blocks running in index order is not hidden by the emulation's sequential run.
inline uint32_t& block_order_seed() {
    static uint32_t seed = 1;
    return seed;
}

/// Runs kernel<<<grid, block>>>(args...) to completion on the calling thread. Shared memory
/// must be static (__shared__ arrays in the kernel). Not reentrant: one launch at a time per
/// process.
template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, Args&&... args) {
    constexpr std::size_t kStackBytes = 128 * 1024;
    const int threads = static_cast<int>(block.x * block.y * block.z);
    Scheduler& s = scheduler();
    std::tuple<std::decay_t<Args>...> stored(args...);
    s.body = [&] { std::apply(kernel, stored); };
    s.fibers.resize(static_cast<std::size_t>(threads));
    std::vector<uint3> order;
    for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx)
                order.push_back(uint3{bx, by, bz});
    if (block_order_seed() != 0) {
        std::mt19937 rng(block_order_seed());
        std::shuffle(order.begin(), order.end(), rng);
    }
    for (const uint3 index : order) {
        const unsigned bx = index.x, by = index.y, bz = index.z;
        Block running(threads);
        for (int linear = 0; linear < threads; ++linear) {
            Fiber& f = s.fibers[static_cast<std::size_t>(linear)];
            f.stack.resize(kStackBytes);
            f.done = false;
            f.thread.linear = linear;
            f.thread.thread_idx = uint3{static_cast<unsigned>(linear) % block.x,
                                        static_cast<unsigned>(linear) / block.x % block.y,
                                        static_cast<unsigned>(linear) / (block.x * block.y)};
            f.thread.block_idx = uint3{bx, by, bz};
            f.thread.block_dim = block;
            f.thread.grid_dim = grid;
            f.thread.block = &running;
            f.thread.uncommitted.clear();
            f.thread.groups.clear();
            make_context(f.context, f.stack, fiber_entry);
        }
        for (int live = threads; live > 0;) {
            const uint64_t before = progress();
            live = 0;
            for (Fiber& f : s.fibers) {
                if (f.done) continue;
                s.current = &f;
                switch_context(s.context, f.context);
                live += f.done ? 0 : 1;
            }
            if (live > 0 && progress() == before) {
                std::fprintf(stderr,
                             "CUDA host emulation: block (%u, %u, %u) deadlocked: %d "
                             "threads wait at barriers that cannot complete\n",
                             bx, by, bz, live);
                std::abort();
            }
        }
        s.current = nullptr;
    }
}

/// launch() with `shared_bytes` of dynamic shared memory (zeroed, as nothing on the GPU
/// promises its contents either).
template <typename... Params, typename... Args>
void launch_with_shared(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes,
                        Args&&... args) {
    dynamic_shared_storage().assign((shared_bytes + sizeof(float4) - 1) / sizeof(float4), float4{});
    launch(kernel, grid, block, std::forward<Args>(args)...);
}

}  // namespace mtdesk::cuda::emulation

// Device code's global min / max (CUDA's math headers declare them for device code only).
inline int min(int a, int b) {
    return a < b ? a : b;
}
inline int max(int a, int b) {
    return a > b ? a : b;
}
inline float rsqrtf(float x) {
    return 1.0f / std::sqrt(x);
}

// The CUDA built-ins the kernels use, mapped onto the emulation.
#define threadIdx (::mtdesk::cuda::emulation::context().thread_idx)
#define blockIdx (::mtdesk::cuda::emulation::context().block_idx)
#define blockDim (::mtdesk::cuda::emulation::context().block_dim)
#define gridDim (::mtdesk::cuda::emulation::context().grid_dim)
#define __syncthreads() ::mtdesk::cuda::emulation::syncthreads()
#define __syncwarp(...) ::mtdesk::cuda::emulation::syncwarp()
#define __shfl_xor_sync(mask, v, lane_mask) ::mtdesk::cuda::emulation::shfl_xor((v), (lane_mask))
#define __shfl_sync(mask, v, src) ::mtdesk::cuda::emulation::shfl((v), (src))
#define __byte_perm(x, y, s) ::mtdesk::cuda::emulation::byte_perm((x), (y), (s))
#define __ldg(p) (*(p))
// A block's threads switch only at barriers and blocks run one after another: an atomic add is
// a plain one.
template <typename V>
inline V atomicAdd(V* p, V v) {
    const V old = *p;
    *p = old + v;
    return old;
}
#define __expf(x) std::exp(static_cast<float>(x))
#define __float2int_rn(x) static_cast<int>(std::nearbyint(static_cast<float>(x)))
#define __uint_as_float(u) std::bit_cast<float>(static_cast<uint32_t>(u))
#define __float_as_uint(f) std::bit_cast<uint32_t>(static_cast<float>(f))
#define __trap() std::abort()
#undef __launch_bounds__
#define __launch_bounds__(...)
#undef __shared__
#define __shared__ static
