#!/usr/bin/env python3
"""The checks and the report of tools/soak.sh, from what the run recorded in its folder.

    python3 tools/soak-check.py WORKDIR

Reads WORKDIR/meta.json (the run's shape), events.jsonl (failovers and the restart),
console-events.jsonl (the console's --event-log), rss.csv, watch.jsonl, watch-runs.jsonl,
bursts.jsonl with bursts/*.json, and decisions/*.csv (every request of every burst). Prints the
report and exits 0 when every check held, 1 otherwise.

Over-admission: every admitted request's server time lies between its write (sent_us) and its
reply (time_us): the record and the servers share one clock on one host. A request counts as
over its limit only when that is certain whatever the exact times within those spans:

  fixed-window, sliding-counter  more than the limit in one clock-aligned window (a sliding
                                 counter: its weighted estimate of the previous window, taken
                                 at its smallest, plus the current count, above the limit)
  sliding-buckets                more than the limit in B consecutive buckets
  sliding-log                    the limit already admitted in the window before it
  token-bucket, gcra             more admitted after a decision than the capacity it reported
                                 (its remaining, plus under one for the fraction) plus the refill
                                 of the time since (limit per window); without such a decision,
                                 from a full bucket

An over-admission within a few seconds of a failover or of the restart (from 2 s before it
starts to one window plus 3 s after every sentinel names the new master) is put down to Redis'
asynchronous replication: the writes the old master took and had not passed on yet are lost,
those it took after the promotion (until its clients hear of the new master) too. Any other
fails the run.
"""

import bisect
import collections
import csv
import glob
import json
import math
import os
import re
import sys

BEFORE_EVENT_US = 2_000_000  # an over-admission this long before an event starts is its
AFTER_EVENT_US = 3_000_000  # ... and up to one window plus this after it has settled
TAIL_US = 10_000_000  # the load must have come back this long before the end


def load_jsonl(path):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except ValueError:
                rows.append({"unparsed": line})
    return rows


def duration_us(text):
    m = re.fullmatch(r"(\d+)(ms|s|m)", text)
    if not m:
        raise ValueError(f"unknown duration {text!r}")
    return int(m.group(1)) * {"ms": 1000, "s": 1_000_000, "m": 60_000_000}[m.group(2)]


def share(limit, shards, i):
    return limit // shards + (1 if i < limit % shards else 0)


def secs(us):
    return f"{us / 1e6:.2f} s"


def mib(kb):
    return f"{kb / 1024:.1f} MiB"


