// Shared test fixtures: private servers with TLS material and ACL users, and a CLI runner.
#pragma once

#include "sandboxserver.h"

#include <QByteArray>
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
//   script commands, any key (what inspection must get by with).
SandboxServer::Config aclConfig();

struct CliResult {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};
// Runs the built ratescope-cli with a bounded wait.
CliResult runCli(const QStringList &args, const QByteArray &stdinData = {}, int timeoutMs = 60000);

} // namespace ratescope::test
