#include "keyview.h"

#include "admin/limitsinforce.h"
#include "chartpalette.h"
#include "keyviewqueries.h"
#include "displayformat.h"
#include "base/errors.h"
#include "limiters/httpheaders.h"
#include "keys/inspector.h"
#include "base/keytext.h"
#include "logview.h"
#include "shardchart.h"
#include "statechart.h"

#include <QComboBox>
#include <QDateTime>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QStackedWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <cmath>

namespace ratescope::ui {

namespace {

std::optional<Decision> decisionOf(const QJsonObject &inspected, qint64 *usedNow)
{
    const QJsonObject d = inspected.value(QStringLiteral("decision")).toObject();
    if (d.isEmpty())
        return std::nullopt;
    auto n = [&](const char *name) { return qint64(d.value(QLatin1String(name)).toInteger()); };
    Decision out;
    out.allowed = d.value(QStringLiteral("allowed")).toBool();
    out.limit = n("limit");
    out.used = n("used");
    out.remaining = n("remaining");
    out.retryAfterUs = n("retry_after_us");
    out.resetAfterUs = n("reset_after_us");
    *usedNow = n("used_now");
    return out;
}

QString shardFormatLabel(KeyFormat format)
{
    KeyKind kind;
    kind.format = format;
    return kind.label();
}

qint64 jsonInt(const QJsonObject &o, const char *name, qint64 fallback = 0)
{
    const QJsonValue v = o.value(QLatin1String(name));
    return v.isUndefined() ? fallback : qint64(v.toInteger(fallback));
}

QString describeOverride(const Override &o, qint64 nowUs)
{
    const qint64 left = o.expiresAt.toMSecsSinceEpoch() * 1000 - nowUs;
    QString text = QStringLiteral("limit %1").arg(formatCount(o.limit));
    if (o.windowUs > 0)
        text += QStringLiteral(" per %1").arg(formatSpan(o.windowUs));
    text += left > 0 ? QStringLiteral(", expires in %1").arg(formatSpan(left)) : QStringLiteral(", expiring now");
    if (!o.setBy.isEmpty())
        text += QStringLiteral(" (set by %1)").arg(o.setBy);
    return text;
}

} // namespace

KeyView::KeyView(RedisClient *client, const QByteArray &key, const QByteArray &ns, QWidget *parent)
    : QWidget(parent)
    , m_client(client)
    , m_key(key)
    , m_ns(ns)
{
    // A key is bytes and never markup: shown escaped, as plain text.
    m_title = new QLabel(displayKey(key), this);
    m_title->setTextFormat(Qt::PlainText);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_title->setWordWrap(true);
    QFont big = m_title->font();
    big.setBold(true);
    big.setPointSizeF(big.pointSizeF() * 1.3);
    m_title->setFont(big);

    m_intervalBox = new QComboBox(this);
    for (const auto &[label, ms] :
         {std::pair{"Off", 0}, {"250 ms", 250}, {"500 ms", 500}, {"1 s", 1000}, {"2 s", 2000}, {"5 s", 5000}, {"10 s", 10000}})
        m_intervalBox->addItem(QLatin1String(label), ms);
    m_intervalBox->setCurrentIndex(m_intervalBox->findData(m_interval));
    m_intervalBox->setToolTip(QStringLiteral("How often the key is read again while this tab is shown"));
    connect(m_intervalBox, &QComboBox::currentIndexChanged, this,
            [this](int i) { setRefreshInterval(m_intervalBox->itemData(i).toInt()); });
    auto *refreshNow = new QToolButton(this);
    refreshNow->setText(QStringLiteral("Refresh"));
    connect(refreshNow, &QToolButton::clicked, this, &KeyView::refresh);
    m_pin = new QPushButton(QStringLiteral("Pin to monitor"), this);
    m_pin->setToolTip(QStringLiteral("Follow this key's usage over time in the Monitor tab"));
    connect(m_pin, &QPushButton::clicked, this, [this] { emit pinRequested(m_key); });

    // Built when opened, so read-only and connection state are those of the moment.
    auto *actions = new QToolButton(this);
    actions->setText(QStringLiteral("Actions"));
    actions->setPopupMode(QToolButton::InstantPopup);
    actions->setToolTip(QStringLiteral("Burst, change this key's limit, edit its policy, reset"));
    auto *actionsMenu = new QMenu(actions);
    connect(actionsMenu, &QMenu::aboutToShow, this, [this, actionsMenu] {
        actionsMenu->clear();
        addKeyActions(actionsMenu, m_client, {m_key},
                      [this](KeyAction action, const QList<QByteArray> &keys) { emit keyActionRequested(action, keys); });
    });
    actions->setMenu(actionsMenu);

    auto *top = new QHBoxLayout;
    top->addWidget(m_title, 1);
    top->addWidget(new QLabel(QStringLiteral("Auto-refresh:"), this));
    top->addWidget(m_intervalBox);
    top->addWidget(refreshNow);
    top->addWidget(m_pin);
    top->addWidget(actions);

    // The figures beside the bar, not on it: drawn across its two colours they read split.
    m_barRow = new QWidget(this);
    m_bar = new QProgressBar(m_barRow);
    m_bar->setRange(0, 1000);
    m_bar->setTextVisible(false);
    m_bar->setMaximumHeight(18);
    m_barText = new QLabel(m_barRow);
    m_barText->setTextFormat(Qt::PlainText);
    m_barText->setObjectName(QStringLiteral("barText"));
    auto *barLayout = new QHBoxLayout(m_barRow);
    barLayout->setContentsMargins(0, 0, 0, 0);
    barLayout->addWidget(m_bar, 1);
    barLayout->addWidget(m_barText);
    setBarText(QStringLiteral("…"));

    m_fieldsBox = new QWidget(this);
    m_grid = new QGridLayout(m_fieldsBox);
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_grid->setHorizontalSpacing(12);
    const char *columns[3][4] = {{"Algorithm", "Format", "Policy", "Override"},
                                 {"Used", "Remaining", "Retry after", "Reset after"},
                                 {"Type", "TTL", "Memory", "Encoding"}};
    for (int col = 0; col < 3; ++col)
        for (int row = 0; row < 4; ++row)
            addField(QLatin1String(columns[col][row]), row, col);
    // The peek's figures: what a request of the policy's cost would be told now.
    for (const char *name : {"Used", "Remaining", "Retry after", "Reset after"})
        m_fieldLabels.value(QLatin1String(name))
            ->setToolTip(QStringLiteral("What the limiter would answer a request now (read with its peek, nothing consumed); "
                                        "reset after counts that request when it would pass"));
    // What a service would send its client for that answer, across the whole width.
    QLabel *headers = addField(QStringLiteral("Headers"), 5, 0);
    m_grid->addWidget(headers, 5, 1, 1, 5);
    headers->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_fieldLabels.value(QStringLiteral("Headers"))
        ->setToolTip(QStringLiteral("The HTTP response fields a service would send for the answer above: Retry-After on a denial, and "
                                    "RateLimit-Policy / RateLimit of the IETF draft (the same as ratescope-cli check --headers)"));
    m_grid->setColumnStretch(1, 3);
    m_grid->setColumnStretch(3, 2);
    m_grid->setColumnStretch(5, 2);

    m_status = new QLabel(this);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setWordWrap(true);
    QFont bold = m_status->font();
    bold.setBold(true);
    m_status->setFont(bold);
    m_status->hide();

    m_stack = new QStackedWidget(this);
    m_chart = new StateChart(m_stack);
    m_message = new QLabel(m_stack);
    m_message->setTextFormat(Qt::PlainText);
    m_message->setWordWrap(true);
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setMargin(24);
    QFont msg = m_message->font();
    msg.setPointSizeF(msg.pointSizeF() * 1.2);
    m_message->setFont(msg);
    m_message->setText(QStringLiteral("Reading the key…"));
    m_stack->addWidget(m_message);
    m_stack->addWidget(m_chart);
    m_stack->setCurrentWidget(m_message);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_barRow);
    layout->addWidget(m_fieldsBox);
    layout->addWidget(m_status);
    layout->addWidget(m_stack, 1);

