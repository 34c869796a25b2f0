#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>
#include <QTimer>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>

#include "document_queue.h"
#include "job_queue.h"
#include "language_picker.h"
#include "live_panel.h"
#include "settings.h"
#include "settings_dialog.h"
#include "trained_pairs.h"

namespace mtdesk::ui {
namespace {

constexpr int kMinPointSize = 6;
constexpr int kMaxPointSize = 48;

// The local files and folders a drag carries.
QStringList local_paths(const QMimeData* mime) {
    QStringList paths;
    if (!mime || !mime->hasUrls()) return paths;
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile()) paths.append(url.toLocalFile());
    return paths;
}

}  // namespace

MainWindow::MainWindow(Settings& settings, TranslationController& controller, QWidget* parent)
    : QMainWindow(parent), settings_(settings), controller_(controller) {
    setWindowTitle(tr("mtdesk"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/mtdesk.svg")));

    // ---- the model bar: shown while there is no usable model ----
    modelBar_ = new QFrame(this);
    modelBar_->setFrameShape(QFrame::StyledPanel);
    modelBar_->setAutoFillBackground(true);
    {
        QPalette pal = modelBar_->palette();
        pal.setColor(QPalette::Window, QColor(0xff, 0xf4, 0xce));
        pal.setColor(QPalette::WindowText, QColor(0x3d, 0x2e, 0x00));
        modelBar_->setPalette(pal);
    }
    modelBarText_ = new QLabel(modelBar_);
    modelBarText_->setWordWrap(true);
    modelBarButton_ = new QPushButton(tr("Choose model directory…"), modelBar_);
    connect(modelBarButton_, &QPushButton::clicked, this, [this] {
        if (modelBarServers_)
            showServerSettings();
        else
            chooseModelDirectory();
    });
    auto* barLayout = new QHBoxLayout(modelBar_);
    barLayout->addWidget(modelBarText_, 1);
    barLayout->addWidget(modelBarButton_);
    modelBar_->hide();

    // ---- languages and panes ----
    sourcePicker_ = new LanguagePicker(true, this);
    targetPicker_ = new LanguagePicker(false, this);
    sourcePicker_->setToolTip(tr("Source language: type a code or a name in any script"));
    targetPicker_->setToolTip(tr("Target language: type a code or a name in any script"));
    swapButton_ = new QToolButton(this);
    swapButton_->setText(QStringLiteral("⇄"));
    swapButton_->setToolTip(tr("Swap languages and texts (Ctrl+Shift+S)"));
    swapButton_->setAutoRaise(true);
    {
        QFont f = swapButton_->font();
        f.setPointSizeF(f.pointSizeF() * 1.6);
        swapButton_->setFont(f);
    }
    connect(swapButton_, &QToolButton::clicked, this, &MainWindow::swapLanguages);

    source_ = new QPlainTextEdit(this);
    source_->setPlaceholderText(tr("Type or paste text to translate"));
    source_->setTabChangesFocus(true);
    target_ = new QPlainTextEdit(this);
    target_->setReadOnly(true);
    // A cursor to see the focus and select with the keyboard; Tab goes on to the buttons.
    target_->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    target_->setTabChangesFocus(true);
    target_->setPlaceholderText(tr("Translation"));

    translateButton_ = new QPushButton(tr("Translate"), this);
    translateButton_->setToolTip(tr("Translate now (Ctrl+Enter)"));
    connect(translateButton_, &QPushButton::clicked, this, &MainWindow::translateNow);
    copyButton_ = new QPushButton(tr("Copy"), this);
    copyButton_->setToolTip(tr("Copy the translation (Ctrl+Shift+C)"));
    copyButton_->setEnabled(false);
    connect(copyButton_, &QPushButton::clicked, this, &MainWindow::copyTranslation);
    sourceInfo_ = new QLabel(this);
    targetInfo_ = new QLabel(this);
    sourceInfo_->setForegroundRole(QPalette::PlaceholderText);
    targetInfo_->setForegroundRole(QPalette::PlaceholderText);

    auto* grid = new QGridLayout;
    grid->addWidget(sourcePicker_, 0, 0);
    grid->addWidget(swapButton_, 0, 1, Qt::AlignCenter);
    grid->addWidget(targetPicker_, 0, 2);
    grid->addWidget(source_, 1, 0);
    grid->addWidget(target_, 1, 2);
    auto* sourceFooter = new QHBoxLayout;
    sourceFooter->addWidget(sourceInfo_, 1);
    sourceFooter->addWidget(translateButton_);
    auto* targetFooter = new QHBoxLayout;
    targetFooter->addWidget(targetInfo_, 1);
    targetFooter->addWidget(copyButton_);
    grid->addLayout(sourceFooter, 2, 0);
    grid->addLayout(targetFooter, 2, 2);
    grid->setColumnStretch(0, 1);
    grid->setColumnStretch(2, 1);
    grid->setRowStretch(1, 1);

    pairWarning_ = new QLabel(this);
    pairWarning_->setWordWrap(true);
    pairWarning_->setAutoFillBackground(true);
    pairWarning_->setPalette(modelBar_->palette());
    pairWarning_->setContentsMargins(8, 4, 8, 4);
    // Its room is kept while it is hidden, and it is two lines high whatever it says, so that
    // the pickers and panes stay put as it comes and goes while typing (all of a longer text
    // is in the tooltip).
    {
        QSizePolicy policy = pairWarning_->sizePolicy();
        policy.setRetainSizeWhenHidden(true);
        pairWarning_->setSizePolicy(policy);
        const QMargins m = pairWarning_->contentsMargins();
        pairWarning_->setFixedHeight(2 * pairWarning_->fontMetrics().lineSpacing() + m.top() +
                                     m.bottom());
    }
    pairWarning_->hide();

    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->addWidget(modelBar_);
    layout->addWidget(pairWarning_);
    layout->addLayout(grid, 1);
    setCentralWidget(central);

    // ---- live panel ----
    livePanel_ = new LivePanel(&controller_, this);
    dock_ = new QDockWidget(tr("Live"), this);
    dock_->setObjectName(QStringLiteral("livePanel"));
    dock_->setWidget(livePanel_);
    dock_->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable |
                       QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::RightDockWidgetArea, dock_);

    // ---- document queue: below the panes, shown when there are documents ----
    jobQueue_ = new app::JobQueue(app::JobQueue::defaultStateDirectory(), this);
    documents_ = new DocumentQueueView(jobQueue_, this);
    documentsDock_ = new QDockWidget(tr("Documents"), this);
    documentsDock_->setObjectName(QStringLiteral("documents"));
    documentsDock_->setWidget(documents_);
    documentsDock_->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable |
                                QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::BottomDockWidgetArea, documentsDock_);

    // ---- status bar ----
    modelLabel_ = new QLabel(this);
    stateLabel_ = new QLabel(this);
    progress_ = new QProgressBar(this);
    progress_->setMaximumWidth(160);
    progress_->setTextVisible(false);
    progress_->hide();
    statusBar()->addWidget(modelLabel_);
    statusBar()->addWidget(stateLabel_, 1);
    statusBar()->addPermanentWidget(progress_);

    buildMenus();

    // ---- behaviour ----
    sourcePicker_->setCurrentCode(settings_.sourceLanguage());
    if (!targetPicker_->setCurrentCode(settings_.targetLanguage()))
        targetPicker_->setCurrentCode(QStringLiteral("zh"));
    debounce_ = new QTimer(this);
    debounce_->setSingleShot(true);
    debounce_->setInterval(kDebounceMs);
    connect(debounce_, &QTimer::timeout, this, &MainWindow::translateNow);
    connect(source_, &QPlainTextEdit::textChanged, this, &MainWindow::onSourceChanged);
    auto languageChanged = [this] {
        useChosenLanguages();
        updateDetected();
        if (!source_->toPlainText().trimmed().isEmpty()) debounce_->start();
    };
    connect(sourcePicker_, &LanguagePicker::languageChanged, this, languageChanged);
    connect(targetPicker_, &LanguagePicker::languageChanged, this, languageChanged);

    connect(&controller_, &TranslationController::partialTranslation, this, &MainWindow::onPartial);
    connect(&controller_, &TranslationController::translationFinished, this,
            &MainWindow::onFinished);
    connect(&controller_, &TranslationController::error, this, &MainWindow::onError);
    connect(&controller_, &TranslationController::stateChanged, this, &MainWindow::onStateChanged);
    // A model the user just chose: say that it is in use (replacing an older message).
    connect(&controller_, &TranslationController::modelLoaded, this, [this](const QString& name) {
        // A text that ended in an error (no engine could take it) is translated now.
        if (retryOnLoad_ && !source_->toPlainText().trimmed().isEmpty()) debounce_->start();
        retryOnLoad_ = false;
        if (!announceLoad_) return;
        announceLoad_ = false;
        statusBar()->showMessage(controller_.remote() ? tr("Servers ready: model %1").arg(name)
                                                      : tr("Model %1 loaded").arg(name),
                                 10000);
    });
    connect(&controller_, &TranslationController::loadFailed, this,
            [this] { announceLoad_ = false; });
    connect(&controller_, &TranslationController::busyChanged, this, &MainWindow::onStateChanged);
    // Documents: the controller's engine, new rows in the current languages, typing first (while
    // a typed request runs, the queue leaves it one of the engine's slots).
    documents_->setLanguages(sourcePicker_->currentCode(), targetPicker_->currentCode());
    jobQueue_->setEngine(controller_.engine());
    connect(&controller_, &TranslationController::engineChanged, this,
            [this] { jobQueue_->setEngine(controller_.engine()); });
    connect(&controller_, &TranslationController::busyChanged, this,
            [this](bool busy) { jobQueue_->setReservedSlots(busy ? 1 : 0); });
    setAcceptDrops(true);
    for (QWidget* w : findChildren<QWidget*>())
        if (w->acceptDrops()) w->installEventFilter(this);
    // The status line counts the documents still to translate.
    for (auto signal :
         {&app::JobQueue::jobAdded, &app::JobQueue::jobChanged, &app::JobQueue::jobRemoved})
        connect(jobQueue_, signal, this, &MainWindow::onStateChanged);
    connect(documents_, &DocumentQueueView::problem, this,
            [this](const QString& message) { statusBar()->showMessage(message, 10000); });
    connect(&controller_, &TranslationController::loadProgress, this,
            [this](int done, int total, const QString& what) {
                progress_->setRange(0, total);
                progress_->setValue(done);
                progress_->setToolTip(what);
            });

    // ---- settings ----
    applySettings();
    applyFontSize(settings_.fontPointSize());
    if (!restoreGeometry(settings_.windowGeometry())) resize(1100, 620);
    restoreState(settings_.windowState());
    dock_->setVisible(settings_.livePanelVisible());
    documentsDock_->setVisible(jobQueue_->count() > 0);
    onStateChanged();
    // Tab goes as the eye does: the pickers and ⇄, the text, its translation, the buttons,
    // then the documents (the rest of the chain, in the order it was built).
    setTabOrder(modelBarButton_, sourcePicker_);
    setTabOrder(sourcePicker_, swapButton_);
    setTabOrder(swapButton_, targetPicker_);
    setTabOrder(targetPicker_, source_);
    setTabOrder(source_, target_);
    setTabOrder(target_, translateButton_);
    setTabOrder(translateButton_, copyButton_);
    source_->setFocus();  // typing at once types text, not a language search
}

