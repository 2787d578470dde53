#include "auditpage.h"

#include "auditdetails.h"
#include "auditformat.h"
#include "base/errors.h"
#include "base/keytext.h"
#include "displayformat.h"
#include "fitwidth.h"
#include "notupdating.h"
#include "refusal.h"

#include <QComboBox>
#include <QDateTimeEdit>
#include <QFileDialog>
#include <QGridLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollBar>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTimer>
#include <QUrl>
#include <QVBoxLayout>

namespace ratescope::ui {

struct AuditPage::Read : AuditRead {
    bool ok = false; // read, and a stream (or none yet)
};

namespace {

const QString kAllActions = QStringLiteral("All actions");

QString clockText(const QDateTime &t)
{
    return t.toLocalTime().toString(QStringLiteral("HH:mm:ss"));
}

} // namespace

AuditPage::AuditPage(QWidget *parent)
    : QWidget(parent)
    , m_now([] { return QDateTime::currentDateTimeUtc(); })
{
    m_model = new AuditModel(this);
    m_filtered = new AuditFilterModel(m_model, this);

    // The filter bar.
    m_action = new QComboBox(this);
    m_action->addItem(kAllActions);
    m_action->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_action->setToolTip(QStringLiteral("Show one action only (the actions read so far)"));
    m_actor = new QLineEdit(this);
    m_actor->setPlaceholderText(QStringLiteral("operator or OS user"));
    m_actor->setClearButtonEnabled(true);
    m_actor->setToolTip(QStringLiteral("Entries whose operator name or OS user contains this text, or matches it as a glob (* ? [ ])"));
    m_target = new QLineEdit(this);
    m_target->setPlaceholderText(QStringLiteral("key, policy or reason: text or glob"));
    m_target->setClearButtonEnabled(true);
    m_target->setToolTip(QStringLiteral("Entries whose target or reason contains this text, or matches it as a glob (* ? [ ]): "
                                        "api:customer42:*, a policy's name, a ticket number such as TICKET-42"));
    keepPlaceholdersWhole({m_actor, m_target}); // what to type is never cut
    m_time = new QComboBox(this);
    m_time->addItems({QStringLiteral("Any time"), QStringLiteral("Last hour"), QStringLiteral("Last 24 hours"),
                      QStringLiteral("Last 7 days"), QStringLiteral("Between…")});
    m_from = new QDateTimeEdit(this);
    m_to = new QDateTimeEdit(this);
    for (QDateTimeEdit *e : {m_from, m_to}) {
        e->setCalendarPopup(true);
        e->setDisplayFormat(QStringLiteral("yyyy-MM-dd HH:mm"));
        e->setTimeSpec(Qt::LocalTime);
        e->hide();
    }
    m_export = new QPushButton(QStringLiteral("Export CSV…"), this);
    m_export->setToolTip(QStringLiteral("Save the entries the filter shows as CSV"));

    // Two rows, as a search form: what to look for (who, target) with the room text needs, then
    // which actions and when, with the export at the end. One row left the fields too narrow
    // for their placeholders at any desk's width.
    auto *bar = new QGridLayout;
    bar->setHorizontalSpacing(6);
    bar->setVerticalSpacing(4);
    auto label = [this](const QString &text, QWidget *buddy) {
        auto *l = new QLabel(text, this);
        l->setBuddy(buddy);
        return l;
    };
    bar->addWidget(label(QStringLiteral("&Who"), m_actor), 0, 0);
    bar->addWidget(m_actor, 0, 1);
    bar->addWidget(label(QStringLiteral("Tar&get"), m_target), 0, 2);
    bar->addWidget(m_target, 0, 3);
    bar->addWidget(label(QStringLiteral("&Action"), m_action), 1, 0);
    bar->addWidget(m_action, 1, 1);
    bar->addWidget(label(QStringLiteral("W&hen"), m_time), 1, 2);
    auto *when = new QHBoxLayout;
    when->addWidget(m_time);
    when->addStretch(1);
    when->addWidget(m_export);
    bar->addLayout(when, 1, 3);
    // Between…: the two times on a row of their own under it, shown only then.
    auto *between = new QHBoxLayout;
    between->addWidget(m_from);
    between->addWidget(m_to);
    between->addStretch(1);
    bar->addLayout(between, 2, 3);
    bar->setColumnStretch(1, 2);
    bar->setColumnStretch(3, 5);

    m_status = new QLabel(this);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setWordWrap(true);
    m_status->setContentsMargins(4, 3, 4, 3);

    // The table, or in its place what there is to say about the trail.
    m_view = new QTableView(this);
    m_view->setModel(m_filtered);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_view->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_view->horizontalHeader()->setHighlightSections(false);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setAlternatingRowColors(true);
    m_view->setShowGrid(false);
    m_view->setWordWrap(false);
    m_view->setTextElideMode(Qt::ElideMiddle);
    m_view->setSortingEnabled(false); // the stream's order: newest first
    m_view->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff); // the columns fit the width instead
    fitOnResize(m_view, [this] { fitColumns(); });
    connect(m_view->horizontalHeader(), &QHeaderView::sectionResized, this, [this](int column, int, int size) {
        // Dragged: a mouse button is down (the header also resizes sections itself).
        if (!m_fitting && QGuiApplication::mouseButtons() != Qt::NoButton && column != AuditModel::TargetColumn)
            m_preferredWidth[column] = size;
    });

