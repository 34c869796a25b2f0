// mtdesk translate: stdin -> stdout, or files -> translated copies next to them.

#include <QCommandLineParser>
#include <QFile>

#include <unistd.h>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>

#include "cli_commands.h"
#include "demo_model.h"
#include "documents/document.h"
#include "mtdesk/error.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/translator.h"
#include "output_path.h"

namespace mtdesk::app {
namespace {

const Language* language_option(const QCommandLineParser& p, const QString& name) {
    if (!p.isSet(name)) return nullptr;
    const std::string value = p.value(name).toStdString();
    const Language* l = find_language(value);
    if (!l)
        throw Error("unknown language '" + value + "' for --" + name.toStdString() +
                    " (see 'mtdesk languages')");
    return l;
}

// Reads all of stdin; text only (a NUL byte means binary data piped in by mistake).
std::string read_stdin() {
    std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    if (text.find('\0') != std::string::npos)
        throw FileError("stdin", "looks like binary data (it contains NUL bytes), not text");
    return text;
}

std::string model_option(const QCommandLineParser& p) {
    return p.isSet(QStringLiteral("model")) ? p.value(QStringLiteral("model")).toStdString()
                                            : default_model_dir();
}

}  // namespace

int cmd_translate(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Translates text from stdin to stdout, or each FILE into FILE.<LANG>.<ext> next to it "
        "(never over an existing file). Documents (.txt in any encoding, .md, .srt, .vtt, .po) "
        "keep their structure: only the text is translated, segment by segment."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("FILE"),
                            QStringLiteral("Documents: .txt, .md, .srt, .vtt, .po"),
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
        {QStringLiteral("seed"), QStringLiteral("Random seed for sampling."), QStringLiteral("N"),
         QStringLiteral("0")},
        {QStringLiteral("max-tokens"), QStringLiteral("Most tokens generated per line."),
         QStringLiteral("N"), QStringLiteral("1024")},
        {QStringLiteral("prompt-style"),
         QStringLiteral("hunyuan-mt or hy-mt1.5 (default: from the model directory's name)."),
         QStringLiteral("STYLE")},
    });
    if (!p.parse(args)) {
        std::fprintf(stderr, "mtdesk translate: %s\n", qPrintable(p.errorText()));
        return 2;
    }
    if (p.isSet(QStringLiteral("help"))) {
        std::fputs(qPrintable(p.helpText()), stdout);
        return 0;
    }
    if (!p.isSet(QStringLiteral("to"))) {
        std::fputs("mtdesk translate: --to LANG is required\n", stderr);
        return 2;
    }
    const std::string model_dir = model_option(p);

    PromptRequest request;
    request.target = language_option(p, QStringLiteral("to"));
    request.source = language_option(p, QStringLiteral("from"));
    if (request.source == request.target)
        throw Error("--from and --to are the same language (" +
                    std::string(request.target->english_name) + ")");

    std::optional<PromptStyle> style;
    if (p.isSet(QStringLiteral("prompt-style"))) {
        const QString s = p.value(QStringLiteral("prompt-style"));
        if (s == QLatin1String("hunyuan-mt"))
            style = PromptStyle::HunyuanMT;
        else if (s == QLatin1String("hy-mt1.5"))
            style = PromptStyle::HyMt15;
        else
            throw Error("--prompt-style must be hunyuan-mt or hy-mt1.5");
    }
    auto translator = Translator::open_cpu(model_dir, style);

    TranslateOptions options;
    options.sampling = p.isSet(QStringLiteral("greedy")) ? SamplingParams::greedy_decoding()
                                                         : translator->recommended_sampling();
    auto number = [&](const char* name, auto& field) {
        const QString key = QString::fromLatin1(name);
        if (!p.isSet(key)) return;
        bool ok = false;
        const double v = p.value(key).toDouble(&ok);
        if (!ok) throw Error(std::string("--") + name + " needs a number");
        field = static_cast<std::remove_reference_t<decltype(field)>>(v);
    };
    number("temperature", options.sampling.temperature);
    number("top-k", options.sampling.top_k);
    number("top-p", options.sampling.top_p);
    number("repetition-penalty", options.sampling.repetition_penalty);
    number("seed", options.sampling.seed);
    number("max-tokens", options.max_new_tokens);
    // Checked here so the messages name the options the user typed.
    SamplingParams& sp = options.sampling;
    if (p.isSet(QStringLiteral("temperature")) && sp.temperature == 0.0f)
        sp.greedy = true;  // temperature 0 means "no randomness", as in llama.cpp
    if (sp.temperature < 0) throw Error("--temperature must be >= 0 (0 = greedy)");
    if (sp.top_k < 0) throw Error("--top-k must be >= 0 (0 = off)");
    if (!(sp.top_p > 0 && sp.top_p <= 1)) throw Error("--top-p must be in (0, 1] (1 = off)");
    if (!(sp.repetition_penalty > 0)) throw Error("--repetition-penalty must be > 0 (1 = off)");
    if (options.max_new_tokens < 1) throw Error("--max-tokens must be at least 1");

    const QStringList files = p.positionalArguments();
    if (files.isEmpty()) {
        request.text = read_stdin();
        translator->translate_lines(request, options, [](std::string_view piece) {
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            std::fflush(stdout);
            return true;
        });
        return 0;
    }
    const bool show_progress = isatty(fileno(stderr)) != 0;
    const QString target_code = QString::fromUtf8(
        request.target->code.data(), static_cast<qsizetype>(request.target->code.size()));
    int failures = 0;
    for (const QString& file : files) {
        bool progress_open = false;  // a progress line waits for its end
        try {
            const documents::DocumentFormat* format = nullptr;
            const documents::Document doc = documents::read_document(file, &format);
            const QByteArray name = file.toLocal8Bit();
            auto progress = [&](std::size_t done, std::size_t total) {
                if (!show_progress) return;
                std::fprintf(stderr, "\r%s: %zu/%zu segments", name.constData(), done, total);
                progress_open = true;
            };
            progress(0, doc.segments.size());
            const std::vector<std::string> translations = documents::translate_segments(
                doc,
                [&](const std::string& segment) {
                    PromptRequest r = request;
                    r.text = segment;
                    return translator->translate(r, options).text;
                },
                progress);
            if (progress_open) std::fputs("\n", stderr);
            progress_open = false;
            const QByteArray out = format->write(doc, translations);
            const QString target = translated_output_path(file, target_code);
            write_new_file_atomically(target, out);
            std::fprintf(stderr, "%s -> %s\n", qPrintable(file), qPrintable(target));
        } catch (const FileError& e) {
            // One broken file does not stop the others.
            if (progress_open) std::fputs("\n", stderr);
            std::fprintf(stderr, "mtdesk: %s\n", e.what());
            ++failures;
        } catch (const Error& e) {
            if (progress_open) std::fputs("\n", stderr);
            std::fprintf(stderr, "mtdesk: %s: %s\n", qPrintable(file), e.what());
            ++failures;
        }
    }
    return failures ? 1 : 0;
}

}  // namespace mtdesk::app
