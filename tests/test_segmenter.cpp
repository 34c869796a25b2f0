// Cutting long texts into pieces that fit one prompt.

#include <QTest>

#include <string>

#include "mtdesk/error.h"
#include "mtdesk/translate/segmenter.h"

using namespace mtdesk;

namespace {

int bytes(std::string_view s) {
    return static_cast<int>(s.size());
}

std::string join(const std::vector<std::string_view>& pieces) {
    std::string out;
    for (auto p : pieces)
        out.append(p);
    return out;
}

bool valid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const int n = c < 0x80         ? 1
                      : (c >> 5) == 6  ? 2
                      : (c >> 4) == 14 ? 3
                      : (c >> 3) == 30 ? 4
                                       : 0;
        if (n == 0 || i + n > s.size()) return false;
        for (int k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
        i += n;
    }
    return true;
}

}  // namespace

class TestSegmenter : public QObject {
    Q_OBJECT

  private slots:
    void sentences_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("count");
        QTest::newRow("english") << "Open the file. Save it! Is it done? Yes." << 4;
        QTest::newRow("chinese") << "打开文件。保存更改！完成了吗？" << 3;
        QTest::newRow("one") << "No full stop here" << 1;
        QTest::newRow("abbreviation-free numbers") << "Version 2.5 is out. Update now." << 2;
    }
    void sentences() {
        QFETCH(QString, text);
        QFETCH(int, count);
        const std::string s = text.toStdString();
        const auto parts = split_sentences(s);
        QCOMPARE(int(parts.size()), count);
        QCOMPARE(join(parts), s);
    }

    // Pieces fit the budget, concatenate to the text, and end at sentence boundaries when the
    // sentences fit.
    void budgetAtSentences() {
        const std::string s = "First sentence here. Second one follows. Third and last.";
        const auto pieces = split_to_budget(s, 45, bytes);
        QCOMPARE(join(pieces), s);
        QCOMPARE(int(pieces.size()), 2);
        QCOMPARE(std::string(pieces[0]), std::string("First sentence here. Second one follows. "));
        for (auto p : pieces)
            QVERIFY(bytes(p) <= 45);
    }

    // A sentence over budget is cut at spaces; a word over budget between characters, never
    // inside a UTF-8 sequence.
    void budgetFinerCuts() {
        std::string s = "alpha beta gamma delta epsilon zeta eta theta iota kappa";
        auto pieces = split_to_budget(s, 12, bytes);
        QCOMPARE(join(pieces), s);
        for (auto p : pieces) {
            QVERIFY(bytes(p) <= 12);
            QVERIFY(!p.starts_with(' '));
        }
        std::string word;
        for (int i = 0; i < 50; ++i)
            word += "藏";  // 3 bytes each
        pieces = split_to_budget(word, 10, bytes);
        QCOMPARE(join(pieces), word);
        QCOMPARE(int(pieces.size()), 17);  // 3 characters (9 bytes) per piece
        for (auto p : pieces) {
            QVERIFY(bytes(p) <= 10);
            QVERIFY(valid_utf8(p));
        }
    }

    void fitsAlready() {
        const auto pieces = split_to_budget("short", 100, bytes);
        QCOMPARE(int(pieces.size()), 1);
        QVERIFY(split_to_budget("", 5, bytes).empty());
        QVERIFY_THROWS_EXCEPTION(Error, split_to_budget("x", 0, bytes));
    }
};

QTEST_APPLESS_MAIN(TestSegmenter)
#include "test_segmenter.moc"
