#include "keypage.h"

#include "connection.h"
#include "displayformat.h"
#include "keydetails.h"
#include "redisclient.h"

#include <QFormLayout>
#include <QLabel>
#include <QProgressBar>
#include <QVBoxLayout>

namespace ratescope::ui {

KeyPage::KeyPage(RedisClient *client, const QByteArray &key, const QByteArray &ns, QWidget *parent)
    : QWidget(parent)
    , m_client(client)
    , m_key(key)
    , m_ns(ns)
{
    auto *title = new QLabel(this);
    title->setText(QStringLiteral("<b>%1</b>").arg(QString::fromUtf8(key).toHtmlEscaped()));
    title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    title->setWordWrap(true);
    m_form = new QFormLayout;
    m_form->setLabelAlignment(Qt::AlignLeft);
    for (const char *name : {"Type", "Format", "Policy", "Limit", "Used", "Remaining",
                             "Full again in", "TTL", "Memory"})
        addField(QLatin1String(name));
    m_bar = new QProgressBar(this);
    m_bar->setRange(0, 1000);
    m_bar->setTextVisible(false);
    m_bar->setMaximumHeight(10);
    m_problem = new QLabel(this);
    m_problem->setWordWrap(true);
    m_problem->setStyleSheet(QStringLiteral("QLabel { color: #b02a1e; }"));
    m_problem->hide();
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(title);
    layout->addWidget(m_bar);
    layout->addLayout(m_form);
    layout->addWidget(m_problem);
    layout->addStretch(1);
    m_timer.setInterval(2000);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        if (isVisible())
            refresh();
    });
    m_timer.start();
    refresh();
}

QLabel *KeyPage::addField(const QString &name)
{
    auto *value = new QLabel(QStringLiteral("…"), this);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_form->addRow(name, value);
    m_fields.insert(name, value);
    return value;
}

QString KeyPage::fieldText(const QString &name) const
{
    const QLabel *l = m_fields.value(name);
    return l ? l->text() : QString();
}

void KeyPage::refresh()
{
    if (!m_client || m_pending)
        return;
    m_pending = true;
    m_client->request(
        this,
        [key = m_key, ns = m_ns](Connection &c) {
            KeyDetails d =
                readKeyDetails(c, {key}, PolicyStore(c, QString::fromUtf8(ns)).list(), ns).front();
            if (const auto placed = c.placementOf(key))
                d.placement = QStringLiteral("slot %1 on %2")
                                  .arg(placed->slot)
                                  .arg(placed->master.host.isEmpty() ? QStringLiteral("no master")
                                                                     : placed->master.toString());
            return d;
        },
        [this](const Outcome<KeyDetails> &o) {
            m_pending = false;
            if (!o.ok()) {
                m_problem->setText(o.failure().message);
                m_problem->setVisible(!o.failure().isConnectionLoss());
                return;
            }
            const KeyDetails &d = o.value();
            auto set = [this](const char *name, const QString &text) {
                m_fields.value(QLatin1String(name))
                    ->setText(text.isEmpty() ? QStringLiteral("–") : text);
            };
            set("Type", d.exists() ? QString::fromUtf8(d.type)
                                   : QStringLiteral("none: the key does not exist (now)"));
            set("Format", d.kind.isLimiter()
                              ? d.kind.label()
                              : QStringLiteral("not a limiter Ratescope recognises"));
            set("Policy", d.policy.isEmpty() ? QStringLiteral("none matches")
                                             : QStringLiteral("%1 (%2)").arg(
                                                   d.policy, QString::fromUtf8(d.policyMatch)));
            set("Limit", d.spec ? formatLimit(*d.spec) +
                                      (d.overridden ? QStringLiteral(" (override)") : QString())
                                : QString());
            if (d.usage) {
                const Decision &dec = d.usage->decision;
                set("Used", QStringLiteral("%1 of %2")
                                .arg(formatCount(d.usage->usedNow), formatCount(dec.limit)));
                set("Remaining",
                    dec.allowed
                        ? formatCount(d.remaining())
                        : QStringLiteral("%1: the next request is denied, allowed again in %2")
                              .arg(formatCount(d.remaining()), formatSpan(dec.retryAfterUs)));
                set("Full again in", dec.resetAfterUs > 0 ? formatSpan(dec.resetAfterUs)
                                                          : QStringLiteral("full now"));
                m_bar->setValue(int(std::min<qint64>(
                    1000, dec.limit > 0 ? d.usage->usedNow * 1000 / dec.limit : 0)));
            } else {
                for (const char *name : {"Used", "Remaining", "Full again in"})
                    set(name, QString());
                m_bar->setValue(0);
            }
            set("TTL", d.exists() ? formatTtl(d.pttlMs) : QString());
            set("Memory", formatSize(d.memory));
            if (!d.placement.isEmpty()) { // a cluster: which master holds it
                if (!m_fields.contains(QStringLiteral("Node")))
                    addField(QStringLiteral("Node"));
                set("Node", d.placement);
            }
            m_problem->setText(d.problem);
            m_problem->setVisible(!d.problem.isEmpty());
            if (!m_loaded) {
                m_loaded = true;
                emit loaded();
            }
        });
}

} // namespace ratescope::ui
