#include "keybrowser.h"

#include "keys/keyscanner.h"

#include "admin/audit.h"
#include "base/errors.h"
#include "base/glob.h"
#include "base/keytext.h"
#include "browserqueries.h"
#include "displayformat.h"
#include "fitwidth.h"
#include "formats/keyshapes.h"
#include "notupdating.h"
#include "redisclient.h"
#include "usagebardelegate.h"

#include <QApplication>
#include <QClipboard>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QCursor>
#include <QFontMetrics>
#include <QMenu>
#include <QStyle>
#include <QPersistentModelIndex>
#include <QProgressBar>
#include <QQueue>
#include <QScrollBar>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>

namespace ratescope::ui {

namespace {

constexpr int kScanCount = 1000;         // SCAN COUNT hint per call
constexpr int kPageSliceMs = 40;         // a page job may call SCAN again for up to this long...
constexpr int kPageKeys = 10000;         // ...until it holds this many keys
constexpr int kFlushIntervalMs = 60;     // model insertions at most this often (the view relayouts)
constexpr int kInsertChunk = 2000;       // keys per model insertion
constexpr int kInsertBudgetMs = 8;       // GUI time per event-loop turn spent inserting
constexpr int kMaxPending = 50000;       // SCAN waits while this many keys wait to be inserted
constexpr int kPagesAhead = 2;           // pages asked for at once: the worker never waits for this thread
constexpr size_t kSortHereLimit = 50000; // keys out of order sorted at once at the end of a listing (and
                                         // when keys come back); more are sorted in the background
constexpr int kProgressMs = 100;         // the listing's progress shown at most this often
constexpr int kOrderPacedMs = 2000;      // while a listing runs, a sorting round at most this often
constexpr int kAutoExpandRows = 60;      // groups open by themselves while this many rows fit
constexpr size_t kDetailsKept = 20000;   // details held for keys scrolled past
constexpr int kMaxPinsAtOnce = 20;       // lines the monitor's chart can still tell apart

bool hasGlobCharacters(const QString &text)
{
    return text.contains(QLatin1Char('*')) || text.contains(QLatin1Char('?')) || text.contains(QLatin1Char('['));
}

} // namespace

KeyBrowser::KeyBrowser(QWidget *parent)
    : QWidget(parent)
{
    m_model = new KeyTreeModel(this);
    m_model->clear(m_separator);
    m_model->setKeptInOrder(true); // every group in natural order, sorted in the background as keys come

    m_view = new QTreeView(this);
    m_view->setModel(m_model);
    m_view->setUniformRowHeights(true);
    m_view->setAlternatingRowColors(true);
    m_view->setAllColumnsShowFocus(true);
    m_view->setAnimated(false);
    m_view->setSortingEnabled(false);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection); // several keys to pin at once
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    m_view->setItemDelegateForColumn(KeyTreeModel::UsageColumn, new UsageBarDelegate(KeyTreeModel::UsageFractionRole, m_view));
    QHeaderView *header = m_view->header();
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->setStretchLastSection(false);
    header->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('m'));
    const int widths[] = {15 * em, 13 * em, 8 * em, 10 * em, 6 * em, 6 * em};
    for (int c = 0; c < KeyTreeModel::ColumnCount; ++c)
        header->resizeSection(c, widths[c]);
    // The columns follow the view's width (its viewport is resized after this widget).
    m_view->viewport()->installEventFilter(this);
    // Widths dragged by hand are kept from then on; the panel still hides what does not fit.
    connect(header, &QHeaderView::sectionResized, this, [this](int column, int, int) {
        if (!m_fitting && column != KeyTreeModel::KeyColumn)
            m_preferredWidth[column] = m_view->header()->sectionSize(column);
    });

    m_progress = new QProgressBar(this);
    m_progress->setTextVisible(false);
    m_progress->setMaximumHeight(6);
    m_progress->setRange(0, 1000);
    m_progress->hide();
    m_progressLabel = new QLabel(this);
    m_progressLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_cancel = new QToolButton(this);
    m_cancel->setText(QStringLiteral("Stop"));
    m_cancel->setToolTip(QStringLiteral("Stop reading the keyspace; the keys found so far stay listed"));
    m_cancel->hide();
    m_problem = new QLabel(this);
    m_problem->setWordWrap(true);
    m_problem->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_problem->setStyleSheet(QStringLiteral("QLabel { color: #b02a1e; }"));
    m_problem->hide();

    auto *status = new QHBoxLayout;
    status->setContentsMargins(4, 2, 4, 2);
    status->addWidget(m_progressLabel, 1);
    status->addWidget(m_cancel);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(status);
    layout->addWidget(m_progress);
    layout->addWidget(m_problem);
    layout->addWidget(m_view, 1);

    connect(m_cancel, &QToolButton::clicked, this, &KeyBrowser::cancelScan);
    connect(m_view, &QTreeView::customContextMenuRequested, this, &KeyBrowser::showContextMenu);
    connect(m_view, &QTreeView::activated, this, [this](const QModelIndex &index) {
        if (m_model->keyId(index) != KeyTreeModel::kNoKey)
            emit openKeyRequested(index.data(KeyTreeModel::KeyRole).toByteArray());
    });
    auto userShaped = [this] {
        if (!m_autoExpanding)
            m_userShaped = true;
        scheduleDetails();
    };
    connect(m_view, &QTreeView::expanded, this, userShaped);
    connect(m_view, &QTreeView::collapsed, this, userShaped);

    // Columns follow the rows in view: after scrolling, resizing, expanding, new rows. Rows
    // the scan adds are read on the next turn of the event loop, so their read is queued
    // before the scan's next page comes back: the columns keep up with the rows in view.
    m_detailsTimer.setSingleShot(true);
    connect(&m_detailsTimer, &QTimer::timeout, this, &KeyBrowser::fetchVisibleDetails);
    connect(m_view->verticalScrollBar(), &QScrollBar::valueChanged, this, &KeyBrowser::scheduleDetails);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, &KeyBrowser::scheduleDetailsSoon);
    connect(m_model, &QAbstractItemModel::layoutChanged, this, &KeyBrowser::scheduleDetailsSoon);
    connect(m_model, &KeyTreeModel::inOrder, this, &KeyBrowser::checkSettled);
    connect(m_model, &KeyTreeModel::allShown, this, &KeyBrowser::checkSettled);
    m_goneClock.start();
    m_liveTimer.setInterval(kLiveRefreshMs);
    connect(&m_liveTimer, &TickTimer::timeout, this, &KeyBrowser::fetchVisibleDetails);
    m_policyTimer.setInterval(kPolicyCheckMs);
    connect(&m_policyTimer, &TickTimer::timeout, this, &KeyBrowser::checkPolicies);
    m_flushTimer.setSingleShot(true);
    connect(&m_flushTimer, &QTimer::timeout, this, &KeyBrowser::flush);
    m_progressTimer.setSingleShot(true);
    connect(&m_progressTimer, &QTimer::timeout, this, &KeyBrowser::updateProgress);

    updateProgress();
}