    auto *messagePanel = new QWidget(this);
    auto *messageTitle = new QLabel(messagePanel);
    messageTitle->setObjectName(QStringLiteral("title"));
    QFont big = messageTitle->font();
    big.setBold(true);
    big.setPointSizeF(big.pointSizeF() * 1.3);
    messageTitle->setFont(big);
    messageTitle->setAlignment(Qt::AlignCenter);
    m_message = new QLabel(messagePanel);
    m_message->setTextFormat(Qt::PlainText);
    m_message->setWordWrap(true);
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *ml = new QVBoxLayout(messagePanel);
    ml->addStretch(1);
    ml->addWidget(messageTitle);
    ml->addSpacing(6);
    auto *centred = new QHBoxLayout; // a word-wrapped label sized by the layout, not by its alignment
    centred->addStretch(1);
    centred->addWidget(m_message, 4);
    centred->addStretch(1);
    ml->addLayout(centred);
    ml->addStretch(2);

    m_stack = new QStackedWidget(this);
    m_stack->addWidget(m_view);
    m_stack->addWidget(messagePanel);

    m_details = new AuditDetails(this);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_stack);
    split->addWidget(m_details);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({600, 400}); // the table first: it answers "who did what when"
    split->setChildrenCollapsible(false);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_status);
    layout->addWidget(split, 1);

    // Typing filters as it goes, a moment after the last key.
    auto *typing = new QTimer(this);
    typing->setSingleShot(true);
    typing->setInterval(200);
    connect(typing, &QTimer::timeout, this, &AuditPage::applyFilter);
    connect(m_actor, &QLineEdit::textEdited, typing, qOverload<>(&QTimer::start));
    connect(m_target, &QLineEdit::textEdited, typing, qOverload<>(&QTimer::start));
    connect(m_action, &QComboBox::activated, this, &AuditPage::applyFilter);
    connect(m_time, &QComboBox::activated, this, [this](int i) {
        m_range = TimeRange(i);
        if (m_range == TimeRange::Custom && !m_from->isVisible()) {
            const QDateTime now = m_now().toLocalTime();
            m_from->setDateTime(now.addDays(-1));
            m_to->setDateTime(now);
        }
        m_from->setVisible(m_range == TimeRange::Custom);
        m_to->setVisible(m_range == TimeRange::Custom);
        applyFilter();
    });
    connect(m_from, &QDateTimeEdit::dateTimeChanged, this, &AuditPage::applyFilter);
    connect(m_to, &QDateTimeEdit::dateTimeChanged, this, &AuditPage::applyFilter);
    connect(m_export, &QPushButton::clicked, this, &AuditPage::chooseExportFile);

    connect(m_model, &AuditModel::olderWanted, this, &AuditPage::fetchOlder);
    connect(m_model, &AuditModel::actionsChanged, this, &AuditPage::refreshActions);
    connect(m_filtered, &QAbstractItemModel::rowsInserted, this, &AuditPage::updateStatus);
    connect(m_filtered, &QAbstractItemModel::rowsInserted, this, &AuditPage::fitColumns); // wider entries may have come
    // New entries go on top; someone reading older ones keeps them where they are.
    m_view->setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
    connect(m_filtered, &QAbstractItemModel::rowsAboutToBeInserted, this, [this] { m_scrolledBy = m_view->verticalScrollBar()->value(); });
    connect(m_filtered, &QAbstractItemModel::rowsInserted, this, [this](const QModelIndex &, int first, int last) {
        if (!m_prepending || first != 0 || m_scrolledBy <= 0)
            return;
        m_view->doItemsLayout(); // the scroll range must include the new rows first
        m_view->verticalScrollBar()->setValue(m_scrolledBy + (last - first + 1) * m_view->verticalHeader()->defaultSectionSize());
    });
    connect(m_filtered, &QAbstractItemModel::modelReset, this, [this] {
        m_details->clear();
        updateStatus();
    });
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, &AuditPage::selectionChanged);

    m_poll.setInterval(kPollMs);
    connect(&m_poll, &TickTimer::timeout, this, [this] {
        if (isVisible())
            poll();
    });
    setClient(nullptr, {});
}

