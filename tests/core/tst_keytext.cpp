// How keys are shown to people: printable UTF-8 as itself, anything else quoted and escaped as
// redis-cli prints it, so no key can hide bytes, forge a line or reorder text around it.
#include "base/jsonline.h"
#include "base/keytext.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <limits>
#include <QTest>

using namespace ratescope;

class TestKeyText : public QObject {
    Q_OBJECT
private slots:
    // Natural order: digit runs by value, the rest by bytes; strict and total.
    void naturalOrder()
    {
        const QList<QByteArray> sorted{"",      "0",      "1",      "2",       "9",      "10",    "010x",  "10x",   "100",
                                       "a",     "a01",    "a1",     "a1b",     "a2",     "a10",   "a10b",  "a011",  "user:2",
                                       "user:9", "user:10", "user:10:a", "user:100", "userx", "\xff"};
        for (qsizetype i = 0; i < sorted.size(); ++i)
            for (qsizetype j = 0; j < sorted.size(); ++j)
                QVERIFY2(naturalLess(sorted[i], sorted[j]) == (i < j),
                         qPrintable(QStringLiteral("%1 vs %2").arg(QString::fromLatin1(sorted[i]), QString::fromLatin1(sorted[j]))));
        QList<QByteArray> shuffled{"w:10", "w:9", "w:100", "w:09", "w:1"};
        std::sort(shuffled.begin(), shuffled.end(), [](const QByteArray &a, const QByteArray &b) { return naturalLess(a, b); });
        QCOMPARE(shuffled, (QList<QByteArray>{"w:1", "w:09", "w:9", "w:10", "w:100"}));
    }

    void display_data()
    {
        QTest::addColumn<QByteArray>("key");
        QTest::addColumn<QString>("shown");
        QTest::addColumn<bool>("plain");
        QTest::newRow("ascii") << QByteArray("api:user:42") << QStringLiteral("api:user:42") << true;
        QTest::newRow("spaces") << QByteArray("a key with spaces") << QStringLiteral("a key with spaces") << true;
        QTest::newRow("empty") << QByteArray() << QString() << true;
        QTest::newRow("non-latin") << QByteArray("клиент:東京:😀") << QStringLiteral("клиент:東京:😀") << true;
        QTest::newRow("html stays text") << QByteArray("<b>x</b>") << QStringLiteral("<b>x</b>") << true;
        QTest::newRow("nul ff newline") << QByteArray("bin\x00\xff\nkey", 9) << QStringLiteral("\"bin\\x00\\xff\\nkey\"") << false;
        QTest::newRow("escape sequence") << QByteArray("o:\x1b[2J") << QStringLiteral("\"o:\\x1b[2J\"") << false;
        QTest::newRow("quote and backslash") << QByteArray("a\"b\\c\n") << QStringLiteral("\"a\\\"b\\\\c\\n\"") << false;
        QTest::newRow("leading quote") << QByteArray("\"quoted\"") << QStringLiteral("\"\\\"quoted\\\"\"") << false;
        QTest::newRow("tab cr bell backspace") << QByteArray("\t\r\a\b") << QStringLiteral("\"\\t\\r\\a\\b\"") << false;
        QTest::newRow("del") << QByteArray("a\x7f") << QStringLiteral("\"a\\x7f\"") << false;
        QTest::newRow("C1 control") << QByteArray("a\xc2\x85") << QStringLiteral("\"a\\xc2\\x85\"") << false;
        QTest::newRow("bidi override") << QByteArray("user\xe2\x80\xaegnp.exe") << QStringLiteral("\"user\\xe2\\x80\\xaegnp.exe\"")
                                       << false;
        QTest::newRow("line separator") << QByteArray("a\xe2\x80\xa8" "b") << QStringLiteral("\"a\\xe2\\x80\\xa8b\"") << false;
        QTest::newRow("paragraph separator") << QByteArray("a\xe2\x80\xa9") << QStringLiteral("\"a\\xe2\\x80\\xa9\"") << false;
        QTest::newRow("truncated sequence") << QByteArray("u:\xc3") << QStringLiteral("\"u:\\xc3\"") << false;
        QTest::newRow("overlong slash") << QByteArray("\xc0\xaf") << QStringLiteral("\"\\xc0\\xaf\"") << false;
        QTest::newRow("surrogate") << QByteArray("\xed\xa0\x80") << QStringLiteral("\"\\xed\\xa0\\x80\"") << false;
        QTest::newRow("valid beside invalid") << QByteArray("é\xfe") << QStringLiteral("\"é\\xfe\"") << false;
    }
    void display()
    {
        QFETCH(QByteArray, key);
        QFETCH(QString, shown);
        QFETCH(bool, plain);
        QCOMPARE(isPlainKey(key), plain);
        QCOMPARE(displayKey(key), shown);
    }

