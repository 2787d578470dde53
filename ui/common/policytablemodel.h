// The policies declared under Ratescope's namespace, one row each: name, key pattern,
// algorithm, limit and cost, whether services enforce it; who changed it last in the tooltip.
#pragma once

#include "admin/policy.h"

#include <QAbstractTableModel>

namespace ratescope::ui {

class PolicyTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NameColumn, MatchColumn, AlgorithmColumn, LimitColumn, EnforcedColumn, ColumnCount };

    explicit PolicyTableModel(QObject *parent = nullptr);
    void setPolicies(std::vector<Policy> policies);
    const std::vector<Policy> &policies() const { return m_policies; }
    int rowOf(const QString &name) const; // -1 when there is none

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<Policy> m_policies;
};

} // namespace ratescope::ui
