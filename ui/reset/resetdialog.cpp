#include "resetdialog.h"

#include "displayformat.h"
#include "admin/audit.h"
#include "base/errors.h"
#include "keys/keydetails.h"
#include "base/keytext.h"
#include "resetpreviewmodel.h"
#include "resetqueries.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>

#include <atomic>

namespace ratescope::ui {

namespace {

constexpr int kDetailBatch = 200;
constexpr int kPollMs = 100;

QString keysText(qint64 n)
{
    return n == 1 ? QStringLiteral("1 key") : QStringLiteral("%1 keys").arg(formatCount(n));
}

} // namespace

void ResetDialog::setReason(const QString &reason)
{
    m_reason = reason;
    m_reasonEdit->setText(reason);
}

ResetDialog::ResetDialog(RedisClient *client, const QByteArray &ns, const Target &target, QWidget *parent)
    : QDialog(parent)
    , m_client(client)
    , m_ns(ns)
    , m_target(target)
    , m_shared(std::make_shared<ResetProgress>())
{
    setWindowTitle(QStringLiteral("Reset limiter keys"));
    buildUi();
    connect(m_client, &RedisClient::readOnlyChanged, this, &ResetDialog::updateConfirmation);
    startPlanning();
}

ResetDialog::~ResetDialog()
{
    // Whatever is under way stops at the next page or batch; a reset already started still
    // leaves its audit entry (written on the worker).
    m_shared->stop = true;
    m_shared->noMoreDetails = true;
}

void ResetDialog::buildUi()
{
    auto *layout = new QVBoxLayout(this);
    m_heading = new QLabel(this);
    m_heading->setTextFormat(Qt::PlainText);
    QFont big = m_heading->font();
    big.setPointSizeF(big.pointSizeF() * 1.35);
    big.setBold(true);
    m_heading->setFont(big);
    m_heading->setObjectName(QStringLiteral("heading"));
    layout->addWidget(m_heading);

    m_subheading = new QLabel(this);
    m_subheading->setTextFormat(Qt::PlainText);
    m_subheading->setWordWrap(true);
    m_subheading->setObjectName(QStringLiteral("subheading"));
    layout->addWidget(m_subheading);

    m_model = new ResetPreviewModel(this);
    m_view = new QTreeView(this);
    m_view->setObjectName(QStringLiteral("preview"));
    m_view->setModel(m_model);
    m_view->setRootIsDecorated(false);
    m_view->setUniformRowHeights(true);
    m_view->setAlternatingRowColors(true);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setTextElideMode(Qt::ElideMiddle);
    QHeaderView *header = m_view->header();
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->setStretchLastSection(true);
    header->setMinimumSectionSize(50);
    header->resizeSection(ResetPreviewModel::KeyColumn, 330);
    header->resizeSection(ResetPreviewModel::OutcomeColumn, 100);
    header->setSectionHidden(ResetPreviewModel::OutcomeColumn, true); // until there is a result
    header->resizeSection(ResetPreviewModel::TypeColumn, 60);
    header->resizeSection(ResetPreviewModel::AlgorithmColumn, 170);
    header->resizeSection(ResetPreviewModel::UsageColumn, 100);
    layout->addWidget(m_view, 1);
    // Holds the room of the list while there is none yet, so the progress sits where it will stay.
    m_placeholder = new QWidget(this);
    m_placeholder->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Expanding);
    layout->addWidget(m_placeholder, 1);

    m_notes = new QLabel(this);
    m_notes->setTextFormat(Qt::PlainText);
    m_notes->setWordWrap(true);
    m_notes->setObjectName(QStringLiteral("notes"));
    layout->addWidget(m_notes);

    // A pattern resets limiters only; what else it matches (an application's strings, hashes,
    // sets...) goes only when asked for here.
    m_includeOthers = new QCheckBox(this);
    m_includeOthers->setObjectName(QStringLiteral("includeNonLimiters"));
    m_includeOthers->setChecked(false);
    m_includeOthers->setVisible(false);
    connect(m_includeOthers, &QCheckBox::toggled, this, [this] {
        if (m_stage == Stage::Preview)
            showPreview(chosenPlan());
    });
    layout->addWidget(m_includeOthers);

