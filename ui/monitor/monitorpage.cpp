#include "monitorpage.h"
#include "chartpalette.h"

#include "displayformat.h"
#include "base/duration.h"
#include "base/errors.h"
#include "base/keytext.h"
#include "monitorlegendmodel.h"
#include "monitorround.h"
#include "samplering.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDateTime>
#include <QEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSaveFile>
#include <QSplitter>
#include <QTableView>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QDateTimeAxis>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <QToolButton>
#include <QToolTip>
#include <QMouseEvent>
#include <QGraphicsLineItem>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace ratescope::ui {

struct MonitorPin {
    enum class Status { Pending, Drawing, NoLimits, NotLimiter, Problem };

    quint64 id = 0;
    QByteArray key;
    QString shown;
    QColor color;
    Status status = Status::Pending;
    KeyKind kind;
    std::optional<LimitSpec> spec;
    QString policy;
    QString problem;
    QByteArray type;
    bool absent = false; // read as a fresh limiter: the key did not exist when classified
    bool needsClassify = true;
    bool classifying = false;
    qint64 classifiedAtUs = 0;
    SampleRing ring;
    std::vector<QLineSeries *> segments; // one per unbroken stretch in view
    QLineSeries *limitLine = nullptr;    // absolute mode: this key's limit
};

namespace {

// Keys take the console's series colours (chartpalette.h); red is kept for the denied-now marks.
const QColor kDenied(0xdc, 0x26, 0x26);

qint64 localNowUs()
{
    return QDateTime::currentMSecsSinceEpoch() * 1000;
}

QString clockText(qint64 us)
{
    return QDateTime::fromMSecsSinceEpoch(us / 1000).toString(QStringLiteral("HH:mm:ss"));
}

QString intervalText(int ms)
{
    return ms < 1000 ? QStringLiteral("%1 ms").arg(ms) : QStringLiteral("%1 s").arg(ms / 1000);
}

} // namespace

const QList<int> &MonitorPage::intervalChoicesMs()
{
    static const QList<int> choices{100, 250, 500, 1000, 2000, 5000, 10000};
    return choices;
}

