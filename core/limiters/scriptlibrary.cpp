#include "limiters/scriptlibrary.h"

#include "base/errors.h"
#include "base/keytext.h"
#include "limiters/limiterscript.h"

#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSet>

namespace ratescope {

namespace {

QByteArray readResource(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("%s is missing from the resources", qPrintable(path));
    return f.readAll();
}

bool isDown(const Reply &r)
{
    return r.isError() && r.bytes().startsWith("DOWN ");
}

// "ERR unknown command 'FUNCTION', ..." (Redis 6, or renamed away with rename-command).
bool isUnknownCommand(const Reply &r)
{
    return r.isError() && r.bytes().startsWith("ERR unknown command");
}

QStringList masterAddresses(Connection &connection)
{
    QStringList out;
    for (const Connection::Node &n : connection.nodes())
        if (!connection.isCluster() || n.role == QLatin1String("master"))
            out << n.address.toString();
    return out;
}

} // namespace

// ---- the library ---------------------------------------------------------------------------

FunctionLibrary::FunctionLibrary()
    : m_code(readResource(QStringLiteral(":/lua/ratescope-library.lua")))
    , m_digest(LimiterScript::scriptsDigest())
{
}

const FunctionLibrary &FunctionLibrary::instance()
{
    static const FunctionLibrary library;
    return library;
}

QByteArray FunctionLibrary::functionName(Algorithm algorithm, bool peek)
{
    return LimiterScript::forAlgorithm(algorithm).functionName(peek);
}

QList<QByteArray> FunctionLibrary::functionNames()
{
    QList<QByteArray> names;
    for (Algorithm a : kAllAlgorithms)
        names << functionName(a, false) << functionName(a, true);
    names << QByteArrayLiteral("ratescope_version");
    return names;
}

int compareVersions(const QString &a, const QString &b)
{
    const QStringList pa = a.split(QLatin1Char('.')), pb = b.split(QLatin1Char('.'));
    for (qsizetype i = 0; i < std::max(pa.size(), pb.size()); ++i) {
        const QString x = i < pa.size() ? pa[i] : QStringLiteral("0");
        const QString y = i < pb.size() ? pb[i] : QStringLiteral("0");
        bool okx = false, oky = false;
        const qlonglong nx = x.toLongLong(&okx), ny = y.toLongLong(&oky);
        if (okx && oky) {
            if (nx != ny)
                return nx < ny ? -1 : 1;
        } else if (const int c = x.compare(y); c != 0) {
            return c < 0 ? -1 : 1;
        }
    }
    return 0;
}

// ---- earlier releases ----------------------------------------------------------------------

std::vector<ReleasedScript> parseReleases(const QByteArray &text)
{
    static const QRegularExpression sha(QStringLiteral("^[0-9a-f]{40}$"));
    std::vector<ReleasedScript> out;
    int number = 0;
    for (const QByteArray &raw : text.split('\n')) {
        ++number;
        const QByteArray line = raw.trimmed();
        if (line.isEmpty() || line.startsWith('#'))
            continue;
        const QStringList parts = QString::fromUtf8(line).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (parts.size() != 3 || !sha.match(parts[2]).hasMatch())
            throw UsageError(
                QStringLiteral("releases line %1: expected 'release algorithm sha1', got '%2'").arg(number).arg(QString::fromUtf8(line)));
        out.push_back({parts[0], parseAlgorithm(parts[1]), parts[2].toLatin1()});
    }
    return out;
}

const std::vector<ReleasedScript> &knownReleases()
{
    static const std::vector<ReleasedScript> releases = parseReleases(readResource(QStringLiteral(":/lua/releases.txt")));
    return releases;
}

// ---- status --------------------------------------------------------------------------------

int ScriptsStatus::mastersWithThisBuild() const
{
    return int(std::count_if(masters.begin(), masters.end(), [](const ScriptsNodeStatus &m) { return m.hasThisBuild(); }));
}

QStringList ScriptsStatus::drift() const
{
    QStringList out;
    for (const ScriptsNodeStatus &m : masters)
        for (const ReleasedScript &s : m.olderFound) {
            const QString text = QStringLiteral("%1 of %2").arg(algorithmName(s.algorithm), s.release);
            if (!out.contains(text))
                out << text;
        }
    return out;
}

QString ScriptsStatus::summary() const
{
    const int total = int(masters.size());
    const QString where = [&](int n) {
        if (!cluster && total == 1)
            return QString();
        return QStringLiteral(" on %1 of %2 masters").arg(n).arg(total);
    }(mastersWithThisBuild());
    QString text;
    const FunctionLibrary &lib = FunctionLibrary::instance();
    if (mastersWithThisBuild() > 0) {
        text = QStringLiteral("functions library ratescope %1%2").arg(lib.version(), where.isEmpty() ? QStringLiteral(" loaded") : where);
    } else {
        QStringList others;
        for (const ScriptsNodeStatus &m : masters)
            if (m.libraryLoaded) {
                const QString v = m.library ? m.library->version : QStringLiteral("of unknown version");
                if (!others.contains(v))
                    others << v;
            }
        const bool anyFunctions =
            std::any_of(masters.begin(), masters.end(), [](const ScriptsNodeStatus &m) { return m.problem.isEmpty() && m.functions; });
        const bool unreadable = std::any_of(masters.begin(), masters.end(), [](const ScriptsNodeStatus &m) { return m.libraryUnreadable(); });
        if (!others.isEmpty())
            text = QStringLiteral("script cache only (functions library ratescope %1 is not this release's %2)")
                       .arg(others.join(QStringLiteral(", ")), lib.version());
        else if (unreadable) // loaded or not, this user cannot tell: never "no library"
            text = QStringLiteral("functions library not readable by this user (FUNCTION LIST and FCALL_RO ratescope_version refused)");
        else if (!anyFunctions &&
                 std::any_of(masters.begin(), masters.end(), [](const ScriptsNodeStatus &m) { return m.problem.isEmpty(); }))
            text = QStringLiteral("script cache only (no Redis Functions on this server)");
        else
            text = QStringLiteral("script cache only");
    }
    const QStringList older = drift();
    if (!older.isEmpty())
        text += QStringLiteral("; older scripts found: %1").arg(older.join(QStringLiteral(", ")));
    return text;
}

QJsonObject ScriptsStatus::toJson() const
{
    const FunctionLibrary &lib = FunctionLibrary::instance();
    QJsonArray algos;
    for (Algorithm a : kAllAlgorithms) {
        const LimiterScript &s = LimiterScript::forAlgorithm(a);
        QJsonArray cachedOn;
        QJsonArray older;
        for (const ScriptsNodeStatus &m : masters) {
            if (m.cached[size_t(a)])
                cachedOn.append(m.address);
            for (const ReleasedScript &r : m.olderFound)
                if (r.algorithm == a)
                    older.append(QJsonObject{{QStringLiteral("release"), r.release},
                                             {QStringLiteral("sha1"), QString::fromLatin1(r.sha1)},
                                             {QStringLiteral("master"), m.address}});
        }
        algos.append(QJsonObject{{QStringLiteral("algorithm"), algorithmName(a)},
                                 {QStringLiteral("sha1"), QString::fromLatin1(s.sha1())},
                                 {QStringLiteral("function"), QString::fromLatin1(FunctionLibrary::functionName(a, false))},
                                 {QStringLiteral("cached_on"), cachedOn},
                                 {QStringLiteral("older_found"), older}});
    }
    QJsonArray nodes;
    for (const ScriptsNodeStatus &m : masters) {
        QJsonObject o{{QStringLiteral("address"), m.address}};
        if (!m.problem.isEmpty()) {
            o.insert(QStringLiteral("problem"), m.problem);
            nodes.append(o);
            continue;
        }
        o.insert(QStringLiteral("functions"), m.functions);
        if (!m.functionsProblem.isEmpty())
            o.insert(QStringLiteral("functions_problem"), m.functionsProblem);
        o.insert(QStringLiteral("library_loaded"), m.libraryUnreadable() ? QJsonValue() : QJsonValue(m.libraryLoaded)); // null: not known
        o.insert(QStringLiteral("library_version"), m.library ? QJsonValue(m.library->version) : QJsonValue());
        o.insert(QStringLiteral("library_is_this_release"), m.hasThisBuild());
        if (!m.cacheProblem.isEmpty())
            o.insert(QStringLiteral("script_cache_problem"), m.cacheProblem);
        nodes.append(o);
    }
    return {{QStringLiteral("release"), lib.version()},
            {QStringLiteral("library"), QString::fromLatin1(FunctionLibrary::name())},
            {QStringLiteral("scripts_digest"), QString::fromLatin1(lib.scriptsDigest())},
            {QStringLiteral("summary"), summary()},
            {QStringLiteral("masters_with_library"), mastersWithThisBuild()},
            {QStringLiteral("masters"), nodes},
            {QStringLiteral("algorithms"), algos},
            {QStringLiteral("drift"), QJsonArray::fromStringList(drift())}};
}

namespace {

// The bytes a Lua single-quoted string literal's text stands for (its escapes: \ddd, \a, \n, ...).
QByteArray luaLiteral(const QByteArray &text)
{
    QByteArray out;
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (text[i] != '\\' || i + 1 == text.size()) {
            out += text[i];
            continue;
        }
        const char c = text[++i];
        if (c >= '0' && c <= '9') {
            int v = 0, n = 0;
            for (; n < 3 && i < text.size() && text[i] >= '0' && text[i] <= '9'; ++n, ++i)
                v = v * 10 + (text[i] - '0');
            --i;
            out += char(v & 0xff);
            continue;
        }
        static const QByteArray from = "abfnrtv", to = "\a\b\f\n\r\t\v";
        const qsizetype k = from.indexOf(c);
        out += k >= 0 ? to[k] : c; // \\, \', \" stand for themselves
    }
    return out;
}

} // namespace

