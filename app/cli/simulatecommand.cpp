// `ratescope-cli simulate`: what if — a trace replayed through limits on a private sandbox
// server (core/simulator); the inspected server is only read, for --from-keys.
#include "cli.h"
#include "commandfiles.h"
#include "limitoptions.h"

#include "base/duration.h"
#include "base/errors.h"
#include "base/keytext.h"
#include "load/simulator.h"

#include <QFile>
#include <QJsonArray>

#include <atomic>
#include <csignal>
#include <unistd.h>

namespace ratescope::cli {

namespace {

const QCommandLineOption kTrace(QStringLiteral("trace"),
                                QStringLiteral("Replay a CSV trace: time,key[,cost] rows (or a burst --timeline file)."),
                                QStringLiteral("FILE"));
const QCommandLineOption kFromKeys(QStringLiteral("from-keys"),
                                   QStringLiteral("Replay the sorted-set logs of the keys matching GLOB on the server (read only)."),
                                   QStringLiteral("GLOB"));
const QCommandLineOption kCost(QStringLiteral("cost"), QStringLiteral("Cost of a request without a cost in the trace (default 1)."),
                               QStringLiteral("C"));
const QCommandLineOption kTimeUnit(QStringLiteral("time-unit"),
                                   QStringLiteral("Times in the trace: us (default), ms, or iso (ISO 8601; auto-detected as well)."),
                                   QStringLiteral("U"));
const QCommandLineOption
    kCompare(QStringLiteral("compare"),
             QStringLiteral("Also replay through ALGO:LIMIT/WINDOW, e.g. token-bucket:40/10s; sliding-buckets:300/1m/12 with its "
                            "sub-buckets (repeatable)."),
             QStringLiteral("SPEC"));
const QCommandLineOption
    kDecisions(QStringLiteral("decisions"),
               QStringLiteral("Write every decision as CSV time_us,key,allowed,used,remaining,retry_after_us to FILE (- for standard "
                              "output), whole or not at all."),
               QStringLiteral("FILE"));
const QCommandLineOption kPerKey(QStringLiteral("per-key"), QStringLiteral("Also report each key (JSON: one object per key)."));
const QCommandLineOption kTraceKey(QStringLiteral("key"), QStringLiteral("The key a burst timeline is replayed on (default burst)."),
                                   QStringLiteral("K"));

QJsonObject specJson(const SimSpecResult &r, bool timeline)
{
    QJsonObject o{{QStringLiteral("algo"), algorithmName(r.spec.algorithm)},
                  {QStringLiteral("limit"), r.spec.limit},
                  {QStringLiteral("window_us"), r.spec.windowUs},
                  {QStringLiteral("cost"), r.spec.cost},
                  {QStringLiteral("requests"), r.requests},
                  {QStringLiteral("allowed"), r.allowed},
                  {QStringLiteral("denied"), r.denied},
                  {QStringLiteral("keys"), r.keys},
                  {QStringLiteral("keys_denied"), r.keysDenied}};
    if (r.spec.algorithm == Algorithm::SlidingBuckets)
        o.insert(QStringLiteral("buckets"), r.spec.buckets);
    if (timeline) {
        QJsonArray bins;
        for (const SimBin &b : r.timeline)
            bins.append(QJsonArray{b.fromUs, b.allowed, b.denied});
        o.insert(QStringLiteral("timeline"), bins);
    }
    return o;
}

QJsonObject keyJson(const SimKeyResult &k)
{
    QJsonObject o{{QStringLiteral("requests"), k.requests},
                  {QStringLiteral("allowed"), k.allowed},
                  {QStringLiteral("denied"), k.denied},
                  {QStringLiteral("longest_denied_run"), k.longestDeniedRun},
                  {QStringLiteral("longest_denied_us"), k.longestDeniedUs}};
    o.insert(QStringLiteral("first_denial_us"), k.firstDenialUs ? QJsonValue(*k.firstDenialUs) : QJsonValue());
    return o;
}

std::vector<LimitSpec> specsFromOptions(const Cli &cli)
{
    for (const QString &required : {QStringLiteral("algo"), QStringLiteral("limit"), QStringLiteral("window")})
        if (!cli.args().isSet(required))
            throw UsageError(QStringLiteral("--%1 is required").arg(required));
    LimitSpec base;
    base.algorithm = parseAlgorithm(cli.args().value(QStringLiteral("algo")));
    base.limit = cli.integerOption(QStringLiteral("limit"), 1, kMaxLimit);
    base.windowUs = cli.durationOptionUs(QStringLiteral("window"));
    base.buckets = subBucketsFrom(cli, base.algorithm);
    base.cost = cli.integerOption(QStringLiteral("cost"), 1, kMaxLimit, 1);
    base.validate();
    std::vector<LimitSpec> specs{base};
    for (const QString &c : cli.args().values(QStringLiteral("compare")))
        specs.push_back(parseCompareSpec(c, base.cost));
    return specs;
}

bool isBurstTimeline(QFile &trace)
{
    QByteArray head = trace.peek(64); // peeked: the reader reads it again
    if (head.startsWith("\xEF\xBB\xBF")) // a byte order mark, which the reader skips
        head.remove(0, 3);
    return head.startsWith("elapsed_ms,");
}

int runSimulate(Cli &cli)
{
    if (!cli.positional().isEmpty())
        throw UsageError(QStringLiteral("simulate takes no KEY argument (use --trace FILE or --from-keys GLOB)"));
    const bool fromFile = cli.args().isSet(QStringLiteral("trace"));
    const bool fromKeys = cli.args().isSet(QStringLiteral("from-keys"));
    if (fromFile == fromKeys)
        throw UsageError(QStringLiteral("give exactly one of --trace FILE and --from-keys GLOB"));
    if (cli.args().isSet(QStringLiteral("base64-keys")) && !cli.args().isSet(QStringLiteral("key")))
        throw UsageError(QStringLiteral("--base64-keys goes with --key (simulate takes no other KEY)"));
    if (fromKeys && cli.args().isSet(QStringLiteral("key")))
        throw UsageError(QStringLiteral("--key names the key a burst timeline is replayed on; --from-keys reads the keys themselves"));
    const std::vector<LimitSpec> specs = specsFromOptions(cli);
    const TraceTimeUnit unit = cli.args().isSet(QStringLiteral("time-unit"))
                                   ? parseTraceTimeUnit(cli.args().value(QStringLiteral("time-unit")))
                                   : TraceTimeUnit::Auto;
    std::unique_ptr<OutputTarget> decisionsTarget;
    if (cli.args().isSet(QStringLiteral("decisions"))) { // checked before anything runs or is read
        decisionsTarget =
            std::make_unique<OutputTarget>(QStringLiteral("decisions"), cli.bytes(cli.args().value(QStringLiteral("decisions"))));
        if (decisionsTarget->isStandardOutput())
            cli.reportOnStandardError();
    }

    qint64 smallestLimit = kMaxLimit;
    for (const LimitSpec &s : specs)
        smallestLimit = std::min(smallestLimit, s.limit);
    std::unique_ptr<TraceReader> trace;
    if (fromKeys) {
        const QByteArray glob = cli.bytes(cli.args().value(QStringLiteral("from-keys")));
        if (glob.isEmpty())
            throw UsageError(QStringLiteral("--from-keys needs a glob such as 'api:*'"));
        trace = openLogKeysTrace(cli.connection(), glob);
    } else {
        InputFile file(QStringLiteral("trace"), cli.bytes(cli.args().value(QStringLiteral("trace"))));
        if (decisionsTarget)
            decisionsTarget->requireDistinctFrom(file); // never the trace overwritten with its decisions
        if (isBurstTimeline(file.file())) {
            const QByteArray key = cli.args().isSet(QStringLiteral("key")) ? cli.keyBytes(cli.args().value(QStringLiteral("key")))
                                                                           : QByteArrayLiteral("burst");
            trace = openBurstTimelineTrace(file.file(), file.name(), key, 0);
        } else {
            if (cli.args().isSet(QStringLiteral("key")))
                throw UsageError(QStringLiteral("--key names the key a burst timeline is replayed on; %1 is a CSV trace, whose rows name "
                                                "their keys")
                                     .arg(file.name()));
            trace = openCsvTrace(file.file(), file.name(), unit, smallestLimit); // the whole file is checked here
        }
    }
    for (const QString &warning : trace->warnings())
        cli.err() << "ratescope-cli: warning: " << escapeControls(warning) << '\n';
    cli.err().flush();
    QIODevice *decisions = nullptr;
    if (decisionsTarget) {
        decisions = &decisionsTarget->open();
        decisions->write(specs.size() > 1 ? "time_us,key,allowed,used,remaining,retry_after_us,spec\n"
                                          : "time_us,key,allowed,used,remaining,retry_after_us\n");
    }

    const bool perKey = cli.args().isSet(QStringLiteral("per-key"));
    const bool live = !cli.json() && ::isatty(STDERR_FILENO);
    SimOptions options;
    options.specs = specs;
    qint64 decided = 0;
    bool writeFailed = false;
    options.onDecision = [&](int spec, const TraceRequest &r, const Decision &d) {
        ++decided;
        if (!decisions || writeFailed)
            return;
        QByteArray line = QByteArray::number(r.timeUs) + ',' + csvField(r.key) + ',' + (d.allowed ? "1," : "0,") +
                          QByteArray::number(d.used) + ',' + QByteArray::number(d.remaining) + ',' + QByteArray::number(d.retryAfterUs);
        if (specs.size() > 1)
            line += ',' + QByteArray::number(spec);
        line += '\n';
        if (decisions->write(line) < 0)
            writeFailed = true;
    };
    QJsonArray keyParts; // the per-spec results of the key being closed
    const int specCount = int(specs.size());
    if (perKey)
        options.onKey = [&](int spec, const SimKeyResult &k) {
            if (spec == 0)
                keyParts = QJsonArray();
            keyParts.append(keyJson(k));
            if (spec != specCount - 1)
                return;
            if (cli.json()) {
                QJsonObject o = keyParts[0].toObject();
                insertBytes(o, QStringLiteral("key"), k.key);
                if (specCount > 1) {
                    QJsonArray compare = keyParts;
                    compare.removeFirst();
                    o.insert(QStringLiteral("compare"), compare);
                }
                cli.printJson(o);
                return;
            }
            QString line = QStringLiteral("%1  %2 requests").arg(displayKey(k.key)).arg(k.requests);
            for (int i = 0; i < specCount; ++i) {
                const QJsonObject p = keyParts[i].toObject();
                line += QStringLiteral("  [%1] denied %2").arg(i).arg(p.value(QStringLiteral("denied")).toInteger());
                if (!p.value(QStringLiteral("first_denial_us")).isNull())
                    line += QStringLiteral(" from %1").arg(p.value(QStringLiteral("first_denial_us")).toInteger());
            }
            cli.out() << line << '\n';
        };
    const InterruptFlag *interrupt = nullptr; // set while the replay runs
    options.onProgress = [&](double progress) {
        if (live) {
            cli.err() << QStringLiteral("\rreplaying %1 %  %2 decisions ").arg(int(progress * 100), 3).arg(decided);
            cli.err().flush();
        }
        return !(interrupt && interrupt->raised());
    };

    SimResult result;
    {
        InterruptFlag scoped;
        interrupt = &scoped;
        result = simulate(*trace, options);
        interrupt = nullptr;
    }
    if (live)
        cli.err() << '\n';
    cli.out().flush();

    int code = ExitOk;
    if (decisionsTarget && result.cancelled) {
        decisionsTarget->discard(); // no partial file: a regular file keeps what it held
        cli.err() << "ratescope-cli: " << decisionsTarget->describe() << " was not written (interrupted)\n";
    } else if (decisionsTarget) {
        const QString why = writeFailed ? decisions->errorString() : QString();
        if (writeFailed) // what was written stays in the temporary file, which goes
            decisionsTarget->discard();
        if (writeFailed || !decisionsTarget->commit()) {
            cli.err() << "ratescope-cli: " << decisionsTarget->describe()
                      << " was not written: " << (writeFailed ? why : decisionsTarget->errorString()) << '\n';
            code = ExitUsage;
        }
    }
    cli.err().flush();
    if (cli.json()) {
        QJsonObject o = specJson(result.specs[0], true);
        o.insert(QStringLiteral("trace"), result.traceDescription);
        o.insert(QStringLiteral("admitted_only"), result.admittedOnly);
        o.insert(QStringLiteral("first_us"), result.firstUs);
        o.insert(QStringLiteral("last_us"), result.lastUs);
        o.insert(QStringLiteral("bin_us"), result.binUs);
        o.insert(QStringLiteral("cancelled"), result.cancelled);
        QJsonArray compare;
        for (size_t i = 1; i < result.specs.size(); ++i)
            compare.append(specJson(result.specs[i], true));
        o.insert(QStringLiteral("compare"), compare);
        cli.printJson(o);
    } else {
        QList<QPair<QString, QString>> fields;
        QString trace = result.traceDescription;
        if (result.lastUs > result.firstUs)
            trace += QStringLiteral(", over %1").arg(formatDurationUs(result.lastUs - result.firstUs));
        fields.append({QStringLiteral("trace"), trace});
        for (size_t i = 0; i < result.specs.size(); ++i)
            fields.append({i == 0 ? QStringLiteral("now") : QStringLiteral("compare %1").arg(i),
                           QStringLiteral("%1: %2").arg(describeSpec(result.specs[i].spec), simOutcomeText(result.specs[i]))});
        if (result.admittedOnly)
            fields.append({QStringLiteral("note"), QStringLiteral("admitted requests only: the logs keep what was admitted, so the real "
                                                                  "traffic was at least this and the denials are a lower bound")});
        if (result.cancelled)
            fields.append({QStringLiteral("incomplete"), QStringLiteral("interrupted: the figures cover the requests replayed so far")});
        cli.printFields(fields);
    }
    if (result.cancelled)
        return kExitInterrupted;
    return code;
}

} // namespace

void registerSimulate(QList<Subcommand> &commands)
{
    commands.append({QStringLiteral("simulate"),
                     QStringLiteral("simulate (--trace FILE | --from-keys GLOB) --algo A --limit N --window D [--cost C] "
                                    "[--time-unit us|ms|iso] [--compare A:N/D[/B] ...] [--per-key] [--decisions FILE] [--key K]"),
                     QStringLiteral("What if: replay a trace through limits on a private sandbox server; nothing is written to yours."),
                     {kTrace, kFromKeys, algoOption(), limitOption(), windowOption(), subBucketsOption(), kCost, kTimeUnit, kCompare,
                      kPerKey, kDecisions, kTraceKey},
                     false,
                     runSimulate,
                     {QStringLiteral("compare")}});
}

} // namespace ratescope::cli
