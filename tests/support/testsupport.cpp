#include "testsupport.h"

#include "builtpaths.h"

#include "redis/connection.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QProcess>
#include <QThread>

#include <algorithm>
#include <stdexcept>

namespace ratescope::test {

SandboxServer::Config passwordConfig(const QString &password)
{
    SandboxServer::Config c;
    c.configLines = {QStringLiteral("requirepass %1").arg(password)};
    return c;
}

namespace {

void openssl(const QString &dir, const QStringList &args)
{
    QProcess p;
    p.setWorkingDirectory(dir);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral("openssl"), args);
    if (!p.waitForFinished(30000) || p.exitCode() != 0)
        throw std::runtime_error(
            ("openssl " + args.join(QLatin1Char(' ')) + ": " + QString::fromUtf8(p.readAll()) + p.errorString()).toStdString());
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
        QStringLiteral("user reader on >readerpw ~* &* -@all +@read +@connection +evalsha_ro +eval_ro +fcall_ro"),
    };
    return c;
}

namespace {

// Polls until ok() or the deadline: bounded, for things the servers do in their own time.
template <typename Ok> void waitUntil(Ok ok, int timeoutMs, const char *what)
{
    QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        try {
            if (ok())
                return;
        } catch (const std::exception &) {
        }
        QThread::msleep(50);
    }
    throw std::runtime_error(std::string("timed out waiting for ") + what);
}

Reply ask(const ConnectionOptions &o, const Command &c)
{
    Connection conn(o);
    return conn.command(c);
}

} // namespace

TestCluster::TestCluster(int masters, int replicasPerMaster)
{
    QStringList addresses;
    for (int i = 0; i < masters * (1 + replicasPerMaster); ++i) {
        SandboxServer::Config c;
        // Without full coverage, the other masters go on serving their slots when one dies
        // (as many deployments run): what a test of a dead master needs, whatever its pace.
        // A replica's first sync starts at once, not after the 5 s a master waits by default
        // for more replicas to share a diskless transfer.
        c.configLines = {QStringLiteral("cluster-enabled yes"), QStringLiteral("cluster-config-file nodes.conf"),
                         QStringLiteral("cluster-node-timeout 5000"), QStringLiteral("cluster-require-full-coverage no"),
                         QStringLiteral("repl-diskless-sync-delay 0"), QStringLiteral("shutdown-timeout 0")};
        m_nodes.push_back(std::make_unique<SandboxServer>(c));
        m_nodes.back()->start();
        addresses << QStringLiteral("127.0.0.1:%1").arg(m_nodes.back()->port());
    }
    QProcess create;
    create.setProcessChannelMode(QProcess::MergedChannels);
    create.start(QStringLiteral("redis-cli"), QStringList{QStringLiteral("--cluster"), QStringLiteral("create")} + addresses +
                                                  QStringList{QStringLiteral("--cluster-replicas"), QString::number(replicasPerMaster),
                                                              QStringLiteral("--cluster-yes")});
    if (!create.waitForFinished(60000) || create.exitCode() != 0)
        throw std::runtime_error("redis-cli --cluster create failed: " + create.readAll().toStdString());
    for (auto &n : m_nodes) {
        const ConnectionOptions o = n->options();
        waitUntil([&] { return ask(o, {"CLUSTER", "INFO"}).bytes().contains("cluster_state:ok"); }, 30000, "cluster_state:ok");
        if (replicasPerMaster > 0)
            waitUntil(
                [&] {
                    const Reply slotMap = ask(o, {"CLUSTER", "SLOTS"});
                    return slotMap.size() > 0 && std::all_of(slotMap.elements().begin(), slotMap.elements().end(), [&](const Reply &range) {
                               return range.size() >= size_t(3 + replicasPerMaster);
                           });
                },
                30000, "replicas in CLUSTER SLOTS");
    }
}

QString TestCluster::url() const
{
    QStringList seeds;
    for (const auto &n : m_nodes)
        seeds << QStringLiteral("127.0.0.1:%1").arg(n->port());
    return QStringLiteral("redis-cluster://") + seeds.join(QLatin1Char(','));
}