KeyBrowser::~KeyBrowser() = default;

void KeyBrowser::setClient(RedisClient *client, const QByteArray &ns, const QByteArray &separator)
{
    if (m_client) {
        m_client->cancel(&m_scanOwner);
        m_client->cancel(&m_detailsOwner);
        disconnect(m_client, nullptr, this, nullptr);
    }
    m_client = client;
    m_liveTimer.setClient(client);
    m_policyTimer.setClient(client);
    m_ns = ns;
    m_separator = separator.isEmpty() ? QByteArray(":") : separator;
    if (m_client) {
        connect(m_client, &RedisClient::stateChanged, this, &KeyBrowser::onClientState);
        connect(m_client, &RedisClient::statusChanged, this, &KeyBrowser::paceTimers);
    }
    paceTimers();
    refresh();
}

void KeyBrowser::paceTimers()
{
    // Slower on a slow link (RedisClient::pacedMs); a timer is restarted only when its period
    // changes, so that status updates never postpone its ticks.
    for (auto [timer, wanted] : {std::pair{&m_liveTimer, kLiveRefreshMs}, std::pair{&m_policyTimer, kPolicyCheckMs}}) {
        const int ms = m_client ? m_client->pacedMs(wanted) : wanted;
        if (timer->interval() != ms)
            timer->setInterval(ms);
    }
}

void KeyBrowser::setFilter(const QString &text)
{
    const QString t = text.trimmed();
    const QByteArray match = t.isEmpty() ? QByteArray("*") : hasGlobCharacters(t) ? t.toUtf8() : "*" + escapeGlob(t.toUtf8()) + "*";
    if (match == m_match)
        return;
    m_match = match;
    refresh();
}

void KeyBrowser::refresh()
{
    if (m_client) {
        m_client->cancel(&m_scanOwner);
        m_client->cancel(&m_detailsOwner);
    }
    m_model->clear(m_separator);
    m_gone.clear();
    m_lookingFor = false;
    m_flushTimer.stop();
    m_pending.clear();
    m_pendingAt = 0;
    m_pendingCount = 0;
    m_scan = ScanState::Idle;
    m_walk.reset();
    m_pagesAsked = 0;
    m_detailsWhileListing.invalidate();
    m_policies.reset(); // read again with the first page
    m_scanned = 0;
    m_dbSize = -1;
    m_detailsInFlight = 0;
    m_userShaped = false;
    m_wasSettled = false;
    m_problem->hide();
    m_liveTimer.stop();
    m_policyTimer.stop();
    if (m_client)
        startScan();
    updateProgress();
}

