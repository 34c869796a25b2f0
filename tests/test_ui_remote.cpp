// The window's side of the remote engine, on the offscreen platform with real `mtdesk serve`
// processes (bundled demo model, greedy): the settings dialog's "Servers" choice round-trips
// through Settings and refuses malformed URLs; "Test connection" shows each server's model
// list and round-trip time, or its problem (unreachable, wrong key); the controller makes the
// remote engine (its model name taken from the servers when none is given), translates typed
// text through it as the local engine would, and the live panel shows requests in flight,
// the servers, latency and tokens/s; the main window uses the servers when they are chosen.

#include <QApplication>
#include <QDialogButtonBox>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>
#include <QTimer>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "gui_main.h"
#include "live_panel.h"
#include "main_window.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/translator.h"
#include "remote_fake_server.h"
#include "remote_serve_process.h"
#include "settings.h"
#include "settings_dialog.h"
#include "translation_controller.h"

using namespace mtdesk;
using namespace mtdesk::ui;
using mtdesk::test::ServeProcess;

namespace {

constexpr int kTimeout = 60000;

// The demo model's greedy translation on this computer.
QString reference(const QString& text, const char* from, const char* to) {
    static std::unique_ptr<Translator> translator = Translator::open_cpu(MTDESK_DEMO_MODEL_DIR);
    PromptRequest request;
    request.text = text.toStdString();
    request.source = find_language(from);
    request.target = find_language(to);
    TranslateOptions options;
    options.sampling = SamplingParams::greedy_decoding();
    return QString::fromStdString(translator->translate(request, options).text);
}

QString unreachable_url() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
        port = ntohs(addr.sin_port);
    ::close(fd);
    return QStringLiteral("http://127.0.0.1:%1").arg(port);
}

template <class T>
T* child(QWidget& parent, const char* name) {
    T* w = parent.findChild<T*>(QString::fromLatin1(name));
    if (!w) qFatal("no child widget %s", name);
    return w;
}

}  // namespace

