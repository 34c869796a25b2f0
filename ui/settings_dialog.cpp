#include "settings_dialog.h"

#include <QCheckBox>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLocale>
#include <QPointer>
#include <QPushButton>
#include <QSaveFile>
#include <QShowEvent>
#include <QThreadPool>

#include <algorithm>
#include <exception>
#include <functional>

#include "glossary_model.h"
#include "i18n.h"
#include "live_panel.h"
#include "mtdesk/cpu/host_memory.h"
#include "mtdesk/cuda/cuda_engine.h"
#include "mtdesk/error.h"
#include "mtdesk/model/model_dir.h"
#include "mtdesk/quant/tiers.h"
#include "mtdesk/tokenizer/tokenizer.h"
#include "mtdesk/translate/translator.h"
#include "remote/connection_test.h"
#include "remote/server_url.h"
#include "settings.h"
#include "ui_settings_dialog.h"

namespace mtdesk::ui {
namespace {

QString tokenizer_name(TokenizerKind k) {
    switch (k) {
        case TokenizerKind::Tiktoken:
            return SettingsDialog::tr("tiktoken tokenizer");
        case TokenizerKind::HfTokenizerJson:
            return SettingsDialog::tr("tokenizer.json tokenizer");
        case TokenizerKind::SentencePiece:
            return SettingsDialog::tr("SentencePiece tokenizer");
    }
    return {};
}

QString parameters_text(int64_t n) {
    const QLocale l;
    if (n >= 1'000'000'000)
        return SettingsDialog::tr("%1 B parameters").arg(l.toString(n / 1e9, 'f', 2));
    return SettingsDialog::tr("%1 M parameters").arg(l.toString(n / 1e6, 'f', 1));
}

}  // namespace

ModelCheck check_model_directory(const QString& dir) {
    ModelCheck check;
    try {
        const std::filesystem::path path = dir.toStdString();
        ModelDir model = ModelDir::open(path);
        auto tokenizer = load_tokenizer(path, model.config.vocab_size);
        check.summary = QStringLiteral("%1 · %2 · %3")
                            .arg(QString::fromStdString(model.config.architecture_name),
                                 parameters_text(model.config.parameter_count()),
                                 tokenizer_name(tokenizer->kind()));
        check.config = model.config;
        check.recommended = recommended_sampling(model.generation);
    } catch (const std::exception& e) {
        check.error = QString::fromUtf8(e.what());
    }
    return check;
}

SettingsDialog::SettingsDialog(Settings& settings, QWidget* parent)
    : QDialog(parent), ui_(std::make_unique<::Ui::SettingsDialog>()), settings_(settings) {
    ui_->setupUi(this);
    // The .ui file has no connections: OK and Cancel are wired here.
    connect(ui_->buttonBox, &QDialogButtonBox::accepted, this, &SettingsDialog::accept);
    connect(ui_->buttonBox, &QDialogButtonBox::rejected, this, &QDialog::reject);

    ui_->modelDirEdit->setText(settings.modelDirectory());
    connect(ui_->browseButton, &QPushButton::clicked, this, &SettingsDialog::browse);
    connect(ui_->modelDirEdit, &QLineEdit::editingFinished, this, &SettingsDialog::validate);

    // Devices: each GPU with its free memory, then the CPU; "Automatic" takes the first GPU.
    gpus_ = cuda::devices();
    ui_->deviceCombo->addItem(
        gpus_.empty() ? tr("Automatic (CPU: no GPU found)") : tr("Automatic (the first GPU)"),
        QStringLiteral("auto"));
    for (const cuda::DeviceInfo& g : gpus_)
        ui_->deviceCombo->addItem(tr("GPU %1: %2 (%3 free of %4)")
                                      .arg(g.index)
                                      .arg(QString::fromStdString(g.name))
                                      .arg(human_bytes(g.free_bytes))
                                      .arg(human_bytes(g.total_bytes)),
                                  QStringLiteral("cuda:%1").arg(g.index));
    ui_->deviceCombo->addItem(tr("CPU"), QStringLiteral("cpu"));
    ui_->deviceCombo->setCurrentIndex(qMax(0, ui_->deviceCombo->findData(settings.device())));
    for (Tier t : all_tiers()) {
        const QString name = QString::fromLatin1(tier_name(t).data(), tier_name(t).size());
        ui_->tierCombo->addItem(name, name);
    }
    ui_->tierCombo->setCurrentIndex(qMax(0, ui_->tierCombo->findData(settings.tier())));
    // Short, so the combo shows it whole; the rule is the tooltip.
    ui_->cpuTierCombo->addItem(tr("Automatic"), QStringLiteral("auto"));
    ui_->cpuTierCombo->setItemData(0, tr("fp32 when it fits in memory, else int8, else int4"),
                                   Qt::ToolTipRole);
    ui_->cpuTierCombo->setToolTip(
        tr("Automatic: fp32 when it fits in memory, else int8, else int4"));
    for (CpuTier t : all_cpu_tiers()) {
        const QString name = QString::fromLatin1(cpu_tier_name(t).data(), cpu_tier_name(t).size());
        ui_->cpuTierCombo->addItem(name, name);
    }
    ui_->cpuTierCombo->setCurrentIndex(qMax(0, ui_->cpuTierCombo->findData(settings.cpuTier())));
    available_memory_ = available_host_memory();
    ui_->contextSpin->setValue(settings.contextTokens());
    ui_->int8KvCheck->setChecked(settings.int8KvCache());
    ui_->batchSpin->setValue(settings.maxBatch());
    if (!gpus_.empty()) {
        ui_->gpuNoteLabel->setText(
            tr("The memory each precision tier needs for this model, with the context and "
               "batch above, next to the chosen GPU's free memory."));
    } else {
        ui_->tierCombo->setEnabled(false);
        ui_->gpuNoteLabel->setText(
            tr("No GPU found (or this build has no CUDA engine): the CPU engine runs the model "
               "in the CPU tier chosen. The GPU rows show what each tier would need."));
    }
    connect(ui_->deviceCombo, &QComboBox::currentIndexChanged, this,
            &SettingsDialog::updateEstimates);
    ui_->tierTable->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    connect(ui_->contextSpin, &QSpinBox::valueChanged, this, &SettingsDialog::updateEstimates);
    connect(ui_->int8KvCheck, &QCheckBox::toggled, this, &SettingsDialog::updateEstimates);
    connect(ui_->batchSpin, &QSpinBox::valueChanged, this, &SettingsDialog::updateEstimates);

    switch (settings.samplingMode()) {
        case SamplingMode::Greedy:
            ui_->greedyRadio->setChecked(true);
            break;
        case SamplingMode::Recommended:
            ui_->recommendedRadio->setChecked(true);
            break;
        case SamplingMode::Custom:
            ui_->customRadio->setChecked(true);
            break;
    }
    const SamplingParams p = settings.customSampling();
    ui_->temperatureSpin->setValue(p.temperature);
    ui_->topKSpin->setValue(p.top_k);
    ui_->topPSpin->setValue(p.top_p);
    ui_->repetitionSpin->setValue(p.repetition_penalty);
    // The spin box's minimum, -1, reads "Random": a fresh seed for every translation.
    ui_->seedSpin->setValue(p.seed ? static_cast<int>(std::min<uint64_t>(*p.seed, INT32_MAX)) : -1);
    ui_->maxTokensSpin->setValue(settings.maxNewTokens());
    for (QRadioButton* r : {ui_->greedyRadio, ui_->recommendedRadio, ui_->customRadio})
        connect(r, &QRadioButton::toggled, this, &SettingsDialog::updateSamplingEnabled);
    updateSamplingEnabled();

    ui_->uiLanguageCombo->addItem(tr("System language"), QString());
    ui_->uiLanguageCombo->addItem(QStringLiteral("English"), QStringLiteral("en"));
    ui_->uiLanguageCombo->addItem(QStringLiteral("简体中文"), QStringLiteral("zh_CN"));
    ui_->uiLanguageCombo->setCurrentIndex(
        qMax(0, ui_->uiLanguageCombo->findData(settings.uiLanguage())));

    glossaryModel_ = new GlossaryModel(this);
    glossaryModel_->setGlossary(settings.glossary());
    QTableView* table = ui_->glossaryTable;
    table->setModel(glossaryModel_);
    auto* languageDelegate = new LanguageDelegate(this);
    table->setItemDelegateForColumn(GlossaryModel::SourceLanguage, languageDelegate);
    table->setItemDelegateForColumn(GlossaryModel::TargetLanguage, languageDelegate);
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    connect(ui_->addTermButton, &QPushButton::clicked, this, &SettingsDialog::addTerm);
    connect(ui_->removeTermButton, &QPushButton::clicked, this, &SettingsDialog::removeTerms);
    connect(ui_->importGlossaryButton, &QPushButton::clicked, this,
            &SettingsDialog::chooseGlossaryToImport);
    connect(ui_->exportGlossaryButton, &QPushButton::clicked, this,
            &SettingsDialog::chooseGlossaryExport);
    ui_->removeTermButton->setEnabled(false);
    connect(table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        ui_->removeTermButton->setEnabled(ui_->glossaryTable->selectionModel()->hasSelection());
    });
    ui_->casingGuardCheck->setChecked(settings.casingGuard());

