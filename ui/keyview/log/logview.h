// A sliding log's window on a time axis inside a key's tab: admitted entries, the rolling count,
// the limit and where capacity returns, with the entries listed below. Read-only.
#pragma once

#include "algorithm.h"
#include "policy.h"
#include "redisclient.h"

#include <QByteArray>
#include <QWidget>

#include <optional>

namespace ratescope::ui {

class LogView : public QWidget {
    Q_OBJECT
public:
    LogView(RedisClient *client, const QByteArray &key, QWidget *parent = nullptr);
    ~LogView() override;

    // What the key view learned in its last refresh: the limits in force (nullopt: no policy or
    // override gives any), the log's score unit (as classified), and the clock to draw against.
    // Triggers a read of the window for that now.
    void setContext(const std::optional<ratescope::LimitSpec> &spec, ratescope::ScoreUnit unit, qint64 nowUs);
    bool isLoaded() const { return m_loaded; }

signals:
    void loaded();

private:
    QPointer<RedisClient> m_client;
    QByteArray m_key;
    bool m_loaded = false;
};

} // namespace ratescope::ui
