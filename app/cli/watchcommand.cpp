// `ratescope-cli watch`: the Monitor tab's twin for a terminal. Each tick reads every key in
// one pipelined round (readUsage: the scripts' peek, or core's reading of foreign formats)
// on the server's clock and prints one line per key. Read-only; Ctrl-C ends it with exit 0.
#include "cli.h"
#include "limitoptions.h"

#include "base/duration.h"
#include "base/errors.h"
#include "keys/inspector.h"
#include "keys/keyscanner.h"
#include "base/keytext.h"
#include "admin/limitsinforce.h"
#include "admin/policy.h"
#include "formats/usage.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonObject>
#include <QThread>

#include <atomic>
#include <csignal>
#include <unistd.h>

namespace ratescope::cli {

namespace {

const QCommandLineOption kInterval(QStringLiteral("interval"), QStringLiteral("Time between readings (10ms..1h, default 1s)."),
                                   QStringLiteral("D"));
const QCommandLineOption kCount(QStringLiteral("count"), QStringLiteral("Stop after N readings (default: until Ctrl-C)."),
                                QStringLiteral("N"));
const QCommandLineOption kCost(QStringLiteral("cost"), QStringLiteral("Cost of the request asked about (default: the policy's, else 1)."),
                               QStringLiteral("C"));
const QCommandLineOption kScoreUnit(QStringLiteral("score-unit"),
                                    QStringLiteral("Time unit of a foreign sliding log's scores: auto, s, ms or us."), QStringLiteral("U"));

std::atomic<bool> g_stop{false};

// Ctrl-C ends the watch after the tick under way; a second one kills as usual.
class InterruptStops {
public:
    InterruptStops()
    {
        g_stop.store(false);
        struct sigaction sa = {};
        sa.sa_handler = [](int) { g_stop.store(true); }; // an atomic store: safe in a signal handler
        sa.sa_flags = SA_RESETHAND | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGINT, &sa, &m_previous);
    }
    ~InterruptStops() { ::sigaction(SIGINT, &m_previous, nullptr); }
    InterruptStops(const InterruptStops &) = delete;
    InterruptStops &operator=(const InterruptStops &) = delete;

private:
    struct sigaction m_previous = {};
};

struct Flags {
    std::optional<Algorithm> algorithm;
    std::optional<qint64> limit, windowUs, cost;
    std::optional<ScoreUnit> unit;
    bool complete() const { return algorithm && limit && windowUs; }
};

// Everything the flags say is checked before anything is sent.
Flags readFlags(const Cli &cli)
{
    Flags f;
    if (cli.args().isSet(QStringLiteral("algo")))
        f.algorithm = parseAlgorithm(cli.args().value(QStringLiteral("algo")));
    if (cli.args().isSet(QStringLiteral("limit")))
        f.limit = cli.integerOption(QStringLiteral("limit"), 1, kMaxLimit);
    if (cli.args().isSet(QStringLiteral("window")))
        f.windowUs = cli.durationOptionUs(QStringLiteral("window"));
    if (cli.args().isSet(QStringLiteral("cost")))
        f.cost = cli.integerOption(QStringLiteral("cost"), 1, kMaxLimit);
    if (cli.args().isSet(QStringLiteral("score-unit")))
        f.unit = parseScoreUnit(cli.args().value(QStringLiteral("score-unit")));
    return f;
}

struct Watched {
    QByteArray key;
    QString shown;
    UsageTarget target;
};

// The limits (flags over override over policy) and the format of each key, or UsageError
// naming the first key that cannot be read.
std::vector<Watched> resolve(Cli &cli, const QList<QByteArray> &keys, const Flags &flags, qint64 nowUs)
{
    Connection &c = cli.connection();
    const std::vector<Policy> policies = flags.complete() ? std::vector<Policy>{} : cli.policies();
    std::vector<Watched> watched;
    for (const QByteArray &key : keys) {
        const EffectiveLimits limits = flags.complete() ? EffectiveLimits{} : readLimitsInForce(c, cli.ns(), policies, key);
        std::optional<LimitSpec> spec = limits.spec;
        if (!spec && flags.complete())
            spec = LimitSpec{};
        if (spec) {
            if (flags.algorithm)
                spec->algorithm = *flags.algorithm;
            if (flags.limit)
                spec->limit = *flags.limit;
            if (flags.windowUs)
                spec->windowUs = *flags.windowUs;
            if (flags.cost)
                spec->cost = *flags.cost;
            spec->validate();
        }
        const ScoreUnit unit = flags.unit ? *flags.unit : limits.policy ? limits.policy->scoreUnit : ScoreUnit::Auto;
        KeyKind kind = classifyKey(c, key, nowUs, unit, spec, limits.policy ? limits.policy->format : QString());
        if (limits.policy && !limits.policy->format.isEmpty() && !kind.isLimiter())
            if (const QString mismatch = declaredFormatMismatch(key, c.command({"TYPE", key}).bytes(), kind, &*limits.policy);
                !mismatch.isEmpty())
                throw UsageError(mismatch);
        if (kind.format == KeyFormat::Library && !kind.readable())
            throw UsageError(QStringLiteral("'%1' is a %2: its state is recognised, never decoded").arg(displayKey(key), kind.label()));
        // --algo naming another algorithm than the key's own: refused, as peek refuses it (the key
        // would be read as what it is, not as what was asked).
        if (flags.algorithm && kind.algorithm() && *kind.algorithm() != *flags.algorithm)
            throw UsageError(QStringLiteral("'%1' is a %2; --algo %3 does not fit it")
                                 .arg(displayKey(key), kind.label(), algorithmName(*flags.algorithm)));
        spec = limitsFor(kind, spec); // another library's key may state its own limits or window
        if (!kind.isLimiter()) {
            const QByteArray type = c.command({"TYPE", key}).bytes();
            if (type != "none")
                throw UsageError(
                    QStringLiteral("'%1' is a %2, not a limiter key Ratescope can read").arg(displayKey(key), QString::fromUtf8(type)));
            if (!spec)
                throw UsageError(
                    QStringLiteral("'%1' does not exist and no policy matches it: give --algo, --limit and --window").arg(displayKey(key)));
            kind.format = ownFormat(spec->algorithm); // not there (yet): a fresh limiter of the policy's algorithm
        }
        if (!spec)
            throw UsageError(
                QStringLiteral("no policy matches '%1' (%2): give --algo, --limit and --window").arg(displayKey(key), kind.label()));
        const QByteArray subject = kind.subject(key);
        watched.push_back({key, displayKey(key), {subject, kind, *spec}});
    }
    return watched;
}

class Printer {
public:
    Printer(Cli &cli, const std::vector<Watched> &watched)
        : m_cli(cli)
        , m_watched(watched)
        , m_tty(!cli.json() && ::isatty(STDOUT_FILENO))
    {
        for (const Watched &w : watched)
            m_keyWidth = std::max(m_keyWidth, w.shown.size());
    }