MainWindow::~MainWindow() {
    // The view reads the queue, so it goes first; the queue saves where its rows stopped.
    delete documentsDock_;
    delete jobQueue_;
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open =
        file->addAction(tr("&Model directory…"), this, &MainWindow::chooseModelDirectory);
    open->setShortcut(QKeySequence::Open);
    QAction* prefs = file->addAction(tr("&Settings…"), this, &MainWindow::showSettings);
    // The platform's Preferences key first, where it has one (the menu shows the first);
    // Ctrl+, everywhere.
    QList<QKeySequence> prefsKeys = QKeySequence::keyBindings(QKeySequence::Preferences);
    prefsKeys.removeAll(QKeySequence(Qt::CTRL | Qt::Key_Comma));
    prefsKeys.prepend(QKeySequence(Qt::CTRL | Qt::Key_Comma));
    prefs->setShortcuts(prefsKeys);
    QAction* documents = file->addAction(tr("Translate &documents…"), this, [this] {
        documentsDock_->show();
        documents_->addFiles();
    });
    documents->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Translate"));
    QAction* now = edit->addAction(tr("Translate &now"), this, &MainWindow::translateNow);
    now->setShortcuts(
        {QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter)});
    now->setShortcutContext(Qt::WindowShortcut);
    QAction* swap = edit->addAction(tr("&Swap languages"), this, &MainWindow::swapLanguages);
    swap->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    QAction* copy = edit->addAction(tr("&Copy translation"), this, &MainWindow::copyTranslation);
    copy->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));

    QMenu* view = menuBar()->addMenu(tr("&View"));
    livePanelAction_ = dock_->toggleViewAction();
    livePanelAction_->setText(tr("&Live panel"));
    view->addAction(livePanelAction_);
    QAction* documentsAction = documentsDock_->toggleViewAction();
    documentsAction->setText(tr("&Documents"));
    view->addAction(documentsAction);
    view->addSeparator();
    QAction* bigger = view->addAction(tr("La&rger text"), this, &MainWindow::zoomIn);
    bigger->setShortcuts({QKeySequence::ZoomIn, QKeySequence(Qt::CTRL | Qt::Key_Equal)});
    QAction* smaller = view->addAction(tr("&Smaller text"), this, &MainWindow::zoomOut);
    smaller->setShortcut(QKeySequence::ZoomOut);
    QAction* reset = view->addAction(tr("Default text si&ze"), this, &MainWindow::zoomReset);
    reset->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About mtdesk"), this, [this] {
        QMessageBox::about(
            this, tr("About mtdesk"),
            tr("<h3>mtdesk %1</h3><p>Private, offline translation with Hunyuan-MT and "
               "HY-MT1.5 models on your own computer.</p>")
                .arg(QApplication::applicationVersion()));
    });
}