void AuditPage::setClock(std::function<QDateTime()> now)
{
    m_now = now;
    m_model->setClock(now);
    m_details->setClock(now);
    applyFilter();
}

void AuditPage::setClient(RedisClient *client, const QByteArray &ns)
{
    // The same connection again (after a disconnect): carry on from the newest row read.
    const bool same = client && client == m_lastClient && ns == m_ns;
    if (m_client) {
        m_client->cancel(&m_requests);
        disconnect(m_client, nullptr, this, nullptr);
    }
    m_loading = m_polling = false;
    if (m_model->isFetchingOlder())
        m_model->olderFailed(); // its answer was cancelled
    if (!client) {
        // Keep what was read, marked as no longer followed.
        m_client = nullptr;
        m_poll.stop();
        markStale(m_loaded);
        if (!m_loaded)
            showProblem(QString());
        updateStatus();
        return;
    }
    m_client = client;
    m_lastClient = client;
    m_poll.setClient(client);
    if (!same) {
        m_ns = ns;
        m_loaded = false;
        m_problem.clear();
        m_readAt = QDateTime();
        m_model->clear();
    }
    connect(client, &RedisClient::stateChanged, this, [this](RedisClient::State s) {
        if (s == RedisClient::State::Connected) {
            if (isVisible()) // else when shown (showEvent)
                poll();
        } else if (m_loaded) {
            markStale(true);
        }
    });
    m_poll.start();
    markStale(m_loaded && client->state() != RedisClient::State::Connected);
    updateStatus();
    if (client->state() == RedisClient::State::Connected && isVisible())
        poll();
}

void AuditPage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    poll(); // at once, not a tick later
    continueSearch();
}