    m_timer.setClient(m_client);
    connect(&m_timer, &TickTimer::timeout, this, &KeyView::refresh);
    if (m_client)
        connect(m_client, &RedisClient::statusChanged, this, &KeyView::updateTimer);
    if (m_client) {
        connect(m_client, &RedisClient::stateChanged, this, [this](RedisClient::State s) {
            if (s == RedisClient::State::Connected) {
                if (!m_pending) // a read under way (made as the console connected) clears it as well
                    refresh(); // the next good read clears the stale marker
            } else
                setStale(true);
        });
    }
    refresh(); // the first read even while hidden: a tab opened in the background is ready when shown
}

KeyView::~KeyView()
{
    if (m_client)
        m_client->cancel(this);
}

QLabel *KeyView::addField(const QString &name, int row, int column)
{
    auto *label = new QLabel(name + QLatin1Char(':'), m_fieldsBox);
    label->setAlignment(Qt::AlignRight | Qt::AlignTop);
    label->setForegroundRole(QPalette::PlaceholderText);
    auto *value = new QLabel(QStringLiteral("…"), m_fieldsBox);
    value->setTextFormat(Qt::PlainText); // keys, policy globs and names are never markup
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    value->setWordWrap(true);
    value->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_grid->addWidget(label, row, column * 2);
    m_grid->addWidget(value, row, column * 2 + 1);
    m_fields.insert(name, value);
    m_fieldLabels.insert(name, label);
    return value;
}