void MainWindow::loadConfiguredModel() {
    if (settings_.engineMode() == Settings::EngineMode::Servers) {
        modelBar_->hide();
        useTrainedLanguages({});  // the servers' models say nothing of the kind
        controller_.useServers(settings_.remoteChoice());
        return;
    }
    const QString dir = modelDirectoryInUse();
    if (dir.isEmpty()) {
        showModelBar(
            tr("No translation model yet. Choose a model directory (with config.json, "
               "the weights and the tokenizer)."));
        onStateChanged();
        return;
    }
    loadModel(dir);
}

void MainWindow::loadModel(const QString& dir) {
    sessionModel_ = dir.isEmpty() ? dir : QDir::cleanPath(QDir(dir).absolutePath());
    startLoading(dir);
}

void MainWindow::startLoading(const QString& dir) {
    modelBar_->hide();
    useTrainedLanguages(app::trained_languages(dir.toStdString()));
    controller_.loadModel(dir);
}

QString MainWindow::modelDirectoryInUse() const {
    return sessionModel_.isEmpty() ? settings_.effectiveModelDirectory() : sessionModel_;
}

void MainWindow::chooseModelDirectory() {
    QString start = modelDirectoryInUse();
    if (start.isEmpty()) start = QDir::homePath();
    const QString dir =
        QFileDialog::getExistingDirectory(this, tr("Choose a model directory"), start);
    if (!dir.isEmpty()) useModelDirectory(dir);
}

