#include "hotpage.h"

#include "displayformat.h"
#include "fitwidth.h"
#include "base/errors.h"
#include "base/glob.h"
#include "hotmodel.h"
#include "hotqueries.h"
#include "usagebardelegate.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace ratescope::ui {

namespace {

const QColor kProblem(0xd3, 0x2f, 0x2f); // reads on light and dark backgrounds

const std::pair<qint64, const char *> kIntervals[] = {
    {250000, "250 ms"}, {1000000, "1 s"}, {5000000, "5 s"}, {10000000, "10 s"}, {30000000, "30 s"}, {60000000, "1 min"},
};

// What one scan step brought back.
QLabel *plainLabel(QWidget *parent)
{
    auto *l = new QLabel(parent);
    l->setTextFormat(Qt::PlainText); // globs and keys come from people and servers
    return l;
}

} // namespace

HotPage::HotPage(QWidget *parent)
    : QWidget(parent)
{
    m_order = new QComboBox(this);
    m_order->addItem(QStringLiteral("Admitted / s"), int(HotOrder::Rate));
    m_order->addItem(QStringLiteral("Fill"), int(HotOrder::Fill));
    m_order->addItem(QStringLiteral("Denying now"), int(HotOrder::DenyingNow));
    m_order->setToolTip(QStringLiteral("Busiest by requests admitted per second, by how full they are, or only those denying now"));
    m_interval = new QComboBox(this);
    for (const auto &[us, name] : kIntervals)
        m_interval->addItem(QLatin1String(name), us);
    m_interval->setCurrentIndex(1);
    m_interval->setToolTip(QStringLiteral("Rates are measured between two reads this far apart; also the auto-refresh period"));
    m_max = new QSpinBox(this);
    m_max->setRange(1, 5000);
    m_max->setValue(50);
    m_max->setToolTip(QStringLiteral("How many limiters to show"));
    m_match = new QLineEdit(this);
    m_match->setPlaceholderText(QStringLiteral("every key"));
    m_match->setMinimumWidth(220);
    m_match->setClearButtonEnabled(true);
    m_match->setToolTip(QStringLiteral("Only keys matching this SCAN MATCH glob (* ? [abc])"));
    m_sample = new QSpinBox(this);
    m_sample->setRange(1000, 100000000);
    m_sample->setSingleStep(50000);
    m_sample->setValue(200000);
    m_sample->setGroupSeparatorShown(true);
    m_sample->setToolTip(QStringLiteral("Above this many keys, one pass reads a sample of this many (SCAN's first ones) and says so"));
    m_refresh = new QPushButton(QStringLiteral("Refresh"), this);
    m_refresh->setObjectName(QStringLiteral("refresh"));
    m_refresh->setDefault(true);
    m_auto = new QCheckBox(QStringLiteral("Every interval"), this);
    m_auto->setToolTip(QStringLiteral("Pass again as soon as one ends, while this tab is shown"));

    // Two short rows, so that the tab stays narrow beside the keys panel.
    auto *controls = new QHBoxLayout;
    auto *scope = new QHBoxLayout;
    controls->setSpacing(6);
    scope->setSpacing(6);
    auto addLabelled = [&](QHBoxLayout *row, const QString &text, QWidget *w) {
        auto *l = new QLabel(text, this);
        l->setBuddy(w);
        row->addWidget(l);
        row->addWidget(w);
    };
    addLabelled(controls, QStringLiteral("Busiest by"), m_order);
    addLabelled(controls, QStringLiteral("over"), m_interval);
    addLabelled(controls, QStringLiteral("show"), m_max);
    controls->addWidget(m_refresh);
    controls->addWidget(m_auto);
    controls->addStretch(1);
    addLabelled(scope, QStringLiteral("Keys matching"), m_match);
    addLabelled(scope, QStringLiteral("sample above"), m_sample);
    scope->addStretch(1);

    m_statusLabel = plainLabel(this);
    m_statusLabel->setObjectName(QStringLiteral("status"));
    m_statusLabel->setWordWrap(true);
    m_statusLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(false);
    m_progress->setMaximumHeight(8);
    m_progress->setMaximumWidth(160);
    m_progress->hide();
    auto *statusRow = new QHBoxLayout;
    statusRow->addWidget(m_progress);
    statusRow->addWidget(m_statusLabel, 1);

    m_model = new HotLimiterModel(this);
    m_sorted = new QSortFilterProxyModel(this);
    m_sorted->setSourceModel(m_model);
    m_sorted->setSortRole(HotLimiterModel::SortRole);
    m_view = new QTableView(this);
    m_view->setModel(m_sorted);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    m_view->setTextElideMode(Qt::ElideMiddle);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 8);
    m_view->setSortingEnabled(false); // the pass's own order first; a header click sorts
    m_view->horizontalHeader()->setSectionsClickable(true);
    m_view->horizontalHeader()->setStretchLastSection(false);
    m_view->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff); // the columns fit the width instead
    m_view->setColumnHidden(HotLimiterModel::Master, true);
    fitOnResize(m_view, [this] { fitColumns(); });
    m_view->setItemDelegateForColumn(HotLimiterModel::Used, new UsageBarDelegate(HotLimiterModel::FractionRole, m_view));
    m_view->setItemDelegateForColumn(HotLimiterModel::Rate, new UsageBarDelegate(HotLimiterModel::FractionRole, m_view, true));
    connect(m_view->horizontalHeader(), &QHeaderView::sectionClicked, this, [this](int section) {
        if (!m_view->isSortingEnabled()) {
            m_view->setSortingEnabled(true);
            m_view->sortByColumn(section, section == HotLimiterModel::Key || section == HotLimiterModel::Algorithm ||
                                                  section == HotLimiterModel::Master
                                              ? Qt::AscendingOrder
                                              : Qt::DescendingOrder);
        }
    });
    connect(m_view, &QTableView::doubleClicked, this, [this](const QModelIndex &index) {
        const QByteArray key = index.data(HotLimiterModel::KeyBytesRole).toByteArray();
        if (!key.isEmpty())
            emit openKeyRequested(key);
    });

    m_masters = new HotMasterModel(this);
    m_mastersView = new QTableView(this);
    m_mastersView->setModel(m_masters);
    m_mastersView->setSelectionMode(QAbstractItemView::NoSelection);
    m_mastersView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_mastersView->verticalHeader()->hide();
    m_mastersView->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 8);
    m_mastersView->horizontalHeader()->setSectionResizeMode(HotMasterModel::Share, QHeaderView::Stretch);
    m_mastersView->setItemDelegateForColumn(HotMasterModel::Share, new UsageBarDelegate(HotMasterModel::FractionRole, m_mastersView, true));
    m_mastersTitle = new QLabel(QStringLiteral("Per master"), this);
    QFont bold = m_mastersTitle->font();
    bold.setBold(true);
    m_mastersTitle->setFont(bold);
    auto *mastersBox = new QWidget(this);
    auto *mastersLayout = new QVBoxLayout(mastersBox);
    mastersLayout->setContentsMargins(0, 4, 0, 0);
    mastersLayout->addWidget(m_mastersTitle);
    mastersLayout->addWidget(m_mastersView);
    mastersBox->hide();
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_view);
    splitter->addWidget(mastersBox);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    splitter->setChildrenCollapsible(false);

    auto *hint = plainLabel(this);
    hint->setText(QStringLiteral("Read-only: one SCAN pass and two pipelined reads an interval apart. Double-click a limiter to open it."));
    hint->setForegroundRole(QPalette::PlaceholderText);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 8, 8, 8);
    layout->setSpacing(6);
    layout->addLayout(controls);
    layout->addLayout(scope);
    layout->addLayout(statusRow);
    layout->addWidget(splitter, 1);
    layout->addWidget(hint);

    m_wait.setSingleShot(true);
    connect(&m_wait, &QTimer::timeout, this, &HotPage::readSecond);
    m_again.setSingleShot(true);
    connect(&m_again, &QTimer::timeout, this, [this] {
        if (isVisible() && m_auto->isChecked())
            refresh();
    });
    connect(m_refresh, &QPushButton::clicked, this, [this] {
        if (m_running)
            cancel();
        else
            refresh();
    });
    connect(m_match, &QLineEdit::returnPressed, this, &HotPage::refresh);
    connect(m_auto, &QCheckBox::toggled, this, [this](bool on) {
        if (on && !m_running && isVisible())
            refresh();
        else if (!on)
            m_again.stop();
    });
    setStatus(QStringLiteral("Not read yet."));
    updateControls();
}

