#pragma once
// What turns a causal LM into a translator: prompt, chat template, tokenizer, generation with
// the model's recommended sampling, output clean-up, and a bound on output length.

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mtdesk/model/config.h"
#include "mtdesk/quant/tiers.h"
#include "mtdesk/runtime/causal_lm.h"
#include "mtdesk/runtime/generate.h"
#include "mtdesk/tokenizer/chat_template.h"
#include "mtdesk/tokenizer/tokenizer.h"
#include "mtdesk/translate/prompt.h"

namespace mtdesk {

struct TranslateOptions {
    SamplingParams sampling;
    /// Upper bound on generated tokens per segment. The effective bound is also limited to
    /// 4 × (source tokens) + 32, so garbled input cannot make the model run away.
    int max_new_tokens = 1024;
    /// Restore the source's casing of brand names, acronyms and mixed-case words in the
    /// translation (apply_casing_guard, casing_guard.h), after the output clean-up.
    bool casing_guard = true;
};

/// Receives translated text as it is generated (complete UTF-8 pieces). Return false to cancel.
using TextCallback = std::function<bool(std::string_view piece)>;

struct TranslationResult {
    std::string text;  ///< cleaned translation
    GenerationResult generation;
    int prompt_tokens = 0;
    /// The glossary entries of the request (those whose source term occurs in the segment)
    /// whose target term the translation lacks (Glossary::check); empty when cancelled.
    std::vector<GlossaryEntry> missing_terms;
};

/// Called by translate_lines after each translated line: its index in the text (0-based,
/// counting blank lines too) and its result.
using LineCallback = std::function<void(std::size_t line, const TranslationResult& result)>;

/// How Translator::open_cpu loads a model.
struct CpuLoadOptions {
    /// The CPU tier; nullopt: the first of fp32, int8, int4 that fits in the memory available
    /// (choose_cpu_tier, available_host_memory).
    std::optional<CpuTier> tier;
    int threads = 0;              ///< CpuModelOptions::threads
    std::string quant_cache_dir;  ///< CpuModelOptions::quant_cache_dir
};

/// A model, its tokenizer and chat template, ready to translate one segment at a time.
class Translator {
  public:
    Translator(std::unique_ptr<CausalLM> model, std::unique_ptr<Tokenizer> tokenizer,
               ChatTemplate chat_template, PromptStyle style, GenerationConfig generation);

    /// Opens a model directory on the CPU engine: validates weights, loads the tokenizer (whose
    /// ids must fit the vocabulary) and recognises the chat template. The prompt style is
    /// guessed from the directory name ("Hunyuan-MT" → HunyuanMT, otherwise HY-MT1.5) unless
    /// given. Before the weights are read, the tier's memory estimate is checked against the
    /// memory available (choose_cpu_tier): a model that does not fit fails with the figures
    /// and the tiers that would fit, instead of being killed half-loaded. Throws FileError /
    /// UnsupportedError naming the offending file, Error naming the directory for memory.
    static std::unique_ptr<Translator> open_cpu(const std::filesystem::path& model_dir,
                                                std::optional<PromptStyle> style = {},
                                                const CpuLoadOptions& options = {});

    /// The model publisher's recommended sampling from generation_config.json, falling back to
    /// Hunyuan-MT's (top_k 20, top_p 0.6, repetition_penalty 1.05, temperature 0.7): the free
    /// function recommended_sampling() of this model's generation config.
    SamplingParams recommended_sampling() const;

    /// Token ids of the full prompt (chat template around the translation prompt, or around
    /// request.chat's messages when it is set). With PromptStyle::HunyuanMT the glossary is
    /// left out of the prompt (Hunyuan-MT-7B was not trained with terminology prompts).
    std::vector<int32_t> encode_prompt(const PromptRequest& request) const;

    /// Translates one segment. A segment longer than source_budget() tokens is cut at sentence
    /// boundaries (then spaces, then characters) and translated piece by piece, the pieces
    /// joined with a space (without one for Chinese and Japanese targets). Throws Error for a
    /// missing target.
    ///
    /// Glossary: the Translator holds none; callers put the candidate entries in
    /// request.glossary, normally Glossary::matching_entries() of the text (glossary.h). Only
    /// the entries whose source term occurs in the segment (in each piece, for a long one) go
    /// into the terminology prompt, and the result's missing_terms lists those whose target
    /// term the translation lacks — also with PromptStyle::HunyuanMT, whose prompt has no
    /// glossary. options.casing_guard runs after the clean-up (the streamed pieces given to
    /// on_text are the model's raw output).
    TranslationResult translate(const PromptRequest& request, const TranslateOptions& options,
                                const TextCallback& on_text = {});

