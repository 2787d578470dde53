#include "overviewpage.h"

#include "connection.h"
#include "displayformat.h"
#include "errors.h"
#include "policytablemodel.h"
#include "redisclient.h"
#include "serverinfo.h"
#include "serverstatusbar.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

namespace ratescope::ui {

namespace {

struct Overview {
    ServerInfo info;       // in a cluster, summed over the masters
    bool haveInfo = false; // a read-only ACL user may not run INFO
    QString eviction;      // maxmemory-policy ("a/b" when masters differ); empty when CONFIG is not allowed
    std::vector<Policy> policies;
    QString policyProblem;
};

} // namespace

OverviewPage::OverviewPage(QWidget *parent)
    : QWidget(parent)
{
    m_summary = new QLabel(this);
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_summary->setWordWrap(true);
    m_warning = new QLabel(this);
    m_warning->setWordWrap(true);
    m_warning->setStyleSheet(
        QStringLiteral("QLabel { background: #fcefc7; padding: 6px; border-radius: 3px; }"));
    m_warning->hide();
    m_policyNote = new QLabel(this);
    m_policyNote->setWordWrap(true);
    m_policies = new PolicyTableModel(this);
    m_table = new QTableView(this);
    m_table->setModel(m_policies);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_table->setShowGrid(false);
    m_table->setWordWrap(false);
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('m'));
    const int widths[] = {10 * em, 10 * em, 10 * em, 7 * em};
    for (int c = 0; c < 4; ++c)
        m_table->horizontalHeader()->resizeSection(c, widths[c]);

    auto *title = new QLabel(QStringLiteral("<b>Policies</b>"), this);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(m_warning);
    layout->addSpacing(6);
    layout->addWidget(title);
    layout->addWidget(m_policyNote);
    layout->addWidget(m_table, 1);

    m_timer.setInterval(10000);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        if (isVisible())
            refresh();
    });
    setClient(nullptr, QString());
}

void OverviewPage::setClient(RedisClient *client, const QString &ns)
{
    if (m_client) {
        m_client->cancel(&m_requests);
        disconnect(m_client, nullptr, this, nullptr);
    }
    m_client = client;
    m_ns = ns;
    m_loaded = false;
    m_policies->setPolicies({});
    m_warning->hide();
    if (!client) {
        m_summary->setText(
            QStringLiteral("Not connected. Pick a profile in the toolbar, or start <code>ratescope "
                           "--demo</code> for a sandbox with live traffic."));
        m_policyNote->clear();
        m_timer.stop();
        return;
    }
    m_summary->setText(QStringLiteral("Connecting to %1…").arg(client->endpoint().toHtmlEscaped()));
    connect(client, &RedisClient::stateChanged, this, [this](RedisClient::State s) {
        if (s == RedisClient::State::Connected && !m_loaded)
            refresh();
    });
    m_timer.start();
    refresh();
}