HotPage::~HotPage()
{
    cancel();
}

void HotPage::setClient(RedisClient *client, const QByteArray &ns)
{
    cancel();
    if (m_client)
        disconnect(m_client, nullptr, this, nullptr);
    m_client = client;
    m_ns = ns;
    if (!client) {
        if (m_loaded)
            setStatus(m_status + QStringLiteral(" (disconnected: values as of then)"));
        updateControls();
        return;
    }
    m_loaded = false;
    m_model->clear();
    m_masters->clear();
    setStatus(QStringLiteral("Not read yet: press Refresh."));
    connect(client, &RedisClient::stateChanged, this, [this] {
        updateControls();
        if (m_client && m_client->state() == RedisClient::State::Connected && isVisible() && !m_loaded && !m_running)
            refresh();
    });
    updateControls();
    if (isVisible() && client->state() == RedisClient::State::Connected)
        refresh();
}

void HotPage::setOrder(HotOrder order)
{
    m_order->setCurrentIndex(m_order->findData(int(order)));
}

void HotPage::setIntervalUs(qint64 us)
{
    int at = m_interval->findData(us);
    if (at < 0) {
        m_interval->addItem(formatSpan(us), us);
        at = m_interval->count() - 1;
    }
    m_interval->setCurrentIndex(at);
}