QByteArray TestCluster::nodeId(int i)
{
    return ask(node(i).options(), {"CLUSTER", "MYID"}).bytes();
}

int TestCluster::ownerOf(const QByteArray &key)
{
    int any = 0;
    while (any < size() - 1 && !node(any).isRunning())
        ++any;
    const qint64 slot = ask(node(any).options(), {"CLUSTER", "KEYSLOT", key}).integer();
    const Reply slotMap = ask(node(any).options(), {"CLUSTER", "SLOTS"});
    for (const Reply &range : slotMap.elements())
        if (slot >= range[0].integer() && slot <= range[1].integer())
            for (int i = 0; i < size(); ++i)
                if (range[2][1].integer() == node(i).port())
                    return i;
    return -1;
}

int TestCluster::replicaOf(int master)
{
    for (int i = 0; i < size(); ++i) {
        if (i == master || !node(i).isRunning())
            continue;
        // ROLE of a replica: ["slave", master ip, master port, state, offset]
        const Reply role = ask(node(i).options(), {"ROLE"});
        if (role[0].bytes() == "slave" && role[2].integer() == node(master).port())
            return i;
    }
    return -1;
}

void TestCluster::waitUntilMaster(int i)
{
    const ConnectionOptions o = node(i).options();
    waitUntil(
        [&] {
            if (ask(o, {"ROLE"})[0].bytes() != "master")
                return false;
            // Every running node agrees (gossip has spread), and the cluster is ok.
            for (int j = 0; j < size(); ++j) {
                if (!node(j).isRunning())
                    continue;
                const ConnectionOptions other = node(j).options();
                if (!ask(other, {"CLUSTER", "INFO"}).bytes().contains("cluster_state:ok"))
                    return false;
                const Reply slotMap = ask(other, {"CLUSTER", "SLOTS"});
                if (std::none_of(slotMap.elements().begin(), slotMap.elements().end(),
                                 [&](const Reply &range) { return range[2][1].integer() == o.address.port; }))
                    return false;
            }
            return true;
        },
        30000, "a node to become master");
}

TestSentinel::TestSentinel(const QString &sentinelPassword)
    : m_sentinelPassword(sentinelPassword)
{
    // The replica's first sync at once (not after the default 5 s wait for more replicas).
    SandboxServer::Config master;
    master.configLines = {QStringLiteral("repl-diskless-sync-delay 0"), QStringLiteral("shutdown-timeout 0")};
    m_master = std::make_unique<SandboxServer>(master);
    m_master->start();
    SandboxServer::Config replica;
    replica.configLines = {QStringLiteral("replicaof 127.0.0.1 %1").arg(m_master->port()), QStringLiteral("shutdown-timeout 0")};
    m_replica = std::make_unique<SandboxServer>(replica);
    m_replica->start();
    SandboxServer::Config sentinel;
    sentinel.sentinel = true;
    sentinel.configLines = {QStringLiteral("sentinel monitor mymaster 127.0.0.1 %1 1").arg(m_master->port()),
                            QStringLiteral("sentinel down-after-milliseconds mymaster 2000"),
                            QStringLiteral("sentinel failover-timeout mymaster 10000")};
    if (!sentinelPassword.isEmpty())
        sentinel.configLines << QStringLiteral("requirepass %1").arg(sentinelPassword);
    m_sentinel = std::make_unique<SandboxServer>(sentinel);
    m_sentinel->start();
    ConnectionOptions s = m_sentinel->options();
    s.password = sentinelPassword;
    // The sentinel's own clock, sped up for tests (SENTINEL DEBUG, Redis 7): INFO from every
    // instance each second instead of every 10, and hello messages every 250 ms instead of 2 s.
    // A failover's last step, demoting the old master that still answers, waits for that
    // master's next INFO and then for four hello periods: 2-3 s instead of 10-18 s.
    const Reply faster = ask(s, {"SENTINEL", "DEBUG", "info-period", "1000", "publish-period", "250"});
    if (faster.isError())
        throw std::runtime_error("SENTINEL DEBUG: " + faster.text().toStdString());
    waitUntil(
        [&] {
            return ask(m_replica->options(), {"INFO", "replication"}).bytes().contains("master_link_status:up");
        },
        30000, "the replica to sync");
    waitUntil([&] { return ask(s, {"SENTINEL", "REPLICAS", "mymaster"}).size() == 1; }, 30000, "the sentinel to find the replica");
}

