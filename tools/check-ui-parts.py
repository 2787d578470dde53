#!/usr/bin/env python3
"""Checks the parts of ui/ (the console): only the query library speaks to Redis, and no page
uses another page.

  * Only files under ui/queries/ and ui/demo/ (the widget-free parts) may include the transport
    headers (redis/connection.h, redis/cluster.h, redis/nodeconnection.h), or spell a Redis
    command as the first word of a command ({"SCAN", ...}, {"TIME"}).
  * A page folder (every folder of ui/ but queries, charts, common, demo and window) includes no
    header of another page folder; queries/, charts/ and common/ include no page header at all.
    window/ (which puts the pages together) and demo/ may.

Exit 0 with a one-line summary when nothing is found, 1 with a report, 2 on a usage error.

  python3 tools/check-ui-parts.py [ui-dir]   # default: ui/ next to tools/
  python3 tools/check-ui-parts.py --selftest # checks the check on synthetic trees

Python 3 standard library only. Registered as the ctest tests ui_parts and ui_parts_selftest
by cmake/LayerCheck.cmake.
"""

import os
import re
import sys
import tempfile

SOURCE_EXTENSIONS = {".h", ".cpp"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
TRANSPORT = {"redis/connection.h", "redis/cluster.h", "redis/nodeconnection.h"}
MAY_TALK = {"queries", "demo"}
NOT_PAGES = {"queries", "charts", "common", "demo", "window"}
LOWER = {"queries", "charts", "common"}
# Commands a page could be tempted to send; a string literal opening a brace list with one of
# them is a command spelled out.
COMMANDS = (
    "APPEND BITCOUNT CLIENT CLUSTER CONFIG DBSIZE DECR DECRBY DEL EVAL EVALSHA EVALSHA_RO EXISTS EXPIRE FCALL FCALL_RO "
    "FLUSHALL FLUSHDB FUNCTION GET GETDEL HDEL HELLO HGET HGETALL HINCRBY HLEN HMGET HSCAN HSET INCR INCRBY INFO KEYS "
    "LLEN MEMORY MGET MULTI OBJECT PEXPIRE PING PTTL PUBLISH RENAME SCAN SCRIPT SELECT SET SETEX SSCAN TIME TTL TYPE "
    "UNLINK XADD XLEN XRANGE XREVRANGE XTRIM ZADD ZCARD ZCOUNT ZRANGE ZRANGEBYSCORE ZREM ZREMRANGEBYSCORE ZSCAN ZSCORE"
).split()
COMMAND_RE = re.compile(r'\{\s*"(' + "|".join(COMMANDS) + r')"\s*[,}]')


def sources(root):
    for dirpath, _, files in os.walk(root):
        for name in sorted(files):
            if os.path.splitext(name)[1] in SOURCE_EXTENSIONS:
                path = os.path.join(dirpath, name)
                yield os.path.relpath(path, root).replace(os.sep, "/")


def check(root):
    """Returns the problems found in the ui/ tree at root, one line each."""
    files = list(sources(root))
    folder_of = {f: f.split("/")[0] for f in files if "/" in f}
    owner = {}  # header file name -> folder (the console includes its headers by name)
    for f, folder in folder_of.items():
        if f.endswith(".h"):
            owner.setdefault(os.path.basename(f), set()).add(folder)
    problems = []
    for f in files:
        folder = folder_of.get(f)
        if folder is None:
            continue
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
        for number, line in enumerate(lines, 1):
            stripped = line.strip()
            if stripped.startswith("//"):
                continue
            m = INCLUDE_RE.match(line)
            if m:
                target = m.group(1)
                if target in TRANSPORT and folder not in MAY_TALK:
                    problems.append(f"{f}:{number}: includes the transport ({target}); ask a query in ui/queries instead")
                for other in sorted(owner.get(os.path.basename(target), ())):
                    if other == folder or other in NOT_PAGES:
                        continue
                    if folder in LOWER or folder not in NOT_PAGES:
                        problems.append(f"{f}:{number}: includes {target} of the page {other}/")
                continue
            if folder not in MAY_TALK:
                c = COMMAND_RE.search(line)
                if c:
                    problems.append(f"{f}:{number}: spells the Redis command {c.group(1)}; ask a query in ui/queries instead")
    return files, problems


def selftest():
    cases = [
        ({"queries/q.cpp": '#include "redis/connection.h"\nx({"SCAN", c});\n', "burst/p.cpp": '#include "q.h"\n'}, 0),
        ({"burst/p.cpp": '#include "redis/connection.h"\n'}, 1),
        ({"burst/p.cpp": 'c.command({"TIME"});\n'}, 1),
        ({"burst/p.cpp": '// c.command({"TIME"});\nQStringLiteral("TIME");\n'}, 0),
        ({"burst/a.h": "", "whatif/w.cpp": '#include "a.h"\n'}, 1),
        ({"burst/a.h": "", "window/m.cpp": '#include "a.h"\n'}, 0),
        ({"burst/a.h": "", "common/c.cpp": '#include "a.h"\n'}, 1),
        ({"charts/t.h": "", "whatif/w.cpp": '#include "t.h"\n'}, 0),
    ]
    failed = 0
    for tree, expected in cases:
        with tempfile.TemporaryDirectory() as root:
            for path, text in tree.items():
                os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
                with open(os.path.join(root, path), "w", encoding="utf-8") as fh:
                    fh.write(text)
            _, problems = check(root)
            if len(problems) != expected:
                failed += 1
                print(f"selftest: {sorted(tree)}: expected {expected} problems, found {problems}")
    if failed:
        return 1
    print(f"selftest: {len(cases)} cases pass")
    return 0


def main(argv):
    if argv[1:] == ["--selftest"]:
        return selftest()
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ui")
    if not os.path.isdir(root):
        print(f"check-ui-parts: {root}: no such directory", file=sys.stderr)
        return 2
    files, problems = check(root)
    if problems:
        print("\n".join(problems))
        print(f"check-ui-parts: {len(problems)} problems in {len(files)} files")
        return 1
    print(f"check-ui-parts: {len(files)} files; only ui/queries and ui/demo speak to Redis, no page uses another")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
