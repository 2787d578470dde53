// The audit trail as table rows, newest first: entries the live poll finds are put on top,
// older pages appended as the view scrolls (fetchMore asks the page to read them). The filter
// model shows the entries of one action, actor, target and time range.
#pragma once

#include "admin/audit.h"

#include <functional>
#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <vector>

namespace ratescope::ui {

class AuditModel : public QAbstractTableModel {
    Q_OBJECT
public:
    // The target last: it is the longest, and takes the width left.
    enum Column { TimeColumn, ActorColumn, HostColumn, ActionColumn, CountColumn, TargetColumn, ReasonColumn, ColumnCount };
    static constexpr int EntryRole = Qt::UserRole + 1; // the row's index into entry()

    explicit AuditModel(QObject *parent = nullptr);

    // The clock "ago" in tooltips is measured against (the page's, frozen in tests).
    void setClock(std::function<QDateTime()> now) { m_now = std::move(now); }

    // Replaces everything with the newest page; more: the stream goes further back.
    void reset(std::vector<AuditEntry> newestFirst, bool more);
    void clear() { reset({}, false); }
    // Entries newer than every row, oldest first (as the stream is followed): put on top.
    void addNewer(const std::vector<AuditEntry> &oldestFirst);
    // The page before the oldest row, newest first; more: the stream goes further back.
    void addOlder(std::vector<AuditEntry> newestFirst, bool more);
    // The page asked for by fetchMore() did not come (failure): allow asking again.
    void olderFailed() { m_fetching = false; }

    const AuditEntry &entry(int row) const { return m_entries[size_t(row)]; }
    int size() const { return int(m_entries.size()); }
    QString newestId() const { return m_entries.empty() ? QString() : m_entries.front().id; }
    QString oldestId() const { return m_entries.empty() ? QString() : m_entries.back().id; }
    bool hasOlder() const { return m_hasOlder; }
    bool isFetchingOlder() const { return m_fetching; }
    QStringList actions() const; // the actions seen, sorted

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
    bool canFetchMore(const QModelIndex &parent) const override;
    void fetchMore(const QModelIndex &parent) override;

    // What a row shows, for the table and the details pane.
    static QString timeText(const QDateTime &time); // local: "2026-11-23 17:05:12"
    static QString actorText(const AuditEntry &e);  // "Dana (support) · dana" when they differ

signals:
    void olderWanted(); // fetchMore(): read the page before oldestId()
    void actionsChanged();

private:
    void noteActions(const std::vector<AuditEntry> &entries, qsizetype from, qsizetype to);

    std::vector<AuditEntry> m_entries;
    QStringList m_actions;
    bool m_hasOlder = false;
    bool m_fetching = false;
    std::function<QDateTime()> m_now;
};

// Which entries the table shows. Text filters match a part of the text, or the whole text as a
// glob when they hold * ? or [ (Redis's glob rules, as the keys panel's filter).
struct AuditFilter {
    QString action;     // exactly; empty: every action
    QString actor;      // the operator name or the OS user
    QString target;     // the key, pattern or policy name, or the reason given with the change
    QDateTime from, to; // inclusive; invalid: open

    bool isEmpty() const { return action.isEmpty() && actor.isEmpty() && target.isEmpty() && !from.isValid() && !to.isValid(); }
    bool matches(const AuditEntry &e) const;
    static bool textMatches(const QString &filter, const QString &value);
    bool operator==(const AuditFilter &) const = default;
};

class AuditFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit AuditFilterModel(AuditModel *source, QObject *parent = nullptr);
    void setFilter(const AuditFilter &filter);
    const AuditFilter &filter() const { return m_filter; }
    AuditModel *auditModel() const { return m_source; }
    const AuditEntry &entry(int row) const { return m_source->entry(mapToSource(index(row, 0)).row()); }
    // Paging back stops once the loaded entries reach past the filter's start.
    bool reachedFilterStart() const;
    bool canFetchMore(const QModelIndex &parent) const override;

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    AuditModel *m_source;
    AuditFilter m_filter;
};

} // namespace ratescope::ui
