// The keys a reset will delete, as the preview lists them: the name as people read it, and the
// state each limiter loses (type, format, used / limit, TTL) once it has been read.
#pragma once

#include "keys/keydetails.h"

#include <QAbstractTableModel>
#include <QByteArrayList>

#include <optional>
#include <vector>

namespace ratescope::ui {

class ResetPreviewModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { KeyColumn, OutcomeColumn, TypeColumn, AlgorithmColumn, UsageColumn, TtlColumn, ColumnCount };
    static constexpr int KeyBytesRole = Qt::UserRole + 1; // the raw key (QByteArray)

    explicit ResetPreviewModel(QObject *parent = nullptr);

    void setKeys(const QByteArrayList &keys);
    const QByteArrayList &keys() const { return m_keys; }
    // The state of rows first..first+details.size()-1, read after setKeys.
    void setDetails(qsizetype first, const std::vector<KeyDetails> &details);
    qsizetype detailedRows() const { return m_detailed; }
    // Whether rows without their state say it is on its way ("…"); off once nothing more is read.
    void setStateExpected(bool expected);
    // After the reset: rows before `processed` went through UNLINK, the next `unknown` rows were
    // in a batch that got no answer, the rest were left as they are (OutcomeColumn).
    void setOutcome(qint64 processed, qint64 unknown);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QByteArrayList m_keys;
    std::vector<std::optional<KeyDetails>> m_details;
    qsizetype m_detailed = 0;
    bool m_stateExpected = true;
    qint64 m_processed = -1; // -1: no reset yet
    qint64 m_unknown = 0;
};

} // namespace ratescope::ui