void KeyBrowser::startScan()
{
    m_scan = ScanState::Starting;
    m_scanClock.start();
    // A listing on a fast link keeps both cores busy (the worker reading, this thread
    // inserting): groups are sorted every few seconds meanwhile, and whole once it ends.
    m_model->setOrderPaced(kOrderPacedMs);
    m_sinceFlush.start();
    // A repeat(): asked in the same turn as the connection, it goes with the handshake.
    m_client->repeat(
        &m_scanOwner, m_listingMemory,
        [ns = MetadataNamespace(m_ns), match = m_match](Connection &c, const RedisClient::Tick &) {
            return readListingStart(c, ns, match, kScanCount);
        },
        [this](const Outcome<ListingStart> &o) {
            if (!o.ok()) {
                interrupted(o.failure().message, o.failure().isConnectionLoss());
                return;
            }
            m_dbSize = o.value().dbSize;
            if (m_match == "*")
                m_model->reserve(m_dbSize); // no index growth (a rehash of every name) mid-scan
            m_policies = std::make_shared<const std::vector<Policy>>(o.value().policies);
            if (!o.value().policyProblem.isEmpty()) {
                m_problem->setText(QStringLiteral("Policies could not be read, so no limits are shown: %1").arg(o.value().policyProblem));
                m_problem->show();
            }
            // Changes are followed from here: the next check compares with what this read.
            m_lastChange = o.value().lastChange.isNull() ? QStringLiteral("") : o.value().lastChange;
            m_marksRead.start();
            m_scan = ScanState::Paging;
            m_walk = std::make_shared<Walk>(Walk{o.value().first.cursor});
            onPage(o.value().first.cursor, o.value().first.names); // asks the next pages, if any
        });
    m_liveTimer.start();
    m_policyTimer.start();
}

void KeyBrowser::requestPage()
{
    // The first page small, for the first rows at once; then big ones, for throughput.
    // After it, on a slow link, each call asks for more (KeyScanner::countFor: 1,000 keys per
    // 2 ms of the measured round trip, at most 10,000), as the CLI's listing does.
    const double roundTripMs = m_client->status() ? m_client->status()->roundTripMs : -1;
    const int count = m_scanned == 0 || roundTripMs <= 0 ? kScanCount : KeyScanner::countFor(qint64(roundTripMs * 1000), kScanCount);
    const NamesPageRequest page{{}, m_match, m_scanned == 0 ? kScanCount : std::max(kPageKeys, count), count, kPageSliceMs};
    ++m_pagesAsked;
    // The background lane: the columns of the rows in view, and every other view's reads,
    // go first, and run between two SCAN calls of a page rather than cutting it short. The
    // page starts where the page before it ended (the walk lives on the worker; one owner's
    // requests run in the order they were made).
    m_client->request(
        &m_scanOwner, RedisClient::Lane::Background,
        [page, walk = m_walk, yield = m_client->betweenRequests()](Connection &c) {
            if (walk->done)
                return NamesPage{"0", {}}; // asked for before the last page came
            NamesPageRequest from = page;
            from.cursor = walk->cursor;
            NamesPage names = scanNamesPage(c, from, yield);
            walk->cursor = names.cursor;
            walk->done = names.cursor == "0";
            return names;
        },
        [this](const Outcome<NamesPage> &o) {
            --m_pagesAsked;
            if (!o.ok()) {
                interrupted(o.failure().message, o.failure().isConnectionLoss());
                return;
            }
            if (m_scan != ScanState::Paging && m_scan != ScanState::PageDeferred)
                return; // the empty page asked for after the last one
            onPage(o.value().cursor, o.value().names);
        });
}

void KeyBrowser::askPages()
{
    while (m_pagesAsked < kPagesAhead && pendingCount() < kMaxPending)
        requestPage(); // keeps the worker busy while the pages that came are inserted
    // None asked for while insertion lags far behind: flush() asks again.
    m_scan = m_pagesAsked > 0 ? ScanState::Paging : ScanState::PageDeferred;
}

void KeyBrowser::onPage(const QByteArray &cursor, const ScannedNames &names)
{
    const bool first = m_model->keyCount() == 0 && pendingCount() == 0;
    m_scanned += qsizetype(names.size());
    if (!names.empty()) {
        m_pending.push_back(names);
        m_pendingCount += qsizetype(names.size());
    }
    const bool last = cursor == "0";
    if (last)
        m_scan = ScanState::Draining;
    else
        askPages();
    if (last || (first && pendingCount() > 0) || m_sinceFlush.elapsed() >= kFlushIntervalMs)
        flush();
    else if (!m_flushTimer.isActive())
        m_flushTimer.start(int(std::max<qint64>(0, kFlushIntervalMs - m_sinceFlush.elapsed())));
    updateProgress();
}

qsizetype KeyBrowser::pendingCount() const
{
    return m_pendingCount;
}

void KeyBrowser::flush()
{
    // Insert in chunks for a few milliseconds at most, then let the event loop breathe:
    // painting, input and the stall probe of the tests come first.
    m_sinceFlush.restart();
    QElapsedTimer budget;
    budget.start();
    std::vector<QByteArrayView> chunk;
    while (pendingCount() > 0 && budget.elapsed() < kInsertBudgetMs) {
        const ScannedNames &page = m_pending.front();
        const size_t n = std::min(size_t(kInsertChunk), page.size() - m_pendingAt);
        chunk.clear();
        for (size_t i = m_pendingAt; i < m_pendingAt + n; ++i)
            chunk.push_back(page.at(i));
        m_model->addKeys(chunk.data(), chunk.size());
        m_pendingAt += n;
        m_pendingCount -= qsizetype(n);
        if (m_pendingAt == page.size()) {
            m_pending.pop_front(); // the model holds its own copy of the names
            m_pendingAt = 0;
        }
    }
    if (pendingCount() > 0)
        m_flushTimer.start(0); // the rest after the event loop has had a turn
    if ((m_scan == ScanState::PageDeferred || m_scan == ScanState::Paging) && pendingCount() < kMaxPending / 2)
        askPages();
    autoExpand();
    if (m_scan == ScanState::Draining && pendingCount() == 0)
        finish();
    else
        updateProgress();
}

