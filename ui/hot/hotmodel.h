// The Hot view's tables: the limiters of one pass, busiest first (as ranked), and the masters
// with their share of the traffic.
#pragma once

#include "load/hotlimiters.h"

#include <QAbstractTableModel>

namespace ratescope::ui {

class HotLimiterModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Key, Algorithm, Rate, Used, Fill, Master, ColumnCount };
    enum Role {
        KeyBytesRole = Qt::UserRole + 1, // the key's bytes (QByteArray)
        FractionRole,                    // Used: used / limit; Rate: share of the busiest
        DenyingRole,                     // bool
        SortRole,                        // a number for Rate, Used and Fill
    };

    explicit HotLimiterModel(QObject *parent = nullptr);

    // The ranked limiters of a pass (busiest first); cluster: show the Master column's values.
    void setLimiters(std::vector<HotLimiter> limiters);
    void clear();
    const HotLimiter &limiter(int row) const { return m_rows[size_t(row)]; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<HotLimiter> m_rows;
    double m_maxRate = 0;
};

class HotMasterModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Address, Keys, Limiters, Rate, Share, Denying, ColumnCount };
    static constexpr int FractionRole = Qt::UserRole + 2;

    explicit HotMasterModel(QObject *parent = nullptr);
    void setMasters(std::vector<HotMaster> masters, bool denyingKnown);
    void clear();

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<HotMaster> m_rows;
    double m_total = 0;
    bool m_denyingKnown = true;
};

} // namespace ratescope::ui