    // errors: why a key's usage is missing (readUsage's), in the JSON's error object.
    void tick(qint64 nowUs, const std::vector<std::optional<Usage>> &usage, const std::vector<std::exception_ptr> &errors)
    {
        QTextStream &out = m_cli.out();
        if (m_cli.json()) {
            for (size_t i = 0; i < m_watched.size(); ++i) {
                const QByteArray &key = m_watched[i].key;
                QJsonObject o{{QStringLiteral("time_us"), nowUs}};
                insertBytes(o, QStringLiteral("key"), key);
                if (const auto &u = usage[i]) {
                    o.insert(QStringLiteral("used"), u->usedNow);
                    o.insert(QStringLiteral("limit"), u->decision.limit);
                    o.insert(QStringLiteral("remaining"), std::max<qint64>(0, u->decision.limit - u->usedNow));
                    o.insert(QStringLiteral("retry_after_ms"), unitsRoundedUp(u->decision.retryAfterUs, 1000));
                } else {
                    // The shape of every --json error ({"kind","message"}), classified as the
                    // command's own error would be (a key of another type now: usage).
                    ErrorClass why{ExitUsage, QStringLiteral("usage"), QString()};
                    if (i < errors.size() && errors[i]) {
                        try {
                            std::rethrow_exception(errors[i]);
                        } catch (const std::exception &e) {
                            why = Cli::classify(e);
                        }
                    }
                    QString message = QStringLiteral("'%1' is not readable as %2 (its type changed?)")
                                          .arg(m_watched[i].shown, m_watched[i].target.kind.label());
                    if (!why.message.isEmpty())
                        message += QStringLiteral(": ") + why.message;
                    o.insert(QStringLiteral("error"),
                             QJsonObject{{QStringLiteral("kind"), why.kind}, {QStringLiteral("message"), escapeControls(message)}});
                }
                m_cli.printJson(o);
            }
            return;
        }
        const QString time = QDateTime::fromMSecsSinceEpoch(nowUs / 1000).toString(QStringLiteral("HH:mm:ss.zzz"));
        QStringList lines;
        if (m_tty || !m_headerDone)
            lines << row(QStringLiteral("TIME"), QStringLiteral("KEY"), QStringLiteral("USED"), QStringLiteral("LIMIT"),
                         QStringLiteral("REMAINING"), QStringLiteral("RETRY AFTER"));
        m_headerDone = true;
        for (size_t i = 0; i < m_watched.size(); ++i) {
            if (const auto &u = usage[i])
                lines << row(time, m_watched[i].shown, QString::number(u->usedNow), QString::number(u->decision.limit),
                             QString::number(std::max<qint64>(0, u->decision.limit - u->usedNow)),
                             u->decision.retryAfterUs > 0 ? formatWaitUs(u->decision.retryAfterUs) : QStringLiteral("-"));
            else
                lines << row(time, m_watched[i].shown, QStringLiteral("?"), QStringLiteral("?"), QStringLiteral("?"),
                             QStringLiteral("not readable as %1").arg(m_watched[i].target.kind.label()));
        }
        if (m_tty && m_drawn > 0)
            out << "\x1b[" << m_drawn << "A"; // back over the last table: redrawn in place
        for (const QString &l : lines)
            out << (m_tty ? "\x1b[2K" : "") << l << '\n';
        m_drawn = int(lines.size());
        out.flush();
    }

private:
    QString row(const QString &time, const QString &key, const QString &used, const QString &limit, const QString &remaining,
                const QString &retry) const
    {
        return QStringLiteral("%1  %2  %3  %4  %5  %6")
            .arg(time, -12)
            .arg(key, -int(m_keyWidth))
            .arg(used, 8)
            .arg(limit, 8)
            .arg(remaining, 9)
            .arg(retry)
            .trimmed();
    }

