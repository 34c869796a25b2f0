#pragma once
// The command line's engine choice, shared by `mtdesk translate` and `mtdesk serve`: --device,
// --tier, --kv-tokens, --kv-cache and --max-batch, and opening the GPU engine they ask for.

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QList>
#include <QString>

#include <memory>
#include <optional>
#include <string>

#include "mtdesk/translate/translation_engine.h"
#include "mtdesk/translate/translator.h"

namespace mtdesk::app {

/// The largest --max-batch (and `models inspect --batch`): far above what fills a GPU, low
/// enough that per-sequence buffers and the memory estimate stay meaningful.
inline constexpr long long kMaxBatchOption = 1024;
/// The largest --kv-tokens (and `models inspect --context`): positions are 32-bit.
inline constexpr long long kMaxKvTokensOption = 2147483647;

/// --device's default: $MTDESK_DEVICE when set, else "auto".
QString default_device();

/// The options open_gpu_engine() reads, with their help texts and defaults.
QList<QCommandLineOption> engine_options();

/// The GPU batching engine the parsed options ask for, or null when they choose the CPU
/// (--device cpu, or auto on a machine without a usable GPU; a note on stderr then names the
/// GPU-only options given, which the CPU engine ignores). `cpu_only`: an option the caller
/// has that only the CPU engine supports ("--prompt-style"), named in the error when a GPU is
/// chosen; null for none. Throws UsageError naming the option (or MTDESK_DEVICE) for a bad
/// value; Error for a missing GPU or a build without CUDA; and what make_cuda_engine throws.
std::unique_ptr<TranslationEngine> open_gpu_engine(const QCommandLineParser& p,
                                                   const std::string& model_dir,
                                                   const char* cpu_only = nullptr);

/// The CPU engine's load options from --tier: its tier when given (fp32, int8, int4), else
/// none (the first that fits, Translator::open_cpu), also for a GPU-only tier (bf16, fp16;
/// open_gpu_engine's note names it). Throws UsageError naming --tier for a value that is no tier.
CpuLoadOptions cpu_load_options(const QCommandLineParser& p);

/// Translator::open_cpu with cpu_load_options(p); a note on stderr when no --tier was given and
/// the model does not fit in fp32, naming the tier it runs in. Throws what open_cpu throws.
std::unique_ptr<Translator> open_cpu_translator(const QCommandLineParser& p,
                                                const std::string& model_dir,
                                                std::optional<PromptStyle> style = {});

/// A note on stderr when the model in `model_dir`, opened as `translator`, has no chat template
/// of its own and Hunyuan's is assumed (ChatTemplate::assumed): a model of another family
/// would translate poorly with it. Nothing for a null translator.
void note_assumed_chat_template(const Translator* translator, const std::string& model_dir);

}  // namespace mtdesk::app