class TestUiRemote : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("mtdesk-test"));
        QCoreApplication::setApplicationName(QStringLiteral("test_ui_remote"));
        init_resources();
    }

    void init() { QSettings().clear(); }

    void settingsRoundTrip() {
        Settings settings;
        QCOMPARE(settings.engineMode(), Settings::EngineMode::Local);
        QCOMPARE(settings.remoteConcurrency(), 4);
        {
            SettingsDialog dialog(settings);
            auto* servers = child<QRadioButton>(dialog, "serversRadio");
            QVERIFY(child<QRadioButton>(dialog, "localRadio")->isChecked());
            QVERIFY(child<QGroupBox>(dialog, "serversGroup")->isHidden());
            QVERIFY(!child<QGroupBox>(dialog, "modelGroup")->isHidden());
            servers->click();
            QVERIFY(dialog.serversChosen());
            QVERIFY(!child<QGroupBox>(dialog, "serversGroup")->isHidden());
            QVERIFY(child<QGroupBox>(dialog, "modelGroup")->isHidden());
            QVERIFY(child<QGroupBox>(dialog, "precisionGroup")->isHidden());
            child<QPlainTextEdit>(dialog, "serversEdit")
                ->setPlainText(
                    QStringLiteral("http://gpu1:8000\n\n  https://gpu2.example.org/v1 \n"));
            child<QLineEdit>(dialog, "remoteModelEdit")
                ->setText(QStringLiteral("tencent/HY-MT1.5-7B"));
            child<QLineEdit>(dialog, "apiKeyEdit")->setText(QStringLiteral("k-123"));
            QCOMPARE(child<QLineEdit>(dialog, "apiKeyEdit")->echoMode(), QLineEdit::Password);
            child<QSpinBox>(dialog, "concurrencySpin")->setValue(7);
            child<QDialogButtonBox>(dialog, "buttonBox")->button(QDialogButtonBox::Ok)->click();
            QCOMPARE(dialog.result(), int(QDialog::Accepted));
        }
        QCOMPARE(settings.engineMode(), Settings::EngineMode::Servers);
        const QStringList urls{QStringLiteral("http://gpu1:8000"),
                               QStringLiteral("https://gpu2.example.org/v1")};
        QCOMPARE(settings.serverUrls(), urls);
        QCOMPARE(settings.remoteModel(), QStringLiteral("tencent/HY-MT1.5-7B"));
        QCOMPARE(settings.apiKey(), QStringLiteral("k-123"));
        QCOMPARE(settings.remoteConcurrency(), 7);
        const RemoteChoice choice = settings.remoteChoice();
        QCOMPARE(choice.servers, urls);
        QCOMPARE(choice.concurrency, 7);
        // Stored: a new Settings object (another start of the program) reads the same.
        settings.sync();
        QCOMPARE(Settings().remoteChoice(), choice);

        // Shown again as saved.
        SettingsDialog again(settings);
        QVERIFY(child<QRadioButton>(again, "serversRadio")->isChecked());
        QVERIFY(!child<QGroupBox>(again, "serversGroup")->isHidden());
        QCOMPARE(again.serverUrls(), urls);
        QCOMPARE(child<QLineEdit>(again, "remoteModelEdit")->text(),
                 QStringLiteral("tencent/HY-MT1.5-7B"));
        QCOMPARE(child<QLineEdit>(again, "apiKeyEdit")->text(), QStringLiteral("k-123"));
        QCOMPARE(child<QSpinBox>(again, "concurrencySpin")->value(), 7);

        // A malformed URL is refused, named in the dialog; so is an empty list.
        child<QPlainTextEdit>(again, "serversEdit")
            ->setPlainText(QStringLiteral("http://gpu1:8000\nftp://files.example.org"));
        again.accept();
        QVERIFY(again.result() != QDialog::Accepted);
        QVERIFY2(again.connectionReport().contains(QStringLiteral("ftp://files.example.org")),
                 qPrintable(again.connectionReport()));
        child<QPlainTextEdit>(again, "serversEdit")->clear();
        again.accept();
        QVERIFY(again.result() != QDialog::Accepted);
        QVERIFY(!again.connectionReport().isEmpty());
        QCOMPARE(settings.serverUrls(), urls);  // nothing written

        // Back to this computer: the servers stay stored for next time.
        child<QPlainTextEdit>(again, "serversEdit")->setPlainText(urls.join(QLatin1Char('\n')));
        child<QRadioButton>(again, "localRadio")->click();
        QVERIFY(again.serversChosen() == false);
        again.accept();
        QCOMPARE(again.result(), int(QDialog::Accepted));
        QCOMPARE(settings.engineMode(), Settings::EngineMode::Local);
        QCOMPARE(settings.serverUrls(), urls);
    }

    void testConnectionShowsModels() {
        ServeProcess server({QStringLiteral("--api-key"), QStringLiteral("k-123")});
        QVERIFY2(server.ok(), qPrintable(server.error()));
        const QString nowhere = unreachable_url();
        Settings settings;
        SettingsDialog dialog(settings);
        dialog.setEngineMode(true);
        child<QPlainTextEdit>(dialog, "serversEdit")
            ->setPlainText(server.qurl() + QStringLiteral("\n") + nowhere);
        child<QLineEdit>(dialog, "apiKeyEdit")->setText(QStringLiteral("k-123"));
        QSignalSpy tested(&dialog, &SettingsDialog::connectionTested);
        auto* button = child<QPushButton>(dialog, "testConnectionButton");
        button->click();
        QVERIFY(dialog.testingConnection());
        QVERIFY(!button->isEnabled());
        QTRY_COMPARE_WITH_TIMEOUT(tested.count(), 1, kTimeout);
        QVERIFY(button->isEnabled());
        const QStringList lines = dialog.connectionReport().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 2);
        // "<url>: 3 ms, models: mtdesk-demo"
        const QRegularExpression ok(QRegularExpression::escape(server.qurl()) +
                                    QStringLiteral(": [\\d,]+ ms, models: mtdesk-demo$"));
        QVERIFY2(ok.match(lines[0]).hasMatch(), qPrintable(lines[0]));
        QVERIFY2(lines[1].startsWith(nowhere + QStringLiteral(": cannot connect")),
                 qPrintable(lines[1]));
        // Only the failed server's line is red.
        const QString shown = child<QLabel>(dialog, "connectionLabel")->text();
        const QString red = QStringLiteral("<span style=\"color:#c01c28\">");
        QVERIFY2(shown.contains(red + nowhere.toHtmlEscaped()), qPrintable(shown));
        QVERIFY2(!shown.contains(red + server.qurl().toHtmlEscaped()), qPrintable(shown));

        // A wrong key: the server's refusal, in its own words.
        child<QLineEdit>(dialog, "apiKeyEdit")->setText(QStringLiteral("wrong"));
        child<QPlainTextEdit>(dialog, "serversEdit")->setPlainText(server.qurl());
        button->click();
        QTRY_COMPARE_WITH_TIMEOUT(tested.count(), 2, kTimeout);
        QVERIFY2(dialog.connectionReport().startsWith(server.qurl() +
                                                      QStringLiteral(": HTTP 401 Unauthorized")),
                 qPrintable(dialog.connectionReport()));
        // Nothing to test: said at once.
        child<QPlainTextEdit>(dialog, "serversEdit")->clear();
        button->click();
        QCOMPARE(tested.count(), 2);
        QVERIFY(!dialog.connectionReport().isEmpty());
        QVERIFY(!dialog.testingConnection());
        // Not a server address (another scheme): said as such at once, not tried.
        child<QPlainTextEdit>(dialog, "serversEdit")
            ->setPlainText(QStringLiteral("ftp://files.example.org"));
        button->click();
        QCOMPARE(tested.count(), 2);
        QVERIFY(!dialog.testingConnection());
        QVERIFY2(dialog.connectionReport().contains(QStringLiteral("ftp://files.example.org")) &&
                     !dialog.connectionReport().contains(QStringLiteral("cannot connect")),
                 qPrintable(dialog.connectionReport()));
    }

    void controllerAndLivePanel() {
        ServeProcess server;
        QVERIFY2(server.ok(), qPrintable(server.error()));
        TranslationController controller;
        TranslationOptions options;
        options.mode = SamplingMode::Greedy;
        controller.setOptions(options);
        QSignalSpy loaded(&controller, &TranslationController::modelLoaded);
        QSignalSpy engineChanged(&controller, &TranslationController::engineChanged);
        // No model name: the one the server lists.
        controller.useServers({{server.qurl()}, QString(), QString(), 2});
        QVERIFY(controller.remote());
        QCOMPARE(controller.state(), TranslationController::State::Loading);
        QTRY_COMPARE_WITH_TIMEOUT(controller.state(), TranslationController::State::Ready,
                                  kTimeout);
        QCOMPARE(controller.modelName(), QStringLiteral("mtdesk-demo"));
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(loaded.at(0).at(0).toString(), QStringLiteral("mtdesk-demo"));
        QVERIFY(controller.engine());
        QCOMPARE(controller.engine()->max_in_flight(), 2);
        QCOMPARE(controller.modelDirectory(), server.qurl());

        QSignalSpy finished(&controller, &TranslationController::translationFinished);
        QSignalSpy partial(&controller, &TranslationController::partialTranslation);
        const QString text = QStringLiteral("Save your changes.\n\nClose the window.");
        controller.translate(text, QStringLiteral("en"), QStringLiteral("de"));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeout);
        QVERIFY(partial.count() >= 1);
        const QString expected = reference(QStringLiteral("Save your changes."), "en", "de") +
                                 QStringLiteral("\n\n") +
                                 reference(QStringLiteral("Close the window."), "en", "de");
        QCOMPARE(finished.at(0).at(1).toString(), expected);
        const RequestStats stats = finished.at(0).at(2).value<RequestStats>();
        QCOMPARE(stats.segments, 2);
        QVERIFY(stats.generated_tokens > 0 && stats.prompt_tokens > 0);  // the server's usage

        LivePanel panel(&controller);
        panel.refresh();
        QCOMPARE(panel.rowText(QStringLiteral("device")),
                 QStringLiteral("1 server: 127.0.0.1:%1").arg(server.port()));
        QCOMPARE(panel.rowText(QStringLiteral("tier")), QStringLiteral("remote: mtdesk-demo"));
        QCOMPARE(panel.rowCaption(QStringLiteral("batch")), QStringLiteral("In flight"));
        QCOMPARE(panel.rowText(QStringLiteral("batch")), QStringLiteral("0 request(s)"));
        QVERIFY(panel.rowVisible(QStringLiteral("servers")));
        QCOMPARE(panel.rowText(QStringLiteral("servers")), QStringLiteral("1 of 1 answering"));
        QVERIFY(panel.rowVisible(QStringLiteral("latency")));
        const QRegularExpression latency(QStringLiteral("^p50 [\\d,]+ · p95 [\\d,]+ ms$"));
        QVERIFY2(latency.match(panel.rowText(QStringLiteral("latency"))).hasMatch(),
                 qPrintable(panel.rowText(QStringLiteral("latency"))));
        const QRegularExpression throughput(QStringLiteral("^[\\d.,]+ tok/s$"));
        QVERIFY2(throughput.match(panel.rowText(QStringLiteral("throughput"))).hasMatch(),
                 qPrintable(panel.rowText(QStringLiteral("throughput"))));
        QVERIFY(!panel.rowVisible(QStringLiteral("vram")));

        // Servers that cannot be used: Failed, saying which and why.
        const QString nowhere = unreachable_url();
        controller.useServers({{nowhere}, QString(), QString(), 2});
        QVERIFY(!controller.engine());  // the document queue lets go at once
        QTRY_COMPARE_WITH_TIMEOUT(controller.state(), TranslationController::State::Failed,
                                  kTimeout);
        QVERIFY2(controller.lastError().contains(nowhere + QStringLiteral(": cannot connect")),
                 qPrintable(controller.lastError()));

        // Back to this computer: the live panel's remote rows go.
        controller.loadModel(QStringLiteral(MTDESK_DEMO_MODEL_DIR));
        QVERIFY(!controller.remote());
        QTRY_COMPARE_WITH_TIMEOUT(controller.state(), TranslationController::State::Ready,
                                  kTimeout);
        QCOMPARE(controller.modelName(), QStringLiteral("mtdesk-demo"));
        panel.refresh();
        QCOMPARE(panel.rowCaption(QStringLiteral("batch")), QStringLiteral("Batch"));
        QVERIFY(!panel.rowVisible(QStringLiteral("latency")));
        QVERIFY(!panel.rowVisible(QStringLiteral("servers")));
        QCOMPARE(panel.rowText(QStringLiteral("device")), QStringLiteral("CPU"));
    }

    // A model that puts line breaks inside a line's translation: the result keeps one line per
    // source line, while it streams and at the end (as documents and the command line do).
    void lineBreaksInALinesTranslationBecomeSpaces() {
        test::FakeServer server([](const nlohmann::json&, int) {
            test::FakeReply reply;
            reply.content = "ERSTE\n\nZEILE";  // streamed as "ERST", "E\n\nZ", "EILE"
            return reply;
        });
        QVERIFY(server.valid());
        TranslationController controller;
        controller.useServers(
            {{QString::fromStdString(server.url())}, QStringLiteral("fake-model"), QString(), 1});
        QTRY_COMPARE_WITH_TIMEOUT(controller.state(), TranslationController::State::Ready,
                                  kTimeout);
        QSignalSpy finished(&controller, &TranslationController::translationFinished);
        QSignalSpy partial(&controller, &TranslationController::partialTranslation);
        controller.translate(QStringLiteral("one\ntwo\n\n  three"), QStringLiteral("en"),
                             QStringLiteral("de"));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeout);
        QCOMPARE(finished.at(0).at(1).toString(),
                 QStringLiteral("ERSTE ZEILE\nERSTE ZEILE\n\n  ERSTE ZEILE"));
        QVERIFY(partial.count() >= 3);
        for (const QList<QVariant>& p : partial) {
            const QString text = p.at(1).toString();
            QVERIFY2(
                !text.contains(QStringLiteral("ERSTE\n")) && !text.contains(QStringLiteral("\nZ")),
                qPrintable(text));
            QVERIFY2(text.count(QLatin1Char('\n')) <= 3, qPrintable(text));
        }
    }

    // An edit sends only the lines that changed: adding a line to 200 translated ones sends
    // that line, and the others come back as they were, also while the new one streams. Another
    // target language or other options translate again.
    void unchangedLinesAreNotSentAgain() {
        test::FakeServer server([](const nlohmann::json&, int) { return test::FakeReply{}; });
        QVERIFY(server.valid());
        TranslationController controller;
        TranslationOptions options;
        options.mode = SamplingMode::Greedy;
        controller.setOptions(options);
        controller.useServers(
            {{QString::fromStdString(server.url())}, QStringLiteral("fake-model"), QString(), 1});
        QTRY_COMPARE_WITH_TIMEOUT(controller.state(), TranslationController::State::Ready,
                                  kTimeout);
        QSignalSpy finished(&controller, &TranslationController::translationFinished);
        QSignalSpy partial(&controller, &TranslationController::partialTranslation);
        QStringList lines, expected;
        for (int i = 1; i <= 200; ++i) {
            lines << QStringLiteral("line %1").arg(i);
            expected << QStringLiteral("LINE %1").arg(i);
        }
        const QString text = lines.join(QLatin1Char('\n'));
        controller.translate(text, QStringLiteral("en"), QStringLiteral("de"));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeout);
        QCOMPARE(finished.at(0).at(1).toString(), expected.join(QLatin1Char('\n')));
        QCOMPARE(server.chatCalls(), 200);

        partial.clear();
        const quint64 id = controller.translate(QStringLiteral("a new line\n") + text,
                                                QStringLiteral("en"), QStringLiteral("de"));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, kTimeout);
        QCOMPARE(finished.at(1).at(1).toString(),
                 QStringLiteral("A NEW LINE\n") + expected.join(QLatin1Char('\n')));
        QCOMPARE(server.chatCalls(), 201);
        const std::string prompt =
            server.requests().back()["messages"][0]["content"].get<std::string>();
        QVERIFY2(QString::fromStdString(prompt).endsWith(QStringLiteral("\n\na new line")),
                 prompt.c_str());
        const RequestStats stats = finished.at(1).at(2).value<RequestStats>();
        QCOMPARE(stats.segments, 1);
        QCOMPARE(stats.cached_lines, 200);
        // While the new line streamed, the lines after it stayed in place.
        QVERIFY(!partial.isEmpty());
        QCOMPARE(partial.first().at(0).toULongLong(), id);
        QVERIFY2(partial.first().at(1).toString().endsWith(QStringLiteral("\nLINE 200")),
                 qPrintable(partial.first().at(1).toString().left(80)));

        // The same line again in the text: sent once.
        controller.translate(QStringLiteral("line 1\nline 1\nother"), QStringLiteral("en"),
                             QStringLiteral("de"));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 3, kTimeout);
        QCOMPARE(finished.at(2).at(1).toString(), QStringLiteral("LINE 1\nLINE 1\nOTHER"));
        QCOMPARE(server.chatCalls(), 202);

        // Another language pair is another translation; so is any change of the options.
        controller.translate(QStringLiteral("line 1"), QStringLiteral("en"), QStringLiteral("fr"));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 4, kTimeout);
        QCOMPARE(server.chatCalls(), 203);
        controller.setOptions(options);
        controller.translate(QStringLiteral("line 1"), QStringLiteral("en"), QStringLiteral("fr"));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 5, kTimeout);
        QCOMPARE(server.chatCalls(), 204);
    }

    // Servers that cannot be used: the live panel shows them (not this computer's CPU), a typed
    // text ends with the error instead of waiting for good, and the banner's button opens the
    // server settings. With a model name given (no model list asked for first), the remote
    // engine's retries end the request with the error too.
    void unusableServersAreShownAndEndRequests() {
        const QString nowhere = unreachable_url();
        const QString port = nowhere.section(QLatin1Char(':'), -1);
        Settings settings;
        settings.setSourceLanguage(QStringLiteral("en"));
        settings.setTargetLanguage(QStringLiteral("fr"));
        settings.setEngineMode(Settings::EngineMode::Servers);
        settings.setServerUrls({nowhere});
        TranslationController controller;
        MainWindow window(settings, controller);
        window.show();
        window.loadConfiguredModel();
        window.sourceEdit()->setPlainText(QStringLiteral("Open the file."));
        window.translateNow();  // while the servers are asked for their models
        QTRY_COMPARE_WITH_TIMEOUT(controller.state(), TranslationController::State::Failed,
                                  kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(!controller.busy(), kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(
            window.resultInfo()->text().contains(QStringLiteral("Not translated")), kTimeout);
        QVERIFY2(window.resultInfo()->text().contains(QStringLiteral("cannot connect")),
                 qPrintable(window.resultInfo()->text()));
        LivePanel* panel = window.livePanel();
        panel->refresh();
        QCOMPARE(panel->rowText(QStringLiteral("queue")), QStringLiteral("0 waiting"));
        QVERIFY2(
            panel->rowText(QStringLiteral("device")).contains(QStringLiteral("127.0.0.1:") + port),
            qPrintable(panel->rowText(QStringLiteral("device"))));
        QVERIFY2(!panel->rowText(QStringLiteral("tier")).contains(QStringLiteral("CPU")),
                 qPrintable(panel->rowText(QStringLiteral("tier"))));
        QVERIFY(panel->rowVisible(QStringLiteral("servers")));
        QCOMPARE(panel->rowText(QStringLiteral("servers")), QStringLiteral("0 of 1 answering"));

        // Typed again while they still cannot be used: the error at once.
        window.sourceEdit()->setPlainText(QStringLiteral("Save the file."));
        window.resultInfo()->clear();
        window.translateNow();
        QVERIFY(!controller.busy());
        QTRY_VERIFY_WITH_TIMEOUT(
            window.resultInfo()->text().contains(QStringLiteral("Not translated")), kTimeout);

        // The banner's button: the server settings.
        QVERIFY(!window.modelBar()->isHidden());
        QCOMPARE(window.modelBarButton()->text(), QStringLiteral("Server settings…"));
        bool focused = false;
        QTimer::singleShot(0, [&] {
            QWidget* modal = QApplication::activeModalWidget();
            if (!modal) return;
            if (auto* dialog = qobject_cast<SettingsDialog*>(modal))
                focused = dialog->focusWidget() ==
                          dialog->findChild<QPlainTextEdit*>(QStringLiteral("serversEdit"));
            modal->close();
        });
        window.modelBarButton()->click();
        QVERIFY(focused);

        // A model name given: the engine is made without asking; its retries end the request.
        settings.setRemoteModel(QStringLiteral("mtdesk-demo"));
        window.loadConfiguredModel();
        QTRY_COMPARE_WITH_TIMEOUT(controller.state(), TranslationController::State::Ready,
                                  kTimeout);
        window.resultInfo()->clear();
        window.translateNow();
        QVERIFY(controller.busy());
        QTRY_VERIFY_WITH_TIMEOUT(!controller.busy(), kTimeout);
        QVERIFY2(window.resultInfo()->text().startsWith(QStringLiteral("Error:")),
                 qPrintable(window.resultInfo()->text()));
        QVERIFY(window.translation().isEmpty());
    }

    void windowUsesTheServers() {
        ServeProcess server;
        QVERIFY2(server.ok(), qPrintable(server.error()));
        Settings settings;
        settings.setSamplingMode(SamplingMode::Greedy);
        settings.setSourceLanguage(QStringLiteral("en"));
        settings.setTargetLanguage(QStringLiteral("fr"));
        settings.setEngineMode(Settings::EngineMode::Servers);
        settings.setServerUrls({server.qurl()});
        settings.setRemoteModel(QStringLiteral("mtdesk-demo"));
        TranslationController controller;
        MainWindow window(settings, controller);
        window.show();
        window.loadConfiguredModel();
        QVERIFY(controller.remote());
        QTRY_COMPARE_WITH_TIMEOUT(controller.state(), TranslationController::State::Ready,
                                  kTimeout);
        QVERIFY2(window.statusText().contains(QStringLiteral("mtdesk-demo")),
                 qPrintable(window.statusText()));
        window.sourceEdit()->setPlainText(QStringLiteral("Open the file."));
        window.translateNow();
        const QString expected = reference(QStringLiteral("Open the file."), "en", "fr");
        QTRY_COMPARE_WITH_TIMEOUT(window.translation(), expected, kTimeout);
        // The live panel refreshes from the engine's statistics on a timer.
        QTRY_VERIFY_WITH_TIMEOUT(window.livePanel()->rowVisible(QStringLiteral("servers")),
                                 kTimeout);
    }
};

QTEST_MAIN(TestUiRemote)
#include "test_ui_remote.moc"