MonitorPage::MonitorPage(QWidget *parent)
    : QWidget(parent)
    , m_requests(new QObject(this))
{
    m_intervalBox = new QComboBox;
    for (int ms : intervalChoicesMs())
        m_intervalBox->addItem(intervalText(ms), ms);
    m_intervalBox->setCurrentIndex(int(intervalChoicesMs().indexOf(m_intervalMs)));
    m_intervalBox->setToolTip(QStringLiteral("How often the pinned keys are read (one pipelined round trip each time)"));
    m_spanBox = new QComboBox;
    for (int m : {1, 5, 10})
        m_spanBox->addItem(QStringLiteral("last %1 min").arg(m), m);
    m_spanBox->setCurrentIndex(1);
    m_modeBox = new QComboBox;
    m_modeBox->addItem(QStringLiteral("% of limit"), true);
    m_modeBox->addItem(QStringLiteral("units of cost"), false);
    m_modeBox->setToolTip(QStringLiteral("Remaining quota as a share of each key's limit, or in the limit's own units"));
    m_pauseButton = new QPushButton(QStringLiteral("Pause"));
    m_pauseButton->setCheckable(true);
    m_unpinButton = new QPushButton(QStringLiteral("Unpin"));
    m_unpinButton->setEnabled(false);
    m_unpinButton->setToolTip(QStringLiteral("Stop monitoring the selected keys"));
    // One button for both exports keeps the controls within the tab beside the keys panel.
    auto *exportButton = new QToolButton;
    exportButton->setText(QStringLiteral("Export"));
    exportButton->setPopupMode(QToolButton::InstantPopup);
    auto *exportMenu = new QMenu(exportButton);
    exportMenu->setToolTipsVisible(true);
    QAction *pngButton = exportMenu->addAction(QStringLiteral("Chart as PNG…"));
    QAction *csvButton = exportMenu->addAction(QStringLiteral("Readings as CSV…"));
    csvButton->setToolTip(QStringLiteral("One row per tick per key: time_us, key, used, limit, remaining, retry_after_ms"));
    exportButton->setMenu(exportMenu);

    auto *controls = new QHBoxLayout;
    controls->addWidget(new QLabel(QStringLiteral("Read every")));
    controls->addWidget(m_intervalBox);
    controls->addSpacing(8);
    controls->addWidget(new QLabel(QStringLiteral("Show")));
    controls->addWidget(m_spanBox);
    controls->addSpacing(8);
    controls->addWidget(new QLabel(QStringLiteral("Remaining in")));
    controls->addWidget(m_modeBox);
    controls->addSpacing(8);
    controls->addWidget(m_pauseButton);
    controls->addStretch(1);

    m_note = new QLabel;
    m_note->setTextFormat(Qt::PlainText);
    m_note->setWordWrap(true);
    m_note->setMargin(6);
    m_note->setAutoFillBackground(true);
    m_note->hide();

    m_chart = new QChart;
    m_chart->legend()->hide(); // the table below is the legend: escaped keys, values, unpin
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_timeAxis = new QDateTimeAxis;
    m_timeAxis->setFormat(QStringLiteral("HH:mm:ss"));
    m_timeAxis->setTitleText(QStringLiteral("Time (server clock, HH:MM:SS)"));
    m_valueAxis = new QValueAxis;
    m_valueAxis->setLabelFormat(QStringLiteral("%.0f"));
    m_chart->addAxis(m_timeAxis, Qt::AlignBottom);
    m_chart->addAxis(m_valueAxis, Qt::AlignLeft);
    m_limitLine = new QLineSeries;
    m_limitLine->setName(QStringLiteral("limit"));
    m_deniedMarks = new QScatterSeries;
    m_deniedMarks->setName(QStringLiteral("denied now"));
    m_deniedMarks->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    m_deniedMarks->setMarkerSize(11);
    for (QXYSeries *s : {static_cast<QXYSeries *>(m_limitLine), static_cast<QXYSeries *>(m_deniedMarks)}) {
        m_chart->addSeries(s);
        s->attachAxis(m_timeAxis);
        s->attachAxis(m_valueAxis);
    }
    m_chartView = new QChartView(m_chart);
    m_chartView->setRenderHint(QPainter::Antialiasing);
    m_chartView->setMinimumHeight(240);
    // Anywhere over the plot, a vertical line at that time and every key's reading there.
    m_chartView->setMouseTracking(true);
    m_chartView->viewport()->installEventFilter(this);
    m_crosshair = new QGraphicsLineItem(m_chart);
    m_crosshair->setZValue(20);
    m_crosshair->hide();

    m_legend = new MonitorLegendModel(this);
    m_legendView = new QTableView;
    m_legendView->setModel(m_legend);
    m_legendView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_legendView->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_legendView->setContextMenuPolicy(Qt::CustomContextMenu);
    m_legendView->setWordWrap(false);
    m_legendView->setTextElideMode(Qt::ElideMiddle);
    m_legendView->verticalHeader()->hide();
    m_legendView->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_legendView->verticalHeader()->setDefaultSectionSize(m_legendView->fontMetrics().height() + 8);
    QHeaderView *header = m_legendView->horizontalHeader();
    // The figures as wide as they are (at most 20 rows); the key takes the rest, elided in the
    // middle when the page is narrow.
    header->setStretchLastSection(false);
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    header->setSectionResizeMode(MonitorLegendModel::KeyColumn, QHeaderView::Stretch);
    header->setResizeContentsPrecision(20); // measured on the rows in view and up to 20, not every row on every tick

    auto *split = new QSplitter(Qt::Vertical);
    split->addWidget(m_chartView);
    split->addWidget(m_legendView);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    split->setChildrenCollapsible(false);
    split->setSizes({560, 150});

    m_status = new QLabel;
    m_status->setTextFormat(Qt::PlainText);
    m_status->setWordWrap(true); // no minimum width of its own: the page fits beside the keys panel
    // What acts on the pinned keys sits under their table; the controls above stay one short row.
    auto *bottom = new QHBoxLayout;
    bottom->addWidget(m_status, 1);
    bottom->addWidget(m_unpinButton);
    bottom->addWidget(exportButton);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_note);
    layout->addWidget(split, 1);
    layout->addLayout(bottom);

    connect(m_intervalBox, &QComboBox::activated, this, [this](int i) { setIntervalMs(m_intervalBox->itemData(i).toInt()); });
    connect(m_spanBox, &QComboBox::activated, this, [this](int i) { setSpanMinutes(m_spanBox->itemData(i).toInt()); });
    connect(m_modeBox, &QComboBox::activated, this, [this](int i) { setShowPercent(m_modeBox->itemData(i).toBool()); });
    connect(m_pauseButton, &QPushButton::toggled, this, &MonitorPage::setPaused);
    connect(m_unpinButton, &QPushButton::clicked, this, &MonitorPage::unpinSelected);
    connect(m_legendView->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { m_unpinButton->setEnabled(m_legendView->selectionModel()->hasSelection()); });
    connect(m_legendView, &QWidget::customContextMenuRequested, this, [this](const QPoint &at) {
        const QModelIndex index = m_legendView->indexAt(at);
        if (!index.isValid())
            return;
        const QByteArray key = index.data(MonitorLegendModel::KeyRole).toByteArray();
        QMenu menu;
        menu.addAction(QStringLiteral("Unpin"), this, [this, key] { unpin(key); });
        menu.addAction(QStringLiteral("Copy key"), this, [key] { QApplication::clipboard()->setText(QString::fromUtf8(key)); });
        menu.exec(m_legendView->viewport()->mapToGlobal(at));
    });
    connect(pngButton, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export the chart"), QStringLiteral("monitor.png"),
                                                          QStringLiteral("PNG images (*.png)"));
        QString error;
        if (!path.isEmpty() && !exportPng(path, &error))
            m_status->setText(error);
    });
    connect(csvButton, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export the samples"), QStringLiteral("monitor.csv"),
                                                          QStringLiteral("CSV files (*.csv)"));
        QString error;
        if (!path.isEmpty() && !exportCsv(path, &error))
            m_status->setText(error);
    });
    connect(&m_timer, &TickTimer::timeout, this, &MonitorPage::tick);

    applyTheme();
    redraw();
    updateNote();
    updateStatus();
}

MonitorPage::~MonitorPage() = default;

MonitorPin *MonitorPage::find(const QByteArray &key) const
{
    for (const auto &p : m_pins)
        if (p->key == key)
            return p.get();
    return nullptr;
}

MonitorPin *MonitorPage::findId(quint64 id) const
{
    for (const auto &p : m_pins)
        if (p->id == id)
            return p.get();
    return nullptr;
}

qint64 MonitorPage::nowUs() const
{
    return m_clock ? m_clock() : localNowUs() + m_offsetUs;
}

