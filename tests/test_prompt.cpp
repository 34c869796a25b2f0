// The language table and the translation prompts, checked character for character against the
// wording published with Hunyuan-MT-7B and HY-MT1.5.

#include <QTest>

#include <set>
#include <string>

#include "mtdesk/error.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/prompt.h"

using namespace mtdesk;

class TestPrompt : public QObject {
    Q_OBJECT

  private slots:
    void languageTable() {
        QCOMPARE(languages().size(), std::size_t{38});
        std::set<std::string_view> codes, english;
        for (const Language& l : languages()) {
            QVERIFY(!l.code.empty() && !l.english_name.empty() && !l.chinese_name.empty() &&
                    !l.native_name.empty());
            codes.insert(l.code);
            english.insert(l.english_name);
        }
        QCOMPARE(codes.size(), std::size_t{38});
        QCOMPARE(english.size(), std::size_t{38});
        for (auto code : {"bo", "ug", "kk", "mn", "yue", "zh-Hant"})
            QVERIFY2(codes.count(code), code);
    }

    void findLanguage_data() {
        QTest::addColumn<QString>("query");
        QTest::addColumn<QString>("code");
        QTest::newRow("code") << "de"
                              << "de";
        QTest::newRow("code upper") << "DE"
                                    << "de";
        QTest::newRow("english name") << "tibetan"
                                      << "bo";
        QTest::newRow("chinese name") << "维吾尔语"
                                      << "ug";
        QTest::newRow("native name") << "Қазақ тілі"
                                     << "kk";
        QTest::newRow("bcp47 zh-CN") << "zh-CN"
                                     << "zh";
        QTest::newRow("bcp47 zh_TW") << "zh_TW"
                                     << "zh-Hant";
        QTest::newRow("zh-hant lower") << "zh-hant"
                                       << "zh-Hant";
        QTest::newRow("fil") << "fil"
                             << "tl";
        QTest::newRow("unknown") << "klingon"
                                 << "";
        QTest::newRow("empty") << ""
                               << "";
    }
    void findLanguage() {
        QFETCH(QString, query);
        QFETCH(QString, code);
        const Language* l = find_language(query.toStdString());
        if (code.isEmpty()) {
            QVERIFY(l == nullptr);
        } else {
            QVERIFY(l != nullptr);
            QCOMPARE(QString::fromUtf8(l->code.data(), l->code.size()), code);
        }
    }

