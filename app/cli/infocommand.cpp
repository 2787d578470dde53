// `ratescope-cli info`: which server this is and how big.
#include "cli.h"

#include "serverinfo.h"

namespace ratescope::cli {

namespace {

int runInfo(Cli &cli)
{
    const ServerInfo info = ServerInfo::fetch(cli.connection());
    if (cli.json()) {
        cli.printJson({
            {QStringLiteral("version"), info.version},
            {QStringLiteral("mode"), info.mode},
            {QStringLiteral("role"), info.role},
            {QStringLiteral("db_size"), info.dbSize},
            {QStringLiteral("used_memory"), info.usedMemory},
        });
        return ExitOk;
    }
    cli.printFields({
        {QStringLiteral("server"), cli.connection().options().toUrl()},
        {QStringLiteral("version"), info.version},
        {QStringLiteral("mode"), info.mode},
        {QStringLiteral("role"), info.role},
        {QStringLiteral("db_size"), QString::number(info.dbSize)},
        {QStringLiteral("used_memory"), QStringLiteral("%1 (%2 bytes)").arg(formatBytes(info.usedMemory)).arg(info.usedMemory)},
    });
    return ExitOk;
}

} // namespace

void registerInfo(QList<Subcommand> &commands)
{
    commands.append({QStringLiteral("info"), QStringLiteral("info"),
                     QStringLiteral("Server version, mode, role, database size and memory."), {}, false, runInfo});
}

} // namespace ratescope::cli
