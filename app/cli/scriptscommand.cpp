// `ratescope-cli scripts show|status|deploy`: the limiter scripts, the functions library on the
// servers, and loading it (docs/cli.md#scripts). Deploy is refused in read-only mode and
// leaves one audit entry.
#include "cli.h"

#include "admin/audit.h"
#include "base/errors.h"
#include "base/keytext.h"
#include "limiters/limiterscript.h"
#include "limiters/scriptlibrary.h"

#include <QJsonArray>

#include <cstdio>

namespace ratescope::cli {

namespace {

int runShow(Cli &cli, const QStringList &rest)
{
    if (rest.size() != 1)
        throw UsageError(QStringLiteral("scripts show needs one ALGO (%1) or 'library'").arg(algorithmNames().join(QStringLiteral(", "))));
    QByteArray text;
    QString name;
    if (rest[0] == QLatin1String("library")) {
        text = FunctionLibrary::instance().code();
        name = QStringLiteral("library");
    } else {
        const Algorithm a = parseAlgorithm(rest[0]);
        text = LimiterScript::forAlgorithm(a).source();
        name = algorithmName(a);
    }
    if (cli.json()) {
        QJsonObject o{{QStringLiteral("name"), name}, {QStringLiteral("source"), QString::fromUtf8(text)}};
        if (name == QLatin1String("library")) {
            o.insert(QStringLiteral("version"), FunctionLibrary::instance().version());
        } else {
            const LimiterScript &s = LimiterScript::forAlgorithm(parseAlgorithm(name));
            o.insert(QStringLiteral("sha1"), QString::fromLatin1(s.sha1()));
            o.insert(QStringLiteral("function"), QString::fromLatin1(s.functionName(false)));
        }
        cli.printJson(o);
        return ExitOk;
    }
    cli.out().flush();
    std::fwrite(text.constData(), 1, size_t(text.size()), stdout); // the exact bytes: pipe it to redis-cli -x
    std::fflush(stdout);
    return ExitOk;
}

int runStatus(Cli &cli)
{
    const ScriptsStatus status = readScriptsStatus(cli.connection());
    if (cli.json()) {
        cli.printJson(status.toJson());
        return ExitOk;
    }
    const FunctionLibrary &lib = FunctionLibrary::instance();
    cli.printFields(
        {{QStringLiteral("release"), QStringLiteral("%1 (scripts digest %2)").arg(lib.version(), QString::fromLatin1(lib.scriptsDigest()))},
         {QStringLiteral("summary"), status.summary()}});
    cli.out() << '\n';
    for (const ScriptsNodeStatus &m : status.masters) {
        QString what;
        if (!m.problem.isEmpty())
            what = m.problem;
        else if (!m.functions)
            what = QStringLiteral("no Redis Functions");
        else if (m.hasThisBuild())
            what = QStringLiteral("library %1 (this release)").arg(m.library->version);
        else if (m.library)
            what = QStringLiteral("library %1 (not this release's)").arg(m.library->version);
        else if (m.libraryLoaded)
            what = QStringLiteral("library of unknown version");
        else if (!m.functionsProblem.isEmpty())
            what = QStringLiteral("library not readable: %1").arg(m.functionsProblem);
        else
            what = QStringLiteral("no library");
        cli.out() << "master " << m.address << "  " << what << '\n';
    }
    cli.out() << '\n'
              << QStringLiteral("%1 %2 %3 %4\n")
                     .arg(QStringLiteral("ALGORITHM"), -16)
                     .arg(QStringLiteral("SHA1"), -40)
                     .arg(QStringLiteral("CACHED"), -8)
                     .arg(QStringLiteral("OLDER FOUND"));
    for (Algorithm a : kAllAlgorithms) {
        int cached = 0, answered = 0;
        QStringList older;
        for (const ScriptsNodeStatus &m : status.masters) {
            if (!m.problem.isEmpty() || !m.cacheProblem.isEmpty())
                continue;
            ++answered;
            cached += m.cached[size_t(a)] ? 1 : 0;
            for (const ReleasedScript &r : m.olderFound)
                if (r.algorithm == a)
                    older << QStringLiteral("%1 (%2) on %3").arg(r.release, QString::fromLatin1(r.sha1.left(12)), m.address);
        }
        cli.out() << QStringLiteral("%1 %2 %3 %4\n")
                         .arg(algorithmName(a), -16)
                         .arg(QString::fromLatin1(LimiterScript::forAlgorithm(a).sha1()), -40)
                         .arg(QStringLiteral("%1 of %2").arg(cached).arg(answered), -8)
                         .arg(older.isEmpty() ? QStringLiteral("-") : older.join(QStringLiteral(", ")));
    }
    return ExitOk;
}

int runDeploy(Cli &cli)
{
    cli.requireWritable(QStringLiteral("scripts deploy"));
    const bool replace = cli.args().isSet(QStringLiteral("replace"));
    const DeployPlan plan = planDeploy(readScriptsStatus(cli.connection()), replace);
    if (const QString why = plan.refusal(); !why.isEmpty())
        throw UsageError(why);
    if (!cli.json())
        for (const DeployPlan::Target &t : plan.targets)
            cli.out() << t.address << "  " << plan.targetText(t) << '\n';
    int loaded = 0;
    if (plan.needsLoad()) {
        cli.auditLog().ensureWritable(); // no deploy without its record
        loaded = deployLibrary(cli.connection(), plan);
        cli.auditLog().append(scriptsDeployAuditEntry(plan, loaded), cli.operatorName());
    }
    if (cli.json()) {
        QJsonObject o = plan.toJson();
        o.insert(QStringLiteral("loaded_on"), loaded);
        cli.printJson(o);
    } else if (loaded > 0) {
        cli.out() << "loaded " << plan.library << ' ' << plan.version << " on " << loaded << " of " << plan.targets.size()
                  << (plan.targets.size() == 1 ? " server\n" : " masters\n");
    } else {
        cli.out() << plan.library << ' ' << plan.version << " was already loaded: nothing to do\n";
    }
    return ExitOk;
}

int runScripts(Cli &cli)
{
    QStringList p = cli.positional();
    if (p.isEmpty())
        throw UsageError(QStringLiteral("scripts needs an action: show ALGO|library, status, deploy [--replace]"));
    const QString action = p.takeFirst();
    if (action != QLatin1String("deploy") && cli.args().isSet(QStringLiteral("replace")))
        throw UsageError(QStringLiteral("--replace goes with scripts deploy, not scripts %1").arg(escapeControls(action)));
    if (action == QLatin1String("show"))
        return runShow(cli, p);
    if (!p.isEmpty())
        throw UsageError(QStringLiteral("scripts %1 takes no arguments").arg(action));
    if (action == QLatin1String("status"))
        return runStatus(cli);
    if (action == QLatin1String("deploy"))
        return runDeploy(cli);
    throw UsageError(QStringLiteral("unknown scripts action '%1' (show, status, deploy)").arg(cli.shown(action)));
}

} // namespace

void registerScripts(QList<Subcommand> &commands)
{
    commands.append({QStringLiteral("scripts"),
                     QStringLiteral("scripts show ALGO|library | status | deploy [--replace]"),
                     QStringLiteral("The limiter scripts: print one (or the functions library), report what the servers have\n"
                                    "loaded (script cache, library version, older releases' scripts), or load the library\n"
                                    "on every master (FUNCTION LOAD; a newer or different library only with --replace)."),
                     {{QStringLiteral("replace"), QStringLiteral("deploy: also replace a newer or different ratescope library.")}},
                     false,
                     runScripts});
}

} // namespace ratescope::cli
