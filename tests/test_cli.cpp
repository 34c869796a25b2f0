// The mtdesk executable end to end, on a tiny transformers-made fixture model: the real
// tokenizer, chat template, prompt, CPU forward pass and generation.

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include "documents/document.h"
#include "mtdesk/cuda/cuda_engine.h"
#include "mtdesk/error.h"
#include "mtdesk/translate/translator.h"

using namespace mtdesk;

namespace {

const QString kBinary = QStringLiteral(MTDESK_BINARY_DIR "/app/mtdesk");
const QString kModel = QStringLiteral(MTDESK_TEST_DATA_DIR "/models/hunyuan-gqa-alpha");

struct Run {
    int code = -1;
    QByteArray out, err;
};

Run run(const QStringList& args, const QByteArray& input = {},
        const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(kBinary, args);
    p.write(input);
    p.closeWriteChannel();
    if (!p.waitForFinished(120000)) p.kill();
    return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
}

void write_file(const QString& path, const QByteArray& data) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(data);
}

QByteArray read_file(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestCli : public QObject {
    Q_OBJECT

  private slots:
    void usage() {
        Run r = run({});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("translate"));
        r = run({"frobnicate"});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("unknown command"));
        r = run({"translate", "--model", kModel});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("--to"));
    }

    // A command line that is wrong in itself exits 2 in every command, and is reported before
    // any model is looked at (the model directory here does not exist); a file, model or
    // translation that fails exits 1.
    void exitCodes_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        const QString none = QStringLiteral("/nonexistent/mtdesk-model");
        const QStringList t = {"translate", "--model", none, "--device", "cpu", "--to", "de"};
        const QString server = QStringLiteral("http://127.0.0.1:9");
        auto row = [](const char* name, const QStringList& args, int code, const char* message) {
            QTest::newRow(name) << args << code << QString::fromUtf8(message);
        };
        row("translate --top-p 7", t + QStringList{"--top-p", "7"}, 2,
            "mtdesk translate: --top-p must be in (0, 1] (1 = off), got '7'");
        row("translate --temperature x", t + QStringList{"--temperature", "x"}, 2,
            "--temperature needs a finite number, got 'x'");
        row("translate --temperature -1", t + QStringList{"--temperature", "-1"}, 2,
            "--temperature must be >= 0");
        row("translate --repetition-penalty 0", t + QStringList{"--repetition-penalty", "0"}, 2,
            "--repetition-penalty must be > 0");
        row("translate --max-tokens 0", t + QStringList{"--max-tokens", "0"}, 2,
            "--max-tokens needs a whole number from 1 to 2147483647, got '0'");
        row("translate --prompt-style foo", t + QStringList{"--prompt-style", "foo"}, 2,
            "--prompt-style must be hunyuan-mt or hy-mt1.5, got 'foo'");
        row("translate --formatted maybe", t + QStringList{"--formatted", "maybe"}, 2,
            "--formatted must be yes, no or auto, got 'maybe'");
        row("translate --formatted yes, Hunyuan-MT",
            t + QStringList{"--formatted", "yes", "--prompt-style", "hunyuan-mt"}, 2,
            "--formatted yes needs an HY-MT1.5 model");
        row("translate --to klingon", QStringList{"translate", "--model", none, "--to", "klingon"},
            2, "unknown language 'klingon' for --to");
        row("translate --from klingon", t + QStringList{"--from", "klingon"}, 2,
            "unknown language 'klingon' for --from");
        row("translate --from = --to", t + QStringList{"--from", "German"}, 2,
            "--from and --to are the same language (German)");
        row("translate without --to", QStringList{"translate", "--model", none}, 2,
            "--to LANG is required");
        row("translate unknown option", t + QStringList{"--frobnicate"}, 2,
            "Unknown option 'frobnicate'");
        row("translate --device gpu",
            QStringList{"translate", "--model", none, "--device", "gpu", "--to", "de"}, 2,
            "--device gpu: the device must be auto, cpu, cuda or cuda:N");
        row("translate --tier int3", t + QStringList{"--tier", "int3"}, 2,
            "--tier int3: the tiers are");
        row("translate --kv-cache fp8", t + QStringList{"--kv-cache", "fp8"}, 2,
            "--kv-cache must be 16bit or int8, got 'fp8'");
        row("translate --max-batch 0", t + QStringList{"--max-batch", "0"}, 2,
            "--max-batch needs a whole number from 1 to 1024");
        row("translate --server and --model", t + QStringList{"--server", server}, 2,
            "--model and --server exclude each other");
        row("translate --concurrency 0",
            QStringList{"translate", "--to", "de", "--server", server, "--concurrency", "0"}, 2,
            "--concurrency needs a number from 1 to 256, got '0'");
        row("translate --timeout inf",
            QStringList{"translate", "--to", "de", "--server", server, "--timeout", "inf"}, 2,
            "--timeout needs a positive number of seconds, got 'inf'");
        row("models inspect --batch 0", QStringList{"models", "inspect", none, "--batch", "0"}, 2,
            "mtdesk models: --batch needs a whole number from 1 to 1024, got '0'");
        row("models inspect --kv-cache fp8",
            QStringList{"models", "inspect", none, "--kv-cache", "fp8"}, 2,
            "mtdesk models: --kv-cache must be 16bit or int8");
        row("models frobnicate", QStringList{"models", "frobnicate"}, 2,
            "usage: mtdesk models inspect");
        row("serve --port 70000", QStringList{"serve", "--model", none, "--port", "70000"}, 2,
            "mtdesk serve: --port must be a whole number from 0 to 65535, got '70000'");
        row("serve --max-tokens 0", QStringList{"serve", "--model", none, "--max-tokens", "0"}, 2,
            "--max-tokens must be a whole number from 1 to 1073741824, got '0'");
        row("serve --tier int3",
            QStringList{"serve", "--model", none, "--device", "cpu", "--tier", "int3"}, 2,
            "mtdesk serve: --tier int3: the tiers are");
        row("serve with an argument", QStringList{"serve", "--model", none, "extra"}, 2,
            "takes no arguments");
        row("bench --sampling foo", QStringList{"bench", "--model", none, "--sampling", "foo"}, 2,
            "mtdesk bench: --sampling must be greedy or hy-mt");
        row("bench --batch 0", QStringList{"bench", "--model", none, "--batch", "0"}, 2,
            "--batch needs positive whole numbers, got '0'");
        row("bench --tier fp64", QStringList{"bench", "--model", none, "--tier", "fp64"}, 2,
            "--tier must be bf16, fp16, int8 or int4");
        row("bench --skip mlp", QStringList{"bench", "--model", none, "--skip", "mlp"}, 2,
            "--skip: unknown step operation \"mlp\"");
        row("languages extra", QStringList{"languages", "extra"}, 2, "Usage: mtdesk languages");

        row("translate, no model", t, 1, "model directory does not exist");
        row("translate, a missing file",
            QStringList{"translate", "--model", kModel, "--device", "cpu", "--to", "de",
                        none + QStringLiteral("/notes.txt")},
            1, "notes.txt");
        row("translate, a missing glossary", t + QStringList{"--glossary", none + "/terms.tsv"}, 1,
            "terms.tsv");
        row("models inspect, no model", QStringList{"models", "inspect", none}, 1,
            "model directory does not exist");
        row("serve, no model", QStringList{"serve", "--model", none, "--device", "cpu"}, 1,
            "model directory does not exist");
    }
    void exitCodes() {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, message);
        const Run r = run(args, "Open the file\n");
        QVERIFY2(r.code == code, qPrintable(QString::number(r.code) + ": " + r.err));
        QVERIFY2(r.err.contains(message.toUtf8()), r.err.constData());
        QVERIFY2(r.out.isEmpty(), r.out.constData());
    }

    // Output that cannot be written (a full disk: /dev/full) is an error with a message, never
    // a success; a translation stops at the first line that cannot be written.
    void writeErrorsFail() {
        if (!QFileInfo::exists(QStringLiteral("/dev/full"))) QSKIP("no /dev/full here");
        auto to_full = [](const QStringList& args, const QByteArray& input = {}) {
            QProcess p;
            p.setStandardOutputFile(QStringLiteral("/dev/full"));
            p.start(kBinary, args);
            p.write(input);
            p.closeWriteChannel();
            if (!p.waitForFinished(120000)) p.kill();
            return Run{p.exitCode(), {}, p.readAllStandardError()};
        };
        for (const QStringList& args :
             {QStringList{"languages"}, QStringList{"--help"}, QStringList{"translate", "--help"},
              QStringList{"models", "inspect", kModel, "--json"}}) {
            const Run r = to_full(args);
            QVERIFY2(r.code == 1, qPrintable(args.join(' ')));
            QVERIFY2(r.err.contains("cannot write to stdout: No space left on device"),
                     r.err.constData());
        }
        const Run r = to_full({"translate", "--model", kModel, "--to", "de", "--device", "cpu"},
                              "Open the file\nSave the file\n");
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("cannot write to stdout: No space left on device"),
                 r.err.constData());
    }

    // The bundled demo model recommends greedy decoding; a sampling option asks for sampling
    // (a seed then gives its own draw), --greedy still wins. A line cut at the token limit is
    // named on stderr.
    void samplingOptionsAndCutLines() {
        const QByteArray line = "The operation was cancelled by the user.\n";
        auto sampled = [&](const char* seed) {
            return run({"translate", "--to", "de", "--device", "cpu", "--temperature", "5",
                        "--top-k", "0", "--top-p", "1", "--seed", seed},
                       line);
        };
        const Run a = sampled("1"), b = sampled("2"), again = sampled("1");
        QCOMPARE(a.code, 0);
        QCOMPARE(a.out, again.out);
        QVERIFY2(a.out != b.out, a.out.constData());
        const Run greedy = run({"translate", "--to", "de", "--device", "cpu"}, line);
        const Run forced = run({"translate", "--to", "de", "--device", "cpu", "--greedy",
                                "--temperature", "5", "--seed", "2"},
                               line);
        QCOMPARE(forced.out, greedy.out);
        QVERIFY(!greedy.err.contains("token limit"));
        const Run cut =
            run({"translate", "--to", "de", "--device", "cpu", "--max-tokens", "2"}, line);
        QCOMPARE(cut.code, 0);
        QVERIFY2(cut.err.contains("mtdesk: stdin: line 1: the translation reached the token limit"),
                 cut.err.constData());
    }

    // A display that is named but does not answer: a message and exit 1, not Qt's abort.
    void unreachableDisplay() {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("DISPLAY"), QStringLiteral(":97"));
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        env.remove(QStringLiteral("QT_QPA_PLATFORM"));
        const Run r = run({"gui", "--model", kModel}, {}, env);
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("mtdesk: cannot open a window: the display does not answer "
                                "(DISPLAY=:97"),
                 r.err.constData());
    }

    void languages() {
        Run r = run({"languages"});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out.count('\n'), 38);
        QVERIFY(r.out.contains("bo ") && r.out.contains("Tibetan") && r.out.contains("藏语"));
        // The native names start in one column: the Chinese names (two columns a character)
        // fit their field.
        const QStringList lines = QString::fromUtf8(r.out).split('\n', Qt::SkipEmptyParts);
        const QString zh = lines.filter(QRegularExpression(QStringLiteral("^zh "))).value(0);
        const QString gu = lines.filter(QRegularExpression(QStringLiteral("^gu "))).value(0);
        QVERIFY(zh.endsWith(QStringLiteral("中文")) && gu.endsWith(QStringLiteral("ગુજરાતી")));
        auto native_column = [](const QString& line, const QString& native) {
            const qsizetype at = line.size() - native.size();
            qsizetype columns = at;
            for (qsizetype i = 0; i < at; ++i)  // a CJK character takes two columns
                columns += line[i].unicode() >= 0x4e00 && line[i].unicode() <= 0x9fff;
            return columns;
        };
        QCOMPARE(native_column(gu, QStringLiteral("ગુજરાતી")),
                 native_column(zh, QStringLiteral("中文")));
        r = run({"languages", "extra"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("Usage: mtdesk languages"), r.err.constData());
    }

    // Each command's help names it, and help needs no display, the window's included.
    void help() {
        for (const char* command : {"translate", "models", "bench", "serve"}) {
            const Run r = run({command, "--help"});
            QCOMPARE(r.code, 0);
            QVERIFY2(r.out.startsWith("Usage: mtdesk " + QByteArray(command) + " [options]"),
                     r.out.constData());
        }
        // translate's help lists every format it reads (it had left out .pot and .htm).
        const QByteArray help = run({"translate", "--help"}).out.simplified() + ' ';
        for (const std::string& ext : app::documents::supported_extensions())
            QVERIFY2(help.contains(" ." + QByteArray::fromStdString(ext) + ",") ||
                         help.contains(" ." + QByteArray::fromStdString(ext) + " "),
                     ext.c_str());
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char* var : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
            env.remove(QString::fromLatin1(var));
        Run r = run({"gui", "--help"}, {}, env);
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("--model") && r.out.contains("--screenshots"), r.out.constData());
        r = run({"gui"}, {}, env);  // the window itself does need one
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("no display"), r.err.constData());
        // The screenshot run on a model that cannot load stops with the model's error, rather
        // than waiting two minutes for a translation.
        QTemporaryDir broken, shots;
        write_file(broken.filePath(QStringLiteral("config.json")), "{");
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        r = run({"gui", "--model", broken.path(), "--screenshots", shots.path()}, {}, env);
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("config.json") && !r.err.contains("two minutes"),
                 r.err.constData());
    }

    void inspectJson() {
        const Run r = run({"models", "inspect", kModel, "--json", "--context", "4096"});
        QCOMPARE(r.code, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(j["architecture"].toString(), QStringLiteral("HunYuanDenseV1ForCausalLM"));
        QCOMPARE(j["kv_heads"].toInt(), 2);
        QCOMPARE(j["heads"].toInt(), 4);
        QVERIFY(j["rope"].toString().contains("alpha"));
        QVERIFY(j["tokenizer"].toObject()["kind"].toString().contains("tiktoken"));
        QCOMPARE(j["tokenizer"].toObject()["chat_template"].toString(), QStringLiteral("Hunyuan"));
        QVERIFY(j["files"].toArray().size() >= 2);  // this fixture is sharded
        // Without --tensors the tensors are counted, not listed (a 7B model has hundreds).
        QVERIFY(!j.contains("tensors"));
        const Run listed = run({"models", "inspect", kModel, "--json", "--tensors"});
        QCOMPARE(listed.code, 0);
        const QJsonObject jt = QJsonDocument::fromJson(listed.out).object();
        const QJsonArray tensors = jt["tensors"].toArray();
        QVERIFY(tensors.size() > 10);
        QCOMPARE(j["tensor_count"].toInteger(), tensors.size());
        qint64 by_dtype = 0;
        for (const auto& b : j["stored_bytes_by_dtype"].toObject())
            by_dtype += b.toInteger();
        QCOMPARE(by_dtype, j["stored_bytes"].toInteger());
        QVERIFY(by_dtype > 0);
        // Sum of stored tensor elements = the parameter count the config implies.
        qint64 elements = 0;
        for (const auto& t : tensors) {
            qint64 n = 1;
            for (const auto& d : t.toObject()["shape"].toArray())
                n *= d.toInteger();
            elements += n;
        }
        QCOMPARE(elements, j["parameters"].toInteger());
        const QJsonObject tiers = j["memory"].toObject()["tiers"].toObject();
        QCOMPARE(tiers.size(), 4);
        QCOMPARE(tiers["bf16"].toObject()["weights"].toInteger(), 2 * elements);
        QVERIFY(tiers["int4"].toObject()["weights"].toInteger() <
                tiers["int8"].toObject()["weights"].toInteger());

        // An int8 KV cache: 1 byte per element plus a 4-byte scale per head vector, against 2
        // bytes per element (2 layers x 2 KV heads, K and V, 4096 positions).
        const Run r8 =
            run({"models", "inspect", kModel, "--json", "--context", "4096", "--kv-cache", "int8"});
        QCOMPARE(r8.code, 0);
        const QJsonObject m8 = QJsonDocument::fromJson(r8.out).object()["memory"].toObject();
        QCOMPARE(m8["kv_cache"].toString(), QStringLiteral("int8"));
        const qint64 kv16 = tiers["bf16"].toObject()["kv_cache"].toInteger();
        const qint64 kv8 = m8["tiers"].toObject()["bf16"].toObject()["kv_cache"].toInteger();
        const qint64 head_dim = j["head_dim"].toInteger();
        QCOMPARE(kv8 * 2 * head_dim, kv16 * (head_dim + 4));
        QCOMPARE(run({"models", "inspect", kModel, "--kv-cache", "fp8"}).code, 2);

        // The budget is clamped to max positions x batch without wrapping round (it used to
        // overflow into a negative token count), and the KV cache scales with it exactly.
        const Run big = run(
            {"models", "inspect", kModel, "--json", "--context", "2147483647", "--batch", "1024"});
        QCOMPARE(big.code, 0);
        const QJsonObject mb = QJsonDocument::fromJson(big.out).object()["memory"].toObject();
        const qint64 positions = j["max_position_embeddings"].toInteger() * 1024;
        QCOMPARE(mb["context_tokens"].toInteger(), positions);
        const QJsonObject bf16 = mb["tiers"].toObject()["bf16"].toObject();
        QCOMPARE(bf16["kv_cache"].toInteger() * 4096, kv16 * positions);
        QVERIFY(bf16["kv_cache"].toInteger() < bf16["total"].toInteger());
        for (const char* bad : {"1000000", "0", "-3", "2.5", "1e3"}) {
            const Run r = run({"models", "inspect", kModel, "--batch", bad});
            QCOMPARE(r.code, 2);
            QVERIFY2(r.err.contains("--batch needs a whole number from 1 to 1024, got '" +
                                    QByteArray(bad) + "'"),
                     r.err.constData());
        }
        const Run context = run({"models", "inspect", kModel, "--context", "99999999999"});
        QCOMPARE(context.code, 2);
        QVERIFY2(context.err.contains("--context needs a whole number from 1 to 2147483647"),
                 context.err.constData());
    }

    void inspectText() {
        const Run r = run({"models", "inspect", kModel, "--tensors"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("model.layers.1.self_attn.query_layernorm.weight"));
        QVERIFY(r.out.contains("int4"));
        const Run brief = run({"models", "inspect", kModel});
        QCOMPARE(brief.code, 0);
        QVERIFY2(!brief.out.contains("query_layernorm"), brief.out.constData());
        // The count and the total: "Weights  N tensors, X MiB in 4 file(s): ..."
        QVERIFY2(QRegularExpression(QStringLiteral("Weights +\\d+ tensors, [0-9.]+ [KM]iB in 4 "
                                                   "file\\(s\\)"))
                     .match(QString::fromUtf8(brief.out))
                     .hasMatch(),
                 brief.out.constData());
    }

    // The command line prints exactly what the engine produces for the same request.
    void translateStdinMatchesEngine() {
        const QByteArray input = "Open the file\n\n  Save your changes.\n";
        const Run r = run({"translate", "--model", kModel, "--to", "zh", "--from", "en", "--greedy",
                           "--max-tokens", "12"},
                          input);
        QCOMPARE(r.code, 0);

        auto translator = Translator::open_cpu(kModel.toStdString());
        PromptRequest req;
        req.source = find_language("en");
        req.target = find_language("zh");
        TranslateOptions opt;
        opt.sampling = SamplingParams::greedy_decoding();
        opt.max_new_tokens = 12;
        req.text = "Open the file";
        const std::string first = translator->translate(req, opt).text;
        req.text = "Save your changes.";
        const std::string second = translator->translate(req, opt).text;
        const QByteArray expected = QByteArray::fromStdString(first + "\n\n  " + second + "\n");
        QCOMPARE(r.out, expected);
    }

    // Without --model the bundled demo model translates, and it really translates.
    void defaultsToTheDemoModel() {
        Run r = run({"translate", "--to", "zh"}, "Open the file\n");
        QCOMPARE(r.code, 0);
        QCOMPARE(QString::fromUtf8(r.out), QStringLiteral("打开文件\n"));
        r = run({"translate", "--to", "de", "--from", "en"}, "Could not connect to the server.\n");
        QCOMPARE(r.code, 0);
        QCOMPARE(QString::fromUtf8(r.out),
                 QStringLiteral("Verbindung zum Server nicht möglich.\n"));
        r = run({"translate", "--to", "zh", "--device", "gpu"}, "Open the file\n");
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("--device gpu: the device must be"));
        r = run({"translate", "--to", "zh", "--device", "cpu", "--tier", "int3"}, "Open\n");
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("--tier int3: the tiers are"));
        r = run({"translate", "--to", "th", "--device", "cpu", "--max-tokens", "4"}, "Open\n");
        QCOMPARE(r.code, 0);
        QVERIFY(r.err.contains("trained for English <-> zh"));  // the demo model's pairs
        // Without --from the pair is checked with the language detected in the text.
        r = run({"translate", "--to", "ja", "--device", "cpu", "--max-tokens", "4"},
                QStringLiteral("打开文件。保存更改。\n").toUtf8());
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.contains("zh (detected) -> ja is outside"), r.err.constData());
        r = run({"translate", "--to", "zh", "--device", "cpu"}, "Open the file\n");
        QVERIFY(r.err.isEmpty());
        QCOMPARE(QString::fromUtf8(r.out), QStringLiteral("打开文件\n"));
        r = run({"models", "inspect", "--json"});
        QCOMPARE(r.code, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o.value(QStringLiteral("parameters")).toDouble(), 29173248.0);
    }

    // Without --from the source is detected as the window detects it: CLD2 when it is sure,
    // else Chinese for Han-majority text, else undetected (CLD2's unsure answer for a short
    // line is English whatever the script, which hid the pair or named the wrong one). Text
    // that surely is in the target language already gets a warning of its own, once.
    void sourceLanguageWarnings() {
        const QStringList demo = {"translate", "--device", "cpu", "--max-tokens", "4"};
        Run r = run(demo + QStringList{"--to", "ja"}, QStringLiteral("保存\n").toUtf8());
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.contains("stdin: this model was trained for English <-> ") &&
                     r.err.contains("only; zh (detected) -> ja is outside that"),
                 r.err.constData());
        r = run(demo + QStringList{"--to", "th"}, QStringLiteral("Файл\n").toUtf8());
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.contains("only; (undetected) -> th is outside that"), r.err.constData());

        const QByteArray german =
            "Die Datei konnte nicht geöffnet werden, weil sie von einem anderen Programm "
            "verwendet wird.\nBitte schließen Sie das andere Programm.\n";
        const QByteArray looks_german =
            "the input already looks like German, the target language; it is translated anyway";
        r = run(demo + QStringList{"--to", "de"}, german);
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out.count('\n'), 2);  // translated all the same
        QCOMPARE(r.err.count("already looks like"), 1);
        QVERIFY2(r.err.contains("mtdesk: warning: stdin: " + looks_german), r.err.constData());
        QVERIFY2(!r.err.contains("outside that"), r.err.constData());       // de -> de is no pair
        r = run(demo + QStringList{"--to", "de", "--from", "en"}, german);  // the user said so
        QCOMPARE(r.code, 0);
        QVERIFY2(!r.err.contains("already looks like"), r.err.constData());
        r = run(demo + QStringList{"--to", "en"}, "Open\n");  // too short to be sure
        QCOMPARE(r.code, 0);
        QVERIFY2(!r.err.contains("already looks like"), r.err.constData());
        r = run(demo + QStringList{"--to", "fr"}, german);
        QVERIFY2(!r.err.contains("already looks like"), r.err.constData());
        // A document: named in the warning.
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("hinweis.txt"));
        write_file(file, german);
        r = run(demo + QStringList{"--to", "de", file});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.contains("mtdesk: warning: " + file.toUtf8() + ": " + looks_german),
                 r.err.constData());
    }

    void translateFiles() {
        QTemporaryDir dir;
        const QString good = dir.filePath("notes.txt");
        const QString bad = dir.filePath("binary.txt");
        write_file(good, "Open the file\n");
        write_file(bad, QByteArray("bin\0\1\xff", 6));  // not text in any encoding
        write_file(dir.filePath("notes.zh.txt"), "keep me");
        const Run r = run({"translate", "--model", kModel, "--to", "zh", "--greedy", "--max-tokens",
                           "6", good, bad});
        QCOMPARE(r.code, 1);  // one file failed...
        QVERIFY2(r.err.contains("binary.txt") && r.err.contains("binary"), r.err.constData());
        // ...the other was translated, under a new name, and nothing was overwritten.
        QCOMPARE(read_file(dir.filePath("notes.zh.txt")), QByteArray("keep me"));
        const QByteArray out = read_file(dir.filePath("notes.zh (2).txt"));
        QVERIFY(!out.isEmpty());
        QVERIFY(out.endsWith('\n'));
        QCOMPARE(read_file(good), QByteArray("Open the file\n"));
    }

    // Sampled output keeps the 1:1 line mapping whatever the model emits (line breaks inside a
    // translation become spaces), for several seeds.
    void linesStayOneToOne() {
        const QByteArray input = "a\nb\nc\n\nd\ne\n";
        for (const char* seed : {"1", "2", "3", "4"}) {
            const Run r = run({"translate", "--model", kModel, "--to", "zh", "--seed", seed,
                               "--max-tokens", "24"},
                              input);
            QCOMPARE(r.code, 0);
            QCOMPARE(r.out.count('\n'), input.count('\n'));
            QVERIFY(r.out.split('\n').at(3).isEmpty());  // the blank line stays blank
            for (char c : r.out)
                QVERIFY(static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t');
        }
    }

    // A line far longer than the model's context is cut at sentence boundaries and translated
    // piece by piece; the lines around it are still translated and the mapping stays 1:1.
    void longLine() {
        QByteArray longline;
        while (longline.size() < 20000)
            longline += "Open the file and save your changes. ";
        const QByteArray input = "first\n" + longline.trimmed() + "\nthird\n";
        const Run r = run(
            {"translate", "--model", kModel, "--to", "de", "--greedy", "--max-tokens", "2"}, input);
        QVERIFY2(r.code == 0, r.err.constData());
        QCOMPARE(r.out.count('\n'), 3);
        const QList<QByteArray> lines = r.out.split('\n');
        QVERIFY(!lines[0].isEmpty() && !lines[1].isEmpty() && !lines[2].isEmpty());
    }

    void samplingOptions() {
        const QByteArray input = "Open the file\n";
        const Run greedy =
            run({"translate", "--model", kModel, "--to", "de", "--greedy", "--max-tokens", "10"},
                input);
        const Run zero = run({"translate", "--model", kModel, "--to", "de", "--temperature", "0",
                              "--repetition-penalty", "1", "--max-tokens", "10"},
                             input);
        QCOMPARE(zero.code, 0);
        QCOMPARE(zero.out, greedy.out);  // temperature 0 = greedy
        Run r = run({"translate", "--model", kModel, "--to", "de", "--top-p", "2"}, input);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--top-p"), r.err.constData());
        r = run({"translate", "--model", kModel, "--to", "de", "--max-tokens", "-5"}, input);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--max-tokens"), r.err.constData());
        r = run({"translate", "--model", kModel, "--from", "de", "--to", "German"}, input);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("same language"), r.err.constData());
        r = run({"translate", "--model", kModel, "--to", "de"}, QByteArray("a\0b\n", 4));
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("stdin") && r.err.contains("binary"), r.err.constData());
        // Numbers out of range or not numbers at all are refused with the option's range, not
        // cast into something else.
        const std::pair<const char*, const char*> bad[] = {{"--max-tokens", "1e10"},
                                                           {"--max-tokens", "99999999999"},
                                                           {"--top-k", "1e12"},
                                                           {"--top-k", "2.5"},
                                                           {"--temperature", "nan"},
                                                           {"--temperature", "inf"},
                                                           {"--repetition-penalty", "inf"},
                                                           {"--top-p", "-inf"},
                                                           {"--seed", "-1"}};
        for (const auto& [option, value] : bad) {
            r = run({"translate", "--model", kModel, "--to", "de", option, value}, input);
            QCOMPARE(r.code, 2);
            QVERIFY2(r.err.contains(option) && r.err.contains(value), r.err.constData());
        }
        r = run({"translate", "--model", kModel, "--to", "de", "--max-tokens", "1e10"}, input);
        QVERIFY2(r.err.contains("from 1 to 2147483647"), r.err.constData());
    }

    // stdin in another encoding is decoded as a .txt file is, not passed on as broken UTF-8:
    // the same translation as the UTF-8 text, and a note of the conversion.
    void stdinEncodings() {
        const QString text = QStringLiteral(
            "Impossible d'accéder au répertoire sélectionné. Vérifiez les paramètres.\n");
        const QStringList args = {"translate", "--model",  kModel,         "--to",
                                  "de",        "--greedy", "--max-tokens", "8"};
        const Run utf8 = run(args, text.toUtf8());
        QCOMPARE(utf8.code, 0);
        QVERIFY2(!utf8.err.contains("read as"), utf8.err.constData());
        const Run latin1 = run(args, text.toLatin1());
        QCOMPARE(latin1.code, 0);
        QCOMPARE(latin1.out, utf8.out);
        QVERIFY2(latin1.err.contains("stdin: read as") && latin1.err.contains("UTF-8"),
                 latin1.err.constData());
        QByteArray utf16("\xFF\xFE");
        for (const QChar c : text) {
            utf16 += static_cast<char>(c.unicode() & 0xff);
            utf16 += static_cast<char>(c.unicode() >> 8);
        }
        const Run bom = run(args, utf16);
        QCOMPARE(bom.code, 0);
        QCOMPARE(bom.out, utf8.out);
    }

    // stdin is translated as it arrives (`tail -f log | mtdesk translate`): the first line's
    // translation is out while stdin is still open, and the same as when all input is given
    // at once.
    void stdinStreams() {
        const QStringList args = {"translate", "--model",  kModel,         "--to",
                                  "de",        "--greedy", "--max-tokens", "8"};
        const Run whole = run(args, "Open the file\nSave your changes.\n");
        QCOMPARE(whole.code, 0);
        const qsizetype first_end = whole.out.indexOf('\n') + 1;
        QVERIFY(first_end > 1);

        QProcess p;
        p.start(kBinary, args);
        QVERIFY(p.waitForStarted());
        p.write("Open the file\n");
        QByteArray out;
        QElapsedTimer waited;
        waited.start();
        while (!out.contains('\n') && waited.elapsed() < 120000 && p.state() == QProcess::Running)
            if (p.waitForReadyRead(1000)) out += p.readAllStandardOutput();
        QCOMPARE(p.state(), QProcess::Running);  // stdin is still open
        QCOMPARE(out, whole.out.left(first_end));
        p.write("Save your changes.\n");
        p.closeWriteChannel();
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        out += p.readAllStandardOutput();
        QCOMPARE(out, whole.out);
    }

    // Colours from a terminal program are not translated as text.
    void stdinTerminalEscapes() {
        const QStringList args = {"translate", "--model",  kModel,         "--to",
                                  "de",        "--greedy", "--max-tokens", "8"};
        const Run plain = run(args, "Open the file\n");
        const Run coloured = run(args, "\x1b[1;31mOpen\x1b[0m the file\x1b[K\n");
        QCOMPARE(coloured.code, 0);
        QCOMPARE(coloured.out, plain.out);
        QVERIFY2(coloured.err.contains("escape sequences"), coloured.err.constData());
    }

    // A closed stdin reads as empty input; it is not confused with a file opened later.
    void closedStdin() {
        QProcess p;
        p.start(QStringLiteral("/bin/sh"),
                {"-c", "exec \"$0\" translate --model \"$1\" --to de <&-", kBinary, kModel});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        QCOMPARE(p.readAllStandardOutput(), QByteArray());
    }

    // A model whose tokenizer lacks the chat template's tokens is refused with a clear message.
    void modelWithoutChatTemplate() {
        const QString llama = QStringLiteral(MTDESK_TEST_DATA_DIR "/models/llama");
        Run r = run({"translate", "--model", llama, "--to", "de"}, "x\n");
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("tokenizer_config.json") && r.err.contains("chat template"),
                 r.err.constData());
        r = run({"models", "inspect", llama});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("unsupported"), r.out.constData());
    }

    // A model directory without a chat template gets Hunyuan's: models inspect says that it is
    // assumed, and translate says so once (not per line).
    void assumedChatTemplate() {
        QTemporaryDir dir;
        for (const QFileInfo& f : QDir(kModel).entryInfoList(QDir::Files))
            QVERIFY(QFile::copy(f.filePath(), dir.filePath(f.fileName())));
        const QString config = dir.filePath(QStringLiteral("tokenizer_config.json"));
        QJsonObject tokenizer_config = QJsonDocument::fromJson(read_file(config)).object();
        QVERIFY(tokenizer_config.contains("chat_template"));
        tokenizer_config.remove("chat_template");
        QVERIFY(QFile::remove(config));
        write_file(config, QJsonDocument(tokenizer_config).toJson());

        Run r = run({"models", "inspect", dir.path()});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("chat template Hunyuan (assumed: the model has none)\n"),
                 r.out.constData());
        r = run({"models", "inspect", dir.path(), "--json"});
        QCOMPARE(r.code, 0);
        QJsonObject tokenizer = QJsonDocument::fromJson(r.out).object()["tokenizer"].toObject();
        QCOMPARE(tokenizer["chat_template"].toString(), QStringLiteral("Hunyuan"));
        QCOMPARE(tokenizer["chat_template_assumed"], QJsonValue(true));
        // The model with its own template: nothing assumed.
        r = run({"models", "inspect", kModel});
        QVERIFY2(r.out.contains("chat template Hunyuan\n"), r.out.constData());
        r = run({"models", "inspect", kModel, "--json"});
        tokenizer = QJsonDocument::fromJson(r.out).object()["tokenizer"].toObject();
        QCOMPARE(tokenizer["chat_template_assumed"], QJsonValue(false));

        const QStringList args = {"--to", "de", "--device", "cpu", "--greedy", "--max-tokens", "4"};
        const QByteArray input = "Open the file\nSave your changes\n";
        const Run assumed = run(QStringList{"translate", "--model", dir.path()} + args, input);
        QCOMPARE(assumed.code, 0);
        QCOMPARE(assumed.err.count("chat template"), 1);
        QVERIFY2(assumed.err.contains("note: " + dir.path().toUtf8() +
                                      " has no chat template (none in tokenizer_config.json, no "
                                      "chat_template.jinja); the Hunyuan template is assumed\n"),
                 assumed.err.constData());
        // The template assumed is the fixture's own, so the translation is the same.
        const Run own = run(QStringList{"translate", "--model", kModel} + args, input);
        QCOMPARE(own.code, 0);
        QVERIFY2(!own.err.contains("chat template"), own.err.constData());
        QCOMPARE(assumed.out, own.out);
    }

    // `bench --skip`'s list: names to StepOp bits, unknown names refused.
    void stepOps() {
        QCOMPARE(cuda::parse_step_ops(""), 0u);
        QCOMPARE(cuda::parse_step_ops("qkv,rope"), 3u);
        QCOMPARE(cuda::parse_step_ops("attention,o,gate_up,down,lm_head"), 4u | 8 | 16 | 32 | 64);
        QCOMPARE(cuda::parse_step_ops("down,down"), 32u);
        QVERIFY_THROWS_EXCEPTION(Error, cuda::parse_step_ops("qkv,"));
        QVERIFY_THROWS_EXCEPTION(Error, cuda::parse_step_ops("Attention"));
    }

    void gpuOptionsOnTheCpuAreNamed() {
        Run r = run({"translate", "--model", kModel, "--to", "zh", "--device", "cpu", "--tier",
                     "bf16", "--max-batch", "8"},
                    "x\n");
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.contains("note: the CPU engine runs this; --tier bf16, --max-batch apply to "
                                "the GPU engine only"),
                 r.err.constData());
        // int4 is a CPU tier too.
        r = run({"translate", "--model", kModel, "--to", "zh", "--device", "cpu", "--tier", "int4",
                 "--max-batch", "8"},
                "x\n");
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.contains("note: the CPU engine runs this; --max-batch applies to the GPU "
                                "engine only"),
                 r.err.constData());
        r = run({"translate", "--model", kModel, "--to", "zh", "--device", "cpu"}, "x\n");
        QCOMPARE(r.code, 0);
        QVERIFY2(!r.err.contains("GPU engine only"), r.err.constData());
    }

    // The CPU tiers: int8 and int4 translate (the demo model's held-out lines are checked in
    // test_demo_model), a value that is no tier is named, and `models inspect` lists each
    // tier's memory.
    void cpuTiers() {
        for (const char* tier : {"fp32", "int8", "int4"}) {
            const Run r = run(
                {"translate", "--model", kModel, "--to", "de", "--device", "cpu", "--tier", tier},
                "Open the file\n");
            QCOMPARE(r.code, 0);
            QVERIFY2(r.out.trimmed().size() > 3, r.out.constData());
            QVERIFY2(!r.err.contains("note:") && !r.err.contains("tier"), r.err.constData());
        }
        Run r =
            run({"translate", "--model", kModel, "--to", "de", "--device", "cpu", "--tier", "int3"},
                "x\n");
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--tier int3: the tiers are fp32, int8 and int4 on the CPU"),
                 r.err.constData());
        QVERIFY(r.out.isEmpty());
        r = run({"models", "inspect", kModel, "--json"});
        QCOMPARE(r.code, 0);
        const QJsonObject cpu =
            QJsonDocument::fromJson(r.out).object()["memory"].toObject()["cpu_tiers"].toObject();
        const auto figure = [&cpu](const char* tier, const char* what) {
            return cpu[QLatin1String(tier)].toObject()[QLatin1String(what)].toDouble();
        };
        QVERIFY(figure("fp32", "weights") > figure("int8", "weights"));
        QVERIFY(figure("int8", "weights") > figure("int4", "weights"));
        QVERIFY(figure("int4", "weights") > 0);
        r = run({"models", "inspect", kModel});
        QVERIFY2(r.out.contains("CPU memory per tier"), r.out.constData());
    }

    void badInputsNameTheProblem() {
        QTemporaryDir dir;
        Run r = run({"translate", "--model", dir.path(), "--to", "zh"}, "x\n");
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("config.json"), r.err.constData());
        r = run({"translate", "--model", kModel, "--to", "klingon"}, "x\n");
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("klingon"));
        r = run({"models", "inspect", dir.filePath("missing")});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains("missing"));
        // The engine's sizes are checked before a model is looked at, with their range.
        r = run({"translate", "--model", kModel, "--to", "zh", "--max-batch", "4294967297"}, "x\n");
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--max-batch needs a whole number from 1 to 1024"),
                 r.err.constData());
        r = run({"translate", "--model", kModel, "--to", "zh", "--kv-tokens", "-1"}, "x\n");
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--kv-tokens needs a whole number from 1 to"), r.err.constData());
        // bench checks its profiling switch before it looks for a GPU.
        r = run({"bench", "--model", kModel, "--skip", "qkv,mlp"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("\"mlp\""), r.err.constData());
        if (cuda::devices().empty()) {  // without a GPU, bench says so in words
            r = run({"bench", "--model", kModel});
            QCOMPARE(r.code, 1);
            QVERIFY2(
                r.err.contains("bench measures the GPU engine") && !r.err.contains("cudaSetDevice"),
                r.err.constData());
        }
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
