// The glossary: TSV / CSV parsing (quoting, byte-order mark, header, errors with line
// numbers), matching against source text (word boundaries, case, CJK substrings, language
// pairs), the check of the translation, the terminology prompt the matching entries make,
// export -> import round trips, and the Translator's use of it (narrowing per segment, the
// check also with Hunyuan-MT's prompt, which has no glossary).

#include <QTest>

#include <filesystem>
#include <string>
#include <vector>

#include "mtdesk/error.h"
#include "mtdesk/translate/glossary.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/prompt.h"
#include "mtdesk/translate/translator.h"
#include "test_files.h"

using namespace mtdesk;

namespace {

std::vector<std::string> sources(const std::vector<GlossaryEntry>& entries) {
    std::vector<std::string> out;
    for (const auto& e : entries)
        out.push_back(e.source);
    return out;
}

// The FileError message of parsing `text`, or "" when it parses.
std::string parse_error(std::string_view text, GlossaryFormat format = GlossaryFormat::Auto) {
    try {
        Glossary::parse(text, format, "terms.tsv");
    } catch (const FileError& e) {
        return e.what();
    }
    return {};
}

using Strings = std::vector<std::string>;

}  // namespace

class TestGlossary : public QObject {
    Q_OBJECT

    test::CaseDirs dirs_;

  private slots:
    void initTestCase() { QVERIFY(dirs_.valid()); }

    // ---- parsing ----

    void tsvTwoColumnsTakeTheDefaults() {
        const Glossary g = Glossary::parse("typeface\t字体\nready\t就绪\n", GlossaryFormat::Tsv,
                                           "t.tsv", {"English", "zh-CN"});
        QCOMPARE(g.terms.size(), 2u);
        QCOMPARE(g.terms[0], (GlossaryTerm{"en", "zh", "typeface", "字体"}));
        QCOMPARE(g.terms[1], (GlossaryTerm{"en", "zh", "ready", "就绪"}));
        // Without defaults the pair is open: any language.
        const Glossary any = Glossary::parse("typeface\t字体", GlossaryFormat::Tsv, "t.tsv");
        QCOMPARE(any.terms.at(0), (GlossaryTerm{"", "", "typeface", "字体"}));
    }

    void tsvFourColumns() {
        const Glossary g = Glossary::parse("en\tde\tfile\tDatei\r\nfr\ten\tfichier\tfile\r\n",
                                           GlossaryFormat::Tsv, "t.tsv", {"ja", "ko"});
        QCOMPARE(g.terms.size(), 2u);
        QCOMPARE(g.terms[0], (GlossaryTerm{"en", "de", "file", "Datei"}));
        QCOMPARE(g.terms[1], (GlossaryTerm{"fr", "en", "fichier", "file"}));
        // An empty language cell takes the default.
        const Glossary d =
            Glossary::parse("\tde\tfile\tDatei\n", GlossaryFormat::Tsv, "t.tsv", {"en", ""});
        QCOMPARE(d.terms.at(0).source_lang, std::string("en"));
    }

    void csvQuoting() {
        const Glossary g = Glossary::parse(
            "\"Save, then close\",\"Speichern, dann schließen\"\n"
            "\"the \"\"Open\"\" button\",\"die Schaltfläche \"\"Öffnen\"\"\"\n"
            "5\" screen,5-Zoll-Bildschirm\n"
            "  \"padded\"  ,  gepolstert  \n",
            GlossaryFormat::Csv, "t.csv");
        QCOMPARE(g.terms.size(), 4u);
        QCOMPARE(g.terms[0].source, std::string("Save, then close"));
        QCOMPARE(g.terms[0].target, std::string("Speichern, dann schließen"));
        QCOMPARE(g.terms[1].source, std::string("the \"Open\" button"));
        QCOMPARE(g.terms[1].target, std::string("die Schaltfläche \"Öffnen\""));
        QCOMPARE(g.terms[2].source, std::string("5\" screen"));  // quote inside: literal
        QCOMPARE(g.terms[3].source, std::string("padded"));
        QCOMPARE(g.terms[3].target, std::string("gepolstert"));
    }

    void tsvQuotingKeepsTheDelimiter() {
        const Glossary g = Glossary::parse("\"a,b\"\t\"x \"\"y\"\"\"\n", GlossaryFormat::Tsv, "t");
        QCOMPARE(g.terms.at(0).source, std::string("a,b"));
        QCOMPARE(g.terms.at(0).target, std::string("x \"y\""));
    }