    Cli &m_cli;
    const std::vector<Watched> &m_watched;
    bool m_tty;
    bool m_headerDone = false;
    int m_drawn = 0;
    qsizetype m_keyWidth = 3;
};

int runWatch(Cli &cli)
{
    QList<QByteArray> keys;
    for (const QString &k : cli.positional())
        keys << cli.keyBytes(k);
    if (keys.isEmpty())
        throw UsageError(QStringLiteral("give at least one KEY to watch"));
    const qint64 intervalUs = cli.durationOptionUs(QStringLiteral("interval"), 1000000);
    if (intervalUs < 10000 || intervalUs > 3600LL * 1000000)
        throw UsageError(
            QStringLiteral("--interval must be between 10ms and 1h, not %1").arg(cli.args().value(QStringLiteral("interval"))));
    const std::optional<qint64> count = cli.args().isSet(QStringLiteral("count"))
                                            ? std::optional<qint64>(cli.integerOption(QStringLiteral("count"), 1, 1000000000))
                                            : std::nullopt;
    const Flags flags = readFlags(cli);

    // The server's clock, read once: ticks run on this machine's clock plus that offset, so
    // that each tick is one round trip.
    Connection &c = cli.connection();
    QElapsedTimer sinceStart;
    sinceStart.start();
    const qint64 localAtStart = QDateTime::currentMSecsSinceEpoch() * 1000;
    const qint64 serverAtStart = serverTimeUs(c);
    const qint64 offsetUs = serverAtStart - (localAtStart + sinceStart.nsecsElapsed() / 2000);
    const std::vector<Watched> watched = resolve(cli, keys, flags, serverAtStart);
    std::vector<UsageTarget> targets;
    for (const Watched &w : watched)
        targets.push_back(w.target);

    Printer printer(cli, watched);
    InterruptStops interrupt;
    QElapsedTimer clock;
    clock.start();
    for (qint64 tick = 0; !count || tick < *count; ++tick) {
        if (tick > 0) {
            // Sleep to the next tick in short steps, so that Ctrl-C is seen at once.
            const qint64 dueNs = tick * intervalUs * 1000;
            while (!g_stop.load() && clock.nsecsElapsed() < dueNs)
                QThread::usleep(quint64(std::min<qint64>(20000, (dueNs - clock.nsecsElapsed()) / 1000 + 1)));
        }
        if (g_stop.load())
            break;
        const qint64 nowUs = QDateTime::currentMSecsSinceEpoch() * 1000 + offsetUs;
        std::vector<std::exception_ptr> errors;
        const auto usage = readUsage(c, targets, nowUs, &errors);
        printer.tick(nowUs, usage, errors);
    }
    return ExitOk;
}

} // namespace

void registerWatch(QList<Subcommand> &commands)
{
    commands.append({QStringLiteral("watch"),
                     QStringLiteral("watch KEY... [--interval D] [--count N] [--algo A --limit N --window D] [--cost C] [--score-unit U]"),
                     QStringLiteral("How full limiters are, read every interval until Ctrl-C (or --count readings): used, limit,\n"
                                    "remaining and retry-after per key, one pipelined round per reading (foreign logs: one more\n"
                                    "each). Writes nothing.\n"
                                    "Limits come from policies and overrides, or from the flags; on a terminal the table is\n"
                                    "redrawn in place, otherwise lines are appended; --json prints one object per key per reading."),
                     {kInterval, kCount, algoOption(), limitOption(), windowOption(), kCost, kScoreUnit},
                     false,
                     runWatch});
}

} // namespace ratescope::cli
