// CudaModel: weights, KV blocks and the batched forward step. The order of operations per layer
// is the CPU decoder's (cpu/cpu_model.cpp), with Q/K/V and gate/up fused into one product each.

#include "cuda/cuda_model.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <type_traits>
#include <utility>

#include "cpu/ops_cpu.h"
#include "cuda/cuda_common.h"
#include "cuda/gemm_cuda.h"
#include "cuda/linear_cuda.h"
#include "mtdesk/error.h"
#include "mtdesk/quant/quant_cache.h"
#include "mtdesk/quant/quantize.h"
#include "mtdesk/quant/tiers.h"

namespace mtdesk::cuda {
namespace {

WeightFormat weight_format(Tier t) {
    switch (t) {
        case Tier::BF16:
            return WeightFormat::BF16;
        case Tier::FP16:
            return WeightFormat::FP16;
        case Tier::INT8:
            return WeightFormat::INT8;
        case Tier::INT4:
            return WeightFormat::INT4;
    }
    return WeightFormat::BF16;
}

/// Host fp32 values → device 16-bit buffer.
template <typename T>
DeviceBuffer upload_16(const std::vector<float>& v) {
    std::vector<T> h(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        h[i] = T(v[i]);
    DeviceBuffer d(h.size() * sizeof(T));
    MTDESK_CUDA_CHECK(cudaMemcpy(d.get(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

/// Where the GPU sees pinned host memory (cudaMallocHost's, mapped on every 64-bit platform
/// CUDA runs on). Throws Error on a CUDA error.
template <typename P>
P* device_address(P* host) {
    void* device = nullptr;
    MTDESK_CUDA_CHECK(cudaHostGetDevicePointer(&device, host, 0));
    return static_cast<P*>(device);
}

/// The stream, pinned staging buffer and the event that marks its last copy,
/// released even when a constructor fails half-way (nothing may stay behind after a failed
/// load).
struct Handles {
    cudaStream_t stream = nullptr;
    int32_t* pinned = nullptr;
    const int32_t* pinned_device = nullptr;  // the same memory, as the GPU sees it
    cudaEvent_t pinned_copied = nullptr;
    /// Two slots for the sampler: its parameters in, its ids out (a sample may be queued
    /// while the one before is not read yet); an event marks each slot's ids on the host.
    char* sample_pinned[2] = {nullptr, nullptr};
    char* sample_pinned_device[2] = {nullptr, nullptr};  // the same memory, as the GPU sees it
    cudaEvent_t sample_done[2] = {nullptr, nullptr};
    Handles() = default;
    Handles(const Handles&) = delete;
    Handles& operator=(const Handles&) = delete;
    ~Handles() {
        if (stream) cudaStreamSynchronize(stream);
        if (stream) cudaStreamDestroy(stream);
        if (pinned_copied) cudaEventDestroy(pinned_copied);
        if (pinned) cudaFreeHost(pinned);
        for (int i = 0; i < 2; ++i) {
            if (sample_done[i]) cudaEventDestroy(sample_done[i]);
            if (sample_pinned[i]) cudaFreeHost(sample_pinned[i]);
        }
    }
};

/// An instantiated CUDA graph (owned).
class GraphExec {
  public:
    explicit GraphExec(cudaGraphExec_t e) : exec_(e) {}
    GraphExec(GraphExec&& o) noexcept : exec_(std::exchange(o.exec_, nullptr)) {}
    GraphExec& operator=(GraphExec&&) = delete;
    ~GraphExec() {
        if (exec_) cudaGraphExecDestroy(exec_);
    }
    cudaGraphExec_t get() const noexcept { return exec_; }

  private:
    cudaGraphExec_t exec_ = nullptr;
};

struct Layer {
    DeviceBuffer input_norm, post_norm, q_norm, k_norm, qkv_bias, o_bias, gate_up_bias, down_bias;
    DeviceLinear qkv, o, gate_up, down;
};

template <typename T>
class CudaModelImpl final : public CudaModel {
  public:
    CudaModelImpl(const ModelDir& dir, const CudaEngineOptions& options,
                  const LoadProgress& progress)
        : config_(dir.config), options_(options) {
        open_device();
        load_weights(dir, progress);
        allocate_kv();
        allocate_workspace();
    }

    /// Random weights of `config`'s shapes, made on the device (CudaModel::synthetic).
    CudaModelImpl(const ModelConfig& config, const CudaEngineOptions& options, uint64_t seed)
        : config_(config), options_(options) {
        open_device();
        random_weights(seed);
        allocate_kv();
        allocate_workspace();
    }

    ~CudaModelImpl() override {
        if (stream_) cudaStreamSynchronize(stream_);
    }

    const ModelConfig& config() const noexcept override { return config_; }
    const CudaEngineOptions& options() const noexcept override { return options_; }
    CudaMemory memory() const noexcept override { return memory_; }
    std::string device_name() const override { return device_name_; }

    int num_blocks() const noexcept override { return num_blocks_; }
    int free_blocks() const noexcept override { return static_cast<int>(free_.size()); }
    int allocate_block() override {
        if (free_.empty()) return -1;
        const int b = free_.back();
        free_.pop_back();
        return b;
    }
    void free_block(int block) override { free_.push_back(block); }
    int max_blocks_per_sequence() const noexcept override { return max_blocks_per_seq_; }

    int forward(std::span<const StepSequence> seqs) override {
        const ModelConfig& c = config_;
        int total = 0, rows = 0;
        bool decode_only = true;  // one new token per sequence, its logits wanted
        for (const StepSequence& s : seqs) {
            total += static_cast<int>(s.tokens.size());
            rows += s.logits == StepSequence::Logits::All    ? static_cast<int>(s.tokens.size())
                    : s.logits == StepSequence::Logits::Last ? 1
                                                             : 0;
            decode_only =
                decode_only && s.tokens.size() == 1 && s.logits != StepSequence::Logits::None;
        }
        if (total == 0) throw Error("CudaModel::forward: no tokens");
        if (total > options_.max_step_tokens)
            throw Error("CudaModel::forward: " + std::to_string(total) +
                        " tokens in one step, the limit is " +
                        std::to_string(options_.max_step_tokens));
        if (static_cast<int>(seqs.size()) > max_seqs_)
            throw Error("CudaModel::forward: more sequences than the batch limit");

        // A decode step replays the CUDA graph of its batch bucket: the batch is padded with
        // dummy sequences (token 0 at position 0 in the reserved padding block) to the bucket's
        // size, so one graph serves every batch up to it.
        const int real = static_cast<int>(seqs.size());
        const int padded = decode_only && graphs_enabled_ ? graph_bucket(real) : 0;
        if (padded > 0) total = rows = padded;

        // Step metadata, packed into one host buffer and copied with one transfer:
        // tokens | positions | slots | token_seq | logit_rows | block_tables
        const int mb = max_blocks_per_seq_;
        const int table_rows = padded > 0 ? padded : real;
        const std::size_t ints =
            4 * static_cast<std::size_t>(total) + rows + static_cast<std::size_t>(table_rows) * mb;
        if (ints > meta_capacity_) throw Error("CudaModel::forward: step metadata too large");
        // The previous step's metadata may still be waiting in the stream to be copied from the
        // pinned buffer (a caller can queue steps without reading their results): wait until
        // that copy has run before overwriting it.
        if (pinned_in_flight_) {
            MTDESK_CUDA_CHECK(cudaEventSynchronize(handles_.pinned_copied));
            pinned_in_flight_ = false;
        }
        int32_t* tokens = pinned_;
        int32_t* positions = tokens + total;
        int32_t* slots = positions + total;
        int32_t* token_seq = slots + total;
        int32_t* logit_rows = token_seq + total;
        int32_t* tables = logit_rows + rows;
        int t = 0, r = 0, max_context = 0;
        for (std::size_t s = 0; s < seqs.size(); ++s) {
            const StepSequence& q = seqs[s];
            const int n = static_cast<int>(q.tokens.size());
            const int needed_blocks = (q.start + n + options_.block_size - 1) / options_.block_size;
            if (static_cast<int>(q.block_table.size()) < needed_blocks || needed_blocks > mb)
                throw Error("CudaModel::forward: block table of " +
                            std::to_string(q.block_table.size()) + " blocks for " +
                            std::to_string(q.start + n) + " positions");
            max_context = std::max(max_context, q.start + n);
            std::fill(tables + s * mb, tables + (s + 1) * mb, 0);
            std::copy(q.block_table.begin(), q.block_table.begin() + needed_blocks,
                      tables + s * mb);
            for (int i = 0; i < n; ++i, ++t) {
                const int32_t id = q.tokens[i];
                if (id < 0 ? -1 - id >= pending_rows_ : id >= c.vocab_size)
                    throw Error(id < 0 ? "pending token " + std::to_string(id) +
                                             " of no row of the last sample (" +
                                             std::to_string(pending_rows_) + " rows)"
                                       : "token id " + std::to_string(id) +
                                             " outside the vocabulary (" +
                                             std::to_string(c.vocab_size) + ")");
                const int pos = q.start + i;
                if (pos >= c.max_position_embeddings)
                    throw Error("position " + std::to_string(pos) + " beyond the model's " +
                                std::to_string(c.max_position_embeddings));
                tokens[t] = id;
                positions[t] = pos;
                slots[t] = q.block_table[pos / options_.block_size] * options_.block_size +
                           pos % options_.block_size;
                token_seq[t] = static_cast<int32_t>(s);
                if (q.logits == StepSequence::Logits::All ||
                    (q.logits == StepSequence::Logits::Last && i == n - 1))
                    logit_rows[r++] = t;
            }
        }
        for (int s = real; s < table_rows; ++s, ++t) {  // the padding of a graph step
            std::fill(tables + s * mb, tables + (s + 1) * mb, pad_block_);
            tokens[t] = 0;
            positions[t] = 0;
            slots[t] = pad_block_ * options_.block_size;
            token_seq[t] = s;
            logit_rows[r++] = t;
        }
        upload_from_host(meta_.as<int32_t>(), handles_.pinned_device, ints, stream_);
        MTDESK_CUDA_CHECK(cudaEventRecord(handles_.pinned_copied, stream_));
        pinned_in_flight_ = true;

        if (padded > 0) {
            // Graphs are keyed by the batch bucket and a power-of-two bound on the context (the
            // split-KV attention's grid is sized from it).
            const int context = context_bucket(max_context);
            if (run_graph(padded, context)) {
                logit_rows_ = real;
                logits_on_host_ = false;
                return real;
            }
            // Capture failed: run this and later steps eagerly (the padding does no harm).
        }
        enqueue_layers(total, rows, max_context, !decode_only);

        // Logits of the requested rows, in slices of the logits buffer's capacity.
        const int32_t* d_logit_rows = meta_.as<int32_t>() + 4 * static_cast<std::size_t>(total);
        logit_rows_ = padded > 0 ? real : rows;
        if (rows > max_logit_rows_) {
            all_logits_host_.assign(static_cast<std::size_t>(rows) * c.vocab_size, 0.0f);
            for (int s = 0; s < rows; s += max_logit_rows_) {
                const int n = std::min(max_logit_rows_, rows - s);
                lm_head_rows(h_.as<T>(), d_logit_rows + s, n);
                copy_logits(all_logits_host_.data() + static_cast<std::size_t>(s) * c.vocab_size,
                            n);
            }
            logits_on_host_ = true;
        } else {
            lm_head_rows(h_.as<T>(), d_logit_rows, rows);
            logits_on_host_ = false;
        }
        return logit_rows_;
    }

    int graphs() const noexcept override { return static_cast<int>(graphs_.size()); }

    int norms_in_gemvs() override {
        return static_cast<int>(std::count_if(layers_.begin(), layers_.end(),
                                              [&](Layer& L) { return norm_in_layer(L); }));
    }

    void warm_up() override {
        warm_up_linears();
        MTDESK_CUDA_CHECK(cudaStreamSynchronize(stream_));
        // A prefill long enough for the dequantise + GEMM path (INT tiers, m > kGemvMaxM).
        const int tokens = std::min({options_.max_step_tokens, 2 * kGemvMaxM + 1,
                                     max_blocks_per_seq_ * options_.block_size - 1});
        if (tokens < 1) return;
        std::vector<int32_t> ids(tokens + 1, 0), table, second;
        for (int b = 0; b < (tokens + 1 + options_.block_size - 1) / options_.block_size; ++b) {
            const int block = allocate_block();
            if (block < 0) break;
            table.push_back(block);
        }
        if (const int block = allocate_block(); block >= 0) second.push_back(block);
        auto release = [&] {
            for (int b : table)
                free_block(b);
            for (int b : second)
                free_block(b);
        };
        if (static_cast<int>(table.size()) * options_.block_size < tokens + 1 || second.empty()) {
            release();
            return;  // a KV budget this small has nothing worth warming up
        }
        try {
            StepSequence prefill;
            prefill.tokens = std::span<const int32_t>(ids).first(tokens);
            prefill.block_table = table;
            forward(std::span(&prefill, 1));
            StepSequence decode;
            decode.tokens = std::span<const int32_t>(ids).subspan(tokens, 1);
            decode.start = tokens;
            decode.block_table = table;
            forward(std::span(&decode, 1));
            // A decode step of two sequences: the batched decode path's kernels (cuBLAS's
            // small-m GEMMs for 16-bit weights, which one row no longer reaches) load here, not
            // in a user's first batch.
            if (max_seqs_ >= 2 && max_logit_rows_ >= 2) {
                StepSequence pair[2] = {decode, {}};
                pair[1].tokens = std::span<const int32_t>(ids).first(1);
                pair[1].block_table = second;
                forward(std::span(pair, 2));
            }
            MTDESK_CUDA_CHECK(cudaStreamSynchronize(stream_));
        } catch (...) {
            release();
            throw;
        }
        release();
    }

    /// Runs each linear layer shape (layer 0's qkv, o, gate|up and down; the output layer up to
    /// the logit rows) at every row-count bucket of the GEMMs up to the step budget
    /// (gemm_buckets), on the activation buffers as they are (the results are scratch), so that
    /// each bucket's GEMM algorithm is chosen and its kernel loaded now: 2-4 ms of host time
    /// the first time a kernel runs (gemm_cuda.h). Before this a user's first 2,093-token
    /// prompt took 73-80 ms to its first token on the 7B bf16 shapes and 62-66 afterwards
    /// (H200).
    void warm_up_linears() {
        if (layers_.empty()) return;
        const Layer& L = layers_[0];
        const int tmax = options_.max_step_tokens;
        T* h = h_.as<T>();
        for (int m : gemm_buckets(tmax)) {
            m = std::min(m, tmax);
            linear<T>(L.qkv, h, qkv_.as<T>(), m, ctx_, stream_);
            linear<T>(L.o, attn_.as<T>(), tmp_.as<T>(), m, ctx_, stream_);
            linear<T>(L.gate_up, h, gu_.as<T>(), m, ctx_, stream_);
            linear<T>(L.down, act_.as<T>(), tmp_.as<T>(), m, ctx_, stream_);
            if (m <= max_logit_rows_)
                linear<T>(lm_head_, rows_.as<T>(), logits_.as<T>(), m, ctx_, stream_);
        }
    }

    void logits_to_host(std::vector<float>& out) override {
        const std::size_t n = static_cast<std::size_t>(logit_rows_) * config_.vocab_size;
        if (logits_on_host_) {
            out.assign(all_logits_host_.begin(), all_logits_host_.begin() + n);
            return;
        }
        out.resize(n);
        copy_logits(out.data(), logit_rows_);
    }

    void sample_async(std::span<const SampleParams> params,
                      std::span<const std::span<const int32_t>> histories,
                      int vocab_limit) override {
        const int rows = static_cast<int>(params.size());
        if (rows != logit_rows_ || logits_on_host_)
            throw Error("CudaModel::sample: one parameter set per logit row of the last step");
        if (unread_.size() >= 2)
            throw Error("CudaModel::sample_async: two samples are waiting to be read");
        const int vocab = std::clamp(vocab_limit, 1, config_.vocab_size);
        // params | offsets | ids, one transfer.
        std::vector<int32_t> offsets(rows + 1, 0);
        for (int i = 0; i < rows; ++i)
            offsets[i + 1] =
                offsets[i] +
                (params[i].repetition_penalty != 1.0f ? static_cast<int>(histories[i].size()) : 0);
        static_assert(sizeof(SampleParams) % sizeof(int32_t) == 0, "uploaded as int32");
        const std::size_t param_bytes = rows * sizeof(SampleParams);
        const std::size_t bytes = param_bytes + (rows + 1 + offsets[rows]) * sizeof(int32_t);
        if (bytes > sample_meta_.bytes())
            throw Error("CudaModel::sample: histories longer than the model's positions");
        // The slot the sample before the last one used: read by now (at most two wait), and
        // its parameters copied before its ids were.
        const int slot = next_slot_;
        next_slot_ ^= 1;
        char* host = handles_.sample_pinned[slot];
        std::memcpy(host, params.data(), param_bytes);
        auto* hoff = reinterpret_cast<int32_t*>(host + param_bytes);
        std::copy(offsets.begin(), offsets.end(), hoff);
        int32_t* hids = hoff + rows + 1;
        for (int i = 0; i < rows; ++i)
            if (params[i].repetition_penalty != 1.0f)
                std::copy(histories[i].begin(), histories[i].end(), hids + offsets[i]);
        upload_from_host(sample_meta_.as<int32_t>(),
                         reinterpret_cast<const int32_t*>(handles_.sample_pinned_device[slot]),
                         bytes / sizeof(int32_t), stream_);
        const auto* dparams = sample_meta_.as<SampleParams>();
        const auto* doff = reinterpret_cast<const int32_t*>(sample_meta_.as<char>() + param_bytes);
        // Pending tokens in the histories are the previous sample's rows (pending_ids_); the
        // sampler's first kernel reads them before its second writes the new ones there (what
        // the next step's pending_token()s read) and into the slot's pinned ids, which the GPU
        // writes directly: no copies between this sample and the next step.
        sample_tokens<T>(
            logits_.as<T>(), config_.vocab_size, vocab, rows, dparams, doff, doff + rows + 1,
            sample_scratch_.as<float>(), pending_ids_.as<int32_t>(), stream_,
            pending_ids_.as<int32_t>(),
            reinterpret_cast<int32_t*>(handles_.sample_pinned_device[slot] + sample_meta_.bytes()));
        MTDESK_CUDA_CHECK(cudaEventRecord(handles_.sample_done[slot], stream_));
        unread_.push_back({slot, rows});
        pending_rows_ = rows;
    }

    std::vector<int32_t> sample(std::span<const SampleParams> params,
                                std::span<const std::span<const int32_t>> histories,
                                int vocab_limit) override {
        if (!unread_.empty())
            throw Error("CudaModel::sample: an earlier sample is waiting to be read");
        sample_async(params, histories, vocab_limit);
        return sampled_ids();
    }

    std::vector<int32_t> sampled_ids() override {
        if (unread_.empty()) throw Error("CudaModel::sampled_ids: no sample is waiting");
        const Unread u = unread_.front();
        unread_.pop_front();
        MTDESK_CUDA_CHECK(cudaEventSynchronize(handles_.sample_done[u.slot]));
        const auto* ids =
            reinterpret_cast<const int32_t*>(handles_.sample_pinned[u.slot] + sample_meta_.bytes());
        return std::vector<int32_t>(ids, ids + u.rows);
    }

  private:
    void open_device() {
        MTDESK_CUDA_CHECK(cudaSetDevice(options_.device));
        cudaDeviceProp prop{};
        MTDESK_CUDA_CHECK(cudaGetDeviceProperties(&prop, options_.device));
        device_name_ = prop.name;
        set_programmatic_launch(options_.programmatic_launch && prop.major >= 9);
        check_fits();
        MTDESK_CUDA_CHECK(cudaStreamCreateWithFlags(&handles_.stream, cudaStreamNonBlocking));
        stream_ = handles_.stream;
        MTDESK_CUDA_CHECK(
            cudaEventCreateWithFlags(&handles_.pinned_copied, cudaEventDisableTiming));
    }

    /// Weights of config_'s shapes with random values (standard deviation 0.02, norms 1), in
    /// the tier's format, made on the device: the model costs what a checkpoint of these
    /// shapes would, without one.
    void random_weights(uint64_t seed) {
        const ModelConfig& c = config_;
        const WeightFormat format = weight_format(options_.tier);
        const int hidden = c.hidden_size, inter = c.intermediate_size;
        const int q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim;
        auto random_linear = [&](int n, int k) {
            DeviceLinear d = DeviceLinear::random(n, k, format, seed++);
            memory_.weights += d.device_bytes();
            return d;
        };
        auto ones = [&](std::size_t n) {
            DeviceBuffer b = upload_16<T>(std::vector<float>(n, 1.0f));
            memory_.weights += b.bytes();
            return b;
        };
        if (c.attention_bias || c.attention_out_bias || c.mlp_bias)
            throw Error("synthetic models have no biases");
        embed_.allocate(static_cast<std::size_t>(c.vocab_size) * hidden * sizeof(T));
        fill_random(embed_.as<T>(), static_cast<std::size_t>(c.vocab_size) * hidden, seed++, 0.02f);
        memory_.weights += embed_.bytes();
        final_norm_ = ones(hidden);
        for (int i = 0; i < c.num_layers; ++i) {
            Layer L;
            L.input_norm = ones(hidden);
            L.post_norm = ones(hidden);
            L.qkv = random_linear(q + 2 * kv, hidden);
            L.o = random_linear(hidden, q);
            if (c.qk_norm) {
                L.q_norm = ones(c.head_dim);
                L.k_norm = ones(c.head_dim);
            }
            L.gate_up = random_linear(2 * inter, hidden);
            L.down = random_linear(hidden, inter);
            layers_.push_back(std::move(L));
        }
        lm_head_ = random_linear(c.vocab_size, hidden);
        make_rope_tables();
    }

    void check_fits() {
        std::size_t free_bytes = 0, total_bytes = 0;
        MTDESK_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        const std::string error =
            tier_fit_error(config_, options_.tier, static_cast<std::size_t>(options_.kv_tokens),
                           options_.max_batch, options_.kv_cache, options_.max_step_tokens,
                           free_bytes, total_bytes, device_name_);
        if (!error.empty()) throw Error(error);
    }

    std::vector<float> host(const TensorSet& ts, const std::string& name) {
        return ts.at(name).to_fp32();
    }

    DeviceBuffer norm(const TensorSet& ts, const std::string& name) {
        DeviceBuffer b = upload_16<T>(host(ts, name));
        memory_.weights += b.bytes();
        return b;
    }

    /// The rows of the named tensors (each [rows, k]) concatenated, as fp32.
    static std::vector<float> rows_fp32(const TensorSet& ts,
                                        const std::vector<std::string>& names) {
        std::vector<float> w;
        for (const std::string& n : names) {
            const std::vector<float> v = ts.at(n).to_fp32();
            w.insert(w.end(), v.begin(), v.end());
        }
        return w;
    }

    /// Rows of a gate|up matrix (v: n rows of equal length, the gate rows then the up rows)
    /// put in pairs, gate j and up j at rows 2j and 2j + 1 (GateUp::Pairs, what
    /// linear_swiglu() reads). Applies to weights, INT8 codes and scales and INT4 codes and
    /// group scales alike: quantisation is per row.
    template <typename E>
    static void pair_gate_up_rows(std::vector<E>& v, int n) {
        const std::size_t len = v.size() / static_cast<std::size_t>(n), half = n / 2;
        std::vector<E> out(v.size());
        for (std::size_t j = 0; j < half; ++j) {
            std::copy_n(v.begin() + j * len, len, out.begin() + 2 * j * len);
            std::copy_n(v.begin() + (half + j) * len, len, out.begin() + (2 * j + 1) * len);
        }
        v = std::move(out);
    }

    static QuantizedTensor paired(QuantizedTensor q) {
        std::visit(
            [](auto& t) {
                if constexpr (std::is_same_v<std::decay_t<decltype(t)>, QuantizedInt8>)
                    pair_gate_up_rows(t.q, t.n);
                else
                    pair_gate_up_rows(t.packed, t.n);
                pair_gate_up_rows(t.scales, t.n);
            },
            q);
        return q;
    }

    /// One device linear layer from the concatenated rows of the named tensors (each
    /// [rows, k]; Q/K/V and gate/up are fused this way; `gate_up_pairs` then orders gate and
    /// up rows in pairs, pair_gate_up_rows). 16-bit tiers whose checkpoint has the
    /// same dtype upload the stored bits as they are; INT tiers go through the on-disk cache of
    /// quantised weights (a second load reads the quantised tensor and never converts the
    /// checkpoint; the cache keeps the checkpoint's row order). `name` identifies the layer in
    /// the cache.
    DeviceLinear linear_of(const TensorSet& ts, const std::string& name,
                           const std::vector<std::string>& tensors, int k,
                           bool gate_up_pairs = false) {
        int n = 0;
        bool same_dtype = true;
        const WeightFormat format = weight_format(options_.tier);
        const DType want = format == WeightFormat::FP16 ? DType::F16 : DType::BF16;
        for (const std::string& t : tensors) {
            const TensorView& v = ts.at(t);
            n += static_cast<int>(v.numel() / k);
            same_dtype = same_dtype && v.dtype == want;
        }
        DeviceLinear d;
        if ((format == WeightFormat::BF16 || format == WeightFormat::FP16) && same_dtype) {
            std::vector<uint16_t> bits(static_cast<std::size_t>(n) * k);
            std::size_t at = 0;
            for (const std::string& t : tensors) {
                const TensorView& v = ts.at(t);
                std::memcpy(bits.data() + at, v.data, v.nbytes);
                at += v.nbytes / sizeof(uint16_t);
            }
            if (gate_up_pairs) pair_gate_up_rows(bits, n);
            d = DeviceLinear::upload_16bit(bits, n, k, format);
        } else if (cache_ && (format == WeightFormat::INT8 || format == WeightFormat::INT4)) {
            const QuantizedTensor q = cache_->load_or_make(cache_key_, name, [&]() {
                const std::vector<float> w = rows_fp32(ts, tensors);
                return format == WeightFormat::INT8 ? QuantizedTensor(quantize_int8(w, n, k))
                                                    : QuantizedTensor(quantize_int4(w, n, k));
            });
            d = DeviceLinear::upload(gate_up_pairs ? paired(q) : q);
        } else {
            std::vector<float> w = rows_fp32(ts, tensors);
            if (gate_up_pairs) pair_gate_up_rows(w, n);
            d = DeviceLinear::upload(w, n, k, format);
        }
        memory_.weights += d.device_bytes();
        return d;
    }

    DeviceBuffer bias_of(const TensorSet& ts, const std::vector<std::string>& names,
                         bool gate_up_pairs = false) {
        std::vector<float> b;
        for (const auto& n : names) {
            const std::vector<float> v = host(ts, n);
            b.insert(b.end(), v.begin(), v.end());
        }
        if (gate_up_pairs) pair_gate_up_rows(b, static_cast<int>(b.size()));
        DeviceBuffer d = upload_16<T>(b);
        memory_.weights += d.bytes();
        return d;
    }

    void load_weights(const ModelDir& dir, const LoadProgress& progress) {
        const TensorSet& ts = *dir.tensors;
        if (options_.tier == Tier::INT8 || options_.tier == Tier::INT4) {
            try {
                const std::vector<std::filesystem::path> files = ts.files();
                cache_key_ = QuantCache::model_key(files, options_.tier);
                cache_.emplace(options_.quant_cache_dir.empty()
                                   ? QuantCache::default_root()
                                   : std::filesystem::path(options_.quant_cache_dir));
            } catch (const std::exception&) {
                cache_.reset();  // no usable cache directory: quantise every time
            }
        }
        const ModelConfig& c = config_;
        const int hidden = c.hidden_size, inter = c.intermediate_size;
        const int steps = c.num_layers + 2;
        if (progress) progress(0, steps, "embeddings");
        const TensorView& embed = ts.at("model.embed_tokens.weight");
        const bool embed_as_is = (std::is_same_v<T, __nv_bfloat16> && embed.dtype == DType::BF16) ||
                                 (std::is_same_v<T, __half> && embed.dtype == DType::F16);
        if (embed_as_is) {
            embed_.allocate(embed.nbytes);
            MTDESK_CUDA_CHECK(
                cudaMemcpy(embed_.get(), embed.data, embed.nbytes, cudaMemcpyHostToDevice));
        } else {
            embed_ = upload_16<T>(embed.to_fp32());
        }
        memory_.weights += embed_.bytes();
        final_norm_ = norm(ts, "model.norm.weight");
        for (int i = 0; i < c.num_layers; ++i) {
            if (progress) progress(i + 1, steps, "layer " + std::to_string(i + 1));
            const std::string p = "model.layers." + std::to_string(i) + ".";
            Layer L;
            L.input_norm = norm(ts, p + "input_layernorm.weight");
            L.post_norm = norm(ts, p + "post_attention_layernorm.weight");
            L.qkv = linear_of(ts, p + "qkv",
                              {p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight",
                               p + "self_attn.v_proj.weight"},
                              hidden);
            L.o = linear_of(ts, p + "o_proj", {p + "self_attn.o_proj.weight"},
                            c.num_heads * c.head_dim);
            if (c.attention_bias)
                L.qkv_bias = bias_of(ts, {p + "self_attn.q_proj.bias", p + "self_attn.k_proj.bias",
                                          p + "self_attn.v_proj.bias"});
            if (c.attention_out_bias) L.o_bias = bias_of(ts, {p + "self_attn.o_proj.bias"});
            if (c.qk_norm) {
                const bool hy = ts.find(p + "self_attn.query_layernorm.weight") != nullptr;
                L.q_norm = norm(
                    ts, p + (hy ? "self_attn.query_layernorm.weight" : "self_attn.q_norm.weight"));
                L.k_norm = norm(
                    ts, p + (hy ? "self_attn.key_layernorm.weight" : "self_attn.k_norm.weight"));
            }
            L.gate_up =
                linear_of(ts, p + "gate_up", {p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"},
                          hidden, true);
            L.down = linear_of(ts, p + "down_proj", {p + "mlp.down_proj.weight"}, inter);
            if (c.mlp_bias) {
                L.gate_up_bias =
                    bias_of(ts, {p + "mlp.gate_proj.bias", p + "mlp.up_proj.bias"}, true);
                L.down_bias = bias_of(ts, {p + "mlp.down_proj.bias"});
            }
            layers_.push_back(std::move(L));
        }
        if (progress) progress(steps - 1, steps, "output layer");
        // Tied: the embedding, even when the checkpoint ships an lm_head.weight too (as the CPU
        // engine and transformers do). Cached under its own name: a cache filled before from
        // such an lm_head.weight is not reused.
        const bool tied = c.tie_word_embeddings;
        lm_head_ = tied ? linear_of(ts, "lm_head.tied", {"model.embed_tokens.weight"}, hidden)
                        : linear_of(ts, "lm_head", {"lm_head.weight"}, hidden);

        make_rope_tables();
        if (progress) progress(steps, steps, "done");
    }

    /// RoPE tables for every position, computed by the CPU reference code.
    void make_rope_tables() {
        const ModelConfig& c = config_;
        const cpu::RopeFrequencies freqs = cpu::rope_frequencies(c);
        const std::size_t half = c.head_dim / 2;
        std::vector<float> cs(c.max_position_embeddings * half), sn(cs.size());
        cpu::rope_cos_sin(freqs, 0, c.max_position_embeddings, cs.data(), sn.data());
        cos_.allocate(cs.size() * sizeof(float));
        sin_.allocate(sn.size() * sizeof(float));
        MTDESK_CUDA_CHECK(cudaMemcpy(cos_.get(), cs.data(), cs.size() * 4, cudaMemcpyHostToDevice));
        MTDESK_CUDA_CHECK(cudaMemcpy(sin_.get(), sn.data(), sn.size() * 4, cudaMemcpyHostToDevice));
        memory_.workspace += cos_.bytes() + sin_.bytes();
        attn_scale_ = static_cast<float>(std::pow(static_cast<double>(c.head_dim), -0.5));
    }

    /// The KV blocks (options_.kv_tokens positions, rounded up to whole blocks), laid out per
    /// layer as K | V, and for an int8 cache K scales | V scales after them (KvCacheLayer in
    /// ops_cuda.h), each part 256-byte aligned; and the split-KV attention's workspace, sized
    /// once here so that no step allocates.
    void allocate_kv() {
        const ModelConfig& c = config_;
        num_blocks_ =
            static_cast<int>((options_.kv_tokens + options_.block_size - 1) / options_.block_size);
        max_blocks_per_seq_ =
            std::min(num_blocks_,
                     (c.max_position_embeddings + options_.block_size - 1) / options_.block_size);
        const bool int8 = options_.kv_cache == KvCacheDtype::Int8;
        // One block more than the budget: the padding block of CUDA-graph decode steps.
        pad_block_ = num_blocks_;
        graphs_enabled_ = options_.cuda_graphs;
        const std::size_t vectors =  // head vectors per layer, of K or V
            static_cast<std::size_t>(num_blocks_ + 1) * options_.block_size * c.num_kv_heads;
        auto aligned = [](std::size_t b) { return (b + 255) / 256 * 256; };
        kv_part_bytes_ = aligned(vectors * c.head_dim * (int8 ? 1 : sizeof(T)));
        kv_scale_bytes_ = int8 ? aligned(vectors * sizeof(float)) : 0;
        const std::size_t bytes = 2 * (kv_part_bytes_ + kv_scale_bytes_) * c.num_layers;
        kv_.allocate(bytes);
        memory_.kv_cache = bytes;
        free_.clear();
        for (int b = num_blocks_ - 1; b >= 0; --b)
            free_.push_back(b);

        // Partials of split contexts: a row per sequence of a full decode batch, at least
        // kSplitKvRows (a step with more tokens runs its attention in pieces of that many),
        // partitions for the longest context a sequence can reach.
        const int max_context = max_blocks_per_seq_ * options_.block_size;
        split_kv_ = SplitKvWorkspace{};
        if (max_context > kSplitKvPartition) {
            split_kv_.rows = std::min(std::max(options_.max_batch, kSplitKvRows),
                                      std::max(1, options_.max_step_tokens));
            split_kv_.max_partitions = (max_context - 1) / kSplitKvPartition + 1;
            split_kv_.capacity = split_kv_workspace_floats(split_kv_.rows, c.num_heads, c.head_dim,
                                                           split_kv_.max_partitions);
            split_kv_buffer_.allocate(split_kv_.capacity * sizeof(float));
            memory_.workspace += split_kv_buffer_.bytes();
            split_kv_.data = split_kv_buffer_.as<float>();
        }
    }

    /// Layer l's part of the KV cache.
    KvCacheLayer kv_layer(std::size_t l) const {
        char* base = kv_.as<char>() + l * 2 * (kv_part_bytes_ + kv_scale_bytes_);
        KvCacheLayer kv;
        kv.k = base;
        kv.v = base + kv_part_bytes_;
        if (options_.kv_cache == KvCacheDtype::Int8) {
            kv.storage = KvCacheLayer::Storage::Int8;
            kv.k_scale = reinterpret_cast<float*>(base + 2 * kv_part_bytes_);
            kv.v_scale = reinterpret_cast<float*>(base + 2 * kv_part_bytes_ + kv_scale_bytes_);
        }
        return kv;
    }

    void allocate_workspace() {
        const ModelConfig& c = config_;
        const std::size_t tmax = options_.max_step_tokens;
        const std::size_t hidden = c.hidden_size, inter = c.intermediate_size;
        const std::size_t qkv_w =
            static_cast<std::size_t>(c.num_heads + 2 * c.num_kv_heads) * c.head_dim;
        const std::size_t attn_w = static_cast<std::size_t>(c.num_heads) * c.head_dim;
        auto alloc = [&](DeviceBuffer& b, std::size_t bytes) {
            b.allocate(bytes);
            memory_.workspace += bytes;
        };
        alloc(x_, tmax * hidden * sizeof(T));
        alloc(h_, tmax * hidden * sizeof(T));
        alloc(tmp_, tmax * std::max(hidden, attn_w) * sizeof(T));
        alloc(qkv_, tmax * qkv_w * sizeof(T));
        alloc(attn_, tmax * attn_w * sizeof(T));
        alloc(gu_, tmax * 2 * inter * sizeof(T));
        alloc(act_, tmax * inter * sizeof(T));
        max_seqs_ = std::max(1, options_.max_batch);
        max_logit_rows_ = max_seqs_;
        alloc(rows_, static_cast<std::size_t>(max_logit_rows_) * hidden * sizeof(T));
        alloc(logits_, static_cast<std::size_t>(max_logit_rows_) * c.vocab_size * sizeof(T));
        alloc(logits_f32_,
              static_cast<std::size_t>(max_logit_rows_) * c.vocab_size * sizeof(float));
        alloc(sample_scratch_,
              sample_scratch_floats(max_logit_rows_, c.vocab_size) * sizeof(float));
        meta_capacity_ = 4 * tmax + std::max<std::size_t>(tmax, max_logit_rows_) +
                         static_cast<std::size_t>(max_seqs_) * max_blocks_per_seq_;
        alloc(meta_, meta_capacity_ * sizeof(int32_t));
        MTDESK_CUDA_CHECK(cudaMallocHost(&handles_.pinned, meta_capacity_ * sizeof(int32_t)));
        pinned_ = handles_.pinned;
        handles_.pinned_device = device_address(handles_.pinned);
        const std::size_t ws = workspace_for_linears();
        alloc(linear_ws_, ws);
        // The GEMMs' workspace comes from us (gemm_cuda.h), so that cublasLt allocates nothing
        // later (memory stays flat while serving; CUDA graph capture needs it too).
        alloc(gemm_ws_, kGemmWorkspaceBytes);
        // The sampler's parameters and histories, sized for a full batch of full sequences.
        alloc(sample_meta_,
              static_cast<std::size_t>(max_logit_rows_) *
                      (sizeof(SampleParams) + sizeof(int32_t) * (c.max_position_embeddings + 1)) +
                  sizeof(int32_t));
        alloc(pending_ids_, static_cast<std::size_t>(max_logit_rows_) * sizeof(int32_t));
        alloc(o_row_, hidden * sizeof(T));
        // The sampler's host side (parameters and histories, then the ids), two slots.
        for (int i = 0; i < 2; ++i) {
            MTDESK_CUDA_CHECK(
                cudaMallocHost(&handles_.sample_pinned[i],
                               sample_meta_.bytes() + max_logit_rows_ * sizeof(int32_t)));
            handles_.sample_pinned_device[i] = device_address(handles_.sample_pinned[i]);
            MTDESK_CUDA_CHECK(
                cudaEventCreateWithFlags(&handles_.sample_done[i], cudaEventDisableTiming));
        }
        ctx_ = LinearContext(linear_ws_.get(), ws, gemm_ws_.get(), kGemmWorkspaceBytes);
    }

    /// Scratch of the linear layers: split-K partial sums for decode steps, and in INT tiers
    /// the dequantised weight for prefill GEMMs, at most kDequantScratchBytes (larger layers
    /// are dequantised and multiplied in tiles of that size).
    std::size_t workspace_for_linears() const {
        std::size_t ws = 0;
        // Split-K partials grow with m up to the GEMV limit; above it, the dequantised weight
        // up to the cap (the output layer never runs more than the batch's rows: no prefill).
        auto need = [&](const DeviceLinear& w, bool prefill) {
            for (int m = 1; m <= std::min(kGemvMaxM, options_.max_step_tokens); m *= 2)
                ws = std::max(ws, linear_workspace_bytes(w, m));
            if (prefill)
                ws = std::max(ws, std::min(linear_workspace_bytes(w, options_.max_step_tokens),
                                           kDequantScratchBytes));
        };
        need(lm_head_, false);
        for (const Layer& L : layers_)
            for (const DeviceLinear* w : {&L.qkv, &L.o, &L.gate_up, &L.down})
                need(*w, true);
        return std::max<std::size_t>(ws, 256);
    }

    /// Queues the decoder layers for a step of `total` tokens whose metadata is in meta_ (the
    /// layout forward() packs), up to the final norm into h_. `max_context` bounds every
    /// token's context (sizes the attention's grid); `prefill_chunks`: some sequence feeds
    /// several tokens, whose attention then runs on the tensor cores. Only kernel launches and
    /// cuBLAS calls on stream_: the whole sequence can be captured into a CUDA graph.
    void enqueue_layers(int total, int rows, int max_context, bool prefill_chunks) {
        const ModelConfig& c = config_;
        const int32_t* d_tokens = meta_.as<int32_t>();
        const int32_t* d_positions = d_tokens + total;
        const int32_t* d_slots = d_positions + total;
        const int32_t* d_token_seq = d_slots + total;
        const int32_t* d_tables = d_token_seq + total + rows;
        const int mb = max_blocks_per_seq_;
        const int hidden = c.hidden_size, inter = c.intermediate_size, hd = c.head_dim;
        const int heads = c.num_heads, kvh = c.num_kv_heads;
        const float eps = c.rms_norm_eps;
        T* x = x_.as<T>();
        T* h = h_.as<T>();
        T* qkv = qkv_.as<T>();
        T* attn = attn_.as<T>();
        T* tmp = tmp_.as<T>();
        T* gu = gu_.as<T>();
        T* act = act_.as<T>();
        const QkNorm norm = !c.qk_norm             ? QkNorm::None
                            : c.qk_norm_after_rope ? QkNorm::AfterRope
                                                   : QkNorm::BeforeRope;

        // Profiling (CudaEngineOptions::skip_ops): operations left out of the step.
        const auto run = [skip = options_.skip_ops](StepOp op) {
            return (skip & static_cast<unsigned>(op)) == 0;
        };
        embedding<T>(embed_.as<T>(), hidden, d_tokens, total, x, stream_,
                     pending_ids_.as<int32_t>());
        if (!layers_.empty())
            rms_norm<T>(x, layers_[0].input_norm.as<T>(), h, total, hidden, eps, stream_);
        for (std::size_t l = 0; l < layers_.size(); ++l) {
            Layer& L = layers_[l];
            const KvCacheLayer kv = kv_layer(l);
            if (run(StepOp::QkvProj)) linear<T>(L.qkv, h, qkv, total, ctx_, stream_);
            // A decode step's input step inside attention where its launch allows
            // (rope_paged_attention), else the two kernels.
            if (options_.fused_inputs && !prefill_chunks && run(StepOp::Rope) &&
                run(StepOp::Attention)) {
                rope_paged_attention<T>(qkv, L.qkv_bias.as<T>(), L.q_norm.as<T>(), L.k_norm.as<T>(),
                                        norm, eps, cos_.as<float>(), sin_.as<float>(), d_slots, kv,
                                        d_tables, mb, d_token_seq, d_positions, attn, total, heads,
                                        kvh, hd, options_.block_size, attn_scale_, max_context,
                                        split_kv_, stream_);
            } else {
                if (run(StepOp::Rope))
                    qkv_rope_cache<T>(qkv, L.qkv_bias.as<T>(), L.q_norm.as<T>(), L.k_norm.as<T>(),
                                      norm, eps, cos_.as<float>(), sin_.as<float>(), d_positions,
                                      d_slots, kv, total, heads, kvh, hd, stream_);
                if (run(StepOp::Attention))
                    paged_attention<T>(
                        qkv, static_cast<int64_t>(heads + 2 * kvh) * hd, kv, d_tables, mb,
                        d_token_seq, d_positions, attn, total, heads, kvh, hd, options_.block_size,
                        attn_scale_, max_context, split_kv_, stream_, AttentionSplit::Auto,
                        prefill_chunks ? AttentionPrefill::TensorCores : AttentionPrefill::Off);
            }
            // One row where the layers allow (norm_in_layer): the o layer's row stays in
            // o_row_, the gate/up layer's blocks make their input from it and the residual
            // (linear_swiglu_norm_in), and the down layer's residual add adds it first. This
            // saves the norm's kernel (one block) between the two GEMVs.
            if (total == 1 && run(StepOp::OProj) && run(StepOp::GateUp) && run(StepOp::Down) &&
                norm_in_layer(L)) {
                T* o_row = o_row_.as<T>();
                linear<T>(L.o, attn, o_row, 1, ctx_, stream_);
                linear_swiglu_norm_in<T>(L.gate_up, x, o_row, L.post_norm.as<T>(), eps, act, ctx_,
                                         stream_);
                const T* next = l + 1 < layers_.size() ? layers_[l + 1].input_norm.as<T>()
                                                       : final_norm_.as<T>();
                linear_add_rms_norm<T>(L.down, act, tmp, x, next, h, 1, eps, ctx_, stream_, o_row);
                continue;
            }
            // Output layers: the residual add and the next norm fused into the layer where its
            // path allows (linear_add_rms_norm); a bias comes between them otherwise.
            if (!run(StepOp::OProj)) {
                // left out (profiling)
            } else if (L.o_bias.get()) {
                linear<T>(L.o, attn, tmp, total, ctx_, stream_);
                add_bias<T>(tmp, L.o_bias.as<T>(), total, hidden, stream_);
                add_rms_norm<T>(x, tmp, L.post_norm.as<T>(), h, total, hidden, eps, stream_);
            } else {
                linear_add_rms_norm<T>(L.o, attn, tmp, x, L.post_norm.as<T>(), h, total, eps, ctx_,
                                       stream_);
            }
            // gate|up rows come in pairs (load_weights): SwiGLU fused into the layer.
            if (!run(StepOp::GateUp)) {
                // left out (profiling)
            } else if (L.gate_up_bias.get()) {
                linear<T>(L.gate_up, h, gu, total, ctx_, stream_);
                add_bias<T>(gu, L.gate_up_bias.as<T>(), total, 2 * inter, stream_);
                swiglu<T>(gu, act, total, inter, GateUp::Pairs, stream_);
            } else {
                linear_swiglu<T>(L.gate_up, h, gu, act, total, ctx_, stream_);
            }
            const T* next =
                l + 1 < layers_.size() ? layers_[l + 1].input_norm.as<T>() : final_norm_.as<T>();
            if (!run(StepOp::Down)) {
                // left out (profiling)
            } else if (L.down_bias.get()) {
                linear<T>(L.down, act, tmp, total, ctx_, stream_);
                add_bias<T>(tmp, L.down_bias.as<T>(), total, hidden, stream_);
                add_rms_norm<T>(x, tmp, next, h, total, hidden, eps, stream_);
            } else {
                linear_add_rms_norm<T>(L.down, act, tmp, x, next, h, total, eps, ctx_, stream_);
            }
        }
        if (layers_.empty()) rms_norm<T>(x, final_norm_.as<T>(), h, total, hidden, eps, stream_);
    }

    /// Whether a one-row step runs layer L's attention output layer into o_row_ and its residual
    /// add and norm inside the gate/up layer (linear_swiglu_norm_in): where the o layer is one
    /// kernel (else its split-K sum would still come between them, the norm's kernel saved there
    /// at no gain) and the gate/up layer takes it, without biases.
    bool norm_in_layer(Layer& L) {
        if (!options_.fused_inputs) return false;
        if (L.o_bias.get() || L.gate_up_bias.get() || L.down_bias.get()) return false;
        return linear_single_kernel(L.o, attn_.get(), 1, ctx_) &&
               linear_swiglu_norm_in_supported(L.gate_up, x_.get(), o_row_.get(), L.post_norm.get(),
                                               ctx_);
    }

    /// The batch bucket of a decode step of `n` sequences (decode_graph_batch), or 0 (eager)
    /// above the graph limit.
    int graph_bucket(int n) const {
        const int limit = std::min({max_seqs_, kMaxGraphBatch, options_.max_step_tokens});
        return n > limit ? 0 : decode_graph_batch(n, limit);
    }

    /// The context bound of a decode step (decode_graph_context), at most the longest context
    /// a sequence can have.
    int context_bucket(int context) const {
        return decode_graph_context(context, max_blocks_per_seq_ * options_.block_size);
    }

    /// Launches the graph of (batch, context), capturing it first if needed. False when capture
    /// is not possible (graphs are then switched off for this model).
    bool run_graph(int batch, int context) {
        const auto key = std::make_pair(batch, context);
        auto it = graphs_.find(key);
        if (it == graphs_.end()) {
            cudaGraph_t graph = nullptr;
            cudaGraphExec_t exec = nullptr;
            if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
                cudaGetLastError();
                graphs_enabled_ = false;
                return false;
            }
            try {
                enqueue_layers(batch, batch, context, false);
                lm_head_rows(h_.as<T>(), meta_.as<int32_t>() + 4 * static_cast<std::size_t>(batch),
                             batch);
            } catch (...) {
                cudaStreamEndCapture(stream_, &graph);
                if (graph) cudaGraphDestroy(graph);
                cudaGetLastError();
                graphs_enabled_ = false;
                return false;
            }
            const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
            const cudaError_t inst =
                end == cudaSuccess ? cudaGraphInstantiate(&exec, graph, 0) : end;
            if (graph) cudaGraphDestroy(graph);
            if (inst != cudaSuccess) {
                cudaGetLastError();
                graphs_enabled_ = false;
                return false;
            }
            it = graphs_.emplace(key, GraphExec(exec)).first;
        }
        MTDESK_CUDA_CHECK(cudaGraphLaunch(it->second.get(), stream_));
        return true;
    }

    void lm_head_rows(const T* h, const int32_t* rows, int n) {
        gather_rows<T>(h, rows, rows_.as<T>(), n, config_.hidden_size, stream_);
        if ((options_.skip_ops & static_cast<unsigned>(StepOp::LmHead)) == 0)
            linear<T>(lm_head_, rows_.as<T>(), logits_.as<T>(), n, ctx_, stream_);
    }

    void copy_logits(float* out, int n) {
        const int64_t count = static_cast<int64_t>(n) * config_.vocab_size;
        to_float<T>(logits_.as<T>(), logits_f32_.as<float>(), count, stream_);
        MTDESK_CUDA_CHECK(cudaMemcpyAsync(out, logits_f32_.get(), count * sizeof(float),
                                          cudaMemcpyDeviceToHost, stream_));
        MTDESK_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }

    ModelConfig config_;
    CudaEngineOptions options_;
    std::string device_name_;
    CudaMemory memory_;
    // Declared first among the device resources so that it is destroyed last.
    Handles handles_;
    cudaStream_t stream_ = nullptr;
    LinearContext ctx_;

    std::optional<QuantCache> cache_;
    std::string cache_key_;
    DeviceBuffer embed_, final_norm_, cos_, sin_;
    std::vector<Layer> layers_;
    DeviceLinear lm_head_;
    float attn_scale_ = 1.0f;

    DeviceBuffer kv_;
    std::size_t kv_part_bytes_ = 0, kv_scale_bytes_ = 0;  // one layer's K (or V), its scales
    DeviceBuffer split_kv_buffer_;
    SplitKvWorkspace split_kv_;
    int num_blocks_ = 0, max_blocks_per_seq_ = 0;
    std::vector<int> free_;

    DeviceBuffer x_, h_, tmp_, qkv_, attn_, gu_, act_, rows_, logits_, logits_f32_, sample_scratch_,
        meta_, linear_ws_, gemm_ws_, sample_meta_;
    /// The attention output layer's one row where its residual add and norm go into the MLP's
    /// layers (norm_in_layer()).
    DeviceBuffer o_row_;
    /// The last sample's ids on the device, which pending_token()s stand for.
    DeviceBuffer pending_ids_;
    int pending_rows_ = 0;  ///< rows of the last sample_async() (0: none yet)
    struct Unread {
        int slot = 0, rows = 0;
    };
    std::deque<Unread> unread_;  ///< samples queued and not read yet, oldest first
    int next_slot_ = 0;
    int32_t* pinned_ = nullptr;
    bool pinned_in_flight_ = false;  ///< handles_.pinned_copied marks a copy not yet waited for
    std::size_t meta_capacity_ = 0;
    int max_seqs_ = 1, max_logit_rows_ = 1, logit_rows_ = 0;
    bool logits_on_host_ = false;
    // CUDA graphs of decode steps by (batch bucket, context bucket), and the KV block that
    // padding tokens write to (never handed to a sequence).
    bool graphs_enabled_ = false;
    std::map<std::pair<int, int>, GraphExec> graphs_;
    int pad_block_ = 0;
    std::vector<float> all_logits_host_;
};

}  // namespace

std::unique_ptr<CudaModel> CudaModel::load(const ModelDir& dir, const CudaEngineOptions& options,
                                           const LoadProgress& progress) {
    if (!dir.tensors) throw Error("CudaModel::load: model directory has no tensors");
    const ModelConfig& c = dir.config;
    if (c.num_heads <= 0 || c.num_kv_heads <= 0 || c.num_heads % c.num_kv_heads != 0)
        throw Error(
            "CudaModel::load: num_attention_heads must be a multiple of "
            "num_key_value_heads");
    if (options.block_size <= 0 || options.kv_tokens <= 0 || options.max_batch <= 0 ||
        options.max_step_tokens <= 0)
        throw Error(
            "CUDA engine options: block size, KV tokens, batch and step tokens must be "
            "positive");
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        throw UnsupportedError(dir.path.string(), "no CUDA device is available");
    }
    if (options.device < 0 || options.device >= count)
        throw Error("CUDA device " + std::to_string(options.device) + " does not exist (" +
                    std::to_string(count) + " present)");
    // FP16 tier, and GPUs before Ampere (no bf16 arithmetic): fp16 activations.
    cudaDeviceProp prop{};
    MTDESK_CUDA_CHECK(cudaGetDeviceProperties(&prop, options.device));
    const bool fp16 = options.tier == Tier::FP16 || prop.major < 8;
    if (options.tier == Tier::BF16 && prop.major < 8)
        throw UnsupportedError(dir.path.string(), std::string(prop.name) +
                                                      " has no bf16 arithmetic; use the fp16, "
                                                      "int8 or int4 tier");
    if (fp16) return std::make_unique<CudaModelImpl<__half>>(dir, options, progress);
    return std::make_unique<CudaModelImpl<__nv_bfloat16>>(dir, options, progress);
}

std::unique_ptr<CudaModel> CudaModel::synthetic(const ModelConfig& config,
                                                const CudaEngineOptions& options, uint64_t seed) {
    const std::string what = "synthetic model";
    if (config.num_heads <= 0 || config.num_kv_heads <= 0 ||
        config.num_heads % config.num_kv_heads != 0 || config.hidden_size <= 0 ||
        config.intermediate_size <= 0 || config.vocab_size <= 0 || config.head_dim <= 0)
        throw Error("CudaModel::synthetic: incomplete shapes");
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        throw UnsupportedError(what, "no CUDA device is available");
    }
    if (options.device < 0 || options.device >= count)
        throw Error("CUDA device " + std::to_string(options.device) + " does not exist (" +
                    std::to_string(count) + " present)");
    cudaDeviceProp prop{};
    MTDESK_CUDA_CHECK(cudaGetDeviceProperties(&prop, options.device));
    if (options.tier == Tier::FP16 || prop.major < 8)
        return std::make_unique<CudaModelImpl<__half>>(config, options, seed);
    return std::make_unique<CudaModelImpl<__nv_bfloat16>>(config, options, seed);
}

}  // namespace mtdesk::cuda
