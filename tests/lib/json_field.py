#!/usr/bin/env python3
"""One member of the report lines that match, read with a JSON parser.

    json_field.py [--live] FILE|- FIELD [NAME=VALUE...]

The VMM and hwpoison-guest report one JSON object per line
({"event":"poison","pid":12,...}). For each report line whose members NAME
all equal VALUE, prints its member FIELD, one line each, in file order:
a string as it is, anything else as compact JSON (12, true, null, [1,2]).
VALUE is compared the same way: a number by its JSON spelling (pid=12),
true/false/null likewise. A line that matches but has no FIELD prints
nothing.

A line is a report line when its first non-blank character is "{"; the
others (stderr messages, sanitizer reports, console text that share a log)
are not reports and are passed over. A report line that does not parse as
one JSON object is an error, not a silent empty answer: FILE:LINE and the
parser's reason on stderr, exit 2, and nothing on stdout, so that a caller
that reads only $(...) gets no answer from the lines before it either.
--live: FILE is still being written (a VMM running in the background), so
an unterminated last line is not a line yet and is passed over instead.

Exit 0 when something was printed; 1 when no line matched (said on stderr,
so that an empty $(...) has a reason in the log); 2 for a malformed line or
bad arguments.

The outer VM has no python: its scenarios scrape report lines with sed
(tests/integration/scenarios/_lib.sh and the scenarios).
"""
import json
import sys


def usage(why):
    sys.stderr.write("json_field.py: %s\n"
                     "usage: json_field.py [--live] FILE|- FIELD [NAME=VALUE...]\n" % why)
    sys.exit(2)


def spelled(v):
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))


def main(argv):
    live = bool(argv) and argv[0] == "--live"
    if live:
        argv = argv[1:]
    if len(argv) < 2:
        usage("want FILE and FIELD")
    path, field, filters = argv[0], argv[1], []
    for f in argv[2:]:
        name, eq, value = f.partition("=")
        if not eq or not name:
            usage("filter '%s' is not NAME=VALUE" % f)
        filters.append((name, value))
    where = " where " + " ".join(argv[2:]) if filters else ""
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
    except OSError as e:
        usage("cannot read %s: %s" % (path, e.strerror))
    lines = text.split("\n")
    # after a final newline, split leaves an empty string: no line there
    unterminated = lines.pop() if lines else ""
    if unterminated and not live:
        lines.append(unterminated)
    name = "stdin" if path == "-" else path
    found = []
    for n, line in enumerate(lines, 1):
        if not line.lstrip().startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            sys.stderr.write("json_field.py: %s:%d: malformed report line (%s): %.200s\n" %
                             (name, n, e, line))
            sys.exit(2)
        if not isinstance(obj, dict):
            sys.stderr.write("json_field.py: %s:%d: malformed report line (not one "
                             "object): %.200s\n" % (name, n, line))
            sys.exit(2)
        if field not in obj:
            continue
        if all(k in obj and spelled(obj[k]) == v for k, v in filters):
            found.append(spelled(obj[field]))
    if not found:
        sys.stderr.write("json_field.py: %s: no report line with %s%s\n" % (name, field, where))
        sys.exit(1)
    print("\n".join(found))


if __name__ == "__main__":
    main(sys.argv[1:])
