// A load test of `mtdesk serve` from a second process on loopback, bounded in count and time:
// tools/bench/serve_load sends clients × requests chat completions at once (streamed and whole
// in turn) and checks each answer against `mtdesk translate`'s for the same segment. Zero
// errors and zero wrong answers are required; the figures are printed.

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/prompt.h"
#include "mtdesk/translate/translator.h"
#include "serve_process.h"

using namespace mtdesk;
using json = nlohmann::json;

// QCOMPARE cannot take nlohmann::json (Qt's overloads make it try conversions json refuses).
#define JSON_EQ(actual, expected)    \
    QVERIFY2((actual) == (expected), \
             ("got " + json(actual).dump() + ", expected " + json(expected).dump()).c_str())

namespace {

const QString kLoadTool = QStringLiteral(MTDESK_BINARY_DIR "/tests/serve_load");
const char* kKey = "load-key";

}  // namespace

class TestServeLoad : public QObject {
    Q_OBJECT

  private slots:
    void loadFromSecondProcess() {
        // Segments and their answers from the local engine (`mtdesk translate --greedy`).
        const std::vector<std::pair<const char*, std::vector<const char*>>> by_target = {
            {"de", {"Open the file", "Group permissions", "Show hidden files"}},
            {"fr", {"Save changes before closing?", "Delete this account"}},
            {"es", {"The printer is out of paper", "Open the file"}},
            {"it", {"Group permissions"}},
        };
        const PromptStyle style = guess_prompt_style(kDemoModel.toStdString());
        json prompts = json::array();
        for (const auto& [target, segments] : by_target) {
            QByteArray input;
            for (const char* s : segments)
                input += QByteArray(s) + "\n";
            QProcess cli;
            cli.start(kMtdeskBinary, {"translate", "--model", kDemoModel, "--greedy", "--from",
                                      "en", "--to", target});
            cli.write(input);
            cli.closeWriteChannel();
            QVERIFY(cli.waitForFinished(120000));
            QCOMPARE(cli.exitCode(), 0);
            const QList<QByteArray> lines = cli.readAllStandardOutput().split('\n');
            QVERIFY(lines.size() >= static_cast<qsizetype>(segments.size()));
            for (std::size_t i = 0; i < segments.size(); ++i) {
                PromptRequest r;
                r.text = segments[i];
                r.source = find_language("en");
                r.target = find_language(target);
                QVERIFY(!lines[static_cast<qsizetype>(i)].isEmpty());
                prompts.push_back({{"prompt", build_translation_prompt(r, style)},
                                   {"expect", lines[static_cast<qsizetype>(i)].toStdString()}});
            }
        }
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString prompts_file = dir.filePath(QStringLiteral("prompts.json"));
        {
            QFile f(prompts_file);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(prompts.dump()));
        }

        ServeProcess server;
        QVERIFY2(server.start({"--model", kDemoModel, "--api-key", kKey, "--quiet"}),
                 qPrintable(server.error()));
        const int clients = 6, requests = 4;
        QProcess load;
        load.start(kLoadTool, {"--port", QString::number(server.port()), "--api-key", kKey,
                               "--model", "mtdesk-demo", "--clients", QString::number(clients),
                               "--requests", QString::number(requests), "--max-tokens", "64",
                               "--timeout-s", "300", "--prompts", prompts_file});
        QVERIFY(load.waitForFinished(330000));
        const QByteArray out = load.readAllStandardOutput();
        qInfo().noquote() << "serve_load:" << out;
        const json report = json::parse(out.toStdString(), nullptr, false);
        QVERIFY2(report.is_object(), load.readAllStandardError().constData());
        JSON_EQ(report["requests"], clients * requests);
        JSON_EQ(report["completed"], clients * requests);
        JSON_EQ(report["errors"], 0);
        JSON_EQ(report["mismatches"], 0);
        JSON_EQ(report["streamed"], clients * requests / 2);
        QVERIFY(report["requests_per_s"].get<double>() > 0);
        QVERIFY(report["latency_ms"]["p95"].get<double>() >=
                report["latency_ms"]["p50"].get<double>());
        QVERIFY(report["completion_tokens"].get<int>() > 0);
        QCOMPARE(load.exitCode(), 0);
        QCOMPARE(server.stop(), 0);
    }
};

QTEST_GUILESS_MAIN(TestServeLoad)
#include "test_serve_load.moc"