    const bool servers = settings.engineMode() == Settings::EngineMode::Servers;
    (servers ? ui_->serversRadio : ui_->localRadio)->setChecked(true);
    ui_->serversEdit->setPlainText(settings.serverUrls().join(QLatin1Char('\n')));
    ui_->remoteModelEdit->setText(settings.remoteModel());
    ui_->apiKeyEdit->setText(settings.apiKey());
    ui_->concurrencySpin->setValue(settings.remoteConcurrency());
    connect(ui_->serversRadio, &QRadioButton::toggled, this, &SettingsDialog::updateEngineMode);
    connect(ui_->testConnectionButton, &QPushButton::clicked, this,
            &SettingsDialog::testConnection);
    updateEngineMode();

    validate();
}

void SettingsDialog::setEngineMode(bool servers) {
    (servers ? ui_->serversRadio : ui_->localRadio)->setChecked(true);
}

bool SettingsDialog::serversChosen() const {
    return ui_->serversRadio->isChecked();
}

void SettingsDialog::updateEngineMode() {
    // Only what applies is shown: the model and device, or the servers.
    const bool servers = serversChosen();
    ui_->serversGroup->setVisible(servers);
    ui_->modelGroup->setVisible(!servers);
    ui_->precisionGroup->setVisible(!servers);
    if (QPushButton* ok = ui_->buttonBox->button(QDialogButtonBox::Ok))
        ok->setEnabled(valid_ || servers);
}

QStringList SettingsDialog::serverUrls() const {
    QStringList urls;
    for (const QString& line : ui_->serversEdit->toPlainText().split(QLatin1Char('\n')))
        if (!line.trimmed().isEmpty()) urls << line.trimmed();
    return urls;
}

void SettingsDialog::showConnectionMessage(const QString& text, bool error) {
    showConnectionLines({{text, error}});
}

void SettingsDialog::showConnectionLines(const QList<QPair<QString, bool>>& lines) {
    // One line per server, only the failed ones in red: a mixed result is not all alarm.
    QStringList plain, html;
    for (const auto& [text, error] : lines) {
        plain << text;
        QString escaped = text.toHtmlEscaped();
        escaped.replace(QLatin1Char('\n'), QStringLiteral("<br>"));
        html << (error ? QStringLiteral("<span style=\"color:#c01c28\">") + escaped +
                             QStringLiteral("</span>")
                       : escaped);
    }
    connectionReport_ = plain.join(QLatin1Char('\n'));
    ui_->connectionLabel->setTextFormat(Qt::RichText);
    ui_->connectionLabel->setText(html.join(QStringLiteral("<br>")));
}

bool SettingsDialog::checkServerUrls(const QStringList& urls) {
    for (const QString& url : urls) {
        std::string why;
        if (!remote::parse_server_url(url.toStdString(), &why)) {
            showConnectionMessage(QString::fromStdString(why), true);
            return false;
        }
    }
    return true;
}

QString SettingsDialog::connectionReport() const {
    return connectionReport_;
}

void SettingsDialog::testConnection() {
    const QStringList urls = serverUrls();
    if (urls.isEmpty()) {
        showConnectionMessage(tr("Enter at least one server URL."), true);
        return;
    }
    // A malformed address is said as such here, not found later as "cannot connect".
    if (!checkServerUrls(urls)) return;
    std::vector<std::string> list;
    for (const QString& u : urls)
        list.push_back(u.toStdString());
    remote::HttpSettings http;
    http.api_key = ui_->apiKeyEdit->text().trimmed().toStdString();
    http.read_timeout = std::chrono::seconds(10);  // a model list comes at once or not at all
    const quint64 number = ++testNumber_;
    ++testing_;
    ui_->testConnectionButton->setEnabled(false);
    showConnectionMessage(tr("Asking %n server(s)…", nullptr, static_cast<int>(urls.size())),
                          false);
    // The answers come back through the application object, which outlives this dialog; the
    // guard drops them when the dialog has gone meanwhile.
    QThreadPool::globalInstance()->start([guard = QPointer<SettingsDialog>(this), list, http,
                                          number] {
        const std::vector<remote::ServerCheck> checks = remote::check_servers(list, http);
        QMetaObject::invokeMethod(qApp, [guard, checks, number] {
            if (!guard) return;
            SettingsDialog& d = *guard;
            --d.testing_;
            if (d.testing_ == 0) d.ui_->testConnectionButton->setEnabled(true);
            if (number != d.testNumber_) return;  // a newer test replaced this one
            QList<QPair<QString, bool>> lines;
            const QLocale l;
            for (const remote::ServerCheck& c : checks) {
                const QString url = QString::fromStdString(c.url);
                if (c.error.empty()) {
                    QStringList models;
                    for (const std::string& m : c.models)
                        models << QString::fromStdString(m);
                    lines.append({tr("%1: %2 ms, models: %3")
                                      .arg(url, l.toString(c.latency_ms, 'f', 0),
                                           models.join(QStringLiteral(", "))),
                                  false});
                } else {
                    lines.append({tr("%1: %2").arg(url, QString::fromStdString(c.error)), true});
                }
            }
            d.showConnectionLines(lines);
            emit d.connectionTested();
        });
    });
}

SettingsDialog::~SettingsDialog() = default;

void SettingsDialog::browse() {
    QString start = ui_->modelDirEdit->text();
    if (start.isEmpty()) start = QDir::homePath();
    const QString dir =
        QFileDialog::getExistingDirectory(this, tr("Choose a model directory"), start);
    if (!dir.isEmpty()) setModelDirectory(dir);
}

void SettingsDialog::setModelDirectory(const QString& dir) {
    ui_->modelDirEdit->setText(dir.isEmpty() ? dir : QDir::cleanPath(QDir(dir).absolutePath()));
    validate();
}

QString SettingsDialog::modelDirectory() const {
    return ui_->modelDirEdit->text().trimmed();
}

void SettingsDialog::setSessionModelDirectory(const QString& dir) {
    sessionModel_ = QDir::cleanPath(QDir(dir).absolutePath());
    setModelDirectory(sessionModel_);
}

void SettingsDialog::showServerSettings() {
    ui_->tabs->setCurrentWidget(ui_->generalTab);
    ui_->serversEdit->setFocus();
}

bool SettingsDialog::showsSessionModel() const {
    const QString dir = modelDirectory();
    return !sessionModel_.isEmpty() && !dir.isEmpty() &&
           QDir::cleanPath(QDir(dir).absolutePath()) == sessionModel_;
}

QString SettingsDialog::modelMessage() const {
    return ui_->modelStatusLabel->text();
}

void SettingsDialog::validate() {
    const QString dir = modelDirectory();
    config_.reset();
    QPalette pal = palette();
    if (dir.isEmpty()) {
        const QString demo = Settings::demoModelDirectory();
        valid_ = true;
        ui_->modelStatusLabel->setText(
            demo.isEmpty() ? tr("No model chosen.")
                           : tr("No model chosen: the bundled demo model is used."));
        if (!demo.isEmpty()) {
            const ModelCheck check = check_model_directory(demo);
            config_ = check.config;
            showRecommendedSampling(check.recommended);
        }
    } else {
        const ModelCheck check = check_model_directory(dir);
        valid_ = check.config.has_value();
        config_ = check.config;
        showRecommendedSampling(check.recommended);
        if (valid_ && showsSessionModel()) {
            ui_->modelStatusLabel->setText(
                tr("%1\nIn use for this session only (given on the command line).")
                    .arg(check.summary));
        } else if (valid_) {
            ui_->modelStatusLabel->setText(check.summary);
        } else {
            ui_->modelStatusLabel->setText(check.error);
            pal.setColor(QPalette::WindowText, QColor(0xc0, 0x1c, 0x28));
        }
    }
    ui_->modelStatusLabel->setPalette(pal);
    if (QPushButton* ok = ui_->buttonBox->button(QDialogButtonBox::Ok))
        ok->setEnabled(valid_ || serversChosen());
    updateEstimates();
}

void SettingsDialog::showRecommendedSampling(const std::optional<SamplingParams>& p) {
    // The values themselves, so that "recommended" is not a guess (the custom fields below
    // keep the user's own values).
    QString text = tr("The model's recommended sampling");
    if (p && p->greedy) {
        text = tr("The model's recommended sampling (greedy)");
    } else if (p) {
        const QLocale l;
        text = tr("The model's recommended sampling (temperature %1, top-k %2, top-p %3, "
                  "repetition penalty %4)")
                   .arg(l.toString(p->temperature, 'g', 3), l.toString(p->top_k),
                        l.toString(p->top_p, 'g', 3), l.toString(p->repetition_penalty, 'g', 3));
    }
    ui_->recommendedRadio->setText(text);
}

void SettingsDialog::updateEstimates() {
    QTableWidget* table = ui_->tierTable;
    const int context = ui_->contextSpin->value();
    const int batch = ui_->batchSpin->value();
    const auto tiers = all_tiers();
    const auto cpu_tiers = all_cpu_tiers();
    table->setRowCount(static_cast<int>(tiers.size() + cpu_tiers.size()));
    auto set = [table](int row, int column, const QString& text) {
        auto* item = new QTableWidgetItem(text);
        if (column > 0) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        table->setItem(row, column, item);
    };
    const QString none = QStringLiteral("–");
    int row = 0;
    // A row: the tier's name, then its figures, "does not fit" where `fits` says so.
    auto add_row = [&](const QString& name, const std::optional<MemoryEstimate>& e, bool fits) {
        set(row, 0, name);
        if (e) {
            set(row, 1, human_bytes(static_cast<qint64>(e->weights)));
            set(row, 2, human_bytes(static_cast<qint64>(e->kv_cache)));
            const QString total = human_bytes(static_cast<qint64>(e->total()));
            set(row, 3, fits ? total : tr("%1 — does not fit").arg(total));
        } else {
            for (int c = 1; c < 4; ++c)
                set(row, c, none);
        }
        ++row;
    };
    // The CPU engine, one request at a time (its KV cache for one request's context), against
    // the memory it may take (usable_cpu_memory); the GPU tiers against the GPU's free memory.
    for (CpuTier t : cpu_tiers) {
        std::optional<MemoryEstimate> e;
        if (config_) e = estimate_cpu_memory(*config_, t);
        add_row(tr("%1 (CPU)")
                    .arg(QString::fromLatin1(cpu_tier_name(t).data(), cpu_tier_name(t).size())),
                e, !e || !available_memory_ || e->total() <= usable_cpu_memory(*available_memory_));
    }
    const cuda::DeviceInfo* gpu = chosenGpu();
    updateGpuFields();
    for (Tier t : tiers) {
        std::optional<MemoryEstimate> e;
        if (config_)
            e = estimate_memory(
                *config_, t, context, batch,
                ui_->int8KvCheck->isChecked() ? KvCacheDtype::Int8 : KvCacheDtype::Auto);
        add_row(tr("%1 (GPU)").arg(QString::fromLatin1(tier_name(t).data(), tier_name(t).size())),
                e, !e || !gpu || static_cast<int64_t>(e->total()) <= gpu->free_bytes);
    }
    fitTable();
}

void SettingsDialog::updateGpuFields() {
    // Only the GPU engine has a KV budget and a batch; the CPU engine takes one request at a
    // time with room for the model's own positions, so there they would mislead.
    const bool gpu = chosenGpu() != nullptr;
    const QString positions =
        config_ ? QLocale().toString(static_cast<qint64>(config_->max_position_embeddings))
                : QString();
    const QString why =
        gpu ? QString()
        : config_
            ? tr("Only the GPU engine uses this. The CPU engine translates one request at a time "
                 "with room for the model's %1 positions.")
                  .arg(positions)
            : tr("Only the GPU engine uses this. The CPU engine translates one request at a "
                 "time with room for the model's own positions.");
    for (QWidget* w :
         {static_cast<QWidget*>(ui_->contextSpin), static_cast<QWidget*>(ui_->contextCaption),
          static_cast<QWidget*>(ui_->batchSpin), static_cast<QWidget*>(ui_->batchCaption),
          static_cast<QWidget*>(ui_->int8KvCheck)}) {
        w->setEnabled(gpu);
        w->setToolTip(why);
    }
    // The budget is shared by a batch's requests, each of at most the model's positions: more
    // than the batch can hold is memory taken for nothing. Said also while the CPU is chosen:
    // the values are kept for a GPU.
    QString warning;
    if (config_) {
        const qint64 most = config_->max_position_embeddings;
        const qint64 usable = most * ui_->batchSpin->value();
        if (ui_->contextSpin->value() > usable)
            warning = tr("More than a batch can use: %1 requests × the model's %2 positions = %3 "
                         "tokens. The rest is memory taken for nothing.")
                          .arg(ui_->batchSpin->value())
                          .arg(positions, QLocale().toString(usable));
        else if (ui_->contextSpin->value() > most)
            warning = tr("One request holds at most the model's %1 positions; the rest serves the "
                         "other requests of a batch.")
                          .arg(positions);
    }
    QPalette pal = palette();
    if (config_ &&
        ui_->contextSpin->value() > config_->max_position_embeddings * ui_->batchSpin->value())
        pal.setColor(QPalette::WindowText, QColor(0xc0, 0x1c, 0x28));
    ui_->contextWarningLabel->setPalette(pal);
    ui_->contextWarningLabel->setText(warning);
    ui_->contextWarningLabel->setVisible(!warning.isEmpty());
}

QString SettingsDialog::contextWarning() const {
    return ui_->contextWarningLabel->isHidden() ? QString() : ui_->contextWarningLabel->text();
}

const cuda::DeviceInfo* SettingsDialog::chosenGpu() const {
    if (gpus_.empty()) return nullptr;
    const QString d = ui_->deviceCombo->currentData().toString();
    if (d == QLatin1String("cpu")) return nullptr;
    const int index = d.startsWith(QLatin1String("cuda:")) ? d.mid(5).toInt() : 0;
    for (const cuda::DeviceInfo& g : gpus_)
        if (g.index == index) return &g;
    return nullptr;
}

void SettingsDialog::fitTable() {
    // Every row visible, no scroll bar: the table is as tall as its rows.
    QTableWidget* table = ui_->tierTable;
    table->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    table->resizeRowsToContents();
    table->setFixedHeight(table->horizontalHeader()->sizeHint().height() +
                          table->verticalHeader()->length() + 2 * table->frameWidth());
}

void SettingsDialog::showEvent(QShowEvent* event) {
    fitTable();  // fonts and style are final now
    QDialog::showEvent(event);
}

void SettingsDialog::updateSamplingEnabled() {
    const bool custom = ui_->customRadio->isChecked();
    for (QWidget* w :
         {static_cast<QWidget*>(ui_->temperatureSpin), static_cast<QWidget*>(ui_->topKSpin),
          static_cast<QWidget*>(ui_->topPSpin), static_cast<QWidget*>(ui_->repetitionSpin),
          static_cast<QWidget*>(ui_->seedSpin), static_cast<QWidget*>(ui_->temperatureCaption),
          static_cast<QWidget*>(ui_->topKCaption), static_cast<QWidget*>(ui_->topPCaption),
          static_cast<QWidget*>(ui_->repetitionCaption), static_cast<QWidget*>(ui_->seedCaption)})
        w->setEnabled(custom);
}

void SettingsDialog::addTerm() {
    const QModelIndex index =
        glossaryModel_->index(glossaryModel_->appendRow(), GlossaryModel::SourceTerm);
    ui_->glossaryTable->setCurrentIndex(index);
    ui_->glossaryTable->edit(index);
}

void SettingsDialog::removeTerms() {
    QList<int> rows;
    for (const QModelIndex& index : ui_->glossaryTable->selectionModel()->selectedIndexes())
        if (!rows.contains(index.row())) rows.append(index.row());
    std::sort(rows.begin(), rows.end(), std::greater<>());  // from the bottom: indices stay
    for (int row : rows)
        glossaryModel_->removeRows(row, 1);
}

void SettingsDialog::showGlossaryMessage(const QString& text, bool error) {
    QPalette pal = palette();
    if (error) pal.setColor(QPalette::WindowText, QColor(0xc0, 0x1c, 0x28));
    ui_->glossaryMessageLabel->setPalette(pal);
    ui_->glossaryMessageLabel->setText(text);
}

QString SettingsDialog::glossaryMessage() const {
    return ui_->glossaryMessageLabel->text();
}

std::optional<Glossary> SettingsDialog::tableGlossary() {
    Glossary glossary;
    const std::vector<GlossaryTerm>& terms = glossaryModel_->terms();
    for (std::size_t i = 0; i < terms.size(); ++i) {
        const GlossaryTerm& t = terms[i];
        if (t.source.empty() && t.target.empty()) continue;
        if (t.source.empty() || t.target.empty()) {
            const int row = static_cast<int>(i);
            ui_->tabs->setCurrentWidget(ui_->glossaryTab);
            ui_->glossaryTable->selectRow(row);
            showGlossaryMessage(t.source.empty() ? tr("Row %1 has no source term.").arg(row + 1)
                                                 : tr("Row %1 has no target term.").arg(row + 1),
                                true);
            return std::nullopt;
        }
        glossary.terms.push_back(t);
    }
    return glossary;
}

bool SettingsDialog::importGlossary(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        showGlossaryMessage(tr("%1: cannot be read: %2").arg(path, file.errorString()), true);
        return false;
    }
    const QByteArray bytes = file.readAll();
    try {
        const std::string name = path.toStdString();
        const Glossary imported = Glossary::parse(
            std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())),
            glossary_format_for(name), name);
        const int added = glossaryModel_->addTerms(imported);
        showGlossaryMessage(
            tr("%n new term(s) from %1.", nullptr, added).arg(QFileInfo(path).fileName()), false);
        return true;
    } catch (const std::exception& e) {
        showGlossaryMessage(QString::fromUtf8(e.what()), true);
        return false;
    }
}