void MonitorPage::setClient(RedisClient *client, const QByteArray &ns)
{
    if (m_client) {
        m_client->cancel(m_requests);
        disconnect(m_client, nullptr, this, nullptr);
    }
    m_inFlight = false;
    m_classifying = false;
    for (auto &p : m_pins) {
        p->classifying = false;
        p->needsClassify = true; // another server, or the same after a while: limits may differ
    }
    m_client = client;
    m_timer.setClient(client);
    m_ns = ns;
    if (!client) {
        m_timer.stop();
        if (!m_stale && !m_pins.empty()) {
            for (auto &p : m_pins)
                p->ring.pushGap(m_lastNowUs);
            m_lostAtUs = m_lastNowUs ? m_lastNowUs : nowUs();
        }
        m_stale = true;
        m_lost = false;
        for (auto &p : m_pins)
            refreshLegendRow(*p);
        updateNote();
        redraw();
        updateStatus();
        return;
    }
    m_stale = false;
    connect(client, &RedisClient::stateChanged, this, &MonitorPage::onStateChanged);
    onStateChanged(client->state());
}

void MonitorPage::onStateChanged(RedisClient::State state)
{
    if (state == RedisClient::State::Connected) {
        if (m_lost) {
            m_lost = false;
            for (auto &p : m_pins)
                p->needsClassify = true; // policies or the keys may have changed meanwhile
        }
        requestClassification();
        restartTimer();
    } else if (state != RedisClient::State::Idle && state != RedisClient::State::Connecting) {
        markLost(m_client ? m_client->lastError() : QString());
    } else {
        m_timer.stop();
    }
    updateNote();
    updateStatus();
}

void MonitorPage::markLost(const QString &why)
{
    if (!m_lost) {
        m_lost = true;
        m_lostAtUs = m_lastNowUs ? std::max(m_lastNowUs, nowUs()) : nowUs();
        for (auto &p : m_pins)
            p->ring.pushGap(m_lostAtUs);
    }
    m_lostWhy = why;
    m_timer.stop();
    for (auto &p : m_pins)
        refreshLegendRow(*p);
    redraw();
    updateNote();
    updateStatus();
}

void MonitorPage::restartTimer()
{
    if (m_autoTick && m_client && m_client->state() == RedisClient::State::Connected && !m_paused && !m_pins.empty())
        m_timer.start(m_intervalMs);
    else
        m_timer.stop();
}

void MonitorPage::pin(const QByteArray &key)
{
    if (key.isEmpty() || find(key))
        return;
    auto p = std::make_unique<MonitorPin>();
    p->id = m_nextId++;
    p->key = key;
    p->shown = displayKey(key);
    p->color = seriesColor(m_nextColor++);
    p->ring.setCapacity(size_t(kHistoryUs / (qint64(m_intervalMs) * 1000)) + 2);
    MonitorPin &pin = *p;
    m_pins.push_back(std::move(p));
    m_legend->append({});
    refreshLegendRow(pin);
    if (m_pins.size() == 21)
        for (auto &p : m_pins)
            styleSeries(*p); // thin lines from now on
    m_wasLoaded = false;     // loaded() again once this key has its first reading
    requestClassification();
    restartTimer();
    redraw();
    updateStatus();
}

void MonitorPage::unpin(const QByteArray &key)
{
    for (size_t i = 0; i < m_pins.size(); ++i) {
        if (m_pins[i]->key != key)
            continue;
        MonitorPin &p = *m_pins[i];
        for (QLineSeries *s : p.segments) {
            m_chart->removeSeries(s);
            delete s;
        }
        if (p.limitLine) {
            m_chart->removeSeries(p.limitLine);
            delete p.limitLine;
        }
        m_pins.erase(m_pins.begin() + qsizetype(i));
        m_legend->remove(int(i));
        if (m_pins.size() == 20)
            for (auto &other : m_pins)
                styleSeries(*other);
        break;
    }
    restartTimer();
    redraw();
    updateStatus();
    checkLoaded();
}

void MonitorPage::unpinSelected()
{
    QList<QByteArray> keys;
    for (const QModelIndex &i : m_legendView->selectionModel()->selectedRows())
        keys << i.data(MonitorLegendModel::KeyRole).toByteArray();
    for (const QByteArray &k : keys)
        unpin(k);
}

QList<QByteArray> MonitorPage::pinnedKeys() const
{
    QList<QByteArray> keys;
    for (const auto &p : m_pins)
        keys << p->key;
    return keys;
}

bool MonitorPage::isLoaded() const
{
    for (const auto &p : m_pins) {
        if (p->status == MonitorPin::Status::Pending)
            return false;
        if (p->status == MonitorPin::Status::Drawing && p->ring.empty())
            return false;
    }
    return true;
}

bool MonitorPage::isBusy() const
{
    if (m_inFlight || m_classifying)
        return true;
    for (const auto &p : m_pins)
        if (p->needsClassify)
            return true;
    return false;
}

void MonitorPage::checkLoaded()
{
    const bool now = isLoaded();
    if (now && !m_wasLoaded) {
        m_wasLoaded = true;
        emit loaded();
    }
    m_wasLoaded = now;
}

void MonitorPage::setIntervalMs(int ms)
{
    ms = std::clamp(ms, intervalChoicesMs().first(), intervalChoicesMs().last());
    m_intervalMs = ms;
    const int at = int(intervalChoicesMs().indexOf(ms));
    if (at >= 0)
        m_intervalBox->setCurrentIndex(at);
    for (auto &p : m_pins)
        p->ring.setCapacity(size_t(kHistoryUs / (qint64(ms) * 1000)) + 2);
    m_recentSkips.clear();
    restartTimer();
    updateStatus();
}