void KeyBrowser::finish()
{
    m_scan = ScanState::Complete;
    m_scanMs = m_scanClock.elapsed();
    m_model->setOrderPaced(0);
    m_model->orderNow(kSortHereLimit); // the last keys: small groups here, big ones in a round started now
    autoExpand();
    updateProgress();
    emit scanFinished();
    scheduleDetails();
    checkSettled();
}

void KeyBrowser::cancelScan()
{
    if (!isScanning() || !m_client)
        return;
    m_client->cancel(&m_scanOwner);
    m_pagesAsked = 0;
    m_scan = ScanState::Stopped;
    flush(); // what was found stays listed
    m_model->setOrderPaced(0);
    m_scanMs = m_scanClock.elapsed();
    updateProgress();
    emit scanFinished();
    checkSettled();
}

void KeyBrowser::interrupted(const QString &why, bool connectionLoss)
{
    m_scan = connectionLoss ? ScanState::Paused : ScanState::Failed;
    if (m_client)
        m_client->cancel(&m_scanOwner); // the other page asked for: the walk starts over once back
    m_pagesAsked = 0;
    flush();
    m_model->setOrderPaced(0);
    m_scanMs = m_scanClock.elapsed();
    m_problem->setText(connectionLoss ? QStringLiteral("Reading keys was interrupted: %1. It resumes when the connection is back.").arg(why)
                                      : QStringLiteral("Reading keys failed: %1").arg(why));
    m_problem->show();
    updateProgress();
    emit scanFinished();
    checkSettled(); // a refusal is final until the user refreshes
}

void KeyBrowser::onClientState()
{
    // Lost, the columns stay as read then, greyed; back, each row is live once read again.
    const bool connected = m_client && m_client->state() == RedisClient::State::Connected;
    m_model->setLive(connected || !m_client);
    updateProgress();
    if (!connected)
        return;
    if (m_scan == ScanState::Paused) {
        // The walk starts over: a SCAN cursor is good only on the server that gave it, and the
        // server may have restarted or failed over meanwhile (its keys in another order: the
        // rest of the walk would skip some). What was listed stays; keys come again only once.
        m_problem->hide();
        if (m_policies) {
            m_model->setOrderPaced(kOrderPacedMs);
            m_scanned = 0;
            m_walk = std::make_shared<Walk>(Walk{"0"});
            askPages();
        } else {
            startScan();
        }
        updateProgress();
    }
    scheduleDetails();
}

QString KeyBrowser::progressText() const
{
    return m_progressLabel->text();
}

QString KeyBrowser::problemText() const
{
    return m_problem->isHidden() ? QString() : m_problem->text();
}

void KeyBrowser::updateProgress()
{
    // While keys come in, at a pace a person reads: a new value of the bar repaints it at once,
    // and a page comes every few milliseconds on a fast link.
    if (isScanning() && m_sinceProgress.isValid() && m_sinceProgress.elapsed() < kProgressMs) {
        if (!m_progressTimer.isActive())
            m_progressTimer.start(int(kProgressMs - m_sinceProgress.elapsed()));
        return;
    }
    m_progressTimer.stop();
    m_sinceProgress.start();
    const bool filtered = m_match != "*";
    const QString about = m_dbSize >= 0 ? formatCount(m_dbSize) : QStringLiteral("?");
    QString text;
    if (!m_client) {
        text = QStringLiteral("Not connected");
    } else if (isScanning()) {
        if (filtered)
            text = QStringLiteral("Scanning for %1: %2 found, %3 keys in the database")
                       .arg(QString::fromUtf8(m_match), formatCount(m_scanned), about);
        else
            text = QStringLiteral("Scanned %1 of about %2 keys").arg(formatCount(m_scanned), about);
    } else if (m_scan == ScanState::Paused) {
        text = QStringLiteral("Paused at %1 keys: waiting for the connection").arg(formatCount(m_scanned));
    } else if (m_scan == ScanState::Failed) {
        text = QStringLiteral("Listing stopped by an error: %1 keys listed").arg(formatCount(m_model->keyCount()));
    } else if (m_scan == ScanState::Complete) {
        text = QStringLiteral("%1%2 · read in %3")
                   .arg(formatKeys(m_model->keyCount()),
                        filtered ? QStringLiteral(" matching %1").arg(QString::fromUtf8(m_match)) : QString(), formatSpan(m_scanMs * 1000));
    } else if (m_scan == ScanState::Stopped || m_scanned > 0) {
        text = QStringLiteral("Stopped: %1 keys listed, of about %2").arg(formatCount(m_model->keyCount()), about);
    } else {
        text = QStringLiteral("Connecting…");
    }
    if (m_model->unlistedCount() > 0)
        text += QStringLiteral(" · %1 keys with names over 1 MiB not listed").arg(formatCount(m_model->unlistedCount()));
    // Not being followed comes first, on amber as on the other pages: it changes how every
    // figure below reads (a listing paused says so already).
    const bool notUpdating = !m_model->isLive() && m_scan != ScanState::Paused;
    if (notUpdating)
        text = QStringLiteral("Not updating: the connection is lost · %1").arg(text);
    m_progressLabel->setText(text);
    showNotUpdating(m_progressLabel, notUpdating);
    const bool scanning = isScanning();
    m_cancel->setVisible(scanning);
    m_progress->setVisible(scanning);
    if (scanning) {
        if (filtered || m_dbSize <= 0)
            m_progress->setRange(0, 0); // busy: how much of the keyspace is behind the cursor is unknown
        else {
            m_progress->setRange(0, 1000);
            m_progress->setValue(int(std::min<qint64>(1000, m_scanned * 1000 / std::max<qint64>(1, m_dbSize))));
        }
    }
}

