#include "engine_options.h"

#include <cstdio>
#include <string>
#include <vector>

#include "cli_commands.h"
#include "mtdesk/cpu/cpu_model.h"
#include "mtdesk/cuda/cuda_engine.h"
#include "mtdesk/error.h"
#include "mtdesk/quant/tiers.h"
#include "mtdesk/tokenizer/chat_template.h"

namespace mtdesk::app {

QString default_device() {
    const QString env = qEnvironmentVariable("MTDESK_DEVICE");
    return env.isEmpty() ? QStringLiteral("auto") : env;
}

QList<QCommandLineOption> engine_options() {
    return {
        {QStringLiteral("device"),
         QStringLiteral("auto, cpu or cuda[:N]. auto: the first GPU when there is one (and this "
                        "build has the CUDA engine), else the CPU (default: $MTDESK_DEVICE, "
                        "else auto). On a GPU every waiting segment is translated in batches."),
         QStringLiteral("DEVICE"), default_device()},
        {QStringLiteral("tier"),
         QStringLiteral("Precision tier. GPU: bf16, fp16, int8 or int4 (default bf16). CPU: "
                        "fp32, int8 or int4 (default: fp32 when it fits in the memory "
                        "available, else int8, else int4)."),
         QStringLiteral("TIER"), QStringLiteral("bf16")},
        {QStringLiteral("kv-tokens"),
         QStringLiteral("GPU KV cache budget, in positions over all sequences."),
         QStringLiteral("N"), QStringLiteral("16384")},
        {QStringLiteral("kv-cache"),
         QStringLiteral("GPU KV cache type: 16bit, or int8 (half the memory per position, so "
                        "about twice the positions in the same budget of memory)."),
         QStringLiteral("TYPE"), QStringLiteral("16bit")},
        {QStringLiteral("max-batch"), QStringLiteral("GPU: most sequences decoded at once."),
         QStringLiteral("N"), QStringLiteral("64")},
    };
}

std::unique_ptr<TranslationEngine> open_gpu_engine(const QCommandLineParser& p,
                                                   const std::string& model_dir,
                                                   const char* cpu_only) {
    const QString device = p.value(QStringLiteral("device"));
    // Name where the value came from: the option, or the environment's default.
    const std::string where =
        (p.isSet(QStringLiteral("device")) ? "--device " : "MTDESK_DEVICE=") + device.toStdString();
    const auto kv_cache = parse_kv_cache_dtype(p.value(QStringLiteral("kv-cache")).toStdString());
    if (!kv_cache)
        throw UsageError("--kv-cache must be 16bit or int8, got '" +
                         p.value(QStringLiteral("kv-cache")).toStdString() + "'");
    const long long kv_tokens = whole_number_option(p, "kv-tokens", 1, kMaxKvTokensOption);
    const int max_batch = static_cast<int>(whole_number_option(p, "max-batch", 1, kMaxBatchOption));
    // The CPU engine has none of these (one fp32 KV cache per request, no batching): say so
    // rather than drop options the user typed without a word. Its --tier is checked here.
    auto cpu = [&p]() -> std::unique_ptr<TranslationEngine> {
        const CpuLoadOptions options = cpu_load_options(p);  // throws for a bad --tier
        std::string ignored;
        if (p.isSet(QStringLiteral("tier")) && !options.tier)
            ignored = "--tier " + p.value(QStringLiteral("tier")).toStdString();
        for (const char* name : {"kv-cache", "kv-tokens", "max-batch"}) {
            if (p.isSet(QString::fromLatin1(name)))
                ignored += (ignored.empty() ? "--" : ", --") + std::string(name);
        }
        if (!ignored.empty())
            std::fprintf(stderr, "note: the CPU engine runs this; %s %s to the GPU engine only\n",
                         ignored.c_str(),
                         ignored.find(',') == std::string::npos ? "applies" : "apply");
        return nullptr;
    };
    bool ok = false;
    if (device == QLatin1String("cpu")) return cpu();
    int index = 0;
    if (device.startsWith(QLatin1String("cuda"))) {
        const QString n = device.mid(4);
        ok = true;
        if (n.startsWith(QLatin1Char(':'))) index = n.mid(1).toInt(&ok);
        if (!ok || (!n.isEmpty() && !n.startsWith(QLatin1Char(':'))))
            throw UsageError(where + ": the device must be auto, cpu, cuda or cuda:N");
    } else if (device != QLatin1String("auto")) {
        throw UsageError(where + ": the device must be auto, cpu, cuda or cuda:N");
    }
    const std::vector<cuda::DeviceInfo> gpus = cuda::devices();
    if (gpus.empty()) {
        if (device == QLatin1String("auto")) return cpu();
#ifdef MTDESK_HAVE_CUDA
        throw Error(where +
                    ": no CUDA device found (no NVIDIA GPU, or its driver is not "
                    "loaded); use --device cpu");
#else
        throw Error(where + ": this mtdesk was built without CUDA; use --device cpu");
#endif
    }
    if (index < 0 || index >= static_cast<int>(gpus.size()))
        throw Error(where + ": there are " + std::to_string(gpus.size()) +
                    " GPUs (cuda:0 .. cuda:" + std::to_string(gpus.size() - 1) + ")");
    if (cpu_only)
        throw UsageError(std::string(cpu_only) + " applies to the CPU engine; add --device cpu");
    const std::string tier_value = p.value(QStringLiteral("tier")).toStdString();
    const auto tier = parse_tier(tier_value);
    if (!tier)
        throw UsageError("--tier " + tier_value + ": the GPU tiers are bf16, fp16, int8 and int4" +
                         (parse_cpu_tier(tier_value) ? " (" + tier_value + " is a CPU tier)" : ""));
    cuda::CudaEngineOptions o;
    o.device = index;
    o.tier = *tier;
    o.kv_cache = *kv_cache;
    o.kv_tokens = kv_tokens;
    o.max_batch = max_batch;
    return cuda::make_cuda_engine(model_dir, o);
}

CpuLoadOptions cpu_load_options(const QCommandLineParser& p) {
    CpuLoadOptions o;
    if (!p.isSet(QStringLiteral("tier"))) return o;
    const std::string value = p.value(QStringLiteral("tier")).toStdString();
    o.tier = parse_cpu_tier(value);
    if (!o.tier && !parse_tier(value))
        throw UsageError("--tier " + value +
                         ": the tiers are fp32, int8 and int4 on the CPU, bf16, "
                         "fp16, int8 and int4 on a GPU");
    return o;
}

std::unique_ptr<Translator> open_cpu_translator(const QCommandLineParser& p,
                                                const std::string& model_dir,
                                                std::optional<PromptStyle> style) {
    const CpuLoadOptions options = cpu_load_options(p);
    auto translator = Translator::open_cpu(model_dir, style, options);
    const auto* model = dynamic_cast<const CpuModel*>(&translator->model());
    if (!options.tier && model && model->tier() != CpuTier::FP32) {
        const MemoryEstimate fp32 = estimate_cpu_memory(model->config(), CpuTier::FP32);
        std::fprintf(stderr,
                     "note: the model needs %.1f GiB in fp32, more than this machine has "
                     "available; it runs in the CPU's %s tier (--tier fp32 to insist)\n",
                     static_cast<double>(fp32.total()) / (1 << 30),
                     std::string(cpu_tier_name(model->tier())).c_str());
    }
    return translator;
}

void note_assumed_chat_template(const Translator* translator, const std::string& model_dir) {
    if (!translator || !translator->chat_template().assumed) return;
    std::fprintf(stderr,
                 "note: %s has no chat template (none in tokenizer_config.json, no "
                 "chat_template.jinja); the %s template is assumed\n",
                 model_dir.c_str(),
                 std::string(chat_template_name(translator->chat_template().kind)).c_str());
}

}  // namespace mtdesk::app
