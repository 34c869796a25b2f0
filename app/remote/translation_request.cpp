#include "remote/translation_request.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "mtdesk/translate/casing_guard.h"
#include "mtdesk/translate/glossary.h"

namespace mtdesk::remote {
namespace {

bool contains_ci(std::string_view haystack, std::string_view needle) {
    std::string h(haystack), n(needle);
    auto low = [](std::string& s) {
        std::transform(s.begin(), s.end(), s.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    };
    low(h);
    low(n);
    return h.find(n) != std::string::npos;
}

// 0.7f as 0.7 rather than 0.699999988079071 in the request.
double decimal(float v) {
    return std::round(static_cast<double>(v) * 1e6) / 1e6;
}

}  // namespace

RemoteModel RemoteModel::from_name(std::string name) {
    RemoteModel m;
    m.style = contains_ci(name, "hunyuan-mt") ? PromptStyle::HunyuanMT : PromptStyle::HyMt15;
    m.terminology_prompt = contains_ci(name, "hy-mt");
    m.name = std::move(name);
    return m;
}

std::string user_message(const PromptRequest& request, const RemoteModel& model) {
    // Translator::translate narrows the glossary to the segment's terms; encode_prompt leaves
    // it out for models that were not trained with the terminology prompt.
    PromptRequest r = request;
    r.glossary = Glossary::entries_in(request.text, request.glossary);
    if (model.style == PromptStyle::HunyuanMT || !model.terminology_prompt) r.glossary.clear();
    return build_translation_prompt(r, model.style);
}

int max_tokens_for(const TranslationJob& job) {
    const long bound = 4L * static_cast<long>(job.request.text.size()) + 32;
    return static_cast<int>(std::clamp<long>(bound, 1, std::max(1, job.options.max_new_tokens)));
}

std::string chat_request_body(const TranslationJob& job, const RemoteModel& model) {
    nlohmann::json body;
    body["model"] = model.name;
    body["messages"] =
        nlohmann::json::array({{{"role", "user"}, {"content", user_message(job.request, model)}}});
    body["stream"] = true;
    // The token counts come in a last chunk of their own (vLLM, SGLang, OpenAI).
    body["stream_options"] = {{"include_usage", true}};
    body["max_tokens"] = max_tokens_for(job);
    const SamplingParams& s = job.options.sampling;
    if (s.greedy) {
        body["temperature"] = 0.0;  // greedy for vLLM, SGLang and TensorRT-LLM alike
    } else {
        body["temperature"] = decimal(s.temperature);
        body["top_p"] = decimal(s.top_p);
        if (s.top_k > 0) body["top_k"] = s.top_k;  // 0 = off is each server's default
        if (s.seed) body["seed"] = *s.seed;        // absent: each server draws a random one
    }
    if (s.repetition_penalty != 1.0f) body["repetition_penalty"] = decimal(s.repetition_penalty);
    return body.dump();
}

std::string clean_output(const TranslationJob& job, std::string_view raw) {
    std::string text = clean_translation_output(raw, job.request.formatted);
    if (job.options.casing_guard) text = apply_casing_guard(job.request.text, text);
    return text;
}

}  // namespace mtdesk::remote