// --- Columns for the rows in view ---

void KeyBrowser::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    scheduleDetails(); // more rows may be in view
}

bool KeyBrowser::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_view->viewport() && event->type() == QEvent::Resize && !m_fitting)
        fitColumns();
    return QWidget::eventFilter(watched, event);
}

void KeyBrowser::fitColumns()
{
    // The key keeps a readable width; the other columns follow in the order an operator needs
    // them, each shown while it fits, the rest hidden (the key's tooltip says it all).
    QHeaderView *header = m_view->header();
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('m'));
    const int available = m_view->viewport()->width();
    if (available <= 0)
        return;
    const int keyMin = 11 * em;
    const int defaults[] = {15 * em, 13 * em, 8 * em, 10 * em, 6 * em, 6 * em};
    std::vector<FittedColumn> order;
    for (const int column : {KeyTreeModel::UsageColumn, KeyTreeModel::AlgorithmColumn, KeyTreeModel::RemainingColumn,
                             KeyTreeModel::TtlColumn, KeyTreeModel::MemoryColumn})
        order.push_back({column, m_preferredWidth.value(column, defaults[column])});
    m_fitting = true;
    const int used = ratescope::ui::fitColumns(header, available, keyMin, order);
    header->resizeSection(KeyTreeModel::KeyColumn, std::max(keyMin, available - used));
    m_fitting = false;
}

void KeyBrowser::scheduleDetails()
{
    // After scrolling or resizing, a pause: one read for where the view comes to rest.
    if (!m_detailsTimer.isActive())
        m_detailsTimer.start(kDetailsDelayMs);
}

void KeyBrowser::scheduleDetailsSoon()
{
    if (!m_detailsTimer.isActive() || m_detailsTimer.remainingTime() > 0)
        m_detailsTimer.start(0);
}

std::vector<quint32> KeyBrowser::visibleKeyIds() const
{
    std::vector<quint32> ids;
    const int bottom = m_view->viewport()->height();
    for (QModelIndex i = m_view->indexAt(QPoint(1, 1)); i.isValid(); i = m_view->indexBelow(i)) {
        if (m_view->visualRect(i).top() > bottom)
            break;
        const quint32 id = m_model->keyId(i);
        if (id != KeyTreeModel::kNoKey)
            ids.push_back(id);
    }
    return ids;
}

void KeyBrowser::fetchVisibleDetails()
{
    if (!m_client || m_client->state() != RedisClient::State::Connected || !m_policies || !isVisible())
        return;
    if (isScanning()) {
        // While keys come in, the rows in view change with every insertion: their columns are
        // read at most once every kPaceRoundTrips round trips (100 ms .. 1 s), so that on a
        // slow link the listing's SCAN calls do not wait for a read of rows about to move each
        // time. The end of the listing reads the rows it comes to rest on (finish()).
        const double roundTripMs = m_client->status() ? m_client->status()->roundTripMs : 0;
        const qint64 everyMs = std::clamp<qint64>(qint64(roundTripMs * RedisClient::kPaceRoundTrips), kDetailsWhileListingMinMs,
                                                  kDetailsWhileListingMaxMs);
        if (m_detailsWhileListing.isValid() && m_detailsWhileListing.elapsed() < everyMs)
            return;
        m_detailsWhileListing.start();
    }
    const std::vector<quint32> visible = visibleKeyIds();
    m_model->trimDetails(kDetailsKept, visible);
    const std::vector<quint32> stale = m_model->claimStale(visible, kLiveRefreshMs - 100);
    const quint64 generation = m_model->generation();
    for (size_t at = 0; at < stale.size(); at += kDetailsBatch) {
        std::vector<quint32> ids(stale.begin() + qsizetype(at), stale.begin() + qsizetype(std::min(stale.size(), at + kDetailsBatch)));
        std::vector<QByteArray> keys;
        keys.reserve(ids.size());
        for (quint32 id : ids)
            keys.push_back(m_model->fullKey(id));
        ++m_detailsInFlight;
        const size_t batch = at / kDetailsBatch;
        if (m_detailsMemory.size() <= batch)
            m_detailsMemory.resize(batch + 1);
        if (!m_detailsMemory[batch])
            m_detailsMemory[batch] = RedisClient::newRepeatMemory();
        m_client->repeat(
            &m_detailsOwner, m_detailsMemory[batch],
            [keys = std::move(keys), policies = m_policies, ns = m_ns](Connection &c, const RedisClient::Tick &) {
                return readKeyDetails(c, keys, *policies, ns);
            },
            [this, ids, generation, policies = m_policies](const Outcome<std::vector<KeyDetails>> &o) {
                --m_detailsInFlight;
                if (generation != m_model->generation())
                    return;
                if (policies != m_policies) { // read under policies changed since: read again
                    m_model->releaseClaims(ids);
                    scheduleDetailsSoon();
                    checkSettled();
                    return;
                }
                if (o.ok()) {
                    followKeyspace(ids, o.value());
                } else {
                    m_model->releaseClaims(ids);
                    if (!o.failure().isConnectionLoss()) {
                        m_problem->setText(QStringLiteral("Reading key columns failed: %1").arg(o.failure().message));
                        m_problem->show();
                    }
                }
                checkSettled();
            });
    }
    checkSettled();
}

