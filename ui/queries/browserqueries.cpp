#include "browserqueries.h"

#include "admin/audit.h"
#include "base/errors.h"
#include "redis/connection.h"
#include "redis/scan.h"

#include <QElapsedTimer>
#include <QScopeGuard>

namespace ratescope::ui {

ListingStart readListingStart(Connection &c, const MetadataNamespace &ns, const QByteArray &match, int scanCount)
{
    ListingStart s;
    AuditLog audit(c, ns);
    const Command scan = scanCommand("0", match, scanCount);
    const std::vector<Command> ahead{
        {"DBSIZE"}, {"HGETALL", PolicyStore::hashKeyIn(ns)}, audit.listCommand(1), scan};
    c.prefetch(ahead);
    const auto forget = qScopeGuard([&] { c.forget(ahead); }); // the connection lives on: nothing read now answers later
    try {
        s.dbSize = c.command({"DBSIZE"}).toInteger();
    } catch (const ReplyError &) {
        s.dbSize = -1; // only the estimate is lost (a cluster master out of reach)
    }
    try {
        QStringList skipped;
        s.policies = PolicyStore(c, ns).list(&skipped);
        s.policyProblem = skipped.join(QLatin1Char('\n')); // unreadable records, skipped
    } catch (const ReplyError &e) {
        s.policyProblem = e.message(); // e.g. NOPERM: columns stay empty, keys still list
    } catch (const UnexpectedReplyError &e) {
        s.policyProblem = e.message(); // a malformed policy record
    }
    try {
        const auto newest = audit.list(1);
        s.lastChange = newest.empty() ? QString() : newest.front().id;
    } catch (const ReplyError &) {
        // no right to read the audit: policies are still followed
    }
    QByteArray next;
    const Reply page = c.command(scan); // a refusal (NOPERM) ends the listing, as a page's would
    for (const Reply &k : scanReplyNames(page, &next))
        s.first.names.append(k.bytes());
    s.first.cursor = next;
    return s;
}

NamesPage scanNamesPage(Connection &c, const NamesPageRequest &request, const std::function<bool()> &yield)
{
    NamesPage page{request.cursor, {}};
    QElapsedTimer slice;
    slice.start();
    do {
        Reply r;
        try {
            r = c.command(scanCommand(page.cursor, request.match, request.scanCount));
        } catch (const ConnectionError &) {
            // Lost: the page with it. The connection's next command would reconnect, maybe to
            // a server restarted or failed over meanwhile, where this cursor skips keys: the
            // listing pauses and starts over instead.
            throw;
        } catch (const Error &) {
            if (page.names.empty())
                throw;
            break; // keep what was read (a refusal further on in the walk): the next page,
                   // from this cursor, meets the error again
        }
        QByteArray next;
        const std::vector<Reply> &names = scanReplyNames(r, &next);
        page.cursor = next;
        if (page.names.empty())
            page.names.reserve(size_t(request.pageKeys), request.pageKeys * 32);
        for (const Reply &k : names)
            page.names.append(k.bytes());
    } while (page.cursor != "0" && qsizetype(page.names.size()) < request.pageKeys && slice.elapsed() < request.sliceMs &&
             !(yield && yield()));
    return page;
}

std::vector<QByteArray> existingKeys(Connection &c, const std::vector<QByteArray> &keys)
{
    std::vector<Command> commands;
    commands.reserve(keys.size());
    for (const QByteArray &k : keys)
        commands.push_back({"EXISTS", k});
    const std::vector<Reply> replies = c.pipeline(commands);
    std::vector<QByteArray> existing;
    for (size_t i = 0; i < keys.size() && i < replies.size(); ++i)
        if (replies[i].isInteger() && replies[i].integer() > 0)
            existing.push_back(keys[i]);
    return existing;
}

ChangeMarks readChangeMarks(Connection &c, const MetadataNamespace &ns)
{
    // Both in one round trip: the policies and the newest audit entry (AuditLog::list(1)).
    AuditLog audit(c, ns);
    const std::vector<Command> ahead{{"HGETALL", PolicyStore::hashKeyIn(ns)}, audit.listCommand(1)};
    c.prefetch(ahead);
    const auto forget = qScopeGuard([&] { c.forget(ahead); }); // the connection lives on: nothing read now answers later
    ChangeMarks m;
    m.policies = PolicyStore(c, ns).list();
    try {
        const auto newest = audit.list(1);
        m.lastChange = newest.empty() ? QString() : newest.front().id;
    } catch (const ReplyError &) {
        // no right to read the audit: policies are still followed
    }
    return m;
}

} // namespace ratescope::ui
