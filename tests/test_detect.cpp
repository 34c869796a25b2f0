// Source language detection (CLD2) mapped onto the models' languages.

#include <QTest>

#include "mtdesk/translate/detect.h"

using namespace mtdesk;

class TestDetect : public QObject {
    Q_OBJECT

  private slots:
    void detect_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("code");
        QTest::newRow("en") << "The quick brown fox jumps over the lazy dog while the printer "
                               "keeps running out of paper every single morning."
                            << "en";
        QTest::newRow("de") << "Die Datei konnte nicht gespeichert werden, weil der Datenträger "
                               "voll ist. Bitte geben Sie Speicherplatz frei."
                            << "de";
        QTest::newRow("zh")
            << "无法保存文件，因为磁盘已满。请释放一些空间后再试一次，谢谢您的耐心。"
            << "zh";
        QTest::newRow("ja")
            << "ディスクがいっぱいのため、ファイルを保存できませんでした。空き容量を"
               "確保してからもう一度お試しください。"
            << "ja";
        QTest::newRow("ru") << "Не удалось сохранить файл, потому что диск заполнен. Освободите "
                               "место и попробуйте ещё раз."
                            << "ru";
        QTest::newRow("uk") << "Не вдалося зберегти файл, тому що диск заповнений. Звільніть "
                               "місце та спробуйте ще раз, будь ласка."
                            << "uk";
        QTest::newRow("ar") << "تعذر حفظ الملف لأن القرص ممتلئ. يرجى تحرير بعض المساحة والمحاولة "
                               "مرة أخرى."
                            << "ar";
        QTest::newRow("bo") << "བོད་ཡིག་ནི་བོད་ཀྱི་སྐད་ཡིག་ཡིན། ང་ཚོས་ཡི་གེ་འདི་བོད་ཡིག་ཏུ་བྲིས་ཡོད། "
                               "བོད་ཀྱི་ལོ་རྒྱུས་ནི་རིང་པོ་ཡིན།"
                            << "bo";
        QTest::newRow("ug") << "ھۆججەتنى ساقلىغىلى بولمىدى، چۈنكى دىسكا تولۇپ كەتتى. بوشلۇق بىكار "
                               "قىلىپ قايتا سىناڭ."
                            << "ug";
        QTest::newRow("kk") << "Файлды сақтау мүмкін болмады, себебі диск толы. Орын босатып, "
                               "қайталап көріңіз."
                            << "kk";
        QTest::newRow("mn") << "Дискэн дүүрсэн тул файлыг хадгалж чадсангүй. Зай гаргаад дахин "
                               "оролдоно уу."
                            << "mn";
        QTest::newRow("he") << "לא ניתן לשמור את הקובץ מכיוון שהדיסק מלא. אנא פנה מקום ונסה שוב."
                            << "he";
    }
    void detect() {
        QFETCH(QString, text);
        QFETCH(QString, code);
        const Detection d = detect_language(text.toStdString());
        QVERIFY(d.language != nullptr);
        QCOMPARE(QString::fromUtf8(d.language->code.data(), d.language->code.size()), code);
        QVERIFY(d.reliable);
    }

    // The source language assumed without --from / "Detect": CLD2's when it is sure; else
    // Chinese for Han-majority text, nothing for the rest (CLD2's unsure answer for a short
    // line is often English whatever the script).
    void sourceLanguage_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("code");
        QTest::addColumn<bool>("reliable");
        QTest::newRow("English sentence") << "Where is the station?"
                                          << "en" << true;
        QTest::newRow("German sentence")
            << "Die Datei konnte nicht geöffnet werden, weil sie verwendet wird."
            << "de" << true;
        QTest::newRow("short Chinese") << "保存"
                                       << "zh" << false;
        QTest::newRow("short mixed, Han-majority") << "保存文件 ok"
                                                   << "zh" << false;
        QTest::newRow("short English") << "Open"
                                       << "" << false;
        QTest::newRow("short Cyrillic") << "Файл"
                                        << "" << false;
        QTest::newRow("short kana") << "はい"
                                    << "" << false;
        QTest::newRow("empty") << ""
                               << "" << false;
    }
    void sourceLanguage() {
        QFETCH(QString, text);
        QFETCH(QString, code);
        QFETCH(bool, reliable);
        const Detection d = detect_source_language(text.toStdString());
        const QString got =
            d.language ? QString::fromUtf8(d.language->code.data(), d.language->code.size())
                       : QString();
        QCOMPARE(got, code);
        QCOMPARE(d.reliable, reliable);
    }

    void nothingToDetect() {
        QVERIFY(!detect_language("").reliable);
        QVERIFY(!detect_language("12345 !!!").reliable);
        // Invalid UTF-8 does not crash CLD2 (it is replaced first).
        (void)detect_language("\xff\xfe\xc3 broken");
    }
};

QTEST_APPLESS_MAIN(TestDetect)
#include "test_detect.moc"