bool SettingsDialog::exportGlossary(const QString& path) {
    const std::optional<Glossary> glossary = tableGlossary();
    if (!glossary) return false;
    const std::string text = glossary->write(
        glossary_format_for(path.toStdString()) == GlossaryFormat::Csv ? GlossaryFormat::Csv
                                                                       : GlossaryFormat::Tsv);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(text.data(), static_cast<qint64>(text.size())) !=
            static_cast<qint64>(text.size()) ||
        !file.commit()) {
        showGlossaryMessage(tr("%1: cannot be written: %2").arg(path, file.errorString()), true);
        return false;
    }
    showGlossaryMessage(
        tr("%n term(s) written to %1.", nullptr, static_cast<int>(glossary->terms.size()))
            .arg(QFileInfo(path).fileName()),
        false);
    return true;
}

void SettingsDialog::chooseGlossaryToImport() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Import a glossary"), QDir::homePath(),
        file_filter(tr("Glossaries"),
                    {QStringLiteral("*.tsv"), QStringLiteral("*.csv"), QStringLiteral("*.txt")}) +
            QStringLiteral(";;") + file_filter(tr("All files"), {QStringLiteral("*")}));
    if (!path.isEmpty()) importGlossary(path);
}

void SettingsDialog::chooseGlossaryExport() {
    const QString tsv = file_filter(tr("Tab-separated values"), {QStringLiteral("*.tsv")});
    const QString csv = file_filter(tr("Comma-separated values"), {QStringLiteral("*.csv")});
    QString filter = tsv;
    QString path = QFileDialog::getSaveFileName(this, tr("Export the glossary"),
                                                QDir::homePath() + QStringLiteral("/glossary.tsv"),
                                                tsv + QStringLiteral(";;") + csv, &filter);
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty())
        path += filter == csv ? QStringLiteral(".csv") : QStringLiteral(".tsv");
    exportGlossary(path);
}