void AuditPage::read(const AuditSlice &slice, std::function<void(Read &)> done, const RedisClient::RepeatMemory &repeated)
{
    auto answered = [this, done](const Outcome<AuditRead> &o) {
            Read r;
            if (!o.ok()) {
                done(r); // nothing read: lets the caller finish its request
                failed(o.failure());
                return;
            }
            static_cast<AuditRead &>(r) = o.value();
            r.ok = r.wrongType.isEmpty();
            if (!r.ok) {
                const QString key = displayKey(m_ns + "audit");
                done(r);
                showProblem(QStringLiteral("%1 is a %2, not a stream, so the audit trail cannot be read here, and "
                                           "Ratescope's changes cannot be recorded in it either. Something other than "
                                           "Ratescope wrote that key: look at what it holds, then rename it out of the way "
                                           "(redis-cli RENAME %1 %1.old) or delete it. The next change recreates the stream.")
                                .arg(key, r.wrongType));
                return;
            }
            m_readAt = m_now();
            markStale(false);
            done(r);
    };
    const MetadataNamespace ns(m_ns);
    if (repeated) // the poll, on the shared tick: in the round of every view due then
        m_client->repeat(
            &m_requests, repeated, [slice, ns](Connection &c, const RedisClient::Tick &) { return readAuditSlice(c, ns, slice); },
            std::move(answered));
    else
        m_client->request(&m_requests, [slice, ns](Connection &c) { return readAuditSlice(c, ns, slice); }, std::move(answered));
}

void AuditPage::failed(const Failure &failure)
{
    if (failure.isConnectionLoss()) {
        markStale(true); // the banner says why; the next poll after reconnecting resumes
        return;
    }
    if (failure.message.startsWith(QLatin1String("NOPERM"))) {
        const QString user = m_client ? QUrl(m_client->url()).userName() : QString();
        showProblem(QStringLiteral("This connection's user may not read the audit trail: %1. An administrator allows it with "
                                   "ACL SETUSER <user> +xrange +xrevrange ~%2.")
                        .arg(auditText(explainRefusal(failure.message, user, QStringLiteral("the audit trail"))),
                             displayKey(m_ns + "audit")));
        return;
    }
    showProblem(QStringLiteral("Reading the audit trail failed: %1").arg(auditText(failure.message)));
}

void AuditPage::showProblem(const QString &problem)
{
    m_problem = problem;
    updateStatus();
}

void AuditPage::load()
{
    if (!m_client || m_loading)
        return;
    m_loading = true;
    read({AuditSlice::Direction::Newest, QString(), kPageSize},
         [this](Read &r) {
             m_loading = false;
             if (!r.ok)
                 return;
             const bool more = int(r.entries.size()) == kPageSize;
             const bool hadRows = m_model->size() > 0;
             m_model->reset(std::move(r.entries), more);
             m_problem.clear();
             const bool first = !m_loaded;
             m_loaded = true;
             updateStatus();
             fitColumns();
             // The first entries (read first, or the first ever made): the newest one's details in
             // the pane, rather than an empty pane.
             if (!hadRows && m_filtered->rowCount() > 0 && !m_view->selectionModel()->hasSelection())
                 m_view->selectRow(0);
             if (first)
                 emit loaded();
             emit updated();
             continueSearch();
         });
}

// The columns fit the table's width, as the keys panel's do (fitwidth.h), each as wide as the
// entries read need up to a cap: the time, the action and the target always (the target at
// least 14 em, up to its whole text), then who, the reason, the count and the host while they
// fit; the reason, last, takes what is left. A width dragged by hand is kept.
void AuditPage::fitColumns()
{
    const int available = m_view->viewport()->width();
    if (available <= 0)
        return;
    QHeaderView *header = m_view->horizontalHeader();
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('m'));
    auto width = [&](int column, int cap) {
        return m_preferredWidth.value(column, std::min(columnContentWidth(m_view, header, column, 200) + em / 2, cap));
    };
    const int targetMin = 14 * em;
    m_fitting = true;
    int used = ratescope::ui::fitColumns(header, available, targetMin,
                                         {{AuditModel::TimeColumn, width(AuditModel::TimeColumn, 20 * em)},
                                          {AuditModel::ActionColumn, width(AuditModel::ActionColumn, 10 * em)}});
    const int target = std::clamp(width(AuditModel::TargetColumn, 30 * em), targetMin, std::max(targetMin, available - used));
    used += ratescope::ui::fitColumns(header, available - used, target,
                                      {{AuditModel::ActorColumn, width(AuditModel::ActorColumn, 16 * em)},
                                       {AuditModel::ReasonColumn, m_preferredWidth.value(AuditModel::ReasonColumn, 12 * em)},
                                       {AuditModel::CountColumn, width(AuditModel::CountColumn, 6 * em)},
                                       {AuditModel::HostColumn, width(AuditModel::HostColumn, 10 * em)}});
    header->resizeSection(AuditModel::TargetColumn, header->isSectionHidden(AuditModel::ReasonColumn) ? available - used : target);
    m_fitting = false;
}


