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
// after a rest probes the server again). A server that has not answered its model list yet
// (RemoteOptions::unverified) gets no request until it does; its list is asked for again and
// again. A request ends after read_timeout of silence, after kAnswerDeadlineFactor × read_timeout
// altogether (a server trickling its answer), or after the max_tokens it asked for (a server
// that goes on is cut off and the answer marked as reaching the limit). The job queue and the
// window use it like the local engines.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mtdesk/translate/prompt.h"
#include "mtdesk/translate/translation_engine.h"

namespace mtdesk::remote {

/// An answer taking longer than this many read timeouts altogether is abandoned (and sent to
/// another server): a server that trickles text never stays silent long enough to time out.
constexpr int kAnswerDeadlineFactor = 4;

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
    /// Servers (indices into `servers`) that have not answered GET /v1/models yet: they get no
    /// request until they do. Their model list is asked for again after a rest (first_rest,
    /// doubling up to max_rest), within probe_timeout. At least one server must be left out.
    std::vector<std::size_t> unverified;
    /// Connect and read timeout of those model-list requests.
    std::chrono::milliseconds probe_timeout{10000};
    /// Called with a line about a server when it fails while others carry on, and when an
    /// unverified server answers; on the engine's threads, without its locks. Optional.
    std::function<void(const std::string& message)> on_notice;
};

/// Starts the engine's threads (concurrency × servers workers, and one per unverified server,
/// which asks for its model list at once). Nothing else is sent before the first submit().
/// Throws mtdesk::Error naming the problem for no server, a malformed URL, an empty model
/// name, a concurrency below 1, or every server unverified (or an index out of range). Destroying
/// it cancels every job (on_done is called for each) and closes the connections.
std::unique_ptr<TranslationEngine> make_remote_engine(const RemoteOptions& options);

/// "2 servers: gpu1:8000, gpu2:8000", as statistics() reports the device.
std::string describe_servers(const std::vector<std::string>& labels);

}  // namespace mtdesk::remote