    void prompts_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("style");
        QTest::addColumn<QString>("expected");
        const int mt = int(PromptStyle::HunyuanMT), hy = int(PromptStyle::HyMt15);
        QTest::newRow("hunyuan-mt en->zh")
            << "en"
            << "zh"
            << "It's on the house." << mt
            << "把下面的文本翻译成中文，不要额外解释。\n\nIt's on the house.";
        QTest::newRow("hunyuan-mt zh->en")
            << "zh"
            << "en"
            << "你好" << mt << "把下面的文本翻译成英语，不要额外解释。\n\n你好";
        QTest::newRow("hunyuan-mt en->de")
            << "en"
            << "de"
            << "Open the file" << mt
            << "Translate the following segment into German, without additional "
               "explanation.\n\nOpen the file";
        QTest::newRow("hy-mt1.5 en->zh")
            << "en"
            << "zh"
            << "It's on the house." << hy
            << "将以下文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释：\n\nIt's on the "
               "house.";
        QTest::newRow("hy-mt1.5 zh->bo")
            << "zh"
            << "bo"
            << "打开文件" << hy
            << "将以下文本翻译为藏语，注意只需要输出翻译后的结果，不要额外解释：\n\n打开文件";
        QTest::newRow("hy-mt1.5 en->ug")
            << "en"
            << "ug"
            << "Save" << hy
            << "Translate the following segment into Uyghur, without additional "
               "explanation.\n\nSave";
        QTest::newRow("hy-mt1.5 yue counts as chinese")
            << "en"
            << "yue"
            << "Hi" << hy
            << "将以下文本翻译为粤语，注意只需要输出翻译后的结果，不要额外解释：\n\nHi";
        QTest::newRow("unknown source, han text")
            << ""
            << "en"
            << "打开文件并保存" << hy
            << "将以下文本翻译为英语，注意只需要输出翻译后的结果，不要额外解释：\n\n打开文件并保存";
        QTest::newRow("unknown source, latin text")
            << ""
            << "fr"
            << "Open the file" << hy
            << "Translate the following segment into French, without additional "
               "explanation.\n\nOpen the file";
    }
    void prompts() {
        QFETCH(QString, source);
        QFETCH(QString, target);
        QFETCH(QString, text);
        QFETCH(int, style);
        QFETCH(QString, expected);
        PromptRequest r;
        r.text = text.toStdString();
        r.source = source.isEmpty() ? nullptr : find_language(source.toStdString());
        r.target = find_language(target.toStdString());
        QCOMPARE(QString::fromStdString(build_translation_prompt(r, PromptStyle(style))), expected);
    }

    void terminology() {
        PromptRequest r;
        r.text = "The typeface is ready.";
        r.source = find_language("en");
        r.target = find_language("zh");
        r.glossary = {{"typeface", "字体"}, {"ready", "就绪"}};
        QCOMPARE(QString::fromStdString(build_translation_prompt(r, PromptStyle::HyMt15)),
                 QStringLiteral("参考下面的翻译：\ntypeface 翻译成 字体\nready 翻译成 就绪\n\n"
                                "将以下文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释：\n"
                                "The typeface is ready."));
        QVERIFY_THROWS_EXCEPTION(Error, build_translation_prompt(r, PromptStyle::HunyuanMT));
    }

    void contextual() {
        PromptRequest r;
        r.text = "Save it.";
        r.target = find_language("de");
        r.context = "The user edits a document.";
        QCOMPARE(
            QString::fromStdString(build_translation_prompt(r, PromptStyle::HyMt15)),
            QStringLiteral("The user edits a document.\n参考上面的信息，把下面的文本翻译成德语，"
                           "注意不需要翻译上文，也不要额外解释：\nSave it."));
    }

    void formatted() {
        PromptRequest r;
        r.text = "<s1>Open</s1> the file";
        r.target = find_language("ja");
        r.formatted = true;
        QCOMPARE(
            QString::fromStdString(build_translation_prompt(r, PromptStyle::HyMt15)),
            QStringLiteral("将以下<source></source>之间的文本翻译为日语，注意只需要输出翻译后的"
                           "结果，不要额外解释，原文中的<sn></sn>标签表示标签内文本包含格式信息，"
                           "需要在译文中相应的位置尽量保留该标签。输出格式为：<target>str</"
                           "target>\n\n<source><s1>Open</s1> the file</source>"));
        QCOMPARE(QString::fromStdString(
                     clean_translation_output(" <target><s1>開く</s1>ファイル</target>\n", true)),
                 QStringLiteral("<s1>開く</s1>ファイル"));
    }

    void cleanOutput() {
        QCOMPARE(QString::fromStdString(clean_translation_output("  a\x01"
                                                                 "b\x1b[2Jc\x7f\td \n",
                                                                 false)),
                 QStringLiteral("ab[2Jc\td"));
        QCOMPARE(QString::fromStdString(single_line("one\ntwo\r\nthree\rfour")),
                 QStringLiteral("one two three four"));
        QCOMPARE(QString::fromStdString(single_line("end\n\n")), QStringLiteral("end"));
        QCOMPARE(QString::fromStdString(single_line("a \nb")), QStringLiteral("a b"));
    }

    void missingTarget() {
        PromptRequest r;
        r.text = "x";
        QVERIFY_THROWS_EXCEPTION(Error, build_translation_prompt(r, PromptStyle::HyMt15));
    }

    void looksChinese() {
        QVERIFY(looks_chinese("今天天气很好, OK"));
        QVERIFY(!looks_chinese("Hello 世界"));
        QVERIFY(!looks_chinese("こんにちは"));  // kana are not Han
        QVERIFY(!looks_chinese("12345"));
    }
};

QTEST_APPLESS_MAIN(TestPrompt)
#include "test_prompt.moc"
