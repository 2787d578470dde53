// The console's reset: previews the keys (a snapshot of a pattern, or exact keys) with the
// state they will lose, asks for the count to be typed above 10 keys, deletes exactly the
// previewed keys in batches with progress and Cancel, and says what was deleted. Built on
// core's Resetter; leaves the same one audit entry as `ratescope-cli reset`.
#pragma once

#include "redisclient.h"
#include "resetqueries.h"

#include <QDialog>

#include <functional>
#include <memory>
#include <vector>

class QCheckBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTimer;
class QTreeView;

namespace ratescope::ui {

class ResetPreviewModel;

// Previews, confirms and runs a reset of limiter keys. Opened with open(), never exec().
class ResetDialog : public QDialog {
    Q_OBJECT
public:
    // What to reset: exact keys (one key, a selection) or a group (a SCAN MATCH pattern such as "api:trial:*").
    struct Target {
        QList<QByteArray> keys;
        QByteArray pattern;
    };
    // Above this many keys the operator types the count to confirm.
    static constexpr int kTypedConfirmationAbove = 10;
    // The preview reads the state of this many keys at most (a batch at a time).
    static constexpr int kDetailedRows = 2000;

    enum class Stage {
        Planning, // finding the keys (SCAN for a pattern)
        Preview,  // the keys are listed; waiting for the operator
        Running,  // deleting, a batch at a time
        Done,     // the summary (also after a refusal or a failure)
    };
    Q_ENUM(Stage)

    // What a reset came to.
    struct Result {
        qint64 planned = 0;   // keys previewed
        qint64 processed = 0; // keys of the batches the server answered
        qint64 deleted = 0;   // of those, deleted (the others had already gone)
        bool cancelled = false;
        bool interrupted = false; // a batch got no answer: its keys may or may not be gone
        bool notSent = false;     // the connection was down: nothing was sent
        bool audited = false;     // the audit entry was written
        QString problem;          // why it stopped or was refused, explained
        QString auditProblem;     // why the audit entry could not be written
    };

    // ns: Ratescope's metadata prefix ("ratescope:"), whose keys are never offered.
    ResetDialog(RedisClient *client, const QByteArray &ns, const Target &target, QWidget *parent = nullptr);
    ~ResetDialog() override;

    // Who the audit entry names (the OS user when empty), as `ratescope-cli --operator`.
    void setOperatorName(const QString &name) { m_operator = name; }
    // Why (a ticket number or a sentence, as `ratescope-cli --reason`): carried by both audit
    // entries; when the namespace requires a reason, a reset without one is refused unsent.
    void setReason(const QString &reason); // prefills the dialog's reason field
    QString reason() const { return m_reason; }

    // For tests: the keys previewed (exactly what Reset deletes), and the figures of the result.
    QList<QByteArray> previewedKeys() const;
    Stage stage() const { return m_stage; }
    const Result &result() const { return m_result; }
    qint64 metadataLeftOut() const { return m_metadataLeftOut; }
    // For tests: the matching keys that are no limiter, held back unless the box is ticked.
    QCheckBox *includeNonLimitersBox() const { return m_includeOthers; }
    QList<QByteArray> heldBackKeys() const;
    QString heading() const;
    ResetPreviewModel *previewModel() const { return m_model; }
    // For tests: called on the worker thread after each batch, before the Cancel flag is read,
    // so a test can press Cancel at a known point.
    void setAfterBatchHook(std::function<void(qint64 processed)> hook) { m_afterBatchHook = std::move(hook); }

public slots:
    void reject() override; // while deleting: Cancel (stop after the batch under way)

signals:
    void finished(qint64 deleted); // after a reset ran, stopped part way included (not when the dialog is cancelled before Reset)
    void stageChanged(ratescope::ui::ResetDialog::Stage stage);

private:

    void buildUi();
    void setStage(Stage stage);
    void startPlanning();
    void showPreview(const ResetPlan &plan);
    // The pattern's limiters, and its other keys too when the box says so.
    ResetPlan chosenPlan() const;
    void readDetails(qsizetype first);
    void startReset();
    void showResult();
    void updateProgress();
    void updateConfirmation();
    bool confirmationGiven() const;
    QString targetText() const;

    RedisClient *m_client;
    QByteArray m_ns;
    Target m_target;
    QString m_operator;
    QString m_reason;
    QLineEdit *m_reasonEdit = nullptr;
    Stage m_stage = Stage::Planning;
    ResetPlan m_plan;
    ResetPlan m_found; // what planning found; a pattern's keys that are no limiter held back
    qint64 m_metadataLeftOut = 0;
    Result m_result;
    std::vector<Policy> m_policies;
    bool m_policiesRead = false;
    std::shared_ptr<ResetProgress> m_shared;
    std::function<void(qint64)> m_afterBatchHook;

    ResetPreviewModel *m_model = nullptr;
    QCheckBox *m_includeOthers = nullptr;
    QLabel *m_heading = nullptr;
    QLabel *m_subheading = nullptr;
    QProgressBar *m_progress = nullptr;
    QLabel *m_progressText = nullptr;
    QTreeView *m_view = nullptr;
    QWidget *m_placeholder = nullptr;
    QLabel *m_notes = nullptr;
    QLabel *m_confirmLabel = nullptr;
    QLineEdit *m_confirm = nullptr;
    QLabel *m_readOnlyNote = nullptr;
    QLabel *m_summary = nullptr;
    QPushButton *m_cancelButton = nullptr;
    QPushButton *m_resetButton = nullptr;
    QPushButton *m_closeButton = nullptr;
    QTimer *m_poll = nullptr;
};

} // namespace ratescope::ui
