#include "logview.h"

namespace ratescope::ui {

LogView::LogView(RedisClient *client, const QByteArray &key, QWidget *parent)
    : QWidget(parent)
    , m_client(client)
    , m_key(key)
{
}

LogView::~LogView() = default;

void LogView::setContext(const std::optional<LimitSpec> &, ScoreUnit, qint64)
{
    if (!m_loaded) {
        m_loaded = true;
        emit loaded();
    }
}

} // namespace ratescope::ui
