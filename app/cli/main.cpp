// ratescope-cli: the headless face of Ratescope.
#include "cli.h"

#include <QCoreApplication>

int main(int argc, char **argv)
{
    QList<QByteArray> arguments; // the bytes given: keys are not necessarily text
    for (int i = 0; i < argc; ++i)
        arguments << QByteArray(argv[i]);
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("ratescope-cli"));
    QCoreApplication::setApplicationVersion(QStringLiteral(RATESCOPE_VERSION));
    ratescope::cli::Cli cli;
    return cli.run(arguments);
}
