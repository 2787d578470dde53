// One limiter script from lua/: its source as compiled into the binary, and running it by
// FCALL (when the ratescope functions library of this build is loaded) or EVALSHA, with
// recovery only from an explicit NOSCRIPT or "Function not found" (docs/scripts.md).
#pragma once

#include "limiters/algorithm.h"
#include "redis/connection.h"
#include "redis/resp.h"

namespace ratescope {

class LimiterScript {
public:
    static const LimiterScript &forAlgorithm(Algorithm algorithm);

    Algorithm algorithm() const { return m_algorithm; }
    const QByteArray &source() const { return m_source; }
    const QByteArray &sha1() const { return m_sha1; } // hex, as SCRIPT LOAD returns it
    // The library's function: "ratescope_sliding_log", or its no-writes twin
    // "ratescope_sliding_log_peek".
    QByteArray functionName(bool peek) const;
    // SHA-1 (hex) of every script's SHA-1 in hex, in algorithm order: what this build's
    // functions library answers beside its version (scriptlibrary.h).
    static const QByteArray &scriptsDigest();

    // How scripts go on this connection: FCALL when every master answers this build's
    // library version (FCALL_RO ratescope_version 0), else EVALSHA. Asked once per connection
    // (Connection::scriptCalls); a NOPERM or a server without functions means EVALSHA.
    static ScriptCalls callsOn(Connection &connection);

    // One decision with one key: FCALL (FCALL_RO of the _peek twin when readOnly) or EVALSHA
    // (EVALSHA_RO when readOnly), as callsOn() says. Only when nothing ran is the request
    // sent again, once: after "Function not found" (the library was removed) as EVALSHA, and
    // after NOSCRIPT with the script loaded (EVAL_RO for read-only callers, who may lack
    // SCRIPT LOAD). Any other failure may have counted the request and is thrown as is.
    Reply run(Connection &connection, const QByteArray &key, const QList<QByteArray> &argv, bool readOnly) const;
    // The command, for callers that pipeline (and handle notLoaded() replies themselves).
    Command command(const QByteArray &key, const QList<QByteArray> &argv, bool readOnly, ScriptCalls calls = ScriptCalls::Evalsha) const;
    // A reply saying the script or function did not run because the server does not have it:
    // NOSCRIPT, or "ERR Function not found". Sending the request again counts it once.
    static bool notLoaded(const Reply &reply);
    // After a "Function not found": the library is gone from some master, so this
    // connection uses EVALSHA from now on.
    static void functionMissing(Connection &connection) { connection.setScriptCalls(ScriptCalls::Evalsha); }
    // SCRIPT EXISTS of every script, in algorithm order: a command that reads it ahead
    // (Connection::prefetch) lets run() know whether the server has the script without a
    // round trip of its own; when it has not, run() sends SCRIPT LOAD and the call together.
    static Command existsQuery();
    // For a pipeline of read-only calls (EVALSHA_RO) some of which came back NOSCRIPT (the
    // server lost the scripts): sends those again, as EVAL_RO with the script, in one round,
    // and puts their replies in place. Nothing ran for a NOSCRIPT, so nothing counts twice;
    // every other reply, and every other command, is left as it is.
    static void resendNotLoaded(Connection &connection, const std::vector<Command> &commands, Reply *replies);
    // Makes sure the server has the script cached (SCRIPT LOAD).
    void load(Connection &connection) const;

private:
    explicit LimiterScript(Algorithm algorithm);

    Algorithm m_algorithm;
    QByteArray m_source;
    QByteArray m_sha1;
};

// What `FCALL_RO ratescope_version 0` answered.
struct LoadedLibrary {
    // The question: FCALL_RO ratescope_version 0.
    static Command query();
    QString version;
    QByteArray scriptsDigest;
    // The same release built from the same scripts: safe to call instead of EVALSHA.
    bool isThisBuild() const;
    // Parses the function's reply: {version, digest}; nullopt for anything else.
    static std::optional<LoadedLibrary> fromReply(const Reply &reply);
};

enum class LibraryPresence { ThisBuild, Other, Missing };
// One FCALL_RO ratescope_version 0 on every master: ThisBuild when each master that answers
// has this build's library. A server without functions, or a user without FCALL_RO: Missing.
// Throws ConnectionError when no master answers.
LibraryPresence detectLibrary(Connection &connection);

} // namespace ratescope
