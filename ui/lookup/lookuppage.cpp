#include "lookuppage.h"

#include "admin/audit.h"
#include "base/duration.h"
#include "base/errors.h"
#include "base/keytext.h"
#include "fitwidth.h"
#include "displayformat.h"
#include "keyactions.h"
#include "limiters/algorithm.h"
#include "lookupmodel.h"
#include "lookupqueries.h"
#include "refusal.h"
#include "usagebardelegate.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSpinBox>
#include <QStyle>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

namespace ratescope::ui {

namespace {

// Words cut at their end ("admits: 34 of 100 in the la…"), where a key is cut in its middle.
class ElideRightDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        option->textElideMode = Qt::ElideRight;
    }
};

const QColor kProblem(0xd3, 0x2f, 0x2f);
const QColor kFine(0x2e, 0x7d, 0x32);

QLabel *plainLabel(QWidget *parent)
{
    auto *l = new QLabel(parent);
    l->setTextFormat(Qt::PlainText); // keys and reasons come from people and servers
    return l;
}

QString limitersText(qsizetype n)
{
    return n == 1 ? QStringLiteral("1 limiter") : QStringLiteral("%1 limiters").arg(formatCount(n));
}

QString timeText(const QDateTime &t)
{
    return t.toLocalTime().toString(QStringLiteral("HH:mm:ss"));
}

// The key the key view opens for a row: a group's base (the view reads the group whole), a
// counter's current window, the key itself otherwise.
QByteArray keyToOpen(const LookupRow &row)
{
    if (row.kind.format == KeyFormat::CounterWindow && !row.kind.base.isEmpty())
        return row.kind.base + ':' + QByteArray::number(row.kind.windowId);
    return row.key;
}

// Asks for a temporary limit: the limit, an optional window (the policy's when empty) and how
// long it holds.
class GrantDialog : public QDialog {
public:
    GrantDialog(const QString &what, qint64 suggested, const QString &reason, QWidget *parent)
        : QDialog(parent)
    {
        setWindowTitle(QStringLiteral("Grant a temporary limit"));
        setObjectName(QStringLiteral("grantDialog"));
        auto *intro = plainLabel(this);
        intro->setWordWrap(true);
        intro->setText(QStringLiteral("An override for %1: the limit replaces the policy's until it expires by itself. "
                                      "Limiters no policy covers are skipped (an override would change nothing).")
                           .arg(what));
        m_limit = new QSpinBox(this);
        m_limit->setRange(1, 1000000000);
        m_limit->setGroupSeparatorShown(true);
        m_limit->setValue(int(std::clamp<qint64>(suggested, 1, 1000000000)));
        m_window = new QLineEdit(this);
        m_window->setPlaceholderText(QStringLiteral("the policy's"));
        m_window->setToolTip(QStringLiteral("A window of its own, e.g. 10s or 1m; empty: the policy's"));
        m_for = new QComboBox(this);
        m_for->setEditable(true);
        m_for->addItems({QStringLiteral("30m"), QStringLiteral("1h"), QStringLiteral("2h"), QStringLiteral("8h"), QStringLiteral("24h")});
        m_for->setCurrentIndex(1);
        m_for->setToolTip(QStringLiteral("How long the limit holds, e.g. 2h or 1d"));
        auto *why = plainLabel(this);
        why->setObjectName(QStringLiteral("grantReason"));
        why->setWordWrap(true);
        why->setText(reason.isEmpty() ? QStringLiteral("No reason given: the audit entries will have none.")
                                      : QStringLiteral("Reason recorded in the audit: %1").arg(reason));
        why->setForegroundRole(QPalette::PlaceholderText);
        m_problem = plainLabel(this);
        m_problem->setWordWrap(true);
        QPalette pal = m_problem->palette();
        pal.setColor(QPalette::WindowText, kProblem);
        m_problem->setPalette(pal);
        m_problem->hide();
        auto *form = new QFormLayout;
        form->addRow(QStringLiteral("Limit"), m_limit);
        form->addRow(QStringLiteral("Window"), m_window);
        form->addRow(QStringLiteral("For"), m_for);
        auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
        buttons->button(QDialogButtonBox::Ok)->setText(QStringLiteral("Grant"));
        connect(buttons, &QDialogButtonBox::accepted, this, [this] {
            if (parsed())
                accept();
        });
        connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
        auto *layout = new QVBoxLayout(this);
        layout->addWidget(intro);
        layout->addLayout(form);
        layout->addWidget(why);
        layout->addWidget(m_problem);
        layout->addWidget(buttons);
        resize(420, sizeHint().height());
    }

