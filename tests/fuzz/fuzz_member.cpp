// Sliding-log entries as another service, or an old Ratescope, left them (formats/keykind.h,
// formats/usage.h, keys/logwindow.h): the ticket member ("245:4": a length-coded ticket and
// its cost) and its cost, a score as text in each unit, and the score bounds of a time range.
// Input: the member, a newline, the score as Redis prints it.
#include "fuzzsupport.h"

#include "formats/keykind.h"
#include "formats/scoreunit.h"
#include "formats/usage.h"
#include "keys/logwindow.h"
#include "limiters/algorithm.h"

#include <cmath>

using namespace ratescope;

namespace {

bool digits(const QByteArray &s)
{
    return !s.isEmpty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The member format spelled out again: <k nines><digit c><9k+c digits>[:<1..13 digits>].
bool ticketMember(const QByteArray &member)
{
    const qsizetype colon = member.indexOf(':');
    const QByteArray ticket = colon < 0 ? member : member.left(colon);
    if (colon >= 0 && (!digits(member.mid(colon + 1)) || member.size() - colon - 1 > 13))
        return false;
    if (!digits(ticket))
        return false;
    qsizetype k = 0;
    while (k < ticket.size() && ticket[k] == '9')
        ++k;
    if (k == ticket.size() || (k == 0 && ticket[0] == '0'))
        return false;
    return ticket.size() - k - 1 == 9 * k + (ticket[k] - '0');
}

void member(const QByteArray &m)
{
    const bool ticket = isTicketMember(m);
    fuzz::check(ticket == ticketMember(m), "isTicketMember disagrees with the format", m);
    const qint64 cost = memberCost(m);
    fuzz::check(cost >= 1, "a cost below 1", m);
    if (ticket && m.contains(':')) {
        const qint64 written = m.mid(m.indexOf(':') + 1).toLongLong();
        fuzz::check(cost == (written > 0 ? written : 1), "memberCost is not the member's cost", m);
    } else {
        fuzz::check(cost == 1, "a cost for what is no ticket member", m);
    }
}

void score(const QByteArray &text)
{
    bool ok = false;
    const double s = text.toDouble(&ok);
    detectScoreUnit(s);
    for (ScoreUnit unit : {ScoreUnit::Seconds, ScoreUnit::Milliseconds, ScoreUnit::Microseconds}) {
        const qint64 us = scoreToUs(s, double(scoreUnitUs(unit)));
        fuzz::check(std::abs(us) <= (qint64(1) << 62), "scoreToUs out of its clamp", text);
    }
    // The bounds of a time range: the smallest score whose time is at least t.
    const qint64 t = fuzz::number(text, -1);
    if (t < 0 || t > kMaxNowUs)
        return;
    for (ScoreUnit unit : {ScoreUnit::Seconds, ScoreUnit::Milliseconds, ScoreUnit::Microseconds}) {
        const double per = double(scoreUnitUs(unit));
        const double bound = scoreBound(t, unit);
        fuzz::check(scoreToUs(bound, per) >= t, "scoreBound's score is before the time", text + ' ' + scoreUnitName(unit).toUtf8());
        fuzz::check(scoreToUs(std::nextafter(bound, -HUGE_VAL), per) < t, "scoreBound is not the smallest score",
                    text + ' ' + scoreUnitName(unit).toUtf8());
        fuzz::check(scoreBoundText(bound).toDouble() == bound, "scoreBoundText does not round-trip", text);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const fuzz::Lines in = fuzz::splitLines(fuzz::bytes(data, size), 1);
    member(in.lines[0]);
    score(in.rest);
    return 0;
}