void HotPage::setMaxRows(int rows)
{
    m_max->setValue(rows);
}

void HotPage::setMatch(const QString &glob)
{
    m_match->setText(glob);
}

void HotPage::setSampleAbove(qint64 keys)
{
    m_sample->setValue(int(std::clamp<qint64>(keys, m_sample->minimum(), m_sample->maximum())));
}

void HotPage::setAutoRefresh(bool on)
{
    m_auto->setChecked(on);
}

HotOptions HotPage::optionsFromControls(const std::vector<Policy> &policies) const
{
    HotOptions o;
    o.match = m_match->text().trimmed().isEmpty() ? QByteArray("*") : m_match->text().trimmed().toUtf8();
    o.intervalUs = m_interval->currentData().toLongLong();
    o.sampleAbove = m_sample->value();
    o.policies = policies;
    o.ns = m_ns;
    // Ranked by rate, only the rows shown need their fill: read after ranking.
    o.readUsage = HotOrder(m_order->currentData().toInt()) != HotOrder::Rate;
    return o;
}

void HotPage::refresh()
{
    cancel();
    m_again.stop();
    if (!m_client) {
        setStatus(QStringLiteral("Not connected."), true);
        m_loaded = true;
        emit loaded();
        return;
    }
    if (m_client->state() != RedisClient::State::Connected) {
        setStatus(QStringLiteral("Waiting for the connection…")); // it refreshes once connected
        return;
    }
    const QByteArray glob = m_match->text().trimmed().toUtf8();
    if (const QString problem = globSyntaxProblem(glob); !glob.isEmpty() && !problem.isEmpty()) {
        setStatus(QStringLiteral("The glob %1: fix it, then refresh.").arg(problem), true);
        m_loaded = true;
        emit loaded();
        return;
    }
    m_running = true;
    m_loaded = false;
    m_runOrder = HotOrder(m_order->currentData().toInt());
    m_runMax = m_max->value();
    m_clock.start();
    const int generation = ++m_generation;
    m_progress->setValue(0);
    m_progress->show();
    setStatus(QStringLiteral("Reading the policies…"));
    updateControls();
    // The policies first (their limits give fill and denying), then the scan in steps.
    m_client->request(
        &m_requests, [ns = MetadataNamespace(m_ns)](Connection &c) { return readPolicies(c, ns); },
        [this, generation](const Outcome<std::vector<Policy>> &o) {
            if (generation != m_generation)
                return;
            if (!o.ok()) {
                failed(o.failure().message);
                return;
            }
            try {
                m_scanner = std::make_shared<HotScanner>(optionsFromControls(o.value()));
            } catch (const Error &e) {
                failed(e.message());
                return;
            }
            scanStep();
        });
}