void MonitorPage::setSpanMinutes(int minutes)
{
    m_spanMinutes = std::clamp(minutes, 1, 10);
    m_spanBox->setCurrentIndex(m_spanMinutes <= 1 ? 0 : m_spanMinutes <= 5 ? 1 : 2);
    redraw();
}

void MonitorPage::setShowPercent(bool percent)
{
    m_percent = percent;
    m_modeBox->setCurrentIndex(percent ? 0 : 1);
    redraw();
}

void MonitorPage::setPaused(bool paused)
{
    if (m_paused == paused)
        return;
    m_paused = paused;
    m_pauseButton->setChecked(paused);
    m_pauseButton->setText(paused ? QStringLiteral("Resume") : QStringLiteral("Pause"));
    if (paused) {
        for (auto &p : m_pins)
            p->ring.pushGap(m_lastNowUs); // no line across the pause
    }
    restartTimer();
    updateStatus();
}

void MonitorPage::setClock(std::function<qint64()> nowUs)
{
    m_clock = std::move(nowUs);
}

void MonitorPage::setAutoTick(bool on)
{
    m_autoTick = on;
    restartTimer();
}

void MonitorPage::tickNow()
{
    tick();
}

void MonitorPage::requestClassification()
{
    if (!m_client || m_client->state() != RedisClient::State::Connected || m_classifying)
        return;
    std::vector<quint64> ids;
    std::vector<QByteArray> keys;
    for (auto &p : m_pins) {
        if (p->needsClassify && !p->classifying) {
            ids.push_back(p->id);
            keys.push_back(p->key);
            p->classifying = true;
        }
    }
    if (ids.empty())
        return;
    m_classifying = true;
    const QByteArray ns = m_ns;
    const qint64 sentUs = localNowUs();
    m_client->request(
        m_requests, [keys, ns](Connection &c) { return classifyPins(c, keys, ns); },
        [this, ids, sentUs](const Outcome<PinClassification> &o) {
            m_classifying = false;
            for (size_t i = 0; i < ids.size(); ++i) {
                MonitorPin *p = findId(ids[i]);
                if (!p)
                    continue; // unpinned meanwhile
                p->classifying = false;
                if (!o.ok()) {
                    p->problem = o.failure().message;
                    continue; // stays to be classified: after the reconnect, or at the next tick
                }
                const KeyDetails &d = o.value().details[i];
                p->needsClassify = false;
                p->classifiedAtUs = localNowUs();
                const bool wasDrawing = p->status == MonitorPin::Status::Drawing;
                p->kind = pinKind(d); // a key gone: what its policy says it is, at full quota
                p->spec = d.spec;
                p->policy = d.policy;
                p->type = d.type;
                p->problem.clear();
                p->absent = !d.exists();
                if (p->kind.isLimiter() && !p->kind.readable()) {
                    p->status = MonitorPin::Status::Problem;
                    p->problem = QStringLiteral("%1: its state is not read").arg(p->kind.label());
                } else if (p->kind.isLimiter() && p->spec) {
                    try {
                        p->spec->validate();
                        p->status = MonitorPin::Status::Drawing;
                    } catch (const UsageError &e) {
                        p->status = MonitorPin::Status::Problem;
                        p->problem = e.message();
                    }
                } else if (p->kind.isLimiter() || !d.exists()) {
                    p->status = MonitorPin::Status::NoLimits;
                } else {
                    p->status = MonitorPin::Status::NotLimiter;
                    if (wasDrawing)
                        p->ring.pushGap(m_lastNowUs);
                }
                refreshLegendRow(*p);
            }
            if (o.ok() && o.value().serverTimeUs)
                m_offsetUs = *o.value().serverTimeUs - (sentUs + localNowUs()) / 2;
            if (!o.ok() && o.failure().isConnectionLoss())
                markLost(o.failure().message);
            redraw();
            updateStatus();
            checkLoaded();
            requestClassification(); // keys pinned while this one was under way
        });
}

void MonitorPage::tick()
{
    if (!m_client || m_client->state() != RedisClient::State::Connected || m_paused)
        return;
    // Keys that changed, are absent or are no limiter are looked at again now and then.
    const qint64 localUs = localNowUs();
    for (auto &p : m_pins) {
        const bool recheck = p->status == MonitorPin::Status::NotLimiter || p->status == MonitorPin::Status::NoLimits || p->absent;
        if (recheck && !p->classifying && localUs - p->classifiedAtUs > 10000000)
            p->needsClassify = true;
    }
    requestClassification();
    if (m_inFlight) {
        // Never two rounds at once: the server (or the worker) is slower than the interval.
        ++m_ticksSkipped;
        m_recentSkips.push_back(localUs / 1000);
        updateStatus();
        return;
    }
    std::vector<quint64> ids;
    std::vector<UsageTarget> targets;
    for (auto &p : m_pins) {
        if (p->status != MonitorPin::Status::Drawing || p->needsClassify)
            continue;
        ids.push_back(p->id);
        targets.push_back({p->kind.subject(p->key), p->kind, *p->spec});
    }
    if (targets.empty())
        return;
    const qint64 now = nowUs();
    m_inFlight = true;
    ++m_ticksSent;
    const qint64 sentUs = localUs;
    m_client->repeat(
        m_requests, m_roundMemory,
        [targets = std::move(targets), now](Connection &c, const RedisClient::Tick &) { return readMonitorRound(c, targets, now); },
        [this, ids, sentUs](const Outcome<MonitorRound> &o) {
            m_inFlight = false;
            if (!o.ok()) {
                if (o.failure().isConnectionLoss())
                    markLost(o.failure().message);
                else
                    m_status->setText(QStringLiteral("The last reading failed: %1").arg(o.failure().message));
                return;
            }
            if (o.value().serverTimeUs && !m_clock)
                m_offsetUs = *o.value().serverTimeUs - (sentUs + localNowUs()) / 2;
            applyRound(ids, o.value());
        });
}