void KeyBrowser::followKeyspace(const std::vector<quint32> &ids, const std::vector<KeyDetails> &details)
{
    // Keys gone from the server leave the listing, remembered for a while in case they come
    // back (a limiter reset, then used again); a counter's next window is looked for as soon as
    // its current one is listed, so windows are listed as they turn.
    std::vector<quint32> gone;
    std::vector<QByteArray> lookFor;
    const qint64 now = m_goneClock.elapsed();
    for (size_t i = 0; i < ids.size() && i < details.size(); ++i) {
        const KeyDetails &d = details[i];
        if (!d.exists()) {
            gone.push_back(ids[i]);
            if (m_gone.size() < kGoneKept)
                m_gone.insert(m_model->fullKey(ids[i]), now);
        } else if (d.kind.format == KeyFormat::CounterWindow && d.kind.windowSeconds > 0) {
            const QByteArray next = counterWindowKey(d.kind.base, d.kind.windowId + 1);
            if (m_model->findKey(next) == KeyTreeModel::kNoKey && globMatch(m_match, next))
                lookFor.push_back(next);
        }
    }
    m_model->setDetails(ids, details);
    m_model->removeKeys(gone);
    if (!gone.empty())
        updateProgress(); // "N keys": the listing as it is now
    for (auto it = m_gone.begin(); it != m_gone.end();) {
        if (now - it.value() > kGoneKeptMs) {
            it = m_gone.erase(it);
        } else {
            lookFor.push_back(it.key());
            ++it;
        }
    }
    if (lookFor.empty() || m_lookingFor)
        return;
    m_lookingFor = true;
    m_client->request(
        &m_detailsOwner, [keys = std::move(lookFor)](Connection &c) { return existingKeys(c, keys); },
        [this, generation = m_model->generation()](const Outcome<std::vector<QByteArray>> &o) {
            m_lookingFor = false;
            if (!o.ok() || generation != m_model->generation() || o.value().empty())
                return;
            QByteArrayList back;
            for (const QByteArray &k : o.value()) {
                m_gone.remove(k);
                if (m_model->findKey(k) == KeyTreeModel::kNoKey)
                    back << k;
            }
            m_model->addKeys(back);
            if (!isScanning()) // in their place at once (a big group in the background)
                m_model->orderNow(kSortHereLimit);
            updateProgress();
            scheduleDetailsSoon();
        });
}

namespace {

// The same policies, at the same versions (in whatever order the store lists them).
bool samePolicies(const std::vector<Policy> &a, const std::vector<Policy> &b)
{
    if (a.size() != b.size())
        return false;
    QHash<QString, qint64> versions;
    for (const Policy &p : a)
        versions.insert(p.name, p.version);
    for (const Policy &p : b)
        if (versions.value(p.name, -1) != p.version)
            return false;
    return true;
}

} // namespace

void KeyBrowser::checkPolicies()
{
    if (m_policyCheckInFlight || !m_client || m_client->state() != RedisClient::State::Connected || !m_policies || !isVisible())
        return;
    if (m_marksRead.isValid() && m_marksRead.elapsed() < m_policyTimer.interval() / 2)
        return; // the listing's start read them a moment ago
    m_marksRead.invalidate();
    m_policyCheckInFlight = true;
    m_client->repeat(
        &m_detailsOwner, m_changesMemory, [ns = MetadataNamespace(m_ns)](Connection &c, const RedisClient::Tick &) { return readChangeMarks(c, ns); },
        [this](const Outcome<ChangeMarks> &o) {
            m_policyCheckInFlight = false;
            if (!o.ok() || !m_policies)
                return; // unreadable now: asked again on the next tick
            const bool policiesChanged = !samePolicies(o.value().policies, *m_policies);
            const bool somethingChanged = !m_lastChange.isNull() && o.value().lastChange != m_lastChange;
            m_lastChange = o.value().lastChange.isNull() ? QStringLiteral("") : o.value().lastChange;
            if (!policiesChanged && !somethingChanged)
                return;
            if (policiesChanged)
                m_policies = std::make_shared<const std::vector<Policy>>(o.value().policies);
            m_model->expireDetails();
            fetchVisibleDetails();
        });
}