void OverviewPage::refresh()
{
    if (!m_client)
        return;
    m_client->request(
        &m_requests,
        [ns = m_ns](Connection &c) {
            Overview o;
            try {
                o.info = ServerInfo::fetch(c);
                o.haveInfo = true;
            } catch (const ReplyError &) {
                // a read-only ACL user may not run INFO
                o.info = ServerInfo::fetchWithoutInfo(c);
            }
            // Every master's (a cluster's may differ); nothing when CONFIG is not allowed.
            QStringList policies;
            for (const auto &replies : c.onEachMaster({{"CONFIG", "GET", "maxmemory-policy"}}))
                if (!replies.front().isError() && replies.front().size() == 2 &&
                    !policies.contains(replies.front()[1].text()))
                    policies << replies.front()[1].text();
            o.eviction = policies.join(QLatin1Char('/'));
            try {
                o.policies = PolicyStore(c, ns).list();
            } catch (const ReplyError &e) {
                o.policyProblem = e.message();
            } catch (const ProtocolError &e) {
                o.policyProblem = e.message();
            }
            return o;
        },
        [this](const Outcome<Overview> &outcome) {
            if (!outcome.ok()) {
                if (!outcome.failure().isConnectionLoss())
                    m_summary->setText(QStringLiteral("<span style='color:#b02a1e'>Reading the "
                                                      "server's state failed: %1</span>")
                                           .arg(outcome.failure().message.toHtmlEscaped()));
                return;
            }
            const Overview &o = outcome.value();
            const auto &i = o.info;
            QStringList rows;
            auto row = [&rows](const QString &name, const QString &value) {
                rows
                    << QStringLiteral(
                           "<tr><td style='padding-right:14px; color:#666'>%1</td><td>%2</td></tr>")
                           .arg(name, value.toHtmlEscaped());
            };
            row(QStringLiteral("Server"), m_client->url());
            const bool cluster = i.mode == QLatin1String("cluster");
            if (o.haveInfo) {
                QString redis = QStringLiteral("%1 · %2").arg(i.version, i.mode);
                if (!cluster)
                    redis += QStringLiteral(" · %1").arg(
                        i.role == QLatin1String("slave") ? QStringLiteral("replica") : i.role);
                const qint64 up = i.uptimeSeconds;
                redis += QStringLiteral(" · up %1")
                             .arg(up < 10 ? QStringLiteral("%1 s").arg(up)
                                          : formatSpan(up * 1000000));
                row(QStringLiteral("Redis"), redis);
            }
            if (cluster || i.nodes.size() > 1 ||
                (!i.nodes.empty() && i.nodes.front().role.contains(QLatin1String("sentinel")))) {
                QStringList lines;
                for (const Connection::Node &n : i.nodes)
                    lines << QStringLiteral("%1 %2").arg(n.address.toString(), n.describe()).toHtmlEscaped();
                rows << QStringLiteral("<tr><td style='padding-right:14px; color:#666' "
                                       "valign='top'>Nodes</td><td>%1<br>%2</td></tr>")
                            .arg(ServerStatusBar::nodesSummary(i, cluster).toHtmlEscaped(),
                                 lines.join(QStringLiteral("<br>")));
            }
            const QString acrossMasters =
                cluster ? QStringLiteral(" (%1)").arg(ServerStatusBar::overMasters(i)) : QString();
            if (o.haveInfo) {
                row(QStringLiteral("Memory"),
                    QStringLiteral("%1 used%2%3%4")
                        .arg(formatSize(i.usedMemory),
                             i.maxMemory > 0
                                 ? QStringLiteral(" of %1").arg(formatSize(i.maxMemory))
                                 : QStringLiteral(", no maxmemory"),
                             acrossMasters,
                             o.eviction.isEmpty()
                                 ? QString()
                                 : QStringLiteral(" · eviction %1").arg(o.eviction)));
                row(QStringLiteral("Clients"),
                    QStringLiteral("%1 connected%2").arg(formatCount(i.clients), acrossMasters));
            }
            QString keys = formatKeys(i.dbSize);
            if (o.haveInfo)
                keys += QStringLiteral(" · %1 with an expiry").arg(formatCount(i.expires));
            row(QStringLiteral("Keys"), keys + acrossMasters);
            m_summary->setText(QStringLiteral("<table>%1</table>").arg(rows.join(QString())));
            // Limiter state must not be evicted to make room: a client would get its quota back.
            const bool evictsAny = o.eviction.contains(QLatin1String("allkeys-"));
            m_warning->setText(QStringLiteral("The eviction policy %1 lets Redis delete any key "
                                              "under memory pressure, limiters included: "
                                              "an evicted limiter hands its client a fresh quota. "
                                              "volatile-* or noeviction keep them.")
                                   .arg(o.eviction));
            m_warning->setVisible(evictsAny);
            m_policies->setPolicies(o.policies);
            m_policyNote->setText(
                !o.policyProblem.isEmpty()
                    ? QStringLiteral("Policies could not be read: %1").arg(o.policyProblem)
                : o.policies.empty()
                    ? QStringLiteral(
                          "No policies in namespace “%1” yet: without one, keys show no limits.")
                          .arg(m_ns)
                    : QStringLiteral("%1 policies in namespace “%2”. A key's policy is the most "
                                     "specific match.")
                          .arg(o.policies.size())
                          .arg(m_ns));
            const bool first = !m_loaded;
            m_loaded = true;
            if (first)
                emit loaded();
        });
}

QString OverviewPage::summaryText() const
{
    return m_summary->text();
}

} // namespace ratescope::ui