    qint64 limit() const { return m_limit->value(); }
    qint64 windowUs() const { return m_windowUs; }
    qint64 forUs() const { return m_forUs; }

private:
    bool parsed()
    {
        try {
            m_windowUs = m_window->text().trimmed().isEmpty() ? 0 : parseDurationUs(m_window->text().trimmed());
            if (m_windowUs && (m_windowUs < kMinWindowUs || m_windowUs > kMaxWindowUs))
                throw UsageError(QStringLiteral("the window must be between %1 and %2")
                                     .arg(formatDurationUs(kMinWindowUs), formatDurationUs(kMaxWindowUs)));
            m_forUs = parseDurationUs(m_for->currentText().trimmed());
            if (m_forUs <= 0)
                throw UsageError(QStringLiteral("give how long the limit holds, e.g. 2h"));
        } catch (const Error &e) {
            m_problem->setText(e.message());
            m_problem->show();
            return false;
        }
        return true;
    }

    QSpinBox *m_limit;
    QLineEdit *m_window;
    QComboBox *m_for;
    QLabel *m_problem;
    qint64 m_windowUs = 0;
    qint64 m_forUs = 0;
};

} // namespace

LookupPage::LookupPage(QWidget *parent)
    : QWidget(parent)
{
    m_requests = new QObject(this);
    m_idEdit = new QLineEdit(this);
    m_idEdit->setObjectName(QStringLiteral("identifier"));
    m_idEdit->setPlaceholderText(QStringLiteral("customer id, e.g. acme"));
    keepPlaceholdersWhole({m_idEdit});
    m_idEdit->setClearButtonEnabled(true);
    m_idEdit->setToolTip(QStringLiteral("Every limiter whose key holds this as a whole segment: acme finds api:acme, "
                                        "login:acme:/search, rl:{acme}:3, rlflx:acme, not api:acmecorp (Ctrl+K)"));
    m_lookUp = new QPushButton(QStringLiteral("Look up"), this);
    m_lookUp->setDefault(true);
    m_reason = new QLineEdit(this);
    m_reason->setObjectName(QStringLiteral("reason"));
    m_reason->setClearButtonEnabled(true);
    m_reason->setMaxLength(kMaxReasonLength);
    m_reasonLabel = new QLabel(QStringLiteral("Reason"), this);
    m_reasonLabel->setBuddy(m_reason);
    m_copy = new QPushButton(QStringLiteral("Copy summary for the ticket"), this);
    m_copy->setToolTip(QStringLiteral("Plain text: the identifier, the time, each limiter's state and what was done here"));
    auto *idLabel = new QLabel(QStringLiteral("Look up"), this);
    idLabel->setBuddy(m_idEdit);
    auto *top = new QHBoxLayout;
    top->setSpacing(6);
    top->addWidget(idLabel);
    top->addWidget(m_idEdit, 2);
    top->addWidget(m_lookUp);
    top->addSpacing(8);
    top->addWidget(m_reasonLabel);
    top->addWidget(m_reason, 3);

    m_icon = new QLabel(this);
    m_icon->setFixedSize(24, 24);
    m_headline = plainLabel(this);
    m_headline->setObjectName(QStringLiteral("headline"));
    m_headline->setWordWrap(true);
    QFont big = m_headline->font();
    big.setBold(true);
    big.setPointSizeF(big.pointSizeF() * 1.25);
    m_headline->setFont(big);
    auto *headRow = new QHBoxLayout;
    headRow->setSpacing(8);
    headRow->addWidget(m_icon, 0, Qt::AlignTop);
    headRow->addWidget(m_headline, 1);
    headRow->addWidget(m_copy, 0, Qt::AlignTop);
    m_answer = plainLabel(this);
    m_answer->setObjectName(QStringLiteral("answer"));
    m_answer->setWordWrap(true);
    m_answer->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_answer->hide();
    m_status = plainLabel(this);
    m_status->setObjectName(QStringLiteral("status"));
    m_status->setWordWrap(true);
    m_status->setForegroundRole(QPalette::PlaceholderText);
    m_message = plainLabel(this);
    m_message->setObjectName(QStringLiteral("message"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->hide();

    m_model = new LookupModel(this);
    m_view = new QTableView(this);
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    m_view->setTextElideMode(Qt::ElideMiddle);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 10);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_view->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff); // the columns fit the width instead
    // The columns follow the view's width (its viewport is resized after this widget), and the
    // limiters listed; a width dragged by hand is kept from then on.
    fitOnResize(m_view, [this] { fitColumns(); });
    connect(m_model, &QAbstractItemModel::modelReset, this, &LookupPage::fitColumns);
    connect(m_model, &QAbstractItemModel::dataChanged, this, &LookupPage::fitColumns); // a countdown grows
    connect(m_view->horizontalHeader(), &QHeaderView::sectionResized, this, [this](int column, int, int size) {
        // Dragged: a mouse button is down (the header also resizes sections itself, to stretch
        // the last one or after a reset).
        if (!m_fitting && QGuiApplication::mouseButtons() != Qt::NoButton && column != LookupModel::Limiter &&
            column != LookupModel::Verdict)
            m_preferredWidth[column] = size;
    });
    m_view->setItemDelegateForColumn(LookupModel::Used, new UsageBarDelegate(LookupModel::FractionRole, m_view));
    m_view->setItemDelegateForColumn(LookupModel::Verdict, new ElideRightDelegate(m_view));
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_view, &QTableView::customContextMenuRequested, this, [this](const QPoint &pos) {
        const QModelIndex index = m_view->indexAt(pos);
        if (!index.isValid())
            return;
        // On a row outside the selection: that row alone, as file managers do.
        if (!m_view->selectionModel()->isRowSelected(index.row(), {}))
            m_view->selectionModel()->select(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        const QByteArray key = m_model->row(index.row()).key;
        auto *menu = new QMenu(this);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->setToolTipsVisible(true);
        for (QPushButton *b : {m_reset, m_grant, m_open, m_pin}) {
            QAction *a = menu->addAction(b->text(), b, &QPushButton::click);
            a->setEnabled(b->isEnabled());
            a->setToolTip(b->toolTip());
        }
        menu->addSeparator();
        menu->addAction(QStringLiteral("Copy name"), this, [key] { QApplication::clipboard()->setText(QString::fromUtf8(key)); });
        menu->popup(m_view->viewport()->mapToGlobal(pos)); // never exec(): no nested event loop
    });
    connect(m_view, &QTableView::doubleClicked, this, [this](const QModelIndex &index) {
        if (index.isValid())
            emit openKeyRequested(keyToOpen(m_model->row(index.row())));
    });

    m_reset = new QPushButton(QStringLiteral("Reset…"), this);
    m_reset->setObjectName(QStringLiteral("reset"));
    m_grant = new QPushButton(QStringLiteral("Grant a temporary limit…"), this);
    m_grant->setObjectName(QStringLiteral("grant"));
    m_open = new QPushButton(QStringLiteral("Open"), this);
    m_pin = new QPushButton(QStringLiteral("Pin to monitor"), this);
    auto *actions = new QHBoxLayout;
    actions->setSpacing(6);
    actions->addWidget(m_reset);
    actions->addWidget(m_grant);
    actions->addWidget(m_open);
    actions->addWidget(m_pin);
    actions->addStretch(1);

    m_doneLabel = plainLabel(this);
    m_doneLabel->setObjectName(QStringLiteral("done"));
    m_doneLabel->setWordWrap(true);
    m_doneLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_doneLabel->hide();

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 8, 8, 8);
    layout->setSpacing(6);
    layout->addLayout(top);
    layout->addLayout(headRow);
    layout->addWidget(m_answer);
    layout->addWidget(m_status);
    layout->addWidget(m_view, 1);
    layout->addLayout(actions);
    layout->addWidget(m_message);
    layout->addWidget(m_doneLabel);

    // A tick a second while shown: a new pass, unless the last one is still under way (a tick
    // is skipped then, never queued: one pass in flight at most).
    m_live.setInterval(kLiveMs);
    connect(&m_live, &TickTimer::timeout, this, [this] {
        if (isVisible() && !m_inFlight && !m_id.isEmpty() && m_client)
            startPass();
    });
    connect(m_idEdit, &QLineEdit::returnPressed, this, [this] { lookUp(m_idEdit->text()); });
    connect(m_lookUp, &QPushButton::clicked, this, [this] { lookUp(m_idEdit->text()); });
    connect(m_reset, &QPushButton::clicked, this, &LookupPage::resetRows);
    connect(m_grant, &QPushButton::clicked, this, &LookupPage::grantWithDialog);
    connect(m_open, &QPushButton::clicked, this, &LookupPage::openRows);
    connect(m_pin, &QPushButton::clicked, this, &LookupPage::pinRows);
    connect(m_copy, &QPushButton::clicked, this, &LookupPage::copySummary);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, &LookupPage::updateActions);
    connect(m_model, &QAbstractItemModel::modelReset, this, &LookupPage::updateActions);
    updateReasonField();
    showPass();
}

