#include "limiter.h"

#include "errors.h"
#include "limiterscript.h"

namespace ratescope {

Decision Decision::fromReply(const Reply &reply)
{
    reply.orThrow();
    if (!reply.isArray() || reply.size() != 6)
        throw UnexpectedReplyError(QStringLiteral("a limiter script returned %1, expected six integers").arg(reply.debugString()));
    qint64 v[6];
    for (size_t i = 0; i < 6; ++i) {
        if (!reply[i].isInteger())
            throw UnexpectedReplyError(QStringLiteral("a limiter script returned %1, expected six integers").arg(reply.debugString()));
        v[i] = reply[i].integer();
    }
    return {v[0] != 0, v[1], v[2], v[3], v[4], v[5]};
}

QList<QByteArray> Limiter::arguments(const QByteArray &key, const LimitSpec &spec, std::optional<qint64> nowUs, bool peek)
{
    if (key.isEmpty())
        throw UsageError(QStringLiteral("the key must not be empty"));
    spec.validate();
    if (nowUs && *nowUs < 0)
        throw UsageError(QStringLiteral("now must not be negative"));
    return {QByteArray::number(spec.limit), QByteArray::number(spec.windowUs), QByteArray::number(spec.cost),
            nowUs ? QByteArray::number(*nowUs) : QByteArray(), peek ? QByteArrayLiteral("peek") : QByteArrayLiteral("check")};
}

Decision Limiter::run(const QByteArray &key, const LimitSpec &spec, std::optional<qint64> nowUs, bool peek)
{
    const QList<QByteArray> argv = arguments(key, spec, nowUs, peek);
    return Decision::fromReply(LimiterScript::forAlgorithm(spec.algorithm).run(m_connection, key, argv, peek));
}

Decision Limiter::check(const QByteArray &key, const LimitSpec &spec, std::optional<qint64> nowUs)
{
    return run(key, spec, nowUs, false);
}

Decision Limiter::peek(const QByteArray &key, const LimitSpec &spec, std::optional<qint64> nowUs)
{
    return run(key, spec, nowUs, true);
}

} // namespace ratescope
