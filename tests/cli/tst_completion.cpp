// The bash completion of packaging/completion against the built executables: commands,
// options, actions, algorithms and score units from the binary, key names from a real server
// only when --url is on the line, the console's options and saved profile names. Each case
// runs in a fresh bash, with bash-completion's _init_completion when it is installed and
// with the script's own fallback without it.
#include "builtpaths.h"
#include "testsupport.h"

#include "limiters/algorithm.h"
#ifdef RATESCOPE_HAVE_GUI
#include "profilestore.h"
#endif

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

using namespace ratescope;
using namespace ratescope::test;

namespace {

const QString kBashCompletion = QStringLiteral("/usr/share/bash-completion/bash_completion");

QString quoted(const QString &word)
{
    return QLatin1Char('\'') + QString(word).replace(QLatin1Char('\''), QLatin1String("'\\''")) + QLatin1Char('\'');
}

} // namespace

class TestCompletion : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY(m_home.isValid());
        m_server = std::make_unique<SandboxServer>();
        m_server->start();
        for (const char *key : {"api:alice", "api:bob", "web:carol"}) {
            const CliResult r = runCli({QStringLiteral("--url"), m_server->url(), QStringLiteral("check"), QString::fromLatin1(key),
                                        QStringLiteral("--algo"), QStringLiteral("fixed-window"), QStringLiteral("--limit"),
                                        QStringLiteral("10"), QStringLiteral("--window"), QStringLiteral("1h")});
            QCOMPARE(r.exitCode, 0);
        }
    }

    void commands_data() { withModes(); }
    void commands()
    {
        QFETCH(bool, bashCompletion);
        QStringList expected = QString::fromUtf8(runCli({QStringLiteral("help"), QStringLiteral("--commands")}).out)
                                   .split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QVERIFY(expected.contains(QStringLiteral("check")) && expected.contains(QStringLiteral("policy")));
        expected.sort();
        QCOMPARE(cli({QString()}, bashCompletion), expected);
        QCOMPARE(cli({QStringLiteral("--json"), QStringLiteral("in")}, bashCompletion),
                 (QStringList{QStringLiteral("info"), QStringLiteral("inspect")}));
    }

    void options_data() { withModes(); }
    void options()
    {
        QFETCH(bool, bashCompletion);
        const QStringList check = cli({QStringLiteral("check"), QStringLiteral("k"), QStringLiteral("--")}, bashCompletion);
        for (const char *o :
             {"--algo", "--limit", "--window", "--cost", "--now-us", "--headers", "--base64-keys", "--url", "--json", "--help"})
            QVERIFY2(check.contains(QString::fromLatin1(o)), o);
        QVERIFY(!check.contains(QStringLiteral("--score-unit"))); // peek's, not check's
        QCOMPARE(cli({QStringLiteral("--rea")}, bashCompletion), (QStringList{QStringLiteral("--read-only"), QStringLiteral("--reason")}));
        QCOMPARE(cli({QStringLiteral("--read")}, bashCompletion), QStringList{QStringLiteral("--read-only")});
    }

    void values_data() { withModes(); }
    void values()
    {
        QFETCH(bool, bashCompletion);
        QStringList algorithms = algorithmNames();
        algorithms.sort();
        QCOMPARE(cli({QStringLiteral("check"), QStringLiteral("k"), QStringLiteral("--algo"), QString()}, bashCompletion), algorithms);
        QCOMPARE(cli({QStringLiteral("peek"), QStringLiteral("k"), QStringLiteral("--score-unit"), QString()}, bashCompletion),
                 (QStringList{QStringLiteral("auto"), QStringLiteral("ms"), QStringLiteral("s"), QStringLiteral("us")}));
        // A global option's value is not taken for the command.
        QCOMPARE(cli({QStringLiteral("--namespace"), QStringLiteral("x:"), QStringLiteral("pe")}, bashCompletion),
                 QStringList{QStringLiteral("peek")});
    }

    void actions_data() { withModes(); }
    void actions()
    {
        QFETCH(bool, bashCompletion);
        QCOMPARE(cli({QStringLiteral("policy"), QString()}, bashCompletion),
                 (QStringList{QStringLiteral("delete"), QStringLiteral("get"), QStringLiteral("list"), QStringLiteral("set")}));
        QCOMPARE(cli({QStringLiteral("override"), QStringLiteral("c")}, bashCompletion), QStringList{QStringLiteral("clear")});
        QStringList show = algorithmNames() << QStringLiteral("library");
        show.sort();
        QCOMPARE(cli({QStringLiteral("scripts"), QStringLiteral("show"), QString()}, bashCompletion), show);
    }

    void keysOnlyWithUrl_data() { withModes(); }
    void keysOnlyWithUrl()
    {
        QFETCH(bool, bashCompletion);
        const QString url = m_server->url();
        const QStringList api{QStringLiteral("api:alice"), QStringLiteral("api:bob")};
        QCOMPARE(cli({QStringLiteral("--url"), url, QStringLiteral("inspect"), QStringLiteral("ap")}, bashCompletion), api);
        QCOMPARE(
            cli({QStringLiteral("watch"), QStringLiteral("--url"), url, QStringLiteral("api:alice"), QStringLiteral("ap")}, bashCompletion),
            api);
        QCOMPARE(
            cli({QStringLiteral("--url"), url, QStringLiteral("override"), QStringLiteral("set"), QStringLiteral("w")}, bashCompletion),
            QStringList{QStringLiteral("web:carol")});
        QCOMPARE(
            cli({QStringLiteral("--url"), url, QStringLiteral("keys"), QStringLiteral("--match"), QStringLiteral("we")}, bashCompletion),
            QStringList{QStringLiteral("web:carol")});
        // Without --url nothing is asked, even with RATESCOPE_URL naming the same server.
        QCOMPARE(cli({QStringLiteral("inspect"), QStringLiteral("ap")}, bashCompletion, {{QStringLiteral("RATESCOPE_URL"), url}}),
                 QStringList());
        // A server that does not answer gives nothing, quietly.
        QCOMPARE(cli({QStringLiteral("--url"), QStringLiteral("redis://127.0.0.1:1"), QStringLiteral("inspect"), QStringLiteral("ap")},
                     bashCompletion),
                 QStringList());
    }

