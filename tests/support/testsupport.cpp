#include "testsupport.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <stdexcept>

namespace ratescope::test {

namespace {

void openssl(const QString &dir, const QStringList &args)
{
    QProcess p;
    p.setWorkingDirectory(dir);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral("openssl"), args);
    if (!p.waitForFinished(30000) || p.exitCode() != 0)
        throw std::runtime_error(("openssl " + args.join(QLatin1Char(' ')) + ": " + QString::fromUtf8(p.readAll()) +
                                  p.errorString()).toStdString());
}

void writeFile(const QString &path, const QByteArray &data)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(data) != data.size())
        throw std::runtime_error(("cannot write " + path).toStdString());
}

void makeLeaf(const QString &dir, const QString &name, const QString &ext)
{
    const QStringList ec = {QStringLiteral("-newkey"), QStringLiteral("ec"), QStringLiteral("-pkeyopt"),
                            QStringLiteral("ec_paramgen_curve:prime256v1"), QStringLiteral("-nodes")};
    openssl(dir, QStringList{QStringLiteral("req")} + ec +
                     QStringList{QStringLiteral("-keyout"), name + QStringLiteral(".key"), QStringLiteral("-out"),
                                 name + QStringLiteral(".csr"), QStringLiteral("-subj"), QStringLiteral("/CN=") + name});
    writeFile(dir + QLatin1Char('/') + name + QStringLiteral(".ext"), ext.toUtf8());
    openssl(dir, {QStringLiteral("x509"), QStringLiteral("-req"), QStringLiteral("-in"), name + QStringLiteral(".csr"),
                  QStringLiteral("-CA"), QStringLiteral("ca.crt"), QStringLiteral("-CAkey"), QStringLiteral("ca.key"),
                  QStringLiteral("-CAcreateserial"), QStringLiteral("-days"), QStringLiteral("2"), QStringLiteral("-out"),
                  name + QStringLiteral(".crt"), QStringLiteral("-extfile"), name + QStringLiteral(".ext")});
}

} // namespace

TlsFiles makeTlsFiles(const QString &dir)
{
    openssl(dir, {QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"), QStringLiteral("ec"),
                  QStringLiteral("-pkeyopt"), QStringLiteral("ec_paramgen_curve:prime256v1"), QStringLiteral("-nodes"),
                  QStringLiteral("-keyout"), QStringLiteral("ca.key"), QStringLiteral("-out"), QStringLiteral("ca.crt"),
                  QStringLiteral("-days"), QStringLiteral("2"), QStringLiteral("-subj"), QStringLiteral("/CN=Ratescope Test CA")});
    makeLeaf(dir, QStringLiteral("server"),
             QStringLiteral("subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth\n"));
    makeLeaf(dir, QStringLiteral("client"), QStringLiteral("extendedKeyUsage=clientAuth\n"));
    const QDir d(dir);
    return {d.filePath(QStringLiteral("ca.crt")), d.filePath(QStringLiteral("server.crt")), d.filePath(QStringLiteral("server.key")),
            d.filePath(QStringLiteral("client.crt")), d.filePath(QStringLiteral("client.key"))};
}

SandboxServer::Config aclConfig()
{
    SandboxServer::Config c;
    c.configLines = {
        QStringLiteral("user default off"),
        QStringLiteral("user admin on >adminpw ~* &* +@all"),
        QStringLiteral("user reader on >readerpw ~* &* -@all +@read +@connection +evalsha_ro +eval_ro"),
    };
    return c;
}

CliResult runCli(const QStringList &args, const QByteArray &stdinData, int timeoutMs)
{
    QProcess p;
    p.start(QStringLiteral(RATESCOPE_CLI_PATH), args);
    CliResult r;
    if (!p.waitForStarted(10000))
        return r;
    if (!stdinData.isEmpty())
        p.write(stdinData);
    p.closeWriteChannel();
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(5000);
        r.err = "timed out";
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

} // namespace ratescope::test
