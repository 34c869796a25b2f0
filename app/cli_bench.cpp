// `mtdesk bench`: throughput and latency of the GPU engine on a model — decode tokens/s at
// several batch sizes, time to first token, prefill tokens/s, load time, and VRAM against the
// tier's estimate. Figures, not pass/fail (docs/benchmarks.md).

#include <QCommandLineParser>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_commands.h"
#include "demo_model.h"
#include "engine_options.h"
#include "mtdesk/cuda/cuda_engine.h"
#include "mtdesk/error.h"
#include "mtdesk/model/config.h"
#include "mtdesk/model/model_dir.h"
#include "mtdesk/quant/tiers.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/prompt.h"
#include "mtdesk/translate/translation_engine.h"
#include "mtdesk/translate/translator.h"
#include "output_path.h"

namespace mtdesk::app {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

/// Runs `jobs` at once and waits for all of them; returns their outcomes in order.
std::vector<JobOutcome> run_all(TranslationEngine& engine,
                                const std::vector<TranslationJob>& jobs) {
    std::mutex m;
    std::condition_variable cv;
    std::vector<JobOutcome> out(jobs.size());
    std::size_t done = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        JobCallbacks cb;
        cb.on_done = [&, i](const JobOutcome& o) {
            std::lock_guard lock(m);
            out[i] = o;
            ++done;
            cv.notify_all();
        };
        engine.submit(jobs[i], std::move(cb));
    }
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return done == jobs.size(); });
    for (const JobOutcome& o : out)
        if (o.status != JobOutcome::Status::Done) throw Error("bench job failed: " + o.error);
    return out;
}

std::vector<int> int_list(const QString& text, const char* option) {
    std::vector<int> out;
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int v = part.toInt(&ok);
        if (!ok || v < 1)
            throw UsageError(std::string("--") + option + " needs positive whole numbers, got '" +
                             text.toStdString() + "'");
        out.push_back(v);
    }
    return out;
}

}  // namespace