void MonitorPage::applyRound(const std::vector<quint64> &ids, const MonitorRound &round)
{
    m_roundTrips += round.roundTrips;
    m_lastNowUs = std::max(m_lastNowUs, round.nowUs);
    bool reclassify = false;
    for (size_t i = 0; i < ids.size(); ++i) {
        MonitorPin *p = findId(ids[i]);
        if (!p || p->status != MonitorPin::Status::Drawing)
            continue;
        if (const auto &u = round.usage[i]) {
            p->ring.push({round.nowUs, u->usedNow, u->decision.limit, u->decision.retryAfterUs, false});
        } else {
            // Its type changed or its state no longer reads as classified: look again, and
            // break its line meanwhile; the other keys go on.
            p->ring.pushGap(round.nowUs);
            p->problem = round.problems[i];
            p->needsClassify = true;
            reclassify = true;
        }
        refreshLegendRow(*p);
    }
    if (reclassify)
        requestClassification();
    redraw();
    updateStatus();
    checkLoaded();
    emit ticked();
}

void MonitorPage::refreshLegendRow(MonitorPin &p)
{
    int row = -1;
    for (size_t i = 0; i < m_pins.size(); ++i)
        if (m_pins[i].get() == &p)
            row = int(i);
    if (row < 0)
        return;
    LegendRow r;
    r.key = p.key;
    r.shownKey = p.shown;
    r.color = p.color;
    r.kind = p.status == MonitorPin::Status::Pending ? QString() : p.kind.isLimiter() ? p.kind.label() : QString::fromUtf8(p.type);
    if (p.spec && p.kind.isLimiter())
        r.kind += QStringLiteral(", ") + formatLimit(*p.spec);
    switch (p.status) {
    case MonitorPin::Status::Pending:
        r.status = QStringLiteral("reading…");
        break;
    case MonitorPin::Status::NoLimits:
        r.status =
            p.absent ? QStringLiteral("no such key, and no limits known: add a policy") : QStringLiteral("no limits known: add a policy");
        break;
    case MonitorPin::Status::NotLimiter:
        r.status = p.ring.empty() ? QStringLiteral("not a limiter (a %1): not drawn").arg(QString::fromUtf8(p.type))
                                  : QStringLiteral("no longer a limiter (now a %1): stopped drawing").arg(QString::fromUtf8(p.type));
        break;
    case MonitorPin::Status::Problem:
        r.status = p.problem;
        break;
    case MonitorPin::Status::Drawing:
        r.drawn = true;
        if ((m_lost || m_stale) && !p.ring.empty()) {
            // Not live: the last reading, said to be one.
            for (size_t i = p.ring.size(); i-- > 0;) {
                const MonitorSample &s = p.ring.at(i);
                if (!s.gap) {
                    r.current = QStringLiteral("%1 / %2").arg(formatCount(s.remaining()), formatCount(s.limit));
                    r.status = QStringLiteral("not live: last read at %1").arg(clockText(s.timeUs));
                    break;
                }
            }
        } else if (!p.ring.empty() && !p.ring.newest().gap) {
            const MonitorSample &s = p.ring.newest();
            r.current = QStringLiteral("%1 / %2").arg(formatCount(s.remaining()), formatCount(s.limit));
            r.denied = s.denied();
            r.status =
                r.denied ? QStringLiteral("denied: passes in %1").arg(formatSpan(s.retryAfterUs)) : QStringLiteral("allowed");
            if (p.absent && s.used == 0)
                r.status += QStringLiteral(" (no such key: a fresh limiter)");
        } else if (!p.problem.isEmpty()) {
            r.status = QStringLiteral("read failed, looking again: %1").arg(p.problem);
        } else {
            r.status = QStringLiteral("waiting for the first reading");
        }
        break;
    }
    m_legend->update(row, r);
}

void MonitorPage::styleSeries(MonitorPin &p)
{
    QPen pen(p.color);
    pen.setWidthF(m_pins.size() > 20 ? 1 : 2); // thin lines paint much faster, and a hundred overlap less
    for (QLineSeries *s : p.segments)
        s->setPen(pen);
    if (p.limitLine) {
        QPen dashed(p.color);
        dashed.setWidthF(1);
        dashed.setStyle(Qt::DashLine);
        p.limitLine->setPen(dashed);
    }
}

void MonitorPage::applyTheme()
{
    const QPalette pal = palette();
    const bool dark = isDarkPalette(pal);
    applyChartPalette(m_chart, pal, QPalette::Base);
    m_chart->legend()->hide();
    const QColor text = pal.color(QPalette::Text);
    m_chart->setTitleBrush(pal.color(QPalette::PlaceholderText));
    m_chart->setTitleFont(font());
    QPen limitPen(text);
    limitPen.setStyle(Qt::DashLine);
    limitPen.setWidthF(1.5);
    m_limitLine->setPen(limitPen);
    m_deniedMarks->setColor(kDenied);
    m_deniedMarks->setBorderColor(pal.color(QPalette::Base));
    for (auto &p : m_pins)
        styleSeries(*p);
    QPalette notePal = m_note->palette();
    notePal.setColor(QPalette::Window, dark ? QColor(0x5c, 0x1a, 0x1a) : QColor(0xfd, 0xe2, 0xe2));
    notePal.setColor(QPalette::WindowText, dark ? QColor(0xfe, 0xca, 0xca) : QColor(0x7f, 0x1d, 0x1d));
    m_note->setPalette(notePal);
}

