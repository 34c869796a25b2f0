#pragma once
// What a remote server is asked for one segment, and what is made of its answer: the same user
// message the local Translator builds (prompt.h, with the same glossary narrowing), sent as one
// chat message with the job's sampling mapped to the parameters vLLM / SGLang accept, and the
// same clean-up of the output (clean_translation_output, then the casing guard).

#include <string>
#include <string_view>

#include "mtdesk/translate/prompt.h"
#include "mtdesk/translate/translation_engine.h"

namespace mtdesk::remote {

/// The served model: the "model" of every request and how it is prompted.
struct RemoteModel {
    std::string name;
    PromptStyle style = PromptStyle::HyMt15;
    /// Whether a glossary goes into the prompt (HY-MT1.5's terminology intervention) or is only
    /// checked by the caller, as Translator::terminology_prompt().
    bool terminology_prompt = false;

    /// Recognised from the name as local models are from their directory name: "Hunyuan-MT"
    /// in it gives PromptStyle::HunyuanMT (otherwise HY-MT1.5's wording), "HY-MT" in it turns
    /// the terminology prompt on (case-insensitive).
    static RemoteModel from_name(std::string name);
};

/// The user message for `request`, exactly as Translator::encode_prompt words it: the glossary
/// narrowed to the entries found in the text, and left out for models without the
/// terminology prompt. Throws mtdesk::Error as build_translation_prompt does.
std::string user_message(const PromptRequest& request, const RemoteModel& model);

/// Most tokens asked for: options.max_new_tokens, bounded like the local Translator's
/// 4 × (source tokens) + 32 with the source's byte count standing in for its token count (a
/// token is at least one byte), so garbled input cannot make a server run away either.
int max_tokens_for(const TranslationJob& job);

/// The JSON body of a streaming POST /v1/chat/completions for `job`: model, one user message,
/// "stream": true with usage in the last chunk, max_tokens, and the sampling: greedy as
/// temperature 0; otherwise temperature, top_p, top_k (left out when 0 = off) and seed (left
/// out when the job has none: each server then draws a random one);
/// repetition_penalty whenever it is not 1.
std::string chat_request_body(const TranslationJob& job, const RemoteModel& model);

/// The translation made of the raw generated text, as Translator::translate makes it:
/// clean_translation_output, then the casing guard when the job asks for it.
std::string clean_output(const TranslationJob& job, std::string_view raw);

}  // namespace mtdesk::remote
