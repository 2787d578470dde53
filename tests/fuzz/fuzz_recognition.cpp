// Recognising a key from a sample of its contents (formats/recognition.h classify()), and, for
// the logs and counters of other services it finds, their usage from the replies a read would
// get. Input, as lines:
//   type     the key's Redis type (zset, string, hash, list, ...)
//   now      the server's clock in µs
//   unit     a policy's score unit (auto, s, ms, us; other text: auto)
//   format   a policy's format (empty: none)
//   window   a policy's window in µs (0: none)
//   key
// then RESP: the replies to the sample commands (two for a sorted set: its newest and its
// oldest entry), then those a usage read would get.
#include "fuzzsupport.h"

#include "formats/recognition.h"
#include "formats/usage.h"

using namespace ratescope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const fuzz::Lines in = fuzz::splitLines(fuzz::bytes(data, size), 6);
    const QByteArray &type = in.lines[0];
    const qint64 nowUs = std::clamp<qint64>(fuzz::number(in.lines[1], 1732459200000000LL), 0, kMaxNowUs);
    ScoreUnit unit = ScoreUnit::Auto;
    try {
        unit = parseScoreUnit(QString::fromUtf8(in.lines[2]));
    } catch (const UsageError &) {
    }
    const QString format = QString::fromUtf8(in.lines[3]);
    const qint64 windowUs = std::clamp<qint64>(fuzz::number(in.lines[4], 0), 0, kMaxWindowUs);
    const QByteArray &key = in.lines[5];
    std::vector<Reply> replies = fuzz::parseReplies(in.rest);

    const size_t sampled = sampleCommands(key, type).size();
    fuzz::check(sampled <= 2, "more than two sample commands"); // a sorted set: its newest and oldest entries
    const std::vector<Reply> samples(replies.begin(), replies.begin() + qsizetype(std::min(sampled, replies.size())));
    replies.erase(replies.begin(), replies.begin() + qsizetype(samples.size()));
    replies.resize(3);

    const KeyKind kind = classify(key, type, samples, nowUs, unit, format, windowUs);
    kind.label();
    kind.algorithm();
    kind.readable();
    notOursToDecide(QString::fromUtf8(key), kind);
    fuzz::check(kind.isLimiter() || kind.reader == nullptr, "a reader for no limiter");
    fuzz::check(kind.format != KeyFormat::Library || kind.reader, "a library format without its reader");

    UsageTarget target{key, kind, {Algorithm::SlidingLog, 10, windowUs >= kMinWindowUs ? windowUs : 60000000, 1}};
    try {
        if (kind.format == KeyFormat::ForeignSlidingLog) {
            foreignLogCommands(target, nowUs);
            fuzz::checkUsage(foreignLogUsage(target, replies[0], replies[1], replies[2], nowUs), key);
        } else if (kind.format == KeyFormat::CounterWindow) {
            target.spec.algorithm = Algorithm::FixedWindow;
            target.spec.windowUs = kind.windowSeconds * 1000000;
            counterWindowCommands(target, nowUs);
            fuzz::checkUsage(counterWindowUsage(target, replies[0], replies[1], nowUs), key);
        }
    } catch (const Error &) {
    }
    return 0;
}