void KeyBrowser::refreshKeys(const QList<QByteArray> &keys)
{
    if (!m_policies)
        return; // not listed yet: the listing will read them
    // A key not listed is looked for after the read, as one that left and came back is.
    const qint64 now = m_goneClock.elapsed();
    for (const QByteArray &k : keys)
        if (m_gone.size() < kGoneKept && m_model->findKey(k) == KeyTreeModel::kNoKey && globMatch(m_match, k))
            m_gone.insert(k, now);
    m_model->expireDetails();
    fetchVisibleDetails();
}

bool KeyBrowser::isSettled() const
{
    if (isScanning() || pendingCount() > 0 || m_detailsInFlight > 0 || m_detailsTimer.isActive() || !m_model->isInOrder() ||
        m_model->isHolding())
        return false;
    if (!m_client || m_client->state() != RedisClient::State::Connected)
        return false;
    for (quint32 id : visibleKeyIds())
        if (!m_model->details(id))
            return false;
    return m_scan != ScanState::Idle; // (Paused: not connected, above)
}

void KeyBrowser::checkSettled()
{
    const bool now = isSettled();
    if (now && !m_wasSettled)
        emit settled();
    m_wasSettled = now;
}

void KeyBrowser::autoExpand()
{
    if (m_userShaped)
        return;
    // Breadth first: open groups while everything shown fits in about a screenful, and close
    // again any that grew past it (a big group open during a scan costs a relayout per page).
    m_autoExpanding = true;
    int shown = m_model->rowCount();
    QQueue<QModelIndex> queue;
    for (int r = 0; r < m_model->rowCount() && r < kAutoExpandRows; ++r)
        queue.enqueue(m_model->index(r, 0));
    while (!queue.isEmpty()) {
        const QModelIndex g = queue.dequeue();
        if (!g.data(KeyTreeModel::IsGroupRole).toBool())
            continue;
        const int n = m_model->rowCount(g);
        if (shown + n > kAutoExpandRows) {
            if (m_view->isExpanded(g))
                m_view->collapse(g);
            continue;
        }
        shown += n;
        if (!m_view->isExpanded(g))
            m_view->expand(g);
        for (int r = 0; r < n && shown <= kAutoExpandRows; ++r)
            queue.enqueue(m_model->index(r, 0, g));
    }
    m_autoExpanding = false;
}

QList<QByteArray> KeyBrowser::selectedKeys() const
{
    QList<QByteArray> keys;
    QModelIndexList rows = m_view->selectionModel()->selectedRows(KeyTreeModel::KeyColumn);
    // Top to bottom as shown, whatever order they were selected in.
    std::sort(rows.begin(), rows.end(),
              [this](const QModelIndex &a, const QModelIndex &b) { return m_view->visualRect(a).top() < m_view->visualRect(b).top(); });
    for (const QModelIndex &row : rows)
        if (m_model->keyId(row) != KeyTreeModel::kNoKey)
            keys.append(row.data(KeyTreeModel::KeyRole).toByteArray());
    return keys;
}

QByteArray KeyBrowser::customerAt(const QPoint &viewportPos, bool pointed) const
{
    const QModelIndex index = m_view->indexAt(viewportPos).siblingAtColumn(KeyTreeModel::KeyColumn);
    if (!index.isValid() || m_model->keyId(index) == KeyTreeModel::kNoKey)
        return {};
    const QByteArray key = index.data(KeyTreeModel::KeyRole).toByteArray();
    qsizetype at = -1;
    // The cell shows the key's last part (its group shows the rest): the byte under the mouse.
    const QString shown = index.data(Qt::DisplayRole).toString();
    const QByteArray shownBytes = shown.toUtf8();
    const QRect cell = m_view->visualRect(index);
    if (pointed && !shown.isEmpty() && key.endsWith(shownBytes) && cell.contains(viewportPos)) {
        const int margin = m_view->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, m_view) + 1;
        const int into = viewportPos.x() - cell.left() - margin;
        const QFontMetrics metrics(index.data(Qt::FontRole).isValid() ? index.data(Qt::FontRole).value<QFont>() : m_view->font());
        for (qsizetype i = 1; into >= 0 && i <= shown.size(); ++i)
            if (metrics.horizontalAdvance(shown.left(i)) > into) {
                at = key.size() - shownBytes.size() + shown.left(i - 1).toUtf8().size();
                break;
            }
    }
    return lookupIdAt(key, at);
}

