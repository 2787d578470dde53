// A tab for one key opened from the keys panel: what it is, the policy and limits in force,
// how full it is and when capacity returns, its TTL and memory; refreshed every 2 s while
// shown. Later issues add the window's contents on a time axis.
#pragma once

#include "redisclient.h"
#include <QPointer>
#include <QTimer>
#include <QWidget>

class QFormLayout;
class QLabel;
class QProgressBar;

namespace ratescope::ui {

class KeyPage : public QWidget {
    Q_OBJECT
public:
    KeyPage(RedisClient *client, const QByteArray &key, const QByteArray &ns,
            QWidget *parent = nullptr);
    QByteArray key() const { return m_key; }
    void refresh();
    bool isLoaded() const { return m_loaded; }
    QString fieldText(const QString &name) const;

signals:
    void loaded();

private:
    QLabel *addField(const QString &name);

    QPointer<RedisClient> m_client;
    QByteArray m_key;
    QByteArray m_ns;
    bool m_loaded = false;
    bool m_pending = false;
    QFormLayout *m_form;
    QHash<QString, QLabel *> m_fields;
    QProgressBar *m_bar;
    QLabel *m_problem;
    QTimer m_timer;
};

} // namespace ratescope::ui