    m_progressText = new QLabel(this);
    m_progressText->setTextFormat(Qt::PlainText);
    m_progressText->setObjectName(QStringLiteral("progressText"));
    layout->addWidget(m_progressText);
    m_progress = new QProgressBar(this);
    m_progress->setTextVisible(false);
    layout->addWidget(m_progress);

    m_summary = new QLabel(this);
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setWordWrap(true);
    m_summary->setObjectName(QStringLiteral("summary"));
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);

    m_readOnlyNote = new QLabel(this);
    m_readOnlyNote->setTextFormat(Qt::PlainText);
    m_readOnlyNote->setWordWrap(true);
    m_readOnlyNote->setObjectName(QStringLiteral("readOnlyNote"));
    m_readOnlyNote->setText(
        QStringLiteral("Read-only connection: resets are refused and nothing is sent. Lift the read-only lock to reset."));
    layout->addWidget(m_readOnlyNote);

    // Why, for the audit: a ticket number or a sentence (prefilled by the Lookup page; required
    // where the namespace says so, which the reset itself then checks).
    auto *why = new QHBoxLayout;
    auto *reasonLabel = new QLabel(QStringLiteral("Rea&son:"), this);
    m_reasonEdit = new QLineEdit(this);
    m_reasonEdit->setObjectName(QStringLiteral("reason"));
    m_reasonEdit->setPlaceholderText(QStringLiteral("ticket or sentence, recorded in the audit (optional unless required)"));
    m_reasonEdit->setMaxLength(kMaxReasonLength);
    m_reasonEdit->setClearButtonEnabled(true);
    reasonLabel->setBuddy(m_reasonEdit);
    why->addWidget(reasonLabel);
    why->addWidget(m_reasonEdit, 1);
    layout->addLayout(why);

    auto *buttons = new QHBoxLayout;
    m_confirmLabel = new QLabel(this);
    m_confirmLabel->setTextFormat(Qt::PlainText);
    m_confirm = new QLineEdit(this);
    m_confirm->setObjectName(QStringLiteral("confirmCount"));
    m_confirm->setMaximumWidth(110);
    m_confirm->setClearButtonEnabled(false);
    m_confirmLabel->setBuddy(m_confirm);
    buttons->addWidget(m_confirmLabel);
    buttons->addWidget(m_confirm);
    buttons->addStretch(1);
    m_cancelButton = new QPushButton(QStringLiteral("Cancel"), this);
    m_cancelButton->setObjectName(QStringLiteral("cancelButton"));
    m_cancelButton->setAutoDefault(false);
    m_resetButton = new QPushButton(this);
    m_resetButton->setObjectName(QStringLiteral("resetButton"));
    // Never the default button: Enter in the count field must not delete anything by itself.
    m_resetButton->setAutoDefault(false);
    m_closeButton = new QPushButton(QStringLiteral("Close"), this);
    m_closeButton->setObjectName(QStringLiteral("closeButton"));
    buttons->addWidget(m_cancelButton);
    buttons->addWidget(m_resetButton);
    buttons->addWidget(m_closeButton);
    layout->addLayout(buttons);

    connect(m_cancelButton, &QPushButton::clicked, this, &ResetDialog::reject);
    connect(m_resetButton, &QPushButton::clicked, this, &ResetDialog::startReset);
    connect(m_closeButton, &QPushButton::clicked, this, &QDialog::accept);
    connect(m_confirm, &QLineEdit::textChanged, this, &ResetDialog::updateConfirmation);

    m_poll = new QTimer(this);
    m_poll->setInterval(kPollMs);
    connect(m_poll, &QTimer::timeout, this, &ResetDialog::updateProgress);

    resize(820, 560);
}

QList<QByteArray> ResetDialog::previewedKeys() const
{
    return m_stage == Stage::Planning ? QList<QByteArray>() : m_plan.keys;
}

QString ResetDialog::heading() const
{
    return m_heading->text();
}

QString ResetDialog::targetText() const
{
    if (!m_target.pattern.isEmpty())
        return QStringLiteral("keys matching %1").arg(displayKey(m_target.pattern));
    if (m_target.keys.size() == 1)
        return displayKey(m_target.keys.front());
    return QStringLiteral("%1 selected keys").arg(formatCount(m_target.keys.size()));
}

