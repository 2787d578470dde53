#include "cli.h"

#include <atomic>

#include "base/duration.h"
#include "base/errors.h"
#include "base/inputcheck.h"
#include "base/keytext.h"
#include "admin/limitsinforce.h"
#include "keys/inspector.h"

#include <QJsonDocument>
#include <QProcessEnvironment>

#include <cstdio>
#include <unistd.h>

namespace ratescope::cli {

namespace {

const QString kDefaultUrl = QStringLiteral("redis://127.0.0.1:6379/0");
constexpr int kMaxOperatorLength = 100;

// Global options that take a value: needed to find the subcommand before the full parse.
const QStringList kGlobalValueOptions = {QStringLiteral("--url"), QStringLiteral("--namespace"), QStringLiteral("--operator"),
                                         QStringLiteral("--reason")};

} // namespace

Cli::Cli()
    : m_out(stdout)
    , m_err(stderr)
{
    m_globalOptions = {
        {QStringLiteral("url"), QStringLiteral("Server to use (env RATESCOPE_URL; default %1).").arg(kDefaultUrl), QStringLiteral("URL")},
        {QStringLiteral("json"), QStringLiteral("Machine output: one JSON object, or one per line for listings.")},
        {QStringLiteral("read-only"), QStringLiteral("Refuse every mutation (exit 5) before anything is sent.")},
        {QStringLiteral("namespace"), QStringLiteral("Prefix of Ratescope's metadata keys (default ratescope:)."),
         QStringLiteral("PREFIX")},
        {QStringLiteral("operator"), QStringLiteral("Name recorded in the audit trail for mutations (default: the OS user)."),
         QStringLiteral("NAME")},
        {QStringLiteral("reason"),
         QStringLiteral("Why: a ticket number or a sentence (at most 200 characters), recorded with every audit entry the command "
                        "writes. Required for changes when the namespace says so (settings)."),
         QStringLiteral("TEXT")},
        {QStringLiteral("sandbox"), QStringLiteral("Use a private, empty redis-server started for this command and stopped after it.")},
        {{QStringLiteral("h"), QStringLiteral("help")}, QStringLiteral("Show help (for a command: COMMAND --help).")},
        {QStringLiteral("version"), QStringLiteral("Show the version.")},
    };
    registerInfo(m_commands);
    registerDecisions(m_commands);
    registerInspection(m_commands);
    registerAdministration(m_commands);
    registerBursts(m_commands);
    registerWatch(m_commands);
    registerScripts(m_commands);
    registerSimulate(m_commands);
    registerTop(m_commands);
    registerFormats(m_commands);
    registerLookup(m_commands);
    // Every command that takes a key (KEY arguments, or boundary's --key) can take it in base64.
    for (Subcommand &c : m_commands)
        if (c.synopsis.contains(QLatin1String("KEY")) || c.synopsis.contains(QLatin1String("--key ")))
            c.options.append(base64KeysOption());
}

const Subcommand *Cli::find(const QString &name) const
{
    for (const Subcommand &c : m_commands)
        if (c.name == name)
            return &c;
    return nullptr;
}

QStringList Cli::positional() const
{
    QStringList p = m_parser.positionalArguments();
    if (!p.isEmpty())
        p.removeFirst(); // the subcommand itself
    return p;
}

QByteArray Cli::bytes(const QString &argument) const
{
    const auto raw = m_rawArguments.constFind(argument);
    return raw != m_rawArguments.cend() ? *raw : argument.toUtf8();
}

QCommandLineOption Cli::base64KeysOption()
{
    return {QStringLiteral("base64-keys"), QStringLiteral("Read KEY arguments as base64 (the key_base64 of --json output).")};
}

QByteArray Cli::keyBytes(const QString &argument) const
{
    QByteArray key = bytes(argument);
    if (m_parser.isSet(QStringLiteral("base64-keys"))) {
        auto decoded = QByteArray::fromBase64Encoding(key, QByteArray::AbortOnBase64DecodingErrors);
        if (!decoded || decoded.decoded.toBase64() != key)
            throw UsageError(QStringLiteral("--base64-keys: '%1' is not base64").arg(displayKey(key)));
        key = decoded.decoded;
    }
    if (key.isEmpty())
        throw UsageError(QStringLiteral("a KEY must not be empty"));
    return key;
}

const QStringList &Cli::byteOptions()
{
    static const QStringList options = {QStringLiteral("match"),      QStringLiteral("from-keys"), QStringLiteral("key"),
                                        QStringLiteral("request-id"), QStringLiteral("trace"),     QStringLiteral("timeline"),
                                        QStringLiteral("decisions"),  QStringLiteral("lookup")};
    return options;
}

QString Cli::shown(const QString &argument) const
{
    return m_rawArguments.contains(argument) ? displayKey(bytes(argument)) : argument;
}

// Names, descriptions, the operator, the namespace, URLs, numbers and words are text: a value
// that is not UTF-8 would reach them as the stand-in of decodeArguments(), so it is refused.
void Cli::requireTextArguments(const Subcommand &command) const
{
    if (m_rawArguments.isEmpty())
        return;
    for (const QString &option : m_parser.optionNames())
        if (!byteOptions().contains(option))
            for (const QString &value : m_parser.values(option))
                if (m_rawArguments.contains(value))
                    throw UsageError(QStringLiteral("--%1: not valid UTF-8 (%2); only keys, globs and file paths are taken as bytes")
                                         .arg(option, shown(value)));
    if (command.synopsis.contains(QLatin1String("KEY")))
        return; // its arguments are keys (an action word that is not UTF-8 is unknown anyway)
    for (const QString &argument : positional())
        if (m_rawArguments.contains(argument))
            throw UsageError(QStringLiteral("%1: the argument %2 is not valid UTF-8 (only keys, globs and file paths are taken as bytes)")
                                 .arg(command.name, shown(argument)));
}

void Cli::reportOnStandardError()
{
    m_out.flush();
    if (!m_reportFile.isOpen() && !m_reportFile.open(stderr, QIODevice::WriteOnly))
        return;
    m_out.setDevice(&m_reportFile);
}

// QCommandLineParser works on text; an argument that is not valid UTF-8 is given to it as a
// stand-in of noncharacters that cannot occur in the other arguments, and bytes() maps the
// stand-in back. "--opt=VALUE" keeps its option name readable.
QStringList Cli::decodeArguments(const QList<QByteArray> &arguments)
{
    qsizetype longestRun = 0;
    for (const QByteArray &a : arguments) {
        if (!isUtf8(a))
            continue;
        qsizetype run = 0;
        for (const QChar ch : QString::fromUtf8(a)) {
            run = ch == QChar(0xFDD0) ? run + 1 : 0;
            longestRun = std::max(longestRun, run);
        }
    }
    const QString prefix(longestRun + 1, QChar(0xFDD0));
    QStringList text;
    for (qsizetype i = 0; i < arguments.size(); ++i) {
        const QByteArray &a = arguments[i];
        if (isUtf8(a)) {
            text << QString::fromUtf8(a);
            continue;
        }
        const QString standIn = prefix + QString::number(i) + QChar(0xFDD1);
        const qsizetype eq = a.indexOf('=');
        if (a.startsWith("--") && eq > 2 && isUtf8(a.left(eq))) {
            m_rawArguments.insert(standIn, a.mid(eq + 1));
            text << QString::fromUtf8(a.left(eq + 1)) + standIn;
        } else {
            m_rawArguments.insert(standIn, a);
            text << standIn;
        }
    }
    return text;
}

QString Cli::globalHelp() const
{
    QString text = QStringLiteral("Usage: ratescope-cli [global options] COMMAND [options]\n\n"
                                  "Inspect, test and administer Redis rate limiters.\n\nCommands:\n");
    for (const Subcommand &c : m_commands) {
        // The first sentence of the description.
        QString summary = c.description.simplified();
        const qsizetype end = summary.indexOf(QStringLiteral(". "));
        if (end >= 0)
            summary.truncate(end + 1);
        text += QStringLiteral("  %1 %2\n").arg(c.name, -10).arg(summary);
    }
    text += QStringLiteral("\nGlobal options:\n");
    for (const QCommandLineOption &o : m_globalOptions) {
        QString names;
        for (const QString &n : o.names())
            names +=
                (names.isEmpty() ? QString() : QStringLiteral(", ")) + (n.size() == 1 ? QStringLiteral("-") : QStringLiteral("--")) + n;
        if (!o.valueName().isEmpty())
            names += QLatin1Char(' ') + o.valueName();
        text += QStringLiteral("  %1 %2\n").arg(names, -20).arg(o.description());
    }
    text += QStringLiteral("\nDurations: 250ms, 60s, 5m, 2h, 1d (a bare number is seconds).\n"
                           "Exit codes: 0 ok (a denied decision too), 2 usage or validation, 3 connection,\n"
                           "4 server error reply, 5 refused by read-only mode, 6 edit conflict or no such policy\n"
                           "or override.\n");
    return text;
}

QString Cli::commandHelp(const Subcommand &c) const
{
    QString text = QStringLiteral("Usage: ratescope-cli [global options] %1\n\n%2\n").arg(c.synopsis, c.description);
    if (!c.options.isEmpty())
        text += QStringLiteral("\nOptions:\n");
    for (const QCommandLineOption &o : c.options) {
        QString names = QStringLiteral("--") + o.names().constLast();
        if (!o.valueName().isEmpty())
            names += QLatin1Char(' ') + o.valueName();
        text += QStringLiteral("  %1 %2\n").arg(names, -22).arg(o.description());
    }
    text += QStringLiteral("\nGlobal options: see ratescope-cli --help.\n");
    return text;
}

ProgressLine::ProgressLine(Cli &cli, QString what, const InterruptFlag &interrupt)
    : m_cli(cli)
    , m_what(std::move(what))
    , m_live(!cli.json() && ::isatty(fileno(stderr)))
    , m_interrupt(interrupt)
{
}

ProgressLine::~ProgressLine()
{
    if (!m_shown)
        return;
    m_cli.err() << "\r" << QString(40, QLatin1Char(' ')) << "\r";
    m_cli.err().flush();
}

bool ProgressLine::report(qint64 scanned)
{
    if (m_live) {
        m_cli.err() << "\r" << m_what << ": " << scanned << " keys ";
        m_cli.err().flush();
        m_shown = true;
    }
    return !m_interrupt.raised();
}

AuditLog Cli::auditLog()
{
    AuditLog log(connection(), m_namespace);
    log.setReason(m_reason);
    return log;
}

Connection &Cli::connection()
{
    if (!m_connection) {
        m_connection = std::make_unique<Connection>(ConnectionOptions::fromUrl(m_url));
        m_connection->connect();
    }
    return *m_connection;
}

Connection &Cli::connection(const std::vector<Command> &firstReads)
{
    if (!m_connection)
        m_connection = std::make_unique<Connection>(ConnectionOptions::fromUrl(m_url));
    m_connection->prefetch(firstReads);
    if (!m_connection->isConnected())
        m_connection->connect();
    return *m_connection;
}

std::vector<Command> Cli::limiterReads(const QByteArray &key, KeyUse use)
{
    FirstRound round;
    round.forInspect = use == KeyUse::Inspect;
    round.forWrite = use == KeyUse::Write;
    round.oneServer = ConnectionOptions::fromUrl(m_url).transport != ConnectionOptions::Transport::Cluster;
    if (m_parser.isSet(QStringLiteral("window"))) {
        try {
            round.windowsUs.push_back(durationOptionUs(QStringLiteral("window")));
        } catch (const UsageError &) {
            // said by the command where it reads its limits
        }
    }
    return firstRoundReads(m_namespace, key, round);
}

Connection &Cli::connectionFor(const QByteArray &key, KeyUse use, const std::vector<Command> &more)
{
    std::vector<Command> reads = limiterReads(key, use);
    reads.insert(reads.end(), more.begin(), more.end());
    Connection &c = connection(reads);
    for (const Command &r : reads)
        if (r.value(0) == "EVAL_RO")
            if (const auto counters = c.takePrefetched(r))
                takeCounterWindows(c, key, *counters);
    return c;
}

const std::vector<Policy> &Cli::policiesOnce(bool warnSkipped)
{
    if (!m_policies)
        m_policies = PolicyStore(connection(), m_namespace).list(&m_skippedPolicies);
    if (warnSkipped && !m_skippedPolicies.isEmpty()) {
        for (const QString &warning : std::as_const(m_skippedPolicies))
            m_err << "ratescope-cli: warning: " << warning << '\n';
        m_err.flush();
        m_skippedPolicies.clear(); // named once
    }
    return *m_policies;
}

std::vector<Policy> Cli::policies()
{
    QStringList skipped;
    std::vector<Policy> found = PolicyStore(connection(), m_namespace).list(&skipped);
    for (const QString &warning : skipped)
        m_err << "ratescope-cli: warning: " << warning << '\n';
    m_err.flush();
    return found;
}

void Cli::printJson(const QJsonObject &object, Flush flush)
{
    m_out << QJsonDocument(object).toJson(QJsonDocument::Compact) << '\n';
    if (flush == Flush::Now)
        m_out.flush();
}

void Cli::printJson(const JsonLine &line, Flush flush)
{
    // Bytes straight to the device: the stream would turn them into UTF-16 and back.
    m_out.flush(); // what the stream holds goes first
    m_line.truncate(0); // its room kept from line to line
    line.appendTo(m_line);
    m_line.append('\n');
    m_out.device()->write(m_line);
    if (flush == Flush::Now)
        flushOut();
}

void Cli::flushOut()
{
    m_out.flush();
    if (auto *file = qobject_cast<QFileDevice *>(m_out.device()))
        file->flush();
}

void Cli::printFields(const QList<QPair<QString, QString>> &fields)
{
    qsizetype width = 0;
    for (const auto &f : fields)
        width = std::max(width, f.first.size());
    for (const auto &f : fields) // values may be server-supplied text: escaped
        m_out << f.first.leftJustified(width + 2) << escapeControls(f.second) << '\n';
    m_out.flush();
}

qint64 Cli::integerOption(const QString &name, qint64 min, qint64 max, std::optional<qint64> fallback) const
{
    if (!m_parser.isSet(name)) {
        if (fallback)
            return *fallback;
        throw UsageError(QStringLiteral("--%1 is required").arg(name));
    }
    const QString text = m_parser.value(name);
    bool ok = false;
    const qint64 v = parseStrictInteger(text, &ok); // digits only: no " 5", "5 ", "+5"
    if (!ok)
        throw UsageError(QStringLiteral("--%1 must be an integer, not '%2'").arg(name, text));
    if (v < min || v > max)
        throw UsageError(QStringLiteral("--%1 must be between %2 and %3, not %4").arg(name).arg(min).arg(max).arg(v));
    return v;
}

qint64 Cli::durationOptionUs(const QString &name, std::optional<qint64> fallback) const
{
    if (!m_parser.isSet(name)) {
        if (fallback)
            return *fallback;
        throw UsageError(QStringLiteral("--%1 is required").arg(name));
    }
    try {
        return parseDurationUs(m_parser.value(name));
    } catch (const UsageError &e) {
        throw UsageError(QStringLiteral("--%1: %2").arg(name, e.message()));
    }
}

void Cli::requireWritable(const QString &what) const
{
    if (m_readOnly)
        throw ReadOnlyError(QStringLiteral("%1 changes data and the session is read-only").arg(what));
}

ErrorClass Cli::classify(const std::exception &e)
{
    int code = ExitServer;
    QString kind = QStringLiteral("server");
    if (auto *reply = dynamic_cast<const ReplyError *>(&e)) {
        // A key of the wrong type for the algorithm is a validation problem (docs/cli.md).
        // So is a key of the right type whose fields are not a Ratescope limiter's (the
        // scripts' "ERR ratescope: key '...' is not a ratescope ..." refusal).
        if (reply->prefix() == QLatin1String("WRONGTYPE") || (reply->message().startsWith(QLatin1String("ERR ratescope: key ")) &&
                                                              reply->message().contains(QLatin1String(" is not a ratescope ")))) {
            code = ExitUsage;
            kind = QStringLiteral("usage");
        } else if (reply->prefix() == QLatin1String("DOWN")) { // a cluster node out of reach
            code = ExitConnection;
            kind = QStringLiteral("connection");
        }
    } else if (dynamic_cast<const UsageError *>(&e)) {
        code = ExitUsage;
        kind = QStringLiteral("usage");
    } else if (dynamic_cast<const ReadOnlyError *>(&e)) {
        code = ExitReadOnly;
        kind = QStringLiteral("read-only");
    } else if (dynamic_cast<const ConflictError *>(&e)) {
        code = ExitConflict;
        kind = QStringLiteral("conflict");
    } else if (dynamic_cast<const UnexpectedReplyError *>(&e)) {
        code = ExitServer; // the server answered, with something this build cannot use
        kind = QStringLiteral("unexpected-reply");
    } else if (dynamic_cast<const ConnectionError *>(&e)) {
        code = ExitConnection;
        kind = QStringLiteral("connection");
    }
    // Messages quote keys, names and server replies: no control character reaches the terminal.
    return {code, kind, escapeControls(QString::fromUtf8(e.what()))};
}

int Cli::fail(const std::exception &e)
{
    const auto [code, kind, message] = classify(e);
    if (m_json)
        printJson({{QStringLiteral("error"), QJsonObject{{QStringLiteral("kind"), kind}, {QStringLiteral("message"), message}}}});
    m_err << "ratescope-cli: " << message << '\n';
    m_err.flush();
    return code;
}

int Cli::run(const QList<QByteArray> &arguments)
{
    try {
        return dispatch(decodeArguments(arguments));
    } catch (const std::exception &e) {
        return fail(e);
    }
}

int Cli::dispatch(const QStringList &arguments)
{
    // The subcommand decides which options exist, so find it first: the first word that
    // is neither an option nor the value of a global option.
    QString name;
    int nameAt = 0;
    for (int i = 1; i < arguments.size(); ++i) {
        const QString &a = arguments[i];
        if (kGlobalValueOptions.contains(a)) {
            ++i;
            continue;
        }
        if (!a.startsWith(QLatin1Char('-'))) {
            name = a;
            nameAt = i;
            break;
        }
    }
    const Subcommand *command = name.isEmpty() ? nullptr : find(name);
    if (name == QLatin1String("help"))
        return help(arguments.mid(nameAt + 1));

    m_parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    m_parser.addOptions(m_globalOptions);
    if (command)
        m_parser.addOptions(command->options);
    m_parser.addPositionalArgument(QStringLiteral("command"), QStringLiteral("What to do."));
    if (!m_parser.parse(arguments)) {
        m_json = arguments.contains(QStringLiteral("--json"));
        throw UsageError(m_parser.errorText() +
                         QStringLiteral(" (see ratescope-cli %1--help)").arg(command ? name + QLatin1Char(' ') : QString()));
    }
    m_json = m_parser.isSet(QStringLiteral("json"));
    // A repeated option is a mistake (which value was meant?), not last-wins.
    {
        QStringList seen;
        for (const QString &option : m_parser.optionNames()) {
            if (seen.contains(option) && !(command && command->repeatable.contains(option)))
                throw UsageError(
                    QStringLiteral("%1%2 given twice").arg(option.size() == 1 ? QStringLiteral("-") : QStringLiteral("--"), option));
            seen << option;
        }
    }
    if (m_parser.isSet(QStringLiteral("version"))) {
        m_out << "ratescope-cli " << RATESCOPE_VERSION << '\n';
        return ExitOk;
    }
    if (m_parser.isSet(QStringLiteral("help"))) {
        m_out << (command ? commandHelp(*command) : globalHelp());
        return ExitOk;
    }
    if (name.isEmpty()) {
        m_err << globalHelp();
        return ExitUsage;
    }
    if (!command)
        throw UsageError(QStringLiteral("unknown command '%1' (see ratescope-cli --help)").arg(shown(name)));
    requireTextArguments(*command);

    m_readOnly = m_parser.isSet(QStringLiteral("read-only"));
    if (m_parser.isSet(QStringLiteral("namespace")))
        m_namespace = m_parser.value(QStringLiteral("namespace"));
    requireValidNamespace(m_namespace.text());
    if (m_parser.isSet(QStringLiteral("operator"))) {
        m_operator = m_parser.value(QStringLiteral("operator"));
        requireSafeText(m_operator, QStringLiteral("--operator"), kMaxOperatorLength);
        if (m_operator.trimmed() != m_operator)
            throw UsageError(QStringLiteral("--operator must not start or end with spaces"));
    }
    if (m_parser.isSet(QStringLiteral("reason"))) {
        m_reason = m_parser.value(QStringLiteral("reason"));
        if (m_reason.isEmpty())
            throw UsageError(QStringLiteral("--reason is empty"));
        requireValidReason(m_reason);
    }
    m_url = m_parser.isSet(QStringLiteral("url"))
                ? m_parser.value(QStringLiteral("url"))
                : QProcessEnvironment::systemEnvironment().value(QStringLiteral("RATESCOPE_URL"), kDefaultUrl);
    if (m_parser.isSet(QStringLiteral("sandbox"))) {
        if (m_parser.isSet(QStringLiteral("url")))
            throw UsageError(QStringLiteral("--sandbox and --url exclude each other"));
        m_sandbox = std::make_unique<SandboxServer>();
        m_sandbox->start();
        m_url = m_sandbox->url();
    }
    ConnectionOptions::fromUrl(m_url); // validate early: a bad URL is a usage error, whatever the command
    if (command->mutates && m_readOnly)
        throw ReadOnlyError(QStringLiteral("'%1' changes data and the session is read-only").arg(name));
    return command->run(*this);
}

namespace {
std::atomic<bool> g_interrupted{false};
} // namespace

InterruptFlag::InterruptFlag()
{
    g_interrupted.store(false);
    struct sigaction sa = {};
    sa.sa_handler = [](int) { g_interrupted.store(true); }; // an atomic store: safe in a handler
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &m_previous);
}

InterruptFlag::~InterruptFlag()
{
    ::sigaction(SIGINT, &m_previous, nullptr);
}

bool InterruptFlag::raised() const
{
    return g_interrupted.load();
}

} // namespace ratescope::cli
