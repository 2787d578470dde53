#include "overviewpage.h"

#include "displayformat.h"
#include "base/errors.h"
#include "keyactions.h"
#include "overviewqueries.h"
#include "policytablemodel.h"
#include "redisclient.h"
#include "redis/serverinfo.h"
#include "servertext.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace ratescope::ui {

namespace {

QString planHtml(const DeployPlan &plan)
{
    QStringList masters;
    for (const DeployPlan::Target &t : plan.targets)
        masters << QStringLiteral("<li>%1: %2</li>").arg(t.address.toHtmlEscaped(), plan.targetText(t).toHtmlEscaped());
    QStringList functions;
    for (const QByteArray &f : plan.functions)
        functions << QString::fromLatin1(f);
    return QStringLiteral("<p>Functions library <b>%1 %2</b> (FUNCTION LOAD REPLACE), built from this release's "
                          "scripts:</p><p><code>%3</code></p><p>On %4:</p><ul>%5</ul>")
        .arg(QString::fromLatin1(plan.library), plan.version, functions.join(QStringLiteral(", ")),
             plan.targets.size() == 1 ? QStringLiteral("the server") : QStringLiteral("%1 masters").arg(plan.targets.size()),
             masters.join(QString()));
}

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
    m_warning->setStyleSheet(QStringLiteral("QLabel { background: #fcefc7; padding: 6px; border-radius: 3px; }"));
    m_warning->hide();
    m_scripts = new QLabel(this);
    m_scripts->setWordWrap(true);
    m_scripts->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_deploy = new QPushButton(QStringLiteral("Deploy…"), this);
    m_deploy->setToolTip(QStringLiteral("Load this release's functions library on every master (previewed first)"));
    connect(m_deploy, &QPushButton::clicked, this, &OverviewPage::deploy);
    m_policyNote = new QLabel(this);
    m_policyNote->setTextFormat(Qt::PlainText); // policy names and errors come from the server
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
    const int widths[] = {10 * em, 10 * em, 14 * em, 7 * em}; // "sliding-buckets (12 x 5s)", "sliding-log (ms)"
    for (int c = 0; c < 4; ++c)
        m_table->horizontalHeader()->resizeSection(c, widths[c]);

    auto *title = new QLabel(QStringLiteral("<b>Policies</b>"), this);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(m_warning);
    auto *scriptsRow = new QHBoxLayout;
    scriptsRow->addWidget(new QLabel(QStringLiteral("<b>Scripts</b>"), this));
    scriptsRow->addWidget(m_scripts, 1);
    scriptsRow->addWidget(m_deploy);
    layout->addLayout(scriptsRow);
    layout->addSpacing(6);
    layout->addWidget(title);
    layout->addWidget(m_policyNote);
    layout->addWidget(m_table, 1);

    m_timer.setInterval(10000);
    connect(&m_timer, &TickTimer::timeout, this, [this] {
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
    m_timer.setClient(client);
    m_pending = m_again = false; // answers to the last client's reads are dropped (cancel)
    m_ns = ns;
    m_loaded = false;
    m_policies->setPolicies({});
    m_warning->hide();
    m_scripts->clear();
    updateDeployable();
    if (!client) {
        m_summary->setText(QStringLiteral("Not connected. Pick a profile in the toolbar, or start <code>ratescope "
                                          "--demo</code> for a sandbox with live traffic."));
        m_policyNote->clear();
        m_timer.stop();
        return;
    }
    m_summary->setText(QStringLiteral("Connecting to %1…").arg(client->endpoint().toHtmlEscaped()));
    connect(client, &RedisClient::stateChanged, this, [this](RedisClient::State s) {
        updateDeployable();
        if (s == RedisClient::State::Connected && !m_loaded && !m_pending && isVisible())
            refresh(); // (a read made as the console connected is under way, or answers soon)
    });
    connect(client, &RedisClient::readOnlyChanged, this, &OverviewPage::updateDeployable);
    m_timer.start();
    if (isVisible())
        refresh(); // else when first shown: a console opened on another tab reads its own first
}

void OverviewPage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_client && !m_loaded)
        refresh();
}

