#pragma once
// The remote engine: a TranslationEngine whose segments are translated by OpenAI-compatible
// servers (vLLM, SGLang, TensorRT-LLM, `mtdesk serve`) instead of this computer. Each job is one
// streaming POST /v1/chat/completions with the prompt the local engine would use; many jobs are
// in flight at once (a number per server, so the servers' own batching is fed), spread over the
// servers least-loaded first. A request that fails on one server (refused, timed out, cut off,
// a 5xx) is sent again to another while the failing server rests for a while (longer each time
// it fails again), so a long document survives a server going away. A failure one job meets
// counts for the jobs waiting for the same server. A job fails, naming every server and what
// each answered, when all of them failed it several times or all refused it; while every
// server has failed several times in a row and rests, new jobs fail at once (the next job
// after a rest probes the server again). The job queue and the window use it like the local
// engines.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mtdesk/translate/prompt.h"
#include "mtdesk/translate/translation_engine.h"

namespace mtdesk::remote {

/// Where and how to reach the servers.
struct RemoteOptions {
    /// Base URLs ("http://gpu1:8000", "https://host/v1", "gpu2:8000"); at least one.
    std::vector<std::string> servers;
    /// The served model's name, the "model" of every request; required.
    std::string model;
    /// The prompt wording; by default recognised from the model name (RemoteModel::from_name).
    std::optional<PromptStyle> prompt_style;
    /// Whether glossaries go into the prompt; by default from the model name (RemoteModel).
    std::optional<bool> terminology_prompt;
    std::string api_key;  ///< Bearer token for every request ("" = none)
    int concurrency = 4;  ///< requests in flight per server
    std::chrono::milliseconds connect_timeout{5000};
    std::chrono::milliseconds read_timeout{120000};  ///< longest silence within an answer
    std::string ca_file;  ///< PEM certificates trusted for https ("" = the system's)
    /// A job fails after this many failed requests per server (or at once when every server
    /// refused it with a 4xx status); a server that failed this many times in a row is down.
    int attempts_per_server = 3;
    /// A failed server rests this long before it gets requests again, doubling with each
    /// further failure up to max_rest.
    std::chrono::milliseconds first_rest{500};
    std::chrono::milliseconds max_rest{30000};
};

/// Starts the engine's threads (concurrency × servers workers). Nothing is sent before the first
/// submit(). Throws mtdesk::Error naming the problem for no server, a malformed URL, an empty
/// model name or a concurrency below 1. Destroying it cancels every job (on_done is called for
/// each) and closes the connections.
std::unique_ptr<TranslationEngine> make_remote_engine(const RemoteOptions& options);

/// "2 servers: gpu1:8000, gpu2:8000", as statistics() reports the device.
std::string describe_servers(const std::vector<std::string>& labels);

}  // namespace mtdesk::remote
