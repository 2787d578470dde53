// The limiter scripts as one Redis Functions library ("ratescope", generated from lua/ at
// build time), what the servers have loaded, and deploying it (docs/scripts.md, docs/cli.md).
#pragma once

#include "limiters/algorithm.h"
#include "limiters/limiterscript.h"
#include "redis/connection.h"

#include <QJsonObject>

#include <array>
#include <optional>
#include <vector>

namespace ratescope {

// This build's library: `#!lua name=ratescope`, release RATESCOPE_VERSION.
class FunctionLibrary {
public:
    static const FunctionLibrary &instance();

    static QByteArray name() { return QByteArrayLiteral("ratescope"); }
    const QByteArray &code() const { return m_code; }
    QString version() const { return QStringLiteral(RATESCOPE_VERSION); }
    // SHA-1 (hex) of the five scripts' SHA-1s in hex, in algorithm order: what
    // `FCALL_RO ratescope_version 0` answers beside the version.
    const QByteArray &scriptsDigest() const { return m_digest; }
    // "ratescope_sliding_log", "ratescope_sliding_log_peek"
    static QByteArray functionName(Algorithm algorithm, bool peek);
    // Every function the library registers, the version function last.
    static QList<QByteArray> functionNames();

private:
    FunctionLibrary();
    QByteArray m_code;
    QByteArray m_digest;
};

// -1, 0, 1 as a is older, equal or newer than b ("0.2.0" < "0.10.0"); numeric parts first,
// then text.
int compareVersions(const QString &a, const QString &b);

// A script of an earlier release, by the SHA-1 EVALSHA knows it by (lua/releases.txt).
struct ReleasedScript {
    QString release;
    Algorithm algorithm;
    QByteArray sha1;
    bool operator==(const ReleasedScript &) const = default;
};
// Lines "release algorithm sha1"; '#' comments and blank lines skipped. Throws UsageError
// naming the line for anything else.
std::vector<ReleasedScript> parseReleases(const QByteArray &text);
const std::vector<ReleasedScript> &knownReleases();

// The scripts' state on each master (a cluster's masters in Connection::nodes() order, or the
// one server).
struct ScriptsNodeStatus {
    QString address;
    QString problem;                                      // "DOWN <address>: why" when it did not answer; the rest is then empty
    bool functions = true;                                // false: no Redis Functions here (Redis 6, or FUNCTION renamed away)
    QString functionsProblem;                             // why the library could not be read (no functions, NOPERM, ...)
    bool libraryLoaded = false;                           // a library named ratescope is loaded
    std::optional<LoadedLibrary> library;                 // its version: from its code, else from its ratescope_version
    QByteArray libraryCode;                               // its code (FUNCTION LIST WITHCODE); empty when none or not readable
    QString cacheProblem;                                 // why SCRIPT EXISTS failed (NOPERM), else empty
    std::array<bool, std::size(kAllAlgorithms)> cached{}; // this release's script, per algorithm, in the script cache
    std::vector<ReleasedScript> olderFound;               // earlier releases' scripts in the script cache

    bool hasThisBuild() const { return library && library->isThisBuild(); }
    // Functions here, but this user may read neither the library nor its version: whether one is
    // loaded is not known.
    bool libraryUnreadable() const { return problem.isEmpty() && functions && !functionsProblem.isEmpty() && !libraryLoaded; }
};

struct ScriptsStatus {
    std::vector<ScriptsNodeStatus> masters;
    bool cluster = false;

    int mastersWithThisBuild() const;
    // "functions library ratescope 0.2.0 on 3 of 3 masters" / "script cache only" /
    // "older scripts found: sliding-log of 0.1.0": one line for the Overview and the CLI.
    QString summary() const;
    // Every distinct older script found, "sliding-log of 0.1.0".
    QStringList drift() const;
    QJsonObject toJson() const;
};

// The version and scripts digest a ratescope library's code states (its `local VERSION = '...'`
// and `local SCRIPTS = '...'`); this build's for this build's code; nullopt when it says neither.
std::optional<LoadedLibrary> libraryOfCode(const QByteArray &code);

// One pipeline per master: FUNCTION LIST LIBRARYNAME ratescope WITHCODE, FCALL_RO ratescope_version 0,
// SCRIPT EXISTS of this release's and the known older scripts. A release's script whose SHA-1
// equals this release's is not drift.
ScriptsStatus readScriptsStatus(Connection &connection, const std::vector<ReleasedScript> &known = knownReleases());

// What `scripts deploy` will do on each master.
struct DeployPlan {
    enum class Action {
        Load,        // no library yet
        Upgrade,     // an older release's library is replaced
        Replace,     // --replace: a newer or different library is replaced
        UpToDate,    // this build's library is there: loaded again only with the others
        RefuseNewer, // a newer release's library: a downgrade needs --replace
        RefuseOther, // the same release from other scripts, or a library that does not say: needs --replace
    };
    struct Target {
        QString address;
        Action action = Action::Load;
        QString loaded; // the version loaded before, "" when none, "unknown" when it does not say
        QByteArray code; // the code of the library checked (empty: none); loaded over only if it is still there
    };
    QByteArray library = FunctionLibrary::name();
    QString version;
    QList<QByteArray> functions;
    std::vector<Target> targets;
    bool replace = false;

    // Why nothing may be loaded (a downgrade or another library without --replace), else empty.
    QString refusal() const;
    // Anything to load at all (false when every master already has this build's library).
    bool needsLoad() const;
    static QString actionText(Action action); // "load", "upgrade from 0.1.0", ...
    QString targetText(const Target &t) const;
    QJsonObject toJson() const;
};

// The plan from a status. Throws (nothing sent yet) when a master is out of reach (ReplyError
// "DOWN ..."), has no Redis Functions (ReplyError "ERR ...: Redis 7 or later is needed"), or
// may not be asked (the NOPERM reply).
DeployPlan planDeploy(const ScriptsStatus &status, bool replace);
// Loads this build's library on every master when the plan needs a load, only over what the
// plan checked there: FUNCTION LOAD (never REPLACE) where there was none; where there was one,
// FUNCTION LOAD REPLACE in a transaction with FUNCTION LIST WITHCODE, and when that shows another
// library than the one checked (loaded meanwhile), it is put back at once and the deploy fails
// (ReplyError, "changed while deploying"). Throws UsageError with the plan's refusal first. The connection detects the library
// again for its next decision. Returns the number of masters loaded.
int deployLibrary(Connection &connection, const DeployPlan &plan);
// "scripts.deploy": the library and version, the functions and the masters loaded (after),

} // namespace ratescope
