// The proper-noun casing guard: which source words it guards (mixed case, acronyms; not
// capitalised ordinary words), what it restores in a translation (only case variants of those
// words, on word boundaries, in any script) and what it leaves byte for byte; and the bundled
// demo model, whose output casing of brand names and acronyms it fixes.

#include <QStringList>
#include <QTest>

#include <string>
#include <vector>

#include "mtdesk/translate/casing_guard.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/translator.h"

using namespace mtdesk;

using Strings = std::vector<std::string>;

class TestCasingGuard : public QObject {
    Q_OBJECT

  private slots:
    void guardedWords() {
        QCOMPARE(casing_guarded_words(
                     "Open the iPhone app on GitHub with macOS, NASA, USB and HTTP; watch "
                     "YouTube."),
                 (Strings{"iPhone", "GitHub", "macOS", "NASA", "USB", "HTTP", "YouTube"}));
        // Capitalised ordinary words, single capitals and lower-case words are not guarded.
        QCOMPARE(casing_guarded_words("Open The File. I said A word."), Strings{});
        QCOMPARE(casing_guarded_words(""), Strings{});
        // Digits, joined words and their parts, other scripts.
        QCOMPARE(casing_guarded_words("MP3 over Wi-Fi at McDonald's"),
                 (Strings{"MP3", "Wi-Fi", "McDonald", "McDonald's"}));
        QCOMPARE(casing_guarded_words("Студенты МГУ и Москва"), (Strings{"МГУ"}));
        QCOMPARE(casing_guarded_words("iPhoneを買う、GitHubで"), (Strings{"iPhone", "GitHub"}));
        // The same word in two casings is ambiguous: left alone.
        QCOMPARE(casing_guarded_words("Apple and APPLE and USB"), (Strings{"USB"}));
    }