void ResetDialog::setStage(Stage stage)
{
    m_stage = stage;
    const bool planning = stage == Stage::Planning;
    const bool running = stage == Stage::Running;
    const bool done = stage == Stage::Done;
    m_progress->setVisible(planning || running);
    m_progressText->setVisible(planning || running);
    m_view->setVisible(!planning);
    m_placeholder->setVisible(planning);
    m_summary->setVisible(done);
    m_cancelButton->setVisible(!done);
    m_resetButton->setVisible(!done && !planning);
    m_includeOthers->setEnabled(stage == Stage::Preview);
    m_closeButton->setVisible(done);
    if (planning || running) {
        m_poll->start();
        updateProgress();
    } else
        m_poll->stop();
    if (done) {
        m_closeButton->setDefault(true);
        m_closeButton->setFocus();
    }
    updateConfirmation();
    emit stageChanged(stage);
}

void ResetDialog::startPlanning()
{
    m_heading->setText(m_target.pattern.isEmpty() ? QStringLiteral("Reading the keys to reset")
                                                  : QStringLiteral("Finding %1").arg(targetText()));
    m_subheading->setText(m_target.pattern.isEmpty()
                              ? targetText()
                              : QStringLiteral("A snapshot is taken with SCAN; nothing is deleted before you confirm."));
    m_progress->setRange(0, 0);
    m_progressText->setText(QStringLiteral("Starting…"));
    setStage(Stage::Planning);

    QByteArrayList exact;
    for (const QByteArray &k : m_target.keys)
        if (!k.isEmpty())
            exact << k;
    if (m_target.pattern.isEmpty() && exact.isEmpty()) {
        ResetPlan none;
        showPreview(none);
        return;
    }

    const MetadataNamespace ns(m_ns);
    const QByteArray pattern = m_target.pattern;
    std::shared_ptr<ResetProgress> shared = m_shared;
    m_client->request(
        this,
        [ns, pattern, exact, shared](Connection &c) { return planReset(c, ns, pattern, exact, *shared); },
        [this](const Outcome<PlanOutcome> &o) {
            if (!o.ok()) {
                m_result.problem = o.failure().message;
                m_heading->setText(QStringLiteral("The keys could not be read"));
                m_summary->setText(QStringLiteral("%1\nNothing was deleted.").arg(m_result.problem));
                m_plan = {};
                m_model->setKeys({});
                setStage(Stage::Done);
                return;
            }
            if (!o.value().plan.complete)
                return; // cancelled while scanning: the dialog has closed already
            m_metadataLeftOut = o.value().metadataLeftOut;
            m_found = o.value().plan;
            const qsizetype held = qsizetype(m_found.heldBack.size());
            m_includeOthers->setText(held == 1 ? QStringLiteral("Also delete the 1 matching key that is no limiter")
                                               : QStringLiteral("Also delete the %1 matching keys that are no limiter").arg(formatCount(held)));
            m_includeOthers->setVisible(held > 0);
            showPreview(chosenPlan());
        });
}

ResetPlan ResetDialog::chosenPlan() const
{
    ResetPlan plan = m_found;
    if (m_includeOthers->isChecked()) {
        Resetter::includeHeldBack(plan);
        sortPlanNaturally(plan);
    }
    return plan;
}

QList<QByteArray> ResetDialog::heldBackKeys() const
{
    QList<QByteArray> keys;
    for (const auto &[key, type] : m_found.heldBack)
        keys << key;
    return keys;
}