class Run:
    def __init__(self, work):
        self.work = work
        with open(os.path.join(work, "meta.json"), encoding="utf-8") as f:
            self.meta = json.load(f)
        self.start = self.meta["start_us"]
        self.end = self.meta["end_us"]
        self.events = [e for e in load_jsonl(os.path.join(work, "events.jsonl")) if "kind" in e]
        self.failures = []
        self.out = []

    def at(self, us):
        """+12.3s: since the load started."""
        d = (us - self.start) / 1e6
        return f"+{int(d // 60)}m{d % 60:04.1f}s" if d >= 60 else f"+{d:.1f}s"

    def say(self, text=""):
        self.out.append(text)

    def event_window(self, e, window_us):
        end = e.get("promoted_us") or e.get("settled_us") or e["start_us"]
        return e["start_us"] - BEFORE_EVENT_US, end + window_us + AFTER_EVENT_US

    def event_for(self, us, window_us):
        """The latest event whose window holds us."""
        found = None
        for e in self.events:
            lo, hi = self.event_window(e, window_us)
            if lo <= us <= hi and (found is None or e["start_us"] > found["start_us"]):
                found = e
        return found

    # ---- the events ---------------------------------------------------------------------

    def report_events(self):
        self.say("Failovers and the restart (SENTINEL FAILOVER; the master killed with SIGKILL)")
        done = [e for e in self.events if e.get("ok")]
        def after(field):
            return secs(e[field] - e["start_us"]) if e.get(field) else "never"

        for e in self.events:
            n = e["n"]
            if e["kind"] == "failover" and e.get("accepted_us"):
                ok = "" if e.get("ok") else "  NOT COMPLETE"
                self.say(f"  #{n:<2} {self.at(e['start_us']):>10}  failover  master {e['from']} -> {e['to']}: named by every "
                         f"sentinel after {after('promoted_us')} ({e['tries']} request(s)); the old master a replica after "
                         f"{after('demoted_us')}{ok}")
            elif e["kind"] == "failover":
                self.say(f"  #{n:<2} {self.at(e['start_us']):>10}  failover  REFUSED after {e.get('tries', 0)} request(s): "
                         f"{e.get('why', '?')}")
            else:
                ok = "" if e.get("ok") else "  NOT COMPLETE"
                self.say(f"  #{n:<2} {self.at(e['start_us']):>10}  restart   master {e['from']} killed: {e['to']} named by every "
                         f"sentinel after {after('promoted_us')}; {e['from']} started again after {after('restarted_us')}, "
                         f"an empty master of its own until the sentinels made it a replica after {after('demoted_us')}{ok}")
        if any(e["kind"] == "failover" and e.get("demoted_us") for e in self.events):
            self.say("  (SENTINEL FAILOVER does not stop the old master: it takes writes until the sentinels next look at it "
                     "and make it a replica; a client that has not heard of the new master by then loses them)")
        failovers = sum(1 for e in done if e["kind"] == "failover")
        restarts = sum(1 for e in done if e["kind"] == "restart")
        self.say(f"  done: {failovers} failover(s) of {sum(1 for e in self.events if e['kind'] == 'failover')}, "
                 f"{restarts} restart(s)")
        if failovers == 0:
            self.failures.append("no failover was carried out")
        if restarts == 0:
            self.failures.append("the restart of the master was not carried out")
        for e in self.events:
            if not e.get("ok"):
                self.failures.append(f"event #{e['n']} ({e['kind']}) did not complete")
        self.say()

    # ---- the console --------------------------------------------------------------------

    def report_console(self):
        lines = load_jsonl(os.path.join(self.work, "console-events.jsonl"))
        outages, current = [], None
        last_state = None
        failed_attempts = 0
        moves = []
        for ln in lines:
            state = ln.get("state")
            if state == "connected" and "moved_from" in ln:
                moves.append(ln)
                last_state = state
                continue
            if state == "reconnecting":
                if ln.get("lost") or current is None:
                    current = {"lost_us": ln["time_us"], "error": ln.get("error", ""), "attempts": 0}
                    outages.append(current)
                else:
                    current["attempts"] += 1
                    failed_attempts += 1
            elif state == "connected" and current is not None:
                current["back_us"] = ln["time_us"]
                current["away_ms"] = ln.get("away_ms")
                current["node"] = ln.get("node", "?")
                current = None
            elif state == "failed":
                self.failures.append(f"the console's connection failed for good: {ln.get('error')}")
            if state != "closed":
                last_state = state
        self.say("Console reconnections (its --event-log: lost, then back)")
        for i, o in enumerate(outages, 1):
            e = self.event_for(o["lost_us"], 0)
            cause = f"#{e['n']} {e['kind']}" if e else "no failover near"
            if "back_us" in o:
                tries = o["attempts"] + 1
                self.say(f"  {i:>2}. {self.at(o['lost_us']):>10}  ({cause})  back after {o['away_ms'] / 1000:.2f} s on "
                         f"{o['node']}, {tries} attempt(s); lost: {o['error'][:90]}")
            else:
                self.say(f"  {i:>2}. {self.at(o['lost_us']):>10}  ({cause})  NOT BACK; lost: {o['error'][:90]}")
                self.failures.append(f"the console lost its connection at {self.at(o['lost_us'])} and did not get it back")
        if not outages:
            self.say("  none")
        for ln in moves:
            e = self.event_for(ln["time_us"], 2_000_000)
            cause = f"#{e['n']} {e['kind']}" if e else "no failover near"
            since = f", {secs(ln['time_us'] - e['start_us'])} after it started" if e else ""
            self.say(f"  followed without a loss: {self.at(ln['time_us']):>10}  ({cause})  now on {ln['node']} "
                     f"(was {ln['moved_from']}){since}, as its status poll (every 2 s) saw it")
        away = [o["away_ms"] for o in outages if o.get("away_ms") is not None]
        if away:
            self.say(f"  away: {len(away)} time(s), {min(away) / 1000:.2f} .. {max(away) / 1000:.2f} s, "
                     f"median {sorted(away)[len(away) // 2] / 1000:.2f} s")
        exit_code = self.meta.get("console_exit")
        gone = self.meta.get("console_gone_us") or 0
        if gone:
            self.say(f"  THE CONSOLE EXITED during the run at {self.at(gone)}, status {exit_code}")
            self.failures.append(f"the console exited during the run at {self.at(gone)} (status {exit_code})")
        else:
            self.say(f"  connected at the end: {'yes' if last_state == 'connected' else 'NO (' + str(last_state) + ')'}; "
                     f"exit on SIGTERM: {'clean (0)' if str(exit_code) == '0' else exit_code}")
            if last_state != "connected":
                self.failures.append(f"the console was not connected at the end ({last_state})")
            if str(exit_code) != "0":
                self.failures.append(f"the console did not exit cleanly on SIGTERM ({exit_code})")
        ok_events = [e for e in self.events if e.get("ok")]
        noticed = [o["lost_us"] for o in outages] + [m["time_us"] for m in moves]
        unmatched = [e for e in ok_events
                     if not any(e["start_us"] - BEFORE_EVENT_US <= t <= (e.get("settled_us") or e["start_us"]) + 5_000_000
                                for t in noticed)]
        if unmatched:
            self.failures.append("the console's log shows neither a loss nor a move to the new master at "
                                 + ", ".join(f"#{e['n']}" for e in unmatched) + ": it did not follow the failover")
        self.console_losses = len(outages)
        self.console_failed_attempts = failed_attempts
        self.say()

    def report_rss(self):
        samples = []
        path = os.path.join(self.work, "rss.csv")
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    t, kb = line.strip().split(",")
                    samples.append((int(t), int(kb)))
        self.say("Console memory (RSS, sampled every 2 s)")
        if not samples:
            self.say("  no samples")
            self.failures.append("no RSS samples of the console")
            self.say()
            return
        peak = max(samples, key=lambda s: s[1])
        self.say(f"  start {mib(samples[0][1])} ({self.at(samples[0][0])}), peak {mib(peak[1])} ({self.at(peak[0])}), "
                 f"end {mib(samples[-1][1])} ({self.at(samples[-1][0])}); {len(samples)} samples")
        marks = []
        step = max(1, len(samples) // 10)
        for t, kb in samples[::step]:
            marks.append(f"{self.at(t)} {kb / 1024:.0f}")
        self.say("  over time (MiB): " + ", ".join(marks))
        half = [s for s in samples if s[0] >= (samples[0][0] + samples[-1][0]) / 2]
        if len(half) >= 3:
            n = len(half)
            mt = sum(t for t, _ in half) / n
            mk = sum(k for _, k in half) / n
            var = sum((t - mt) ** 2 for t, _ in half)
            slope = sum((t - mt) * (k - mk) for t, k in half) / var if var else 0.0  # kB per us
            self.say(f"  trend over the second half: {slope * 60e6 / 1024:+.2f} MiB/min (the Monitor keeps 10 minutes "
                     "of readings per pinned key, so it grows until then by design)")
        self.say()

    # ---- the load -----------------------------------------------------------------------

    def read_bursts(self):
        self.bursts = load_jsonl(os.path.join(self.work, "bursts.jsonl"))
        for b in self.bursts:
            summary_path = os.path.join(self.work, "bursts", f"{b['tag']}-{b['n']}.json")
            b["summary"] = None
            b["error"] = None
            if os.path.exists(summary_path):
                for obj in load_jsonl(summary_path):
                    if "error" in obj and isinstance(obj["error"], dict):
                        b["error"] = obj["error"].get("message", "")
                    elif "sent" in obj:
                        b["summary"] = obj
            err_path = os.path.join(self.work, "bursts", f"{b['tag']}-{b['n']}.err")
            b["stderr"] = open(err_path, errors="replace").read().strip() if os.path.exists(err_path) else ""

    def read_decisions(self, tag):
        rows = []
        for path in glob.glob(os.path.join(self.work, "decisions", f"{tag}-*.csv")):
            with open(path, newline="", encoding="utf-8", errors="replace") as f:
                for r in csv.DictReader(f):
                    rem = int(r["remaining"]) if r["remaining"] else -1
                    rows.append((int(r["time_us"]), int(r["sent_us"]), r["key"], r["outcome"], rem))
        rows.sort()
        return rows

    def over_admissions(self, stream, rows):
        """Episodes of admissions certainly over a key's limit: dicts with the key, when it started
        and ended, the excess (the most admitted beyond what the limit allows, at one time) and
        what the worst moment was. Moments over the limit less than a window apart (or in one
        clock window, for the windowed algorithms) are one episode."""
        algo = stream["algo"]
        window = duration_us(stream["window"])
        shards = self.meta["shards"]
        adm_by_key = collections.defaultdict(list)
        all_by_key = collections.defaultdict(list)
        for t, s, key, outcome, remaining in rows:
            if outcome == "allowed":
                adm_by_key[key].append((t, s))
            all_by_key[key].append((t, s, outcome, remaining))
        episodes = []
        for key in sorted(all_by_key):
            adm = adm_by_key[key]
            limit = share(stream["limit"], shards, int(key.rsplit(":", 1)[1]))
            if algo in ("fixed-window", "sliding-counter"):
                moments = self.over_windowed(adm, limit, window, 1, algo == "sliding-counter")
            elif algo == "sliding-buckets":
                moments = self.over_windowed(adm, limit, window, int(stream["buckets"]), False)
            elif algo == "sliding-log":
                moments = self.over_log(adm, limit, window)
            else:
                moments = self.over_rate(all_by_key[key], limit, window)
            current = None
            for t, excess, what in moments:
                if current is None:
                    apart = True
                elif algo in ("fixed-window", "sliding-counter"):
                    apart = t // window != current["last"] // window
                else:
                    apart = t - current["last"] >= window
                if apart:
                    current = {"key": key, "first": t, "last": t, "excess": 0, "what": "", "window": window}
                    episodes.append(current)
                current["last"] = t
                if excess > current["excess"]:
                    current["excess"], current["what"] = excess, what
        return episodes

    @staticmethod
    def over_windowed(adm, limit, window, buckets, weighted):
        counts = collections.Counter()
        over = []
        for t, s in adm:  # in reply order
            b = t * buckets // window
            if s * buckets // window != b:
                continue  # its bucket is not certain: left out (never counted against the others)
            counts[b] += 1
            used = sum(counts[b - i] for i in range(buckets))
            if weighted:
                elapsed = t % window  # the latest it can be: the smallest weight
                used += counts[b - 1] * (window - elapsed) // window
            if used > limit:
                what = f"{used} admitted in one window (limit {limit})" if not weighted else \
                    f"weighted count {used} (limit {limit})"
                if buckets > 1:
                    what = f"{used} admitted in {buckets} buckets, one window (limit {limit})"
                over.append((t, used - limit, what))
        return over

    @staticmethod
    def over_log(adm, limit, window):
        over = []
        recent = collections.deque()
        for t, s in adm:
            while recent and recent[0][0] <= t - window:
                recent.popleft()
            if t - s < window:
                within = sum(1 for _, si in recent if si > t - window) + 1
                if within > limit:
                    over.append((t, within - limit, f"{within} admitted within one window (limit {limit})"))
            recent.append((t, s))
        return over

    @staticmethod
    def over_rate(rows, limit, window):
        """rows: (time_us, sent_us, outcome, remaining) of every decision on the key, by time."""
        over = []
        rate = limit / window
        horizon = 3 * window
        adm = [(t, s) for t, s, o, _ in rows if o == "allowed"]
        decided = [(t, s, rem) for t, s, o, rem in rows if o in ("allowed", "denied")]
        lo = 0
        for j, (tj, sj) in enumerate(adm):
            while adm[lo][0] < tj - horizon:
                lo += 1
            recent = adm[lo:j + 1]
            starts = sorted(s for _, s in recent)
            worst = None
            # From a full bucket: at most limit, plus the refill, from any admission's earliest time.
            for si in starts:
                if si > sj:
                    break
                n = len(starts) - bisect.bisect_left(starts, si)
                allowed = limit + 1 + (tj - si) * rate
                if n > allowed and (worst is None or n - allowed > worst[0]):
                    worst = (n - allowed, f"{n} admitted in {(tj - si) / 1e6:.2f} s from a full bucket")
            # From a decision that said what was left: its remaining (and under one in fractions),
            # plus the refill; counting only admissions certainly after it.
            a = bisect.bisect_left(decided, (tj - horizon,))
            b = bisect.bisect_right(decided, (tj, float("inf"), 0))
            for ti, si, rem in decided[a:b]:
                if ti > sj:
                    break
                n = len(starts) - bisect.bisect_left(starts, ti)
                allowed = rem + 1 + (tj - si) * rate
                if n > allowed and (worst is None or n - allowed > worst[0]):
                    worst = (n - allowed, f"{n} admitted in {(tj - si) / 1e6:.2f} s after a decision that left {rem}")
            if worst:
                over.append((tj, math.ceil(worst[0]), f"{worst[1]} (refill {limit} per {window / 1e6:g} s)"))
        return over

    def report_load(self):
        self.read_bursts()
        self.say("Requests (back-to-back bursts of 20 s, 2 connections, 4 shards; every request recorded)")
        self.say(f"  {'stream':<6} {'algorithm':<16} {'limit/shard':<14} {'sent':>8} {'admitted':>9} {'denied':>8} "
                 f"{'errors':>7} {'unknown':>8} {'not sent':>9} {'over':>6} {'at a failover':>14}")
        totals = collections.Counter()
        explained, unexplained = [], []
        self.decision_times = {}
        for stream in self.meta["streams"]:
            tag = stream["tag"]
            rows = self.read_decisions(tag)
            mine = [b for b in self.bursts if b["tag"] == tag]
            summed = collections.Counter()
            for b in mine:
                if b["summary"]:
                    for k in ("sent", "allowed", "denied", "errors", "unknown", "not_sent"):
                        summed[k] += b["summary"].get(k, 0)
            outcomes = collections.Counter(r[3] for r in rows)
            if len(rows) != summed["sent"] or outcomes["allowed"] != summed["allowed"]:
                self.failures.append(f"stream {tag}: the decision record ({len(rows)} rows, {outcomes['allowed']} admitted) "
                                     f"does not match the bursts' summaries ({summed['sent']} sent, {summed['allowed']} admitted)")
            episodes = self.over_admissions(stream, rows)
            over = at_failover = 0
            for ep in episodes:
                ep["event"] = self.event_for(ep["first"], ep["window"])
                ep["stream"] = stream
                over += ep["excess"]
                if ep["event"]:
                    at_failover += ep["excess"]
                    explained.append(ep)
                else:
                    unexplained.append(ep)
            per_shard = share(stream["limit"], self.meta["shards"], 0)
            self.say(f"  {tag:<6} {stream['algo']:<16} {str(per_shard) + ' per ' + stream['window']:<14} "
                     f"{summed['sent']:>8} {summed['allowed']:>9} {summed['denied']:>8} {summed['errors']:>7} "
                     f"{summed['unknown']:>8} {summed['not_sent']:>9} {over:>6} {at_failover:>14}")
            totals.update(summed)
            totals["over"] += over
            totals["explained"] += at_failover
            self.decision_times[tag] = [r[0] for r in rows if r[3] in ("allowed", "denied")]
            done = self.decision_times[tag]
            if not done or done[-1] < self.end - TAIL_US:
                self.failures.append(f"stream {tag}: no decision in the last {TAIL_US // 1_000_000} s of the run "
                                     "(the load did not come back)")
        self.say(f"  {'total':<6} {'':<16} {'':<14} {totals['sent']:>8} {totals['allowed']:>9} {totals['denied']:>8} "
                 f"{totals['errors']:>7} {totals['unknown']:>8} {totals['not_sent']:>9} {totals['over']:>6} "
                 f"{totals['explained']:>14}")
        self.say("  unknown: sent, no reply (it may have been admitted). not sent: never written, the connection being down")
        self.say("  (a burst gives up after 3 s without a server; the rest of its 20 s counts here). over: admitted beyond")
        self.say("  the limit for certain (per key and episode, the most beyond it at one time)")
        self.say()
        self.say("Over-admissions")
        if not explained and not unexplained:
            self.say("  none: no limiter admitted more than its limit in any window")
        by_event = collections.defaultdict(list)
        for ep in explained:
            by_event[ep["event"]["n"]].append(ep)
        for n in sorted(by_event):
            eps = by_event[n]
            e = eps[0]["event"]
            ref = e.get("promoted_us") or e["start_us"]
            first = min(ep["first"] for ep in eps)
            last = max(ep["last"] for ep in eps)
            self.say(f"  #{n} {e['kind']} ({self.at(e['start_us'])}): {sum(ep['excess'] for ep in eps)} request(s) over on "
                     f"{len(eps)} key episode(s), from {(first - ref) / 1e6:+.1f} s to {(last - ref) / 1e6:+.1f} s around the moment every sentinel "
                     "named the new master: put down to the failover (writes the old master took were lost)")
            for ep in sorted(eps, key=lambda x: -x["excess"])[:4]:
                self.say(f"      {self.at(ep['first']):>10}  {ep['key']:<10} +{ep['excess']}: {ep['what']}")
            if len(eps) > 4:
                self.say(f"      ... and {len(eps) - 4} more key episode(s)")
        if unexplained:
            n = sum(ep["excess"] for ep in unexplained)
            self.say(f"  {n} request(s) over in {len(unexplained)} key episode(s) NOT near any failover:")
            for ep in unexplained[:20]:
                self.say(f"      {self.at(ep['first']):>10}  {ep['key']:<10} +{ep['excess']}: {ep['what']}")
            self.failures.append(f"{n} over-admission(s) not near any failover")
        self.totals = totals
        self.say()

    def report_watch(self):
        lines = load_jsonl(os.path.join(self.work, "watch.jsonl"))
        runs = load_jsonl(os.path.join(self.work, "watch-runs.jsonl"))
        readings = collections.defaultdict(lambda: [0, 0])
        errors = collections.Counter()
        for ln in lines:
            if "time_us" not in ln:
                continue
            r = readings[ln["time_us"]]
            r[0] += 1
            if "error" in ln:
                r[1] += 1
                msg = ln["error"].get("message", "") if isinstance(ln["error"], dict) else str(ln["error"])
                errors[re.sub(r"'[^']*'", "'…'", msg)[:100]] += 1
        self.watch_ok = sorted(t for t, (n, bad) in readings.items() if bad == 0)
        self.watch_readings = len(readings)
        self.watch_error_readings = sum(1 for n, bad in readings.values() if bad)
        self.watch_errors = errors
        self.watch_runs = runs
        if not self.watch_ok or self.watch_ok[-1] < self.end - TAIL_US:
            self.failures.append(f"watch: no reading in the last {TAIL_US // 1_000_000} s of the run")

    def report_outages(self):
        """How long the CLI's load went without an answer around each event."""
        self.say("CLI around each event (the longest wait for an answer, from before the event until after it)")

        def longest_gap(times, lo, hi):
            i = bisect.bisect_left(times, lo)
            best = 0
            prev = times[i - 1] if i > 0 else None
            for t in times[i:]:
                if prev is not None:
                    best = max(best, t - prev)
                prev = t
                if t > hi:
                    break
            return best

        for e in self.events:
            lo, hi = e["start_us"] - 1_000_000, (e.get("settled_us") or e["start_us"]) + 2_000_000
            gaps = {tag: longest_gap(times, lo, hi) for tag, times in self.decision_times.items() if times}
            watch = longest_gap(self.watch_ok, lo, hi) if self.watch_ok else 0
            if gaps:
                fast, slow = min(gaps.values()), max(gaps.values())
                self.say(f"  #{e['n']:<2} {e['kind']:<8}  bursts: decisions paused {fast / 1e6:.2f} .. {slow / 1e6:.2f} s "
                         f"(fastest .. slowest stream); watch: {watch / 1e6:.2f} s between good readings")
        self.say()

    def report_errors(self):
        self.say("Errors seen")
        err_path = os.path.join(self.work, "logs", "console.err")
        other = []
        benign = 0
        if os.path.exists(err_path):
            for line in open(err_path, errors="replace"):
                line = line.rstrip()
                if not line:
                    continue
                if "does not support propagateSizeHints" in line:
                    benign += 1  # the offscreen platform's notice, once per window resize
                else:
                    other.append(line)
        self.say(f"  console  {self.console_losses} connection loss(es), {self.console_failed_attempts} failed attempt(s) "
                 f"to reconnect; {len(other)} other line(s) on stderr"
                 + (f" ({benign} offscreen-platform notice(s) left out)" if benign else ""))
        for line in collections.Counter(other).most_common(5):
            self.say(f"           {line[1]} x {line[0][:110]}")
        bad_runs = [r for r in self.watch_runs if r.get("rc") != 0]
        self.say(f"  watch    {self.watch_error_readings} reading(s) with an error of {self.watch_readings}; "
                 f"{len(self.watch_runs)} run(s), {len(bad_runs)} ended early "
                 f"({', '.join(f'exit {c} x{n}' for c, n in collections.Counter(r.get('rc') for r in bad_runs).items()) or '-'})")
        for msg, n in self.watch_errors.most_common(3):
            self.say(f"           {n} x {msg}")
        werr = os.path.join(self.work, "watch.err")
        if os.path.exists(werr):
            msgs = collections.Counter(re.sub(r"\d+", "N", l.strip())[:110] for l in open(werr, errors="replace") if l.strip())
            for msg, n in msgs.most_common(3):
                self.say(f"           {n} x {msg}")
        bad = [b for b in self.bursts if b["rc"] != 0]
        codes = collections.Counter(b["rc"] for b in bad)
        t = self.totals
        self.say(f"  burst    {t['errors']} error reply(ies), {t['unknown']} unknown (no reply), {t['not_sent']} not sent; "
                 f"{len(bad)} of {len(self.bursts)} bursts ended non-zero "
                 f"({', '.join(f'exit {c} x{n}' for c, n in sorted(codes.items())) or '-'})")
        firsts = collections.Counter()
        for b in bad:
            msg = (b["summary"] or {}).get("first_error") or b["error"] or b["stderr"].splitlines()[-1:] or ["?"]
            msg = msg if isinstance(msg, str) else msg[0]
            firsts[re.sub(r"\d+", "N", msg)[:110]] += 1
        for msg, n in firsts.most_common(4):
            self.say(f"           {n} x {msg}")
        timeouts = [b for b in self.bursts if b["rc"] in (124, 137)]
        if timeouts:
            self.failures.append(f"{len(timeouts)} burst(s) had to be killed (hung past their duration)")
        self.say()

    def report(self):
        m = self.meta
        self.say(f"Ratescope soak under failover: {m['minutes']} min; 1 master + 2 replicas ({', '.join(map(str, m['servers']))}), "
                 f"3 sentinels ({', '.join(map(str, m['sentinels']))}), all on 127.0.0.1")
        self.say()
        self.report_events()
        self.report_console()
        self.report_rss()
        self.report_watch()
        self.report_load()
        self.report_outages()
        self.report_errors()
        t = self.totals
        if self.failures:
            self.say("Verdict: FAIL")
            for f in self.failures:
                self.say(f"  - {f}")
        else:
            self.say(f"Verdict: PASS: {t['sent']} requests, {t['allowed']} admitted; no limiter admitted more than its "
                     f"limit in any window, except {t['explained']} request(s) within seconds of a failover (the writes "
                     "the old master took and the new one never got: Redis replicates asynchronously); the console "
                     "followed every failover and came back after every loss.")
        print("\n".join(self.out))
        return 1 if self.failures else 0


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(sys.argv) != 2 else sys.stdout)
        return 2 if len(sys.argv) != 2 else 0
    return Run(sys.argv[1]).report()


if __name__ == "__main__":
    sys.exit(main())