    void restoresSourceCasing_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("translation");
        QTest::addColumn<QString>("expected");
        QTest::newRow("zh") << "Open the iPhone app on GitHub with macOS"
                            << "在 macos 上打开 github 上的 Iphone 应用"
                            << "在 macOS 上打开 GitHub 上的 iPhone 应用";
        QTest::newRow("no spaces around") << "Sync with GitHub and NASA"
                                          << "与github和Nasa同步"
                                          << "与GitHub和NASA同步";
        QTest::newRow("de") << "Plug in the USB stick for NASA"
                            << "Den Usb-Stick für die nasa einstecken"
                            << "Den USB-Stick für die NASA einstecken";
        QTest::newRow("several") << "GitHub, GitHub"
                                 << "Github und GITHUB und GitHub"
                                 << "GitHub und GitHub und GitHub";
        QTest::newRow("joined word wins") << "Enable Wi-Fi"
                                          << "Activer le wi-fi et le WI-FI"
                                          << "Activer le Wi-Fi et le Wi-Fi";
        QTest::newRow("Cyrillic") << "Студенты МГУ"
                                  << "Students of мгу"
                                  << "Students of МГУ";
        QTest::newRow("fold") << "The STRASSE sign"
                              << "Das Straße-Schild"
                              << "Das STRASSE-Schild";
    }
    void restoresSourceCasing() {
        QFETCH(QString, source);
        QFETCH(QString, translation);
        QFETCH(QString, expected);
        QCOMPARE(QString::fromStdString(
                     apply_casing_guard(source.toStdString(), translation.toStdString())),
                 expected);
    }

    void leavesEverythingElse_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("translation");
        QTest::newRow("capitalised word") << "Open the file"
                                          << "open the file and Open it";
        QTest::newRow("not in the source") << "Save the file"
                                           << "Github, iphone, NASA, nasa";
        QTest::newRow("inside longer words") << "USB and GitHub"
                                             << "usbkey githubber subusb";
        QTest::newRow("non-Latin") << "Open GitHub"
                                   << "打开 代码托管 网站。Открыть сайт.";
        QTest::newRow("Arabic and Uyghur") << "Use NASA data"
                                           << "ناسا سانلىق مەلۇماتىنى ئىشلىتىش";
        QTest::newRow("already right") << "GitHub and NASA"
                                       << "GitHub und NASA";
        QTest::newRow("ambiguous") << "Apple APPLE"
                                   << "apple Apple";
        QTest::newRow("empty") << "NASA"
                               << "";
    }
    void leavesEverythingElse() {
        QFETCH(QString, source);
        QFETCH(QString, translation);
        QCOMPARE(QString::fromStdString(
                     apply_casing_guard(source.toStdString(), translation.toStdString())),
                 translation);
    }

    void invalidUtf8StaysAsIs() {
        const std::string translation = "github \xC3\x28 x";
        QCOMPARE(apply_casing_guard("GitHub", translation), std::string("GitHub \xC3\x28 x"));
        const std::string garbage = "\xFF\xFE nasa";
        QCOMPARE(apply_casing_guard("\xFF NASA", garbage), std::string("\xFF\xFE NASA"));
    }

    // The real demo model writes some brand names and acronyms in other casings; with the
    // guard (the default) the source's casing comes back, without it the model's stays.
    // The real demo model, greedy: with the guard (the default) every guarded word of the
    // source comes out with the source's casing; the model alone capitalises "exFAT" at the
    // start of a word or writes "Postscript", so the guard has work to do there, and leaves
    // what the model got right ("GitHub", "USB") as it is.
    void demoModelKeepsCasing_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("target");
        QTest::addColumn<QStringList>("words");
        QTest::addColumn<QString>("miscased");  // what the model alone writes ("" = right)
        QTest::newRow("USB exFAT de") << "Open exFAT on USB"
                                      << "de" << QStringList{"exFAT", "USB"} << "ExFAT";
        QTest::newRow("USB exFAT zh") << "Open exFAT on USB"
                                      << "zh" << QStringList{"exFAT", "USB"} << "ExFAT";
        QTest::newRow("USB exFAT ru") << "USB exFAT settings"
                                      << "ru" << QStringList{"USB", "exFAT"} << "ExFAT";
        QTest::newRow("PostScript de") << "PostScript settings"
                                       << "de" << QStringList{"PostScript"} << "Postscript";
        QTest::newRow("GitHub de") << "Sign in with GitHub"
                                   << "de" << QStringList{"GitHub"} << "";
        QTest::newRow("USB ja") << "Connect the USB cable"
                                << "ja" << QStringList{"USB"} << "";
    }
    void demoModelKeepsCasing() {
        QFETCH(QString, source);
        QFETCH(QString, target);
        QFETCH(QStringList, words);
        QFETCH(QString, miscased);
        static auto translator = Translator::open_cpu(MTDESK_DEMO_MODEL_DIR);
        PromptRequest r;
        r.text = source.toStdString();
        r.source = find_language("en");
        r.target = find_language(target.toStdString());
        TranslateOptions options;
        options.sampling = SamplingParams::greedy_decoding();
        QVERIFY(options.casing_guard);  // on by default
        const QString guarded = QString::fromStdString(translator->translate(r, options).text);
        options.casing_guard = false;
        const QString raw = QString::fromStdString(translator->translate(r, options).text);
        for (const QString& word : words)
            QVERIFY2(guarded.contains(word), qPrintable(guarded));
        if (!miscased.isEmpty()) {
            QVERIFY2(raw.contains(miscased), qPrintable(raw));
            QVERIFY2(!guarded.contains(miscased), qPrintable(guarded));
        } else {
            QCOMPARE(guarded, raw);
        }
        // Only casing differs.
        QCOMPARE(guarded.toLower(), raw.toLower());
        QCOMPARE(guarded.size(), raw.size());
    }
};

QTEST_GUILESS_MAIN(TestCasingGuard)
#include "test_casing_guard.moc"