void SettingsDialog::accept() {
    validate();
    const bool servers = serversChosen();
    if (!valid_ && !servers) return;
    if (servers) {
        // Every URL must parse: a typo is shown now, not when the first job fails.
        const QStringList urls = serverUrls();
        if (urls.isEmpty()) {
            showConnectionMessage(tr("Enter at least one server URL."), true);
            return;
        }
        if (!checkServerUrls(urls)) return;
    }
    const std::optional<Glossary> glossary = tableGlossary();
    if (!glossary) return;
    settings_.setEngineMode(servers ? Settings::EngineMode::Servers : Settings::EngineMode::Local);
    settings_.setServerUrls(serverUrls());
    settings_.setRemoteModel(ui_->remoteModelEdit->text().trimmed());
    settings_.setApiKey(ui_->apiKeyEdit->text().trimmed());
    settings_.setRemoteConcurrency(ui_->concurrencySpin->value());
    const QString dir = modelDirectory();
    // With "Servers" chosen the directory box may hold anything meanwhile; a model given for
    // this session only is not saved.
    if (valid_ && !showsSessionModel())
        settings_.setModelDirectory(dir.isEmpty() ? dir
                                                  : QDir::cleanPath(QDir(dir).absolutePath()));
    settings_.setDevice(ui_->deviceCombo->currentData().toString());
    settings_.setTier(ui_->tierCombo->currentData().toString());
    settings_.setCpuTier(ui_->cpuTierCombo->currentData().toString());
    settings_.setContextTokens(ui_->contextSpin->value());
    settings_.setInt8KvCache(ui_->int8KvCheck->isChecked());
    settings_.setMaxBatch(ui_->batchSpin->value());
    if (ui_->greedyRadio->isChecked())
        settings_.setSamplingMode(SamplingMode::Greedy);
    else if (ui_->customRadio->isChecked())
        settings_.setSamplingMode(SamplingMode::Custom);
    else
        settings_.setSamplingMode(SamplingMode::Recommended);
    SamplingParams p;
    p.greedy = false;
    p.temperature = static_cast<float>(ui_->temperatureSpin->value());
    p.top_k = ui_->topKSpin->value();
    p.top_p = static_cast<float>(ui_->topPSpin->value());
    p.repetition_penalty = static_cast<float>(ui_->repetitionSpin->value());
    if (ui_->seedSpin->value() >= 0) p.seed = static_cast<uint64_t>(ui_->seedSpin->value());
    settings_.setCustomSampling(p);
    settings_.setMaxNewTokens(ui_->maxTokensSpin->value());
    settings_.setUiLanguage(ui_->uiLanguageCombo->currentData().toString());
    settings_.setGlossary(*glossary);
    settings_.setCasingGuard(ui_->casingGuardCheck->isChecked());
    settings_.sync();
    QDialog::accept();
}

}  // namespace mtdesk::ui
