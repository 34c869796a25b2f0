#include "engine_options.h"

#include <cstdio>
#include <vector>

#include "cli_commands.h"
#include "mtdesk/cuda/cuda_engine.h"
#include "mtdesk/error.h"
#include "mtdesk/quant/tiers.h"

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
        {QStringLiteral("tier"), QStringLiteral("GPU precision tier: bf16, fp16, int8 or int4."),
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
    const auto tier = parse_tier(p.value(QStringLiteral("tier")).toStdString());
    if (!tier) throw Error("--tier must be bf16, fp16, int8 or int4");
    const auto kv_cache = parse_kv_cache_dtype(p.value(QStringLiteral("kv-cache")).toStdString());
    if (!kv_cache) throw Error("--kv-cache must be 16bit or int8");
    const long long kv_tokens = whole_number_option(p, "kv-tokens", 1, kMaxKvTokensOption);
    const int max_batch = static_cast<int>(whole_number_option(p, "max-batch", 1, kMaxBatchOption));
    // The CPU engine has none of these (it computes in fp32, one KV cache per request): say so
    // rather than drop options the user typed without a word.
    auto cpu = [&p]() -> std::unique_ptr<TranslationEngine> {
        std::string ignored;
        for (const char* name : {"tier", "kv-cache", "kv-tokens", "max-batch"}) {
            if (p.isSet(QString::fromLatin1(name)))
                ignored += (ignored.empty() ? "--" : ", --") + std::string(name);
        }
        if (!ignored.empty())
            std::fprintf(stderr,
                         "note: the CPU engine runs this; %s apply to the GPU engine only\n",
                         ignored.c_str());
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
            throw Error(where + ": the device must be auto, cpu, cuda or cuda:N");
    } else if (device != QLatin1String("auto")) {
        throw Error(where + ": the device must be auto, cpu, cuda or cuda:N");
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
        throw Error(std::string(cpu_only) + " applies to the CPU engine; add --device cpu");
    cuda::CudaEngineOptions o;
    o.device = index;
    o.tier = *tier;
    o.kv_cache = *kv_cache;
    o.kv_tokens = kv_tokens;
    o.max_batch = max_batch;
    return cuda::make_cuda_engine(model_dir, o);
}

}  // namespace mtdesk::app
