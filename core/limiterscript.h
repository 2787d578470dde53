// One limiter script from lua/: its source as compiled into the binary, and running it
// by EVALSHA with recovery from an explicit NOSCRIPT only.
#pragma once

#include "algorithm.h"
#include "resp.h"

namespace ratescope {

class Connection;

class LimiterScript {
public:
    static const LimiterScript &forAlgorithm(Algorithm algorithm);

    Algorithm algorithm() const { return m_algorithm; }
    const QByteArray &source() const { return m_source; }
    const QByteArray &sha1() const { return m_sha1; } // hex, as SCRIPT LOAD returns it

    // EVALSHA (EVALSHA_RO when readOnly) with one key. Only on a NOSCRIPT reply the script
    // is loaded (EVAL_RO for read-only callers, who may lack SCRIPT LOAD) and run again,
    // once: any other failure may have counted the request and is thrown as is.
    Reply run(Connection &connection, const QByteArray &key, const QList<QByteArray> &argv, bool readOnly) const;
    // The EVALSHA command, for callers that pipeline (and handle NOSCRIPT themselves).
    Command command(const QByteArray &key, const QList<QByteArray> &argv, bool readOnly) const;
    // Makes sure the server has the script cached (SCRIPT LOAD).
    void load(Connection &connection) const;

private:
    explicit LimiterScript(Algorithm algorithm);

    Algorithm m_algorithm;
    QByteArray m_source;
    QByteArray m_sha1;
};

} // namespace ratescope
