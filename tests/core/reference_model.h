// Reference models of the six limiter algorithms (docs/scripts.md, lua/*.lua headers).
//
// The oracle for tests that replay random steps against the Lua scripts. Written for clarity,
// not speed, and deliberately NOT a transliteration of the Lua:
//  - each algorithm only says how much is in use at a time t and what an admission records,
//    with exact __int128 arithmetic instead of the scripts' muldiv/ticket tricks;
//  - a request is allowed iff used(t) + cost <= limit (for the token bucket and GCRA this is
//    the same as "tokens >= cost" and "new_tat - now <= window");
//  - retry_after and reset_after are not closed formulas but found by binary search over time:
//    the first t + d with used(t + d) + cost <= limit, resp. used(t + d) == 0. With no further
//    admissions used() never grows as time passes, so the search is exact.
// Plain C++20, header-only, no Qt, no Redis.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace ratescope::reference {

struct Decision {
    bool allowed = false;
    int64_t limit = 0;
    int64_t used = 0;
    int64_t remaining = 0;
    int64_t retryAfterUs = 0;
    int64_t resetAfterUs = 0;
    bool operator==(const Decision &) const = default;
};

inline std::string toString(const Decision &d)
{
    return std::string(d.allowed ? "allowed" : "denied") + " limit=" + std::to_string(d.limit) + " used=" + std::to_string(d.used) +
           " remaining=" + std::to_string(d.remaining) + " retry_after_us=" + std::to_string(d.retryAfterUs) +
           " reset_after_us=" + std::to_string(d.resetAfterUs);
}

class Model {
public:
    virtual ~Model() = default;
    // Decide and consume, like the scripts' "check" mode.
    virtual Decision check(int64_t nowUs, int64_t cost) = 0;
    // The same answer without consuming, like "peek".
    virtual Decision peek(int64_t nowUs, int64_t cost) const = 0;
};

namespace detail {

__extension__ typedef __int128 i128; // exact products: 10^12 * 3.2e13 overflows int64

inline int64_t floorDiv(i128 a, i128 b)
{
    i128 q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        --q;
    return static_cast<int64_t>(q);
}

// Every algorithm below provides:
//   int64_t effectiveNow(int64_t now) const   time never goes backwards within a key
//   int64_t used(int64_t t) const             in use at time t if nothing else is admitted
//   void admit(int64_t t, int64_t cost)        record an admission at t
// Algorithms are copied by peek(), so they hold their whole state by value.

// Entries (time, cost); an entry counts while t - time < window.
struct SlidingLog {
    int64_t limit, window;
    std::deque<std::pair<int64_t, int64_t>> entries;

    int64_t effectiveNow(int64_t now) const { return entries.empty() ? now : std::max(now, entries.back().first); }
    int64_t used(int64_t t) const
    {
        int64_t sum = 0;
        for (const auto &[time, cost] : entries)
            if (t - time < window)
                sum += cost;
        return sum;
    }
    // Like the script, every check (denied ones too) drops what has expired at t. It matters
    // only when the caller's clock goes back: a dropped entry stays dropped.
    void prune(int64_t t)
    {
        while (!entries.empty() && t - entries.front().first >= window)
            entries.pop_front();
    }
    void admit(int64_t t, int64_t cost)
    {
        prune(t);
        entries.emplace_back(t, cost);
    }
};

// Clock-aligned windows: id = floor(t / window). Counts per window id.
struct WindowCounts {
    int64_t limit, window;
    std::map<int64_t, int64_t> counts; // window id -> admitted cost
    int64_t lastAdmittedId = INT64_MIN;