#ifdef RATESCOPE_HAVE_GUI
    void console_data()
    {
        withModes();
    }
    void console()
    {
        QFETCH(bool, bashCompletion);
        QCOMPARE(gui({QStringLiteral("--screensh")}, bashCompletion),
                 (QStringList{QStringLiteral("--screenshot"), QStringLiteral("--screenshot-after")}));
        QVERIFY(!gui({QStringLiteral("--he")}, bashCompletion).contains(QStringLiteral("--help-man"))); // hidden
        QCOMPARE(gui({QStringLiteral("--tab"), QStringLiteral("p")}, bashCompletion), QStringList{QStringLiteral("policies")});
        QCOMPARE(gui({QStringLiteral("--url"), m_server->url(), QStringLiteral("--pin"), QStringLiteral("api:b")}, bashCompletion),
                 QStringList{bashCompletion ? QStringLiteral("bob") : QStringLiteral("api:bob")}); // bash-completion trims up to the colon
        QCOMPARE(gui({QStringLiteral("--pin"), QStringLiteral("api:b")}, bashCompletion), QStringList());
    }

    void profiles_data()
    {
        withModes();
    }
    void profiles()
    {
        QFETCH(bool, bashCompletion);
        // Saved the way the console saves them: QSettings' ratescope.conf under XDG_CONFIG_HOME.
        QSettings settings(m_home.filePath(QStringLiteral("Ratescope/ratescope.conf")), QSettings::IniFormat);
        ui::ProfileStore store(&settings);
        for (const QString &name : {QStringLiteral("production"), QStringLiteral("prod eu/2"), QStringLiteral("caf\u00e9 50%")}) {
            ui::ConnectionProfile p;
            p.name = name;
            store.save(p);
        }
        settings.sync();
        QCOMPARE(gui({QStringLiteral("--profile"), QString()}, bashCompletion),
                 (QStringList{QStringLiteral("caf\u00e9\\ 50%"), QStringLiteral("prod\\ eu/2"), QStringLiteral("production")}));
        QCOMPARE(gui({QStringLiteral("--profile"), QStringLiteral("prod")}, bashCompletion),
                 (QStringList{QStringLiteral("prod\\ eu/2"), QStringLiteral("production")}));
    }