bool MainWindow::useModelDirectory(const QString& dir) {
    const ModelCheck check = check_model_directory(dir);
    if (!check.config) {
        // Not modal for the caller: the window stays as it was, the box says why.
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Not a usable model"),
                                    tr("%1 cannot be used as the model directory.").arg(dir),
                                    QMessageBox::Ok, this);
        box->setInformativeText(check.error);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return false;
    }
    const QString clean = QDir::cleanPath(QDir(dir).absolutePath());
    settings_.setModelDirectory(clean);
    settings_.setEngineMode(Settings::EngineMode::Local);  // the model was asked for
    sessionModel_.clear();
    announceLoad_ = true;
    startLoading(clean);
    return true;
}

void MainWindow::showModelBar(const QString& text, bool servers) {
    modelBarText_->setText(text);
    modelBarServers_ = servers;
    modelBarButton_->setText(servers ? tr("Server settings…") : tr("Choose model directory…"));
    modelBar_->show();
}

void MainWindow::applySettings() {
    const TranslationOptions options = settings_.translationOptions();
    controller_.setOptions(options);
    controller_.setEngineChoice({settings_.device(), settings_.tier(), settings_.contextTokens(),
                                 settings_.maxBatch(), settings_.int8KvCache(),
                                 settings_.cpuTier()});
    app::DocumentOptions documents;
    if (options.mode == SamplingMode::Greedy)
        documents.sampling = SamplingParams::greedy_decoding();
    else if (options.mode == SamplingMode::Custom)
        documents.sampling = options.sampling;
    documents.max_new_tokens = options.max_new_tokens;
    documents.casing_guard = options.casing_guard;
    documents.glossary = options.glossary;
    jobQueue_->setOptions(documents);
}