    void distinctKeysShowDistinctly()
    {
        // u:\xff and u:\xfe were once both shown (and used) as u:U+FFFD.
        QVERIFY(displayKey("u:\xff") != displayKey("u:\xfe"));
        QVERIFY(displayKey(QByteArray("a\nb")) != displayKey(QByteArray("a\\nb")));
        QVERIFY(displayKey(QByteArray("\"a\"")) != displayKey(QByteArray("a")));
    }

    void escapeControls_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("shown");
        QTest::newRow("plain text stays") << QStringLiteral("no policy named 'api' (v3)") << QStringLiteral("no policy named 'api' (v3)");
        QTest::newRow("html stays text") << QStringLiteral("<img src=x>") << QStringLiteral("<img src=x>");
        QTest::newRow("terminal title") << QStringLiteral("o:\x1b]0;title\x07") << QStringLiteral("o:\\x1b]0;title\\x07");
        QTest::newRow("forged row") << QStringLiteral("root\nFAKE") << QStringLiteral("root\\x0aFAKE");
        QTest::newRow("C1 and DEL") << QStringLiteral("a\u0085b\x7f") << QStringLiteral("a\\xc2\\x85b\\x7f");
        QTest::newRow("bidi override") << QStringLiteral("x\u202ey") << QStringLiteral("x\\xe2\\x80\\xaey");
        QTest::newRow("line separators") << QStringLiteral("a\u2028b\u2029") << QStringLiteral("a\\xe2\\x80\\xa8b\\xe2\\x80\\xa9");
        QTest::newRow("non-latin stays") << QStringLiteral("東京 😀") << QStringLiteral("東京 😀");
    }
    void escapeControls()
    {
        QFETCH(QString, text);
        QFETCH(QString, shown);
        QCOMPARE(ratescope::escapeControls(text), shown);
    }

    void utf8AndJson()
    {
        QVERIFY(isUtf8("plain:key"));
        QVERIFY(isUtf8(QByteArray("a\x00b", 3)));
        QVERIFY(!isUtf8("u:\xff"));
        QVERIFY(!isUtf8("\xed\xa0\x80"));

        QJsonObject text, control, binary;
        insertBytes(text, QStringLiteral("key"), "клиент:1");
        QCOMPARE(text.value(QStringLiteral("key")).toString(), QStringLiteral("клиент:1"));
        QVERIFY(!text.contains(QStringLiteral("key_base64")));
        // Valid UTF-8 with a NUL: the text as it is, and base64 since no argv can carry it.
        insertBytes(control, QStringLiteral("key"), QByteArray("a\x00\nb", 4));
        QCOMPARE(control.value(QStringLiteral("key")).toString(), QString::fromUtf8(QByteArray("a\x00\nb", 4)));
        QCOMPARE(QByteArray::fromBase64(control.value(QStringLiteral("key_base64")).toString().toLatin1()), QByteArray("a\x00\nb", 4));
        insertBytes(binary, QStringLiteral("member"), "m\xff");
        QCOMPARE(binary.value(QStringLiteral("member")).toString(), QStringLiteral("\"m\\xff\""));
        QCOMPARE(binary.value(QStringLiteral("member_base64")).toString(), QString::fromLatin1(QByteArray("m\xff").toBase64()));
    }

    // JsonLine writes a row byte for byte as QJsonDocument writes the same QJsonObject: names
    // in order, every byte a key can hold escaped alike, numbers alike.
    void jsonLineAsQJsonDocument_data()
    {
        QTest::addColumn<QByteArray>("key");
        QTest::addColumn<QString>("text");
        QTest::addColumn<double>("number");
        QByteArray everyByte;
        for (int b = 0; b < 256; ++b)
            everyByte.append(char(b));
        QByteArray everyAscii = everyByte.left(128);
        QTest::newRow("plain") << QByteArray("api:acme:1") << QStringLiteral("sliding-log") << 2.0;
        QTest::newRow("quotes and backslashes") << QByteArray("a\\\"b\"") << QStringLiteral("x\"y\\z") << 0.5;
        QTest::newRow("leading quote") << QByteArray("\"q") << QStringLiteral("\"") << 1.234;
        QTest::newRow("controls") << QByteArray("a\x00\x01\x08\x09\x0a\x0c\x0d\x1f\x7f", 10) << QStringLiteral("\t\u0001\u007f") << -3.75;
        QTest::newRow("every ASCII byte") << everyAscii << QString::fromLatin1(everyAscii) << 1e21;
        QTest::newRow("every byte") << everyByte << QString::fromUtf8("\xc3\xa9\xe6\x9d\xb1\xf0\x9f\x98\x80") << 123456.0;
        QTest::newRow("utf-8") << QByteArray("клиент:東京:\xf0\x9f\x98\x80") << QStringLiteral("\u2028\u200f") << 0.001;
        QTest::newRow("not utf-8") << QByteArray("u:\xff\xfe") << QString() << 1e-7;
        QTest::newRow("empty") << QByteArray() << QString() << 0.0;
    }

    void jsonLineAsQJsonDocument()
    {
        QFETCH(QByteArray, key);
        QFETCH(QString, text);
        QFETCH(double, number);
        QJsonObject object{{QStringLiteral("type"), text}, {QStringLiteral("ttl_ms"), qint64(-1)}};
        ratescope::JsonLine line;
        line.add("type", text);
        line.add("ttl_ms", qint64(-1));
        insertBytes(object, QStringLiteral("key"), key);
        line.addBytes("key", key);
        object.insert(QStringLiteral("algorithm"), QStringLiteral("gcra"));
        line.add("algorithm", QStringLiteral("gcra"));
        object.insert(QStringLiteral("used"), std::numeric_limits<qint64>::max());
        line.add("used", std::numeric_limits<qint64>::max());
        object.insert(QStringLiteral("limit"), std::numeric_limits<qint64>::min());
        line.add("limit", std::numeric_limits<qint64>::min());
        object.insert(QStringLiteral("skew"), number);
        line.add("skew", number);
        object.insert(QStringLiteral("type"), text + text); // a name given twice: the last value
        line.add("type", text + text);
        QCOMPARE(line.toJson(), QJsonDocument(object).toJson(QJsonDocument::Compact));
    }

    // A server's error text: valid UTF-8 kept (controls are escapeControls' business), every
    // other byte \xNN, never U+FFFD, so two keys stay two.
    void escapeInvalidUtf8()
    {
        using ratescope::escapeInvalidUtf8;
        QCOMPARE(escapeInvalidUtf8("ERR key 'u:\xff' is not"), QStringLiteral("ERR key 'u:\\xff' is not"));
        QVERIFY(escapeInvalidUtf8("u:\xff") != escapeInvalidUtf8("u:\xfe"));
        QCOMPARE(escapeInvalidUtf8("東京:\xe6\x9d"), QStringLiteral("東京:\\xe6\\x9d")); // a truncated sequence, byte by byte
        QCOMPARE(escapeInvalidUtf8("\xed\xa0\x80!"), QStringLiteral("\\xed\\xa0\\x80!"));   // a surrogate is no UTF-8
        QCOMPARE(escapeInvalidUtf8("a\nb"), QStringLiteral("a\nb"));
        QVERIFY(!escapeInvalidUtf8("\xc3\x28\xff").contains(QChar(0xFFFD)));
    }

    // Terminal columns: wide characters two, combining marks none; padding by them.
    void displayWidth()
    {
        using ratescope::displayWidth;
        QCOMPARE(displayWidth(QStringLiteral("plain")), 5);
        QCOMPARE(displayWidth(QStringLiteral("東京の顧客")), 10);
        QCOMPARE(displayWidth(QStringLiteral("한국")), 4);
        QCOMPARE(displayWidth(QStringLiteral("cafe\u0301")), 4);
        QCOMPARE(displayWidth(QStringLiteral("\U0001F600")), 2);
        QCOMPARE(displayWidth(QStringLiteral("ＡＢ")), 4); // fullwidth
        QCOMPARE(displayWidth(QStringLiteral("клиент")), 6);
        QCOMPARE(ratescope::padToWidth(QStringLiteral("東京"), 6), QStringLiteral("東京  "));
        QCOMPARE(ratescope::padToWidth(QStringLiteral("longer"), 3), QStringLiteral("longer"));
    }
};

QTEST_GUILESS_MAIN(TestKeyText)
#include "tst_keytext.moc"