void KeyBrowser::showContextMenu(const QPoint &pos)
{
    const QModelIndex index = m_view->indexAt(pos);
    if (!index.isValid())
        return;
    // Persistent: the scan goes on while the menu is open, inserting and sorting rows.
    const QPersistentModelIndex first(index.siblingAtColumn(0));
    const QByteArray key = first.data(KeyTreeModel::KeyRole).toByteArray();
    // popup(), not exec(): no nested event loop on the GUI thread.
    auto *menu = new QMenu(this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    if (first.data(KeyTreeModel::IsGroupRole).toBool()) {
        const QString pattern = QString::fromUtf8(first.data(KeyTreeModel::PatternRole).toByteArray());
        // A group of one limiter's shards opens as that limiter: its shards side by side.
        if (const QByteArray base = first.data(KeyTreeModel::ShardBaseRole).toByteArray(); !base.isEmpty()) {
            QAction *open = menu->addAction(QStringLiteral("Open the sharded limiter %1").arg(displayKey(base)), this,
                                            [this, base] { emit openKeyRequested(base); });
            open->setObjectName(QStringLiteral("openShardedLimiter"));
            menu->addSeparator();
        }
        menu->addAction(m_view->isExpanded(first) ? QStringLiteral("Collapse") : QStringLiteral("Expand"), this, [this, first] {
            if (first.isValid()) // gone when the keyspace was read again meanwhile
                m_view->setExpanded(first, !m_view->isExpanded(first));
        });
        menu->addAction(QStringLiteral("Show only %1").arg(pattern), this, [this, pattern] { emit filterRequested(pattern); });
        menu->addAction(QStringLiteral("Copy pattern"), this, [pattern] { QApplication::clipboard()->setText(pattern); });
        // Ratescope's own metadata is never offered for a reset.
        const QByteArray raw = first.data(KeyTreeModel::PatternRole).toByteArray();
        if (!raw.startsWith(m_ns)) {
            menu->addSeparator();
            menu->setToolTipsVisible(true);
            QAction *reset =
                menu->addAction(QStringLiteral("Reset all keys of this group…"), this, [this, raw] { emit resetGroupRequested(raw); });
            const QString locked = whyReadOnly(m_client);
            reset->setEnabled(locked.isEmpty());
            reset->setToolTip(locked.isEmpty() ? QStringLiteral("Preview the keys %1 matches, then delete exactly those").arg(pattern)
                                               : locked);
        }
    } else {
        // On a selected row the pin takes every selected key; on another row, that key alone.
        // A selection is counted before it is walked: select-all in a big group is cheap to
        // refuse, expensive to list.
        QList<QByteArray> pinned;
        qint64 selected = 0;
        if (m_view->selectionModel()->isRowSelected(first.row(), first.parent())) {
            for (const QItemSelectionRange &range : m_view->selectionModel()->selection())
                if (range.left() == 0)
                    selected += range.height();
            if (selected <= kMaxPinsAtOnce)
                pinned = selectedKeys();
        }
        if (pinned.isEmpty() && selected <= kMaxPinsAtOnce)
            pinned = {key};
        menu->addAction(QStringLiteral("Open"), this, [this, key] { emit openKeyRequested(key); });
        // The segment under the mouse; from the keyboard's menu key, where the mouse is not.
        const QPoint mouse = m_view->viewport()->mapFromGlobal(QCursor::pos());
        const QByteArray customer = customerAt(pos, (mouse - pos).manhattanLength() <= 3);
        if (!customer.isEmpty()) {
            QAction *look = menu->addAction(QStringLiteral("Look up this customer: %1").arg(displayKey(customer)), this,
                                            [this, customer] { emit lookupRequested(customer); });
            look->setObjectName(QStringLiteral("lookUpCustomer"));
            look->setToolTip(QStringLiteral("Every limiter whose key holds %1 as a segment, on the Lookup tab (Ctrl+K)")
                                 .arg(displayKey(customer)));
        }
        if (pinned.isEmpty()) {
            menu->addAction(QStringLiteral("Pin to monitor: select at most %1 keys").arg(kMaxPinsAtOnce))->setEnabled(false);
        } else {
            menu->addAction(pinned.size() == 1 ? QStringLiteral("Pin to monitor")
                                               : QStringLiteral("Pin %1 keys to monitor").arg(formatCount(pinned.size())),
                            this, [this, pinned] {
                                for (const QByteArray &k : pinned)
                                    emit pinKeyRequested(k);
                            });
        }
        // The selection the pin took, or the row's key, without Ratescope's own metadata.
        QList<QByteArray> acted = pinned.isEmpty() ? QList<QByteArray>{key} : pinned;
        acted.removeIf([this](const QByteArray &k) { return k.startsWith(m_ns); });
        if (!acted.isEmpty()) {
            menu->addSeparator();
            addKeyActions(menu, m_client, acted,
                          [this](KeyAction action, const QList<QByteArray> &keys) { emit keyActionRequested(action, keys); });
        }
        menu->addSeparator();
        menu->addAction(QStringLiteral("Copy name"), this, [key] { QApplication::clipboard()->setText(QString::fromUtf8(key)); });
    }
    menu->popup(m_view->viewport()->mapToGlobal(pos));
}

} // namespace ratescope::ui
