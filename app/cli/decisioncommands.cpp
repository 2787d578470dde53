// `ratescope-cli check` and `peek`: one limiter decision, consuming or not.
#include "cli.h"

#include "duration.h"
#include "errors.h"
#include "limiter.h"

namespace ratescope::cli {

namespace {

const QCommandLineOption kAlgo(QStringLiteral("algo"), QStringLiteral("Algorithm: %1.").arg(algorithmNames().join(QStringLiteral(", "))),
                               QStringLiteral("A"));
const QCommandLineOption kLimit(QStringLiteral("limit"), QStringLiteral("Units of cost allowed per window (1..10^12)."), QStringLiteral("N"));
const QCommandLineOption kWindow(QStringLiteral("window"), QStringLiteral("Window length (1ms..366d), e.g. 60s."), QStringLiteral("D"));
const QCommandLineOption kCost(QStringLiteral("cost"), QStringLiteral("Cost of this request (default 1, at most the limit)."), QStringLiteral("C"));
const QCommandLineOption kNow(QStringLiteral("now-us"), QStringLiteral("Decide at this time (microseconds since the epoch) instead of the server clock."),
                              QStringLiteral("T"));

qint64 msRoundedUp(qint64 us)
{
    return (us + 999) / 1000;
}

LimitSpec specFromOptions(const Cli &cli)
{
    for (const QString &required : {QStringLiteral("algo"), QStringLiteral("limit"), QStringLiteral("window")})
        if (!cli.args().isSet(required))
            throw UsageError(QStringLiteral("--%1 is required").arg(required));
    LimitSpec spec;
    spec.algorithm = parseAlgorithm(cli.args().value(QStringLiteral("algo")));
    spec.limit = cli.integerOption(QStringLiteral("limit"), 1, kMaxLimit);
    spec.windowUs = cli.durationOptionUs(QStringLiteral("window"));
    spec.cost = cli.integerOption(QStringLiteral("cost"), 1, kMaxLimit, 1);
    spec.validate();
    return spec;
}

QByteArray keyArgument(const Cli &cli)
{
    const QStringList p = cli.positional();
    if (p.size() != 1)
        throw UsageError(QStringLiteral("expected exactly one KEY, got %1").arg(p.size()));
    if (p[0].isEmpty())
        throw UsageError(QStringLiteral("the key must not be empty"));
    return p[0].toUtf8(); // the Redis key as given: no implicit prefix
}

void printDecision(Cli &cli, const Decision &d)
{
    if (cli.json()) {
        cli.printJson({
            {QStringLiteral("allowed"), d.allowed},
            {QStringLiteral("limit"), d.limit},
            {QStringLiteral("used"), d.used},
            {QStringLiteral("remaining"), d.remaining},
            {QStringLiteral("retry_after_ms"), msRoundedUp(d.retryAfterUs)},
            {QStringLiteral("reset_after_ms"), msRoundedUp(d.resetAfterUs)},
        });
        return;
    }
    cli.printFields({
        {QStringLiteral("allowed"), d.allowed ? QStringLiteral("yes") : QStringLiteral("no")},
        {QStringLiteral("used"), QStringLiteral("%1 of %2").arg(d.used).arg(d.limit)},
        {QStringLiteral("remaining"), QString::number(d.remaining)},
        {QStringLiteral("retry_after"), formatDurationUs(d.retryAfterUs)},
        {QStringLiteral("reset_after"), formatDurationUs(d.resetAfterUs)},
    });
}

int runDecision(Cli &cli, bool peek)
{
    const QByteArray key = keyArgument(cli);
    const LimitSpec spec = specFromOptions(cli);
    std::optional<qint64> now;
    if (cli.args().isSet(QStringLiteral("now-us")))
        now = cli.integerOption(QStringLiteral("now-us"), 0, 9000000000000000LL);
    Limiter limiter(cli.connection());
    printDecision(cli, peek ? limiter.peek(key, spec, now) : limiter.check(key, spec, now));
    return ExitOk;
}

} // namespace

void registerDecisions(QList<Subcommand> &commands)
{
    const QList<QCommandLineOption> options = {kAlgo, kLimit, kWindow, kCost, kNow};
    commands.append({QStringLiteral("check"), QStringLiteral("check KEY --algo A --limit N --window D [--cost C] [--now-us T]"),
                     QStringLiteral("Decide one request against the limiter at KEY, consuming quota when allowed."), options, true,
                     [](Cli &cli) { return runDecision(cli, false); }});
    commands.append({QStringLiteral("peek"), QStringLiteral("peek KEY --algo A --limit N --window D [--cost C] [--now-us T]"),
                     QStringLiteral("What check would answer, without consuming or writing anything."), options, false,
                     [](Cli &cli) { return runDecision(cli, true); }});
}

} // namespace ratescope::cli