std::optional<LoadedLibrary> libraryOfCode(const QByteArray &code)
{
    const FunctionLibrary &lib = FunctionLibrary::instance();
    if (code == lib.code())
        return LoadedLibrary{lib.version(), lib.scriptsDigest()};
    static const QRegularExpression version(QStringLiteral("^local VERSION = '([^'\\n]{1,100})'$"),
                                            QRegularExpression::MultilineOption);
    static const QRegularExpression digest(QStringLiteral("^local SCRIPTS = '([0-9a-f]{40})'$"), QRegularExpression::MultilineOption);
    const QString text = QString::fromUtf8(code.left(64 * 1024)); // the header states them
    const auto v = version.match(text);
    if (!v.hasMatch())
        return std::nullopt;
    const auto d = digest.match(text);
    // Another build's words, shown by status and deploy: no control character reaches a terminal.
    return LoadedLibrary{escapeControls(QString::fromUtf8(luaLiteral(v.captured(1).toUtf8()))),
                         d.hasMatch() ? d.captured(1).toLatin1() : QByteArray()};
}

ScriptsStatus readScriptsStatus(Connection &connection, const std::vector<ReleasedScript> &known)
{
    std::vector<ReleasedScript> older;
    for (const ReleasedScript &r : known)
        if (r.sha1 != LimiterScript::forAlgorithm(r.algorithm).sha1()) // an unchanged script is no drift
            older.push_back(r);
    Command exists{"SCRIPT", "EXISTS"};
    for (Algorithm a : kAllAlgorithms)
        exists << LimiterScript::forAlgorithm(a).sha1();
    for (const ReleasedScript &r : older)
        exists << r.sha1;

    ScriptsStatus status;
    status.cluster = connection.isCluster();
    const auto perMaster =
        connection.onEachMaster({{"FUNCTION", "LIST", "LIBRARYNAME", FunctionLibrary::name(), "WITHCODE"}, LoadedLibrary::query(), exists});
    const QStringList addresses = masterAddresses(connection);
    for (size_t i = 0; i < perMaster.size(); ++i) {
        const std::vector<Reply> &r = perMaster[i];
        ScriptsNodeStatus m;
        m.address = i < size_t(addresses.size()) ? addresses[qsizetype(i)] : QString();
        if (isDown(r[0])) {
            m.problem = r[0].text();
            status.masters.push_back(m);
            continue;
        }
        if (r[0].isError()) {
            m.functions = !isUnknownCommand(r[0]);
            m.functionsProblem = r[0].text();
        } else {
            for (const Reply &lib : r[0].elements()) { // flat name/value pairs; LIBRARYNAME is a pattern
                bool ours = false;
                QByteArray code;
                for (size_t k = 0; k + 1 < lib.size(); k += 2) {
                    if (lib[k].bytes() == "library_name" && lib[k + 1].bytes() == FunctionLibrary::name())
                        ours = true;
                    else if (lib[k].bytes() == "library_code")
                        code = lib[k + 1].bytes();
                }
                if (ours) {
                    m.libraryLoaded = true;
                    m.libraryCode = code;
                    m.library = libraryOfCode(code); // whatever FCALL_RO may be called here
                }
            }
        }
        if (const auto loaded = LoadedLibrary::fromReply(r[1]); loaded && !m.library) {
            m.library = loaded;
            m.libraryLoaded = true; // the version function answers: a reader may not FUNCTION LIST
        }
        if (r[2].isError()) {
            m.cacheProblem = r[2].text();
        } else if (r[2].isArray() && r[2].size() == std::size(kAllAlgorithms) + older.size()) {
            constexpr size_t n = std::size(kAllAlgorithms);
            for (size_t k = 0; k < n; ++k)
                m.cached[k] = r[2][k].isInteger() && r[2][k].integer() == 1;
            for (size_t k = 0; k < older.size(); ++k)
                if (r[2][n + k].isInteger() && r[2][n + k].integer() == 1)
                    m.olderFound.push_back(older[k]);
        } else {
            m.cacheProblem = QStringLiteral("SCRIPT EXISTS returned %1").arg(r[2].debugString());
        }
        status.masters.push_back(m);
    }
    return status;
}

