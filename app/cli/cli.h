// The headless front end: global options, subcommand dispatch, output and exit codes (docs/cli.md).
#pragma once

#include <csignal>

#include "base/jsonline.h"
#include "redis/connection.h"
#include "admin/audit.h"
#include "admin/policy.h"
#include "redis/sandboxserver.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QFile>
#include <QHash>
#include <QJsonObject>
#include <QTextStream>

#include <functional>
#include <memory>

namespace ratescope::cli {

// Exit codes of docs/cli.md.
enum ExitCode {
    ExitOk = 0,
    ExitUsage = 2,
    ExitConnection = 3,
    ExitServer = 4,
    ExitReadOnly = 5,
    ExitConflict = 6,
};

class Cli;

// An error as the CLI reports it (Cli::classify): exit code, JSON kind, message.
struct ErrorClass {
    int code = 0;
    QString kind;
    QString message;
};

struct Subcommand {
    QString name;
    QString synopsis;    // "check KEY --algo A ..."
    QString description; // one line
    QList<QCommandLineOption> options;
    bool mutates = false; // refused in read-only mode before anything is sent
    std::function<int(Cli &)> run;
    QStringList repeatable = {}; // options that may be given more than once (--compare)
};

// Registered by each *command.cpp file.
void registerInfo(QList<Subcommand> &commands);
void registerDecisions(QList<Subcommand> &commands);
void registerInspection(QList<Subcommand> &commands);
void registerAdministration(QList<Subcommand> &commands);
void registerBursts(QList<Subcommand> &commands);
void registerWatch(QList<Subcommand> &commands);
void registerScripts(QList<Subcommand> &commands);
void registerSimulate(QList<Subcommand> &commands);
void registerTop(QList<Subcommand> &commands);
void registerFormats(QList<Subcommand> &commands);
void registerLookup(QList<Subcommand> &commands);

// 128 + SIGINT, as a shell reports a command Ctrl-C ended.
constexpr int kExitInterrupted = 130;

// While it lives, SIGINT sets a flag instead of ending the process (long commands stop
// cleanly and report what they did); a second one ends it as usual. One at a time.
class InterruptFlag {
public:
    InterruptFlag();
    ~InterruptFlag();
    InterruptFlag(const InterruptFlag &) = delete;
    InterruptFlag &operator=(const InterruptFlag &) = delete;
    bool raised() const;

private:
    struct sigaction m_previous = {};
};

// While a pass over the keyspace runs: "<what>: N keys" on stderr when it is a terminal
// (nothing with --json or off a terminal), the line cleared when the pass ends.
class ProgressLine {
public:
    ProgressLine(Cli &cli, QString what, const InterruptFlag &interrupt);
    ~ProgressLine(); // clears the line
    ProgressLine(const ProgressLine &) = delete;
    ProgressLine &operator=(const ProgressLine &) = delete;
    // After each page; false once Ctrl-C was pressed (the pass should stop).
    bool report(qint64 scanned);

private:
    Cli &m_cli;
    QString m_what;
    bool m_live = false;
    bool m_shown = false;
    const InterruptFlag &m_interrupt;
};

class Cli {
public:
    Cli();
    // argv as given, argv[0] first. Arguments are bytes: one that is not valid UTF-8 (a key
    // such as u:\xff) is kept exactly and handed out by bytes() and keyArguments().
    int run(const QList<QByteArray> &arguments);

