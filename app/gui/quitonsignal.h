// SIGINT, SIGTERM and SIGHUP end the console cleanly (the demo's server stopped, its
// directory removed) instead of killing it mid-flight.
#pragma once

#include <QObject>

class QSocketNotifier;

class QuitOnSignal : public QObject {
    Q_OBJECT
public:
    explicit QuitOnSignal(QObject *parent = nullptr);
    ~QuitOnSignal() override;

private:
    QSocketNotifier *m_notifier = nullptr;
};
