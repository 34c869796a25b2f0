#include "mtdesk/translate/translator.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "mtdesk/cpu/cpu_model.h"
#include "mtdesk/cpu/host_memory.h"
#include "mtdesk/error.h"
#include "mtdesk/model/model_dir.h"
#include "mtdesk/translate/casing_guard.h"
#include "mtdesk/translate/glossary.h"
#include "mtdesk/translate/segmenter.h"

namespace mtdesk {

std::string model_name_of(const std::filesystem::path& model_dir) {
    const std::filesystem::path dir = std::filesystem::absolute(model_dir).lexically_normal();
    std::filesystem::path name = dir.filename();
    std::filesystem::path parent = dir.parent_path();
    if (name.empty()) {  // "…/HY-MT1.5-7B/" normalises to a trailing empty name
        name = parent.filename();
        parent = parent.parent_path();
    }
    // Hugging Face's cache: …/models--tencent--HY-MT1.5-7B/snapshots/<commit>/.
    if (parent.filename() == "snapshots") {
        const std::string repo = parent.parent_path().filename().string();
        if (repo.starts_with("models--")) return repo.substr(repo.rfind("--") + 2);
    }
    return name.string();
}

namespace {
std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}
}  // namespace

bool guess_terminology_prompt(const std::filesystem::path& model_dir) {
    return lower(model_name_of(model_dir)).find("hy-mt") != std::string::npos;
}

PromptStyle guess_prompt_style(const std::filesystem::path& model_dir) {
    return lower(model_name_of(model_dir)).find("hunyuan-mt") != std::string::npos
               ? PromptStyle::HunyuanMT
               : PromptStyle::HyMt15;
}

void check_chat_template(const ChatTemplate& chat_template, const Tokenizer& tokenizer,
                         const std::filesystem::path& model_dir) {
    for (const std::string& token : chat_template.stop_tokens()) {
        if (!tokenizer.token_id(token))
            throw UnsupportedError(
                (model_dir / "tokenizer_config.json").string(),
                "no usable chat template: the " +
                    std::string(chat_template_name(chat_template.kind)) +
                    " template (the default when none is given) needs the token " + token +
                    ", which this model's tokenizer does not have");
    }
}

Translator::Translator(std::unique_ptr<CausalLM> model, std::unique_ptr<Tokenizer> tokenizer,
                       ChatTemplate chat_template, PromptStyle style, GenerationConfig generation)
    : model_(std::move(model)),
      tokenizer_(std::move(tokenizer)),
      chat_template_(chat_template),
      style_(style),
      generation_(std::move(generation)) {
    // The template's end-of-answer tokens, then whatever the configs name as EOS.
    auto add = [this](int32_t id) {
        if (id >= 0 &&
            std::find(stop_tokens_.begin(), stop_tokens_.end(), id) == stop_tokens_.end())
            stop_tokens_.push_back(id);
    };
    for (const std::string& t : chat_template_.stop_tokens())
        if (auto id = tokenizer_->token_id(t)) add(*id);
    for (int id : model_->config().eos_token_ids)
        add(id);
    for (int id : generation_.eos_token_ids)
        add(id);
}

std::unique_ptr<Translator> Translator::open_cpu(const std::filesystem::path& model_dir,
                                                 std::optional<PromptStyle> style,
                                                 const CpuLoadOptions& options) {
    ModelDir dir = ModelDir::open(model_dir);
    auto tokenizer = load_tokenizer(model_dir, dir.config.vocab_size);
    ChatTemplate chat = ChatTemplate::from_model_dir(model_dir);
    check_chat_template(chat, *tokenizer, model_dir);
    CpuModelOptions model_options;
    model_options.threads = options.threads;
    model_options.quant_cache_dir = options.quant_cache_dir;
    model_options.tier = options.tier.value_or(CpuTier::FP32);
    if (const auto available = available_host_memory()) {
        try {
            model_options.tier = choose_cpu_tier(dir.config, options.tier, *available);
        } catch (const Error& e) {
            throw Error(model_dir.string() + ": " + e.what());
        }
    }
    auto model = CpuModel::load(dir, model_options);
    auto translator =
        std::make_unique<Translator>(std::move(model), std::move(tokenizer), chat,
                                     style.value_or(guess_prompt_style(model_dir)), dir.generation);
    translator->set_terminology_prompt(guess_terminology_prompt(model_dir));
    return translator;
}

SamplingParams Translator::recommended_sampling() const {
    return mtdesk::recommended_sampling(generation_);
}