QString KeyView::fieldText(const QString &name) const
{
    const QLabel *l = m_fields.value(name);
    return l ? l->text() : QString();
}

QString KeyView::titleText() const
{
    return m_stack->currentWidget() == m_chart ? m_chart->title() : QString();
}

QString KeyView::messageText() const
{
    return m_stack->currentWidget() == m_message ? m_message->text() : QString();
}

QString KeyView::staleText() const
{
    return m_stale ? m_status->text() : QString();
}

bool KeyView::isLoaded() const
{
    return m_loaded;
}

void KeyView::setFrozenNow(std::optional<qint64> nowUs)
{
    m_frozenNow = nowUs;
    refresh();
}

void KeyView::setRefreshInterval(int ms)
{
    m_interval = std::max(0, ms);
    const int at = m_intervalBox->findData(m_interval);
    if (at >= 0 && at != m_intervalBox->currentIndex())
        m_intervalBox->setCurrentIndex(at);
    updateTimer();
}

void KeyView::updateTimer()
{
    if (m_interval > 0 && isVisible()) {
        // Paced on a slow link; restarted only when the period changes, so that a status
        // update every 2 s never postpones a slower tick for good.
        const int ms = m_client ? m_client->pacedMs(m_interval) : m_interval;
        if (!m_timer.isActive() || m_timer.interval() != ms)
            m_timer.start(ms);
    } else {
        m_timer.stop();
    }
}

void KeyView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    updateTimer();
    if (m_hasData)
        refresh(); // back in view: catch up now rather than one period later
}

void KeyView::hideEvent(QHideEvent *event)
{
    QWidget::hideEvent(event);
    m_timer.stop(); // nobody looks: no reads
}

void KeyView::refresh()
{
    if (!m_client)
        return;
    if (m_pending) { // one read in flight at most; read once more when it is back
        m_again = true;
        return;
    }
    m_pending = true;
    ++m_reads;
    // The log view's settings, so that a log is read for it in the same round trips.
    const LogReadRequest logSettings = m_log ? m_log->readSettings() : LogReadRequest{};
    // On the shared tick with the other views' reads; for the time the round reaches the
    // server (or the frozen one), so that the state's reads go in that same round.
    m_client->repeat(
        this, m_readMemory,
        [key = m_key, ns = m_ns, frozen = m_frozenNow, logSettings](Connection &c, const RedisClient::Tick &tick) {
            std::optional<qint64> now = frozen;
            if (!now && tick.predictedNowUs > 0)
                now = tick.predictedNowUs;
            return readKey(c, key, ns, now, logSettings);
        },
        [this](const Outcome<KeyRead> &o) {
            m_pending = false;
            if (o.ok()) {
                draw(o.value());
            } else if (o.failure().isConnectionLoss()) {
                setStale(true);
            } else {
                m_status->setText(o.failure().message);
                m_status->setVisible(true);
            }
            if (m_again) {
                m_again = false;
                refresh();
            }
        });
}