// ---- deploy --------------------------------------------------------------------------------

QString DeployPlan::actionText(Action action)
{
    switch (action) {
    case Action::Load:
        return QStringLiteral("load");
    case Action::Upgrade:
        return QStringLiteral("upgrade");
    case Action::Replace:
        return QStringLiteral("replace");
    case Action::UpToDate:
        return QStringLiteral("up to date");
    case Action::RefuseNewer:
        return QStringLiteral("refused: newer library");
    case Action::RefuseOther:
        return QStringLiteral("refused: other library");
    }
    return {};
}

QString DeployPlan::targetText(const Target &t) const
{
    switch (t.action) {
    case Action::Load:
        return QStringLiteral("load %1 %2 (none loaded)").arg(QString::fromLatin1(library), version);
    case Action::Upgrade:
        return QStringLiteral("upgrade %1 to %2").arg(t.loaded, version);
    case Action::Replace:
        return QStringLiteral("replace %1 with %2").arg(t.loaded, version);
    case Action::UpToDate:
        return QStringLiteral("%1 already loaded").arg(version);
    case Action::RefuseNewer:
        return QStringLiteral("has %1, newer than %2: a downgrade needs --replace").arg(t.loaded, version);
    case Action::RefuseOther:
        return QStringLiteral("has ratescope %1, not built from these scripts: replacing it needs --replace").arg(t.loaded);
    }
    return {};
}

