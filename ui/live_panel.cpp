#include "live_panel.h"

#include <QChart>
#include <QChartView>
#include <QFormLayout>
#include <QGraphicsLayout>
#include <QLabel>
#include <QLineSeries>
#include <QLocale>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>

namespace mtdesk::ui {
namespace {

QString figure(const std::optional<double>& v, int decimals) {
    if (!v) return QStringLiteral("–");
    return QLocale().toString(*v, 'f', *v >= 100 ? 0 : decimals);  // 1,116 rather than 1,116.0
}

QString percentiles_text(const Percentiles& p, int decimals, const QString& unit) {
    return LivePanel::tr("%1 %4 · p50 %2 · p95 %3")
        .arg(figure(p.last, decimals), figure(p.p50, decimals), figure(p.p95, decimals), unit);
}

}  // namespace

QString human_bytes(qint64 b) {
    const QLocale l;
    if (b >= (qint64(1) << 30))
        return LivePanel::tr("%1 GiB").arg(l.toString(b / double(1 << 30), 'f', 2));
    if (b >= (qint64(1) << 20))
        return LivePanel::tr("%1 MiB").arg(l.toString(b / double(1 << 20), 'f', 1));
    if (b >= 1024) return LivePanel::tr("%1 KiB").arg(l.toString(b / 1024.0, 'f', 1));
    return LivePanel::tr("%1 B").arg(b);
}

LivePanel::LivePanel(TranslationController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller), timer_(new QTimer(this)) {
    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setLabelAlignment(Qt::AlignLeft);
    auto value = [this] {
        auto* l = new QLabel(this);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
        return l;
    };
    device_ = value();
    tier_ = value();
    memory_ = value();
    vram_ = value();
    queue_ = value();
    batch_ = value();
    ttft_ = value();
    tps_ = value();
    servers_ = value();
    latency_ = value();
    throughput_ = value();
    vramLabel_ = new QLabel(tr("VRAM"), this);
    batchLabel_ = new QLabel(tr("Batch"), this);
    serversLabel_ = new QLabel(tr("Servers"), this);
    latencyLabel_ = new QLabel(tr("Latency"), this);
    throughputLabel_ = new QLabel(tr("Throughput"), this);
    form->addRow(tr("Device"), device_);
    form->addRow(tr("Precision"), tier_);
    form->addRow(tr("RAM"), memory_);
    form->addRow(vramLabel_, vram_);
    form->addRow(tr("Queue"), queue_);
    form->addRow(batchLabel_, batch_);
    form->addRow(serversLabel_, servers_);
    form->addRow(latencyLabel_, latency_);
    form->addRow(throughputLabel_, throughput_);
    form->addRow(tr("First token"), ttft_);
    form->addRow(tr("Tokens/s"), tps_);
    // As wide from the start as with figures, so that the panel does not widen (and the text
    // panes shrink) when the first request finishes: five-digit figures (a tiny model on a
    // fast computer makes thousands of tokens a second), each digit the font's widest.
    const QFontMetrics metrics = fontMetrics();
    QChar widest = QLatin1Char('0');
    for (char c = '1'; c <= '9'; ++c)
        if (metrics.horizontalAdvance(QLatin1Char(c)) > metrics.horizontalAdvance(widest))
            widest = QLatin1Char(c);
    // Measured as QLabel measures, with a digit to spare for the rounding of the glyphs.
    const auto advance = [&](QString text) {
        for (QChar& c : text)
            if (c.isDigit()) c = widest;
        return metrics.boundingRect(QRect(), Qt::AlignLeft, text).width() +
               metrics.horizontalAdvance(widest);
    };
    Percentiles slow;
    slow.last = slow.p50 = slow.p95 = 88888;
    Percentiles narrow;
    narrow.last = narrow.p50 = narrow.p95 = 88.8;
    const int width =
        std::max({advance(percentiles_text(slow, 0, tr("ms"))),
                  advance(percentiles_text(slow, 1, tr("tok/s"))),
                  advance(percentiles_text(narrow, 1, tr("tok/s"))),
                  advance(tr("p50 %1 · p95 %2 ms").arg(figure(88888.0, 0), figure(88888.0, 0)))});
    for (QLabel* l : {device_, tier_, memory_, vram_, queue_, batch_, ttft_, tps_, servers_,
                      latency_, throughput_})
        l->setMinimumWidth(width);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(makeChart(tr("Time to first token (ms)"), ttftChart_));
    layout->addWidget(makeChart(tr("Tokens per second"), tpsChart_));
    layout->addStretch(1);

    timer_->setInterval(kRefreshMs);
    connect(timer_, &QTimer::timeout, this, &LivePanel::refresh);
    refresh();
}

QWidget* LivePanel::makeChart(const QString& title, History& h) {
    h.chart = new QChart;
    h.series = new QLineSeries;
    h.chart->addSeries(h.series);
    h.x = new QValueAxis;
    h.y = new QValueAxis;
    QFont small = font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.8));
    for (QValueAxis* a : {h.x, h.y}) {
        a->setLabelsFont(small);
        a->setLabelsColor(palette().color(QPalette::WindowText));
        a->setGridLineColor(palette().color(QPalette::Mid));
        a->setLabelFormat(QStringLiteral("%.0f"));
    }
    h.x->setTickCount(2);
    h.y->setTickCount(3);
    h.x->setRange(1, TranslationController::kHistory);
    h.y->setRange(0, 1);
    h.chart->addAxis(h.x, Qt::AlignBottom);
    h.chart->addAxis(h.y, Qt::AlignLeft);
    h.series->attachAxis(h.x);
    h.series->attachAxis(h.y);
    QPen pen(palette().color(QPalette::Highlight));
    pen.setWidthF(2);
    h.series->setPen(pen);
    h.chart->legend()->hide();
    h.chart->setTitle(title);
    h.chart->setTitleFont(small);
    h.chart->setTitleBrush(palette().color(QPalette::WindowText));
    h.chart->setBackgroundVisible(false);
    h.chart->setMargins(QMargins(0, 0, 0, 0));
    h.chart->layout()->setContentsMargins(0, 0, 0, 0);
    auto* view = new QChartView(h.chart, this);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(120);
    view->setFocusPolicy(Qt::NoFocus);  // nothing to do there with the keyboard
    // Its width hint follows the axis labels, which widen with the figures: the panel's width
    // comes from the rows above instead.
    view->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    view->setStyleSheet(QStringLiteral("background: transparent"));
    return view;
}