LookupPage::~LookupPage() = default;

void LookupPage::setClient(RedisClient *client, const QByteArray &ns)
{
    if (m_client)
        disconnect(m_client, nullptr, this, nullptr);
    delete m_requests; // what the old connection was asked is dropped
    m_requests = new QObject(this);
    m_live.setClient(client);
    m_inFlight = false;
    m_again = false;
    m_busy = false;
    m_client = client;
    m_ns = ns;
    if (client)
        connect(client, &RedisClient::readOnlyChanged, this, &LookupPage::updateActions);
    if (client && !m_id.isEmpty() && isVisible())
        refresh();
    showPass();
}

void LookupPage::lookUp(const QString &id)
{
    const QString trimmed = id.trimmed();
    if (m_idEdit->text() != trimmed)
        m_idEdit->setText(trimmed);
    const QByteArray bytes = trimmed.toUtf8();
    if (bytes != m_id) { // another customer: what was done here was for the one before
        m_done.clear();
        m_doneLabel->hide();
        m_pendingReset.clear();
        m_model->clear();
        m_lookedUpAt = QDateTime::currentDateTime();
        m_loaded = false;
    }
    m_id = bytes;
    m_problem.clear();
    setMessage({}, false);
    showPass();
    if (!m_id.isEmpty())
        refresh();
}

