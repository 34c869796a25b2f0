// The glossary and the casing guard in the desktop app: persistence in QSettings, the settings
// dialog's glossary page (table, add / remove, import / export as TSV and CSV, refusing
// incomplete rows, the casing guard checkbox), and a translation in the window that reports a
// glossary term missing from the output (bundled demo model).

#include <QApplication>
#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QMainWindow>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include "glossary_model.h"
#include "gui_main.h"
#include "main_window.h"
#include "mtdesk/translate/glossary.h"
#include "settings.h"
#include "settings_dialog.h"
#include "translation_controller.h"

using namespace mtdesk;
using namespace mtdesk::ui;

namespace {

const QString kDemoModel = QStringLiteral(MTDESK_DEMO_MODEL_DIR);
constexpr int kTimeout = 60000;

Glossary sample_glossary() {
    Glossary g;
    g.terms = {{"en", "zh", "typeface", "字体"},
               {"en", "de", "Save, then \"close\"", "Speichern, dann „schließen“"},
               {"", "fr", "file", "fichier"}};
    return g;
}

bool write(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

QByteArray read(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestUiGlossary : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() {
        // Settings go to a test location, never the user's.
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("mtdesk-test"));
        QCoreApplication::setApplicationName(QStringLiteral("test_ui_glossary"));
        init_resources();
    }

    void init() { QSettings().clear(); }

    void settingsPersistGlossaryAndFlag() {
        {
            Settings s;
            QVERIFY(s.casingGuard());  // on by default
            QVERIFY(s.glossary().empty());
            QVERIFY(!s.translationOptions().glossary);
            QVERIFY(s.translationOptions().casing_guard);
            QSignalSpy changed(&s, &Settings::changed);
            s.setGlossary(sample_glossary());
            s.setCasingGuard(false);
            QCOMPARE(changed.count(), 2);
            s.setGlossary(sample_glossary());  // the same: no change
            QCOMPARE(changed.count(), 2);
            s.sync();
        }
        {
            Settings s;  // a new object reads what was stored
            QCOMPARE(s.glossary(), sample_glossary());
            QVERIFY(!s.casingGuard());
            const TranslationOptions o = s.translationOptions();
            QVERIFY(!o.casing_guard);
            QVERIFY(o.glossary);
            QCOMPARE(*o.glossary, sample_glossary());
            // A shorter list leaves no stale entries behind.
            Glossary one;
            one.terms = {sample_glossary().terms[2]};
            s.setGlossary(one);
            s.setCasingGuard(true);
            s.sync();
        }
        Settings s;
        QCOMPARE(s.glossary(), ([] {
                     Glossary one;
                     one.terms = {sample_glossary().terms[2]};
                     return one;
                 }()));
        QVERIFY(s.casingGuard());
        QCOMPARE(QSettings().value(QStringLiteral("glossary/terms/size")).toInt(), 1);
    }

    void modelEditsRows() {
        GlossaryModel model;
        model.setGlossary(sample_glossary());
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.columnCount(), 4);
        const QModelIndex lang = model.index(2, GlossaryModel::SourceLanguage);
        QCOMPARE(lang.data(Qt::EditRole).toString(), QString());
        QCOMPARE(lang.data().toString(), QStringLiteral("Any language"));
        QVERIFY(model.setData(lang, QStringLiteral("German")));
        QCOMPARE(lang.data(Qt::EditRole).toString(), QStringLiteral("de"));
        QCOMPARE(lang.data().toString(), QStringLiteral("German (de)"));
        QVERIFY(!model.setData(lang, QStringLiteral("Klingon")));
        QCOMPARE(model.terms()[2].source_lang, std::string("de"));
        const QModelIndex term = model.index(2, GlossaryModel::TargetTerm);
        QVERIFY(model.setData(term, QStringLiteral("  un\tfichier \n")));
        QCOMPARE(model.terms()[2].target, std::string("un fichier"));
        // Only the term that is not in the table (row 2 was changed above) is added.
        QCOMPARE(model.addTerms(sample_glossary()), 1);
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(model.terms()[3], sample_glossary().terms[2]);
        QVERIFY(model.removeRows(0, 2));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.terms()[0], (GlossaryTerm{"de", "fr", "file", "un fichier"}));
        QVERIFY(!model.removeRows(1, 2));
    }

    void dialogImportsAndExports() {
        Settings settings;
        settings.setGlossary(sample_glossary());
        SettingsDialog dialog(settings);
        GlossaryModel* model = dialog.glossaryModel();
        QVERIFY(model);
        QCOMPARE(model->rowCount(), 3);
        auto* table = dialog.findChild<QTableView*>(QStringLiteral("glossaryTable"));
        QVERIFY(table);
        QCOMPARE(table->model(), model);

        QTemporaryDir tmp;
        // Import: header, BOM, quoting; a term that is there already is not added twice.
        const QString tsv = tmp.filePath(QStringLiteral("terms.tsv"));
        QVERIFY(write(tsv,
                      "\xEF\xBB\xBFsource\ttarget\n"
                      "printer\tDrucker\n"
                      "\"tab\"\"s\"\tx\n"
                      "file\tfichier\n"));
        QVERIFY2(dialog.importGlossary(tsv), qPrintable(dialog.glossaryMessage()));
        QCOMPARE(model->rowCount(), 6);
        QCOMPARE(model->terms()[3], (GlossaryTerm{"", "", "printer", "Drucker"}));
        QCOMPARE(model->terms()[4].source, std::string("tab\"s"));
        QVERIFY(dialog.glossaryMessage().contains(QStringLiteral("terms.tsv")));
        QVERIFY(dialog.importGlossary(tsv));  // again: nothing new
        QCOMPARE(model->rowCount(), 6);

        // A malformed file: the message names the file and the line; the table is unchanged.
        const QString bad = tmp.filePath(QStringLiteral("bad.csv"));
        QVERIFY(write(bad, "a,b\nc,d,e\n"));
        QVERIFY(!dialog.importGlossary(bad));
        QVERIFY2(dialog.glossaryMessage().contains(bad + QStringLiteral(": line 2: 3 columns")),
                 qPrintable(dialog.glossaryMessage()));
        QCOMPARE(model->rowCount(), 6);
        QVERIFY(!dialog.importGlossary(tmp.filePath(QStringLiteral("missing.tsv"))));
        QVERIFY(dialog.glossaryMessage().contains(QStringLiteral("missing.tsv")));

        // Export as CSV and as TSV; both read back to the table's rows.
        Glossary table_rows;
        table_rows.terms = model->terms();
        for (const QString& name : {QStringLiteral("out.csv"), QStringLiteral("out.tsv")}) {
            const QString path = tmp.filePath(name);
            QVERIFY2(dialog.exportGlossary(path), qPrintable(dialog.glossaryMessage()));
            const QByteArray bytes = read(path);
            QVERIFY(bytes.startsWith(name.endsWith(QLatin1String(".csv"))
                                         ? "src_lang,tgt_lang,source,target\n"
                                         : "src_lang\ttgt_lang\tsource\ttarget\n"));
            QCOMPARE(Glossary::parse(bytes.toStdString(), GlossaryFormat::Auto, "x"), table_rows);
        }
    }

    void dialogAddsRemovesAndAccepts() {
        Settings settings;
        settings.setGlossary(sample_glossary());
        SettingsDialog dialog(settings);
        GlossaryModel* model = dialog.glossaryModel();
        auto* table = dialog.findChild<QTableView*>(QStringLiteral("glossaryTable"));
        auto* add = dialog.findChild<QPushButton*>(QStringLiteral("addTermButton"));
        auto* remove = dialog.findChild<QPushButton*>(QStringLiteral("removeTermButton"));
        auto* guard = dialog.findChild<QCheckBox*>(QStringLiteral("casingGuardCheck"));
        auto* tabs = dialog.findChild<QTabWidget*>(QStringLiteral("tabs"));
        QVERIFY(table && add && remove && guard && tabs);
        QVERIFY(guard->isChecked());

        // Remove the first row.
        QVERIFY(!remove->isEnabled());
        table->selectRow(0);
        QVERIFY(remove->isEnabled());
        remove->click();
        QCOMPARE(model->rowCount(), 2);
        QCOMPARE(model->terms()[0].source, sample_glossary().terms[1].source);

        // Add a row with only a source term: accepting is refused and the row is pointed at.
        add->click();
        QCOMPARE(model->rowCount(), 3);
        QVERIFY(
            model->setData(model->index(2, GlossaryModel::SourceTerm), QStringLiteral("printer")));
        // An empty row is simply dropped; it does not block.
        add->click();
        QCOMPARE(model->rowCount(), 4);
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Rejected));
        QCOMPARE(tabs->currentWidget()->objectName(), QStringLiteral("glossaryTab"));
        QCOMPARE(dialog.glossaryMessage(), QStringLiteral("Row 3 has no target term."));
        QCOMPARE(table->selectionModel()->selectedRows().value(0).row(), 2);
        QCOMPARE(Settings().glossary(), sample_glossary());  // nothing stored yet

        QVERIFY(
            model->setData(model->index(2, GlossaryModel::TargetTerm), QStringLiteral("Drucker")));
        QVERIFY(
            model->setData(model->index(2, GlossaryModel::TargetLanguage), QStringLiteral("de")));
        guard->setChecked(false);
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        Glossary expected;
        expected.terms = {sample_glossary().terms[1],
                          sample_glossary().terms[2],
                          {"", "de", "printer", "Drucker"}};
        QCOMPARE(Settings().glossary(), expected);
        QVERIFY(!Settings().casingGuard());
    }

    // The window sends the glossary's matching entries with each request and notes a term
    // the translation lacks in the status bar; the controller reports it in the statistics.
    void windowReportsMissingTerms() {
        Settings settings;
        settings.setSamplingMode(SamplingMode::Greedy);
        settings.setModelDirectory(kDemoModel);
        settings.setSourceLanguage(QStringLiteral("en"));
        settings.setTargetLanguage(QStringLiteral("de"));
        Glossary g;
        g.terms = {{"en", "de", "file", "Xqzdatei"},        // made up: the model cannot write it
                   {"en", "fr", "open", "Xqzouvrir"},       // another pair: not sent, not reported
                   {"en", "de", "printer", "Xqzdrucker"}};  // not in the text
        settings.setGlossary(g);
        TranslationController controller;
        MainWindow window(settings, controller);
        QSignalSpy finished(&controller, &TranslationController::translationFinished);
        window.show();
        window.loadConfiguredModel();
        QTRY_VERIFY_WITH_TIMEOUT(controller.state() == TranslationController::State::Ready,
                                 kTimeout);
        QPlainTextEdit* source = window.sourceEdit();
        source->setPlainText(QStringLiteral("Open the file"));
        window.translateNow();
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kTimeout);
        const auto stats = finished.last().at(2).value<RequestStats>();
        QCOMPARE(stats.missing_terms, QStringList{QStringLiteral("file → Xqzdatei")});
        const QString message = window.statusBar()->currentMessage();
        QVERIFY2(message.contains(QStringLiteral("file → Xqzdatei")) &&
                     !message.contains(QStringLiteral("Xqzouvrir")) &&
                     !message.contains(QStringLiteral("Xqzdrucker")),
                 qPrintable(message));

        // A text without glossary terms clears the note.
        finished.clear();
        source->setPlainText(QStringLiteral("Save"));
        window.translateNow();
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kTimeout);
        QVERIFY(finished.last().at(2).value<RequestStats>().missing_terms.isEmpty());
        QCOMPARE(window.statusBar()->currentMessage(), QString());
    }
};

QTEST_MAIN(TestUiGlossary)
#include "test_ui_glossary.moc"