void LivePanel::fillChart(History& h, const QVector<double>& values) {
    QList<QPointF> points;
    points.reserve(values.size());
    double top = 0;
    for (qsizetype i = 0; i < values.size(); ++i) {
        points.append(QPointF(double(i + 1), values[i]));
        top = std::max(top, values[i]);
    }
    h.series->replace(points);
    // A line needs two points: the first sample shows as a dot until the second comes.
    h.series->setPointsVisible(points.size() == 1);
    h.x->setRange(1, std::max<double>(2, values.size()));
    h.x->setTickCount(2);
    if (top > 0) {
        h.y->setRange(0, top * 1.1);
        h.y->applyNiceNumbers();
    } else {
        h.y->setRange(0, 2);
    }
    h.y->setTickCount(3);
    h.y->setLabelFormat(h.y->max() >= 10 ? QStringLiteral("%.0f") : QStringLiteral("%.1f"));
}

void LivePanel::showStats(const EngineStats& s) {
    device_->setText(s.device);
    tier_->setText(s.tier);
    memory_->setText(human_bytes(s.ram_bytes));
    const bool has_vram = s.vram_used_bytes && s.vram_total_bytes;
    vramLabel_->setVisible(has_vram);
    vram_->setVisible(has_vram);
    if (has_vram) {
        QString text =
            tr("%1 of %2").arg(human_bytes(*s.vram_used_bytes), human_bytes(*s.vram_total_bytes));
        if (s.vram_own_bytes) text += tr(" (mtdesk: %1)").arg(human_bytes(*s.vram_own_bytes));
        vram_->setText(text);
    }
    queue_->setText(tr("%n waiting", nullptr, s.queue_depth));
    // Remote: the requests in flight on the servers, the servers answering, and the figures of
    // every request (document segments too) as the servers deliver them.
    const bool remote = s.remote.has_value();
    batchLabel_->setText(remote ? tr("In flight") : tr("Batch"));
    batch_->setText(remote ? tr("%n request(s)", nullptr, s.batch_size)
                           : tr("%n decoding", nullptr, s.batch_size));
    for (QLabel* l :
         {serversLabel_, servers_, latencyLabel_, latency_, throughputLabel_, throughput_})
        l->setVisible(remote);
    if (remote) {
        const RemoteStatistics& r = *s.remote;
        QString servers = tr("%1 of %2 answering").arg(r.servers_available).arg(r.servers);
        if (r.retried > 0) servers += tr(" · %n retried", nullptr, static_cast<int>(r.retried));
        servers_->setText(servers);
        latency_->setText(
            tr("p50 %1 · p95 %2 ms").arg(figure(r.latency_p50_ms, 0), figure(r.latency_p95_ms, 0)));
        throughput_->setText(tr("%1 tok/s").arg(figure(r.tokens_per_s, 1)));
    }
    ttft_->setText(percentiles_text(s.ttft_ms, 0, tr("ms")));
    tps_->setText(percentiles_text(s.tokens_per_s, 1, tr("tok/s")));
    fillChart(ttftChart_, s.ttft_history);
    fillChart(tpsChart_, s.tps_history);
}

void LivePanel::refresh() {
    showStats(controller_->stats());
}

QString LivePanel::rowText(const QString& row) const {
    if (row == QLatin1String("device")) return device_->text();
    if (row == QLatin1String("tier")) return tier_->text();
    if (row == QLatin1String("memory")) return memory_->text();
    if (row == QLatin1String("vram")) return vram_->text();
    if (row == QLatin1String("queue")) return queue_->text();
    if (row == QLatin1String("batch")) return batch_->text();
    if (row == QLatin1String("ttft")) return ttft_->text();
    if (row == QLatin1String("tps")) return tps_->text();
    if (row == QLatin1String("servers")) return servers_->text();
    if (row == QLatin1String("latency")) return latency_->text();
    if (row == QLatin1String("throughput")) return throughput_->text();
    return {};
}

QString LivePanel::rowCaption(const QString& row) const {
    if (row == QLatin1String("batch")) return batchLabel_->text();
    if (row == QLatin1String("servers")) return serversLabel_->text();
    if (row == QLatin1String("latency")) return latencyLabel_->text();
    if (row == QLatin1String("throughput")) return throughputLabel_->text();
    if (row == QLatin1String("vram")) return vramLabel_->text();
    return {};
}

bool LivePanel::rowVisible(const QString& row) const {
    // Hidden explicitly, whether or not the panel itself is on screen.
    if (row == QLatin1String("servers")) return !servers_->isHidden();
    if (row == QLatin1String("latency")) return !latency_->isHidden();
    if (row == QLatin1String("throughput")) return !throughput_->isHidden();
    if (row == QLatin1String("vram")) return !vram_->isHidden();
    return true;
}

void LivePanel::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    refresh();
    timer_->start();
}

void LivePanel::hideEvent(QHideEvent* event) {
    timer_->stop();
    QWidget::hideEvent(event);
}

}  // namespace mtdesk::ui