void OverviewPage::refresh()
{
    if (!m_client)
        return;
    if (m_pending) { // one read in flight at most; read once more when it is back
        m_again = true;
        return;
    }
    m_pending = true;
    // A repeat(): its rounds learnt from the last read; the first goes with the handshake when
    // the page is shown as the console connects.
    m_client->repeat(
        &m_requests, m_readMemory,
        [ns = MetadataNamespace(m_ns)](Connection &c, const RedisClient::Tick &) { return readOverview(c, ns); },
        [this](const Outcome<Overview> &outcome) {
            m_pending = false;
            if (std::exchange(m_again, false))
                QMetaObject::invokeMethod(this, &OverviewPage::refresh, Qt::QueuedConnection); // after this answer is shown
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
                rows << QStringLiteral("<tr><td style='padding-right:14px; color:#666'>%1</td><td>%2</td></tr>")
                            .arg(name, value.toHtmlEscaped());
            };
            row(QStringLiteral("Server"), m_client->url());
            const bool cluster = i.mode == QLatin1String("cluster");
            if (o.haveInfo) {
                QString redis = QStringLiteral("%1 · %2").arg(i.version, i.mode);
                if (!cluster)
                    redis += QStringLiteral(" · %1").arg(i.role == QLatin1String("slave") ? QStringLiteral("replica") : i.role);
                const qint64 up = i.uptimeSeconds;
                redis += QStringLiteral(" · up %1").arg(up < 10 ? QStringLiteral("%1 s").arg(up) : formatSpan(up * 1000000));
                row(QStringLiteral("Redis"), redis);
            }
            if (cluster || i.nodes.size() > 1 || (!i.nodes.empty() && i.nodes.front().role.contains(QLatin1String("sentinel")))) {
                QStringList lines;
                for (const Connection::Node &n : i.nodes)
                    lines << QStringLiteral("%1 %2").arg(n.address.toString(), n.describe()).toHtmlEscaped();
                rows << QStringLiteral("<tr><td style='padding-right:14px; color:#666' "
                                       "valign='top'>Nodes</td><td>%1<br>%2</td></tr>")
                            .arg(nodesSummary(i, cluster).toHtmlEscaped(), lines.join(QStringLiteral("<br>")));
            }
            const QString acrossMasters = cluster ? QStringLiteral(" (%1)").arg(overMasters(i)) : QString();
            if (o.haveInfo) {
                row(QStringLiteral("Memory"),
                    QStringLiteral("%1 used%2%3%4")
                        .arg(formatSize(i.usedMemory),
                             i.maxMemory > 0 ? QStringLiteral(" of %1").arg(formatSize(i.maxMemory)) : QStringLiteral(", no maxmemory"),
                             acrossMasters, o.eviction.isEmpty() ? QString() : QStringLiteral(" · eviction %1").arg(o.eviction)));
                row(QStringLiteral("Clients"), QStringLiteral("%1 connected%2").arg(formatCount(i.clients), acrossMasters));
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
            m_scripts->setText(o.scripts ? o.scripts->summary() : QStringLiteral("not readable: %1").arg(o.scriptsProblem));
            m_policies->setPolicies(o.policies);
            m_policyNote->setText(!o.policyProblem.isEmpty() ? QStringLiteral("Policies could not be read: %1").arg(o.policyProblem)
                                  : o.policies.empty()
                                      ? QStringLiteral("No policies in namespace “%1” yet: without one, keys show no limits.").arg(m_ns)
                                      : QStringLiteral("%1 in namespace “%2”. A key's policy is the most "
                                                       "specific match.")
                                            .arg(o.policies.size() == 1 ? QStringLiteral("1 policy")
                                                                        : QStringLiteral("%1 policies").arg(o.policies.size()))
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

QString OverviewPage::scriptsText() const
{
    return m_scripts->text();
}

void OverviewPage::updateDeployable()
{
    QString why = whyReadOnly(m_client);
    if (why.isEmpty() && m_client->state() != RedisClient::State::Connected)
        why = QStringLiteral("Not connected to the server");
    if (why.isEmpty() && m_deploying)
        why = QStringLiteral("A deploy is under way");
    m_deploy->setEnabled(why.isEmpty());
    m_deploy->setToolTip(why.isEmpty() ? QStringLiteral("Load this release's functions library on every master (previewed first)") : why);
}

void OverviewPage::deploy()
{
    if (!m_client || !whyReadOnly(m_client).isEmpty() || m_deploying)
        return;
    m_deploying = true;
    updateDeployable();
    m_client->request(
        &m_requests, [](Connection &c) { return previewDeploy(c, false); },
        [this](const Outcome<DeployPreview> &o) {
            m_deploying = false;
            updateDeployable();
            if (!o.ok()) {
                QMessageBox::warning(this, QStringLiteral("Deploy"),
                                     QStringLiteral("Reading the scripts' state failed: %1").arg(o.failure().message));
                return;
            }
            const DeployPreview &p = o.value();
            if (!p.plan) {
                QMessageBox::warning(this, QStringLiteral("Deploy"), QStringLiteral("The library cannot be deployed: %1").arg(p.problem));
                return;
            }
            confirmDeploy(*p.plan);
        });
}

void OverviewPage::confirmDeploy(const DeployPlan &plan)
{
    QMessageBox box(this);
    box.setWindowTitle(QStringLiteral("Deploy the functions library"));
    box.setTextFormat(Qt::RichText);
    QString text = planHtml(plan);
    QPushButton *go = nullptr;
    if (!plan.refusal().isEmpty()) {
        box.setIcon(QMessageBox::Warning);
        text += QStringLiteral("<p>%1</p><p>Replace it with this release's library anyway?</p>").arg(plan.refusal().toHtmlEscaped());
        go = box.addButton(QStringLiteral("Replace"), QMessageBox::DestructiveRole);
    } else if (!plan.needsLoad()) {
        box.setIcon(QMessageBox::Information);
        text += QStringLiteral("<p>Every master already has it: nothing to load.</p>");
    } else {
        text += QStringLiteral("<p>Services and Ratescope then call it with FCALL; the scripts stay in use where it is missing.</p>");
        go = box.addButton(QStringLiteral("Deploy"), QMessageBox::AcceptRole);
    }
    box.setText(text);
    box.addButton(go ? QMessageBox::Cancel : QMessageBox::Close);
    box.exec();
    if (!go || box.clickedButton() != go || !m_client || !whyReadOnly(m_client).isEmpty())
        return;
    const bool replace = !plan.refusal().isEmpty();
    m_deploying = true;
    updateDeployable();
    m_client->request(
        &m_requests,
        [previewed = plan.toJson(), replace, ns = MetadataNamespace(m_ns), op = m_operator](Connection &c) {
            return deployAsPreviewed(c, ns, previewed, replace, op);
        },
        [this](const Outcome<QString> &o) {
            m_deploying = false;
            updateDeployable();
            if (!o.ok())
                QMessageBox::warning(this, QStringLiteral("Deploy"), QStringLiteral("Deploy failed: %1").arg(o.failure().message));
            else if (!o.value().isEmpty())
                QMessageBox::warning(this, QStringLiteral("Deploy"), o.value());
            refresh();
        });
}

} // namespace ratescope::ui
