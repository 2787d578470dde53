// The man pages (built by packaging/Packaging.cmake from the executables themselves) against
// --help: the same commands, and the same options for every command and for the console.
// Both sides are parsed from what a user reads: the help text, and the gzipped page as installed.
#include "builtpaths.h"
#include "testsupport.h"

#include <QMap>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

using namespace ratescope;
using namespace ratescope::test;

namespace {

using OptionSets = QMap<QString, QSet<QString>>; // section ("" global, or a command) -> option names

QByteArray run(const QString &program, const QStringList &args)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        qFatal("%s %s failed: %s", qPrintable(program), qPrintable(args.join(QLatin1Char(' '))), p.readAllStandardError().constData());
    return p.readAllStandardOutput();
}

QString manPage(const QString &name)
{
    return QString::fromUtf8(
        run(QStringLiteral("gzip"), {QStringLiteral("-dc"), BuiltPaths::manDir() + QLatin1Char('/') + name + QStringLiteral(".1.gz")}));
}

// The option names at the start of a help line ("  -h, --help  Show ...", "  --url <URL>  ...",
// "  --algo A   Algorithm: ..."): option words and value names, up to the description. Lines
// indented further continue a description.
QSet<QString> helpLineOptions(const QString &line)
{
    static const QRegularExpression optionWord(QStringLiteral("^(-[a-zA-Z]|--[a-z0-9][a-z0-9-]*),?$"));
    static const QRegularExpression valueWord(QStringLiteral("^([A-Z][A-Z_]*|<[^>]+>)$"));
    QSet<QString> names;
    if (!line.startsWith(QLatin1String("  ")) || line.size() < 3 || line.at(2).isSpace())
        return names; // not an option's line: a description's continuation
    for (const QString &word : line.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const auto m = optionWord.match(word);
        if (m.hasMatch())
            names.insert(m.captured(1));
        else if (!valueWord.match(word).hasMatch())
            break;
    }
    return names;
}

// The lines of a help text's section ("Options:") up to the next empty line.
QStringList helpSection(const QString &help, const QString &title)
{
    QStringList lines;
    bool in = false;
    for (const QString &line : help.split(QLatin1Char('\n'))) {
        if (line == title) {
            in = true;
        } else if (in) {
            if (line.trimmed().isEmpty())
                break;
            lines << line;
        }
    }
    return lines;
}

QSet<QString> helpOptions(const QString &help, const QString &title)
{
    QSet<QString> names;
    for (const QString &line : helpSection(help, title))
        names.unite(helpLineOptions(line));
    return names;
}

// What `ratescope-cli --help` and `ratescope-cli COMMAND --help` list.
OptionSets cliHelp(const std::function<QString(const QStringList &)> &help)
{
    OptionSets sets;
    const QString global = help({QStringLiteral("--help")});
    sets.insert(QString(), helpOptions(global, QStringLiteral("Global options:")));
    for (const QString &line : helpSection(global, QStringLiteral("Commands:"))) {
        const QString command = line.split(QLatin1Char(' '), Qt::SkipEmptyParts).value(0);
        sets.insert(command, helpOptions(help({command, QStringLiteral("--help")}), QStringLiteral("Options:")));
    }
    return sets;
}

// The option names of a man page: the \fB...\fR words of each .TP tag that start with '-',
// under "GLOBAL OPTIONS"/"OPTIONS" (section "") or under a command's .SS of COMMANDS.
OptionSets manOptions(const QString &page)
{
    static const QRegularExpression bold(QStringLiteral("\\\\fB(.*?)\\\\f[RP]"));
    OptionSets sets;
    QString section, command;
    bool tag = false;
    for (QString line : page.split(QLatin1Char('\n'))) {
        if (line.startsWith(QLatin1String(".SH "))) {
            section = line.mid(4).remove(QLatin1Char('"'));
            command.clear();
            if (section == QLatin1String("GLOBAL OPTIONS") || section == QLatin1String("OPTIONS"))
                sets[QString()];
        } else if (line.startsWith(QLatin1String(".SS ")) && section == QLatin1String("COMMANDS")) {
            command = line.mid(4).replace(QLatin1String("\\-"), QLatin1String("-"));
            sets[command];
        } else if (line == QLatin1String(".TP")) {
            tag = true;
            continue;
        } else if (tag) {
            const bool options = section == QLatin1String("GLOBAL OPTIONS") || section == QLatin1String("OPTIONS");
            if (options || (section == QLatin1String("COMMANDS") && !command.isEmpty()))
                for (const auto &m : bold.globalMatch(line.replace(QLatin1String("\\-"), QLatin1String("-"))))
                    if (m.captured(1).startsWith(QLatin1Char('-')))
                        sets[options ? QString() : command].insert(m.captured(1));
        }
        tag = false;
    }
    return sets;
}