void LookupPage::focusIdentifier()
{
    m_idEdit->setFocus(Qt::ShortcutFocusReason);
    m_idEdit->selectAll();
}

void LookupPage::refresh()
{
    if (m_id.isEmpty() || !m_client)
        return;
    if (m_inFlight) {
        m_again = true; // never two passes in flight
        return;
    }
    startPass();
}

void LookupPage::startPass()
{
    m_inFlight = true;
    m_again = false;
    const QByteArray id = m_id;
    const MetadataNamespace ns(m_ns);
    // The background lane: a SCAN of the keyspace lets every view's short reads go first.
    m_client->request(
        m_requests, RedisClient::Lane::Background, [ns, id](Connection &c) { return runLookupPass(c, ns, id); },
        [this, id](const Outcome<LookupPass> &o) {
            m_inFlight = false;
            if (id == m_id) {
                if (o.ok()) {
                    m_problem.clear();
                    m_requireReason = o.value().requireReason;
                    m_scanned = o.value().result.scanned;
                    m_complete = o.value().result.complete;
                    // The selection follows its limiters when the order changes.
                    std::set<QByteArray> selected;
                    for (const QModelIndex &i : m_view->selectionModel()->selectedRows())
                        selected.insert(m_model->row(i.row()).key);
                    const QModelIndex current = m_view->currentIndex();
                    const QByteArray currentKey = current.isValid() ? m_model->row(current.row()).key : QByteArray();
                    const bool reset = m_model->rowCount() != int(o.value().result.rows.size());
                    m_model->setResult(o.value().result);
                    if (!selected.empty() && (reset || m_view->selectionModel()->selectedRows().size() != qsizetype(selected.size()))) {
                        QItemSelection again;
                        for (int r = 0; r < m_model->rowCount(); ++r)
                            if (selected.count(m_model->row(r).key))
                                again.select(m_model->index(r, 0), m_model->index(r, LookupModel::ColumnCount - 1));
                        m_view->selectionModel()->select(again, QItemSelectionModel::ClearAndSelect);
                        for (int r = 0; r < m_model->rowCount(); ++r)
                            if (m_model->row(r).key == currentKey)
                                m_view->selectionModel()->setCurrentIndex(m_model->index(r, current.column()), QItemSelectionModel::NoUpdate);
                    }
                } else {
                    m_problem = explain(o.failure().message);
                }
                m_loaded = true;
                updateReasonField();
                showPass();
                emit loaded();
            }
            if (m_again || id != m_id)
                refresh();
        });
}