void AuditPage::poll()
{
    if (!m_client || m_client->state() != RedisClient::State::Connected)
        return;
    if (m_range != TimeRange::Any && m_range != TimeRange::Custom)
        applyFilter(); // "last hour" moves with the clock
    // Nothing shown yet (no stream, or it could not be read): read the newest page again.
    if (!m_loaded || !m_problem.isEmpty() || m_model->size() == 0) {
        load();
        return;
    }
    if (m_polling)
        return;
    m_polling = true;
    read(
        {AuditSlice::Direction::NewerThan, m_model->newestId(), kFollowMax},
        [this](Read &r) {
             m_polling = false;
             if (!r.ok)
                 return;
             m_problem.clear();
             const bool full = int(r.entries.size()) == kFollowMax;
             m_prepending = true;
             m_model->addNewer(r.entries);
             m_prepending = false;
             updateStatus();
             emit updated();
             if (full)
                 poll(); // more arrived than one read takes: catch up now
        },
        m_pollMemory);
}

void AuditPage::fetchOlder()
{
    if (!m_client || m_client->state() != RedisClient::State::Connected) {
        m_model->olderFailed();
        return;
    }
    // A filter may match few rows: read bigger pages while searching for them.
    const int count = m_filter.isEmpty() ? kPageSize : kPageSize * 5;
    read({AuditSlice::Direction::OlderThan, m_model->oldestId(), count},
         [this, count](Read &r) {
             if (!r.ok) {
                 m_model->olderFailed();
                 return;
             }
             const bool more = int(r.entries.size()) == count;
             m_model->addOlder(std::move(r.entries), more);
             updateStatus();
             emit updated();
             continueSearch();
         });
}

void AuditPage::continueSearch()
{
    if (!isVisible() || !m_filtered->canFetchMore({}))
        return;
    const int rows = m_filtered->rowCount();
    if (rows > 0) {
        const QRect last = m_view->visualRect(m_filtered->index(rows - 1, 0));
        if (!m_view->viewport()->rect().intersects(last))
            return; // the view is full: the next page comes when it is scrolled to the end
    }
    m_filtered->fetchMore({});
}

void AuditPage::setActionFilter(const QString &action)
{
    const int i = action.isEmpty() ? 0 : m_action->findText(auditText(action));
    if (i < 0) {
        m_action->addItem(auditText(action), action);
        m_action->setCurrentIndex(m_action->count() - 1);
    } else {
        m_action->setCurrentIndex(i);
    }
    applyFilter();
}

void AuditPage::setActorFilter(const QString &text)
{
    m_actor->setText(text);
    applyFilter();
}

void AuditPage::setTargetFilter(const QString &text)
{
    m_target->setText(text);
    applyFilter();
}

void AuditPage::setTimeRange(TimeRange range, const QDateTime &from, const QDateTime &to)
{
    m_range = range;
    m_time->setCurrentIndex(int(range));
    const bool custom = range == TimeRange::Custom;
    if (custom) {
        const QSignalBlocker a(m_from), b(m_to);
        m_from->setDateTime(from.toLocalTime());
        m_to->setDateTime(to.toLocalTime());
    }
    m_from->setVisible(custom);
    m_to->setVisible(custom);
    applyFilter();
}