// Every difference, as a sentence; empty when the two agree.
QStringList differences(const OptionSets &help, const OptionSets &man)
{
    QStringList problems;
    auto where = [](const QString &s) { return s.isEmpty() ? QStringLiteral("global options") : QStringLiteral("command %1").arg(s); };
    for (auto it = help.cbegin(); it != help.cend(); ++it) {
        if (!man.contains(it.key())) {
            problems << QStringLiteral("%1: in --help, not in the man page").arg(where(it.key()));
            continue;
        }
        for (const QString &o : it.value() - man.value(it.key()))
            problems << QStringLiteral("%1: %2 in --help, not in the man page").arg(where(it.key()), o);
        for (const QString &o : man.value(it.key()) - it.value())
            problems << QStringLiteral("%1: %2 in the man page, not in --help").arg(where(it.key()), o);
    }
    for (auto it = man.cbegin(); it != man.cend(); ++it)
        if (!help.contains(it.key()))
            problems << QStringLiteral("%1: in the man page, not in --help").arg(where(it.key()));
    problems.sort();
    return problems;
}

QString cliHelpText(const QStringList &args)
{
    return QString::fromUtf8(run(BuiltPaths::cli(), args));
}

} // namespace

class TestManPages : public QObject {
    Q_OBJECT

private slots:
    void cliPageListsWhatHelpLists()
    {
        const OptionSets help = cliHelp(cliHelpText);
        // The parse itself found something real: every command, and options under them.
        QVERIFY(help.size() > 10);
        QVERIFY(help.value(QString()).contains(QStringLiteral("--url")));
        QVERIFY(help.value(QStringLiteral("check")).contains(QStringLiteral("--algo")));
        QVERIFY(help.value(QStringLiteral("check")).contains(QStringLiteral("--base64-keys")));
        const QString page = manPage(QStringLiteral("ratescope-cli"));
        QCOMPARE(differences(help, manOptions(page)), QStringList());
    }

#ifdef RATESCOPE_HAVE_GUI
    void consolePageListsWhatHelpLists()
    {
        const QString helpText = QString::fromUtf8(run(BuiltPaths::gui(), {QStringLiteral("--help")}));
        const OptionSets help{{QString(), helpOptions(helpText, QStringLiteral("Options:"))}};
        QVERIFY(help.value(QString()).contains(QStringLiteral("--screenshot-after")));
        QVERIFY(help.value(QString()).contains(QStringLiteral("-v")));
        QVERIFY(!help.value(QString()).contains(QStringLiteral("--help-man"))); // hidden, and not in the page either
        QCOMPARE(differences(help, manOptions(manPage(QStringLiteral("ratescope")))), QStringList());
    }
#endif

    void pagesCarryTheProjectVersion()
    {
        QVERIFY(manPage(QStringLiteral("ratescope-cli")).contains(QStringLiteral("\"Ratescope " RATESCOPE_VERSION "\"")));
        QCOMPARE(cliHelpText({QStringLiteral("--version")}), QStringLiteral("ratescope-cli " RATESCOPE_VERSION "\n"));
#ifdef RATESCOPE_HAVE_GUI
        QVERIFY(manPage(QStringLiteral("ratescope")).contains(QStringLiteral("\"Ratescope " RATESCOPE_VERSION "\"")));
#endif
    }

    // The comparison fails when either side drifts: an option gone from a command's page, one
    // renamed, a command missing from the page, an option the help has and the page does not.
    void driftIsFound()
    {
        const OptionSets help = cliHelp(cliHelpText);
        const QString page = manPage(QStringLiteral("ratescope-cli"));

        QString dropped = page;
        const qsizetype check = dropped.indexOf(QStringLiteral(".SS check\n"));
        const qsizetype cost = dropped.indexOf(QStringLiteral(".TP\n\\fB\\-\\-cost\\fR"), check);
        QVERIFY(check > 0 && cost > check);
        dropped.remove(cost, 4); // the tag line is now plain text
        QCOMPARE(differences(help, manOptions(dropped)),
                 QStringList{QStringLiteral("command check: --cost in --help, not in the man page")});

        QString renamed = page;
        renamed.replace(QStringLiteral("\\fB\\-\\-max\\fR"), QStringLiteral("\\fB\\-\\-maximum\\fR"));
        const QStringList renamedProblems = differences(help, manOptions(renamed));
        QVERIFY(renamedProblems.contains(QStringLiteral("command audit: --max in --help, not in the man page")));
        QVERIFY(renamedProblems.contains(QStringLiteral("command audit: --maximum in the man page, not in --help")));

        QString noCommand = page;
        noCommand.replace(QStringLiteral(".SS info\n"), QStringLiteral(".PP\n"));
        QCOMPARE(differences(help, manOptions(noCommand)), QStringList{QStringLiteral("command info: in --help, not in the man page")});

        OptionSets moreHelp = help;
        moreHelp[QString()].insert(QStringLiteral("--colour"));
        QCOMPARE(differences(moreHelp, manOptions(page)),
                 QStringList{QStringLiteral("global options: --colour in --help, not in the man page")});
    }
};

QTEST_GUILESS_MAIN(TestManPages)
#include "tst_manpages.moc"