QString DeployPlan::refusal() const
{
    QStringList why;
    for (const Target &t : targets)
        if (t.action == Action::RefuseNewer || t.action == Action::RefuseOther)
            why << QStringLiteral("%1 %2").arg(t.address, targetText(t));
    if (why.isEmpty())
        return {};
    return QStringLiteral("nothing loaded: %1").arg(why.join(QStringLiteral("; ")));
}

bool DeployPlan::needsLoad() const
{
    return refusal().isEmpty() && std::any_of(targets.begin(), targets.end(), [](const Target &t) { return t.action != Action::UpToDate; });
}

QJsonObject DeployPlan::toJson() const
{
    QJsonArray masters;
    for (const Target &t : targets)
        masters.append(QJsonObject{{QStringLiteral("address"), t.address},
                                   {QStringLiteral("action"), actionText(t.action)},
                                   {QStringLiteral("loaded_before"), t.loaded.isEmpty() ? QJsonValue() : QJsonValue(t.loaded)}});
    QJsonArray fns;
    for (const QByteArray &f : functions)
        fns.append(QString::fromLatin1(f));
    return {{QStringLiteral("library"), QString::fromLatin1(library)},
            {QStringLiteral("version"), version},
            {QStringLiteral("scripts_digest"), QString::fromLatin1(FunctionLibrary::instance().scriptsDigest())},
            {QStringLiteral("functions"), fns},
            {QStringLiteral("masters"), masters}};
}