int cmd_bench(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Measures the GPU engine on a model: load time; for each batch size, that many "
        "translation requests at once (greedy, a fixed number of new tokens) with decode "
        "tokens/s and time to first token; prefill tokens/s on a long segment; VRAM used next to "
        "the tier's estimate."));
    p.addHelpOption();
    p.addOptions({
        {{QStringLiteral("m"), QStringLiteral("model")},
         QStringLiteral("Model directory (default: the bundled demo model)."),
         QStringLiteral("DIR")},
        {QStringLiteral("tier"), QStringLiteral("bf16, fp16, int8 or int4."),
         QStringLiteral("TIER"), QStringLiteral("bf16")},
        {QStringLiteral("device"), QStringLiteral("The GPU: cuda:N (or N)."),
         QStringLiteral("DEVICE"), QStringLiteral("cuda:0")},
        {QStringLiteral("batch"), QStringLiteral("Batch sizes, comma-separated."),
         QStringLiteral("LIST"), QStringLiteral("1,8,64")},
        {QStringLiteral("new-tokens"), QStringLiteral("Tokens generated per request."),
         QStringLiteral("N"), QStringLiteral("128")},
        {QStringLiteral("kv-tokens"), QStringLiteral("KV cache budget (positions)."),
         QStringLiteral("N"), QStringLiteral("65536")},
        {QStringLiteral("kv-cache"), QStringLiteral("KV cache type: 16bit or int8."),
         QStringLiteral("TYPE"), QStringLiteral("16bit")},
        {QStringLiteral("synthetic"),
         QStringLiteral("Instead of --model's weights, random weights of a published model's "
                        "shapes, made on the GPU: hy-mt-7b or hy-mt1.5-1.8b (the bundled demo "
                        "model's tokenizer builds the prompts)."),
         QStringLiteral("NAME")},
        {QStringLiteral("sampling"),
         QStringLiteral("greedy (argmax, no penalty) or hy-mt (what the app runs for Hunyuan-MT "
                        "and HY-MT1.5: repetition penalty 1.05, temperature 0.7, top-k 20, "
                        "top-p 0.6, a draw)."),
         QStringLiteral("MODE"), QStringLiteral("greedy")},
        {QStringLiteral("no-cuda-graphs"),
         QStringLiteral("Launch decode steps kernel by kernel instead of replaying CUDA graphs.")},
        {QStringLiteral("no-pdl"),
         QStringLiteral("Launch kernels without programmatic dependent launch (sm_90+).")},
        {QStringLiteral("no-overlap"),
         QStringLiteral("Read each step's tokens before queuing the next step (the host's "
                        "work between steps then leaves the GPU idle).")},
        {QStringLiteral("no-fused-inputs"),
         QStringLiteral("Run the residual add and RMSNorm after attention and the attention "
                        "input step (Q/K norm, RoPE, KV cache write) of small decode steps as "
                        "kernels of their own instead of inside the kernels that read them (the "
                        "same results).")},
        {QStringLiteral("skip"),
         QStringLiteral("Profiling only: leave these operations out of every step (comma-"
                        "separated: qkv, rope, attention, o, gate_up, down, lm_head), to see "
                        "what each costs; the output text is then meaningless."),
         QStringLiteral("OPS")},
        {QStringLiteral("json"),
         QStringLiteral("Also write the figures here as JSON (a new file; - for standard output)."),
         QStringLiteral("FILE")},
    });
    if (!p.parse(args)) {
        std::fprintf(stderr, "mtdesk bench: %s\n", qPrintable(p.errorText()));
        return 2;
    }
    if (p.isSet(QStringLiteral("help"))) {
        std::fputs(qPrintable(command_help(p, QStringLiteral("bench"))), stdout);
        return 0;
    }
    const std::string model_dir = p.isSet(QStringLiteral("model"))
                                      ? p.value(QStringLiteral("model")).toStdString()
                                      : default_model_dir();
    const auto tier = parse_tier(p.value(QStringLiteral("tier")).toStdString());
    if (!tier) throw UsageError("--tier must be bf16, fp16, int8 or int4");
    const auto kv_cache = parse_kv_cache_dtype(p.value(QStringLiteral("kv-cache")).toStdString());
    if (!kv_cache) throw UsageError("--kv-cache must be 16bit or int8");
    const std::vector<int> batches = int_list(p.value(QStringLiteral("batch")), "batch");
    const std::string sampling_mode = p.value(QStringLiteral("sampling")).toStdString();
    if (sampling_mode != "greedy" && sampling_mode != "hy-mt")
        throw UsageError("--sampling must be greedy or hy-mt");
    SamplingParams sampling = sampling_mode == "greedy" ? SamplingParams::greedy_decoding()
                                                        : SamplingParams::hunyuan_mt();
    sampling.seed = 1;
    const int new_tokens = int_list(p.value(QStringLiteral("new-tokens")), "new-tokens").at(0);
    int max_batch = 1;
    for (int b : batches)
        max_batch = std::max(max_batch, b);

    cuda::CudaEngineOptions o;
    QString device = p.value(QStringLiteral("device"));
    if (device == QLatin1String("cuda")) device = QStringLiteral("0");
    if (device.startsWith(QLatin1String("cuda:"))) device = device.mid(5);
    bool device_ok = false;
    o.device = device.toInt(&device_ok);
    if (!device_ok || o.device < 0) throw UsageError("--device must be cuda, cuda:N or N");
    o.tier = *tier;
    o.kv_cache = *kv_cache;
    o.kv_tokens = whole_number_option(p, "kv-tokens", 1, kMaxKvTokensOption);
    o.max_batch = max_batch;
    o.cuda_graphs = !p.isSet(QStringLiteral("no-cuda-graphs"));
    o.programmatic_launch = !p.isSet(QStringLiteral("no-pdl"));
    o.overlap_steps = !p.isSet(QStringLiteral("no-overlap"));
    o.fused_inputs = !p.isSet(QStringLiteral("no-fused-inputs"));
    try {
        o.skip_ops = cuda::parse_step_ops(p.value(QStringLiteral("skip")).toStdString());
    } catch (const Error& e) {  // a wrong name is the command line's fault
        throw UsageError(std::string("--skip: ") + e.what());
    }
    ModelConfig config = ModelDir::open(model_dir).config;
    const std::string synthetic = p.value(QStringLiteral("synthetic")).toStdString();
    if (!synthetic.empty()) {
        const std::optional<ModelConfig> shapes = published_shapes(synthetic, config);
        if (!shapes) throw UsageError("--synthetic must be hy-mt-7b or hy-mt1.5-1.8b");
        config = *shapes;
    }
    // The practical bandwidth limit, measured in this run before anything is loaded.
    // --json FILE: a new file (checked before the run); --json -: the JSON alone on standard
    // output, the readable lines on standard error.
    const std::string json_path =
        p.isSet(QStringLiteral("json")) ? p.value(QStringLiteral("json")).toStdString() : "";
    if (!json_path.empty() && json_path != "-" && std::filesystem::exists(json_path))
        throw FileError(json_path, "exists; mtdesk bench writes its figures to a new file");
    std::FILE* const text_out = json_path == "-" ? stderr : stdout;
    // Each figure as it is measured, also into a pipe (stdout is fully buffered there).
    if (text_out == stdout) std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
    // Every option is checked by now; then the device.
    const std::vector<cuda::DeviceInfo> gpus = cuda::devices();
