#include "outcome.h"

#include "base/errors.h"

namespace ratescope::ui {

Failure Failure::from(std::exception_ptr error)
{
    try {
        std::rethrow_exception(error);
    } catch (const AuthError &e) {
        return {Kind::Auth, e.message()};
    } catch (const ConnectionError &e) {
        return {Kind::Connection, e.message()};
    } catch (const ReplyError &e) {
        // A server that wants a login first (NOAUTH) or refuses the one given (WRONGPASS):
        // credentials are needed, not a retry.
        if (e.prefix() == QLatin1String("NOAUTH") || e.prefix() == QLatin1String("WRONGPASS"))
            return {Kind::Auth, e.message()};
        return {Kind::Reply, e.message()};
    } catch (const ReadOnlyError &e) {
        return {Kind::ReadOnly, e.message()};
    } catch (const ConflictError &e) {
        return {Kind::Conflict, e.message()};
    } catch (const UsageError &e) {
        return {Kind::Usage, e.message()};
    } catch (const Error &e) {
        return {Kind::Other, e.message()};
    } catch (const std::exception &e) {
        return {Kind::Other, QString::fromUtf8(e.what())};
    } catch (...) {
        return {Kind::Other, QStringLiteral("unexpected failure")};
    }
}

} // namespace ratescope::ui