DeployPlan planDeploy(const ScriptsStatus &status, bool replace)
{
    const FunctionLibrary &lib = FunctionLibrary::instance();
    DeployPlan plan;
    plan.version = lib.version();
    plan.functions = FunctionLibrary::functionNames();
    plan.replace = replace;
    for (const ScriptsNodeStatus &m : status.masters) {
        if (!m.problem.isEmpty())
            throw ReplyError(m.problem + QStringLiteral(" (the library goes to every master: deploy again when it is back)"));
        if (!m.functions)
            throw ReplyError(QStringLiteral("ERR %1 has no Redis Functions (it answered: %2): the library needs Redis 7 or later; "
                                            "the limiters keep working through EVALSHA")
                                 .arg(m.address, m.functionsProblem));
        if (!m.functionsProblem.isEmpty())
            throw ReplyError(m.functionsProblem);
        DeployPlan::Target t{m.address, DeployPlan::Action::Load, {}, m.libraryCode};
        if (m.libraryLoaded && m.libraryCode.isEmpty())
            throw ReplyError(QStringLiteral("ERR %1: the ratescope library loaded there could not be read (FUNCTION LIST WITHCODE): "
                                            "nothing loaded")
                                 .arg(m.address));
        if (m.hasThisBuild()) {
            t.action = DeployPlan::Action::UpToDate;
            t.loaded = m.library->version;
        } else if (m.libraryLoaded) {
            t.loaded = m.library ? m.library->version : QStringLiteral("unknown");
            const int order = m.library ? compareVersions(m.library->version, lib.version()) : 0;
            if (m.library && order < 0)
                t.action = DeployPlan::Action::Upgrade;
            else if (replace)
                t.action = DeployPlan::Action::Replace;
            else
                t.action = m.library && order > 0 ? DeployPlan::Action::RefuseNewer : DeployPlan::Action::RefuseOther;
        }
        plan.targets.push_back(t);
    }
    return plan;
}