SamplingParams recommended_sampling(const GenerationConfig& g) {
    SamplingParams p = SamplingParams::hunyuan_mt();
    if (g.do_sample && !*g.do_sample) return SamplingParams::greedy_decoding();
    // A temperature or a top-p of 0 leaves only the most likely token (transformers keeps one
    // token): greedy decoding, rather than a sampler that refuses the value.
    if ((g.temperature && *g.temperature == 0.0f) || (g.top_p && *g.top_p == 0.0f))
        return SamplingParams::greedy_decoding();
    if (g.temperature) p.temperature = *g.temperature;
    if (g.top_k) p.top_k = *g.top_k;
    if (g.top_p) p.top_p = *g.top_p;
    if (g.repetition_penalty) p.repetition_penalty = *g.repetition_penalty;
    return p;
}

std::vector<int32_t> Translator::encode_prompt(const PromptRequest& request) const {
    // The user's text must not be able to inject control tokens: the template text (with its
    // special tokens) and the user message are encoded separately.
    std::string user;
    if (request.chat) {
        user = request.chat->user;
    } else if ((style_ == PromptStyle::HunyuanMT || !terminology_prompt_) &&
               !request.glossary.empty()) {
        PromptRequest without = request;  // glossary only checked, see translate()
        without.glossary.clear();
        user = build_translation_prompt(without, style_);
    } else {
        user = build_translation_prompt(request, style_);
    }
    static constexpr std::string_view kMarker = "\x01mtdesk-user\x01";
    static constexpr std::string_view kSystemMarker = "\x01mtdesk-system\x01";
    const std::string_view system =
        request.chat && !request.chat->system.empty() ? kSystemMarker : std::string_view{};
    const std::string rendered = chat_template_.render(kMarker, system);
    std::vector<int32_t> ids;
    auto append = [&](std::string_view text, bool parse_special) {
        const std::vector<int32_t> part = tokenizer_->encode(text, parse_special);
        ids.insert(ids.end(), part.begin(), part.end());
    };
    // Template text with special tokens; the messages in it as plain text. The system message
    // comes before the user's in every template.
    std::size_t from = 0;
    if (!system.empty()) {
        const auto at = rendered.find(kSystemMarker);
        append(std::string_view(rendered).substr(0, at), true);
        append(request.chat->system, false);
        from = at + kSystemMarker.size();
    }
    const auto at = rendered.find(kMarker, from);
    append(std::string_view(rendered).substr(from, at - from), true);
    append(user, false);
    append(std::string_view(rendered).substr(at + kMarker.size()), true);
    return ids;
}

int Translator::source_budget(const PromptRequest& request) const {
    if (request.chat) return std::numeric_limits<int>::max();
    PromptRequest empty = request;
    empty.text.clear();
    const int overhead = static_cast<int>(encode_prompt(empty).size());
    // prompt (overhead + n) + output bound (4n + 32) must fit, with a margin for the instruction
    // wording that depends on the text; long segments also translate worse, so at most 1024.
    int fit = (model_->config().max_position_embeddings - overhead - 48) / 5;
    // A model made for shorter sequences (its tokenizer's model_max_length: the bundled demo
    // model saw 256 tokens of prompt and answer) gets pieces whose answer, about as long as
    // the source, still fits that length.
    if (const std::optional<int> made_for = tokenizer_->model_max_length())
        fit = std::min(fit, (*made_for - overhead - 48) / 2);
    return std::clamp(fit, 1, 1024);
}

int Translator::output_bound(int source_tokens, int prompt_tokens, int max_new_tokens) const {
    const int room = model_->config().max_position_embeddings - prompt_tokens;
    return std::max(0, std::min({max_new_tokens, 4 * source_tokens + 32, room}));
}

TranslationResult Translator::translate(const PromptRequest& request,
                                        const TranslateOptions& options,
                                        const TextCallback& on_text) {
    // Only the entries this segment needs: a long glossary must not bloat every prompt.
    PromptRequest narrowed = request;
    narrowed.glossary = Glossary::entries_in(request.text, request.glossary);
    TranslationResult result = translate_segment(narrowed, options, on_text);
    if (result.generation.finish != FinishReason::Cancelled)
        result.missing_terms = Glossary::check(result.text, narrowed.glossary);
    return result;
}

