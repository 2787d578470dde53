// `ratescope-cli burst` and `boundary`: load tests against one limiter, audited as mutations.
#include "cli.h"
#include "commandfiles.h"
#include "limitoptions.h"

#include "admin/audit.h"
#include "load/boundaryscenario.h"
#include "load/burst.h"
#include "base/duration.h"
#include "base/errors.h"
#include "keys/inspector.h"
#include "keys/keyscanner.h"
#include "base/keytext.h"
#include "admin/policy.h"

#include <QDateTime>
#include <QRandomGenerator>
#include <QRegularExpression>

#include <atomic>
#include <csignal>
#include <optional>
#include <unistd.h>

namespace ratescope::cli {

namespace {

const QCommandLineOption kAlgo = algoOption();
const QCommandLineOption kLimit = limitOption();
const QCommandLineOption kWindow = windowOption();
const QCommandLineOption kCost(QStringLiteral("cost"), QStringLiteral("Cost of every request (default 1, at most the limit)."),
                               QStringLiteral("C"));
const QCommandLineOption kRequests(QStringLiteral("requests"),
                                   QStringLiteral("Requests to send (at least one of --requests and --duration)."), QStringLiteral("N"));
const QCommandLineOption kDuration(QStringLiteral("duration"),
                                   QStringLiteral("Stop after this long (with --requests: whichever comes first)."), QStringLiteral("D"));
const QCommandLineOption kRate(QStringLiteral("rate"),
                               QStringLiteral("Requests per second over all connections, open loop (default: as fast as possible)."),
                               QStringLiteral("R"));
const QCommandLineOption kConnections(QStringLiteral("connections"), QStringLiteral("Connections, each on its own thread (default 1)."),
                                      QStringLiteral("C"));
const QCommandLineOption kPipeline(QStringLiteral("pipeline"), QStringLiteral("Requests per round trip on each connection (default 1)."),
                                   QStringLiteral("P"));
const QCommandLineOption
    kTimeline(QStringLiteral("timeline"),
              QStringLiteral("Write allowed/denied/errors per 100 ms as CSV to FILE (- for standard output), whole or not at all."),
              QStringLiteral("FILE"));
const QCommandLineOption
    kDecisions(QStringLiteral("decisions"),
               QStringLiteral("Write every request sent as CSV time_us,sent_us,key,outcome,used,remaining,retry_after_us,"
                              "reset_after_us to FILE (- for standard output), whole or not at all."),
               QStringLiteral("FILE"));
const QCommandLineOption kKey(QStringLiteral("key"),
                              QStringLiteral("Key to use; it must not exist (default: a new key under the namespace)."),
                              QStringLiteral("K"));

constexpr int kHistogramBars = 10;
constexpr int kHistogramWidth = 40;

LimitSpec specFromOptions(const Cli &cli, bool withCost)
{
    for (const QString &required : {QStringLiteral("algo"), QStringLiteral("limit"), QStringLiteral("window")})
        if (!cli.args().isSet(required))
            throw UsageError(QStringLiteral("--%1 is required").arg(required));
    LimitSpec spec;
    spec.algorithm = parseAlgorithm(cli.args().value(QStringLiteral("algo")));
    spec.limit = cli.integerOption(QStringLiteral("limit"), 1, kMaxLimit);
    spec.windowUs = cli.durationOptionUs(QStringLiteral("window"));
    spec.buckets = subBucketsFrom(cli, spec.algorithm);
    spec.cost = withCost ? cli.integerOption(QStringLiteral("cost"), 1, kMaxLimit, 1) : 1;
    spec.validate();
    return spec;
}

double rateOption(const Cli &cli)
{
    if (!cli.args().isSet(QStringLiteral("rate")))
        return 0;
    static const QRegularExpression number(QRegularExpression::anchoredPattern(QStringLiteral("[0-9]{1,12}(\\.[0-9]{1,12})?")));
    bool ok = number.match(cli.args().value(QStringLiteral("rate"))).hasMatch(); // no spaces, signs, exponents
    const double rate = ok ? cli.args().value(QStringLiteral("rate")).toDouble(&ok) : 0;
    if (!ok || !(rate > 0))
        throw UsageError(QStringLiteral("--rate must be a positive number of requests per second, not '%1'")
                             .arg(cli.args().value(QStringLiteral("rate"))));
    return rate;
}

BurstConfig burstConfig(const Cli &cli)
{
    const QStringList p = cli.positional();
    if (p.size() != 1)
        throw UsageError(QStringLiteral("expected exactly one KEY"));
    BurstConfig c;
    c.key = cli.keyBytes(p[0]);
    c.spec = specFromOptions(cli, true);
    if (cli.args().isSet(QStringLiteral("requests")))
        c.requests = cli.integerOption(QStringLiteral("requests"), 1, kMaxLimit);
    if (cli.args().isSet(QStringLiteral("duration")))
        c.durationUs = cli.durationOptionUs(QStringLiteral("duration"));
    if (!c.requests && !c.durationUs)
        throw UsageError(QStringLiteral("--requests or --duration is required"));
    c.rate = rateOption(cli);
    c.connections = int(cli.integerOption(QStringLiteral("connections"), 1, BurstConfig::kMaxConnections, 1));
    c.pipeline = int(cli.integerOption(QStringLiteral("pipeline"), 1, BurstConfig::kMaxPipeline, 1));
    if (cli.args().isSet(QStringLiteral("shards"))) {
        c.shards = int(cli.integerOption(QStringLiteral("shards"), 2, BurstConfig::kMaxShards));
        const QString by = cli.args().value(QStringLiteral("shard-by"));
        if (!by.isEmpty() && by != QLatin1String("hash") && by != QLatin1String("round-robin"))
            throw UsageError(QStringLiteral("--shard-by must be hash or round-robin, not '%1'").arg(by));
        c.shardBy = by == QLatin1String("round-robin") ? BurstConfig::ShardRouting::RoundRobin : BurstConfig::ShardRouting::Hash;
        c.shardFrom = int(cli.integerOption(QStringLiteral("shard-from"), 0, 1, 0));
    } else if (cli.args().isSet(QStringLiteral("shard-by")) || cli.args().isSet(QStringLiteral("shard-from"))) {
        throw UsageError(QStringLiteral("--shard-by and --shard-from go with --shards N"));
    }
    c.validate();
    return c;
}

// Ctrl-C ends the burst early but still prints the summary; a second one kills as usual.
std::atomic<BurstEngine *> g_interruptible{nullptr};

class InterruptCancels {
public:
    explicit InterruptCancels(BurstEngine &engine)
    {
        g_interruptible.store(&engine);
        struct sigaction sa = {};
        sa.sa_handler = [](int) {
            if (BurstEngine *e = g_interruptible.load())
                e->cancel(); // an atomic store: safe in a signal handler
        };
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGINT, &sa, &m_previous);
    }
    ~InterruptCancels()
    {
        ::sigaction(SIGINT, &m_previous, nullptr);
        g_interruptible.store(nullptr);
    }
    InterruptCancels(const InterruptCancels &) = delete;
    InterruptCancels &operator=(const InterruptCancels &) = delete;

private:
    struct sigaction m_previous = {};
};

QString us(qint64 v)
{
    return formatDurationUs(v);
}

void printHistogram(Cli &cli, const LatencyHistogram &latency)
{
    const auto bars = latency.bars(kHistogramBars);
    qint64 most = 0;
    for (const auto &b : bars)
        most = std::max(most, b.count);
    if (!most)
        return;
    cli.out() << "\nlatency distribution\n";
    for (const auto &b : bars) {
        const int width = int((b.count * kHistogramWidth + most - 1) / most);
        cli.out() << QStringLiteral("  %1 .. %2  %3 %4\n")
                         .arg(us(b.lowUs), 9)
                         .arg(us(b.highUs), -9)
                         .arg(QString(width, QLatin1Char('#')), -kHistogramWidth)
                         .arg(b.count);
    }
    cli.out().flush();
}

void printSummary(Cli &cli, const BurstSummary &s)
{
    if (cli.json()) {
        cli.printJson(s.toJson());
        return;
    }
    const LatencyHistogram &l = s.latency;
    QList<QPair<QString, QString>> fields = {
        {QStringLiteral("sent"), QString::number(s.sent)},
        {QStringLiteral("allowed"), QString::number(s.allowed)},
        {QStringLiteral("denied"), QString::number(s.denied)},
        {QStringLiteral("errors"), QString::number(s.errors)},
        {QStringLiteral("unknown"),
         s.unknown ? QStringLiteral("%1 (sent, no reply: outcome unknown, may have been admitted)").arg(s.unknown) : QStringLiteral("0")},
        {QStringLiteral("not_sent"),
         s.notSent ? QStringLiteral("%1 (the connection was down: never written)").arg(s.notSent) : QStringLiteral("0")},
        {QStringLiteral("elapsed"), us(s.elapsedUs)},
        {QStringLiteral("throughput"), QStringLiteral("%1 decisions/s").arg(qint64(std::llround(s.throughput())))},
        {QStringLiteral("latency"),
         QStringLiteral("p50 %1  p90 %2  p99 %3  p99.9 %4  max %5")
             .arg(us(l.percentile(50)), us(l.percentile(90)), us(l.percentile(99)), us(l.percentile(99.9)), us(l.max()))},
    };
    if (!s.firstError.isEmpty())
        fields.append({QStringLiteral("first_error"), s.firstError});
    if (s.cancelled)
        fields.append({QStringLiteral("cancelled"), QStringLiteral("yes (interrupted)")});
    if (s.gaveUp)
        fields.append({QStringLiteral("gave up"), QStringLiteral("yes (the server could not be reached again for 3 s)")});
    cli.printFields(fields);
    if (!s.shards.empty()) {
        // Each shard: its share of the limit, what it was sent and admitted. The sum can fall
        // short of an unsharded limiter when the requests fall unevenly (skew above 1).
        QTextStream &out = cli.out();
        qint64 most = 0, total = 0, allowed = 0;
        out << '\n'
            << QStringLiteral("SHARD").leftJustified(40) << QStringLiteral("LIMIT").rightJustified(10)
            << QStringLiteral("SENT").rightJustified(10) << QStringLiteral("ALLOWED").rightJustified(10)
            << QStringLiteral("DENIED").rightJustified(10) << '\n';
        for (const BurstShard &sh : s.shards) {
            out << displayKey(sh.key).leftJustified(40) << QString::number(sh.limit).rightJustified(10)
                << QString::number(sh.sent).rightJustified(10) << QString::number(sh.allowed).rightJustified(10)
                << QString::number(sh.denied).rightJustified(10) << '\n';
            most = std::max(most, sh.sent);
            total += sh.sent;
            allowed += sh.allowed;
        }
        out << "the group admitted " << allowed << "; skew "
            << QString::number(total ? double(most) * double(s.shards.size()) / double(total) : 0, 'f', 2)
            << " (the busiest shard's requests against an even share)\n";
        out.flush();
    }
    printHistogram(cli, l);
}

// After the burst: the timeline, whole (its target was checked and opened before anything was
// sent). Returns the exit code (the summary is out already, so a failure is reported, not thrown).
int writeTimeline(Cli &cli, OutputTarget &target, const BurstSummary &s)
{
    if (target.open().write(timelineCsv(s.timeline)) >= 0 && target.commit())
        return ExitOk;
    cli.err() << "ratescope-cli: " << target.describe() << " was not written: " << target.errorString() << '\n';
    cli.err().flush();
    target.discard();
    return ExitUsage;
}

// Returns the exit code the audit trail's failure calls for (0 when written).
int audit(Cli &cli, const AuditEntry &entry)
{
    try {
        cli.auditLog().append(entry, cli.operatorName());
        return ExitOk;
    } catch (const Error &e) {
        cli.err() << "ratescope-cli: the audit entry was not written: " << e.message() << '\n';
        cli.err().flush();
        return dynamic_cast<const ConnectionError *>(&e) ? ExitConnection : ExitServer;
    }
}

// Connection trouble first (the server died or stalled), then the server's own refusal.
int exitCodeFor(const BurstSummary &s)
{
    if (s.connectionErrors > 0 || s.unknown > 0 || s.notSent > 0)
        return ExitConnection;
    if (s.errors > 0)
        return s.firstError.startsWith(QLatin1String("WRONGTYPE")) ? ExitUsage : ExitServer;
    return ExitOk;
}

void showProgress(Cli &cli, const BurstProgress &p)
{
    cli.err() << QStringLiteral("\r%1  sent %2  allowed %3  denied %4  errors %5  unknown %6 ")
                     .arg(us((p.elapsedUs + 50000) / 100000 * 100000), 6)
                     .arg(p.sent)
                     .arg(p.allowed)
                     .arg(p.denied)
                     .arg(p.errors)
                     .arg(p.unknown);
    cli.err().flush();
}

// The record of every request sent (--decisions), written as the burst runs: one CSV row per
// request once it has ended, in the order they ended.
class DecisionsWriter {
public:
    DecisionsWriter(OutputTarget &target, const BurstConfig &config)
        : m_target(target)
    {
        for (int i = 0; i < std::max(config.shards, 1); ++i)
            m_keys.push_back(csvField(config.shards > 1 ? config.shardKey(i) : config.key));
        m_out = &target.open();
        write("time_us,sent_us,key,outcome,used,remaining,retry_after_us,reset_after_us\n");
    }

