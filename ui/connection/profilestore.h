// Connection profiles saved with QSettings (never a password: see PasswordVault).
#pragma once

#include "connectionprofile.h"

#include <QList>

#include <memory>
#include <optional>

class QSettings;

namespace ratescope::ui {

class ProfileStore {
public:
    // settings: where to keep them (tests pass their own); nullptr: the application's.
    explicit ProfileStore(QSettings *settings = nullptr);
    ~ProfileStore();

    QList<ConnectionProfile> list() const; // by name
    std::optional<ConnectionProfile> find(const QString &name) const;
    bool contains(const QString &name) const { return find(name).has_value(); }
    // Saves `profile`; when it was called `previousName` before, that entry goes.
    void save(const ConnectionProfile &profile, const QString &previousName = {});
    void remove(const QString &name);

    // The operator name recorded with this profile's changes beside the OS user: nullopt
    // when never asked, empty when the operator chose to be known by the OS user alone.
    std::optional<QString> operatorName(const QString &profile) const;
    void setOperatorName(const QString &profile, const QString &name);

    QString lastUsed() const;
    void setLastUsed(const QString &name);

private:
    QSettings &settings() const;

    std::unique_ptr<QSettings> m_own;
    QSettings *m_settings;
};

} // namespace ratescope::ui