QString LookupPage::explain(const QString &message) const
{
    if (message.startsWith(QLatin1String("NOPERM")))
        return explainRefusal(message, m_client ? QUrl(m_client->url()).userName() : QString());
    return message;
}

QString LookupPage::headline() const
{
    return m_headline->text();
}

void LookupPage::showPass()
{
    const QString id = displayKey(m_id);
    QColor colour;
    QIcon icon;
    QStringList answer;
    if (m_id.isEmpty()) {
        m_headline->setText(QStringLiteral("Who is refused, and why?"));
        m_status->setText(QStringLiteral("Type a customer's identifier and press Enter: every limiter whose key holds it as a "
                                         "segment, in every format Ratescope reads, denying ones first."));
    } else if (!m_loaded) {
        m_headline->setText(QStringLiteral("Looking up %1…").arg(id));
        m_status->setText(m_client ? QString() : QStringLiteral("Not connected"));
    } else if (!m_problem.isEmpty() && m_model->rowCount() == 0) {
        m_headline->setText(QStringLiteral("Could not look up %1").arg(id));
        colour = kProblem;
        m_status->setText(m_problem);
    } else {
        const int rows = m_model->rowCount();
        const int denying = m_model->denyingCount();
        if (rows == 0) {
            m_headline->setText(QStringLiteral("No limiter holds %1 as a segment of its key").arg(id));
            icon = style()->standardIcon(QStyle::SP_MessageBoxInformation);
        } else if (denying > 0) {
            m_headline->setText(denying == rows ? QStringLiteral("%1 is refused now by all of its %2").arg(id, limitersText(rows))
                                                : QStringLiteral("%1 is refused now by %2 of its %3")
                                                      .arg(id, QString::number(denying), limitersText(rows)));
            colour = kProblem;
            icon = style()->standardIcon(QStyle::SP_MessageBoxCritical);
            for (const LookupRow &r : m_model->rows()) {
                if (!r.denying())
                    break;
                if (answer.size() == 3) {
                    answer << QStringLiteral("… and %1 more denying (below)").arg(denying - 3);
                    break;
                }
                answer << QStringLiteral("%1 — %2").arg(LookupModel::limiterText(r), lookupVerdict(r, m_model->nowUs()));
            }
        } else {
            m_headline->setText(QStringLiteral("%1 is not refused: none of its %2 denies now").arg(id, limitersText(rows)));
            colour = kFine;
            icon = style()->standardIcon(QStyle::SP_DialogApplyButton);
        }
        QString status = QStringLiteral("%1 · %2 matched %3")
                             .arg(m_client ? QStringLiteral("Live, read at %1").arg(timeText(QDateTime::fromMSecsSinceEpoch(m_model->nowUs() / 1000)))
                                           : QStringLiteral("Disconnected: as read at %1")
                                                 .arg(timeText(QDateTime::fromMSecsSinceEpoch(m_model->nowUs() / 1000))),
                                  formatKeys(m_scanned), displayKey(lookupScanPattern(m_id)));
        if (!m_complete)
            status += QStringLiteral(" · the scan was cut short: the list may be partial");
        if (!m_problem.isEmpty())
            status += QStringLiteral(" · the last read failed: %1").arg(m_problem);
        m_status->setText(status);
    }
    QPalette pal = palette();
    if (colour.isValid())
        pal.setColor(QPalette::WindowText, colour);
    m_headline->setPalette(pal);
    m_icon->setPixmap(icon.isNull() ? QPixmap() : icon.pixmap(22, 22));
    m_answer->setText(answer.join(QLatin1Char('\n')));
    m_answer->setVisible(!answer.isEmpty());
    updateActions();
}

std::vector<const LookupRow *> LookupPage::targetRows() const
{
    std::vector<const LookupRow *> rows;
    const QModelIndexList selected = m_view->selectionModel() ? m_view->selectionModel()->selectedRows() : QModelIndexList();
    std::set<int> at;
    for (const QModelIndex &i : selected)
        at.insert(i.row());
    for (int r = 0; r < m_model->rowCount(); ++r)
        if (at.empty() || at.count(r))
            rows.push_back(&m_model->row(r));
    return rows;
}