TranslationResult Translator::translate_segment(const PromptRequest& request,
                                                const TranslateOptions& options,
                                                const TextCallback& on_text) {
    auto count = [this](std::string_view s) {
        return static_cast<int>(tokenizer_->encode(s).size());
    };
    const int budget = source_budget(request);
    const int source_tokens = count(request.text);
    if (source_tokens <= budget) return translate_piece(request, options, on_text, source_tokens);

    // Too long for one prompt: translate it piece by piece, cut at sentence boundaries.
    const bool joined_without_spaces =
        request.target && (is_chinese(*request.target) || request.target->code == "ja");
    TranslationResult all;
    bool first = true;
    bool cut = false;  // a piece reached its token limit
    for (std::string_view piece : split_to_budget(request.text, budget, count)) {
        const auto b = piece.find_first_not_of(" \t");
        if (b == std::string_view::npos) continue;
        const auto e = piece.find_last_not_of(" \t");
        PromptRequest part = request;
        part.text = std::string(piece.substr(b, e - b + 1));
        part.glossary = Glossary::entries_in(part.text, request.glossary);
        if (!first && !joined_without_spaces) {
            all.text += ' ';
            if (on_text && !on_text(" ")) break;
        }
        first = false;
        TranslationResult r = translate_piece(part, options, on_text, count(part.text));
        all.text += r.text;
        all.prompt_tokens += r.prompt_tokens;
        all.generation.tokens.insert(all.generation.tokens.end(), r.generation.tokens.begin(),
                                     r.generation.tokens.end());
        all.generation.prefill_ms += r.generation.prefill_ms;
        all.generation.decode_ms += r.generation.decode_ms;
        // A piece cut at its limit leaves the whole cut, whatever the later pieces did.
        cut = cut || r.generation.finish == FinishReason::Length;
        all.generation.finish = cut && r.generation.finish != FinishReason::Cancelled
                                    ? FinishReason::Length
                                    : r.generation.finish;
        if (r.generation.finish == FinishReason::Cancelled) break;
    }
    return all;
}

TranslationResult Translator::translate_piece(const PromptRequest& request,
                                              const TranslateOptions& options,
                                              const TextCallback& on_text, int source_tokens) {
    TranslationResult result;
    const std::vector<int32_t> prompt = encode_prompt(request);
    result.prompt_tokens = static_cast<int>(prompt.size());

    GenerationParams gp;
    gp.sampling = options.sampling;
    gp.stop_tokens = stop_tokens_;
    gp.vocab_limit = tokenizer_->vocab_size();
    const int room = model_->config().max_position_embeddings - static_cast<int>(prompt.size());
    if (room < 1)
        throw Error("the text is too long for this model: the prompt takes " +
                    std::to_string(prompt.size()) + " tokens, the model holds " +
                    std::to_string(model_->config().max_position_embeddings));
    gp.max_new_tokens =
        output_bound(source_tokens, static_cast<int>(prompt.size()), options.max_new_tokens);

    StreamingDecoder decoder(*tokenizer_);
    std::string raw;
    TokenCallback cb = [&](int32_t token) {
        std::string piece = decoder.push(token);
        if (piece.empty()) return true;
        raw += piece;
        return on_text ? on_text(piece) : true;
    };
    result.generation = generate(*model_, prompt, gp, cb);
    std::string tail = decoder.finish();
    if (!tail.empty()) {
        raw += tail;
        if (on_text) on_text(tail);
    }
    result.text = clean_translation_output(raw, request.formatted);
    if (options.casing_guard) result.text = apply_casing_guard(request.text, result.text);
    return result;
}

std::vector<TextLine> split_lines(std::string_view text) {
    std::vector<TextLine> lines;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        TextLine l;
        std::string_view line = text.substr(0, nl);
        l.eol = nl == std::string_view::npos ? std::string_view{} : text.substr(nl, 1);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        if (line.ends_with('\r')) {
            line.remove_suffix(1);
            l.eol = std::string_view(line.data() + line.size(), l.eol.size() + 1);
        }
        const auto b = line.find_first_not_of(" \t");
        if (b == std::string_view::npos) {
            l.indent = line;
        } else {
            const auto e = line.find_last_not_of(" \t");
            l.indent = line.substr(0, b);
            l.body = line.substr(b, e - b + 1);
            l.trailing = line.substr(e + 1);
        }
        lines.push_back(l);
    }
    return lines;
}

std::string Translator::translate_lines(const PromptRequest& request,
                                        const TranslateOptions& options,
                                        const TextCallback& on_text, const LineCallback& on_line) {
    std::string out;
    bool cancelled = false;
    auto emit = [&](std::string_view s) {
        out.append(s);
        if (on_text && !cancelled && !on_text(s)) cancelled = true;
    };
    const std::vector<TextLine> lines = split_lines(request.text);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const TextLine& line = lines[i];
        if (cancelled) break;
        emit(line.indent);
        std::optional<TranslationResult> r;
        if (!line.body.empty()) {
            PromptRequest segment = request;
            segment.text = std::string(line.body);
            r = translate(segment, options);
            emit(single_line(r->text));
            if (r->generation.finish == FinishReason::Cancelled) cancelled = true;
        }
        emit(line.trailing);
        emit(line.eol);
        if (on_line && r) on_line(i, *r);  // after the line end, for messages between lines
    }
    return out;
}

}  // namespace mtdesk