int MainWindow::addDocuments(const QStringList& paths) {
    documentsDock_->show();
    // At least a third of the window, so that a few rows show without scrolling (a restored
    // layout may have left it a sliver).
    if (!documentsDock_->isFloating() && documentsDock_->height() < height() / 3)
        resizeDocks({documentsDock_}, {height() / 3}, Qt::Vertical);
    documentsDock_->raise();
    const int n = static_cast<int>(documents_->addPaths(paths).size());
    statusBar()->showMessage(
        n > 0 ? tr("%n documents queued", nullptr, n)
              : tr("Nothing new to translate there: no supported documents, or already queued"),
        4000);
    return n;
}

bool MainWindow::handleDrag(QEvent* event) {
    switch (event->type()) {
        case QEvent::DragEnter:
        case QEvent::DragMove: {
            auto* drag = static_cast<QDragMoveEvent*>(event);  // QDragEnterEvent is one too
            if (local_paths(drag->mimeData()).isEmpty()) return false;
            drag->setDropAction(Qt::CopyAction);
            drag->accept();
            return true;
        }
        case QEvent::Drop: {
            auto* drop = static_cast<QDropEvent*>(event);
            const QStringList paths = local_paths(drop->mimeData());
            if (paths.isEmpty()) return false;
            drop->setDropAction(Qt::CopyAction);
            drop->accept();
            addDocuments(paths);
            return true;
        }
        default:
            return false;
    }
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!handleDrag(event)) QMainWindow::dragEnterEvent(event);
}

void MainWindow::dragMoveEvent(QDragMoveEvent* event) {
    if (!handleDrag(event)) QMainWindow::dragMoveEvent(event);
}