QString LookupPage::targetsText(const std::vector<const LookupRow *> &rows) const
{
    QStringList names;
    for (const LookupRow *r : rows) {
        if (names.size() == 4) {
            names << QStringLiteral("%1 more").arg(rows.size() - 4);
            break;
        }
        names << LookupModel::limiterText(*r);
    }
    return QStringLiteral("%1 (%2)").arg(limitersText(qsizetype(rows.size())), names.join(QStringLiteral(", ")));
}

void LookupPage::updateActions()
{
    const auto rows = targetRows();
    const bool any = !rows.empty();
    const bool selection = m_view->selectionModel() && m_view->selectionModel()->hasSelection();
    const QString locked = whyReadOnly(m_client);
    const QString scope = selection ? QStringLiteral("the selected limiters") : QStringLiteral("every limiter listed");
    m_reset->setText(!any ? QStringLiteral("Reset…")
                     : selection ? (rows.size() == 1 ? QStringLiteral("Reset the selected…") : QStringLiteral("Reset %1 selected…").arg(rows.size()))
                                 : (rows.size() == 1 ? QStringLiteral("Reset it…") : QStringLiteral("Reset all %1…").arg(rows.size())));
    m_reset->setEnabled(any && locked.isEmpty());
    m_reset->setToolTip(locked.isEmpty() ? QStringLiteral("Preview, then delete the keys of %1: they start again with their full quota").arg(scope)
                                         : locked);
    m_grant->setEnabled(any && locked.isEmpty() && !m_busy);
    m_grant->setToolTip(locked.isEmpty() ? QStringLiteral("A temporary limit for %1 (those a policy covers), expiring by itself").arg(scope)
                                         : locked);
    m_open->setEnabled(any && m_client);
    m_open->setToolTip(QStringLiteral("Open %1 in tabs of their own").arg(scope));
    m_pin->setEnabled(any && m_client);
    m_pin->setToolTip(QStringLiteral("Follow %1 on the Monitor tab").arg(scope));
    m_copy->setEnabled(m_loaded && !m_id.isEmpty());
}

void LookupPage::updateReasonField()
{
    m_reasonLabel->setText(m_requireReason ? QStringLiteral("Reason (required)") : QStringLiteral("Reason"));
    m_reason->setPlaceholderText(m_requireReason ? QStringLiteral("required: a ticket number or a sentence")
                                                 : QStringLiteral("ticket or sentence, for the audit"));
    m_reason->setToolTip(m_requireReason ? QStringLiteral("This namespace requires a reason for every change; resets and grants from this page "
                                                          "carry it into the audit")
                                         : QStringLiteral("Resets and grants from this page carry it into the audit (e.g. TICKET-4711)"));
}

void LookupPage::setMessage(const QString &text, bool problem)
{
    m_messageText = text;
    QPalette pal = palette();
    if (problem)
        pal.setColor(QPalette::WindowText, kProblem);
    m_message->setPalette(pal);
    m_message->setText(text);
    m_message->setVisible(!text.isEmpty());
}

QString LookupPage::refusal()
{
    QString why = whyReadOnly(m_client);
    if (why.isEmpty() && targetRows().empty())
        why = QStringLiteral("Nothing to act on: look a customer up first.");
    const QString reason = m_reason->text().trimmed();
    if (why.isEmpty() && m_requireReason && reason.isEmpty()) {
        why = QStringLiteral("Refused: this namespace requires a reason for every change. Type one in Reason (a ticket number or a "
                             "sentence); nothing was changed.");
        m_reason->setFocus(Qt::OtherFocusReason);
    }
    if (why.isEmpty()) {
        try {
            requireValidReason(reason, QStringLiteral("the reason"));
        } catch (const Error &e) {
            why = QStringLiteral("Refused: %1; nothing was changed.").arg(e.message());
        }
    }
    if (!why.isEmpty())
        setMessage(why, true);
    return why;
}

void LookupPage::record(const QString &text)
{
    m_done.push_back({QDateTime::currentDateTime(), text});
    QStringList lines;
    for (const Done &d : m_done)
        lines << QStringLiteral("%1  %2").arg(timeText(d.at), d.text);
    m_doneLabel->setText(QStringLiteral("Done since the lookup:\n%1").arg(lines.join(QLatin1Char('\n'))));
    m_doneLabel->show();
}

