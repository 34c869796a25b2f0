#pragma once
// A real `mtdesk serve` process on loopback for the remote engine's suites: started on a free
// port with the bundled demo model on the CPU, its port read from the "listening on" line it
// prints, and killed (SIGKILL, as a machine that goes away) or ended with the test.

#include <QDeadlineTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QString>
#include <QStringList>

#include <memory>

namespace mtdesk::test {

class ServeProcess {
  public:
    /// Starts `mtdesk serve --model <demo> --device cpu --port 0 --quiet` with `extra` arguments
    /// and waits (at most `timeout_ms`) until it listens. ok() says whether it does; error() why
    /// not.
    explicit ServeProcess(const QStringList& extra = {}, int timeout_ms = 60000) {
        process_ = std::make_unique<QProcess>();
        process_->setProgram(QStringLiteral(MTDESK_BINARY_DIR "/app/mtdesk"));
        process_->setArguments(QStringList{QStringLiteral("serve"), QStringLiteral("--model"),
                                           QStringLiteral(MTDESK_DEMO_MODEL_DIR),
                                           QStringLiteral("--device"), QStringLiteral("cpu"),
                                           QStringLiteral("--port"), QStringLiteral("0"),
                                           QStringLiteral("--quiet")} +
                               extra);
        process_->start();
        QDeadlineTimer deadline(timeout_ms);
        static const QRegularExpression listening(
            QStringLiteral("listening on (http://127\\.0\\.0\\.1:(\\d+))"));
        while (!deadline.hasExpired()) {
            if (process_->state() == QProcess::NotRunning) break;
            process_->waitForReadyRead(100);
            out_ += process_->readAllStandardOutput();
            err_ += process_->readAllStandardError();
            const auto m = listening.match(QString::fromUtf8(out_));
            if (m.hasMatch()) {
                url_ = m.captured(1);
                port_ = m.captured(2).toInt();
                return;
            }
        }
        err_ += process_->readAllStandardError();
    }

    ~ServeProcess() { stop(); }

    bool ok() const { return port_ > 0; }
    QString error() const {
        return QStringLiteral("mtdesk serve did not start: ") + QString::fromUtf8(out_ + err_);
    }
    int port() const { return port_; }
    std::string url() const { return url_.toStdString(); }
    QString qurl() const { return url_; }

    /// Kills it without warning, as a machine that goes away, and waits until it is gone.
    void kill() {
        if (process_->state() == QProcess::NotRunning) return;
        process_->kill();
        process_->waitForFinished(10000);
    }
    /// Ends it (SIGTERM, then SIGKILL after 10 s).
    void stop() {
        if (process_->state() == QProcess::NotRunning) return;
        process_->terminate();
        if (!process_->waitForFinished(10000)) kill();
    }

  private:
    std::unique_ptr<QProcess> process_;
    QByteArray out_, err_;
    QString url_;
    int port_ = 0;
};

}  // namespace mtdesk::test
