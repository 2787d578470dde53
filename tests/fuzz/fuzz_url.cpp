// Connection URLs (redis/connectionoptions.h, docs/urls.md) and host:port forms, as typed on a
// command line or stored in a profile. Input: the URL (one line: a newline ends it).
#include "fuzzsupport.h"

#include "redis/connectionoptions.h"

using namespace ratescope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QString text = QString::fromUtf8(fuzz::bytes(data, size));
    try {
        const ConnectionOptions options = ConnectionOptions::fromUrl(text);
        // What a URL says, printed and read again, says the same.
        const QString url = options.toUrl(true);
        options.toUrl(false);
        options.endpoint();
        ConnectionOptions again;
        try {
            again = ConnectionOptions::fromUrl(url);
        } catch (const UsageError &e) {
            fuzz::fail("toUrl() wrote a URL fromUrl() refuses",
                       (text + QStringLiteral(" -> ") + url + QStringLiteral(": ") + QString::fromUtf8(e.what())).toUtf8());
        }
        // Timeouts and the client name are settings the URL form does not print.
        again.connectTimeoutMs = options.connectTimeoutMs;
        again.commandTimeoutMs = options.commandTimeoutMs;
        again.clientName = options.clientName;
        fuzz::check(again == options, "toUrl() does not round-trip", (text + QStringLiteral(" -> ") + url).toUtf8());
        for (const HostPort &seed : options.seeds)
            options.forSentinel(seed);
        // The printed form hides the passwords and keeps the rest.
        const ConnectionOptions hidden = ConnectionOptions::fromUrl(options.toUrl(false));
        fuzz::check(hidden.password == (options.password.isEmpty() ? QString() : QStringLiteral("***")) &&
                        hidden.sentinelPassword == (options.sentinelPassword.isEmpty() ? QString() : QStringLiteral("***")),
                    "toUrl(false) shows a password", text.toUtf8());
    } catch (const Error &) {
    }
    try {
        const HostPort hp = HostPort::parse(text);
        fuzz::check(HostPort::parse(hp.toString()) == hp, "HostPort does not round-trip", text.toUtf8());
    } catch (const Error &) {
    }
    return 0;
}
