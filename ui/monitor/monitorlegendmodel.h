// The monitor's legend: one row per pinned key with its colour, what it is, and its current
// remaining / limit (or why it is not drawn). The page owns the rows; this shows them.
#pragma once

#include <QAbstractTableModel>
#include <QColor>

namespace ratescope::ui {

struct LegendRow {
    QByteArray key;
    QString shownKey; // escaped: never rich text
    QColor color;
    QString kind;    // "sliding-log", "sliding-log (ms scores)", ...
    QString current; // "12 / 100 remaining"
    QString status;  // "", "denied now, retry in 1.2 s", "no limits known: add a policy", ...
    bool drawn = false;
    bool denied = false;
};

class MonitorLegendModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { KeyColumn, KindColumn, CurrentColumn, StatusColumn, ColumnCount };
    static constexpr int KeyRole = Qt::UserRole + 1; // the raw key bytes

    explicit MonitorLegendModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void append(const LegendRow &row);
    void remove(int row);
    void update(int row, const LegendRow &value); // signals only the cells that changed
    const LegendRow &row(int i) const { return m_rows[size_t(i)]; }

private:
    std::vector<LegendRow> m_rows;
};

} // namespace ratescope::ui