    void add(std::span<const BurstDecision> decisions)
    {
        QByteArray chunk;
        for (const BurstDecision &d : decisions) {
            chunk += QByteArray::number(d.timeUs) + ',' + QByteArray::number(d.sentUs) + ',' + m_keys[size_t(d.shard)] + ',' +
                     burstOutcomeName(d.outcome).toLatin1();
            if (d.outcome == BurstDecision::Outcome::Allowed || d.outcome == BurstDecision::Outcome::Denied)
                chunk += ',' + QByteArray::number(d.used) + ',' + QByteArray::number(d.remaining) + ',' +
                         QByteArray::number(d.retryAfterUs) + ',' + QByteArray::number(d.resetAfterUs) + '\n';
            else
                chunk += ",,,,\n"; // no decision came back: nothing to say of the limiter
        }
        write(chunk);
    }

    // After the burst (the summary is out already, so a failure is reported, not thrown).
    // Returns the exit code.
    int finish(Cli &cli)
    {
        const QString why = m_failed ? m_out->errorString() : QString();
        if (!m_failed && m_target.commit())
            return ExitOk;
        cli.err() << "ratescope-cli: " << m_target.describe() << " was not written: " << (m_failed ? why : m_target.errorString())
                  << '\n';
        cli.err().flush();
        m_target.discard();
        return ExitUsage;
    }

private:
    void write(const QByteArray &bytes)
    {
        if (!m_failed && m_out->write(bytes) < 0)
            m_failed = true; // the rest is not written; the burst goes on, and says so after
    }

