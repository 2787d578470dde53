// RESP decoding and encoding (parser level: raw bytes in, replies out; no server).
#include "base/errors.h"
#include "redis/resp.h"

#include <QTest>

#include <hiredis/hiredis.h>

#include <QRandomGenerator>

#include <functional>

using namespace ratescope;

Q_DECLARE_METATYPE(ratescope::Reply)

class TestResp : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void decode_data();
    void decode();
    void byteByByte();
    void manyRepliesInOneChunk();
    void bigBulkString();
    void hugeArrayHeaderAllocatesAsElementsArrive();
    void protocolError_data();
    void protocolError();
    void sameTreeAsHiredisReplies();
    void encode();
    void toInteger();
    void unexpectedContentIsNoConnectionError();
};

void TestResp::decode_data()
{
    QTest::addColumn<QByteArray>("raw");
    QTest::addColumn<Reply>("expected");

    QTest::newRow("status") << QByteArray("+OK\r\n") << Reply::status("OK");
    QTest::newRow("error") << QByteArray("-WRONGTYPE Operation against a key\r\n") << Reply::error("WRONGTYPE Operation against a key");
    QTest::newRow("integer") << QByteArray(":42\r\n") << Reply::integer(42);
    QTest::newRow("negative integer") << QByteArray(":-9223372036854775808\r\n") << Reply::integer(std::numeric_limits<long long>::min());
    QTest::newRow("bulk") << QByteArray("$5\r\nhello\r\n") << Reply::string("hello");
    QTest::newRow("empty bulk") << QByteArray("$0\r\n\r\n") << Reply::string("");
    QTest::newRow("binary bulk") << QByteArray("$4\r\na\r\0b\r\n", 10) << Reply::string(QByteArray("a\r\0b", 4));
    QTest::newRow("nil bulk") << QByteArray("$-1\r\n") << Reply::nil();
    QTest::newRow("nil array") << QByteArray("*-1\r\n") << Reply::nil();
    QTest::newRow("empty array") << QByteArray("*0\r\n") << Reply::array({});
    QTest::newRow("flat array") << QByteArray("*3\r\n:1\r\n$1\r\na\r\n$-1\r\n")
                                << Reply::array({Reply::integer(1), Reply::string("a"), Reply::nil()});
    QTest::newRow("nested") << QByteArray("*2\r\n*2\r\n+a\r\n-ERR x\r\n*1\r\n*1\r\n:7\r\n")
                            << Reply::array({Reply::array({Reply::status("a"), Reply::error("ERR x")}),
                                             Reply::array({Reply::array({Reply::integer(7)})})});
    // A limiter decision as the scripts return it.
    QTest::newRow("decision") << QByteArray("*6\r\n:1\r\n:100\r\n:3\r\n:97\r\n:0\r\n:60000000\r\n")
                              << Reply::array({Reply::integer(1), Reply::integer(100), Reply::integer(3), Reply::integer(97),
                                               Reply::integer(0), Reply::integer(60000000)});
}

void TestResp::decode()
{
    QFETCH(QByteArray, raw);
    QFETCH(Reply, expected);
    RespParser p;
    p.feed(raw);
    const auto r = p.next();
    QVERIFY(r.has_value());
    QCOMPARE(r->debugString(), expected.debugString());
    QVERIFY(*r == expected);
    QVERIFY(!p.next().has_value());
}

void TestResp::byteByByte()
{
    const QByteArray raw("*2\r\n$3\r\nfoo\r\n*1\r\n:12\r\n");
    RespParser p;
    for (int i = 0; i < raw.size() - 1; ++i) {
        p.feed(raw.constData() + i, 1);
        QVERIFY2(!p.next().has_value(), "reply complete too early");
    }
    p.feed(raw.constData() + raw.size() - 1, 1);
    const auto r = p.next();
    QVERIFY(r);
    QCOMPARE(*r, Reply::array({Reply::string("foo"), Reply::array({Reply::integer(12)})}));
}

void TestResp::manyRepliesInOneChunk()
{
    QByteArray raw;
    for (int i = 0; i < 1000; ++i)
        raw += ":" + QByteArray::number(i) + "\r\n";
    RespParser p;
    p.feed(raw);
    for (int i = 0; i < 1000; ++i) {
        const auto r = p.next();
        QVERIFY(r);
        QCOMPARE(r->integer(), i);
    }
    QVERIFY(!p.next());
}

void TestResp::bigBulkString()
{
    const QByteArray payload(10 * 1024 * 1024, 'x');
    const QByteArray raw = "$" + QByteArray::number(payload.size()) + "\r\n" + payload + "\r\n";
    RespParser p;
    // Arrives in 64 KiB chunks, as from a socket.
    for (qsizetype at = 0; at < raw.size(); at += 65536) {
        QVERIFY(!p.next());
        p.feed(raw.mid(at, 65536));
    }
    const auto r = p.next();
    QVERIFY(r);
    QCOMPARE(r->type(), Reply::Type::String);
    QCOMPARE(r->bytes().size(), payload.size());
    QVERIFY(r->bytes() == payload);
}