void ResetDialog::showPreview(const ResetPlan &plan)
{
    m_plan = plan;
    m_model->setKeys(plan.keys);
    const qint64 n = plan.keys.size();
    m_result = {};
    m_result.planned = n;
    m_heading->setText(n == 0 ? QStringLiteral("Nothing to reset") : QStringLiteral("Reset %1").arg(keysText(n)));
    if (n == 0 && m_metadataLeftOut > 0) {
        m_subheading->setText(
            QStringLiteral("Only Ratescope's own keys were found for %1, and those are never reset from here.").arg(targetText()));
    } else if (m_target.pattern.isEmpty()) {
        m_subheading->setText(
            n == 0 ? QStringLiteral("%1: no such key.").arg(targetText())
                   : QStringLiteral("%1. Limiters start again with their full quota; exactly these keys are deleted.").arg(targetText()));
    } else {
        m_subheading->setText(n == 0 ? (plan.heldBack.empty() ? QStringLiteral("No key matches %1.")
                                                              : QStringLiteral("No limiter matches %1; what it matches is held back below."))
                                           .arg(displayKey(m_target.pattern))
                                     : QStringLiteral("The %1 matching %2 when the scan ran. Exactly these keys are deleted; keys created "
                                                      "since are not touched. Limiters start again with their full quota.")
                                           .arg(keysText(n), displayKey(m_target.pattern)));
    }
    QStringList notes;
    if (m_metadataLeftOut > 0)
        notes << QStringLiteral(
                     "Left out: %1 of Ratescope's own under %2 (policies, overrides, audit log); they are never offered for reset.")
                     .arg(keysText(m_metadataLeftOut), displayKey(m_ns));
    if (!plan.heldBack.empty()) {
        QStringList named;
        for (size_t i = 0; i < std::min<size_t>(plan.heldBack.size(), 5); ++i)
            named << QStringLiteral("%1 (%2)").arg(displayKey(plan.heldBack[i].first), QString::fromUtf8(plan.heldBack[i].second));
        if (plan.heldBack.size() > 5)
            named << QStringLiteral("%1 more").arg(formatCount(qint64(plan.heldBack.size() - 5)));
        notes << QStringLiteral("Held back: %1 that %2 no limiter: %3. Tick the box below to delete them too.")
                     .arg(keysText(qint64(plan.heldBack.size())), plan.heldBack.size() == 1 ? QStringLiteral("is") : QStringLiteral("are"),
                          named.join(QStringLiteral(", ")));
    }
    if (n > kDetailedRows)
        notes << QStringLiteral("The state is shown for the first %1 keys.").arg(formatCount(kDetailedRows));
    m_notes->setText(notes.join(QLatin1Char('\n')));
    m_notes->setVisible(!notes.isEmpty());
    m_resetButton->setText(n == 0 ? QStringLiteral("Reset") : QStringLiteral("Reset %1").arg(keysText(n)));
    m_confirm->clear();
    m_confirmLabel->setText(QStringLiteral("Type %1 to confirm:").arg(n));
    setStage(Stage::Preview);
    if (n > kTypedConfirmationAbove)
        m_confirm->setFocus();
    else
        m_cancelButton->setFocus();
    if (n > 0)
        readDetails(0);
}

void ResetDialog::readDetails(qsizetype first)
{
    const qsizetype end = std::min<qsizetype>({m_plan.keys.size(), first + kDetailBatch, kDetailedRows});
    if (first >= end || m_shared->noMoreDetails)
        return;
    const std::vector<QByteArray> keys(m_plan.keys.begin() + first, m_plan.keys.begin() + end);
    const bool needPolicies = !m_policiesRead;
    const std::vector<Policy> policies = m_policies;
    std::shared_ptr<ResetProgress> shared = m_shared;
    const MetadataNamespace ns(m_ns);
    // A batch at a time, so other views' requests get their turn on the worker in between.
    m_client->request(
        this,
        [keys, needPolicies, policies, shared, ns](Connection &c) { return readResetDetails(c, ns, keys, needPolicies, policies, *shared); },
        [this, first](const Outcome<DetailsOutcome> &o) {
            if (!o.ok() || m_stage != Stage::Preview || o.value().details.empty())
                return; // the state is a courtesy: the preview stands without it
            if (o.value().policiesRead) {
                m_policies = o.value().policies;
                m_policiesRead = true;
            }
            m_model->setDetails(first, o.value().details);
            readDetails(first + qsizetype(o.value().details.size()));
        });
}

bool ResetDialog::confirmationGiven() const
{
    const qint64 n = m_plan.keys.size();
    if (n <= kTypedConfirmationAbove)
        return true;
    // Digits only, so "40,000" and "40 000" count as typed; anything else must match exactly.
    QString typed = m_confirm->text().trimmed();
    typed.remove(QRegularExpression(QStringLiteral("(?<=\\d)[,.' \\x{00a0}\\x{202f}](?=\\d{3})")));
    return typed == QString::number(n);
}