    int64_t idOf(int64_t t) const { return floorDiv(t, window); }
    int64_t count(int64_t id) const
    {
        auto it = counts.find(id);
        return it == counts.end() ? 0 : it->second;
    }
    // A clock that went back into an older window is read as the start of the newest window
    // with admissions.
    int64_t effectiveNow(int64_t now) const { return idOf(now) < lastAdmittedId ? lastAdmittedId * window : now; }
    void record(int64_t t, int64_t cost)
    {
        lastAdmittedId = idOf(t);
        counts[lastAdmittedId] += cost;
        counts.erase(counts.begin(), counts.lower_bound(lastAdmittedId - 1));
    }
};

struct FixedWindow : WindowCounts {
    int64_t used(int64_t t) const { return count(idOf(t)); }
    void admit(int64_t t, int64_t cost) { record(t, cost); }
};

// used = floor(prev * (window - elapsed) / window) + curr.
struct SlidingCounter : WindowCounts {
    int64_t used(int64_t t) const
    {
        const int64_t id = idOf(t);
        const int64_t elapsed = t - id * window;
        const i128 weightedPrev = i128(count(id - 1)) * (window - elapsed);
        return floorDiv(weightedPrev, window) + count(id);
    }
    void admit(int64_t t, int64_t cost) { record(t, cost); }
};

// Sub-buckets: bucket j holds what was admitted while floor(t * B / window) == j. used = the
// buckets of the last B whole, plus the one before weighted by how much of it is still inside
// (now - window, now]: floor(c * (window - e) / window), e = (t * B) mod window.
struct SlidingBuckets {
    int64_t limit, window, buckets;
    std::map<int64_t, int64_t> counts; // bucket id -> admitted cost
    int64_t lastAdmittedId = INT64_MIN;

    int64_t idOf(int64_t t) const { return floorDiv(i128(t) * buckets, window); }
    int64_t elapsedOf(int64_t t) const { return static_cast<int64_t>(i128(t) * buckets - i128(idOf(t)) * window); }
    int64_t count(int64_t id) const
    {
        auto it = counts.find(id);
        return it == counts.end() ? 0 : it->second;
    }
    // A clock that went back into an older bucket is read as the first microsecond of the
    // newest bucket with admissions.
    int64_t effectiveNow(int64_t now) const
    {
        if (idOf(now) >= lastAdmittedId)
            return now;
        return -floorDiv(-i128(lastAdmittedId) * window, buckets); // ceil(id * window / B)
    }
    int64_t used(int64_t t) const
    {
        const int64_t id = idOf(t);
        int64_t sum = 0;
        for (const auto &[j, c] : counts)
            if (j > id - buckets && j <= id)
                sum += c;
        return sum + floorDiv(i128(count(id - buckets)) * (window - elapsedOf(t)), window);
    }
    void admit(int64_t t, int64_t cost)
    {
        lastAdmittedId = idOf(t);
        counts[lastAdmittedId] += cost;
        counts.erase(counts.begin(), counts.lower_bound(lastAdmittedId - buckets));
    }
};

// Level in units of 1/window token, so refills are exact: limit tokens per window
// = limit units per microsecond.
struct TokenBucket {
    int64_t limit, window;
    i128 level = i128(limit) * window; // no key = full bucket
    int64_t updatedAt = INT64_MIN;     // INT64_MIN: never admitted anything

    int64_t effectiveNow(int64_t now) const { return std::max(now, updatedAt); }
    i128 levelAt(int64_t t) const
    {
        const i128 full = i128(limit) * window;
        if (updatedAt == INT64_MIN)
            return full;
        return std::min(full, level + i128(t - updatedAt) * limit);
    }
    int64_t used(int64_t t) const { return limit - floorDiv(levelAt(t), window); }
    void admit(int64_t t, int64_t cost)
    {
        level = levelAt(t) - i128(cost) * window;
        updatedAt = t;
    }
};

// Theoretical arrival time in units of 1/limit microsecond (emission interval T = window/limit
// is then exactly `window` units).
struct Gcra {
    int64_t limit, window;
    i128 tat = 0; // in 1/limit us; 0 = fresh key

