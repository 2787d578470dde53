// The HTTP response fields a service sends for a decision (Retry-After, RateLimit-Policy,
// RateLimit): computed from the decision alone, rounded up to whole seconds, the policy's name
// as a structured-field String; and `check --headers` printing exactly those for a real
// decision against a real redis-server.
#include "redis/connection.h"
#include "limiters/httpheaders.h"
#include "limiters/limiter.h"
#include "admin/policy.h"
#include "redis/sandboxserver.h"
#include "testsupport.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace ratescope;
using namespace ratescope::test;

namespace {

constexpr qint64 kSecond = 1000000;

QString header(const QList<QPair<QString, QString>> &headers, const QString &name)
{
    for (const auto &[n, v] : headers)
        if (n == name)
            return v;
    return {};
}

} // namespace

class TestHttpHeaders : public QObject {
    Q_OBJECT
private slots:
    void allowed()
    {
        const Decision d{true, 100, 40, 60, 0, 59 * kSecond + 1};
        const auto h = rateLimitHeaders(d, {Algorithm::SlidingLog, 100, 60 * kSecond, 1}, QStringLiteral("api"));
        QCOMPARE(h.size(), 2); // no Retry-After when allowed
        QCOMPARE(h[0].first, QStringLiteral("RateLimit-Policy"));
        QCOMPARE(h[0].second, QStringLiteral("\"api\";q=100;w=60"));
        QCOMPARE(h[1].first, QStringLiteral("RateLimit"));
        QCOMPARE(h[1].second, QStringLiteral("\"api\";r=60;t=60")); // 59.000001 s rounds up
    }
    void denied()
    {
        const Decision d{false, 10, 10, 0, 2 * kSecond + 500000, 9 * kSecond};
        const auto h = rateLimitHeaders(d, {Algorithm::Gcra, 10, 1500000, 1});
        QCOMPARE(h[0], qMakePair(QStringLiteral("Retry-After"), QStringLiteral("3")));
        QCOMPARE(header(h, QStringLiteral("RateLimit-Policy")), QStringLiteral("\"default\";q=10;w=2")); // 1.5 s window: 2
        QCOMPARE(header(h, QStringLiteral("RateLimit")), QStringLiteral("\"default\";r=0;t=9"));
        // A denial never says "retry at once", even when the retry is under a second away.
        const Decision soon{false, 10, 10, 0, 1, 1};
        QCOMPARE(rateLimitHeaders(soon, {Algorithm::Gcra, 10, kSecond, 1})[0].second, QStringLiteral("1"));
    }
    void policyNamesAsStructuredStrings()
    {
        const Decision d{true, 5, 1, 4, 0, kSecond};
        const LimitSpec spec{Algorithm::FixedWindow, 5, kSecond, 1};
        QCOMPARE(header(rateLimitHeaders(d, spec, QStringLiteral("a \"quoted\" \\ name")), QStringLiteral("RateLimit")),
                 QStringLiteral("\"a \\\"quoted\\\" \\\\ name\";r=4;t=1"));
        // Not printable ASCII (a newline could split the header; non-ASCII is no SF String).
        QCOMPARE(header(rateLimitHeaders(d, spec, QStringLiteral("x\r\nSet-Cookie: a=b")), QStringLiteral("RateLimit")),
                 QStringLiteral("\"default\";r=4;t=1"));
        QCOMPARE(header(rateLimitHeaders(d, spec, QStringLiteral("клиент")), QStringLiteral("RateLimit")),
                 QStringLiteral("\"default\";r=4;t=1"));
    }

    void cliCheckHeaders()
    {
        SandboxServer server;
        server.start();
        Connection c(server.options());
        Policy p;
        p.name = QStringLiteral("login");
        p.match = "login:*";
        p.spec = {Algorithm::SlidingLog, 3, 60 * kSecond, 1};
        PolicyStore(c, QStringLiteral("ratescope:")).set(p, 0, QStringLiteral("test"));
        const qint64 now = 1700000000LL * kSecond;
        for (int i = 0; i < 3; ++i)
            Limiter(c).check("login:bob", p.spec, now + i * kSecond);
        const QStringList args{QStringLiteral("--url"),     server.url(),
                               QStringLiteral("--json"),    QStringLiteral("check"),
                               QStringLiteral("login:bob"), QStringLiteral("--headers"),
                               QStringLiteral("--now-us"),  QString::number(now + 10 * kSecond)};
        const CliResult r = runCli(args);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o.value(QStringLiteral("allowed")).toBool(), false);
        const QJsonObject h = o.value(QStringLiteral("headers")).toObject();
        // The oldest entry (at now) leaves the window 50 s after now + 10 s.
        QCOMPARE(h.value(QStringLiteral("Retry-After")).toString(), QStringLiteral("50"));
        QCOMPARE(h.value(QStringLiteral("RateLimit-Policy")).toString(), QStringLiteral("\"login\";q=3;w=60"));
        QCOMPARE(h.value(QStringLiteral("RateLimit")).toString(), QStringLiteral("\"login\";r=0;t=52"));

        // The human form: the decision, a blank line, then the fields as a response would carry them.
        const CliResult human = runCli({QStringLiteral("--url"), server.url(), QStringLiteral("peek"), QStringLiteral("login:bob"),
                                        QStringLiteral("--headers"), QStringLiteral("--now-us"), QString::number(now + 10 * kSecond)});
        QVERIFY2(human.exitCode == 0, human.err.constData());
        QVERIFY2(human.out.endsWith("\n\nRetry-After: 50\nRateLimit-Policy: \"login\";q=3;w=60\nRateLimit: \"login\";r=0;t=52\n"),
                 human.out.constData());
        // Without --headers, no headers.
        const CliResult plain = runCli({QStringLiteral("--url"), server.url(), QStringLiteral("--json"), QStringLiteral("peek"),
                                        QStringLiteral("login:bob"), QStringLiteral("--now-us"), QString::number(now + 10 * kSecond)});
        QVERIFY(!QJsonDocument::fromJson(plain.out).object().contains(QStringLiteral("headers")));
    }
};

QTEST_GUILESS_MAIN(TestHttpHeaders)
#include "tst_httpheaders.moc"
