// `ratescope-cli help` and its forms for tools: --man (the man page), --commands and
// --options [COMMAND] (what shell completion offers), --algorithms. All of them read the one
// command registry that prints --help, so none of them can drift from it.
#include "cli.h"

#include "limiters/algorithm.h"
#include "base/errors.h"
#include "troff.h"

#include <QFile>

namespace ratescope::cli {

QString Cli::manPage() const
{
    QFile frame(QStringLiteral(":/man/ratescope-cli.1.in"));
    if (!frame.open(QIODevice::ReadOnly))
        throw UsageError(QStringLiteral("the man page's frame is missing from this build"));
    QString page = QString::fromUtf8(frame.readAll());

    QString commands;
    for (const Subcommand &c : m_commands) {
        commands += QStringLiteral(".SS %1\n.B ratescope\\-cli\n[\\fIglobal options\\fR] %2\n.PP\n%3\n")
                        .arg(man::escape(c.name), man::escape(c.synopsis), man::escape(c.description));
        if (c.mutates)
            commands += QStringLiteral("Refused under \\fB\\-\\-read\\-only\\fR.\n");
        commands += man::options(c.options);
    }
    page.replace(QStringLiteral("%%HEADER%%\n"), man::header(QStringLiteral("ratescope-cli"), QStringLiteral(RATESCOPE_VERSION),
                                                             QStringLiteral("inspect, test and administer Redis rate limiters")));
    page.replace(QStringLiteral("%%GLOBAL_OPTIONS%%\n"), man::options(m_globalOptions));
    page.replace(QStringLiteral("%%COMMANDS%%\n"), commands);
    return page;
}

int Cli::help(const QStringList &rest)
{
    const QString form = rest.value(0);
    if (form == QLatin1String("--man")) {
        m_out << manPage();
    } else if (form == QLatin1String("--commands")) {
        for (const Subcommand &c : m_commands)
            m_out << c.name << '\n';
    } else if (form == QLatin1String("--options")) {
        // One line per option: its names, then its value's name when it takes one.
        const Subcommand *command = rest.size() > 1 ? find(rest[1]) : nullptr;
        if (rest.size() > 1 && !command)
            throw UsageError(QStringLiteral("unknown command '%1' (see ratescope-cli --help)").arg(rest[1]));
        for (const QCommandLineOption &o : command ? command->options : m_globalOptions) {
            for (const QString &n : o.names())
                m_out << (n.size() == 1 ? "-" : "--") << n << ' ';
            m_out << o.valueName() << '\n';
        }
    } else if (form == QLatin1String("--algorithms")) {
        for (const QString &a : algorithmNames())
            m_out << a << '\n';
    } else if (form.isEmpty()) {
        m_out << globalHelp();
    } else if (const Subcommand *command = find(form); command && rest.size() == 1) {
        m_out << commandHelp(*command); // help COMMAND: as COMMAND --help
    } else {
        throw UsageError(QStringLiteral("help takes --man, --commands, --options [COMMAND], --algorithms or a command, not '%1'")
                             .arg(shown(rest.join(QLatin1Char(' ')))));
    }
    return ExitOk;
}

} // namespace ratescope::cli
