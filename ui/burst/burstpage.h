// The Burst tab: fire a test burst (or the window-boundary test) at a limiter from the console
// and watch what it admits, on the core's own BurstEngine and BoundaryScenario, audited as
// the CLI audits them.
#pragma once

#include "burstrun.h"
#include "redis/connectionoptions.h"
#include "redisclient.h"

#include <QElapsedTimer>
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <optional>
#include <vector>

class QCheckBox;
class QComboBox;
class QGridLayout;
class QLabel;
class QLineEdit;
class QMessageBox;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QStackedWidget;

namespace ratescope::ui {

class BoundaryChart;
class LatencyChart;
class TimelineChart;

class BurstPage : public QWidget {
    Q_OBJECT
public:
    explicit BurstPage(QWidget *parent = nullptr);
    // Cancels a running burst and waits for it at most BurstRun::kCloseWaitMs.
    ~BurstPage() override;

    // options: how to open the engine's own connections (the same server, credentials
    // included; never shown or logged); client: the console's connection for the short reads
    // (policies, the key's remaining quota); nullptr: disconnected (Start disabled, saying why).
    void setClient(RedisClient *client, const ratescope::ConnectionOptions &options, const QByteArray &ns);
    void setKey(const QByteArray &key); // prefill from the key browser / a key view ("Burst…")
    // The name its audit entries carry beside the OS user (default: the OS user).
    void setOperatorName(const QString &name) { m_operator = name; }
    bool isRunning() const;

    enum class Mode { Burst, Boundary };
    void setMode(Mode mode);
    Mode mode() const;

    // The form filled as given (ratescope --burst, --boundary-test): a burst at key, from the
    // limits in force at it unless an algorithm is given, or the boundary test. Text fields
    // are taken as typed and checked as typed ones are.
    struct Prefill {
        bool boundary = false;
        QByteArray key;
        std::optional<ratescope::Algorithm> algorithm; // none: the limits in force at the key
        QString limit, window, cost, requests, duration, rate;
        int connections = 1, pipeline = 1;
    };
    void prefill(const Prefill &p);
    // Start as Start does, as soon as the form can (the key's limits read, connected); when it
    // cannot (a field refused, read-only), gives up with the reason in the status line.
    void startWhenReady();
    // A start awaited, the key read (or asked about) before a burst, or a run under way.
    bool isBusy() const { return m_startWhenReady || m_preparing || isRunning(); }

    // What Start would do, or why it cannot (empty when it can).
    QString whyNotStartable() const;
    // Start and Cancel, as the buttons do.
    void start();
    void cancel();

    // The last run's results (empty before the first).
    const std::optional<BurstSummary> &lastSummary() const { return m_summary; }
    const std::vector<BoundaryRun> &lastBoundary() const { return m_boundary; }
    int lastAuditEntries() const { return m_auditEntries; }
    QString statusText() const;
    TimelineChart *timelineChart() const { return m_timeline; }

    // Exports (the buttons ask for a file, then call these). Empty on success, else why not.
    QString exportTimelineCsv(const QString &path) const;
    QString exportChartPng(const QString &path) const;

signals:
    void finished(); // a burst or boundary test ended (summary shown)
    // A burst ended that sent requests to key: its state has changed (the keys panel's row and
    // the key's view read it again). Not for the boundary test's scratch keys.
    void keyChanged(const QByteArray &key);
    void busyChanged(bool busy);

private:
    struct Field {
        QWidget *widget = nullptr;
        QLabel *note = nullptr;
    };
    struct FormResult {
        std::optional<BurstConfig> burst;
        std::optional<LimitSpec> boundary; // limit and window of the boundary test
    };

    QWidget *buildForm();
    // Limits typed for a burst at a key whose limits in force (policy, override) differ: why
    // that matters, in a sentence; empty when they are the same or none are known.
    QString limitsMismatch();
    QWidget *buildResults();
    QWidget *cell(QWidget *widget, const QString &name);
    void setNote(const QString &name, const QString &text);
    FormResult readForm(bool showNotes);
    void formChanged();
    void updateStartable();
    QByteArray currentKey() const;
    void lookUpPolicy();
    void askThenLaunch(const BurstConfig &config);
    void launch(const BurstConfig &config, qint64 remainingBefore);
    void launchBoundary(const LimitSpec &spec);
    void takeProgress();
    void redraw();
    void peekRemaining();
    void runFinished(const BurstOutcome &outcome);
    void showSummary(const BurstSummary &s);
    void showBoundary(const std::vector<BoundaryRun> &runs);
    void setStatus(const QString &text, bool problem = false);
    void chooseExportFile(bool png);

    QPointer<RedisClient> m_client;
    ConnectionOptions m_options;
    QByteArray m_ns;
    QString m_operator;
    bool m_haveClient = false;

    // The form.
    QHash<QString, Field> m_fields;
    QComboBox *m_mode;
    QLineEdit *m_key;
    QByteArray m_keyBytes; // the key as given to setKey, shown escaped in m_key
    QComboBox *m_algo;
    QLineEdit *m_limit, *m_window, *m_cost, *m_requests, *m_duration, *m_rate;
    QCheckBox *m_fast;
    QSpinBox *m_connections, *m_pipeline;
    QLabel *m_policy;
    QLabel *m_formNote;
    QLabel *m_mismatch; // limits of the form's own that are not those in force at the key

    // Limits of the policy (or override) that apply to the key in m_key, read on the side.
    QTimer m_policyDelay;
    QByteArray m_policyKey;
    bool m_policyKnown = false;
    std::optional<LimitSpec> m_policySpec;

    QPushButton *m_start, *m_cancel, *m_exportCsv, *m_exportPng;
    QLabel *m_why;
    QProgressBar *m_progress;
    QLabel *m_status;

    // The results.
    QStackedWidget *m_resultPages;
    TimelineChart *m_timeline;
    LatencyChart *m_latency;
    BoundaryChart *m_boundaryChart;
    QHash<QString, QLabel *> m_summaryValues;
    QLabel *m_boundaryHeadline;
    QLabel *m_boundaryDetails;

    // The run under way or last run.
    BurstRun *m_run = nullptr;
    bool m_preparing = false; // reading the key before a burst (and maybe asking)
    bool m_startWhenReady = false;
    bool m_keyTouched = false; // the key field held something once
    bool m_wasBusy = false;
    QPointer<QMessageBox> m_confirm;
    std::optional<BurstConfig> m_config;
    std::optional<LimitSpec> m_boundarySpec;
    std::vector<BurstSlice> m_slices;
    std::vector<QPointF> m_remaining; // (µs since the start, remaining)
    BurstSnapshot m_live;
    QElapsedTimer m_runClock;
    qint64 m_engineOffsetUs = -1; // the engine's start on m_runClock (connections set up first)
    bool m_peekPending = false;
    QElapsedTimer m_sinceRedraw;
    QTimer m_redrawLater;
    std::optional<BurstSummary> m_summary;
    std::vector<BoundaryRun> m_boundary;
    int m_auditEntries = 0;
};

} // namespace ratescope::ui
