#include "connectionbanner.h"

#include "redisclient.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

namespace ratescope::ui {

namespace {

// The client's error as a sentence after the banner's own: "could not connect to <endpoint>: "
// left out where the banner says it already, the first letter a capital, a full stop.
QString detailText(QString error, const QString &endpoint)
{
    const QString said = QStringLiteral("could not connect to %1: ").arg(endpoint);
    if (error.startsWith(said, Qt::CaseInsensitive))
        error = error.mid(said.size());
    if (error.isEmpty())
        return error;
    error[0] = error[0].toUpper();
    if (!error.endsWith(QLatin1Char('.')))
        error += QLatin1Char('.');
    return error.toHtmlEscaped();
}

} // namespace

ConnectionBanner::ConnectionBanner(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("connectionBanner"));
    setAttribute(Qt::WA_StyledBackground);
    m_text = new QLabel(this);
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_retry = new QPushButton(QStringLiteral("Retry now"), this);
    m_edit = new QPushButton(QStringLiteral("Edit profile…"), this);
    m_password = new QPushButton(QStringLiteral("Enter password…"), this);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(10, 6, 10, 6);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_password);
    layout->addWidget(m_edit);
    layout->addWidget(m_retry);
    connect(m_retry, &QPushButton::clicked, this, [this] {
        if (m_client)
            m_client->retryNow();
    });
    connect(m_edit, &QPushButton::clicked, this, &ConnectionBanner::editProfileRequested);
    connect(m_password, &QPushButton::clicked, this, &ConnectionBanner::passwordRequested);
    m_countdown.setInterval(1000);
    connect(&m_countdown, &QTimer::timeout, this, &ConnectionBanner::update);
    hide();
}

void ConnectionBanner::setClient(RedisClient *client, bool canEditProfile)
{
    m_canEdit = canEditProfile;
    if (m_client)
        disconnect(m_client, nullptr, this, nullptr);
    m_client = client;
    if (client)
        connect(client, &RedisClient::stateChanged, this, &ConnectionBanner::update);
    update();
}

QString ConnectionBanner::text() const
{
    return isHidden() ? QString() : m_text->text();
}

void ConnectionBanner::update()
{
    const auto state = m_client ? m_client->state() : RedisClient::State::Idle;
    if (state != RedisClient::State::Reconnecting && state != RedisClient::State::Failed) {
        m_countdown.stop();
        hide();
        return;
    }
    const bool failed = state == RedisClient::State::Failed;
    setStyleSheet(failed ? QStringLiteral("#connectionBanner { background: #f8d7d3; border-bottom: 1px solid #d9a39c; }")
                         : QStringLiteral("#connectionBanner { background: #fcefc7; border-bottom: 1px solid #e0c97a; }"));
    QString text;
    const bool login = failed && m_client->needsCredentials();
    if (login) {
        text = (m_client->passwordMissing() ? QStringLiteral("<b>%1 needs a password.</b> %2")
                                            : QStringLiteral("<b>%1 refused the login.</b> %2"))
                   .arg(m_client->endpoint().toHtmlEscaped(), detailText(m_client->lastError(), m_client->endpoint()));
    } else if (failed) {
        text = QStringLiteral("<b>%1 refused the connection.</b> %2<br>Retrying cannot help until the "
                              "profile changes.")
                   .arg(m_client->endpoint().toHtmlEscaped(), detailText(m_client->lastError(), m_client->endpoint()));
    } else {
        const int s = m_client->secondsUntilRetry();
        // "Lost" only of a connection that was there: a first attempt that failed could not connect.
        const bool was = m_client->hasConnected();
        text = (was ? QStringLiteral("<b>Connection to %1 lost.</b> %2<br>%3") : QStringLiteral("<b>Could not connect to %1.</b> %2<br>%3"))
                   .arg(m_client->endpoint().toHtmlEscaped(), detailText(m_client->lastError(), m_client->endpoint()),
                        s > 0 ? (was ? QStringLiteral("Reconnecting in %1 s…") : QStringLiteral("Trying again in %1 s…")).arg(s)
                              : (was ? QStringLiteral("Reconnecting…") : QStringLiteral("Trying again…")));
    }
    m_text->setText(text);
    m_edit->setVisible(failed && m_canEdit);
    m_password->setVisible(login);
    m_retry->setVisible(!login); // the same login again cannot help
    if (!m_countdown.isActive())
        m_countdown.start();
    show();
}

} // namespace ratescope::ui