int deployLibrary(Connection &connection, const DeployPlan &plan)
{
    if (const QString why = plan.refusal(); !why.isEmpty())
        throw UsageError(why);
    if (!plan.needsLoad())
        return 0;
    // The masters as planned, in the same order: else the plan is of another topology.
    const QStringList addresses = masterAddresses(connection);
    if (addresses.size() != qsizetype(plan.targets.size()))
        throw ReplyError(QStringLiteral("ERR the masters changed since the plan (%1, now %2): nothing loaded; deploy again")
                             .arg(plan.targets.size())
                             .arg(addresses.size()));
    for (size_t i = 0; i < plan.targets.size(); ++i)
        if (plan.targets[i].address != addresses[qsizetype(i)])
            throw ReplyError(QStringLiteral("ERR the masters changed since the plan (%1 is now %2): nothing loaded; deploy again")
                                 .arg(plan.targets[i].address, addresses[qsizetype(i)]));
    const QByteArray &code = FunctionLibrary::instance().code();
    const Command list{"FUNCTION", "LIST", "LIBRARYNAME", FunctionLibrary::name(), "WITHCODE"};
    // What a FUNCTION LIST WITHCODE reply shows of the ratescope library: its code, or empty.
    auto codeIn = [](const Reply &listed) {
        for (const Reply &lib : listed.elements()) {
            bool ours = false;
            QByteArray found;
            for (size_t k = 0; k + 1 < lib.size(); k += 2) {
                if (lib[k].bytes() == "library_name" && lib[k + 1].bytes() == FunctionLibrary::name())
                    ours = true;
                else if (lib[k].bytes() == "library_code")
                    found = lib[k + 1].bytes();
            }
            if (ours)
                return found;
        }
        return QByteArray();
    };
    const auto replies = connection.onEachMaster([&](size_t i) -> std::vector<Command> {
        if (plan.targets[i].code.isEmpty())
            return {{"FUNCTION", "LOAD", code}}; // fails if one was loaded meanwhile: nothing replaced
        return {{"MULTI"}, list, {"FUNCTION", "LOAD", "REPLACE", code}, {"EXEC"}};
    });
    int loaded = 0;
    std::optional<Reply> firstError;
    std::vector<std::pair<size_t, QByteArray>> putBack; // masters whose library changed after the check, and what it was
    for (size_t i = 0; i < replies.size() && i < plan.targets.size(); ++i) {
        const std::vector<Reply> &mine = replies[i];
        const Reply &r = mine.empty() ? Reply() : mine.back();
        const DeployPlan::Target &t = plan.targets[i];
        if (r.isError() || (!t.code.isEmpty() && (!r.isArray() || r.size() != 2))) {
            const Reply why = r.isError() ? r : mine.front().isError() ? mine.front() : Reply::error("ERR EXEC answered " + r.debugString().toUtf8());
            if (!firstError) {
                firstError = why;
                if (t.code.isEmpty() && why.bytes().contains("already exists"))
                    firstError = Reply::error(QStringLiteral("ERR %1: a ratescope library was loaded there while deploying: left as it "
                                                             "is; deploy again to see it in the plan")
                                                  .arg(t.address)
                                                  .toUtf8());
            }
            continue;
        }
        const Reply &load = t.code.isEmpty() ? r : r[1];
        if (!t.code.isEmpty()) {
            if (const QByteArray before = codeIn(r[0]); before != t.code && !before.isEmpty()) { // deleted meanwhile: nothing lost
                putBack.emplace_back(i, before);
                continue;
            }
        }
        if (load.isError()) {
            if (!firstError)
                firstError = load;
        } else if (load.bytes() == FunctionLibrary::name()) {
            ++loaded;
        } else if (!firstError) {
            firstError = Reply::error("ERR FUNCTION LOAD answered " + load.debugString().toUtf8());
        }
    }
    if (!putBack.empty()) {
        // Another library came between the check and the load: it goes back, at once, where ours
        // is still what replaced it.
        const auto restored = connection.onEachMaster([&](size_t i) -> std::vector<Command> {
            for (const auto &[at, before] : putBack)
                if (at == i)
                    return {{"MULTI"}, list, {"FUNCTION", "LOAD", "REPLACE", before}, {"EXEC"}};
            return {};
        });
        QStringList where;
        for (const auto &[at, before] : putBack) {
            const std::vector<Reply> &mine = restored[at];
            const bool ok = !mine.empty() && mine.back().isArray() && mine.back().size() == 2 && codeIn(mine.back()[0]) == code;
            const auto was = libraryOfCode(before);
            where << QStringLiteral("%1 (now %2%3)")
                         .arg(plan.targets[at].address, was ? QStringLiteral("ratescope ") + was->version : QStringLiteral("another library"),
                              ok ? QStringLiteral(", put back") : QStringLiteral(", changed again: left as it is"));
        }
        firstError = Reply::error(QStringLiteral("ERR the library changed while deploying on %1: not replaced; deploy again to see it in "
                                                 "the plan")
                                      .arg(where.join(QStringLiteral(", ")))
                                      .toUtf8());
    }
    connection.setScriptCalls(std::nullopt); // the next decision asks again
    if (firstError)
        throw ReplyError(firstError->text() + QStringLiteral(" (loaded on %1 of %2 masters)").arg(loaded).arg(plan.targets.size()));
    return loaded;
}

} // namespace ratescope
