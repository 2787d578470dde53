// One page of a sliding log's entries for the table under its chart: admission time (local, ms),
// age at the view's now, member and cost.
#pragma once

#include "keys/logwindow.h"

#include <QAbstractTableModel>

#include <vector>

namespace ratescope::ui {

class LogEntriesModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Time, Age, Member, Cost, ColumnCount };
    static constexpr int TimeUsRole = Qt::UserRole + 1; // qint64 admission time in µs

    explicit LogEntriesModel(QObject *parent = nullptr);

    // A new page as of nowUs; offset: the first entry's position in the range (for row numbers).
    void setPage(std::vector<LogEntry> entries, qint64 offset, qint64 total, qint64 nowUs);
    qint64 offset() const { return m_offset; }
    qint64 total() const { return m_total; }
    const LogEntry &entry(int row) const { return m_entries[size_t(row)]; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<LogEntry> m_entries;
    qint64 m_offset = 0;
    qint64 m_total = 0;
    qint64 m_nowUs = 0;
};

} // namespace ratescope::ui