    int64_t effectiveNow(int64_t now) const { return now; }
    i128 startAt(int64_t t) const { return std::max(tat, i128(t) * limit); }
    int64_t used(int64_t t) const
    {
        // remaining = floor((window - (max(tat, t) - t)) * limit / window)
        const i128 ahead = startAt(t) - i128(t) * limit; // 1/limit us
        const i128 remaining = std::max<i128>(0, floorDiv(i128(window) * limit - ahead, window));
        return limit - static_cast<int64_t>(remaining);
    }
    void admit(int64_t t, int64_t cost) { tat = startAt(t) + i128(cost) * window; }
};

// Smallest d >= lo with pred(d), given pred is monotone and pred(hi) holds for some hi: the
// first guess `hi` is doubled until it does (a clock gone back can leave a GCRA key more
// than a window ahead).
template <class Pred> int64_t firstTrue(int64_t lo, int64_t hi, Pred pred)
{
    while (!pred(hi)) {
        if (hi > (int64_t(1) << 60))
            throw std::logic_error("reference model: used() never reaches the goal");
        lo = hi + 1;
        hi *= 2;
    }
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (pred(mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

template <class Algo> class ModelOf final : public Model {
public:
    explicit ModelOf(Algo algo)
        : m_algo(std::move(algo))
    {
    }

    Decision check(int64_t nowUs, int64_t cost) override
    {
        const Decision d = decide(m_algo, nowUs, cost);
        if constexpr (requires { m_algo.prune(nowUs); })
            if (!d.allowed)
                m_algo.prune(m_algo.effectiveNow(nowUs));
        return d;
    }
    Decision peek(int64_t nowUs, int64_t cost) const override
    {
        Algo scratch = m_algo;
        return decide(scratch, nowUs, cost);
    }

private:
    static Decision decide(Algo &a, int64_t nowUs, int64_t cost)
    {
        if (cost < 1 || cost > a.limit)
            throw std::invalid_argument("reference model: cost must be in 1..limit");
        const int64_t t = a.effectiveNow(nowUs);
        Decision d;
        d.limit = a.limit;
        d.allowed = a.used(t) + cost <= a.limit;
        // Two windows usually suffice: by then even the sliding counter has forgotten everything.
        const int64_t horizon = 2 * a.window;
        if (d.allowed)
            a.admit(t, cost);
        else
            d.retryAfterUs = firstTrue(1, horizon, [&](int64_t w) { return a.used(t + w) + cost <= a.limit; });
        d.used = a.used(t);
        d.remaining = std::max<int64_t>(0, a.limit - d.used);
        d.resetAfterUs = firstTrue(0, horizon, [&](int64_t w) { return a.used(t + w) == 0; });
        return d;
    }

    Algo m_algo;
};

} // namespace detail

// algorithm: "sliding-log", "sliding-counter", "fixed-window", "token-bucket", "gcra" or
// "sliding-buckets" (with `buckets` per window). limit 1..10^12, windowUs 1000..31622400000000,
// as for the scripts.
inline std::unique_ptr<Model> makeModel(std::string_view algorithm, int64_t limit, int64_t windowUs, int64_t buckets = 60)
{
    using namespace detail;
    if (limit < 1 || windowUs < 1)
        throw std::invalid_argument("reference model: limit and window must be positive");
    if (algorithm == "sliding-log")
        return std::make_unique<ModelOf<SlidingLog>>(SlidingLog{limit, windowUs, {}});
    if (algorithm == "sliding-counter")
        return std::make_unique<ModelOf<SlidingCounter>>(SlidingCounter{{limit, windowUs, {}}});
    if (algorithm == "fixed-window")
        return std::make_unique<ModelOf<FixedWindow>>(FixedWindow{{limit, windowUs, {}}});
    if (algorithm == "token-bucket")
        return std::make_unique<ModelOf<TokenBucket>>(TokenBucket{limit, windowUs});
    if (algorithm == "gcra")
        return std::make_unique<ModelOf<Gcra>>(Gcra{limit, windowUs});
    if (algorithm == "sliding-buckets")
        return std::make_unique<ModelOf<SlidingBuckets>>(SlidingBuckets{limit, windowUs, buckets, {}});
    throw std::invalid_argument("reference model: unknown algorithm " + std::string(algorithm));
}

} // namespace ratescope::reference
