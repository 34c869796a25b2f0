#pragma once
// A real `mtdesk serve` process for the suites that talk to one over loopback: started on a
// free port (--port 0, the port read from its "listening on" line) and stopped with SIGTERM.

#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QStringList>

const QString kMtdeskBinary = QStringLiteral(MTDESK_BINARY_DIR "/app/mtdesk");
const QString kDemoModel = QStringLiteral(MTDESK_DEMO_MODEL_DIR);

class ServeProcess {
  public:
    ~ServeProcess() {
        if (process_.state() != QProcess::NotRunning) {
            process_.kill();
            process_.waitForFinished(5000);
        }
    }

    /// Starts `mtdesk serve --port 0 <args>` and waits until it listens; false (with error())
    /// when it exits or says nothing within the deadline.
    bool start(const QStringList& args, int timeout_ms = 120000) {
        process_.start(kMtdeskBinary, QStringList{QStringLiteral("serve"), QStringLiteral("--port"),
                                                  QStringLiteral("0")} +
                                          args);
        QElapsedTimer timer;
        timer.start();
        static const QRegularExpression kListening(
            QStringLiteral("listening on http://[^\\s]+:(\\d+)"));
        while (timer.elapsed() < timeout_ms) {
            process_.waitForReadyRead(100);
            stdout_ += process_.readAllStandardOutput();
            const QRegularExpressionMatch m = kListening.match(QString::fromUtf8(stdout_));
            if (m.hasMatch()) {
                port_ = m.captured(1).toInt();
                return true;
            }
            if (process_.state() == QProcess::NotRunning) break;
        }
        error_ = QStringLiteral("mtdesk serve did not start: ") +
                 QString::fromUtf8(process_.readAllStandardError());
        return false;
    }

    /// SIGTERM, then waits; the exit code, or -1 when it had to be killed or crashed.
    int stop(int timeout_ms = 30000) {
        process_.terminate();
        if (!process_.waitForFinished(timeout_ms)) {
            process_.kill();
            process_.waitForFinished(5000);
            return -1;
        }
        return process_.exitStatus() == QProcess::NormalExit ? process_.exitCode() : -1;
    }

    int port() const { return port_; }
    /// The server's process id (for its memory in /proc).
    qint64 pid() const { return process_.processId(); }
    QString error() const { return error_; }
    /// Everything it wrote on stderr so far.
    QByteArray stderr_text() {
        stderr_ += process_.readAllStandardError();
        return stderr_;
    }
    bool running() const { return process_.state() == QProcess::Running; }

  private:
    QProcess process_;
    QByteArray stdout_, stderr_;
    QString error_;
    int port_ = 0;
};
