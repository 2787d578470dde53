#include "limiters/limiterscript.h"

#include "redis/connection.h"
#include "base/errors.h"
#include "base/keytext.h"

#include <QCryptographicHash>
#include <QFile>

namespace ratescope {

namespace {

bool isFunctionMissing(const QByteArray &errorText)
{
    return errorText == "ERR Function not found";
}

} // namespace

LimiterScript::LimiterScript(Algorithm algorithm)
    : m_algorithm(algorithm)
{
    QFile f(QStringLiteral(":/lua/%1.lua").arg(algorithmName(algorithm)));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("limiter script %s is missing from the resources", qPrintable(f.fileName()));
    m_source = f.readAll();
    m_sha1 = QCryptographicHash::hash(m_source, QCryptographicHash::Sha1).toHex();
}

const LimiterScript &LimiterScript::forAlgorithm(Algorithm algorithm)
{
    static const LimiterScript scripts[] = {
        LimiterScript(Algorithm::SlidingLog),  LimiterScript(Algorithm::SlidingCounter), LimiterScript(Algorithm::FixedWindow),
        LimiterScript(Algorithm::TokenBucket), LimiterScript(Algorithm::Gcra),           LimiterScript(Algorithm::SlidingBuckets),
    };
    return scripts[int(algorithm)];
}

QByteArray LimiterScript::functionName(bool peek) const
{
    QByteArray name = "ratescope_" + algorithmName(m_algorithm).toLatin1().replace('-', '_');
    if (peek)
        name += "_peek";
    return name;
}

ScriptCalls LimiterScript::callsOn(Connection &connection)
{
    if (const auto known = connection.scriptCalls())
        return *known;
    const ScriptCalls calls = detectLibrary(connection) == LibraryPresence::ThisBuild ? ScriptCalls::Functions : ScriptCalls::Evalsha;
    connection.setScriptCalls(calls);
    return calls;
}

Command LimiterScript::command(const QByteArray &key, const QList<QByteArray> &argv, bool readOnly, ScriptCalls calls) const
{
    Command c;
    if (calls == ScriptCalls::Functions)
        c = {readOnly ? QByteArrayLiteral("FCALL_RO") : QByteArrayLiteral("FCALL"), functionName(readOnly), "1", key};
    else
        c = {readOnly ? QByteArrayLiteral("EVALSHA_RO") : QByteArrayLiteral("EVALSHA"), m_sha1, "1", key};
    c += argv;
    return c;
}

bool LimiterScript::notLoaded(const Reply &reply)
{
    return reply.isError() && (reply.bytes().startsWith("NOSCRIPT") || isFunctionMissing(reply.bytes()));
}

void LimiterScript::load(Connection &connection) const
{
    const QByteArray sha = connection.command({"SCRIPT", "LOAD", m_source}).bytes();
    if (sha != m_sha1)
        throw UnexpectedReplyError(
            QStringLiteral("SCRIPT LOAD returned %1, expected %2").arg(QString::fromLatin1(sha), QString::fromLatin1(m_sha1)));
}

Reply LimiterScript::run(Connection &connection, const QByteArray &key, const QList<QByteArray> &argv, bool readOnly) const
{
    if (callsOn(connection) == ScriptCalls::Functions) {
        try {
            return connection.command(command(key, argv, readOnly, ScriptCalls::Functions));
        } catch (const ReplyError &e) {
            if (!isFunctionMissing(e.message().toUtf8()))
                throw;
        }
        // The library was removed under us: the function did not run, so EVALSHA now counts
        // the request exactly once.
        functionMissing(connection);
    }
    // Read ahead with the command's first reads: the server does not have the script. Loaded
    // with the call, in the same round; the call runs only if the load did (else NOSCRIPT).
    if (const auto known = connection.takePrefetched(existsQuery());
        known && known->isArray() && known->size() == std::size(kAllAlgorithms) && (*known)[int(m_algorithm)].isInteger() &&
        (*known)[int(m_algorithm)].integer() == 0) {
        if (readOnly) {
            Command eval{"EVAL_RO", m_source, "1", key};
            eval += argv;
            return connection.command(eval);
        }
        std::vector<Reply> replies = connection.pipeline({{"SCRIPT", "LOAD", m_source}, command(key, argv, false)});
        if (!replies[1].isError() || !replies[1].bytes().startsWith("NOSCRIPT")) {
            replies[1].orThrow(); // the call's own error: it may have run, never sent again
            return std::move(replies[1]);
        }
        replies[0].orThrow(); // why it was not loaded
        throw UnexpectedReplyError(QStringLiteral("SCRIPT LOAD returned %1, expected %2")
                                       .arg(QString::fromLatin1(replies[0].bytes()), QString::fromLatin1(m_sha1)));
    }
    try {
        return connection.command(command(key, argv, readOnly));
    } catch (const ReplyError &e) {
        if (e.prefix() != QLatin1String("NOSCRIPT"))
            throw;
    }
    // The server does not know the script (restart, SCRIPT FLUSH, new replica): the
    // script did not run, so running it now counts the request exactly once.
    if (readOnly) {
        Command eval{"EVAL_RO", m_source, "1", key};
        eval += argv;
        return connection.command(eval);
    }
    load(connection);
    return connection.command(command(key, argv, false));
}

void LimiterScript::resendNotLoaded(Connection &connection, const std::vector<Command> &commands, Reply *replies)
{
    std::vector<size_t> again;
    std::vector<Command> evals;
    for (size_t i = 0; i < commands.size(); ++i) {
        const Command &c = commands[i];
        if (c.size() < 3 || c[0] != "EVALSHA_RO" || !replies[i].isError() || !replies[i].bytes().startsWith("NOSCRIPT"))
            continue;
        for (Algorithm a : kAllAlgorithms)
            if (forAlgorithm(a).sha1() == c[1]) {
                Command eval = c;
                eval[0] = "EVAL_RO";
                eval[1] = forAlgorithm(a).source();
                again.push_back(i);
                evals.push_back(std::move(eval));
            }
    }
    if (evals.empty())
        return;
    std::vector<Reply> second = connection.pipeline(evals);
    for (size_t j = 0; j < again.size(); ++j)
        replies[again[j]] = std::move(second[j]);
}

Command LimiterScript::existsQuery()
{
    Command c{"SCRIPT", "EXISTS"};
    for (Algorithm a : kAllAlgorithms)
        c += forAlgorithm(a).sha1();
    return c;
}

const QByteArray &LimiterScript::scriptsDigest()
{
    static const QByteArray digest = [] {
        QByteArray shas;
        for (Algorithm a : kAllAlgorithms)
            shas += forAlgorithm(a).sha1();
        return QCryptographicHash::hash(shas, QCryptographicHash::Sha1).toHex();
    }();
    return digest;
}

// ---- this build's functions library on the server ------------------------------------------

Command LoadedLibrary::query()
{
    return {"FCALL_RO", "ratescope_version", "0"};
}

bool LoadedLibrary::isThisBuild() const
{
    return version == QStringLiteral(RATESCOPE_VERSION) && scriptsDigest == LimiterScript::scriptsDigest();
}

std::optional<LoadedLibrary> LoadedLibrary::fromReply(const Reply &reply)
{
    if (!reply.isArray() || reply.size() != 2 || reply[0].isArray() || reply[1].isArray() || reply[0].isError() ||
        reply[0].bytes().isEmpty())
        return std::nullopt;
    // Another build's words, shown by status and deploy: no control character reaches a terminal.
    return LoadedLibrary{escapeControls(reply[0].text()), reply[1].bytes()};
}

LibraryPresence detectLibrary(Connection &connection)
{
    int thisBuild = 0, other = 0;
    for (const std::vector<Reply> &replies : connection.onEachMaster({LoadedLibrary::query()})) {
        const Reply &r = replies.front();
        if (r.isError() && r.bytes().startsWith("DOWN "))
            continue; // its decisions fail anyway; when it is back, "Function not found" is recovered
        const auto loaded = LoadedLibrary::fromReply(r);
        if (loaded && loaded->isThisBuild())
            ++thisBuild;
        else if (loaded)
            ++other;
        else
            return LibraryPresence::Missing; // no library, no functions, or no permission
    }
    if (other > 0)
        return LibraryPresence::Other;
    return thisBuild > 0 ? LibraryPresence::ThisBuild : LibraryPresence::Missing;
}

} // namespace ratescope
