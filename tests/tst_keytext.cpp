// How keys are shown to people: printable UTF-8 as itself, anything else quoted and escaped as
// redis-cli prints it, so no key can hide bytes, forge a line or reorder text around it.
#include "keytext.h"

#include <QTest>

using namespace ratescope;

class TestKeyText : public QObject {
    Q_OBJECT
private slots:
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
        QTest::newRow("bidi override") << QByteArray("user\xe2\x80\xaegnp.exe") << QStringLiteral("\"user\\xe2\\x80\\xaegnp.exe\"") << false;
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
};

QTEST_GUILESS_MAIN(TestKeyText)
#include "tst_keytext.moc"