QString TestSentinel::url() const
{
    QString url = QStringLiteral("redis-sentinel://127.0.0.1:%1/mymaster").arg(m_sentinel->port());
    if (!m_sentinelPassword.isEmpty())
        url += QStringLiteral("?sentinel_password=") + m_sentinelPassword;
    return url;
}

void TestSentinel::failover()
{
    ConnectionOptions s = m_sentinel->options();
    s.password = m_sentinelPassword;
    // The replica must have everything before it takes over.
    ask(m_master->options(), {"WAIT", "1", "5000"});
    // SENTINEL FAILOVER is refused until the sentinel has seen the replica as healthy.
    waitUntil([&] { return !ask(s, {"SENTINEL", "FAILOVER", "mymaster"}).isError(); }, 30000, "SENTINEL FAILOVER to be accepted");
    waitUntil(
        [&] {
            const Reply addr = ask(s, {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"});
            // The sentinel names the promoted replica while the failover is still running;
            // it is over (and +switch-master announced) once the old master is demoted.
            return addr.size() == 2 && addr[1].toInteger() == m_replica->port() &&
                   ask(m_replica->options(), {"ROLE"})[0].bytes() == "master" && ask(m_master->options(), {"ROLE"})[0].bytes() == "slave";
        },
        30000, "the failover to complete");
}

namespace {

CliResult runProcess(const QString &program, const QStringList &args, const QByteArray &stdinData, int timeoutMs)
{
    QProcess p;
    p.start(program, args);
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

} // namespace

QByteArray keyspaceSnapshot(Connection &connection)
{
    const Reply keys = connection.command({"KEYS", "*"}); // kept: elements() refers into it
    QByteArrayList names;
    for (const Reply &k : keys.elements())
        names << k.bytes();
    std::sort(names.begin(), names.end());
    QByteArray all;
    for (const QByteArray &k : names)
        all += k + "=" + connection.command({"DUMP", k}).bytes().toHex() + ";";
    return all;
}

std::map<QString, QJsonObject> keysRows(const QString &url, const QStringList &extra)
{
    const CliResult r = runCli(QStringList{QStringLiteral("--url"), url, QStringLiteral("--json"), QStringLiteral("keys")} + extra);
    std::map<QString, QJsonObject> rows;
    for (const QByteArray &line : r.out.split('\n'))
        if (!line.trimmed().isEmpty()) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            rows[o.value(QStringLiteral("key")).toString()] = o;
        }
    return rows;
}

std::vector<QJsonObject> jsonObjects(const QByteArray &out)
{
    std::vector<QJsonObject> lines;
    for (const QByteArray &line : out.split('\n'))
        if (!line.trimmed().isEmpty())
            lines.push_back(QJsonDocument::fromJson(line).object());
    return lines;
}

CliResult runCli(const QStringList &args, const QByteArray &stdinData, int timeoutMs)
{
    return runProcess(BuiltPaths::cli(), args, stdinData, timeoutMs);
}

CliResult runCliBytes(const QList<QByteArray> &args, const QByteArray &stdinData, int timeoutMs)
{
    QString script = QStringLiteral("exec '%1'").arg(BuiltPaths::cli());
    for (const QByteArray &a : args) {
        Q_ASSERT(!a.contains('\0'));
        script += QStringLiteral(" $'");
        for (const char c : a)
            script += QStringLiteral("\\x%1").arg(uchar(c), 2, 16, QLatin1Char('0'));
        script += QLatin1Char('\'');
    }
    return runProcess(QStringLiteral("/bin/bash"), {QStringLiteral("-c"), script}, stdinData, timeoutMs);
}

} // namespace ratescope::test