void KeyView::setStale(bool stale)
{
    if (stale && !m_hasData) {
        m_status->setText(QStringLiteral("Not connected — waiting for the connection to read the key"));
        m_status->setVisible(true);
        return;
    }
    m_stale = stale;
    m_fieldsBox->setEnabled(!stale); // greyed by the palette's disabled colours
    m_barRow->setEnabled(!stale);
    // The drawing dimmed by each chart itself (a log view dims its own chart and table), never
    // by an opacity effect over the stack: that leaves a ghost copy of a chart view on screen.
    m_message->setEnabled(!stale);
    setChartStale(m_chart->chart(), stale);
    if (m_shardChart)
        setChartStale(m_shardChart->chart(), stale);
    if (stale) {
        const QDateTime asOf = QDateTime::fromMSecsSinceEpoch(m_last.nowUs / 1000);
        m_status->setText(QStringLiteral("Connection lost — values as of %1").arg(asOf.toString(QStringLiteral("HH:mm:ss"))));
        m_status->setVisible(true);
    } else {
        m_status->clear();
        m_status->hide();
    }
}

void KeyView::draw(const KeyRead &read)
{
    m_last = read;
    m_hasData = true;
    m_usedNow = -1;
    m_decision = decisionOf(read.inspected, &m_usedNow);
    setStale(false);
    showHeader(read);
    showState(read);
    const QString decisionError = read.inspected.value(QStringLiteral("decision_error")).toString();
    if (!decisionError.isEmpty()) {
        m_status->setText(decisionError);
        m_status->show();
    }
    m_drawn = true;
    checkLoaded();
    emit refreshed();
}

void KeyView::setBarText(const QString &text)
{
    m_barText->setText(text);
    m_bar->setFormat(text); // what the bar says to a screen reader
}

// The keys panel's colours for the used bar: amber past 80 %, red when full.
void KeyView::colourBar(double fraction)
{
    QPalette p = m_bar->palette();
    const QColor fill = fraction >= 1.0 ? QColor(0xe0, 0x4f, 0x3f) : fraction >= 0.8 ? QColor(0xf0, 0xa2, 0x30) : QColor(0x3f, 0xa3, 0x5b);
    p.setColor(QPalette::Active, QPalette::Highlight, fill);
    p.setColor(QPalette::Inactive, QPalette::Highlight, fill); // disabled (stale) keeps the palette's grey
    m_bar->setPalette(p);
}