void HotPage::scanStep()
{
    const int generation = m_generation;
    m_client->request(
        &m_requests, RedisClient::Lane::Background,
        // A few pages per request; the console's own reads run between two of them.
        [scanner = m_scanner, yield = m_client->betweenRequests()](Connection &c) {
            return hotScanStep(c, *scanner, kPagesPerStep, yield);
        },
        [this, generation](const Outcome<HotScanStep> &o) {
            if (generation != m_generation)
                return;
            if (!o.ok()) {
                failed(o.failure().message);
                return;
            }
            const HotScanStep &s = o.value();
            const qint64 target = std::max<qint64>(1, std::min(s.keys, s.sampleAbove));
            m_progress->setValue(int(std::min<qint64>(900, s.scanned * 900 / target)));
            setStatus(QStringLiteral("Scanning: %1 of %2…").arg(formatCount(s.scanned), formatKeys(target)));
            emit progressed();
            if (s.done)
                readFirst();
            else
                scanStep();
        });
}

void HotPage::readFirst()
{
    const int generation = m_generation;
    setStatus(QStringLiteral("Reading every limiter found…"));
    m_client->request(
        &m_requests, RedisClient::Lane::Background,
        [scanner = m_scanner](Connection &c) { return hotFirstRead(c, *scanner); },
        [this, generation](const Outcome<bool> &o) {
            if (generation != m_generation)
                return;
            if (!o.ok()) {
                failed(o.failure().message);
                return;
            }
            m_progress->setValue(930);
            setStatus(QStringLiteral("Counting what they admit for %1…").arg(m_interval->currentText()));
            m_wait.start(int(std::max<qint64>(1, m_scanner->intervalUs() / 1000)));
        });
}

void HotPage::readSecond()
{
    const int generation = m_generation;
    m_client->request(
        &m_requests, RedisClient::Lane::Background,
        [scanner = m_scanner, order = m_runOrder, max = m_runMax](Connection &c) { return hotSecondRead(c, *scanner, order, max); },
        [this, generation](const Outcome<std::pair<qint64, HotPass>> &o) {
            if (generation != m_generation)
                return;
            if (!o.ok()) {
                failed(o.failure().message);
                return;
            }
            const qint64 found = o.value().first;
            HotPass pass = o.value().second;
            const qint64 shown = qint64(pass.limiters.size());
            QString text = QStringLiteral("%1 · %2 limiters in %3")
                               .arg(QDateTime::fromMSecsSinceEpoch(pass.nowUs / 1000).toString(QStringLiteral("HH:mm:ss")),
                                    formatCount(found), formatKeys(pass.keysInDatabase));
            if (pass.sampled)
                text += QStringLiteral(" (a sample: the first %1 scanned)").arg(formatCount(pass.sampleSize));
            text += QStringLiteral(" · admitted per second over %1 · pass took %2")
                        .arg(m_interval->currentText(), formatSpan(m_clock.nsecsElapsed() / 1000));
            if (m_runOrder == HotOrder::DenyingNow)
                text += shown ? QStringLiteral(" · %1 denying now").arg(formatCount(shown)) : QStringLiteral(" · none is denying now");
            m_status = text;
            finished(std::move(pass));
        });
}