void MonitorPage::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        applyTheme();
}

void MonitorPage::redraw()
{
    const qint64 right = m_lastNowUs ? m_lastNowUs : nowUs();
    // The span chosen is the most shown: while the keys' history is shorter, the axis covers
    // the history (at least a minute), so that new pins fill the chart rather than a sliver.
    qint64 oldestUs = right;
    for (const auto &p : m_pins)
        if (!p->ring.empty())
            oldestUs = std::min(oldestUs, p->ring.at(0).timeUs);
    const qint64 spanUs = std::clamp<qint64>(right - oldestUs, 60 * 1000000LL, qint64(m_spanMinutes) * 60 * 1000000);
    const qint64 left = right - spanUs;
    const double leftMs = double(left) / 1000.0, rightMs = double(right) / 1000.0;
    // Ticks on round times (every 5 s, 10 s, 15 s, 30 s, 1 min, ...), at most 12 where 12
    // labels ("18:33:00") fit, else 7: the axis from the tick before the span to the first
    // tick after the newest reading and a little room (its denied mark is not cut in half).
    const bool roomy = m_chart->plotArea().width() >= 11 * 75;
    const qint64 most = roomy ? 11 : 6;
    qint64 axisLeft = left, intervals = most;
    for (const qint64 stepS : {1, 2, 5, 10, 15, 30, 60, 120, 300, 600}) {
        const qint64 step = stepS * 1000000;
        axisLeft = left / step * step;
        intervals = unitsRoundedUp(right + spanUs / 40 - axisLeft, step);
        if (intervals <= most) {
            m_timeAxis->setRange(QDateTime::fromMSecsSinceEpoch(axisLeft / 1000),
                                 QDateTime::fromMSecsSinceEpoch((axisLeft + intervals * step) / 1000));
            break;
        }
    }
    m_timeAxis->setTickCount(int(std::min(intervals, most)) + 1);

    // Points per line: one per pixel; with many keys one per six pixels (each point costs in
    // Qt Charts' geometry and hover shape on every tick, and lines that many overlap anyway).
    const bool many = m_pins.size() > 20;
    const int maxPoints = std::max(many ? 60 : 200, int(m_chart->plotArea().width()) / (many ? 6 : 1));
    // Antialiased wide lines cost the most to paint: with many keys, crisp lines instead.
    m_chartView->setRenderHint(QPainter::Antialiasing, m_pins.size() <= 20);
    qint64 maxLimit = 0;
    QList<QPointF> denied;
    bool added = false;
    for (auto &pp : m_pins) {
        MonitorPin &p = *pp;
        const bool drawn = p.status == MonitorPin::Status::Drawing;
        // Unbroken stretches in view, one series each (Qt Charts draws no gaps within one).
        std::vector<QList<QPointF>> runs;
        qint64 limit = 0;
        if (drawn) {
            // More readings than pixels (ten minutes at 100 ms): each pixel pair gets the
            // lowest and highest reading in it, in time order, so no dip is lost.
            const size_t first = p.ring.lowerBound(left);
            const qint64 bucketUs = p.ring.size() - first > size_t(maxPoints) ? std::max<qint64>(1, (right - left) / (maxPoints / 2)) : 0;
            QList<QPointF> run;
            qint64 bucket = -1;
            QPointF lo, hi, last;
            auto flush = [&] {
                if (bucket < 0)
                    return;
                run.append(lo.x() <= hi.x() ? lo : hi);
                if (lo != hi)
                    run.append(lo.x() <= hi.x() ? hi : lo);
                bucket = -1;
            };
            auto endRun = [&] {
                flush();
                if (!run.isEmpty() && run.constLast() != last)
                    run.append(last); // the newest reading exactly: the legend and the marks show it
                if (!run.isEmpty())
                    runs.push_back(std::move(run));
                run = {};
            };
            run.reserve(qsizetype(std::min<size_t>(p.ring.size() - first, size_t(maxPoints) + 2)));
            for (size_t i = first; i < p.ring.size(); ++i) {
                const MonitorSample &s = p.ring.at(i);
                if (s.gap) {
                    endRun();
                    continue;
                }
                limit = s.limit;
                const double y = m_percent ? (s.limit > 0 ? 100.0 * double(s.remaining()) / double(s.limit) : 0) : double(s.remaining());
                const QPointF point(double(s.timeUs) / 1000.0, y);
                last = point;
                if (!bucketUs) {
                    run.append(point);
                    continue;
                }
                const qint64 b = (s.timeUs - left) / bucketUs;
                if (b != bucket) {
                    flush();
                    bucket = b;
                    lo = hi = point;
                } else {
                    if (y < lo.y())
                        lo = point;
                    if (y > hi.y())
                        hi = point;
                }
            }
            endRun();
            if (!p.ring.empty() && !p.ring.newest().gap && p.ring.newest().denied() && !runs.empty())
                denied.append(runs.back().constLast());
        }
        maxLimit = std::max(maxLimit, limit);
        while (p.segments.size() < runs.size()) {
            auto *s = new QLineSeries;
            s->setName(p.shown);
            m_chart->addSeries(s);
            s->attachAxis(m_timeAxis);
            s->attachAxis(m_valueAxis);
            p.segments.push_back(s);
            styleSeries(p);
            added = true;
        }
        for (size_t i = 0; i < p.segments.size(); ++i) {
            QLineSeries *s = p.segments[i];
            if (i < runs.size())
                s->replace(runs[i]);
            else if (s->count() > 0)
                s->clear();
        }
        const bool ownLimit = drawn && !m_percent && limit > 0;
        if (ownLimit && !p.limitLine) {
            p.limitLine = new QLineSeries;
            p.limitLine->setName(p.shown + QStringLiteral(" limit"));
            m_chart->addSeries(p.limitLine);
            p.limitLine->attachAxis(m_timeAxis);
            p.limitLine->attachAxis(m_valueAxis);
            styleSeries(p);
            added = true;
        }
        if (p.limitLine)
            p.limitLine->replace(ownLimit ? QList<QPointF>{{leftMs, double(limit)}, {rightMs, double(limit)}} : QList<QPointF>{});
    }
    if (added) {
        // Series draw in the order they were added: the denied marks stay on top.
        m_chart->removeSeries(m_deniedMarks);
        m_chart->addSeries(m_deniedMarks);
        m_deniedMarks->attachAxis(m_timeAxis);
        m_deniedMarks->attachAxis(m_valueAxis);
        applyTheme();
    }
    m_limitLine->replace(m_percent && !m_pins.empty() ? QList<QPointF>{{leftMs, 100.0}, {rightMs, 100.0}} : QList<QPointF>{});
    m_deniedMarks->replace(denied);
    if (m_percent) {
        // Remaining is at most 100 %: a little room above the limit line, ticks every 25 %.
        m_valueAxis->setRange(0, 108);
        m_valueAxis->setTickType(QValueAxis::TicksDynamic);
        m_valueAxis->setTickAnchor(0);
        m_valueAxis->setTickInterval(25);
        m_valueAxis->setTitleText(QStringLiteral("Remaining (% of limit)"));
    } else {
        m_valueAxis->setTickType(QValueAxis::TicksFixed);
        m_valueAxis->setRange(0, std::max<double>(1, double(maxLimit) * 1.1));
        m_valueAxis->setTickCount(6);
        m_valueAxis->applyNiceNumbers();
        m_valueAxis->setTitleText(QStringLiteral("Remaining (units of cost)"));
    }
    m_chart->setTitle(
        m_pins.empty() ? QStringLiteral("No keys pinned: pin keys from the keys panel (right click) to watch their remaining quota")
        : m_percent    ? QStringLiteral("Remaining quota per key · dashed: the limit (100 %) · red square: denied now")
                       : QStringLiteral("Remaining quota per key · dashed: each key's limit, in its colour · red square: denied now"));
    if (m_hoverAt && m_crosshair->isVisible()) // the axis moved under a still mouse: what is under it now
        showReadingsAt(*m_hoverAt, m_chartView->viewport()->mapToGlobal(*m_hoverAt));
}

