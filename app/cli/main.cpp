// ratescope-cli: the headless face of Ratescope.
#include "cli.h"

#include <QCoreApplication>

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("ratescope-cli"));
    QCoreApplication::setApplicationVersion(QStringLiteral(RATESCOPE_VERSION));
    ratescope::cli::Cli cli;
    return cli.run(QCoreApplication::arguments());
}