void HotPage::finished(HotPass pass)
{
    m_running = false;
    m_loaded = true;
    m_scanner.reset();
    m_progress->hide();
    m_view->setSortingEnabled(false);
    m_sorted->sort(-1); // the pass's own order
    const bool cluster = pass.masters.size() > 1;
    m_cluster = cluster;
    fitColumns();
    m_masters->setMasters(pass.masters, pass.usageRead);
    m_mastersView->parentWidget()->setVisible(cluster);
    m_model->setLimiters(std::move(pass.limiters));
    setStatus(m_status);
    updateControls();
    emit loaded();
    if (m_auto->isChecked() && isVisible())
        m_again.start(0);
}

void HotPage::failed(const QString &why)
{
    m_running = false;
    m_loaded = true;
    m_scanner.reset();
    m_progress->hide();
    setStatus(QStringLiteral("The pass stopped: %1").arg(why), true);
    updateControls();
    emit loaded();
}

void HotPage::cancel()
{
    ++m_generation;
    m_wait.stop();
    if (m_client)
        m_client->cancel(&m_requests);
    if (m_running) {
        m_running = false;
        m_progress->hide();
        setStatus(QStringLiteral("Cancelled."));
    }
    m_scanner.reset(); // a step under way keeps its own reference until it ends
    updateControls();
}

QString HotPage::statusText() const
{
    return m_statusLabel->text();
}

void HotPage::setStatus(const QString &text, bool problem)
{
    if (!problem)
        m_status = text;
    m_statusLabel->setText(text);
    m_statusLabel->setStyleSheet(problem ? QStringLiteral("QLabel { color: %1; }").arg(kProblem.name()) : QString());
}

void HotPage::updateControls()
{
    const bool connected = m_client && m_client->state() == RedisClient::State::Connected;
    m_refresh->setText(m_running ? QStringLiteral("Cancel") : QStringLiteral("Refresh"));
    m_refresh->setEnabled(m_running || connected);
    for (QWidget *w : std::initializer_list<QWidget *>{m_order, m_interval, m_max, m_match, m_sample})
        w->setEnabled(!m_running);
}

void HotPage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (!m_everShown || (m_auto->isChecked() && !m_running)) {
        m_everShown = true;
        if (m_client && !m_running && !m_loaded)
            refresh();
        else if (m_auto->isChecked() && !m_running)
            m_again.start(0);
    }
}

void HotPage::fitColumns()
{
    const int available = m_view->viewport()->width();
    if (available <= 0)
        return;
    const int em = m_view->fontMetrics().horizontalAdvance(QLatin1Char('m'));
    // The row's tooltip has a hidden column's algorithm and figures. On a cluster, where each
    // limiter lives comes before its algorithm.
    std::vector<FittedColumn> order = {{HotLimiterModel::Used, 12 * em}, {HotLimiterModel::Rate, 10 * em},
                                       {HotLimiterModel::Fill, 10 * em}};
    if (m_cluster)
        order.push_back({HotLimiterModel::Master, 12 * em});
    else
        m_view->setColumnHidden(HotLimiterModel::Master, true);
    order.push_back({HotLimiterModel::Algorithm, 16 * em});
    const int used = ratescope::ui::fitColumns(m_view->horizontalHeader(), available, 14 * em, order);
    m_view->setColumnWidth(HotLimiterModel::Key, available - used); // the limiter takes the rest
}

void HotPage::hideEvent(QHideEvent *event)
{
    QWidget::hideEvent(event);
    m_again.stop(); // a pass under way ends; the next one waits for the tab
}

} // namespace ratescope::ui