void KeyView::showHeader(const KeyRead &read)
{
    const QJsonObject &in = read.inspected;
    auto set = [this](const char *name, const QString &text) {
        m_fields.value(QLatin1String(name))->setText(text.isEmpty() ? QStringLiteral("–") : text);
    };
    const QString type = in.value(QStringLiteral("type")).toString();
    const bool exists = in.value(QStringLiteral("exists")).toBool();
    const KeyKind &kind = read.kind;

    QString algorithm;
    if (const auto a = kind.algorithm())
        algorithm = algorithmName(*a);
    else if (kind.format == KeyFormat::CounterWindow)
        algorithm = read.spec ? algorithmName(read.spec->algorithm) + QStringLiteral(" (as its policy says)")
                              : QStringLiteral("counter: fixed or sliding, no policy says");
    set("Algorithm", algorithm);
    if (kind.format == KeyFormat::CounterWindow)
        set("Format", QStringLiteral("%1 of %2").arg(kind.label(), displayKey(kind.base)));
    else if (kind.isLimiter())
        set("Format", kind.label());
    else if (read.shards)
        set("Format", QStringLiteral("sharded: %1 shards %2:%3 .. %2:%4, each %5")
                          .arg(read.shards->group.count)
                          .arg(displayKey(read.shards->group.base))
                          .arg(read.shards->group.from)
                          .arg(read.shards->group.from + read.shards->group.count - 1)
                          .arg(shardFormatLabel(read.shards->group.format)));
    else if (!exists && read.spec)
        set("Format", QStringLiteral("none: no such key now (a first request starts a fresh %1)").arg(algorithmName(read.spec->algorithm)));
    else if (!exists)
        set("Format", QStringLiteral("none: no such key now"));
    else
        set("Format", QStringLiteral("not a limiter Ratescope recognises"));
    set("Policy", read.policy ? QStringLiteral("%1 (%2): %3%4")
                                    .arg(read.policy->name, displayKey(read.policy->match), formatLimit(read.policy->spec),
                                         read.policy->enforced ? QString() : QStringLiteral(", declared only"))
                              : QStringLiteral("none matches"));
    set("Override", read.override ? describeOverride(*read.override, read.serverNowUs) : QStringLiteral("none"));
    set("Type", type);
    set("TTL", exists ? formatTtl(jsonInt(in, "ttl_ms", -3)) : QString());
    set("Memory", formatSize(jsonInt(in, "memory", -1)));
    set("Encoding", in.value(QStringLiteral("encoding")).toString());

    if (read.shards && read.shards->group.policy) {
        // The group: used summed over the shards against the group's limit.
        const ShardUsage &sum = read.shards->sum;
        set("Algorithm", algorithmName(read.shards->group.policy->spec.algorithm));
        set("Used", QStringLiteral("%1 of %2 (summed over %3 shards)")
                        .arg(formatCount(sum.used), formatCount(sum.limit))
                        .arg(read.shards->group.count));
        set("Remaining", formatCount(std::max<qint64>(0, sum.limit - sum.used)));
        for (const char *name : {"Retry after", "Reset after", "Headers"})
            set(name, QString());
        const double f = sum.limit > 0 ? double(sum.used) / double(sum.limit) : 0;
        m_barRow->setVisible(true);
        m_bar->setValue(int(std::min(1000.0, f * 1000)));
        setBarText(QStringLiteral("%1 of %2 used (%3 %)").arg(formatCount(sum.used), formatCount(sum.limit)).arg(qRound(f * 100)));
        colourBar(f);
    } else if (m_decision) {
        const Decision &d = *m_decision;
        set("Used", QStringLiteral("%1 of %2").arg(formatCount(m_usedNow), formatCount(d.limit)));
        set("Remaining", formatCount(std::max<qint64>(0, d.limit - m_usedNow)));
        set("Retry after", d.allowed ? QStringLiteral("now: a request would pass") : formatSpan(d.retryAfterUs));
        set("Reset after", d.resetAfterUs > 0 ? formatSpan(d.resetAfterUs) : QStringLiteral("full capacity now"));
        QStringList headers;
        if (read.spec)
            for (const auto &[name, value] : rateLimitHeaders(d, *read.spec, read.policy ? read.policy->name : QString()))
                headers << name + QStringLiteral(": ") + value;
        set("Headers", headers.join(QStringLiteral("   ")));
        const double f = d.limit > 0 ? double(m_usedNow) / double(d.limit) : 0;
        m_barRow->setVisible(true);
        m_bar->setValue(int(std::min(1000.0, f * 1000)));
        setBarText(QStringLiteral("%1 of %2 used (%3 %)").arg(formatCount(m_usedNow), formatCount(d.limit)).arg(qRound(f * 100)));
        colourBar(f);
    } else {
        for (const char *name : {"Used", "Remaining", "Retry after", "Reset after", "Headers"})
            set(name, QString());
        m_bar->setValue(0);
        m_barRow->setVisible(kind.isLimiter());
        setBarText(kind.isLimiter() && !read.spec ? QStringLiteral("no policy or override gives a limit") : QStringLiteral("–"));
    }
    if (!read.placement.isEmpty()) { // a cluster: which master holds it
        if (!m_fields.contains(QStringLiteral("Node")))
            addField(QStringLiteral("Node"), 4, 2);
        set("Node", read.placement);
    }
}

void KeyView::showMessage(const QString &text)
{
    m_message->setText(text);
    m_stack->setCurrentWidget(m_message);
}

// A sharded limiter's base: the shards side by side, each against its share.
void KeyView::showShards(const KeyRead &read)
{
    const ShardGroupState &g = *read.shards;
    if (!m_shardChart) {
        m_shardChart = new ShardChart(m_stack);
        m_stack->addWidget(m_shardChart);
    }
    std::vector<ShardChart::Shard> bars;
    for (int i = 0; i < g.group.count; ++i) {
        ShardChart::Shard b;
        b.label = QString::number(g.group.from + i);
        if (g.usage[size_t(i)])
            b.used = g.usage[size_t(i)]->usedNow;
        if (g.group.policy)
            b.share = shardShare(g.group.policy->spec.limit, g.group.count, i);
        bars.push_back(b);
    }
    QString title = QStringLiteral("%1 shards").arg(g.group.count);
    if (g.group.policy)
        title += QStringLiteral(": %1 of %2 used").arg(formatCount(g.sum.used), formatCount(g.sum.limit));
    if (g.sum.busiest >= 0 && g.sum.used > 0)
        title += QStringLiteral(" · busiest %1 (skew %2)").arg(g.group.from + g.sum.busiest).arg(g.sum.skew, 0, 'f', 2);
    m_shardChart->show(title, bars);
    m_stack->setCurrentWidget(m_shardChart);
}

