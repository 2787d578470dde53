// The overrides in force, one row each: key, temporary limit, who granted it, and a countdown
// to its expiry read against the page's clock (a frozen one in tests).
#pragma once

#include "admin/policy.h"

#include <QAbstractTableModel>

namespace ratescope::ui {

class OverrideTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { KeyColumn, LimitColumn, SetByColumn, ExpiresColumn, ColumnCount };

    explicit OverrideTableModel(QObject *parent = nullptr);
    void setOverrides(std::vector<Override> overrides);
    const std::vector<Override> &overrides() const { return m_overrides; }
    // Moves the countdown on: only the expiry column changes.
    void setNow(const QDateTime &now);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // "1 h 59 m 03 s", "14 m 05 s", "42 s", "expired": seconds matter when it runs out soon.
    static QString countdown(qint64 ms);

private:
    std::vector<Override> m_overrides;
    QDateTime m_now;
};

} // namespace ratescope::ui