QString MonitorPage::readingsAt(qint64 timeUs) const
{
    // A reading counts as "at" this time within two reading intervals of it (a gap, or a key
    // pinned later, has none).
    const qint64 near = std::max<qint64>(2LL * m_intervalMs * 1000, 1000000);
    struct Line {
        double fraction;
        QString text;
    };
    std::vector<Line> lines;
    for (const auto &pp : m_pins) {
        const MonitorPin &p = *pp;
        if (p.status != MonitorPin::Status::Drawing || p.ring.empty())
            continue;
        size_t i = std::min(p.ring.lowerBound(timeUs), p.ring.size() - 1);
        if (i > 0 && std::llabs(p.ring.at(i - 1).timeUs - timeUs) < std::llabs(p.ring.at(i).timeUs - timeUs))
            --i;
        const MonitorSample &s = p.ring.at(i);
        if (s.gap || std::llabs(s.timeUs - timeUs) > near)
            continue;
        const double fraction = s.limit > 0 ? double(s.remaining()) / double(s.limit) : 0.0;
        QString text = QStringLiteral("%1: %2 of %3 left (%4 %)")
                           .arg(p.shown, formatCount(s.remaining()), formatCount(s.limit))
                           .arg(100.0 * fraction, 0, 'f', 0);
        if (s.denied())
            text += QStringLiteral(", denied: passes in %1").arg(formatSpan(s.retryAfterUs));
        lines.push_back({fraction, text});
    }
    if (lines.empty())
        return {};
    std::stable_sort(lines.begin(), lines.end(), [](const Line &a, const Line &b) { return a.fraction < b.fraction; });
    constexpr size_t kMostLines = 12;
    QStringList out{QDateTime::fromMSecsSinceEpoch(timeUs / 1000).toString(QStringLiteral("HH:mm:ss"))};
    for (size_t i = 0; i < std::min(lines.size(), kMostLines); ++i)
        out << lines[i].text;
    if (lines.size() > kMostLines)
        out << QStringLiteral("and %1 more keys, fuller than these").arg(lines.size() - kMostLines);
    return out.join(QLatin1Char('\n'));
}

bool MonitorPage::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_chartView->viewport()) {
        if (event->type() == QEvent::MouseMove) {
            const auto *move = static_cast<QMouseEvent *>(event);
            m_hoverAt = move->position().toPoint();
            showReadingsAt(*m_hoverAt, move->globalPosition().toPoint());
        } else if (event->type() == QEvent::Leave) {
            m_hoverAt.reset();
            hideReadings();
        }
    }
    return QWidget::eventFilter(watched, event);
}