// A server (or anything on the socket) announcing 2^31 - 1 elements costs room only for those
// that arrive: were the header taken at its word, 64-byte replies would ask for 128 GiB here.
// Elements then keep their order as the room grows, nested arrays included.
void TestResp::hugeArrayHeaderAllocatesAsElementsArrive()
{
    RespParser p;
    p.feed("*2147483647\r\n");
    QByteArray elements;
    for (int i = 0; i < 200000; ++i)
        elements += ":" + QByteArray::number(i) + "\r\n";
    p.feed(elements);
    QVERIFY(!p.next()); // still waiting for the rest, with 200,000 elements held
    QVERIFY(!p.idle());
    RespParser typeOnly; // a reply begun with its type byte alone is not idle either
    typeOnly.feed("*");
    QVERIFY(!typeOnly.next());
    QVERIFY(!typeOnly.idle());
    typeOnly.feed("1\r\n:5\r\n");
    QCOMPARE(typeOnly.next()->size(), size_t(1));
    QVERIFY(!typeOnly.next());
    QVERIFY(typeOnly.idle());

    RespParser q;
    QByteArray raw = "*3\r\n*100000\r\n";
    for (int i = 0; i < 100000; ++i)
        raw += "$" + QByteArray::number(QByteArray::number(i).size()) + "\r\n" + QByteArray::number(i) + "\r\n";
    raw += "*0\r\n*2\r\n$-1\r\n:7\r\n";
    q.feed(raw);
    const auto r = q.next();
    QVERIFY(r);
    QCOMPARE(r->size(), size_t(3));
    QCOMPARE((*r)[0].size(), size_t(100000));
    for (int i = 0; i < 100000; i += 9973)
        QCOMPARE((*r)[0][size_t(i)].bytes(), QByteArray::number(i));
    QCOMPARE((*r)[0][99999].bytes(), QByteArray("99999"));
    QCOMPARE((*r)[1].size(), size_t(0));
    QVERIFY((*r)[2][0].isNil());
    QCOMPARE((*r)[2][1].integer(), qint64(7));
}

void TestResp::protocolError_data()
{
    QTest::addColumn<QByteArray>("raw");
    QTest::newRow("unknown type byte") << QByteArray("!oops\r\n");
    QTest::newRow("bad integer") << QByteArray(":12a\r\n");
    QTest::newRow("bad bulk length") << QByteArray("$x\r\n");
}

void TestResp::protocolError()
{
    QFETCH(QByteArray, raw);
    RespParser p;
    try {
        p.feed(raw);
        p.next();
        QFAIL("garbage accepted");
    } catch (const ProtocolError &e) {
        QVERIFY(e.message().startsWith(QStringLiteral("protocol error")));
    }
    // The parser is usable again afterwards.
    p.feed(QByteArray(":1\r\n"));
    QCOMPARE(p.next()->integer(), 1);
}

namespace {

// hiredis' own reply tree (its default reader functions), as a Reply: what the parser gave
// before it built Replies itself.
Reply fromHiredis(const redisReply *r)
{
    switch (r->type) {
    case REDIS_REPLY_STRING:
        return Reply::string(QByteArray(r->str, qsizetype(r->len)));
    case REDIS_REPLY_STATUS:
        return Reply::status(QByteArray(r->str, qsizetype(r->len)));
    case REDIS_REPLY_ERROR:
        return Reply::error(QByteArray(r->str, qsizetype(r->len)));
    case REDIS_REPLY_INTEGER:
        return Reply::integer(r->integer);
    case REDIS_REPLY_ARRAY: {
        std::vector<Reply> elements;
        for (size_t i = 0; i < r->elements; ++i)
            elements.push_back(fromHiredis(r->element[i]));
        return Reply::array(std::move(elements));
    }
    default:
        return Reply::nil();
    }
}

// A random reply in RESP 2, up to `depth` arrays deep.
QByteArray randomReply(QRandomGenerator &rng, int depth)
{
    auto bytes = [&](int max) {
        QByteArray b(rng.bounded(max + 1), Qt::Uninitialized);
        for (char &c : b)
            c = char(rng.bounded(256));
        return b;
    };
    auto line = [&] { // status and error text: no CR or LF
        QByteArray b = bytes(20);
        for (char &c : b)
            if (c == '\r' || c == '\n')
                c = 'x';
        return b;
    };
    switch (rng.bounded(depth > 0 ? 8 : 6)) {
    case 0:
        return "+" + line() + "\r\n";
    case 1:
        return "-ERR " + line() + "\r\n";
    case 2:
        return ":" + QByteArray::number(qint64(rng.generate64())) + "\r\n";
    case 3:
        return rng.bounded(2) ? QByteArray("$-1\r\n") : QByteArray("*-1\r\n");
    case 4:
    case 5: {
        const QByteArray b = bytes(rng.bounded(10) == 0 ? 5000 : 30);
        return "$" + QByteArray::number(b.size()) + "\r\n" + b + "\r\n";
    }
    default: {
        const int n = rng.bounded(rng.bounded(10) == 0 ? 300 : 6);
        QByteArray out = "*" + QByteArray::number(n) + "\r\n";
        for (int i = 0; i < n; ++i)
            out += randomReply(rng, depth - 1);
        return out;
    }
    }
}

} // namespace

