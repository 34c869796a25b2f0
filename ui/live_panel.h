#pragma once
// The live panel: device, memory, precision tier, queue depth, batch size, time to first token
// and tokens/s (last, p50, p95) with two small history charts, refreshed a few times a second
// from TranslationController::stats(). VRAM rows appear when the engine reports VRAM; with the
// remote engine the batch row counts the requests in flight, and rows for the servers, their
// latency and their tokens/s appear.

#include <QWidget>

#include "translation_controller.h"

class QChart;
class QLabel;
class QLineSeries;
class QTimer;
class QValueAxis;

namespace mtdesk::ui {

/// "1.2 GiB", "345.0 MiB", "12.0 KiB", "512 B" (binary units, as `mtdesk models` prints).
QString human_bytes(qint64 bytes);

class LivePanel : public QWidget {
    Q_OBJECT

  public:
    static constexpr int kRefreshMs = 250;

    explicit LivePanel(TranslationController* controller, QWidget* parent = nullptr);

    /// Shows `stats` (refresh() calls it with the controller's snapshot).
    void showStats(const EngineStats& stats);
    void refresh();

    /// Text shown in a row, for tests: "device", "tier", "memory", "queue", "batch", "ttft",
    /// "tps"; with the remote engine also "servers", "latency", "throughput".
    QString rowText(const QString& row) const;
    /// The caption of a row ("batch": "Batch", or "In flight" for the remote engine).
    QString rowCaption(const QString& row) const;
    /// Whether a row is shown.
    bool rowVisible(const QString& row) const;

  protected:
    void showEvent(QShowEvent* event) override;
    void hideEvent(QHideEvent* event) override;

  private:
    struct History {
        QChart* chart = nullptr;
        QLineSeries* series = nullptr;
        QValueAxis* x = nullptr;
        QValueAxis* y = nullptr;
    };
    QWidget* makeChart(const QString& title, History& history);
    static void fillChart(History& history, const QVector<double>& values);

    TranslationController* controller_;
    QTimer* timer_;
    QLabel* device_;
    QLabel* tier_;
    QLabel* memory_;
    QLabel* vramLabel_;
    QLabel* vram_;
    QLabel* queue_;
    QLabel* batchLabel_;
    QLabel* batch_;
    QLabel* serversLabel_;
    QLabel* servers_;
    QLabel* latencyLabel_;
    QLabel* latency_;
    QLabel* throughputLabel_;
    QLabel* throughput_;
    QLabel* ttft_;
    QLabel* tps_;
    History ttftChart_;
    History tpsChart_;
};

}  // namespace mtdesk::ui