void AuditPage::applyFilter()
{
    AuditFilter f;
    if (m_action->currentIndex() > 0)
        f.action = m_action->currentData().toString();
    f.actor = m_actor->text().trimmed();
    f.target = m_target->text().trimmed();
    const QDateTime now = m_now();
    // Whole minutes: the filter is not recomputed for every tick of the clock.
    auto since = [&now](qint64 seconds) {
        const qint64 ms = now.toMSecsSinceEpoch() - seconds * 1000;
        return QDateTime::fromMSecsSinceEpoch(ms - ms % 60000, Qt::UTC);
    };
    switch (m_range) {
    case TimeRange::Any:
        break;
    case TimeRange::LastHour:
        f.from = since(3600);
        break;
    case TimeRange::LastDay:
        f.from = since(86400);
        break;
    case TimeRange::LastWeek:
        f.from = since(7 * 86400);
        break;
    case TimeRange::Custom:
        f.from = m_from->dateTime().toUTC();
        // Through the end of the minute shown.
        f.to = m_to->dateTime().toUTC().addSecs(59).addMSecs(999);
        break;
    }
    if (f == m_filter)
        return;
    m_filter = f;
    m_filtering = true;
    m_filtered->setFilter(f);
    keepSelection();
    m_filtering = false;
    updateStatus();
    continueSearch();
}

void AuditPage::keepSelection()
{
    if (m_selectedId.isEmpty())
        return;
    for (int r = 0; r < m_filtered->rowCount(); ++r) {
        if (m_filtered->entry(r).id != m_selectedId)
            continue;
        const QModelIndex index = m_filtered->index(r, 0);
        if (!m_view->selectionModel()->isRowSelected(r, {}))
            m_view->selectRow(r);
        m_view->doItemsLayout(); // the scroll range must include the rows the filter let in first
        m_view->scrollTo(index, QAbstractItemView::EnsureVisible);
        return;
    }
    // Hidden by the filter: nothing selected meanwhile (the current row neither, so that the
    // keyboard starts from the top), and it comes back with a filter that shows it.
    m_view->selectionModel()->clear();
}

void AuditPage::refreshActions()
{
    const QString current = m_action->currentIndex() > 0 ? m_action->currentData().toString() : QString();
    const QSignalBlocker block(m_action);
    m_action->clear();
    m_action->addItem(kAllActions);
    QStringList actions = m_model->actions();
    if (!current.isEmpty() && !actions.contains(current))
        actions << current; // keep a chosen action even when the rows holding it are gone
    for (const QString &a : actions)
        m_action->addItem(auditText(a), a);
    m_action->setCurrentIndex(current.isEmpty() ? 0 : m_action->findData(current));
}

void AuditPage::markStale(bool stale)
{
    if (stale == m_stale)
        return;
    m_stale = stale;
    updateStatus();
}

QString AuditPage::messageText() const
{
    return m_stack->currentIndex() == 1 ? m_message->text() : QString();
}

QString AuditPage::statusText() const
{
    return m_status->text();
}