void ResetDialog::updateConfirmation()
{
    const bool preview = m_stage == Stage::Preview;
    const qint64 n = m_plan.keys.size();
    const bool typed = preview && n > kTypedConfirmationAbove;
    m_confirmLabel->setVisible(typed);
    m_confirm->setVisible(typed);
    const bool readOnly = m_client->isReadOnly();
    m_readOnlyNote->setVisible(readOnly && (preview || m_stage == Stage::Planning));
    m_resetButton->setEnabled(preview && n > 0 && !readOnly && confirmationGiven());
    if (readOnly)
        m_resetButton->setToolTip(QStringLiteral("The connection is read-only: resets are refused and nothing is sent. Lift the read-only "
                                                 "lock to reset."));
    else if (preview && n > 0 && !confirmationGiven())
        m_resetButton->setToolTip(QStringLiteral("Type %1 (the number of keys) to confirm.").arg(n));
    else
        m_resetButton->setToolTip(QString());
}

void ResetDialog::startReset()
{
    // The button is disabled in these cases; checked again so that nothing is ever sent anyway.
    if (m_stage != Stage::Preview || m_plan.keys.isEmpty() || m_client->isReadOnly() || !confirmationGiven())
        return;
    const QString typedReason = m_reasonEdit->text().trimmed();
    try {
        requireValidReason(typedReason, QStringLiteral("The reason"));
    } catch (const UsageError &e) {
        m_reasonEdit->setFocus();
        m_reasonEdit->setToolTip(e.message());
        m_progressText->setText(e.message());
        m_progressText->show();
        return;
    }
    m_reason = typedReason;
    m_reasonEdit->setReadOnly(true);
    m_shared->noMoreDetails = true;
    m_shared->stop = false;
    m_shared->total = m_plan.keys.size();
    m_shared->done = 0;
    m_shared->found = 0;
    m_heading->setText(QStringLiteral("Resetting %1").arg(keysText(m_plan.keys.size())));
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progressText->setText(QStringLiteral("Deleting…"));
    m_cancelButton->setEnabled(true);
    setStage(Stage::Running);

    const MetadataNamespace ns(m_ns);
    const ResetPlan plan = m_plan;
    const QString op = m_operator;
    const QString reason = m_reason;
    std::shared_ptr<ResetProgress> shared = m_shared;
    std::function<void(qint64)> hook = m_afterBatchHook;
    m_client->request(
        this,
        [ns, plan, op, shared, hook, reason](Connection &c) { return runReset(c, ns, plan, op, *shared, hook, reason); },
        [this](const Outcome<RunOutcome> &o) {
            if (!o.ok()) {
                // Not sent at all (the connection was down): nothing was deleted.
                m_result.problem = o.failure().message;
                m_result.notSent = true;
            } else {
                const RunOutcome &r = o.value();
                m_result.processed = r.run.processed;
                m_result.deleted = r.run.deleted;
                m_result.cancelled = r.run.stopped;
                m_result.interrupted = r.interrupted;
                m_result.audited = r.audited;
                m_result.problem = r.problem;
                m_result.auditProblem = r.auditProblem;
            }
            showResult();
            if (o.ok() && (o.value().run.processed > 0 || o.value().interrupted))
                emit finished(m_result.deleted);
        });
}

