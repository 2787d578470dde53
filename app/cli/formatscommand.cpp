// `ratescope-cli formats`: the other libraries' limiter formats Ratescope reads, with the name
// a policy's --format takes, the key shape and where it comes from. Needs no server.
#include "cli.h"

#include "base/errors.h"
#include "formats/formatreaders.h"

#include <QJsonObject>

namespace ratescope::cli {

namespace {

int runFormats(Cli &cli)
{
    if (!cli.positional().isEmpty())
        throw UsageError(QStringLiteral("formats takes no arguments"));
    if (!cli.json())
        cli.out() << QStringLiteral("%1 %2 %3 %4\n")
                         .arg(QStringLiteral("NAME").leftJustified(22), QStringLiteral("TYPE").leftJustified(6),
                              QStringLiteral("READ AS").leftJustified(16), QStringLiteral("LIBRARY / KEY SHAPE"));
    for (const FormatReader *f : formatReaders()) {
        const QString family = f->family()     ? algorithmName(*f->family())
                               : f->readable() ? QStringLiteral("policy's algo")
                                               : QStringLiteral("never decoded");
        if (cli.json()) {
            QJsonObject o{{QStringLiteral("name"), f->name()},
                          {QStringLiteral("label"), f->label()},
                          {QStringLiteral("library"), f->library()},
                          {QStringLiteral("key_shape"), f->keyShape()},
                          {QStringLiteral("type"), QString::fromLatin1(f->type())},
                          {QStringLiteral("readable"), f->readable()}};
            if (f->family())
                o.insert(QStringLiteral("algorithm"), algorithmName(*f->family()));
            cli.printJson(o);
            continue;
        }
        cli.out() << QStringLiteral("%1 %2 %3 %4\n%5 %6\n")
                         .arg(f->name().leftJustified(22), QString::fromLatin1(f->type()).leftJustified(6), family.leftJustified(16),
                              f->library(), QString(46, QLatin1Char(' ')), f->keyShape());
    }
    return ExitOk;
}

} // namespace

void registerFormats(QList<Subcommand> &commands)
{
    commands.append({QStringLiteral("formats"),
                     QStringLiteral("formats"),
                     QStringLiteral("The other libraries' and gateways' limiter formats Ratescope reads: the name a policy's\n"
                                    "--format takes, the Redis type, the key shape and the library that writes it."),
                     {},
                     false,
                     runFormats});
}

} // namespace ratescope::cli