void AuditPage::updateStatus()
{
    auto *title = m_stack->widget(1)->findChild<QLabel *>(QStringLiteral("title"));
    // What to say in place of the table, if anything.
    QString heading, message;
    if (!m_problem.isEmpty()) {
        heading = QStringLiteral("The audit trail cannot be read");
        message = m_problem;
    } else if (!m_client && !m_loaded) {
        heading = QStringLiteral("Not connected");
        message = QStringLiteral("Pick a connection profile in the toolbar: the changes made through Ratescope show here.");
    } else if (m_loaded && m_model->size() == 0) {
        heading = QStringLiteral("No changes recorded yet");
        message = QStringLiteral("Every reset, policy or override change and burst made through Ratescope (the console or "
                                 "ratescope-cli) adds an entry to %1. They appear here as they happen.")
                      .arg(displayKey(m_ns + "audit"));
    } else if (m_client && !m_loaded) {
        heading = QStringLiteral("Reading the audit trail…");
    } else if (m_filtered->rowCount() == 0 && m_model->size() > 0 && !m_model->isFetchingOlder()) {
        heading = QStringLiteral("No entry matches the filter");
        const int read = m_model->size();
        message = m_model->hasOlder() && !m_filtered->reachedFilterStart()
                      ? QStringLiteral("Searched the newest %1 entries so far.").arg(formatCount(read))
                      : QStringLiteral("Searched %1 (%2). Clear a filter or widen the time range.")
                            .arg(read == 1 ? QStringLiteral("1 entry") : formatCount(read) + QStringLiteral(" entries"),
                                 m_model->hasOlder() ? QStringLiteral("every one since the start of the time range")
                                                     : QStringLiteral("the whole trail"));
    }
    title->setText(heading);
    m_message->setText(message);
    m_stack->setCurrentIndex(heading.isEmpty() ? 0 : 1);
    m_details->setVisible(heading.isEmpty()); // nothing to detail while the trail is not shown
    m_export->setEnabled(m_filtered->rowCount() > 0);

    QStringList parts;
    // Not being followed comes first: it changes how everything after it reads.
    if (m_stale && m_readAt.isValid())
        parts << QStringLiteral("Not updating: %1. Showing what was read until %2.")
                     .arg(m_client ? QStringLiteral("the connection is lost") : QStringLiteral("disconnected"), clockText(m_readAt));
    const int loaded = m_model->size();
    const int shown = m_filtered->rowCount();
    if (loaded > 0) {
        const QString reach =
            m_model->hasOlder()
                ? QStringLiteral("back to %1; older ones load as you scroll").arg(AuditModel::timeText(m_model->entry(loaded - 1).time))
                : QStringLiteral("the whole trail");
        if (m_filter.isEmpty())
            parts << QStringLiteral("%1 read (%2)")
                         .arg(loaded == 1 ? QStringLiteral("1 entry") : formatCount(loaded) + QStringLiteral(" entries"), reach);
        else
            parts << QStringLiteral("%1 of %2 entries read match the filter (%3)%4")
                         .arg(formatCount(shown), formatCount(loaded), reach,
                              m_model->isFetchingOlder() ? QStringLiteral(" · searching older entries…") : QString());
    }
    if (!m_stale && m_loaded && m_client)
        parts << QStringLiteral("new entries appear as they are made (read at %1)").arg(clockText(m_readAt));
    m_status->setText(parts.join(QStringLiteral(" · ")));
    showNotUpdating(m_status, m_stale);
}

void AuditPage::selectionChanged()
{
    const QModelIndexList rows = m_view->selectionModel()->selectedRows();
    if (rows.isEmpty()) {
        if (!m_filtering)
            m_selectedId.clear();
        m_details->clear();
        return;
    }
    const AuditEntry &e = m_filtered->entry(rows.front().row());
    m_selectedId = e.id;
    m_details->showEntry(e);
}

QString AuditPage::exportCsv(const QString &path)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return file.errorString();
    file.write(auditCsvHeader());
    for (int r = 0; r < m_filtered->rowCount(); ++r)
        file.write(auditCsvLine(m_filtered->entry(r)));
    if (!file.commit())
        return file.errorString();
    return {};
}

void AuditPage::chooseExportFile()
{
    const QString suggested = QStringLiteral("ratescope-audit-%1.csv").arg(m_now().toLocalTime().toString(QStringLiteral("yyyyMMdd-HHmm")));
    const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export the entries shown"), suggested,
                                                      QStringLiteral("CSV files (*.csv);;All files (*)"));
    if (path.isEmpty())
        return;
    const QString error = exportCsv(path);
    if (!error.isEmpty())
        QMessageBox::warning(this, QStringLiteral("Export failed"), QStringLiteral("%1 was not written: %2").arg(path, error));
}

} // namespace ratescope::ui
