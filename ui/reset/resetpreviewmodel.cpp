#include "resetpreviewmodel.h"

#include "displayformat.h"
#include "base/keytext.h"

#include <QGuiApplication>
#include <QPalette>

namespace ratescope::ui {

namespace {

QColor mutedColor()
{
    return QGuiApplication::palette().color(QPalette::PlaceholderText);
}

QString algorithmText(const KeyDetails &d)
{
    if (!d.exists())
        return QStringLiteral("(already gone)");
    if (d.kind.format == KeyFormat::CounterWindow && d.spec)
        return QStringLiteral("%1 (counter)").arg(algorithmName(d.spec->algorithm));
    return d.kind.isLimiter() ? d.kind.label() : QStringLiteral("not a limiter");
}

QString usageText(const KeyDetails &d)
{
    if (d.usage)
        return formatUsage(d.usage->usedNow, d.usage->decision.limit);
    if (!d.problem.isEmpty())
        return d.problem;
    if (d.kind.isLimiter() && !d.spec)
        return QStringLiteral("no policy");
    return {};
}

} // namespace

ResetPreviewModel::ResetPreviewModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void ResetPreviewModel::setKeys(const QByteArrayList &keys)
{
    beginResetModel();
    m_keys = keys;
    m_details.assign(size_t(keys.size()), std::nullopt);
    m_detailed = 0;
    m_stateExpected = true;
    m_processed = -1;
    m_unknown = 0;
    endResetModel();
}

void ResetPreviewModel::setDetails(qsizetype first, const std::vector<KeyDetails> &details)
{
    const qsizetype n = std::min<qsizetype>(qsizetype(details.size()), m_keys.size() - first);
    if (first < 0 || n <= 0)
        return;
    for (qsizetype i = 0; i < n; ++i) {
        if (!m_details[size_t(first + i)])
            ++m_detailed;
        m_details[size_t(first + i)] = details[size_t(i)];
    }
    emit dataChanged(index(int(first), TypeColumn), index(int(first + n - 1), TtlColumn));
}

void ResetPreviewModel::setStateExpected(bool expected)
{
    if (expected == m_stateExpected)
        return;
    m_stateExpected = expected;
    if (!m_keys.isEmpty())
        emit dataChanged(index(0, TypeColumn), index(int(m_keys.size() - 1), TypeColumn));
}

void ResetPreviewModel::setOutcome(qint64 processed, qint64 unknown)
{
    m_processed = processed;
    m_unknown = unknown;
    if (!m_keys.isEmpty())
        emit dataChanged(index(0, OutcomeColumn), index(int(m_keys.size() - 1), OutcomeColumn));
}

int ResetPreviewModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_keys.size());
}

int ResetPreviewModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ResetPreviewModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QByteArray &key = m_keys[index.row()];
    const std::optional<KeyDetails> &d = m_details[size_t(index.row())];
    const int column = index.column();
    switch (role) {
    case KeyBytesRole:
        return key;
    case Qt::TextAlignmentRole:
        if (column == UsageColumn || column == TtlColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::ForegroundRole:
        if (column == KeyColumn)
            return {};
        if (column == OutcomeColumn)
            return index.row() < m_processed ? QVariant() : QVariant(mutedColor());
        if (!d || !d->exists() || (column == AlgorithmColumn && !d->kind.isLimiter()) || (column == UsageColumn && !d->usage) ||
            (column == TtlColumn && d->pttlMs == -1))
            return mutedColor();
        return {};
    case Qt::ToolTipRole:
        if (column == KeyColumn)
            return displayKey(key);
        if (column == UsageColumn && d && !d->problem.isEmpty())
            return d->problem;
        if (column == AlgorithmColumn && d && !d->policy.isEmpty())
            return QStringLiteral("policy %1 (%2)").arg(d->policy, displayKey(d->policyMatch));
        return {};
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    if (column == KeyColumn)
        return displayKey(key);
    if (column == OutcomeColumn) {
        if (m_processed < 0)
            return {};
        if (index.row() < m_processed)
            return QStringLiteral("reset");
        return index.row() < m_processed + m_unknown ? QStringLiteral("no answer") : QStringLiteral("left as it is");
    }
    if (!d)
        return column == TypeColumn && m_stateExpected ? QStringLiteral("…") : QVariant();
    switch (column) {
    case TypeColumn:
        return d->exists() ? QString::fromUtf8(d->type) : QString();
    case AlgorithmColumn:
        return algorithmText(*d);
    case UsageColumn:
        return usageText(*d);
    case TtlColumn:
        return d->exists() ? formatTtl(d->pttlMs) : QString();
    }
    return {};
}

QVariant ResetPreviewModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case KeyColumn:
        return QStringLiteral("Key");
    case OutcomeColumn:
        return QStringLiteral("Result");
    case TypeColumn:
        return QStringLiteral("Type");
    case AlgorithmColumn:
        return QStringLiteral("Algorithm / format");
    case UsageColumn:
        return QStringLiteral("Used / limit");
    case TtlColumn:
        return QStringLiteral("TTL");
    }
    return {};
}

} // namespace ratescope::ui
