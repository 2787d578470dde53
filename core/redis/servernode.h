// One server behind a connection, as status displays show it (Connection::nodes()).
#pragma once

#include "redis/connectionoptions.h"

#include <QString>

namespace ratescope {

struct ServerNode {
    HostPort address;
    QString role;       // "master", "replica", "standalone", "master (via sentinel)"
    QString slotRanges; // cluster masters: "0-5460"
    HostPort master;    // replicas: the master they copy
    QString link;       // replicas, when known: "online", "down", ...
    QString problem;    // why it did not answer the last status query; empty if it did
    // "master, slots 0-5460" / "replica of 127.0.0.1:7000 (link online)"
    QString describe() const;
};

} // namespace ratescope