    void byteOrderMarkAndHeader() {
        const Glossary g =
            Glossary::parse("\xEF\xBB\xBFsrc_lang,tgt_lang,source,target\nen,zh,GPU,显卡\n",
                            GlossaryFormat::Csv, "t.csv");
        QCOMPARE(g.terms.size(), 1u);
        QCOMPARE(g.terms[0], (GlossaryTerm{"en", "zh", "GPU", "显卡"}));
    }

    void headerDecidesTheColumnOrder() {
        const Glossary g = Glossary::parse(
            "Target Term\tSource Language\tsource\tTarget-Lang\nDatei\tEnglish\tfile\tGerman\n",
            GlossaryFormat::Tsv, "t.tsv");
        QCOMPARE(g.terms.size(), 1u);
        QCOMPARE(g.terms[0], (GlossaryTerm{"en", "de", "file", "Datei"}));
        // A two-column header with defaults for the pair.
        const Glossary two = Glossary::parse("term,translation\nfile,fichier\n",
                                             GlossaryFormat::Csv, "t.csv", {"en", "fr"});
        QCOMPARE(two.terms.size(), 1u);
        QCOMPARE(two.terms[0], (GlossaryTerm{"en", "fr", "file", "fichier"}));
        // A first row that is not all column names is data.
        const Glossary data =
            Glossary::parse("source,Quelle\n", GlossaryFormat::Csv, "t.csv", {"en", "de"});
        QCOMPARE(data.terms.size(), 1u);
        QCOMPARE(data.terms[0].target, std::string("Quelle"));
    }

    void blankLinesAndTrailingEmptyColumns() {
        const Glossary g = Glossary::parse("\n\nfile,Datei,,\n\r\n ,  \nfolder,Ordner,\n",
                                           GlossaryFormat::Csv, "t.csv", {"en", "de"});
        QCOMPARE(g.terms.size(), 2u);
        QCOMPARE(g.terms[1], (GlossaryTerm{"en", "de", "folder", "Ordner"}));
    }

    void autoFormatFromTheFirstLine() {
        const Glossary tsv = Glossary::parse("a,b\tc,d\n", GlossaryFormat::Auto, "t.txt");
        QCOMPARE(tsv.terms.at(0).source, std::string("a,b"));
        const Glossary csv = Glossary::parse("a b,c d\n", GlossaryFormat::Auto, "t.txt");
        QCOMPARE(csv.terms.at(0).target, std::string("c d"));
        QCOMPARE(glossary_format_for("x/terms.CSV"), GlossaryFormat::Csv);
        QCOMPARE(glossary_format_for("terms.tsv"), GlossaryFormat::Tsv);
        QCOMPARE(glossary_format_for("terms.txt"), GlossaryFormat::Auto);
    }

