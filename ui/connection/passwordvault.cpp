#include "passwordvault.h"

#include <QPointer>
#include <qt6keychain/keychain.h>

namespace ratescope::ui {

namespace {

const QString kService = QStringLiteral("Ratescope");

} // namespace

PasswordVault::PasswordVault(Backend backend, QObject *parent)
    : QObject(parent)
    , m_backend(backend)
{
}

QString PasswordVault::keychainKey(const QString &profile, Secret which)
{
    return (which == Secret::Sentinel ? QStringLiteral("sentinels/%1") : QStringLiteral("profile/%1"))
        .arg(profile);
}

void PasswordVault::store(const QString &profile, const QString &password, QObject *context,
                          std::function<void(Kept, QString)> done, Secret which)
{
    const QString key = keychainKey(profile, which);
    m_session.insert(key, password);
    if (m_backend == Backend::SessionOnly || m_keychainMissing) {
        QMetaObject::invokeMethod(
            context,
            [done] {
                done(Kept::ForThisSession,
                     QStringLiteral("No keychain service is running: the password is kept for this "
                                    "session only and asked for next time."));
            },
            Qt::QueuedConnection);
        return;
    }
    auto *job = new QKeychain::WritePasswordJob(kService, this);
    job->setAutoDelete(true);
    job->setInsecureFallback(false); // never plain text
    job->setKey(key);
    job->setTextData(password);
    QPointer<QObject> guard(context);
    connect(job, &QKeychain::Job::finished, this, [this, guard, done](QKeychain::Job *j) {
        if (!guard)
            return;
        if (j->error() == QKeychain::NoError) {
            done(Kept::InKeychain, {});
            return;
        }
        m_keychainMissing = true;
        const QString why = j->errorString();
        done(Kept::ForThisSession,
             QStringLiteral("The system keychain is not available%1: the password is kept for this "
                            "session only and asked for next time.")
                 .arg(why.isEmpty() || why == QLatin1String("Unknown error")
                          ? QString()
                          : QStringLiteral(" (%1)").arg(why)));
    });
    job->start();
}

void PasswordVault::fetch(const QString &profile, QObject *context,
                          std::function<void(std::optional<QString>)> done, Secret which)
{
    const QString key = keychainKey(profile, which);
    if (m_session.contains(key) || m_backend == Backend::SessionOnly || m_keychainMissing) {
        std::optional<QString> known;
        if (m_session.contains(key))
            known = m_session.value(key);
        QMetaObject::invokeMethod(
            context, [done, known] { done(known); }, Qt::QueuedConnection);
        return;
    }
    auto *job = new QKeychain::ReadPasswordJob(kService, this);
    job->setAutoDelete(true);
    job->setInsecureFallback(false);
    job->setKey(key);
    QPointer<QObject> guard(context);
    connect(job, &QKeychain::Job::finished, this, [this, guard, done, key](QKeychain::Job *j) {
        if (j->error() != QKeychain::NoError && j->error() != QKeychain::EntryNotFound)
            m_keychainMissing = true;
        if (!guard)
            return;
        if (j->error() != QKeychain::NoError) {
            done(std::nullopt);
            return;
        }
        const QString password = static_cast<QKeychain::ReadPasswordJob *>(j)->textData();
        m_session.insert(key, password);
        done(password);
    });
    job->start();
}

void PasswordVault::forget(const QString &profile, Secret which)
{
    m_session.remove(keychainKey(profile, which));
    if (m_backend == Backend::SessionOnly || m_keychainMissing)
        return;
    auto *job = new QKeychain::DeletePasswordJob(kService, this);
    job->setAutoDelete(true);
    job->setKey(keychainKey(profile, which));
    job->start();
}

} // namespace ratescope::ui