void MainWindow::dropEvent(QDropEvent* event) {
    if (!handleDrag(event)) QMainWindow::dropEvent(event);
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    // Text dragged onto a pane stays a text drop; files become documents.
    if (handleDrag(event)) return true;
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::onSourceChanged() {
    const QString text = source_->toPlainText();
    sourceInfo_->setText(text.isEmpty() ? QString() : tr("%n characters", nullptr, text.size()));
    if (text.trimmed().isEmpty()) {
        debounce_->stop();
        controller_.cancel();
        requestId_ = 0;
        translation_.clear();
        target_->clear();
        targetInfo_->clear();
        copyButton_->setEnabled(false);
        sourcePicker_->setDetected(QString());
        updatePairWarning();
        return;
    }
    debounce_->start();
}

void MainWindow::updateDetected() {
    if (sourcePicker_->currentCode().isEmpty())
        sourcePicker_->setDetected(detect_source_language(source_->toPlainText()));
    updatePairWarning();
}

void MainWindow::useTrainedLanguages(std::vector<std::string> languages) {
    documents_->model()->setTrainedLanguages(std::move(languages));
    updatePairWarning();
}

MainWindow::SameLanguage MainWindow::sameLanguage() const {
    const Language* to = find_language(targetPicker_->currentCode().toStdString());
    const QString picked = sourcePicker_->currentCode();
    const QString from = picked.isEmpty() ? sourcePicker_->detected() : picked;
    if (!to || from.isEmpty() || find_language(from.toStdString()) != to) return SameLanguage::No;
    return picked.isEmpty() ? SameLanguage::Detected : SameLanguage::Picked;
}

void MainWindow::updatePairWarning() {
    // The banner's text may be longer than its two lines: all of it in the tooltip.
    const auto show = [this](const QString& text) {
        pairWarning_->setText(text);
        pairWarning_->setToolTip(text);
        pairWarning_->show();
    };
    const std::vector<std::string>& trained = documents_->model()->trainedLanguages();
    const QString toCode = targetPicker_->currentCode();
    QString fromCode = sourcePicker_->currentCode();
    if (fromCode.isEmpty()) fromCode = sourcePicker_->detected();
    const Language* to = find_language(toCode.toStdString());
    const Language* from = fromCode.isEmpty() ? nullptr : find_language(fromCode.toStdString());
    // Said instead of the training warning: there is nothing to translate.
    if (const SameLanguage same = sameLanguage(); same != SameLanguage::No) {
        show(same == SameLanguage::Picked
                 ? tr("The source and the target language are both %1, so there is nothing to "
                      "translate. Choose another target language.")
                       .arg(language_display_name(toCode))
                 : tr("The text is already in %1 (detected), so it is shown unchanged. Choose "
                      "its language as the source if it was detected wrongly.")
                       .arg(language_display_name(toCode)));
        return;
    }
    if (!to || !app::untrained_pair(trained, from, *to)) {
        pairWarning_->hide();
        return;
    }
    QStringList names;
    for (const std::string& code : trained)
        names << language_display_name(QString::fromStdString(code));
    const QString known = names.join(tr(", "));
    show(from ? tr("This model was trained to translate between English and %1 only: %2 → %3 is "
                   "outside that, so expect a poor translation.")
                    .arg(known, language_display_name(fromCode), language_display_name(toCode))
              : tr("This model was trained to translate between English and %1 only: %2 is "
                   "outside that, so expect a poor translation.")
                    .arg(known, language_display_name(toCode)));
}

void MainWindow::translateNow() {
    debounce_->stop();
    const QString text = source_->toPlainText();
    if (text.trimmed().isEmpty()) {
        onSourceChanged();
        return;
    }
    updateDetected();
    if (const SameLanguage same = sameLanguage(); same != SameLanguage::No) {
        // Not for the model: it would only paraphrase. A text found to be in the target
        // language already is its own result; a pair picked equal has none (the banner says
        // why).
        controller_.cancel();
        requestId_ = 0;
        translation_ = same == SameLanguage::Detected ? text : QString();
        target_->setPlainText(translation_);
        targetInfo_->clear();
        copyButton_->setEnabled(!translation_.isEmpty());
        onStateChanged();
        return;
    }
    requestId_ =
        controller_.translate(text, sourcePicker_->currentCode(), targetPicker_->currentCode());
    onStateChanged();
}

void MainWindow::onPartial(quint64 id, const QString& text) {
    if (id != requestId_) return;
    translation_ = text;
    target_->setPlainText(text);
    target_->moveCursor(QTextCursor::End);
    copyButton_->setEnabled(!text.isEmpty());
}

void MainWindow::onFinished(quint64 id, const QString& text, const RequestStats& stats) {
    if (id != requestId_) return;
    retryOnLoad_ = false;
    targetInfo_->setToolTip(QString());
    translation_ = text;
    target_->setPlainText(text);
    copyButton_->setEnabled(!text.isEmpty());
    if (stats.segments == 0 && stats.cached_lines > 0)  // every line as translated before
        targetInfo_->setText(tr("Unchanged lines, as translated before"));
    else
        targetInfo_->setText(tr("%1 ms to first token · %2 tokens/s")
                                 .arg(QLocale().toString(stats.ttft_ms, 'f', 0),
                                      QLocale().toString(stats.tokens_per_s, 'f', 1)));
    // Glossary terms the translation lacks: a note until the next translation.
    if (stats.missing_terms.isEmpty())
        statusBar()->clearMessage();
    else
        statusBar()->showMessage(tr("Glossary terms not in the translation: %1")
                                     .arg(stats.missing_terms.join(QStringLiteral(", "))));
    onStateChanged();
}

void MainWindow::onError(const QString& message) {
    retryOnLoad_ = true;
    targetInfo_->setText(tr("Error: %1").arg(message));
    targetInfo_->setToolTip(message);
    stateLabel_->setText(tr("Error: %1").arg(message));
}

void MainWindow::swapLanguages() {
    QString from = sourcePicker_->currentCode();
    const QString to = targetPicker_->currentCode();
    if (from.isEmpty()) from = sourcePicker_->detected();
    if (from.isEmpty()) {
        // Nothing detected: the likeliest other side.
        from = to == QLatin1String("en") ? QStringLiteral("zh") : QStringLiteral("en");
    }
    const QString sourceText = source_->toPlainText();
    const QString targetText = target_->toPlainText();
    controller_.cancel();
    requestId_ = 0;
    {
        const QSignalBlocker a(sourcePicker_), b(targetPicker_);
        sourcePicker_->setCurrentCode(to);
        targetPicker_->setCurrentCode(from);
    }
    useChosenLanguages();
    {
        const QSignalBlocker block(source_);
        source_->setPlainText(targetText);
    }
    target_->setPlainText(sourceText);
    translation_ = sourceText;
    copyButton_->setEnabled(!sourceText.isEmpty());
    targetInfo_->clear();
    sourceInfo_->setText(targetText.isEmpty() ? QString()
                                              : tr("%n characters", nullptr, targetText.size()));
    if (!targetText.trimmed().isEmpty()) debounce_->start();
}

void MainWindow::useChosenLanguages() {
    settings_.setSourceLanguage(sourcePicker_->currentCode());
    settings_.setTargetLanguage(targetPicker_->currentCode());
    documents_->setLanguages(sourcePicker_->currentCode(), targetPicker_->currentCode());
    updatePairWarning();
}

void MainWindow::copyTranslation() {
    const QString text = translation_.isEmpty() ? target_->toPlainText() : translation_;
    if (!text.isEmpty()) QApplication::clipboard()->setText(text);
    statusBar()->showMessage(tr("Translation copied"), 2000);
}

void MainWindow::showSettings() {
    runSettings(false);
}

void MainWindow::showServerSettings() {
    runSettings(true);
}

void MainWindow::runSettings(bool servers_page) {
    const QString before = modelDirectoryInUse();
    // Everything the local engine is loaded with: a change reloads the model.
    const auto engine_settings = [this] {
        return QStringList{settings_.device(),
                           settings_.tier(),
                           QString::number(settings_.contextTokens()),
                           QString::number(settings_.maxBatch()),
                           settings_.int8KvCache() ? QStringLiteral("int8-kv") : QString(),
                           settings_.cpuTier()};
    };
    const QStringList engine_before = engine_settings();
    const bool servers_before = settings_.engineMode() == Settings::EngineMode::Servers;
    const RemoteChoice remote_before = settings_.remoteChoice();
    SettingsDialog dialog(settings_, this);
    // The model in use, also one given for this session only (kept while it stays chosen).
    if (!sessionModel_.isEmpty()) dialog.setSessionModelDirectory(sessionModel_);
    if (servers_page) dialog.showServerSettings();
    if (dialog.exec() != QDialog::Accepted) return;
    statusBar()->clearMessage();  // notes of the old settings (glossary terms) are stale
    if (!sessionModel_.isEmpty() &&
        QDir::cleanPath(QDir(dialog.modelDirectory()).absolutePath()) != sessionModel_)
        sessionModel_.clear();  // another model was chosen: the setting from now on
    applySettings();
    const QString after = modelDirectoryInUse();
    const bool servers = settings_.engineMode() == Settings::EngineMode::Servers;
    if (servers || servers_before) {
        // To, from or between servers: a new engine unless nothing about it changed.
        if (servers != servers_before || !servers || remote_before != settings_.remoteChoice() ||
            controller_.state() != TranslationController::State::Ready) {
            announceLoad_ = true;
            loadConfiguredModel();
        }
    } else if (after.isEmpty()) {
        loadConfiguredModel();
    } else if (after != before || controller_.state() != TranslationController::State::Ready ||
               engine_before != engine_settings()) {
        // A new model, or the same one on another device / tier / budget.
        announceLoad_ = true;
        startLoading(after);
    }
}

void MainWindow::onStateChanged() {
    using State = TranslationController::State;
    const State s = controller_.state();
    const QString name = controller_.modelName();
    modelLabel_->setText(name.isEmpty() ? QString() : tr("Model: %1").arg(name));
    modelLabel_->setToolTip(controller_.modelDirectory());
    progress_->setVisible(s == State::Loading);
    const bool remote = controller_.remote();
    if (s == State::Loading) {
        progress_->setRange(0, 0);
        stateLabel_->setText(remote ? tr("Connecting to the servers…") : tr("Loading the model…"));
    } else if (s == State::Failed && remote) {
        stateLabel_->setText(tr("The servers cannot be used"));
        showModelBar(tr("The servers cannot be used: %1").arg(controller_.lastError()), true);
    } else if (s == State::Failed) {
        stateLabel_->setText(tr("The model could not be loaded"));
        showModelBar(tr("The model could not be loaded: %1").arg(controller_.lastError()));
    } else if (s == State::NoModel) {
        stateLabel_->setText(tr("No model loaded"));
    } else if (controller_.busy()) {
        stateLabel_->setText(tr("Translating…"));
    } else if (const int documents = jobQueue_->pendingCount(); documents > 0) {
        stateLabel_->setText(tr("Translating documents (%n to go)…", nullptr, documents));
    } else {
        stateLabel_->setText(tr("Ready"));
    }
    if (s == State::Ready) modelBar_->hide();
}

QString MainWindow::statusText() const {
    return modelLabel_->text() + QStringLiteral(" · ") + stateLabel_->text();
}

int MainWindow::textPointSize() const {
    return source_->font().pointSize();
}

void MainWindow::applyFontSize(int points) {
    QFont f = QApplication::font();
    if (points > 0) f.setPointSize(points);
    source_->setFont(f);
    target_->setFont(f);
}

void MainWindow::zoomIn() {
    const int size = std::min(kMaxPointSize, textPointSize() + 1);
    settings_.setFontPointSize(size);
    applyFontSize(size);
}

void MainWindow::zoomOut() {
    const int size = std::max(kMinPointSize, textPointSize() - 1);
    settings_.setFontPointSize(size);
    applyFontSize(size);
}

void MainWindow::zoomReset() {
    settings_.setFontPointSize(0);
    applyFontSize(0);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    settings_.setWindowGeometry(saveGeometry());
    settings_.setWindowState(saveState());
    // Read here, not on each toggle: the panel is hidden too while the window is destroyed.
    settings_.setLivePanelVisible(!dock_->isHidden());
    settings_.sync();
    QMainWindow::closeEvent(event);
}

}  // namespace mtdesk::ui