#endif

private:
    static void withModes()
    {
        QTest::addColumn<bool>("bashCompletion");
        QTest::newRow("script's own word splitting") << false;
        if (QFile::exists(kBashCompletion))
            QTest::newRow("bash-completion's _init_completion") << true;
    }

    // COMPREPLY, sorted, for the command line `program words...` with the cursor at the end of
    // the last word, in a fresh bash with only the completion script loaded (and bash-completion).
    QStringList complete(const QString &script, const QString &function, const QString &program, const QStringList &words,
                         bool bashCompletion, const QList<QPair<QString, QString>> &environment = {})
    {
        QStringList all{program};
        all << words;
        QStringList quotedWords;
        for (const QString &w : all)
            quotedWords << quoted(w);
        const QString line = all.join(QLatin1Char(' '));
        QString code = QStringLiteral("set -u; ");
        if (bashCompletion)
            code += QStringLiteral("source %1; ").arg(kBashCompletion);
        code += QStringLiteral("set +u; source %1; COMP_WORDS=(%2); COMP_CWORD=%3; COMP_LINE=%4; COMP_POINT=${#COMP_LINE}; "
                               "%5; printf '%s\\n' \"${COMPREPLY[@]}\"")
                    .arg(quoted(script), quotedWords.join(QLatin1Char(' ')))
                    .arg(all.size() - 1)
                    .arg(quoted(line), function);
        QProcess bash;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.path());
        env.remove(QStringLiteral("RATESCOPE_URL"));
        for (const auto &[name, value] : environment)
            env.insert(name, value);
        bash.setProcessEnvironment(env);
        bash.start(QStringLiteral("bash"), {QStringLiteral("-c"), code});
        if (!bash.waitForFinished(30000))
            qFatal("completion did not finish: %s", qPrintable(line));
        const QString err = QString::fromUtf8(bash.readAllStandardError());
        if (!err.isEmpty())
            qWarning("completion of '%s' wrote to stderr: %s", qPrintable(line), qPrintable(err));
        QStringList reply = QString::fromUtf8(bash.readAllStandardOutput()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        reply.sort();
        return reply;
    }

    QStringList cli(const QStringList &words, bool bashCompletion, const QList<QPair<QString, QString>> &environment = {})
    {
        return complete(BuiltPaths::sourceDir() + QStringLiteral("/packaging/completion/ratescope-cli.bash"), QStringLiteral("_ratescope_cli"),
                        BuiltPaths::cli(), words, bashCompletion, environment);
    }

#ifdef RATESCOPE_HAVE_GUI
    QStringList gui(const QStringList &words, bool bashCompletion)
    {
        // Key names come from the ratescope-cli on PATH: the built one.
        const QString cliDir = QFileInfo(BuiltPaths::cli()).absolutePath();
        return complete(BuiltPaths::sourceDir() + QStringLiteral("/packaging/completion/ratescope.bash"), QStringLiteral("_ratescope"),
                        BuiltPaths::gui(), words, bashCompletion,
                        {{QStringLiteral("PATH"), cliDir + QLatin1Char(':') + qEnvironmentVariable("PATH")}});
    }
#endif

    QTemporaryDir m_home;
    std::unique_ptr<SandboxServer> m_server;
};

QTEST_GUILESS_MAIN(TestCompletion)
#include "tst_completion.moc"