    // For subcommands.
    const QCommandLineParser &args() const { return m_parser; }
    QStringList positional() const;
    // The exact bytes of a positional argument or option value taken from positional() or
    // args().value(): its UTF-8 when it was valid UTF-8 on the command line, else the bytes given.
    // Only KEY arguments and the options of byteOptions() may be other than UTF-8: every other
    // value is refused (exit 2, "--operator: not valid UTF-8") before the command runs.
    QByteArray bytes(const QString &argument) const;
    // Options whose values are bytes, not text: globs and keys (--match, --from-keys, --key,
    // --request-id) and file paths (--trace, --timeline, --decisions).
    static const QStringList &byteOptions();
    // KEY arguments as Redis keys: their exact bytes, or decoded from base64 with --base64-keys
    // (a command that takes KEY lists base64KeysOption()). Empty keys and bad base64 are usage errors.
    QByteArray keyBytes(const QString &argument) const;
    // An argument for a message: itself, or its bytes escaped when it was not UTF-8.
    QString shown(const QString &argument) const;
    static QCommandLineOption base64KeysOption();
    bool json() const { return m_json; }
    bool readOnly() const { return m_readOnly; }
    // For commands whose sub-actions decide whether they mutate: throws ReadOnlyError (exit 5)
    // in read-only mode. Call it before sending anything.
    void requireWritable(const QString &what) const;
    const MetadataNamespace &ns() const { return m_namespace; }
    // Who the audit trail names: --operator NAME, else empty (the OS user is recorded).
    QString operatorName() const { return m_operator; }
    // Why: --reason TEXT, else empty.
    QString reason() const { return m_reason; }
    // The audit trail on the shared connection, carrying --reason: every change checks it
    // (ensureWritable, which also refuses a change without a reason where the namespace
    // requires one) and records itself through it.
    AuditLog auditLog();
    // The shared connection, opened on first use.
    Connection &connection();
    // The same, with reads sent ahead in one round trip (in the handshake's own when this
    // opens the connection): Connection::prefetch.
    Connection &connection(const std::vector<Command> &firstReads);
    // What check, peek and inspect read in their first round, whatever the key turns out to
    // be: the policies, the key's overrides, the server's clock, the key's type and sample,
    // and whether the server has the scripts (or this build's functions library).
    // Inspect: also the key's own facts inspect shows (keys/inspector.h, classifyReads);
    // Write: also what the refusal to write another's key asks (FirstRound::forWrite).
    enum class KeyUse { Read, Inspect, Write };
    std::vector<Command> limiterReads(const QByteArray &key, KeyUse use = KeyUse::Read);
    // connection(limiterReads(key)), and the counter windows read with them kept for the
    // key's classification: everything check, peek and inspect need before their last rounds.
    // `more`: reads of the command's own, in the same round.
    Connection &connectionFor(const QByteArray &key, KeyUse use = KeyUse::Read, const std::vector<Command> &more = {});
    // The namespace's policies; a record this build cannot read is skipped with a warning
    // on stderr (the others keep working).
    std::vector<Policy> policies();
    // The same, read once for the whole command (commands that change no policy and ask
    // more than once). warnSkipped false: the records skipped are not named, for a command
    // that uses no policy's limits (its flags give them all) and asks only whether a policy
    // declares the key another library's; a later call with true names them, once.
    const std::vector<Policy> &policiesOnce(bool warnSkipped = true);
    // For commands that open connections of their own (bursts: one per thread).
    ConnectionOptions connectionOptions() const { return ConnectionOptions::fromUrl(m_url); }
    // Reports an error as the command's outcome would (stderr, and the JSON error object)
    // and returns its exit code: for commands that still have something to say after it.
    int fail(const std::exception &e);
    // An error's exit code, its JSON kind (usage, read-only, connection, server,
    // unexpected-reply, conflict) and its message with control characters escaped.
    static ErrorClass classify(const std::exception &e);
    QTextStream &out() { return m_out; }
    // From now on what the command prints (its report, JSON, errors) goes to standard error:
    // for a command whose file output is standard output (`--decisions -`).
    void reportOnStandardError();
    QTextStream &err() { return m_err; }
    // One line of JSON. Flushed at once unless told otherwise: a listing of many lines flushes
    // them per page (out().flush()), not one write per line.
    enum class Flush { Now, Later };
    void printJson(const QJsonObject &object, Flush flush = Flush::Now);
    // The same for a row written without a QJsonObject (listings of many rows).
    void printJson(const JsonLine &line, Flush flush = Flush::Now);
    // Everything printed so far written out (also what printJson(JsonLine) left in the
    // device's buffer).
    void flushOut();
    // Aligned "name  value" lines for human output.
    void printFields(const QList<QPair<QString, QString>> &fields);

    // Option helpers that throw UsageError with the option's name in the message.
    qint64 integerOption(const QString &name, qint64 min, qint64 max, std::optional<qint64> fallback = {}) const;
    qint64 durationOptionUs(const QString &name, std::optional<qint64> fallback = {}) const;

private:
    int dispatch(const QStringList &arguments);
    QStringList decodeArguments(const QList<QByteArray> &arguments);
    // Throws UsageError for a value that had to be text but was not valid UTF-8.
    void requireTextArguments(const Subcommand &command) const;
    QString globalHelp() const;
    QString commandHelp(const Subcommand &c) const;
    // `help` and its forms for tools (--man, --commands, --options [COMMAND], --algorithms):
    // helpcommand.cpp. rest: the arguments after the word `help`.
    int help(const QStringList &rest);
    QString manPage() const;
    const Subcommand *find(const QString &name) const;

    QList<Subcommand> m_commands;
    QList<QCommandLineOption> m_globalOptions;
    QCommandLineParser m_parser;
    QFile m_reportFile; // standard error once reportOnStandardError() moved m_out there (outlives m_out)
    QTextStream m_out;
    QByteArray m_line; // printJson(JsonLine)'s
    QTextStream m_err;
    bool m_json = false;
    bool m_readOnly = false;
    MetadataNamespace m_namespace;
    QString m_url;
    QString m_operator;
    QString m_reason;
    QHash<QString, QByteArray> m_rawArguments; // stand-in text -> bytes of arguments that are not UTF-8
    std::unique_ptr<SandboxServer> m_sandbox;
    std::unique_ptr<Connection> m_connection;
    std::optional<std::vector<Policy>> m_policies; // policiesOnce()
    QStringList m_skippedPolicies;                 // the records policiesOnce() skipped, until named
};

} // namespace ratescope::cli
