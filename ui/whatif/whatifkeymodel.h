// The What-if view's table of affected keys: every key some spec would have denied, with its
// requests and, per spec, how many were denied and when the first denial came. Sorting is a
// proxy's business (SortRole gives the numbers); keys are shown escaped.
#pragma once

#include "whatifrun.h"

#include <QAbstractTableModel>

#include <vector>

namespace ratescope::ui {

class WhatIfKeyModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Role { SortRole = Qt::UserRole + 1, KeyRole };
    enum Column { KeyColumn, RequestsColumn, FirstSpecColumn };
    static constexpr int kColumnsPerSpec = 2; // denied, first denial

    explicit WhatIfKeyModel(QObject *parent = nullptr);

    // A new comparison: the specs' names (column headers), the keys, and the trace's first
    // request (first denials are shown as the time since it).
    void setResult(const QStringList &specNames, std::vector<WhatIfKey> keys, qint64 traceStartUs);
    void clear();
    const std::vector<WhatIfKey> &keys() const { return m_keys; }
    int specCount() const { return int(m_specNames.size()); }
    static int deniedColumn(int spec) { return FirstSpecColumn + spec * kColumnsPerSpec; }
    static int firstDenialColumn(int spec) { return deniedColumn(spec) + 1; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QStringList m_specNames;
    std::vector<WhatIfKey> m_keys;
    qint64 m_startUs = 0;
};

} // namespace ratescope::ui