    /// Translates a multi-line text line by line (1:1): blank lines and each line's leading and
    /// trailing whitespace are kept as they are; only non-blank lines go to the model, and line
    /// breaks inside a line's translation become spaces. request.glossary may hold the whole
    /// text's entries: each line keeps its own (see translate()). `on_line` (optional) gets
    /// each translated line's result, e.g. for its missing glossary terms.
    std::string translate_lines(const PromptRequest& request, const TranslateOptions& options,
                                const TextCallback& on_text = {}, const LineCallback& on_line = {});

    /// Most source tokens translated in one prompt: what fits the model's positions with the
    /// output bound (4 × source + 32), at most 1024; and where the tokenizer gives a
    /// model_max_length, what leaves room in it for an answer as long as the source. A chat
    /// (request.chat) is never cut: the largest int.
    int source_budget(const PromptRequest& request) const;

    /// Most tokens generated for one prompt of `prompt_tokens` tokens whose source text has
    /// `source_tokens`: `max_new_tokens`, at most 4 × source_tokens + 32 (garbled input cannot
    /// make the model run away) and at most the model's positions left after the prompt. An
    /// answer of exactly this many tokens ended for its length, a shorter one at a stop token.
    int output_bound(int source_tokens, int prompt_tokens, int max_new_tokens) const;

    const Tokenizer& tokenizer() const noexcept { return *tokenizer_; }
    CausalLM& model() noexcept { return *model_; }
    const CausalLM& model() const noexcept { return *model_; }
    PromptStyle style() const noexcept { return style_; }
    /// The chat template prompts are wrapped in (ChatTemplate::assumed: none was found in the
    /// model directory).
    const ChatTemplate& chat_template() const noexcept { return chat_template_; }
    /// Whether a glossary goes into the prompt (HY-MT1.5's terminology intervention) or is only
    /// checked in the output. On by default; open_cpu() turns it off for models whose directory
    /// name does not say HY-MT (the bundled demo model was never trained on that prompt).
    void set_terminology_prompt(bool on) noexcept { terminology_prompt_ = on; }
    bool terminology_prompt() const noexcept { return terminology_prompt_; }
    const std::vector<int32_t>& stop_tokens() const noexcept { return stop_tokens_; }

  private:
    /// translate() without the glossary narrowing and check.
    TranslationResult translate_segment(const PromptRequest& request,
                                        const TranslateOptions& options,
                                        const TextCallback& on_text);
    /// One prompt's worth: `source_tokens` is the token count of request.text (for the bound).
    TranslationResult translate_piece(const PromptRequest& request, const TranslateOptions& options,
                                      const TextCallback& on_text, int source_tokens);

    std::unique_ptr<CausalLM> model_;
    std::unique_ptr<Tokenizer> tokenizer_;
    ChatTemplate chat_template_;
    PromptStyle style_;
    GenerationConfig generation_;
    std::vector<int32_t> stop_tokens_;
    bool terminology_prompt_ = true;
};

/// One line of a multi-line text, cut the way line-by-line translation needs it: `body` goes to
/// the model (empty for a blank line); `indent`, `trailing` (spaces and tabs) and `eol` ("\n",
/// "\r\n" or "" for the last line) are kept as they are. The parts of all lines concatenate
/// to the text.
struct TextLine {
    std::string_view indent, body, trailing, eol;
};
std::vector<TextLine> split_lines(std::string_view text);

/// Checks that `tokenizer` has the special tokens `chat_template` needs (a directory without a
/// chat template falls back to Hunyuan's, which only works with Hunyuan's tokens). Throws
/// UnsupportedError naming the model directory's tokenizer_config.json otherwise.
void check_chat_template(const ChatTemplate& chat_template, const Tokenizer& tokenizer,
                         const std::filesystem::path& model_dir);

/// The model's name as its directory gives it: the directory's own name (not the folders
/// above it, which say nothing about the model), or for a Hugging Face cache snapshot
/// (…/models--tencent--HY-MT1.5-7B/snapshots/<commit>) the repository's ("HY-MT1.5-7B").
std::string model_name_of(const std::filesystem::path& model_dir);

/// "HY-MT" in model_name_of(model_dir) (case-insensitive): a model trained on HY-MT1.5's
/// terminology (and formatted) prompts.
bool guess_terminology_prompt(const std::filesystem::path& model_dir);

/// "Hunyuan-MT" in model_name_of(model_dir) (case-insensitive) → HunyuanMT, otherwise HyMt15.
PromptStyle guess_prompt_style(const std::filesystem::path& model_dir);

/// The sampling a model's generation_config.json recommends: greedy when it says do_sample
/// false, otherwise Hunyuan-MT's (top_k 20, top_p 0.6, repetition_penalty 1.05, temperature
/// 0.7) with each value the file gives instead. Translator::recommended_sampling() of a model.
SamplingParams recommended_sampling(const GenerationConfig& generation);

}  // namespace mtdesk