void TestResp::sameTreeAsHiredisReplies()
{
    // 2,000 random replies (nested arrays, empty and nil ones, binary bulk strings, statuses,
    // errors, 64-bit integers) fed in random slices: the same replies as hiredis' own tree.
    QRandomGenerator rng(20261126);
    QByteArray stream;
    for (int i = 0; i < 2000; ++i)
        stream += randomReply(rng, 3);
    redisReader *reference = redisReaderCreate();
    QVERIFY(reference);
    QVERIFY(redisReaderFeed(reference, stream.constData(), size_t(stream.size())) == REDIS_OK);
    std::vector<Reply> expected;
    for (int i = 0; i < 2000; ++i) {
        void *raw = nullptr;
        QVERIFY(redisReaderGetReply(reference, &raw) == REDIS_OK && raw);
        expected.push_back(fromHiredis(static_cast<redisReply *>(raw)));
        freeReplyObject(raw);
    }
    redisReaderFree(reference);

    RespParser parser;
    std::vector<Reply> got;
    for (qsizetype at = 0; at < stream.size();) {
        const qsizetype n = std::min<qsizetype>(stream.size() - at, 1 + rng.bounded(700));
        parser.feed(stream.mid(at, n));
        at += n;
        while (auto r = parser.next())
            got.push_back(std::move(*r));
    }
    QVERIFY(parser.idle());
    QCOMPARE(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i)
        QVERIFY2(got[i] == expected[i], qPrintable(QStringLiteral("reply %1: %2").arg(i).arg(got[i].debugString().left(200))));
}

void TestResp::encode()
{
    QCOMPARE(encodeCommand({"SET", "k", QByteArray("a\0b", 3)}), QByteArray("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\na\0b\r\n", 29));
    QCOMPARE(encodeCommand({"PING"}), QByteArray("*1\r\n$4\r\nPING\r\n"));
    QCOMPARE(encodeCommand({"ECHO", ""}), QByteArray("*2\r\n$4\r\nECHO\r\n$0\r\n\r\n"));
    // Byte for byte what hiredis writes, for arguments of every length class.
    for (const qsizetype n : {qsizetype(1), qsizetype(9), qsizetype(10), qsizetype(99), qsizetype(100), qsizetype(65537)}) {
        const Command c{"SET", QByteArray(n, 'x'), QByteArray(n * 3, '\0'), ""};
        std::vector<const char *> argv;
        std::vector<size_t> lens;
        for (const QByteArray &a : c) {
            argv.push_back(a.constData());
            lens.push_back(size_t(a.size()));
        }
        char *hiredis = nullptr;
        const int len = redisFormatCommandArgv(&hiredis, int(argv.size()), argv.data(), lens.data());
        QVERIFY(len > 0);
        const QByteArray expected(hiredis, len);
        redisFreeCommand(hiredis);
        QCOMPARE(encodeCommand(c), expected);
        QByteArray batch = "prefix";
        appendCommand(batch, c);
        QCOMPARE(batch, "prefix" + expected);
    }
}

void TestResp::toInteger()
{
    QCOMPARE(Reply::integer(5).toInteger(), 5);
    QCOMPARE(Reply::string("123").toInteger(), 123);
    QVERIFY_THROWS_EXCEPTION(UnexpectedReplyError, Reply::string("x").toInteger());
    QVERIFY_THROWS_EXCEPTION(ReplyError, Reply::error("NOSCRIPT No matching script").toInteger());
    try {
        Reply::error("NOSCRIPT No matching script").orThrow();
    } catch (const ReplyError &e) {
        QCOMPARE(e.prefix(), QStringLiteral("NOSCRIPT"));
    }
}

// A well-formed reply with content we cannot use says so with an Error of its own: not a
// ConnectionError (the console would reconnect for it), not std::out_of_range (which no
// catch (const Error &) sees).
void TestResp::unexpectedContentIsNoConnectionError()
{
    const Reply pair = Reply::array({Reply::integer(1), Reply::string("a")});
    QCOMPARE(pair[1].bytes(), QByteArray("a"));
    auto kindOf = [](const std::function<void()> &f) -> QString {
        try {
            f();
        } catch (const ConnectionError &) {
            return QStringLiteral("connection");
        } catch (const UnexpectedReplyError &e) {
            return e.message().isEmpty() ? QStringLiteral("empty") : QStringLiteral("unexpected");
        } catch (const Error &) {
            return QStringLiteral("other Error");
        } catch (...) {
            return QStringLiteral("not an Error");
        }
        return QStringLiteral("nothing");
    };
    QCOMPARE(kindOf([&] { (void)pair[2]; }), QStringLiteral("unexpected"));
    QCOMPARE(kindOf([&] { (void)Reply::nil()[0]; }), QStringLiteral("unexpected"));
    QCOMPARE(kindOf([&] { (void)Reply::string("x").toInteger(); }), QStringLiteral("unexpected"));
}

QTEST_APPLESS_MAIN(TestResp)
#include "tst_resp.moc"