void LookupPage::resetRows()
{
    if (!refusal().isEmpty())
        return;
    const auto rows = targetRows();
    QList<QByteArray> keys;
    for (const LookupRow *r : rows)
        keys << r->keys;
    m_pendingReset = targetsText(rows);
    m_pendingReason = m_reason->text().trimmed();
    setMessage({}, false);
    emit resetRequested(keys, m_pendingReason);
}

void LookupPage::resetFinished(qint64 deleted)
{
    if (!m_pendingReset.isEmpty()) {
        record(QStringLiteral("reset %1: %2 deleted%3")
                   .arg(m_pendingReset, formatKeys(deleted),
                        m_pendingReason.isEmpty() ? QString() : QStringLiteral(" · reason: %1").arg(m_pendingReason)));
        setMessage(QStringLiteral("Reset: %1 deleted. The rows below are read again.").arg(formatKeys(deleted)), false);
    }
    m_pendingReset.clear();
    refresh();
}

void LookupPage::grantWithDialog()
{
    if (!refusal().isEmpty())
        return;
    const auto rows = targetRows();
    qint64 suggested = 1;
    for (const LookupRow *r : rows)
        if (r->spec)
            suggested = std::max(suggested, 2 * r->spec->limit);
    auto *dialog = new GrantDialog(targetsText(rows), suggested, m_reason->text().trimmed(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] { grantRows(dialog->limit(), dialog->windowUs(), dialog->forUs()); });
    dialog->open(); // never exec(): no nested event loop
}

void LookupPage::grantRows(qint64 limit, qint64 windowUs, qint64 forUs)
{
    if (m_busy || !refusal().isEmpty())
        return;
    const auto rows = targetRows();
    QByteArrayList keys;
    std::vector<bool> covered;
    for (const LookupRow *r : rows) {
        keys << r->key; // a group's base: the whole group's limit
        covered.push_back(!r->policy.isEmpty());
    }
    m_busy = true;
    updateActions();
    setMessage(QStringLiteral("Granting…"), false);
    const MetadataNamespace ns(m_ns);
    const QString reason = m_reason->text().trimmed();
    const QString op = m_operator;
    const QString actor = op.isEmpty() ? AuditLog::osUser() : op;
    const QString what = QStringLiteral("%1%2 for %3")
                             .arg(formatCount(limit), windowUs ? QStringLiteral(" per %1").arg(formatDurationUs(windowUs)) : QString(),
                                  formatDurationUs(forUs));
    m_client->request(
        m_requests,
        [ns, keys, covered, limit, windowUs, forUs, actor, op, reason](Connection &c) {
            return grantLookupOverrides(c, ns, keys, covered, limit, windowUs, forUs, actor, op, reason);
        },
        [this, what, reason](const Outcome<GrantOutcome> &o) {
            m_busy = false;
            updateActions();
            if (!o.ok()) {
                setMessage(QStringLiteral("Not granted: %1").arg(explain(o.failure().message)), true);
                return;
            }
            const GrantOutcome &g = o.value();
            QStringList granted;
            for (const Override &ov : g.granted)
                granted << displayKey(ov.key);
            QString text = QStringLiteral("granted %1 to %2").arg(what, limitersText(qsizetype(g.granted.size())));
            if (!granted.isEmpty())
                text += QStringLiteral(" (%1)").arg(granted.join(QStringLiteral(", ")));
            if (!g.skipped.isEmpty())
                text += QStringLiteral("; skipped %1 no policy covers").arg(g.skipped.size());
            if (!reason.isEmpty())
                text += QStringLiteral(" · reason: %1").arg(reason);
            record(text);
            setMessage(g.granted.empty() ? QStringLiteral("Nothing granted: no policy covers these limiters, so an override would change nothing.")
                                         : QStringLiteral("Granted %1 to %2.").arg(what, limitersText(qsizetype(g.granted.size()))),
                       g.granted.empty());
            refresh();
            emit changed();
        });
}

void LookupPage::openRows()
{
    for (const LookupRow *r : targetRows())
        emit openKeyRequested(keyToOpen(*r));
}

void LookupPage::pinRows()
{
    for (const LookupRow *r : targetRows())
        emit pinKeyRequested(keyToOpen(*r));
}

void LookupPage::copySummary()
{
    QApplication::clipboard()->setText(summaryText());
    setMessage(QStringLiteral("The summary is on the clipboard."), false);
}