void MonitorPage::showReadingsAt(const QPoint &viewPos, const QPoint &globalPos)
{
    const QPointF scenePos = m_chartView->mapToScene(viewPos);
    const QPointF chartPos = m_chart->mapFromScene(scenePos);
    const QRectF plot = m_chart->plotArea();
    if (!plot.contains(chartPos) || m_pins.empty()) {
        hideReadings();
        return;
    }
    const double ms = m_chart->mapToValue(chartPos, m_limitLine).x();
    const QString text = readingsAt(qint64(ms * 1000.0));
    if (text.isEmpty()) {
        hideReadings();
        return;
    }
    QColor c = palette().color(QPalette::WindowText);
    c.setAlpha(110);
    m_crosshair->setPen(QPen(c, 1));
    m_crosshair->setLine(QLineF(chartPos.x(), plot.top(), chartPos.x(), plot.bottom()));
    m_crosshair->show();
    QToolTip::showText(globalPos, text, m_chartView);
}

void MonitorPage::hideReadings()
{
    m_crosshair->hide();
    QToolTip::hideText();
}

void MonitorPage::updateNote()
{
    QString text;
    if (m_stale && !m_pins.empty())
        text = QStringLiteral("Disconnected: the history up to %1 is shown, nothing is being read.").arg(clockText(m_lostAtUs));
    else if (m_lost)
        text = QStringLiteral("Connection lost at %1: the lines stop there and go on once it is back%2")
                   .arg(clockText(m_lostAtUs), m_lostWhy.isEmpty() ? QStringLiteral(".") : QStringLiteral(" (%1).").arg(m_lostWhy));
    m_note->setText(text);
    m_note->setVisible(!text.isEmpty());
}

QString MonitorPage::noteText() const
{
    return m_note->text();
}

void MonitorPage::updateStatus()
{
    const qint64 nowMs = localNowUs() / 1000;
    std::erase_if(m_recentSkips, [&](qint64 at) { return nowMs - at > 60000; });
    int drawing = 0;
    for (const auto &p : m_pins)
        drawing += p->status == MonitorPin::Status::Drawing ? 1 : 0;
    QString text;
    if (m_pins.empty())
        text = QStringLiteral("No keys pinned.");
    else if (m_lost)
        text = QStringLiteral("Not reading: the connection was lost at %1; reading resumes by itself once it is back.")
                   .arg(clockText(m_lostAtUs));
    else if (!m_client)
        text = QStringLiteral("%1 pinned; not connected.").arg(formatKeys(qint64(m_pins.size())));
    else if (m_paused)
        text = QStringLiteral("Paused at %1: resume to read again.").arg(clockText(m_lastNowUs ? m_lastNowUs : nowUs()));
    else
        text = QStringLiteral("Reading %1 of %2 every %3, one round trip each time; the last %4 minutes kept per key.")
                   .arg(drawing)
                   .arg(formatKeys(qint64(m_pins.size())), intervalText(m_intervalMs))
                   .arg(kHistoryUs / 60000000);
    if (!m_recentSkips.empty())
        text += QStringLiteral("  %1 skipped in the last minute: a reading took longer than %2.")
                    .arg(m_recentSkips.size() == 1 ? QStringLiteral("1 tick") : QStringLiteral("%1 ticks").arg(m_recentSkips.size()),
                         intervalText(m_intervalMs));
    m_status->setText(text);
}

QString MonitorPage::statusText() const
{
    return m_status->text();
}

size_t MonitorPage::samplesHeld(const QByteArray &key) const
{
    const MonitorPin *p = find(key);
    return p ? p->ring.size() : 0;
}

size_t MonitorPage::historyBytes() const
{
    size_t n = 0;
    for (const auto &p : m_pins)
        n += p->ring.bytes();
    return n;
}

bool MonitorPage::exportPng(const QString &path, QString *error)
{
    const QPixmap shot = m_chartView->grab();
    if (shot.save(path, "PNG"))
        return true;
    if (error)
        *error = QStringLiteral("Could not write %1").arg(path);
    return false;
}

bool MonitorPage::exportCsv(const QString &path, QString *error)
{
    // Every tick reads every key at one time: rows by time, keys in pin order within a tick.
    struct Row {
        qint64 timeUs;
        size_t pin;
        const MonitorSample *sample;
    };
    std::vector<Row> rows;
    for (size_t i = 0; i < m_pins.size(); ++i) {
        const SampleRing &ring = m_pins[i]->ring;
        for (size_t j = 0; j < ring.size(); ++j)
            if (!ring.at(j).gap)
                rows.push_back({ring.at(j).timeUs, i, &ring.at(j)});
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) { return a.timeUs < b.timeUs; });

    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        if (error)
            *error = QStringLiteral("Could not write %1: %2").arg(path, file.errorString());
        return false;
    }
    QByteArray out = "time_us,key,used,limit,remaining,retry_after_ms\n";
    for (const Row &r : rows) {
        QString key = m_pins[r.pin]->shown;
        if (key.contains(QLatin1Char(',')) || key.contains(QLatin1Char('"')))
            key = QLatin1Char('"') + key.replace(QLatin1Char('"'), QStringLiteral("\"\"")) + QLatin1Char('"');
        const MonitorSample &s = *r.sample;
        out += QByteArray::number(s.timeUs) + ',' + key.toUtf8() + ',' + QByteArray::number(s.used) + ',' + QByteArray::number(s.limit) +
               ',' + QByteArray::number(s.remaining()) + ',' + QByteArray::number(unitsRoundedUp(s.retryAfterUs, 1000)) + '\n';
    }
    file.write(out);
    if (!file.commit()) {
        if (error)
            *error = QStringLiteral("Could not write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

} // namespace ratescope::ui
