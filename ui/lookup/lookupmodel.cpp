#include "lookupmodel.h"

#include "base/duration.h"
#include "base/keytext.h"
#include "displayformat.h"
#include "usagebardelegate.h"

#include <QApplication>
#include <QColor>
#include <QDateTime>
#include <QFont>
#include <QIcon>
#include <QPalette>
#include <QStyle>

#include <algorithm>

namespace ratescope::ui {

namespace {

const QColor kDenying(0xd3, 0x2f, 0x2f); // reads on light and dark backgrounds

QIcon denyingIcon()
{
    return QApplication::style()->standardIcon(QStyle::SP_MessageBoxCritical);
}

} // namespace

LookupModel::LookupModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void LookupModel::setResult(const LookupResult &result)
{
    const bool sameRows = result.rows.size() == m_rows.size() &&
                          std::equal(result.rows.begin(), result.rows.end(), m_rows.begin(),
                                     [](const LookupRow &a, const LookupRow &b) { return a.key == b.key; });
    if (sameRows) {
        m_rows = result.rows;
        m_nowUs = result.nowUs;
        if (!m_rows.empty())
            emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        return;
    }
    beginResetModel();
    m_rows = result.rows;
    m_nowUs = result.nowUs;
    endResetModel();
}

void LookupModel::clear()
{
    beginResetModel();
    m_rows.clear();
    m_nowUs = 0;
    endResetModel();
}

int LookupModel::denyingCount() const
{
    return int(std::count_if(m_rows.begin(), m_rows.end(), [](const LookupRow &r) { return r.denying(); }));
}

int LookupModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int LookupModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString LookupModel::limiterText(const LookupRow &row)
{
    return row.shards ? QStringLiteral("%1 · %2 shards").arg(displayKey(row.key)).arg(row.shards) : displayKey(row.key);
}

QString LookupModel::remainingText(const LookupRow &row)
{
    if (!row.usage)
        return QStringLiteral("–");
    const qint64 left = std::max<qint64>(0, row.usage->decision.limit - row.usage->usedNow);
    if (row.denying())
        return QStringLiteral("%1 · next in %2").arg(formatCount(left), formatSpan(row.usage->decision.retryAfterUs));
    return formatCount(left);
}

QString LookupModel::overrideText(const LookupRow &row, qint64 nowUs, bool brief)
{
    if (!row.override)
        return QStringLiteral("–");
    const ratescope::Override &o = *row.override;
    const qint64 leftUs = o.expiresAt.toMSecsSinceEpoch() * 1000 - nowUs;
    if (brief)
        return QStringLiteral("%1 · %2 left").arg(formatCount(o.limit), formatSpan(std::max<qint64>(0, leftUs)));
    return QStringLiteral("%1%2 until %3 (%4 left)")
        .arg(formatCount(o.limit), o.windowUs ? QStringLiteral(" per %1").arg(formatDurationUs(o.windowUs)) : QString(),
             o.expiresAt.toLocalTime().toString(QStringLiteral("HH:mm")), formatSpan(std::max<qint64>(0, leftUs)));
}

QVariant LookupModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const LookupRow &r = m_rows[size_t(index.row())];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case Limiter:
            return limiterText(r);
        case Used:
            return r.usage ? formatUsage(r.usage->usedNow, r.usage->decision.limit) : QStringLiteral("–");
        case Remaining:
            return remainingText(r);
        case Policy:
            return r.policy.isEmpty() ? QStringLiteral("none") : r.policy;
        case Algorithm:
            return r.algorithmText();
        case Override:
            return overrideText(r, m_nowUs, true);
        case Verdict:
            return lookupVerdict(r, m_nowUs);
        default:
            return {};
        }
    case Qt::ToolTipRole: {
        QString tip = QStringLiteral("%1\n%2").arg(limiterText(r), lookupVerdict(r, m_nowUs));
        tip += QStringLiteral("\n%1 · %2").arg(r.algorithmText(), r.kind.label());
        if (!r.policy.isEmpty())
            tip += QStringLiteral("\npolicy %1").arg(r.policy);
        if (r.spec)
            tip += QStringLiteral(", limit %1").arg(formatLimit(*r.spec));
        if (r.usage)
            tip += QStringLiteral("\nused %1 of %2").arg(formatCount(r.usage->usedNow), formatCount(r.usage->decision.limit));
        if (r.override)
            tip += QStringLiteral("\noverride %1 (set by %2)").arg(overrideText(r, m_nowUs), r.override->setBy);
        if (r.keys.size() > 1 || (r.keys.size() == 1 && r.keys.front() != r.key)) {
            QStringList keys;
            for (qsizetype i = 0; i < std::min<qsizetype>(r.keys.size(), 8); ++i)
                keys << displayKey(r.keys[i]);
            tip += QStringLiteral("\nkeys: %1%2").arg(keys.join(QStringLiteral(", ")),
                                                      r.keys.size() > 8 ? QStringLiteral(", …") : QString());
        }
        return tip;
    }
    case Qt::DecorationRole:
        if (column == Limiter && r.denying())
            return denyingIcon();
        return {};
    case Qt::ForegroundRole:
        if (r.denying() && (column == Remaining || column == Verdict))
            return kDenying;
        if ((column == Policy && r.policy.isEmpty()) || (column == Override && !r.override))
            return QApplication::palette().color(QPalette::PlaceholderText);
        return {};
    case Qt::FontRole:
        if (r.denying() && column == Limiter) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    case Qt::TextAlignmentRole:
        if (column == Remaining)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case UsageBarDelegate::ShortTextRole:
        if (column == Used && r.usage)
            return formatUsageShort(r.usage->usedNow, r.usage->decision.limit);
        return {};
    case KeyBytesRole:
        return r.key;
    case FractionRole:
        return r.fill().value_or(-1.0);
    case DenyingRole:
        return r.denying();
    default:
        return {};
    }
}

QVariant LookupModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::DisplayRole) {
        static const char *names[] = {"Limiter", "Used / limit", "Remaining", "Override", "Policy", "Algorithm", "Why"};
        return QLatin1String(names[section]);
    }
    if (role == Qt::ToolTipRole) {
        static const char *tips[] = {
            "The limiter: its key, a counter's or another library's base, a sharded group's base",
            "How full it is now, with the limits in force (policy, or override)",
            "Requests left now; while it denies, when the next one passes",
            "A temporary limit in force, and how long it has left (the tooltip: until when)",
            "The policy in force",
            "The algorithm (or the format's label)",
            "Why it admits or denies, in words",
        };
        return QLatin1String(tips[section]);
    }
    return {};
}

} // namespace ratescope::ui