QString LookupPage::summaryText() const
{
    QStringList lines;
    const QDateTime read = m_model->nowUs() ? QDateTime::fromMSecsSinceEpoch(m_model->nowUs() / 1000) : m_lookedUpAt;
    lines << QStringLiteral("Rate limits of %1, read %2%3")
                 .arg(displayKey(m_id), read.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss t")),
                      m_client ? QStringLiteral(" on %1").arg(m_client->endpoint()) : QString());
    const int rows = m_model->rowCount();
    const int denying = m_model->denyingCount();
    if (rows == 0)
        lines << QStringLiteral("No limiter holds %1 as a segment of its key.").arg(displayKey(m_id));
    else
        lines << QStringLiteral("%1, %2 denying:").arg(limitersText(rows)).arg(denying);
    for (const LookupRow &r : m_model->rows()) {
        QString head = QStringLiteral("%1 %2").arg(r.denying() ? QStringLiteral("DENYING") : QStringLiteral("ok     "),
                                                  LookupModel::limiterText(r));
        QStringList facts;
        facts << (r.policy.isEmpty() ? QStringLiteral("no policy") : QStringLiteral("policy %1").arg(r.policy));
        facts << r.algorithmText();
        if (r.spec)
            facts << formatLimit(*r.spec);
        if (r.override)
            facts << QStringLiteral("override %1").arg(LookupModel::overrideText(r, m_model->nowUs()));
        lines << QStringLiteral("- %1 (%2)").arg(head, facts.join(QStringLiteral(", ")));
        lines << QStringLiteral("    %1").arg(lookupVerdict(r, m_model->nowUs()));
    }
    if (m_done.empty()) {
        lines << QStringLiteral("Nothing was changed from the console's Lookup page.");
    } else {
        lines << QStringLiteral("Done:");
        for (const Done &d : m_done)
            lines << QStringLiteral("- %1 %2").arg(d.at.toString(QStringLiteral("HH:mm:ss")), d.text);
    }
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

void LookupPage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    refresh();
    m_live.start();
}

void LookupPage::fitColumns()
{
    const int available = m_view->viewport()->width();
    if (available <= 0)
        return;
    const int em = m_view->fontMetrics().horizontalAdvance(QLatin1Char('m'));
    const int limiterMin = 14 * em;
    QHeaderView *header = m_view->horizontalHeader();
    // As wide as a column's title and cells need, within bounds; a width dragged by hand wins.
    auto width = [&](int column, int least, int most) {
        return m_preferredWidth.value(column, std::clamp(columnContentWidth(m_view, header, column), least, most));
    };
    m_fitting = true;
    // First what the page is for: the limiter at a readable width, how full it is, what is left
    // (used / limit in its short form where the whole figures do not fit).
    int used = ratescope::ui::fitColumns(header, available, limiterMin,
                                         {{LookupModel::Used, m_preferredWidth.value(LookupModel::Used, 8 * em)},
                                          {LookupModel::Remaining, width(LookupModel::Remaining, 7 * em, 16 * em)}});
    // Then the limiter's whole name (at most 30 em), then why, the override, the policy and the
    // algorithm while they fit; the row's tooltip has what a hidden one held.
    const int name = std::clamp(columnContentWidth(m_view, header, LookupModel::Limiter), limiterMin,
                                std::max(limiterMin, std::min(30 * em, available - used)));
    used += ratescope::ui::fitColumns(header, available - used, name,
                                      {{LookupModel::Verdict, m_preferredWidth.value(LookupModel::Verdict, 16 * em)},
                                       {LookupModel::Override, width(LookupModel::Override, 6 * em, 12 * em)},
                                       {LookupModel::Policy, width(LookupModel::Policy, 5 * em, 12 * em)},
                                       {LookupModel::Algorithm, width(LookupModel::Algorithm, 7 * em, 14 * em)}});
    // Why, the last column, takes what is left beside the name; without it, the name does.
    header->resizeSection(LookupModel::Limiter, header->isSectionHidden(LookupModel::Verdict) ? available - used : name);
    m_fitting = false;
}

void LookupPage::hideEvent(QHideEvent *event)
{
    QWidget::hideEvent(event);
    m_live.stop(); // a pass under way finishes; no next one until shown again
}

} // namespace ratescope::ui
