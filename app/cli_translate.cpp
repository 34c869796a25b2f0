// mtdesk translate: stdin -> stdout, or files -> translated copies next to them.

#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>
#include <limits>
#include <optional>
#include <string>

#include "cli_commands.h"
#include "cli_translate_remote.h"
#include "demo_model.h"
#include "documents/document.h"
#include "documents/placeholders.h"
#include "engine_options.h"
#include "job_queue.h"
#include "mtdesk/cuda/cuda_engine.h"
#include "mtdesk/error.h"
#include "mtdesk/quant/tiers.h"
#include "mtdesk/translate/detect.h"
#include "mtdesk/translate/glossary.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/translation_engine.h"
#include "mtdesk/translate/translator.h"
#include "output_path.h"
#include "progress_bar.h"
#include "stdin_translation.h"
#include "trained_pairs.h"

namespace mtdesk::app {
namespace {

const Language* language_option(const QCommandLineParser& p, const QString& name) {
    if (!p.isSet(name)) return nullptr;
    const std::string value = p.value(name).toStdString();
    const Language* l = find_language(value);
    if (!l)
        throw UsageError("unknown language '" + value + "' for --" + name.toStdString() +
                         " (see 'mtdesk languages')");
    return l;
}

std::string model_option(const QCommandLineParser& p) {
    return p.isSet(QStringLiteral("model")) ? p.value(QStringLiteral("model")).toStdString()
                                            : default_model_dir();
}

// --formatted as given: true (yes), false (no), or nullopt (auto).
std::optional<bool> formatted_option(const QCommandLineParser& p) {
    const QString when = p.value(QStringLiteral("formatted"));
    if (when == QLatin1String("yes")) return true;
    if (when == QLatin1String("no")) return false;
    if (when != QLatin1String("auto"))
        throw UsageError("--formatted must be yes, no or auto, got '" + when.toStdString() + "'");
    return std::nullopt;
}

// Whether tagged segments (inline markup) go to the model whole with HY-MT1.5's formatted
// prompt. Models not trained with it (the demo model) answer it with nonsense. `style`: the
// prompt style the model is opened with.
bool use_formatted_prompt(std::optional<bool> formatted, const std::string& model_dir,
                          PromptStyle style) {
    if (formatted == false) return false;
    if (formatted == true) {
        if (style != PromptStyle::HyMt15)
            throw UsageError("--formatted yes needs an HY-MT1.5 model (see --prompt-style)");
        return true;
    }
    const QString name = QDir(QString::fromStdString(model_dir)).dirName();
    return style == PromptStyle::HyMt15 &&
           name.contains(QLatin1String("HY-MT"), Qt::CaseInsensitive);
}

// The sampling and length options as given. Read before a model loads, so that a wrong value
// is reported at once rather than after the loading.
struct SamplingOptions {
    bool greedy = false;
    std::optional<float> temperature, top_p, repetition_penalty;
    std::optional<int> top_k;
    std::optional<uint64_t> seed;
    int max_new_tokens = 1024;
};

SamplingOptions sampling_options(const QCommandLineParser& p) {
    SamplingOptions o;
    o.greedy = p.isSet(QStringLiteral("greedy"));
    // Whole numbers must be whole and in range ("1e10" is not a token count); the others
    // finite (a temperature of inf or nan would reach the sampler).
    auto real = [&](const char* name) -> std::optional<float> {
        const QString key = QString::fromLatin1(name);
        if (!p.isSet(key)) return std::nullopt;
        bool ok = false;
        const double v = p.value(key).toDouble(&ok);
        if (!ok || !std::isfinite(v) || std::abs(v) > 1e30)
            throw UsageError(std::string("--") + name + " needs a finite number, got '" +
                             p.value(key).toStdString() + "'");
        return static_cast<float>(v);
    };
    auto given = [&](const char* name) {
        return ", got '" + p.value(QString::fromLatin1(name)).toStdString() + "'";
    };
    constexpr long long kIntMax = std::numeric_limits<int>::max();
    o.temperature = real("temperature");
    if (o.temperature && *o.temperature < 0)
        throw UsageError("--temperature must be >= 0 (0 = greedy)" + given("temperature"));
    if (p.isSet(QStringLiteral("top-k")))
        o.top_k = static_cast<int>(whole_number_option(p, "top-k", 0, kIntMax));
    o.top_p = real("top-p");
    if (o.top_p && !(*o.top_p > 0 && *o.top_p <= 1))
        throw UsageError("--top-p must be in (0, 1] (1 = off)" + given("top-p"));
    o.repetition_penalty = real("repetition-penalty");
    if (o.repetition_penalty && !(*o.repetition_penalty > 0))
        throw UsageError("--repetition-penalty must be > 0 (1 = off)" +
                         given("repetition-penalty"));
    if (p.isSet(QStringLiteral("seed")))  // absent: a random seed for each segment
        o.seed = static_cast<uint64_t>(
            whole_number_option(p, "seed", 0, std::numeric_limits<long long>::max()));
    o.max_new_tokens = static_cast<int>(whole_number_option(p, "max-tokens", 1, kIntMax));
    return o;
}

// `sp` (the model's recommended sampling) with the options applied.
SamplingParams apply_sampling_options(SamplingParams sp, const SamplingOptions& o) {
    if (o.greedy) sp = SamplingParams::greedy_decoding();
    if (o.temperature) sp.temperature = *o.temperature;
    if (o.top_k) sp.top_k = *o.top_k;
    if (o.top_p) sp.top_p = *o.top_p;
    if (o.repetition_penalty) sp.repetition_penalty = *o.repetition_penalty;
    if (o.seed) sp.seed = *o.seed;
    // A sampling option asks for sampling, also on a model whose generation_config.json
    // recommends greedy decoding (the bundled demo model); --greedy wins.
    if (!o.greedy && (o.temperature || o.top_k || o.top_p)) sp.greedy = false;
    if (o.temperature && *o.temperature == 0.0f)
        sp.greedy = true;  // temperature 0 means "no randomness", as in llama.cpp
    return sp;
}

/// Submits a job and waits for its outcome.
JobOutcome run_job(TranslationEngine& engine, TranslationJob job) {
    auto promise = std::make_shared<std::promise<JobOutcome>>();
    std::future<JobOutcome> future = promise->get_future();
    JobCallbacks cb;
    cb.on_done = [promise](const JobOutcome& o) { promise->set_value(o); };
    engine.submit(std::move(job), std::move(cb));
    return future.get();
}

}  // namespace

void warn_missing_terms(const std::string& where, const std::vector<GlossaryEntry>& missing) {
    if (missing.empty()) return;
    std::string terms;
    for (const GlossaryEntry& e : missing)
        terms += (terms.empty() ? "\"" : ", \"") + e.source + "\" -> \"" + e.target + "\"";
    std::fprintf(stderr, "mtdesk: %s: glossary term%s missing from the translation: %s\n",
                 where.c_str(), missing.size() > 1 ? "s" : "", terms.c_str());
}

void report_document_checks(const QString& file, int placeholder_issues,
                            const QList<PlaceholderNote>& notes, int marked_for_review) {
    if (placeholder_issues > 0) {
        std::string detail;
        for (const PlaceholderNote& note : notes.mid(0, 3)) {
            std::string what;
            for (const QString& m : note.missing)
                what += (what.empty() ? "lost " : ", ") + m.toStdString();
            for (const QString& a : note.added)
                what += (what.empty() ? "added " : ", added ") + a.toStdString();
            detail += (detail.empty() ? "" : "; ") + std::string("segment ") +
                      std::to_string(note.segment) + ": " + what;
        }
        if (placeholder_issues > 3) detail += "; ...";
        std::fprintf(stderr, "mtdesk: %s: %d segment%s may have lost placeholders (%s)\n",
                     qPrintable(file), placeholder_issues, placeholder_issues > 1 ? "s" : "",
                     detail.c_str());
    }
    if (marked_for_review > 0)
        std::fprintf(stderr,
                     "mtdesk: %s: %d entr%s marked fuzzy with the source text kept (the "
                     "translation was empty, or changed placeholders or line breaks)\n",
                     qPrintable(file), marked_for_review, marked_for_review == 1 ? "y" : "ies");
}

void warn_about_source(const std::vector<std::string>& langs, const Language* from,
                       const Language& to, std::string_view text, const std::string& where) {
    bool detected = false;
    if (!from && !text.empty()) {
        const Detection d = detect_source_language(text);
        if (d.reliable && d.language->code == to.code) {
            // Then the pair is no pair: the untrained-pair warning would only confuse.
            std::fprintf(stderr,
                         "mtdesk: warning: %sthe input already looks like %s, the target "
                         "language; it is translated anyway\n",
                         where.empty() ? "" : (where + ": ").c_str(),
                         std::string(to.english_name).c_str());
            return;
        }
        from = d.language;
        detected = from != nullptr;
    }
    if (langs.empty() || !untrained_pair(langs, from, to)) return;
    const std::string list = language_list(langs);
    const std::string source =
        from ? std::string(from->code) + (detected ? " (detected)" : "") : "(undetected)";
    std::fprintf(stderr,
                 "mtdesk: warning: %sthis model was trained for English <-> %s only; %s -> %s is "
                 "outside that, expect a poor translation\n",
                 where.empty() ? "" : (where + ": ").c_str(), list.c_str(), source.c_str(),
                 std::string(to.code).c_str());
}

int cmd_translate(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Translates text from stdin to stdout, or each FILE next to it: notes.txt into "
        "notes.<LANG>.txt (never over an existing file). Documents (.txt in any encoding, .md, "
        ".srt, .vtt, .po, .html, .docx, Qt .ts) keep their structure: only the text is "
        "translated, segment by segment. The text of a .pdf is translated into NAME.<LANG>.txt."));
    p.addHelpOption();
    QStringList formats;
    for (const std::string& ext : documents::supported_extensions())
        formats << QStringLiteral(".") + QString::fromStdString(ext);
    p.addPositionalArgument(QStringLiteral("FILE"),
                            QStringLiteral("Documents: ") + formats.join(QStringLiteral(", ")),
                            QStringLiteral("[FILE...]"));
    p.addOptions({
        {{QStringLiteral("m"), QStringLiteral("model")},
         QStringLiteral("Model directory (default: the bundled demo model)."),
         QStringLiteral("DIR")},
        {{QStringLiteral("t"), QStringLiteral("to")},
         QStringLiteral("Target language (code or name)."),
         QStringLiteral("LANG")},
        {{QStringLiteral("f"), QStringLiteral("from")},
         QStringLiteral("Source language (default: decided from the text)."),
         QStringLiteral("LANG")},
        {QStringLiteral("greedy"), QStringLiteral("Greedy decoding instead of sampling.")},
        {QStringLiteral("temperature"), QStringLiteral("Sampling temperature."),
         QStringLiteral("T")},
        {QStringLiteral("top-k"), QStringLiteral("Top-k (0 = off)."), QStringLiteral("K")},
        {QStringLiteral("top-p"), QStringLiteral("Top-p (1 = off)."), QStringLiteral("P")},
        {QStringLiteral("repetition-penalty"), QStringLiteral("Repetition penalty (1 = off)."),
         QStringLiteral("R")},
        {QStringLiteral("seed"),
         QStringLiteral("Seed for sampling: the same seed gives the same translation (default: "
                        "a random seed for each segment)."),
         QStringLiteral("N")},
        {QStringLiteral("max-tokens"), QStringLiteral("Most tokens generated per line."),
         QStringLiteral("N"), QStringLiteral("1024")},
        {QStringLiteral("prompt-style"),
         QStringLiteral("hunyuan-mt or hy-mt1.5 (default: from the model directory's name)."),
         QStringLiteral("STYLE")},
        {QStringLiteral("formatted"),
         QStringLiteral("yes, no or auto. yes: a document segment with inline markup (HTML "
                        "tags, Word formatting) is translated whole with HY-MT1.5's "
                        "formatted-translation prompt, and piece by piece only when the result "
                        "loses a tag; no: the text between the tags is translated piece by "
                        "piece. auto: yes when the model directory's name contains HY-MT (the "
                        "models trained with that prompt)."),
         QStringLiteral("WHEN"), QStringLiteral("auto")},
        {QStringLiteral("glossary"),
         QStringLiteral(
             "Glossary (terminology), a UTF-8 TSV or CSV file (.tsv: tabs, .csv: commas, other "
             "names: tabs when the first line has one). Each row is 'source<TAB>target' for the "
             "--from/--to pair, or 'src_lang<TAB>tgt_lang<TAB>source<TAB>target' (an empty "
             "language means --from/--to, or any language without them). An optional first "
             "row of column names (src_lang, tgt_lang, source, target) sets the column order; "
             "fields may be quoted as in CSV (\"a, b\", \"say \"\"hi\"\"\"). Terms found in a "
             "segment (case-insensitive, whole words) go into the model's terminology prompt "
             "(HY-MT1.5); a translation that lacks a term gets a warning on stderr."),
         QStringLiteral("FILE")},
        {QStringLiteral("no-casing-guard"),
         QStringLiteral("Keep the model's casing of brand names and acronyms. By default words "
                        "of the source such as iPhone, GitHub, macOS, NASA keep their exact "
                        "casing in the translation.")},
    });
    p.addOptions(engine_options());
    p.addOptions(remote_translate_options());
    if (!p.parse(args)) {
        std::fprintf(stderr, "mtdesk translate: %s\n", qPrintable(p.errorText()));
        return 2;
    }
    if (p.isSet(QStringLiteral("help"))) {
        std::fputs(qPrintable(command_help(p, QStringLiteral("translate"))), stdout);
        return 0;
    }
    if (!p.isSet(QStringLiteral("to"))) {
        std::fputs("mtdesk translate: --to LANG is required\n", stderr);
        return 2;
    }
    // --server: the servers' model translates, none is opened here.
    const bool remote = p.isSet(QStringLiteral("server"));
    const std::string model_dir = remote ? std::string() : model_option(p);

    PromptRequest request;
    request.target = language_option(p, QStringLiteral("to"));
    request.source = language_option(p, QStringLiteral("from"));
    if (request.source == request.target)
        throw UsageError("--from and --to are the same language (" +
                         std::string(request.target->english_name) + ")");
    std::optional<PromptStyle> style;
    if (p.isSet(QStringLiteral("prompt-style"))) {
        const QString s = p.value(QStringLiteral("prompt-style"));
        if (s == QLatin1String("hunyuan-mt"))
            style = PromptStyle::HunyuanMT;
        else if (s == QLatin1String("hy-mt1.5"))
            style = PromptStyle::HyMt15;
        else
            throw UsageError("--prompt-style must be hunyuan-mt or hy-mt1.5, got '" +
                             s.toStdString() + "'");
    }
    const SamplingOptions sampling = sampling_options(p);
    const std::optional<bool> formatted = formatted_option(p);
    // Decided before the model loads, with the prompt style it is opened with (the GPU
    // engine's is always guessed: --prompt-style is refused there).
    const bool formatted_prompt =
        !remote &&
        use_formatted_prompt(formatted, model_dir, style.value_or(guess_prompt_style(model_dir)));
    // Read before the model loads, so a broken glossary is reported at once.
    const std::string source_lang = request.source ? std::string(request.source->code) : "";
    const std::string target_lang(request.target->code);
    Glossary glossary;
    if (p.isSet(QStringLiteral("glossary")))
        glossary = Glossary::read(p.value(QStringLiteral("glossary")).toStdString(),
                                  {source_lang, target_lang});
    // Checked once the source text is read (its language detected when --from is not given).
    const std::vector<std::string> trained =
        remote ? std::vector<std::string>{} : trained_languages(model_dir);
    if (request.source) warn_about_source(trained, request.source, *request.target, {}, {});
    // The GPU's batching engine when there is one, else the CPU engine's worker thread.
    std::unique_ptr<TranslationEngine> engine =
        remote ? nullptr : open_gpu_engine(p, model_dir, style ? "--prompt-style" : nullptr);
    if (!engine && !remote) engine = make_cpu_engine(open_cpu_translator(p, model_dir, style));
    const Translator* translator = engine ? engine->translator() : nullptr;
    note_assumed_chat_template(translator, model_dir);
    // One segment of a document.
    auto translate_one = [&](const PromptRequest& r, const TranslateOptions& o) {
        const JobOutcome out = run_job(*engine, TranslationJob{r, o});
        if (out.status != JobOutcome::Status::Done) throw Error(out.error);
        TranslationResult result;
        result.text = out.text;
        result.prompt_tokens = out.prompt_tokens;
        result.missing_terms = Glossary::check(out.text, Glossary::entries_in(r.text, r.glossary));
        return result;
    };

    TranslateOptions options;
    // Servers: the published recommendation of Hunyuan-MT and HY-MT1.5 (their
    // generation_config.json is not at hand here).
    options.sampling = apply_sampling_options(
        translator ? translator->recommended_sampling() : SamplingParams::hunyuan_mt(), sampling);
    options.max_new_tokens = sampling.max_new_tokens;
    options.casing_guard = !p.isSet(QStringLiteral("no-casing-guard"));
    if (remote) return translate_through_servers(p, request, glossary, options, style);

    const QStringList files = p.positionalArguments();
    if (files.isEmpty()) {
        StdinTranslation what{request, &glossary, options, {}};
        if (!request.source)
            what.on_first_text = [&](std::string_view text) {
                warn_about_source(trained, nullptr, *request.target, text, "stdin");
            };
        return translate_stdin(*engine, what);
    }
    ProgressBar bar(stderr, isatty(fileno(stderr)) != 0);
    const QString target_code = QString::fromUtf8(
        request.target->code.data(), static_cast<qsizetype>(request.target->code.size()));
    int failures = 0;
    for (const QString& file : files) {
        try {
            if (QFileInfo(file).isDir())
                throw FileError(file.toStdString(),
                                "is a folder: the command line takes files (the window takes "
                                "folders too)");
            const documents::DocumentFormat* format = nullptr;
            documents::Document doc = documents::read_document(file, &format);
            check_output_folder(file);  // before the translation, not after it
            doc.target_language = target_lang;
            if (!request.source)
                warn_about_source(trained, nullptr, *request.target,
                                  documents::detection_sample(doc), file.toStdString());
            bar.start(file.toStdString(), doc.segments.size());
            auto progress = [&](std::size_t done, std::size_t total) { bar.update(done, total); };
            std::vector<std::pair<std::size_t, std::vector<GlossaryEntry>>> missing;
            std::size_t segment_number = 0;
            const std::vector<std::string> translations = documents::translate_segments(
                doc,
                [&](const std::string& segment, bool formatted) {
                    PromptRequest r = request;
                    r.text = segment;
                    // Segments with format tags (HTML inline markup, Word runs): HY-MT1.5's
                    // formatted prompt; a result that loses a tag is redone run by run.
                    r.formatted = formatted;
                    r.glossary = glossary.matching_entries(segment, source_lang, target_lang);
                    TranslationResult result = translate_one(r, options);
                    ++segment_number;
                    if (!result.missing_terms.empty())
                        missing.emplace_back(segment_number, std::move(result.missing_terms));
                    return result.text;
                },
                progress, formatted_prompt);
            bar.finish();
            for (const auto& [number, entries] : missing)  // after the progress line
                warn_missing_terms(file.toStdString() + ": segment " + std::to_string(number),
                                   entries);
            const QByteArray out = format->write(doc, translations);
            const QString target = translated_output_path(
                file, target_code, QString::fromStdString(format->output_extension()));
            write_new_file_atomically(target, out);
            std::fprintf(stderr, "%s -> %s (%zu segment%s, %s)\n", qPrintable(file),
                         qPrintable(target), doc.segments.size(),
                         doc.segments.size() == 1 ? "" : "s",
                         format_duration(bar.elapsed()).c_str());
            const std::vector<documents::PlaceholderIssue> issues =
                documents::check_placeholders(doc, translations);
            QList<PlaceholderNote> notes;
            for (std::size_t k = 0; k < issues.size() && k < 3; ++k)
                notes.append(PlaceholderNote::of(issues[k]));
            report_document_checks(
                file, static_cast<int>(issues.size()), notes,
                static_cast<int>(format->entries_marked_for_review(doc, translations)));
        } catch (const FileError& e) {
            // One broken file does not stop the others.
            bar.finish();
            std::fprintf(stderr, "mtdesk: %s\n", e.what());
            ++failures;
        } catch (const Error& e) {
            bar.finish();
            std::fprintf(stderr, "mtdesk: %s: %s\n", qPrintable(file), e.what());
            ++failures;
        }
    }
    return failures ? 1 : 0;
}

}  // namespace mtdesk::app