    OutputTarget &m_target;
    QIODevice *m_out = nullptr;
    std::vector<QByteArray> m_keys; // each shard's key as a CSV field
    bool m_failed = false;
};

int runBurst(Cli &cli)
{
    const BurstConfig config = burstConfig(cli);
    // Checked and opened before anything is sent: a timeline or a record of decisions that
    // cannot be written fails the command then, not after a burst that changed the limiter.
    std::unique_ptr<OutputTarget> timeline, decisionsTarget;
    if (cli.args().isSet(QStringLiteral("timeline")))
        timeline = std::make_unique<OutputTarget>(QStringLiteral("timeline"), cli.bytes(cli.args().value(QStringLiteral("timeline"))));
    if (cli.args().isSet(QStringLiteral("decisions"))) {
        decisionsTarget =
            std::make_unique<OutputTarget>(QStringLiteral("decisions"), cli.bytes(cli.args().value(QStringLiteral("decisions"))));
        if (timeline && timeline->isStandardOutput() && decisionsTarget->isStandardOutput())
            throw UsageError(QStringLiteral("--timeline and --decisions cannot both be standard output"));
        if (timeline && cli.args().value(QStringLiteral("timeline")) == cli.args().value(QStringLiteral("decisions")))
            throw UsageError(QStringLiteral("--timeline and --decisions name the same file"));
    }
    if ((timeline && timeline->isStandardOutput()) || (decisionsTarget && decisionsTarget->isStandardOutput()))
        cli.reportOnStandardError();
    if (timeline)
        timeline->open();
    std::optional<DecisionsWriter> decisions;
    if (decisionsTarget)
        decisions.emplace(*decisionsTarget, config);
    {
        // Ratescope's records and another service's limiter are not ours to write: refused
        // before anything is sent.
        // Every shard: any of them may be a record, another library's or beside counter windows.
        for (int i = 0; i < std::max(config.shards, 1); ++i) {
            const QByteArray key = config.shards > 1 ? config.shardKey(i) : config.key;
            // Read once for every shard; burst takes every limit from its flags, so the records
            // that could not be read are no concern of its (no warning).
            const auto policy = matchPolicy(cli.policiesOnce(false), key);
            const QString refusal = writeRefusal(cli.connection(), cli.ns(), key, policy ? &*policy : nullptr, config.spec);
            if (!refusal.isEmpty())
                throw UsageError(refusal);
        }
    }
    cli.auditLog().ensureWritable(); // no burst without its record
    BurstEngine engine(cli.connectionOptions(), config);
    const bool live = !cli.json() && ::isatty(STDERR_FILENO);
    if (live)
        engine.setProgressCallback([&cli](const BurstProgress &p) { showProgress(cli, p); });
    if (decisions)
        engine.setDecisionCallback([&decisions](std::span<const BurstDecision> ds) { decisions->add(ds); });
    BurstSummary summary;
    {
        InterruptCancels interrupt(engine);
        summary = engine.run(); // throws only when nothing was sent
    }
    if (live)
        cli.err() << '\n';
    printSummary(cli, summary);
    const int written = timeline ? writeTimeline(cli, *timeline, summary) : ExitOk;
    const int recorded = decisions ? decisions->finish(cli) : ExitOk;
    const int audited = audit(cli, burstAuditEntry(config, summary));
    const int code = exitCodeFor(summary);
    if (code != ExitOk) {
        cli.err() << "ratescope-cli: " << summary.errors << " of " << summary.sent << " requests sent were refused, " << summary.unknown
                  << " got no reply (outcome unknown: they may have been admitted), " << summary.notSent
                  << " could not be sent; the first problem: " << summary.firstError << '\n';
        cli.err().flush();
    }
    for (int c : {code, audited, written, recorded})
        if (c != ExitOk)
            return c;
    return ExitOk;
}

QByteArray boundaryKey(const Cli &cli, const LimitSpec &spec)
{
    if (cli.args().isSet(QStringLiteral("key"))) {
        return cli.keyBytes(cli.args().value(QStringLiteral("key")));
    }
    const QString suffix = QString::number(QRandomGenerator::global()->generate64(), 16);
    return (cli.ns().text() + QStringLiteral("boundary:") + algorithmName(spec.algorithm) + QLatin1Char(':') + suffix).toUtf8();
}

void printBoundary(Cli &cli, const QByteArray &key, const LimitSpec &spec, const BoundaryResult &r)
{
    if (cli.json()) {
        QJsonObject o = r.toJson();
        insertBytes(o, QStringLiteral("key"), key);
        o.insert(QStringLiteral("algo"), algorithmName(spec.algorithm));
        o.insert(QStringLiteral("limit"), spec.limit);
        o.insert(QStringLiteral("window_us"), spec.windowUs);
        cli.printJson(o);
        return;
    }
    cli.printFields({
        {QStringLiteral("key"), displayKey(key)},
        {QStringLiteral("admitted"), QStringLiteral("%1 of %2 requests (%3x the limit of %4)")
                                         .arg(r.admitted())
                                         .arg(2 * r.requestsPerBurst)
                                         .arg(double(r.admitted()) / double(spec.limit), 0, 'f', 2)
                                         .arg(spec.limit)},
        {QStringLiteral("before"),
         QStringLiteral("%1 allowed, the last reply %2 before the boundary").arg(r.firstAllowed).arg(us(r.boundaryUs - r.firstEndUs))},
        {QStringLiteral("after"),
         QStringLiteral("%1 allowed, starting %2 after the boundary").arg(r.secondAllowed).arg(us(r.secondStartUs - r.boundaryUs))},
        {QStringLiteral("span"), QStringLiteral("%1 in a %2 window").arg(us(r.secondEndUs - r.firstStartUs), us(spec.windowUs))},
    });
}

int runBoundary(Cli &cli)
{
    if (!cli.positional().isEmpty())
        throw UsageError(QStringLiteral("boundary takes no KEY argument (use --key K)"));
    const LimitSpec spec = specFromOptions(cli, false);
    const QByteArray key = boundaryKey(cli, spec);
    {
        // A --key is refused where a limiter is not ours to write, as check and burst refuse it.
        const auto policy = matchPolicy(cli.policiesOnce(false), key); // limits from the flags: no warning
        const QString refusal = writeRefusal(cli.connection(), cli.ns(), key, policy ? &*policy : nullptr, spec);
        if (!refusal.isEmpty())
            throw UsageError(refusal);
    }
    const QJsonObject before = boundaryAuditParameters(spec);
    cli.auditLog().ensureWritable(); // no run without its record
    BoundaryScenario scenario(cli.connection(), key, spec);
    scenario.onWait = [&cli](qint64 waitUs, qint64 boundaryUs) {
        if (waitUs >= 1000000) // a wait worth a word: how long, and for which boundary
            cli.err() << "waiting " << formatWaitUs(waitUs) << " for the window boundary at "
                      << QDateTime::fromMSecsSinceEpoch(boundaryUs / 1000, Qt::UTC).toString(Qt::ISODateWithMs) << '\n';
        cli.err().flush();
    };
    BoundaryResult result;
    try {
        result = scenario.run();
    } catch (const Error &e) {
        if (scenario.requestsSent() > 0) // it mutated before failing: audit that too
            audit(cli, burstAuditEntry(key, before, {{QStringLiteral("error"), e.message()}}, scenario.requestsSent()));
        throw;
    }
    printBoundary(cli, key, spec, result);
    return audit(cli, burstAuditEntry(key, before, result.toJson(), scenario.requestsSent()));
}

} // namespace

void registerBursts(QList<Subcommand> &commands)
{
    commands.append(
        {QStringLiteral("burst"),
         QStringLiteral("burst KEY --algo A --limit N --window D --requests N [--duration D] [--rate R] "
                        "[--connections C] [--pipeline P] [--cost C] [--timeline FILE] [--decisions FILE] "
                        "[--shards N [--shard-by hash|round-robin] [--shard-from 0|1]]"),
         QStringLiteral("Load test: fire requests at the limiter at KEY (or its N shards); summary with latency percentiles."),
         {kAlgo, kLimit, kWindow, subBucketsOption(), kCost, kRequests, kDuration, kRate, kConnections, kPipeline, kTimeline,
          kDecisions, shardsOption(), shardByOption(), shardFromOption()},
         true,
         runBurst});
    commands.append({QStringLiteral("boundary"),
                     QStringLiteral("boundary --algo A --limit N --window D [--key K]"),
                     QStringLiteral("Bursts of `limit` just before and just after a window "
                                    "boundary; reports the admitted total."),
                     {kAlgo, kLimit, kWindow, subBucketsOption(), kKey},
                     true,
                     runBoundary});
}

} // namespace ratescope::cli