void KeyView::showState(const KeyRead &read)
{
    if (read.shards)
        return showShards(read);
    const QJsonObject state = read.inspected.value(QStringLiteral("state")).toObject();
    const KeyKind &kind = read.kind;
    const std::optional<LimitSpec> &spec = read.spec;
    const qint64 now = read.nowUs;
    const QString type = read.inspected.value(QStringLiteral("type")).toString();
    const bool exists = read.inspected.value(QStringLiteral("exists")).toBool();
    const QString noLimits = QStringLiteral("A %1 limiter, but no policy or override gives its limit and window, so there is nothing to "
                                            "draw it against. Declare a policy that matches this key to see its state.");

    if (drawnAsLog(kind, type)) {
        if (!m_log) {
            m_log = new LogView(m_client, m_key, m_stack);
            m_log->setConnectionLossShownAbove(true); // setStale() says it for the whole view
            m_stack->addWidget(m_log);
            connect(m_log, &LogView::loaded, this, &KeyView::checkLoaded);
        }
        m_stack->setCurrentWidget(m_log);
        if (read.log) // read along with the key
            m_log->showRead(spec, kind.unit, kind, *read.log);
        else
            m_log->setContext(spec, kind.unit, now, kind);
        return;
    }
    if (!kind.isLimiter()) {
        if (!exists)
            showMessage(QStringLiteral("This key does not exist (now): no limiter state to draw.%1")
                            .arg(spec ? QStringLiteral("\nA first request would start a fresh %1 limiter of the policy's limits.")
                                            .arg(algorithmName(spec->algorithm))
                                      : QString()));
        else
            showMessage(
                QStringLiteral("This key is a %1, not a rate limiter Ratescope recognises: there is no limiter state to draw.").arg(type));
        return;
    }

    const qint64 used = m_usedNow;
    const qint64 limit = m_decision ? m_decision->limit : 0;
    switch (kind.format) {
    case KeyFormat::SlidingCounter: {
        const QJsonObject n = state.value(QStringLiteral("now")).toObject();
        if (!spec || n.isEmpty() || !m_decision)
            return showMessage(noLimits.arg(kind.label()));
        m_chart->showSlidingCounter(QStringLiteral("Sliding counter: %1 of %2 used").arg(formatCount(used), formatCount(limit)),
                                    spec->windowUs, now % spec->windowUs, jsonInt(n, "previous"), jsonInt(n, "current"), limit);
        break;
    }
    case KeyFormat::SlidingBuckets: {
        const QJsonArray counts = state.value(QStringLiteral("bucket_counts")).toArray();
        if (!spec || !m_decision || counts.size() < 3)
            return showMessage(noLimits.arg(kind.label()));
        QList<qint64> values;
        for (const QJsonValue &v : counts)
            values << v.toInteger();
        const double width = state.value(QStringLiteral("bucket_width_us")).toDouble();
        const Decision &d = *m_decision;
        QString when = d.retryAfterUs > 0 ? QStringLiteral("next request in %1").arg(formatSpan(d.retryAfterUs))
                                          : QStringLiteral("room for %1 more").arg(formatCount(std::max<qint64>(0, limit - used)));
        m_chart->showSlidingBuckets(QStringLiteral("Sliding buckets (%1 x %2): %3 of %4 used · %5")
                                        .arg(values.size() - 1)
                                        .arg(formatSpan(qint64(width)), formatCount(used), formatCount(limit), when),
                                    width, state.value(QStringLiteral("elapsed_us")).toDouble(), values, limit);
        break;
    }
    case KeyFormat::CounterWindow: {
        const qint64 w = jsonInt(state, "window_seconds") * 1000000;
        if (w <= 0)
            return showMessage(noLimits.arg(kind.label()));
        const qint64 prev = jsonInt(state.value(QStringLiteral("previous")).toObject(), "count");
        const qint64 curr = jsonInt(state.value(QStringLiteral("current")).toObject(), "count");
        const QString base = displayKey(kind.base);
        if (spec && m_decision && spec->algorithm == Algorithm::FixedWindow)
            m_chart->showFixedWindow(QStringLiteral("Fixed window (counter windows of %1): %2 of %3 used · resets in %4")
                                         .arg(base, formatCount(used), formatCount(limit), formatSpan(w - now % w)),
                                     w, now % w, curr, limit);
        else if (spec && m_decision)
            m_chart->showSlidingCounter(
                QStringLiteral("Sliding counter (counter windows of %1): %2 of %3 used").arg(base, formatCount(used), formatCount(limit)),
                w, now % w, prev, curr, limit);
        else
            m_chart->showSlidingCounter(QStringLiteral("Counter windows of %1: %2 now, %3 in the previous window (no policy gives a limit)")
                                            .arg(base, formatCount(curr), formatCount(prev)),
                                        w, now % w, prev, curr, std::nullopt);
        break;
    }
    case KeyFormat::FixedWindow: {
        if (!spec || !m_decision)
            return showMessage(noLimits.arg(kind.label()));
        const qint64 w = spec->windowUs;
        const qint64 count = state.value(QStringLiteral("current_window")).toBool() ? jsonInt(state, "count") : 0;
        m_chart->showFixedWindow(QStringLiteral("Fixed window: %1 of %2 used · resets in %3")
                                     .arg(formatCount(used), formatCount(limit), formatSpan(w - now % w)),
                                 w, now % w, count, limit);
        break;
    }
    case KeyFormat::TokenBucket: {
        if (!spec || !m_decision)
            return showMessage(noLimits.arg(kind.label()));
        const Decision &d = *m_decision;
        const qint64 tokens = d.limit - used; // before the request asked about
        m_chart->showTokenBucket(
            QStringLiteral("Token bucket: %1 of %2 tokens · %3")
                .arg(formatCount(tokens), formatCount(d.limit),
                     d.resetAfterUs > 0 ? QStringLiteral("full in %1").arg(formatSpan(d.resetAfterUs)) : QStringLiteral("full")),
            d.limit, spec->windowUs, spec->cost, tokens, d.retryAfterUs, d.resetAfterUs);
        break;
    }
    case KeyFormat::Gcra: {
        if (!spec || !m_decision)
            return showMessage(noLimits.arg(kind.label()));
        const Decision &d = *m_decision;
        const qint64 ahead = jsonInt(state, "tat_ahead_us");
        m_chart->showGcra(QStringLiteral("GCRA: %1 of %2 remaining · %3")
                              .arg(formatCount(d.limit - used), formatCount(d.limit),
                                   ahead > 0 ? QStringLiteral("TAT %1 ahead of now").arg(formatSpan(ahead))
                                             : QStringLiteral("TAT not ahead of now: full burst available")),
                          d.limit, spec->windowUs, spec->cost, ahead, d.retryAfterUs, d.resetAfterUs);
        break;
    }
    case KeyFormat::ForeignTokenBucket: {
        // No core peek reads these: the stored level and time, refilled here at the policy's rate.
        const QJsonObject fields = state.value(QStringLiteral("fields")).toObject();
        auto first = [&](std::initializer_list<const char *> names) {
            for (const char *n : names)
                if (fields.contains(QLatin1String(n)))
                    return fields.value(QLatin1String(n)).toString().toDouble();
            return 0.0;
        };
        const double stored = first({"tokens", "token", "bucket", "remaining"});
        const double at = first({"ts", "timestamp", "last", "last_refill", "refilled_at", "updated_at", "time"});
        const ScoreUnit unit = detectScoreUnit(at);
        if (!spec || unit == ScoreUnit::Auto)
            return showMessage(
                QStringLiteral("Another service's token bucket: %1 tokens stored. %2")
                    .arg(stored)
                    .arg(spec ? QStringLiteral("Its time field is no epoch time in s, ms or µs, so its refill cannot be drawn.")
                              : QStringLiteral("No policy gives its capacity and refill window, so its refill cannot be drawn.")));
        const double elapsed = std::max(0.0, double(now) - at * double(scoreUnitUs(unit)));
        const double level = std::min(double(spec->limit), stored + elapsed * double(spec->limit) / double(spec->windowUs));
        const qint64 tokens = qint64(std::floor(level));
        const qint64 full = qint64(std::ceil((double(spec->limit) - level) * double(spec->windowUs) / double(spec->limit)));
        const qint64 retry =
            tokens >= spec->cost ? 0 : qint64(std::ceil((double(spec->cost) - level) * double(spec->windowUs) / double(spec->limit)));
        m_chart->showTokenBucket(QStringLiteral("Token bucket (another service's, refilled at the policy's rate): %1 of %2 tokens")
                                     .arg(formatCount(tokens), formatCount(spec->limit)),
                                 spec->limit, spec->windowUs, spec->cost, tokens, retry, full);
        break;
    }
    case KeyFormat::Library:
        return showLibrary(read, state);
    default:
        return showMessage(QStringLiteral("%1: no chart for this format.").arg(kind.label()));
    }
    m_stack->setCurrentWidget(m_chart);
}

