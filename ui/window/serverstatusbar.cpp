#include "serverstatusbar.h"

#include "displayformat.h"
#include "redisclient.h"
#include "servertext.h"

#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QRegularExpression>

namespace ratescope::ui {

namespace {

QFrame *divider(QWidget *parent)
{
    auto *line = new QFrame(parent);
    line->setFrameShape(QFrame::VLine);
    line->setFrameShadow(QFrame::Sunken);
    return line;
}

} // namespace

ServerStatusBar::ServerStatusBar(QWidget *parent)
    : QWidget(parent)
{
    m_state = new QLabel(this);
    m_server = new QLabel(this);
    m_nodes = new QLabel(this);
    m_latency = new QLabel(this);
    m_latency->setToolTip(QStringLiteral("Round trip of a PING, every 2 s"));
    m_memory = new QLabel(this);
    m_memory->setToolTip(QStringLiteral("used_memory from INFO memory"));
    m_keys = new QLabel(this);
    m_keys->setToolTip(QStringLiteral("DBSIZE of the selected database"));
    m_lock = new QLabel(this);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 0, 4, 0);
    layout->setSpacing(8);
    bool first = true;
    for (QLabel *l : {m_server, m_nodes, m_latency, m_memory, m_keys, m_lock, m_state}) {
        if (!first) {
            QFrame *line = divider(this);
            layout->addWidget(line);
            if (l == m_nodes)
                m_nodesDivider = line;
        }
        first = false;
        layout->addWidget(l);
    }
    update();
}

void ServerStatusBar::setClient(RedisClient *client)
{
    if (m_client)
        disconnect(m_client, nullptr, this, nullptr);
    m_client = client;
    if (client) {
        connect(client, &RedisClient::stateChanged, this, &ServerStatusBar::update);
        connect(client, &RedisClient::statusChanged, this, &ServerStatusBar::update);
        connect(client, &RedisClient::readOnlyChanged, this, &ServerStatusBar::update);
    }
    update();
}

void ServerStatusBar::update()
{
    QString state, color;
    if (!m_client) {
        state = QStringLiteral("Not connected");
        color = QStringLiteral("#8a8a8a");
    } else {
        switch (m_client->state()) {
        case RedisClient::State::Idle:
        case RedisClient::State::Connecting:
            state = QStringLiteral("Connecting");
            color = QStringLiteral("#c98a00");
            break;
        case RedisClient::State::Connected:
            state = QStringLiteral("Connected");
            color = QStringLiteral("#2e7d32");
            break;
        case RedisClient::State::Reconnecting:
            state = QStringLiteral("Reconnecting");
            color = QStringLiteral("#c98a00");
            break;
        case RedisClient::State::Failed:
            state = QStringLiteral("Refused");
            color = QStringLiteral("#b02a1e");
            break;
        }
    }
    m_state->setText(QStringLiteral("<span style='color:%1'>●</span> %2").arg(color, state));

    const auto status = m_client ? m_client->status() : std::nullopt;
    const bool live = m_client && m_client->state() == RedisClient::State::Connected;
    if (m_client && status) {
        const ServerInfo &i = status->info;
        QString server = i.version.isEmpty() ? QStringLiteral("Redis") : QStringLiteral("Redis %1").arg(i.version);
        const bool cluster = i.mode == QLatin1String("cluster");
        if (!i.role.isEmpty() && !cluster)
            server += QStringLiteral(" · %1").arg(i.role == QLatin1String("slave") ? QStringLiteral("replica") : i.role);
        m_server->setText(QStringLiteral("%1 · %2").arg(server, m_client->endpoint()));
        m_nodes->setText(nodesSummary(i, cluster));
        QStringList lines, rows;
        for (const Connection::Node &n : i.nodes) {
            const QString what = n.describe();
            lines << QStringLiteral("%1 %2").arg(n.address.toString(), what);
            rows << QStringLiteral("<tr><td>%1</td><td>&nbsp;%2</td></tr>").arg(n.address.toString().toHtmlEscaped(), what.toHtmlEscaped());
        }
        m_nodesText = lines.join(QLatin1Char('\n'));
        m_nodes->setToolTip(QStringLiteral("<table>%1</table>").arg(rows.join(QString())));
        const bool showNodes =
            cluster || i.nodes.size() > 1 || (!i.nodes.empty() && i.nodes.front().role.contains(QLatin1String("sentinel")));
        m_nodes->setVisible(showNodes);
        m_nodesDivider->setVisible(showNodes);
        const QString over = overMasters(i);
        m_memory->setToolTip(cluster ? QStringLiteral("used_memory from INFO memory, summed over %1").arg(over)
                                     : QStringLiteral("used_memory from INFO memory"));
        m_keys->setToolTip(cluster ? QStringLiteral("DBSIZE summed over %1").arg(over) : QStringLiteral("DBSIZE of the selected database"));
        const int paced = m_client->pacedMs(1000);
        QString latency = live ? QStringLiteral("Round trip %1").arg(formatRoundTrip(status->roundTripMs)) : QStringLiteral("Round trip –");
        if (live && paced > 1000) // a slow link: say how the console adapted
            latency += QStringLiteral(" · views every %1").arg(formatSpan(qint64(paced) * 1000));
        m_latency->setText(latency);
        m_latency->setToolTip(
            live && paced > 1000
                ? QStringLiteral("A slow link: key views, the keys panel and the following of changes made elsewhere are read at most "
                                 "once every %1 (%2 round trips), so that they leave the link mostly idle. Measured by a PING with "
                                 "INFO every 2 s.")
                      .arg(formatSpan(qint64(paced) * 1000))
                      .arg(RedisClient::kPaceRoundTrips)
                : QStringLiteral("Measured by a PING with INFO every 2 s"));
        m_memory->setText(i.usedMemory > 0 ? QStringLiteral("Memory %1").arg(formatSize(i.usedMemory)) : QStringLiteral("Memory ?"));
        m_keys->setText(formatKeys(i.dbSize));
    } else {
        m_server->setText(m_client ? m_client->endpoint() : QStringLiteral("No server"));
        m_latency->setText(QStringLiteral("Round trip –"));
        m_memory->setText(QStringLiteral("Memory –"));
        m_keys->setText(QStringLiteral("– keys"));
        m_nodes->hide();
        m_nodesDivider->hide();
        m_nodesText.clear();
    }
    const bool locked = m_client && m_client->isReadOnly();
    m_lock->setText(locked ? QStringLiteral("Read-only") : QStringLiteral("Writable"));
    m_lock->setToolTip(!locked                              ? QStringLiteral("Changes are allowed; lock with the toolbar's lock")
                       : m_client->isReadOnlyForSession() ? QStringLiteral("Changes are refused for this whole session (--read-only)")
                                                          : QStringLiteral("Changes are refused before anything is sent; unlock with the toolbar's lock"));
}

QString ServerStatusBar::summary() const
{
    QStringList parts;
    for (QLabel *l : {m_server, m_nodes, m_latency, m_memory, m_keys, m_lock, m_state}) {
        if (l->isHidden())
            continue;
        QString t = l->text();
        t.remove(QRegularExpression(QStringLiteral("<[^>]*>")));
        parts << t.replace(QStringLiteral("●"), QString()).trimmed();
    }
    return parts.join(QStringLiteral(" | "));
}

} // namespace ratescope::ui
