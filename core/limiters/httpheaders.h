// What a service built on these limiters tells its HTTP client about a decision: Retry-After on
// a denial, and the RateLimit-Policy / RateLimit fields of the IETF draft "RateLimit header
// fields for HTTP" (draft-ietf-httpapi-ratelimit-headers, structured-field syntax of draft 08
// onwards). Computed from the decision and the limits alone: no second call to Redis.
#pragma once

#include "limiters/algorithm.h"
#include "limiters/limiter.h"

#include <QList>
#include <QPair>
#include <QString>

namespace ratescope {

// Name, value pairs in the order a response would carry them:
//   Retry-After: 3                         (denials only; whole seconds, rounded up, at least 1)
//   RateLimit-Policy: "api";q=100;w=60     (quota and window in whole seconds, rounded up)
//   RateLimit: "api";r=0;t=3               (remaining, and seconds until the quota is back)
// policyName names the quota policy; it is used when it is a non-empty string of printable
// ASCII (what a structured-field String may hold), else "default".
QList<QPair<QString, QString>> rateLimitHeaders(const Decision &decision, const LimitSpec &spec, const QString &policyName = {});

} // namespace ratescope