    void errorsNameTheFileAndLine_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("three columns")
            << QByteArray("a\tb\n\nc\td\te\n")
            << "terms.tsv: line 3: 3 columns; a glossary row has 2 (source, target) or 4";
        QTest::newRow("header count")
            << QByteArray("source\ttarget\na\tb\nen\tde\tc\td\n")
            << "terms.tsv: line 3: 4 columns, but the header on line 1 has 2";
        QTest::newRow("empty target") << QByteArray("a\tb\nc\t\n")
                                      << "terms.tsv: line 2: empty "
                                         "target term";
        QTest::newRow("empty target, four columns")
            << QByteArray("en,de,a,b\nen,de,file,,\n") << "terms.tsv: line 2: empty target term";
        QTest::newRow("empty source")
            << QByteArray("en\tde\t\tDatei\n") << "terms.tsv: line 1: empty source term";
        QTest::newRow("unknown language") << QByteArray("a\tb\nxx\tde\tfile\tDatei\n")
                                          << "terms.tsv: line 2: unknown source language 'xx'";
        QTest::newRow("unterminated quote") << QByteArray("a,b\nc,d\n\"open,e\nf,g\n")
                                            << "terms.tsv: line 3: a quoted field is never closed";
        QTest::newRow("text after quote")
            << QByteArray("a,b\n\"x\"y,z\n") << "terms.tsv: line 2: text after the closing quote";
        QTest::newRow("line break in a term")
            << QByteArray("a,b\n\"two\nlines\",c\nd,e,f\n")
            << "terms.tsv: line 2: the source term contains a tab or a line break";
        // Line numbers count the lines inside quoted fields.
        QTest::newRow("line after a quoted line break")
            << QByteArray("\"en\n\",de,file,Datei\nc,d,e\n") << "terms.tsv: line 3: 3 columns";
        QTest::newRow("invalid UTF-8")
            << QByteArray("a\tb\nc\t\xC3\x28\n") << "terms.tsv: line 2: not valid UTF-8";
        QTest::newRow("UTF-16") << QByteArray(
                                       "\xFF\xFE"
                                       "a\0\t\0b\0",
                                       8)
                                << "terms.tsv: UTF-16 or UTF-32 text; save the glossary as UTF-8";
        QTest::newRow("NUL") << QByteArray("a\tb\0", 4) << "terms.tsv: line 1: contains NUL bytes";
    }
    void errorsNameTheFileAndLine() {
        QFETCH(QByteArray, text);
        QFETCH(QString, expected);
        const QString error = QString::fromStdString(parse_error(text.toStdString()));
        QVERIFY2(error.startsWith(expected), qPrintable(error));
    }

    void readFiles() {
        const auto dir = dirs_.fresh();
        test::write_file(dir / "terms.csv", "source,target\nfile,Datei\n");
        const Glossary g = Glossary::read(dir / "terms.csv", {"en", "de"});
        QCOMPARE(g.terms.size(), 1u);
        QCOMPARE(g.terms[0], (GlossaryTerm{"en", "de", "file", "Datei"}));

        QVERIFY_THROWS_EXCEPTION(FileError, Glossary::read(dir / "missing.tsv"));
        try {
            Glossary::read(dir / "missing.tsv");
        } catch (const FileError& e) {
            QCOMPARE(e.file(), (dir / "missing.tsv").string());
        }
        test::write_file(dir / "bad.tsv", "a\tb\nc\n");
        try {
            Glossary::read(dir / "bad.tsv");
            QFAIL("a malformed file was accepted");
        } catch (const FileError& e) {
            QCOMPARE(e.file(), (dir / "bad.tsv").string());
            QVERIFY2(std::string(e.what()).find("line 2: 1 column;") != std::string::npos,
                     e.what());
        }
    }

    // ---- writing ----

    void roundTrip_data() {
        QTest::addColumn<int>("format");
        QTest::newRow("tsv") << int(GlossaryFormat::Tsv);
        QTest::newRow("csv") << int(GlossaryFormat::Csv);
    }
    void roundTrip() {
        QFETCH(int, format);
        Glossary g;
        g.terms = {
            {"en", "zh", "typeface", "字体"},
            {"en", "de", "Save, then close", "Speichern, dann schließen"},
            {"", "fr", "the \"Open\" button", "le bouton « Ouvrir »"},
            {"de", "", "\"quoted\"", "x"},
            {"", "", "source", "target"},  // looks like a header row: must stay data
        };
        const std::string text = g.write(GlossaryFormat(format));
        QVERIFY(text.starts_with(format == int(GlossaryFormat::Csv)
                                     ? "src_lang,tgt_lang,source,target\n"
                                     : "src_lang\ttgt_lang\tsource\ttarget\n"));
        QCOMPARE(Glossary::parse(text, GlossaryFormat(format), "x"), g);
        QCOMPARE(Glossary::parse(text, GlossaryFormat::Auto, "x"), g);

        const auto dir = dirs_.fresh();
        const auto file = dir / (format == int(GlossaryFormat::Csv) ? "g.csv" : "g.tsv");
        test::write_file(file, text);
        QCOMPARE(Glossary::read(file), g);
    }

    // ---- matching ----

    void matchingOnWordBoundaries() {
        Glossary g;
        g.terms = {{"en", "de", "file", "Datei"},
                   {"en", "de", "file manager", "Dateiverwaltung"},
                   {"en", "de", "C++", "C++"},
                   {"en", "de", "Qt", "Qt"}};
        QCOMPARE(sources(g.matching_entries("Open the FILE manager.", "en", "de")),
                 (Strings{"file", "file manager"}));
        QCOMPARE(sources(g.matching_entries("Open the file's menu", "en", "de")),
                 (Strings{"file"}));
        QCOMPARE(sources(g.matching_entries("files, profile, filed", "en", "de")), Strings{});
        QCOMPARE(sources(g.matching_entries("Learn C++ with QtCreator", "en", "de")),
                 (Strings{"C++"}));
        QCOMPARE(sources(g.matching_entries("Learn Qt.", "en", "de")), (Strings{"Qt"}));
        QCOMPARE(sources(g.matching_entries("", "en", "de")), Strings{});
    }

    void matchingUnicode() {
        Glossary g;
        g.terms = {{"", "", "Straße", "street"},
                   {"", "", "caf\xC3\xA9", "coffee shop"},  // NFC é
                   {"", "", "na\x69\xCC\x88ve", "naive"},   // NFD ï
                   {"", "", "Москва", "Moscow"}};
        QCOMPARE(sources(g.matching_entries("DIE STRASSE", "de", "en")), (Strings{"Straße"}));
        QCOMPARE(sources(g.matching_entries("un cafe\xCC\x81 noir", "fr", "en")),  // NFD text
                 (Strings{"caf\xC3\xA9"}));
        QCOMPARE(sources(g.matching_entries("so na\xC3\xAFve", "en", "de")),
                 (Strings{"na\x69\xCC\x88ve"}));
        QCOMPARE(sources(g.matching_entries("в МОСКВЕ и Москва", "ru", "en")), (Strings{"Москва"}));
        QCOMPARE(sources(g.matching_entries("Москвариум", "ru", "en")), Strings{});
    }

    void matchingCjkSubstrings() {
        Glossary g;
        g.terms = {{"zh", "en", "字体", "typeface"},
                   {"ja", "en", "ファイル", "file"},
                   {"zh", "en", "GitHub", "GitHub"},
                   {"th", "en", "ไฟล์", "file"}};
        QCOMPARE(sources(g.matching_entries("设置字体大小", "zh", "en")), (Strings{"字体"}));
        QCOMPARE(sources(g.matching_entries("ファイルを開く", "ja", "en")), (Strings{"ファイル"}));
        QCOMPARE(sources(g.matching_entries("使用github管理代码", "zh", "en")),
                 (Strings{"GitHub"}));
        QCOMPARE(sources(g.matching_entries("เปิดไฟล์นี้", "th", "en")), (Strings{"ไฟล์"}));
        QCOMPARE(sources(g.matching_entries("设置字号", "zh", "en")), Strings{});
    }

    void matchingLanguagePairs() {
        Glossary g;
        g.terms = {{"en", "zh", "file", "文件"},
                   {"en", "de", "file", "Datei"},
                   {"", "fr", "file", "fichier"},
                   {"en", "", "open", "OPEN"}};
        auto pairs = [&](std::string_view src, std::string_view tgt) {
            std::vector<std::string> out;
            for (const auto& e : g.matching_entries("open file", src, tgt))
                out.push_back(e.source + ">" + e.target);
            return out;
        };
        QCOMPARE(pairs("en", "zh"), (Strings{"file>文件", "open>OPEN"}));
        QCOMPARE(pairs("English", "German"), (Strings{"file>Datei", "open>OPEN"}));
        QCOMPARE(pairs("es", "fr"), (Strings{"file>fichier"}));
        QCOMPARE(pairs("de", "zh"), Strings{});
        // Unknown source language: every pair into the target.
        QCOMPARE(pairs("", "de"), (Strings{"file>Datei", "open>OPEN"}));
    }

    void matchingRemovesDuplicates() {
        Glossary g;
        g.terms = {{"", "", "File", "Datei"}, {"", "", "file", "Datei"}, {"", "", "file", "Akte"}};
        const auto m = g.matching_entries("file", "en", "de");
        QCOMPARE(m.size(), 2u);
        QCOMPARE(m[0].target, std::string("Datei"));
        QCOMPARE(m[1].target, std::string("Akte"));
    }

    void entriesInNarrows() {
        const std::vector<GlossaryEntry> all = {{"file", "Datei"}, {"folder", "Ordner"}};
        QCOMPARE(sources(Glossary::entries_in("Save the file.", all)), (Strings{"file"}));
        QCOMPARE(sources(Glossary::entries_in("Nothing here.", all)), Strings{});
    }

    // ---- check ----

    void checkListsMissingTargets() {
        const std::vector<GlossaryEntry> entries = {
            {"file", "Datei"}, {"folder", "Ordner"}, {"typeface", "字体"}, {"GPU", "Grafikkarte"}};
        const auto missing =
            Glossary::check("Die DATEI liegt im Ordnerbaum; 字体大小 der grafikkarte.", entries);
        // "Ordner" only occurs inside a longer word; the others occur (case-insensitively).
        QCOMPARE(sources(missing), (Strings{"folder"}));
        QCOMPARE(sources(Glossary::check("", entries)),
                 (Strings{"file", "folder", "typeface", "GPU"}));
        QVERIFY(Glossary::check("anything", {}).empty());
    }

    // ---- the prompt ----

    void terminologyPromptFromMatchingEntries() {
        Glossary g;
        g.terms = {{"en", "zh", "typeface", "字体"},
                   {"en", "zh", "printer", "打印机"},  // not in the text: not in the prompt
                   {"en", "zh", "ready", "就绪"},
                   {"en", "de", "ready", "bereit"}};  // other pair
        PromptRequest r;
        r.text = "The Typeface is ready.";
        r.source = find_language("en");
        r.target = find_language("zh");
        r.glossary = g.matching_entries(r.text, "en", "zh");
        QCOMPARE(QString::fromStdString(build_translation_prompt(r, PromptStyle::HyMt15)),
                 QStringLiteral("参考下面的翻译：\ntypeface 翻译成 字体\nready 翻译成 就绪\n\n"
                                "将以下文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释：\n"
                                "The Typeface is ready."));
    }

    // ---- the Translator ----

    void translatorNarrowsAndChecks() {
        auto translator = Translator::open_cpu(MTDESK_DEMO_MODEL_DIR);
        QCOMPARE(translator->style(), PromptStyle::HyMt15);
        // The demo model was not trained on the terminology prompt: by default its glossary is
        // only checked (see demoModelChecksOnly); here the prompt path is what is tested.
        QVERIFY(!translator->terminology_prompt());
        translator->set_terminology_prompt(true);
        PromptRequest r;
        r.text = "Open the file";
        r.source = find_language("en");
        r.target = find_language("de");
        const std::vector<GlossaryEntry> relevant = {{"file", "Xqzdatei"}};
        r.glossary = {{"printer", "Drucker"}, relevant[0]};
        // Only the entry of the text goes into the prompt.
        PromptRequest narrowed = r;
        narrowed.glossary = relevant;
        TranslateOptions options;
        options.sampling = SamplingParams::greedy_decoding();
        const TranslationResult full = translator->translate(r, options);
        const TranslationResult expected = translator->translate(narrowed, options);
        QCOMPARE(full.prompt_tokens, expected.prompt_tokens);
        QCOMPARE(full.text, expected.text);
        QVERIFY(full.prompt_tokens > static_cast<int>(translator
                                                          ->encode_prompt([&] {
                                                              PromptRequest plain = r;
                                                              plain.glossary.clear();
                                                              return plain;
                                                          }())
                                                          .size()));
        // A made-up target term the model cannot produce is reported missing.
        QCOMPARE(full.missing_terms.size(), 1u);
        QCOMPARE(full.missing_terms[0].source, std::string("file"));
        QCOMPARE(full.missing_terms[0].target, std::string("Xqzdatei"));
    }

    // A model whose directory does not say HY-MT gets the glossary checked, not prompted.
    void demoModelChecksOnly() {
        auto translator = Translator::open_cpu(MTDESK_DEMO_MODEL_DIR);
        PromptRequest r;
        r.text = "Open the file";
        r.source = find_language("en");
        r.target = find_language("de");
        PromptRequest plain = r;
        r.glossary = {{"file", "Xqzdatei"}};
        QCOMPARE(translator->encode_prompt(r), translator->encode_prompt(plain));
        TranslateOptions options;
        options.sampling = SamplingParams::greedy_decoding();
        const TranslationResult result = translator->translate(r, options);
        QCOMPARE(result.missing_terms.size(), size_t(1));
        QVERIFY(guess_terminology_prompt("/models/HY-MT1.5-7B"));
        QVERIFY(guess_terminology_prompt("/models/hy-mt1.5-1.8b/"));
        QVERIFY(!guess_terminology_prompt("/models/mtdesk-demo"));
    }

    // The prompt style comes from the model directory's own name, not from the folders above
    // it; a Hugging Face cache snapshot is named by its repository.
    void promptStyleFromTheDirectoryName() {
        QCOMPARE(guess_prompt_style("/models/Hunyuan-MT-7B"), PromptStyle::HunyuanMT);
        QCOMPARE(guess_prompt_style("/models/hunyuan-mt-7b-fp8/"), PromptStyle::HunyuanMT);
        QCOMPARE(guess_prompt_style("/home/me/hunyuan-mt-tests/mtdesk-demo"), PromptStyle::HyMt15);
        QCOMPARE(guess_prompt_style("/opt/Hunyuan-MT/share/HY-MT1.5-1.8B"), PromptStyle::HyMt15);
        const std::string hf =
            "/home/me/.cache/huggingface/hub/models--tencent--Hunyuan-MT-7B/"
            "snapshots/0123abcd";
        QCOMPARE(model_name_of(hf), std::string("Hunyuan-MT-7B"));
        QCOMPARE(guess_prompt_style(hf), PromptStyle::HunyuanMT);
        QVERIFY(guess_terminology_prompt("/x/models--tencent--HY-MT1.5-7B/snapshots/0123abcd/"));
        QVERIFY(!guess_terminology_prompt("/hy-mt/models/mtdesk-demo"));
        QCOMPARE(model_name_of("/models/HY-MT1.5-7B/"), std::string("HY-MT1.5-7B"));
    }

    void hunyuanMtPromptHasNoGlossaryButIsChecked() {
        auto translator = Translator::open_cpu(MTDESK_DEMO_MODEL_DIR, PromptStyle::HunyuanMT);
        PromptRequest r;
        r.text = "Open the file";
        r.source = find_language("en");
        r.target = find_language("de");
        PromptRequest plain = r;
        r.glossary = {{"file", "Xqzdatei"}};
        QCOMPARE(translator->encode_prompt(r), translator->encode_prompt(plain));
        TranslateOptions options;
        options.sampling = SamplingParams::greedy_decoding();
        const TranslationResult with = translator->translate(r, options);
        const TranslationResult without = translator->translate(plain, options);
        QCOMPARE(with.text, without.text);
        QCOMPARE(with.missing_terms.size(), 1u);
        QCOMPARE(with.missing_terms[0].target, std::string("Xqzdatei"));
        QVERIFY(without.missing_terms.empty());
        // A target term the translation has is not reported.
        const std::string word = with.text.substr(0, with.text.find(' '));
        QVERIFY(!word.empty());
        r.glossary = {{"file", "Xqzdatei"}, {"Open", word}};
        const TranslationResult checked = translator->translate(r, options);
        QCOMPARE(checked.missing_terms.size(), 1u);
        QCOMPARE(checked.missing_terms[0].target, std::string("Xqzdatei"));
    }

    void translateLinesReportsPerLine() {
        auto translator = Translator::open_cpu(MTDESK_DEMO_MODEL_DIR);
        PromptRequest r;
        r.text = "Open the file\n\nSave the document\n";
        r.source = find_language("en");
        r.target = find_language("fr");
        r.glossary = {{"file", "Xqzfichier"}, {"document", "Xqzdoc"}, {"printer", "imprimante"}};
        TranslateOptions options;
        options.sampling = SamplingParams::greedy_decoding();
        struct Seen {
            std::size_t line;
            QString text;
            Strings missing;
        };
        std::vector<Seen> seen;
        const std::string out = translator->translate_lines(
            r, options, {}, [&](std::size_t line, const TranslationResult& result) {
                Strings targets;
                for (const auto& e : result.missing_terms)
                    targets.push_back(e.target);
                seen.push_back({line, QString::fromStdString(result.text), targets});
            });
        QCOMPARE(seen.size(), 2u);
        QCOMPARE(seen[0].line, 0u);
        QCOMPARE(seen[1].line, 2u);
        auto one_line = [](const QString& t) {
            return QString::fromStdString(single_line(t.toStdString()));
        };
        QCOMPARE(QString::fromStdString(out),
                 one_line(seen[0].text) + "\n\n" + one_line(seen[1].text) + "\n");
        // Each line is checked against its own entry only (never "printer", never the other
        // line's): reported exactly when the model did not write the made-up term.
        auto expected = [](const QString& text, const char* term) {
            return text.contains(QLatin1String(term), Qt::CaseInsensitive) ? Strings{}
                                                                           : Strings{term};
        };
        QCOMPARE(seen[0].missing, expected(seen[0].text, "Xqzfichier"));
        QCOMPARE(seen[1].missing, expected(seen[1].text, "Xqzdoc"));
    }
};

QTEST_GUILESS_MAIN(TestGlossary)
#include "test_glossary.moc"
