// The Lookup page's table: one customer's limiters as core's lookup lists them (denying first),
// with the policy, algorithm, used / limit, remaining (and, while denying, when the next
// request passes), the override in force and the verdict in words.
#pragma once

#include "keys/lookup.h"

#include <QAbstractTableModel>

namespace ratescope::ui {

class LookupModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Limiter, Used, Remaining, Override, Policy, Algorithm, Verdict, ColumnCount };
    enum Role {
        KeyBytesRole = Qt::UserRole + 1, // the row's key (a group's base), QByteArray
        FractionRole,                    // used / limit as a double, -1 without usage
        DenyingRole,                     // bool
    };

    explicit LookupModel(QObject *parent = nullptr);

    // A pass's rows, in its order. The same limiters in the same order: their cells change in
    // place (a selection stays); otherwise the model is reset.
    void setResult(const LookupResult &result);
    void clear();
    const LookupRow &row(int r) const { return m_rows[size_t(r)]; }
    const std::vector<LookupRow> &rows() const { return m_rows; }
    qint64 nowUs() const { return m_nowUs; }
    int denyingCount() const;

    // "denied · next in 3.4 s" style cells, for the summary and tests.
    static QString remainingText(const LookupRow &row);
    // "40 per 1m until 12:41 (1 h 59 m left)"; brief: "40 · 1 h 59 m left".
    static QString overrideText(const LookupRow &row, qint64 nowUs, bool brief = false);
    static QString limiterText(const LookupRow &row);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<LookupRow> m_rows;
    qint64 m_nowUs = 0;
};

} // namespace ratescope::ui