#ifdef MTDESK_HAVE_CUDA
    if (gpus.empty())
        throw Error(
            "bench measures the GPU engine, and no CUDA device was found (no NVIDIA "
            "GPU, or its driver is not loaded)");
#else
    throw Error("bench measures the GPU engine; this mtdesk was built without CUDA");
#endif
    if (o.device >= static_cast<int>(gpus.size()))
        throw Error("--device: there are " + std::to_string(gpus.size()) +
                    " GPUs (cuda:0 .. cuda:" + std::to_string(gpus.size() - 1) + ")");
    const double copy_bw = cuda::copy_bandwidth(o.device);
    const MemoryEstimate estimate =
        estimate_memory(config, *tier, static_cast<std::size_t>(o.kv_tokens), max_batch, *kv_cache,
                        o.max_step_tokens);
    // The device's memory in use, sampled before loading (this process's CUDA context exists
    // by now) and after each phase: the peak's growth is what loading and running took.
    auto device_used = [&]() -> int64_t {
        const std::optional<cuda::DeviceInfo> d = cuda::device_info(o.device);
        return d ? d->total_bytes - d->free_bytes : 0;
    };
    const int64_t baseline = device_used();
    int64_t peak = baseline;
    auto sample_used = [&] { peak = std::max(peak, device_used()); };

    auto t0 = Clock::now();
    auto engine = synthetic.empty() ? cuda::make_cuda_engine(model_dir, o)
                                    : cuda::make_synthetic_cuda_engine(model_dir, config, o);
    const double load_s = seconds_since(t0);
    const EngineStatistics loaded = engine->statistics();
    sample_used();
    nlohmann::json report = {{"model", synthetic.empty() ? model_dir : "synthetic " + synthetic},
                             {"parameters", config.parameter_count()},
                             {"cuda_graphs", o.cuda_graphs},
                             {"programmatic_launch", o.programmatic_launch},
                             {"overlap_steps", o.overlap_steps},
                             {"fused_inputs", o.fused_inputs},
                             {"skipped_ops", p.value(QStringLiteral("skip")).toStdString()},
                             {"copy_bandwidth_bytes_per_s", copy_bw},
                             {"tier", tier_name(*tier)},
                             {"device", loaded.device},
                             {"load_s", load_s},
                             {"kv_tokens", o.kv_tokens},
                             {"kv_cache", std::string(kv_cache_dtype_name(*kv_cache))},
                             {"estimate_bytes", estimate.total()},
                             {"vram_own_bytes", loaded.vram_own_bytes.value_or(0)},
                             {"vram_used_bytes", loaded.vram_used_bytes.value_or(0)}};
    fmt::print(text_out,
               "{} {} on {} (copy bandwidth {:.0f} GB/s): loaded in {:.1f} s; mtdesk holds "
               "{:.0f} MiB (estimate {:.0f} MiB)\n",
               synthetic.empty() ? model_dir : "synthetic " + synthetic, tier_name(*tier),
               loaded.device, copy_bw / 1e9, load_s, loaded.vram_own_bytes.value_or(0) / 1048576.0,
               estimate.total() / 1048576.0);
    if (o.skip_ops != 0)
        fmt::print(text_out,
                   "profiling: {} left out of every step (the output text is meaningless)\n",
                   p.value(QStringLiteral("skip")).toStdString());

    // Requests: two English sentences (51 tokens), so the output bound (4 × source + 32) exceeds
    // new_tokens; generation stops at new_tokens (a random-weight model rarely picks a stop).
    auto make_job = [&](const std::string& text, int max_new) {
        TranslationJob j;
        j.request.text = text;
        j.request.source = find_language("en");
        j.request.target = find_language("de");
        j.options.sampling = sampling;
        j.options.max_new_tokens = max_new;
        j.options.casing_guard = false;
        return j;
    };
    // 64 prompt tokens with the bundled tokenizer and the HY-MT1.5 prompt (the TTFT
    // figure is for a 64-token prompt); tools/bench/hf_generate_bench.py sends the same text.
    const std::string sentence =
        "Save the document before closing the window, otherwise the changes you made since the "
        "last time you saved it will be lost and cannot be restored from the backup folder. Ask "
        "your administrator if you are not sure where the backup folder is.";
    run_all(*engine, {make_job(sentence, 8)});  // warm-up

    nlohmann::json rows = nlohmann::json::array();
    for (int b : batches) {
        std::vector<TranslationJob> jobs(b, make_job(sentence, new_tokens));
        t0 = Clock::now();
        const std::vector<JobOutcome> out = run_all(*engine, jobs);
        const double wall = seconds_since(t0);
        sample_used();
        long tokens = 0;
        double ttft = 0, decode_rate = 0, prompt = 0;
        for (const JobOutcome& r : out) {
            tokens += r.generated_tokens;
            ttft += r.ttft_ms / b;
            prompt += static_cast<double>(r.prompt_tokens) / b;
            if (r.generated_tokens > 1 && r.total_ms > r.ttft_ms)
                decode_rate += (r.generated_tokens - 1) / ((r.total_ms - r.ttft_ms) / 1000.0) / b;
        }
        // A decode step reads every weight once (not the embedding table: only its b rows)
        // and each sequence's keys and values (on average prompt + new_tokens / 2 positions).
        const double step_s = decode_rate > 0 ? 1.0 / decode_rate : 0;
        const double weight_bytes =
            static_cast<double>(estimate.weights) - 2.0 * config.vocab_size * config.hidden_size;
        const double kv_bytes = static_cast<double>(b) * (prompt + new_tokens / 2.0) *
                                kv_cache_bytes(config, 1, *kv_cache);
        const double limit_s = (weight_bytes + kv_bytes) / copy_bw;
        const double fraction = step_s > 0 ? limit_s / step_s : 0;
        fmt::print(
            text_out,
            "batch {:3d}: {:6.0f} generated tokens/s in all ({} tokens in {:.2f} s), "
            "{:6.1f} tokens/s per sequence, TTFT {:.1f} ms ({:.0f}-token prompt), decode step "
            "{:.2f} ms = {:.0f} % of the bandwidth limit\n",
            b, tokens / wall, tokens, wall, decode_rate, ttft, prompt, step_s * 1e3,
            100 * fraction);
        rows.push_back({{"batch", b},
                        {"tokens", tokens},
                        {"wall_s", wall},
                        {"tokens_per_s", tokens / wall},
                        {"per_sequence_tokens_per_s", decode_rate},
                        {"ttft_ms", ttft},
                        {"prompt_tokens", prompt},
                        {"decode_step_ms", step_s * 1e3},
                        {"bytes_read_per_step", weight_bytes + kv_bytes},
                        {"bandwidth_limit_fraction", fraction}});
    }
    report["decode"] = rows;
    report["sampling"] = sampling_mode;

    // Prefill: one sequence of about 2,048 prompt tokens (prefilled in chunks of the step
    // budget), one new token. A translation job that long would be cut into pieces of the
    // source budget (1,024 tokens), and its first token would then come after the first piece
    // only; sent as a chat of the same prompt text it is one sequence, as in the transformers
    // driver.
    const int sentence_tokens =
        static_cast<int>(engine->translator()->tokenizer().encode(sentence).size());
    std::string long_text;
    for (int t = 0; t < 2048; t += sentence_tokens + 1)
        long_text += sentence + " ";
    TranslationJob prefill_job = make_job(long_text, 1);
    prefill_job.request.chat = ChatMessages{
        "", build_translation_prompt(prefill_job.request, engine->translator()->style())};
    const JobOutcome pre = run_all(*engine, {prefill_job}).at(0);
    const double prefill_rate = pre.prompt_tokens / (pre.ttft_ms / 1000.0);
    fmt::print(text_out,
               "prefill: {} prompt tokens, first token after {:.1f} ms ({:.0f} tokens/s)\n",
               pre.prompt_tokens, pre.ttft_ms, prefill_rate);
    report["prefill"] = {{"prompt_tokens", pre.prompt_tokens},
                         {"ttft_ms", pre.ttft_ms},
                         {"tokens_per_s", prefill_rate}};
    sample_used();
    const EngineStatistics after = engine->statistics();
    report["vram_used_after_bytes"] = after.vram_used_bytes.value_or(0);
    report["vram_baseline_bytes"] = baseline;
    report["vram_peak_growth_bytes"] = peak - baseline;  // sampled after each phase
    fmt::print(
        text_out,
        "VRAM: mtdesk allocated {:.0f} MiB (estimate {:.0f} MiB); the device's use grew by {:.0f} "
        "MiB at its peak (from {:.0f} MiB with this process's CUDA context)\n",
        after.vram_own_bytes.value_or(0) / 1048576.0, estimate.total() / 1048576.0,
        (peak - baseline) / 1048576.0, baseline / 1048576.0);
    if (!json_path.empty()) {
        if (json_path == "-")
            fmt::print("{}\n", report.dump(1));
        else
            write_new_file_atomically(QString::fromStdString(json_path),
                                      QByteArray::fromStdString(report.dump(1) + "\n"));
    }
    return 0;
}

}  // namespace mtdesk::app