void KeyView::showLibrary(const KeyRead &read, const QJsonObject &state)
{
    // Another library's limiter, drawn as its algorithm family, from its reader's state and the
    // decision it computed with that library's own rule.
    const KeyKind &kind = read.kind;
    const std::optional<LimitSpec> &spec = read.spec;
    const QString name = kind.label();
    if (!kind.readable())
        return showMessage(QStringLiteral("%1: a state Ratescope recognises but never decodes (its library's own serialized form). "
                                          "It is listed, and reset deletes it; nothing else is read.")
                               .arg(name));
    if (!spec || !m_decision)
        return showMessage(QStringLiteral("A %1 limiter, but no policy gives its limits, so there is nothing to draw it against. "
                                          "Declare a policy that matches this key to see its state.")
                               .arg(name));
    const Decision &d = *m_decision;
    const qint64 used = m_usedNow, limit = d.limit, w = spec->windowUs;
    const std::optional<Algorithm> family = kind.algorithm() ? kind.algorithm() : std::optional<Algorithm>(spec->algorithm);
    switch (*family) {
    case Algorithm::SlidingCounter:
    case Algorithm::SlidingBuckets: { // another library's counters under a sliding-buckets policy: two windows
        const qint64 elapsed = std::clamp<qint64>(jsonInt(state, "elapsed_us"), 0, w);
        m_chart->showSlidingCounter(QStringLiteral("%1: %2 of %3 used").arg(name, formatCount(used), formatCount(limit)), w, elapsed,
                                    jsonInt(state, "previous"), jsonInt(state, "current"), limit);
        break;
    }
    case Algorithm::TokenBucket: {
        const qint64 tokens = std::max<qint64>(0, limit - used);
        m_chart->showTokenBucket(
            QStringLiteral("%1: %2 of %3 tokens · %4")
                .arg(name, formatCount(tokens), formatCount(limit),
                     d.resetAfterUs > 0 ? QStringLiteral("full in %1").arg(formatSpan(d.resetAfterUs)) : QStringLiteral("full")),
            limit, w, spec->cost, tokens, d.retryAfterUs, d.resetAfterUs);
        break;
    }
    case Algorithm::Gcra: {
        const qint64 ahead = jsonInt(state, "tat_ahead_us");
        m_chart->showGcra(QStringLiteral("%1: %2 of %3 remaining · %4")
                              .arg(name, formatCount(std::max<qint64>(0, limit - used)), formatCount(limit),
                                   ahead > 0 ? QStringLiteral("TAT %1 ahead of now").arg(formatSpan(ahead))
                                             : QStringLiteral("TAT not ahead of now: full burst available")),
                          limit, w, spec->cost, ahead, d.retryAfterUs, d.resetAfterUs);
        break;
    }
    case Algorithm::SlidingLog:
    case Algorithm::FixedWindow: {
        // A window that ends at a known time (a counter, or a log read as its count): how far
        // into it we are, and how much of the limit is used (above it when denials count).
        const qint64 ends = state.contains(QStringLiteral("window_ends_in_us")) ? jsonInt(state, "window_ends_in_us") : w;
        const qint64 elapsed = std::clamp<qint64>(w - ends, 0, w);
        m_chart->showFixedWindow(QStringLiteral("%1: %2 of %3 used · %4")
                                     .arg(name, formatCount(used), formatCount(limit),
                                          used > 0 ? QStringLiteral("resets in %1").arg(formatSpan(ends)) : QStringLiteral("empty")),
                                 w, elapsed, used, limit);
        break;
    }
    }
    m_stack->setCurrentWidget(m_chart);
}

void KeyView::checkLoaded()
{
    if (m_loaded || !m_drawn)
        return;
    if (m_stack->currentWidget() == m_log && m_log && !m_log->isLoaded())
        return; // the log's window is part of the first picture
    m_loaded = true;
    emit loaded();
}

} // namespace ratescope::ui
