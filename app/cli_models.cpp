// mtdesk models inspect / mtdesk languages.

#include <QCommandLineParser>

#include <fmt/format.h>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_commands.h"
#include "demo_model.h"
#include "engine_options.h"
#include "mtdesk/cpu/host_memory.h"
#include "mtdesk/error.h"
#include "mtdesk/model/model_dir.h"
#include "mtdesk/quant/tiers.h"
#include "mtdesk/tokenizer/chat_template.h"
#include "mtdesk/tokenizer/tokenizer.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/translator.h"

namespace mtdesk::app {
namespace {

std::string human_bytes(std::size_t b) {
    if (b >= (1ull << 30)) return fmt::format("{:.2f} GiB", b / double(1ull << 30));
    if (b >= (1ull << 20)) return fmt::format("{:.1f} MiB", b / double(1ull << 20));
    if (b >= 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
    return fmt::format("{} B", b);
}

std::string_view tokenizer_kind_name(TokenizerKind k) {
    switch (k) {
        case TokenizerKind::Tiktoken:
            return "tiktoken byte-level BPE";
        case TokenizerKind::HfTokenizerJson:
            return "tokenizer.json byte-level BPE";
        case TokenizerKind::SentencePiece:
            return "SentencePiece";
    }
    return "?";
}

std::string rope_description(const ModelConfig& c) {
    switch (c.rope_type) {
        case RopeType::Default:
            return fmt::format("theta {:g}", c.rope_theta);
        case RopeType::DynamicAlpha:
            return fmt::format("theta {:g}, dynamic alpha {:g} -> base {:.6g}", c.rope_theta,
                               c.rope_alpha, c.effective_rope_theta());
        case RopeType::Linear:
            return fmt::format("theta {:g}, linear factor {:g}", c.rope_theta, c.rope_factor);
        case RopeType::Llama3:
            return fmt::format("theta {:g}, llama3 factor {:g}", c.rope_theta, c.rope_factor);
    }
    return "?";
}

int inspect(const QString& dir_arg, bool json, bool list_tensors, long long context,
            long long batch, KvCacheDtype kv) {
    const std::filesystem::path dir = dir_arg.toStdString();
    const ModelDir model = ModelDir::open(dir);
    const ModelConfig& c = model.config;
    auto tokenizer = load_tokenizer(dir, c.vocab_size);
    // One sequence cannot hold more than the model's positions; a larger budget only makes
    // sense for several sequences, so the figure is per sequence times the batch at most.
    const long long most = static_cast<long long>(c.max_position_embeddings) * batch;
    const bool clamped = context > most;
    if (clamped) context = most;
    std::string chat;
    bool chat_assumed = false;  // the directory has none: Hunyuan's is used
    try {
        const ChatTemplate t = ChatTemplate::from_model_dir(dir);
        chat_assumed = t.assumed;
        check_chat_template(t, *tokenizer, dir);
        chat = chat_template_name(t.kind);
    } catch (const UnsupportedError& e) {
        chat = std::string("unsupported (") + e.problem() + ")";
    }
    std::map<std::string, std::size_t> dtype_bytes;
    for (const auto& [name, t] : model.tensors->all())
        dtype_bytes[std::string(dtype_name(t->dtype))] += t->nbytes;

    if (json) {
        nlohmann::ordered_json j;
        j["path"] = dir.string();
        j["architecture"] = c.architecture_name;
        j["parameters"] = c.parameter_count();
        j["layers"] = c.num_layers;
        j["hidden_size"] = c.hidden_size;
        j["intermediate_size"] = c.intermediate_size;
        j["heads"] = c.num_heads;
        j["kv_heads"] = c.num_kv_heads;
        j["head_dim"] = c.head_dim;
        j["vocab_size"] = c.vocab_size;
        j["max_position_embeddings"] = c.max_position_embeddings;
        j["rope"] = rope_description(c);
        j["tie_word_embeddings"] = c.tie_word_embeddings;
        j["tokenizer"] = {{"kind", tokenizer_kind_name(tokenizer->kind())},
                          {"ids", tokenizer->vocab_size()},
                          {"chat_template", chat},
                          {"chat_template_assumed", chat_assumed}};
        j["files"] = nlohmann::json::array();
        for (const auto& f : model.tensors->files())
            j["files"].push_back(f.filename().string());
        j["stored_bytes"] = model.tensors->total_bytes();
        j["stored_bytes_by_dtype"] = dtype_bytes;
        j["tensor_count"] = model.tensors->all().size();
        // A 7B model has hundreds of tensors: listed only when asked for.
        if (list_tensors) {
            j["tensors"] = nlohmann::json::array();
            for (const auto& [name, t] : model.tensors->all())
                j["tensors"].push_back(
                    {{"name", name}, {"dtype", dtype_name(t->dtype)}, {"shape", t->shape}});
        }
        j["memory"] = {{"context_tokens", context},
                       {"max_batch", batch},
                       {"kv_cache", std::string(kv_cache_dtype_name(kv))},
                       {"tiers", {}}};
        for (Tier t : all_tiers()) {
            const MemoryEstimate e = estimate_memory(c, t, static_cast<std::size_t>(context),
                                                     static_cast<int>(batch), kv);
            j["memory"]["tiers"][std::string(tier_name(t))] = {{"weights", e.weights},
                                                               {"kv_cache", e.kv_cache},
                                                               {"workspace", e.workspace},
                                                               {"total", e.total()}};
        }
        j["memory"]["cpu_context_tokens"] = kCpuEstimateContext;
        j["memory"]["cpu_tiers"] = nlohmann::json::object();
        for (CpuTier t : all_cpu_tiers()) {
            const MemoryEstimate e = estimate_cpu_memory(c, t);
            j["memory"]["cpu_tiers"][std::string(cpu_tier_name(t))] = {{"weights", e.weights},
                                                                       {"kv_cache", e.kv_cache},
                                                                       {"workspace", e.workspace},
                                                                       {"total", e.total()}};
        }
        if (const auto available = available_host_memory())
            j["memory"]["cpu_available"] = *available;
        std::puts(j.dump(2).c_str());
        return 0;
    }

    fmt::print("Model         {}\n", dir.string());
    fmt::print("Architecture  {}\n", c.architecture_name);
    const double params = static_cast<double>(c.parameter_count());
    fmt::print("Parameters    {} ({})\n", c.parameter_count(),
               params >= 1e9 ? fmt::format("{:.2f} B", params / 1e9)
                             : fmt::format("{:.2f} M", params / 1e6));
    fmt::print(
        "Shape         {} layers, hidden {}, intermediate {}, {} query / {} KV heads of {}\n",
        c.num_layers, c.hidden_size, c.intermediate_size, c.num_heads, c.num_kv_heads, c.head_dim);
    fmt::print("Vocabulary    {} (max positions {})\n", c.vocab_size, c.max_position_embeddings);
    fmt::print("RoPE          {}\n", rope_description(c));
    fmt::print("QK norm       {}\n", !c.qk_norm             ? "no"
                                     : c.qk_norm_after_rope ? "per head, after RoPE"
                                                            : "per head, before RoPE");
    fmt::print("Embeddings    {}\n", c.tie_word_embeddings ? "tied" : "separate lm_head");
    // An unsupported template's reason already says that it was assumed.
    const bool say_assumed = chat_assumed && !chat.starts_with("unsupported");
    fmt::print("Tokenizer     {}, {} ids; chat template {}{}\n",
               tokenizer_kind_name(tokenizer->kind()), tokenizer->vocab_size(), chat,
               say_assumed ? " (assumed: the model has none)" : "");
    std::string stored;
    for (const auto& [d, b] : dtype_bytes)
        stored += fmt::format("{}{} {}", stored.empty() ? "" : ", ", d, human_bytes(b));
    fmt::print("Weights       {} tensors, {} in {} file(s): {}\n", model.tensors->all().size(),
               human_bytes(model.tensors->total_bytes()), model.tensors->files().size(), stored);
    if (list_tensors) {
        for (const auto& [name, t] : model.tensors->all())
            fmt::print("  {:<56} {:<5} {}\n", name, dtype_name(t->dtype), shape_string(t->shape));
    }
    fmt::print("\nMemory per tier (KV cache for {} tokens in {}{}, batch up to {}):\n", context,
               kv == KvCacheDtype::Int8 ? "int8" : "fp16/bf16",
               clamped ? " = max positions x batch" : "", batch);
    fmt::print("  {:<5} {:>12} {:>12} {:>12} {:>12}\n", "tier", "weights", "KV cache", "workspace",
               "total");
    for (Tier t : all_tiers()) {
        const MemoryEstimate e =
            estimate_memory(c, t, static_cast<std::size_t>(context), static_cast<int>(batch), kv);
        fmt::print("  {:<5} {:>12} {:>12} {:>12} {:>12}\n", tier_name(t), human_bytes(e.weights),
                   human_bytes(e.kv_cache), human_bytes(e.workspace), human_bytes(e.total()));
    }
    // The CPU engine: one request at a time, its KV cache in fp32.
    const auto available = available_host_memory();
    fmt::print("\nCPU memory per tier (fp32 KV cache for {} tokens, one request{}):\n",
               kCpuEstimateContext,
               available ? "; " + human_bytes(*available) + " available here" : std::string());
    fmt::print("  {:<5} {:>12} {:>12} {:>12} {:>12}\n", "tier", "weights", "KV cache", "workspace",
               "total");
    for (CpuTier t : all_cpu_tiers()) {
        const MemoryEstimate e = estimate_cpu_memory(c, t);
        const bool fits = !available || e.total() <= usable_cpu_memory(*available);
        fmt::print("  {:<5} {:>12} {:>12} {:>12} {:>12}{}\n", cpu_tier_name(t),
                   human_bytes(e.weights), human_bytes(e.kv_cache), human_bytes(e.workspace),
                   human_bytes(e.total()), fits ? "" : "  does not fit");
    }
    return 0;
}

}  // namespace

int cmd_models(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "models inspect [DIR]: architecture, parameter count, tokenizer, tensors and the memory "
        "each precision tier needs."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("action"), QStringLiteral("inspect"));
    p.addPositionalArgument(QStringLiteral("DIR"),
                            QStringLiteral("Model directory (default: the bundled demo model)."),
                            QStringLiteral("[DIR]"));
    p.addOptions({
        {QStringLiteral("json"), QStringLiteral("Print JSON.")},
        {QStringLiteral("tensors"),
         QStringLiteral("List every tensor (name, dtype, shape), also in the JSON; without it "
                        "only their count and bytes.")},
        {QStringLiteral("context"), QStringLiteral("KV cache budget in tokens."),
         QStringLiteral("N"), QStringLiteral("8192")},
        {QStringLiteral("batch"), QStringLiteral("Most sequences decoding at once."),
         QStringLiteral("N"), QStringLiteral("8")},
        {QStringLiteral("kv-cache"),
         QStringLiteral("KV cache type the estimate assumes: 16bit or int8."),
         QStringLiteral("TYPE"), QStringLiteral("16bit")},
    });
    if (!p.parse(args)) {
        std::fprintf(stderr, "mtdesk models: %s\n", qPrintable(p.errorText()));
        return 2;
    }
    if (p.isSet(QStringLiteral("help"))) {
        std::fputs(qPrintable(command_help(p, QStringLiteral("models"))), stdout);
        return 0;
    }
    const QStringList pos = p.positionalArguments();
    if (pos.size() < 1 || pos.size() > 2 || pos[0] != QLatin1String("inspect")) {
        std::fputs(
            "usage: mtdesk models inspect [DIR] [--json] [--tensors] [--context N] "
            "[--batch N] [--kv-cache TYPE]\n",
            stderr);
        return 2;
    }
    const long long context = whole_number_option(p, "context", 1, kMaxKvTokensOption);
    const long long batch = whole_number_option(p, "batch", 1, kMaxBatchOption);
    const auto kv = parse_kv_cache_dtype(p.value(QStringLiteral("kv-cache")).toStdString());
    if (!kv) throw UsageError("--kv-cache must be 16bit or int8");
    const QString dir = pos.size() == 2 ? pos[1] : QString::fromStdString(default_model_dir());
    return inspect(dir, p.isSet(QStringLiteral("json")), p.isSet(QStringLiteral("tensors")),
                   context, batch, *kv);
}

int cmd_languages(const QStringList& args) {
    if (args.size() > 1) {
        const bool help = args[1] == QLatin1String("--help") || args[1] == QLatin1String("-h");
        std::fputs(
            "Usage: mtdesk languages\n"
            "The 38 languages: code, English, Chinese and native name.\n",
            help ? stdout : stderr);
        return help ? 0 : 2;
    }
    for (const Language& l : languages())
        fmt::print("{:<8} {:<20} {:<10} {}\n", l.code, l.english_name, l.chinese_name,
                   l.native_name);
    return 0;
}

}  // namespace mtdesk::app
