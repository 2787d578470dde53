// Shared test fixtures: private servers with TLS material and ACL users, and a CLI runner.
#pragma once

#include "redis/connection.h"
#include "redis/sandboxserver.h"

#include <map>
#include <memory>
#include <vector>

#include <QByteArray>
#include <QJsonObject>
#include <QStringList>

namespace ratescope::test {

// A CA, a server certificate for localhost/127.0.0.1/::1 and a client certificate, made
// with the openssl command in dir at test time (EC keys: fast to generate).
struct TlsFiles {
    QString ca, serverCert, serverKey, clientCert, clientKey;
};
TlsFiles makeTlsFiles(const QString &dir);

// A server config with ACL users for the tests:
//   admin/adminpw: everything; reader/readerpw: +@read +@connection and the read-only
//   script and function commands (EVALSHA_RO, EVAL_RO, FCALL_RO), any key (what inspection
//   must get by with).
SandboxServer::Config aclConfig();

// A server that wants a password first (requirepass): NOAUTH until AUTH password, WRONGPASS
// for any other.
SandboxServer::Config passwordConfig(const QString &password);

// A Redis Cluster of `masters` nodes made with `redis-cli --cluster create`, ready
// (cluster_state:ok everywhere) when constructed; stopped when destroyed.
class TestCluster {
public:
    // Nodes 0..masters-1 are the masters; with replicas, each master gets that many
    // (the nodes after them), and the constructor waits until every node knows them.
    explicit TestCluster(int masters = 3, int replicasPerMaster = 0);
    QString url() const; // redis-cluster://127.0.0.1:p1,127.0.0.1:p2,...
    int size() const { return int(m_nodes.size()); }
    SandboxServer &node(int i) { return *m_nodes[size_t(i)]; }
    QByteArray nodeId(int i);
    // The node index serving a key's slot, asked of the cluster itself (a running node).
    int ownerOf(const QByteArray &key);
    // The node replicating node `master`, by asking each running node its ROLE; -1 if none.
    int replicaOf(int master);
    // Waits (bounded) until node i is a master and every running node sees it serving slots
    // and the cluster ok.
    void waitUntilMaster(int i);

private:
    std::vector<std::unique_ptr<SandboxServer>> m_nodes;
};

// A master, one replica and one sentinel monitoring them as "mymaster".
class TestSentinel {
public:
    explicit TestSentinel(const QString &sentinelPassword = {});
    QString url() const; // redis-sentinel://127.0.0.1:<sentinel>/mymaster
    SandboxServer &master() { return *m_master; }
    SandboxServer &replica() { return *m_replica; }
    SandboxServer &sentinel() { return *m_sentinel; }
    // Asks the sentinel to fail over and waits (bounded) until the replica is the master.
    void failover();

private:
    std::unique_ptr<SandboxServer> m_master, m_replica, m_sentinel;
    QString m_sentinelPassword;
};

// Every key of the database and its DUMP, sorted: "nothing changed" means two snapshots are
// equal. KEYS: test-only, tiny keyspaces.
QByteArray keyspaceSnapshot(Connection &connection);

// `ratescope-cli --json keys` against `url`, one object per row, by key.
std::map<QString, QJsonObject> keysRows(const QString &url, const QStringList &extra = {});

struct CliResult {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};
// Runs the built ratescope-cli with a bounded wait.
// ratescope-cli --json output, one object per line.
std::vector<QJsonObject> jsonObjects(const QByteArray &out);

CliResult runCli(const QStringList &args, const QByteArray &stdinData = {}, int timeoutMs = 60000);
// The same with arguments as bytes (keys that are not UTF-8, such as u:\xff), passed through
// bash's $'\xNN' quoting so that they reach the CLI's argv exactly. A NUL cannot be in argv.
CliResult runCliBytes(const QList<QByteArray> &args, const QByteArray &stdinData = {}, int timeoutMs = 60000);

} // namespace ratescope::test