void ResetDialog::showResult()
{
    const Result &r = m_result;
    const QString of = QStringLiteral("%1 of %2").arg(formatCount(r.processed), formatCount(r.planned));
    QStringList lines;
    if (r.cancelled) {
        m_heading->setText(QStringLiteral("Cancelled after %1: %2 deleted").arg(of, formatCount(r.deleted)));
        lines << QStringLiteral("The other %1 were left as they are.").arg(keysText(r.planned - r.processed));
    } else if (r.interrupted) {
        m_heading->setText(QStringLiteral("Interrupted after %1: %2 deleted").arg(of, formatCount(r.deleted)));
        lines << QStringLiteral("The connection failed: %1").arg(r.problem)
              << QStringLiteral("The batch under way (up to %1 keys) may or may not have been deleted; it is not sent again.")
                     .arg(Resetter::kBatchSize);
    } else if (r.notSent) {
        m_heading->setText(QStringLiteral("Reset not sent: nothing deleted"));
        lines << r.problem;
    } else if (!r.problem.isEmpty()) {
        m_heading->setText(r.processed == 0 ? QStringLiteral("Reset refused: nothing deleted")
                                            : QStringLiteral("Stopped after %1: %2 deleted").arg(of, formatCount(r.deleted)));
        lines << r.problem;
    } else {
        m_heading->setText(QStringLiteral("Deleted %1 of %2").arg(formatCount(r.deleted), keysText(r.planned)));
        if (r.deleted < r.processed)
            lines << QStringLiteral("%1 of the previewed keys had already gone (expired, or deleted by someone else).")
                         .arg(formatCount(r.processed - r.deleted));
        lines << QStringLiteral("Limiters start again with their full quota.");
    }
    if (r.audited)
        lines << QStringLiteral("Recorded in the audit log.");
    else if (!r.auditProblem.isEmpty())
        lines << QStringLiteral("The audit entry could not be written: %1").arg(r.auditProblem);
    m_summary->setText(lines.join(QLatin1Char('\n')));
    m_subheading->setText(QStringLiteral("Reset of %1.").arg(targetText()));
    m_model->setStateExpected(false);
    if (!r.notSent) {
        const qint64 unknown = r.interrupted ? std::min<qint64>(Resetter::kBatchSize, r.planned - r.processed) : 0;
        m_model->setOutcome(r.processed, unknown);
        m_view->header()->setSectionHidden(ResetPreviewModel::OutcomeColumn, false);
        // The Result column takes its room from the key column, so nothing needs scrolling sideways.
        QHeaderView *header = m_view->header();
        header->resizeSection(ResetPreviewModel::AlgorithmColumn, 150);
        int others = 0;
        for (int c = ResetPreviewModel::OutcomeColumn; c < ResetPreviewModel::TtlColumn; ++c)
            others += header->sectionSize(c);
        header->resizeSection(ResetPreviewModel::KeyColumn, std::max(160, m_view->viewport()->width() - others - 90));
        header->setStretchLastSection(false); // the stretched TTL column gives back its room
        header->resizeSection(ResetPreviewModel::TtlColumn, 90);
        header->setStretchLastSection(true);
    }
    m_notes->setVisible(m_metadataLeftOut > 0);
    if (m_metadataLeftOut > 0)
        m_notes->setText(
            QStringLiteral("Left out: %1 of Ratescope's own under %2 (policies, overrides, audit log); they are never offered for reset.")
                .arg(keysText(m_metadataLeftOut), displayKey(m_ns)));
    setStage(Stage::Done);
}

void ResetDialog::updateProgress()
{
    const qint64 total = m_shared->total.load();
    const qint64 done = m_shared->done.load();
    const qint64 found = m_shared->found.load();
    if (m_stage == Stage::Planning) {
        if (m_target.pattern.isEmpty()) {
            m_progressText->setText(QStringLiteral("Reading %1…").arg(targetText()));
            return;
        }
        if (done == 0) {
            m_progressText->setText(QStringLiteral("Scanning…"));
        } else if (total > 0) {
            m_progress->setRange(0, 1000);
            m_progress->setValue(int(std::min<qint64>(1000, done * 1000 / total)));
            m_progressText->setText(
                QStringLiteral("Scanned about %1 of %2 keys, %3 match").arg(formatCount(done), formatCount(total), formatCount(found)));
        } else {
            m_progressText->setText(QStringLiteral("Scanned about %1 keys, %2 match").arg(formatCount(done), formatCount(found)));
        }
    } else if (m_stage == Stage::Running) {
        m_progress->setValue(total > 0 ? int(done * 1000 / total) : 0);
        m_progressText->setText(m_shared->stop ? QStringLiteral("Stopping after the batch under way… %1 of %2 keys done, %3 deleted")
                                                     .arg(formatCount(done), formatCount(total), formatCount(found))
                                               : QStringLiteral("Deleting… %1 of %2 keys done, %3 deleted")
                                                     .arg(formatCount(done), formatCount(total), formatCount(found)));
    }
}

void ResetDialog::reject()
{
    switch (m_stage) {
    case Stage::Running:
        // The deletion under way is not abandoned halfway: it stops between batches and says how far it got.
        m_shared->stop = true;
        m_cancelButton->setEnabled(false);
        updateProgress();
        return;
    case Stage::Planning:
        m_shared->stop = true;
        break;
    case Stage::Preview:
    case Stage::Done:
        break;
    }
    m_shared->noMoreDetails = true;
    QDialog::reject();
}

} // namespace ratescope::ui
