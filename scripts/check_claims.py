#!/usr/bin/python3
"""Claims check: every accuracy or speed figure in the docs names the stored result or test behind it.

Run from anywhere:  /usr/bin/python3 scripts/check_claims.py          (exit 0: all good, 1: failures)
                    /usr/bin/python3 scripts/check_claims.py --list   (every figure, its source, the value)
                    /usr/bin/python3 scripts/check_claims.py --untagged  (only the figures that lack a tag)

Checked files: README.md, validation/README.md, docs/*.md, validation/*/README.md, benchmarks/README.md
(or the files named on the command line).

WHAT IS A FIGURE
  A number that states an accuracy or a speed, recognised by its unit:
    %   ×/x (a factor written against the number: 1.9×, 2x, ×2.3; not "16 × 8" or "24x8")
    σ (3σ, 1e-12 σ)   ns µs ms s min h (hours)   any rate "<unit>/s" (GB/s, TB/s, rays/s, line·points/s)
    a relative figure in scientific notation with a negative exponent (3.3e-10, 1e-13, 10⁻¹⁵).
  In a markdown table a column whose header ends with one of those units ("solve s", "apply ms",
  "run s (3 runs)") or names a rate, "ns per …", a speed-up or a ratio "… / CPU" makes every number
  in its cells a figure. In "A–B %", "A / B s", "A → B s" and "A to B %" both numbers are figures
  (and "1.3–1.6·10⁷" gives the exponent to both). A number and its unit must be on one line. Numbers with other units (K, m, W, tets, points, ranks,
  iterations) are inputs or counts, not figures. Fenced and indented code blocks, `inline code` and
  HTML comments are not read.

WHERE A FIGURE'S SOURCE IS NAMED
  In an HTML comment on the same line (for a table: the same row, any cell):

      ... max |z| 3.57σ <!-- src: validation/montecarlo/results.json#/rows/*/max_abs_z;agg=max -->

  One `src:` tag holds one or more ENTRIES separated by blanks; the entries of all `src:` tags of a
  line are matched, in order, to the figures of that line, in order (so one tag at the end of a table
  row, or one tag per cell, both work). The counts must agree. An entry is:

    PATH#FRAGMENT[;OPTION...]   a stored result (PATH from the repository root; "./x" is relative to
                                the checked file's folder; "#FRAGMENT" alone reuses the previous PATH)
    test:NAME                   a figure a test asserts rather than stores: NAME is a GoogleTest
                                "Suite.Case" (TEST/TEST_F/TEST_P in tests/, src/, validation/,
                                benchmarks/) or a CTest name (add_test / dgrte_add_test in a
                                CMakeLists.txt); the check verifies that it exists. To check the value
                                too, point a `re=` entry at the test's source instead.
    input | cited | estimate    not a measured claim: an input, parameter, threshold or code constant;
                                a figure quoted from the cited literature; a back-of-envelope estimate
                                that the text calls one. Consumes one figure, checks nothing.

  An entry that contains blanks is quoted: 'validation/x/results.md#where=case=cube;col=max abs z'.
  GFM splits a table row at every unescaped pipe, inside comments too: in a tag on a table row write
  a pipe as \| (regex alternation there: (?:a\|b)); a literal pipe in such a regex is \x7c.

  FRAGMENT selects the stored value:
    /a/0/b            JSON (.json): a JSON pointer (RFC 6901); "*" matches every element of a list
                      or value of an object, giving a list (then use agg=, or each).
    col=HEAD[;where=COL=VALUE|where=COL~RE][;row=RE][;table=RE]
                      a markdown table (.md): the rows whose cell in column COL equals VALUE (or
                      matches RE; several where= must all hold) and/or whose text matches row=RE
                      (re.search), from the column whose header is HEAD (exact text, else every
                      header the regex matches in full, else a 1-based number); the value is the
                      first number in the cell (n=K: the K-th; cells without a number, such as "—",
                      are skipped under agg=). table=RE keeps the tables whose header row matches RE.
                      No row= and no where= selects every row.
    row=RE;col=HEAD   a CSV file (.csv): the rows whose raw line matches RE (omit row= for all rows),
                      the column named HEAD. where=COL~RE or where=COL=VALUE filter rows instead.
    re=RE             any text file: the first match of RE; its capture groups give the values (a
                      regex with k groups consumes k consecutive figures). With agg=, every match's
                      first group is collected.
  OPTIONS (after the fragment, separated by ";"):
    where=KEY~RE | where=KEY=VALUE   JSON: keep the elements at the first "*" whose KEY matches
                      (an element that lacks the pointed key drops out)
    add=X             add X to the stored value (before abs and scale): a ratio shown as a
                      deviation in per cent is add=-1;scale=100
    scale=F           multiply the stored value by F before comparing (F a number or a/b): a fraction
                      shown as a percentage is scale=100; seconds shown in minutes scale=1/60
    div=POINTER | mul=POINTER   JSON: divide (multiply) by the value(s) at POINTER in the same file
                      (or OTHER.json#POINTER in another one), in the order written (repeatable; one
                      value, or one per value selected): speed-ups and ratios
    agg=max|min|maxabs|minabs|sum|mean|wmean|count    reduce a list of values (wmean: weight=POINTER)
    abs               compare the magnitude
    each              a list without agg= consumes as many figures as it has values
    cmp=le|ge         the figure is a bound: stored ≤ (≥) figure, within its printed digits
    tol=X | rtol=R    an approximate figure ("~25 min"): allowed absolute (relative) difference
    n=K               markdown/CSV cell: the K-th number in the cell
  A figure agrees with its stored value when they differ by at most half a unit in the figure's last
  printed digit (0.38 % matches 0.0038 with scale=100 from 0.00375 to 0.00385; 3.3e-10 matches
  3.25e-10 … 3.35e-10); the printed sign counts.

  A line whose figures are all inputs, parameters or quoted literature carries instead
      <!-- claim: input -->        (or claim: cited / claim: estimate, optional note after it)
  and `src:` entries are then not allowed on that line.

  Generated tables: a tag <!-- src-table: SCRIPT ARGS --> on the line right before a table runs
  `python3 SCRIPT ARGS` (from the repository root; the script must only read stored results) and
  requires every row of that table to appear in its output (blanks normalised); its rows need no
  other tag.

FAILURES (exit 1, one line each: file:line, the figure, the source, the stored value)
  (a) a figure and its stored source disagree beyond the figure's printed digits;
  (b) a figure with no source tag, or a line whose entries and figures differ in number;
  (c) a source that cannot be read (missing file, no such key, row or column, ambiguous rows,
      ignored by git, a test that does not exist, a generated table that does not match).
"""

import argparse
import csv
import io
import json
import os
import re
import subprocess
import sys

ROOT_DEFAULT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DEFAULT_FILES = ["README.md", "validation/README.md", "docs/*.md", "validation/*/README.md",
                 "benchmarks/README.md"]

SUP = "⁰¹²³⁴⁵⁶⁷⁸⁹"
SUP_MAP = {c: str(i) for i, c in enumerate(SUP)}
SUP_MAP.update({"⁻": "-", "⁺": "+"})
MINUS = "−"

# A number: optional sign, digits (thousands commas allowed), decimals, an optional exponent
# (e-10, ·10⁻⁵, ×10⁶) or the bare form 10⁻¹⁵.
NUM_RE = re.compile(
    r"(?<![\w.\d⁰¹²³⁴⁵⁶⁷⁸⁹])"
    r"(?P<sign>[+\-−](?=\d))?"
    r"(?:"
    r"(?P<ten>10)(?P<tensup>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)"
    r"|"
    r"(?P<int>\d{1,3}(?:,\d{3})+(?![\d])|\d+)(?:\.(?P<frac>\d+))?"
    r"(?:[eE](?P<exp>[+\-−]?\d+)|\s?[·×]\s?10(?P<supexp>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?"
    r")"
    r"(?![\d⁰¹²³⁴⁵⁶⁷⁸⁹])")

SPACE = r"[ \u00a0\u2009\u202f]?"
# Units written after a number.
UNIT_AFTER = re.compile(
    SPACE + r"(?:"
    r"(?P<pct>%)"
    r"|(?P<sigma>σ)(?![\w⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉])"
    r"|(?P<rate>[A-Za-zµμ·\-]*/s)(?![\w/])"
    r"|(?P<time>ns|µs|μs|ms|s|min|minutes?|seconds?|h|hours?)(?![\w/])"
    r")")
FACTOR_AFTER = re.compile(r"(?P<factor>[×x])(?![\w])(?!\s*\d)")
FACTOR_BEFORE = re.compile(r"(?:^|(?<=[\s(\[,;:]))×$")
# Separators that make the number before them a figure of the same unit: ranges, lists, arrows.
RANGE_BETWEEN = re.compile(r"\s?[–—]\s?|-|\s?…\s?|\s?\.\.\s?|\sto\s|\s?/\s?|\s?→\s?")

# A table column whose header ends with one of those units, or names a rate, a "ns per …", a
# speed-up or a ratio against the CPU/host path: every number in its cells is a figure.
HEADER_UNIT = re.compile(
    r"(?:^|\s)(?:%|ns|µs|μs|ms|s|min)(?:\s*\([^)]*\))?$|(?:^|\s)(?:ns|µs|μs|ms|s)(?: per |/)|/s\b|speed-?up|(?:^|\s)σ(?:\s|$)|\(%\)"
    r"|\[(?:%|s|ms|ns|min)\]|/ (?:CPU|host)$", re.I)

TAG_RE = re.compile(r"<!--(.*?)-->", re.S)
CODE_SPAN = re.compile(r"(`+)(.+?)\1")


class Figure:
    def __init__(self, text, value, half_ulp, unit, col=None):
        self.text, self.value, self.half_ulp, self.unit, self.col = text, value, half_ulp, unit, col

    def __repr__(self):
        return self.text


def sup_to_int(s):
    return int("".join(SUP_MAP[c] for c in s))


def parse_number(m):
    """value and half a unit of the last printed digit of a NUM_RE match."""
    sign = -1.0 if m.group("sign") in ("-", MINUS) else 1.0
    if m.group("ten"):
        e = sup_to_int(m.group("tensup"))
        return sign * 10.0 ** e, 0.5 * 10.0 ** e, e < 0
    digits = m.group("int").replace(",", "")
    frac = m.group("frac") or ""
    mant = float(digits + ("." + frac if frac else ""))
    e = 0
    if m.group("exp") is not None:
        e = int(m.group("exp").replace(MINUS, "-"))
    elif m.group("supexp") is not None:
        e = sup_to_int(m.group("supexp"))
    value = sign * mant * 10.0 ** e
    half = 0.5 * 10.0 ** (e - len(frac))
    return value, half, e < 0 and (m.group("exp") is not None or m.group("supexp") is not None)


def strip_code(text):
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)


def split_line(text):
    """(the text without its HTML comments, the comments' contents). A comment inside a `code span`
    is text; a backtick inside a comment is part of the comment."""
    out, comments, i, n = [], [], 0, len(text)
    while i < n:
        if text.startswith("<!--", i):
            j = text.find("-->", i + 4)
            if j < 0:
                comments.append(None)
                out.append(text[i:])
                break
            comments.append(text[i + 4:j])
            out.append(" ")
            i = j + 3
        elif text[i] == "`":
            k = i
            while k < n and text[k] == "`":
                k += 1
            fence = text[i:k]
            j = text.find(fence, k)
            if j < 0:
                out.append(text[i:k])
                i = k
            else:
                out.append(text[i:j + len(fence)])
                i = j + len(fence)
        else:
            out.append(text[i])
            i += 1
    return "".join(out), comments


def find_figures(text, header_unit=False):
    """Figures in a piece of prose (tags and code already removed)."""
    nums = []
    for m in NUM_RE.finditer(text):
        value, half, sci_neg = parse_number(m)
        nums.append((m, value, half, sci_neg))
    figs = []
    taken = set()
    for i, (m, value, half, sci_neg) in enumerate(nums):
        rest = text[m.end():]
        unit = None
        u = UNIT_AFTER.match(rest)
        if u:
            unit = next(k for k, v in u.groupdict().items() if v)
        else:
            u = FACTOR_AFTER.match(rest)
            if u:
                unit = "factor"
        before = text[:m.start()]
        if unit is None and FACTOR_BEFORE.search(before) and not m.group("sign"):
            unit = "factor"
        if unit is None and sci_neg:
            unit = "relative"
        if unit is None and header_unit:
            unit = "column"
        if unit is None:
            continue
        if i in taken:
            continue
        # Numbers before it joined by a range / list / arrow take the same unit.
        chain = [i]
        j = i
        while j > 0:
            pm = nums[j - 1][0]
            between = text[pm.end():nums[j][0].start()]
            if not RANGE_BETWEEN.fullmatch(between) or (j - 1) in taken:
                break
            # the earlier number must not carry a unit of its own
            if UNIT_AFTER.match(text[pm.end():]) or FACTOR_AFTER.match(text[pm.end():]):
                break
            chain.insert(0, j - 1)
            j -= 1
        for k in chain:
            km, kv, kh, _ = nums[k]
            # "1.3–1.6·10⁷": the exponent of the last number applies to the ones before it
            if k != i and (m.group("supexp") or m.group("exp")) and not (km.group("supexp") or km.group("exp")) \
                    and not km.group("ten"):
                e = sup_to_int(m.group("supexp")) if m.group("supexp") else int(m.group("exp").replace(MINUS, "-"))
                kv *= 10.0 ** e
                kh *= 10.0 ** e
            taken.add(k)
            end = m.end() + (u.end() if u else 0)
            figs.append(Figure(text[km.start():km.end()] + ("" if k != i else text[m.end():end]).rstrip(),
                               kv, kh, unit))
    return figs


# ---------------------------------------------------------------- tags

class Entry:
    def __init__(self, raw, kind, path=None, frag=None, opts=None):
        self.raw, self.kind, self.path, self.frag, self.opts = raw, kind, path, frag, opts or {}

    def __repr__(self):
        return self.raw


def split_entries(s):
    out, cur, quote = [], "", None
    for c in s:
        if quote:
            if c == quote:
                quote = None
            else:
                cur += c
        elif c in "'\"":
            quote = c
        elif c.isspace():
            if cur:
                out.append(cur)
            cur = ""
        else:
            cur += c
    if quote:
        raise ValueError("unclosed quote in src tag")
    if cur:
        out.append(cur)
    return out


def parse_entry(raw, prev_path, doc_dir):
    if raw in ("input", "cited", "estimate"):
        return Entry(raw, raw)
    if raw.startswith("test:"):
        return Entry(raw, "test", frag=raw[5:])
    if "#" not in raw:
        raise ValueError(f"entry '{raw}': expected PATH#FRAGMENT, test:NAME, input, cited or estimate")
    path, rest = raw.split("#", 1)
    if not path:
        if prev_path is None:
            raise ValueError(f"entry '{raw}': '#' with no earlier path on this line")
        path = prev_path
    elif path.startswith("./"):
        path = os.path.normpath(os.path.join(doc_dir, path[2:]))
    parts = rest.split(";")
    opts = {"where": []}
    frag = None
    if parts[0].startswith("/") or parts[0] == "":
        frag = parts[0]
        parts = parts[1:]
    for p in parts:
        if p == "":
            continue
        if "=" in p:
            k, v = p.split("=", 1)
        else:
            k, v = p, True
        if k == "where":
            opts["where"].append(v)
        elif k in ("div", "mul"):
            opts.setdefault("ops", []).append((k, v))
        elif k in ("row", "col", "re", "table", "scale", "add", "agg", "weight", "cmp", "tol", "rtol", "n",
                   "abs", "each"):
            opts[k] = v
        else:
            raise ValueError(f"entry '{raw}': unknown option '{k}'")
    return Entry(raw, "stored", path=path, frag=frag, opts=opts)


# ---------------------------------------------------------------- sources

class SourceError(Exception):
    pass


_cache = {}


def read_text(root, path):
    full = os.path.join(root, path)
    if full not in _cache:
        if not os.path.isfile(full):
            raise SourceError(f"no file {path}")
        with open(full, encoding="utf-8") as f:
            _cache[full] = f.read()
    return _cache[full]


_ignored = {}


def git_ignored(root, path):
    if path not in _ignored:
        try:
            r = subprocess.run(["git", "-C", root, "check-ignore", "-q", path], capture_output=True)
            _ignored[path] = r.returncode == 0
        except OSError:
            _ignored[path] = False
    return _ignored[path]


def first_number(text, n=1):
    vals = [parse_number(m)[0] for m in NUM_RE.finditer(text)]
    if len(vals) < n:
        raise SourceError(f"cell '{text.strip()}' has no number #{n}")
    return vals[n - 1]


def json_walk(node, tokens, where):
    """Values at a pointer; '*' fans out. `where` filters at the first '*'."""
    if not tokens:
        return [node]
    tok, rest = tokens[0], tokens[1:]
    if tok == "*":
        items = node if isinstance(node, list) else list(node.values()) if isinstance(node, dict) else None
        if items is None:
            raise SourceError("'*' on a scalar")
        out, missing = [], None
        for it in items:
            if where and not all(where_ok(it, w) for w in where):
                continue
            try:
                out.extend(json_walk(it, rest, []))
            except SourceError as x:   # an element without the key (e.g. a skipped case): None,
                missing = x            # dropped after div=/mul= (which stay aligned element by element)
                out.append(None)
        if all(v is None for v in out):
            raise SourceError(f"no element matches where={where}" if missing is None else str(missing))
        return out
    tok = tok.replace("~1", "/").replace("~0", "~")
    if isinstance(node, list):
        try:
            return json_walk(node[int(tok)], rest, where)
        except (ValueError, IndexError):
            raise SourceError(f"no index '{tok}'")
    if isinstance(node, dict):
        if tok not in node:
            raise SourceError(f"no key '{tok}' (keys: {', '.join(list(node)[:12])})")
        return json_walk(node[tok], rest, where)
    raise SourceError(f"'{tok}' below a scalar")


def where_ok(item, w):
    m = re.match(r"([^~=]+)([~=])(.*)$", w)
    if not m:
        raise SourceError(f"bad where '{w}'")
    key, op, val = m.groups()
    if not isinstance(item, dict) or key not in item:
        return False
    s = item[key]
    s = json.dumps(s) if not isinstance(s, str) else s
    return re.search(val, s) is not None if op == "~" else s == val


def json_values(root, e, pointer):
    try:
        data = json.loads(read_text(root, e.path))
    except json.JSONDecodeError as x:
        raise SourceError(f"{e.path}: not JSON ({x})")
    tokens = [t for t in pointer.split("/")[1:]] if pointer else []
    return json_walk(data, tokens, e.opts["where"]), ("*" in tokens)


def md_tables(text):
    tables = []
    cur = None
    for ln in text.splitlines():
        if ln.lstrip().startswith("|"):
            cells = split_row(ln)
            if cur is None:
                cur = {"header": cells, "header_line": ln, "rows": []}
                tables.append(cur)
            elif all(re.fullmatch(r"\s*:?-{2,}:?\s*", c) for c in cells if c.strip()):
                continue
            else:
                cur["rows"].append((ln, cells))
        else:
            cur = None
    return tables


def split_row(line):
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    cells, cur, i = [], "", 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] == "|":
            cur += "|"
            i += 2
            continue
        if s[i] == "|":
            cells.append(cur)
            cur = ""
        else:
            cur += s[i]
        i += 1
    cells.append(cur)
    return cells


def clean_header(h):
    h = h.replace("`", "").strip()
    m = re.fullmatch(r"\*\*(.*)\*\*", h)
    return (m.group(1) if m else h).strip()


def column_indices(headers, col):
    """Columns named `col`: the exact header text, else every header the regex matches in full
    (several only with agg=), else a 1-based number."""
    hs = [clean_header(h) for h in headers]
    if col in hs:
        return [hs.index(col)]
    try:
        hits = [i for i, h in enumerate(hs) if re.fullmatch(col, h)]
    except re.error:
        hits = []
    if hits:
        return hits
    if col.isdigit() and 1 <= int(col) <= len(hs):
        return [int(col) - 1]
    raise SourceError(f"no column '{col}' (headers: {' | '.join(hs)})")


def md_values(root, e):
    o = e.opts
    if "col" not in o:
        raise SourceError("a markdown source needs col=")
    found = []
    for t in md_tables(read_text(root, e.path)):
        if "table" in o and not re.search(o["table"], t["header_line"]):
            continue
        try:
            cis = column_indices(t["header"], o["col"])
        except SourceError:
            if "table" in o:
                raise
            continue
        hs = [clean_header(h) for h in t["header"]]
        for ln, cells in t["rows"]:
            if "row" in o and not re.search(o["row"], ln):
                continue
            rec = {h: re.sub(TAG_RE, "", c).strip() for h, c in zip(hs, cells)}
            if o["where"] and not all(where_ok(rec, w) for w in o["where"]):
                continue
            if True:
                for ci in cis:
                    if ci >= len(cells):
                        raise SourceError(f"row '{ln[:60]}' has no column {o['col']}")
                    found.append(cell_number(re.sub(TAG_RE, "", cells[ci]), o))
    return numbers_found(found, o, f"no table row matches row={o.get('row')} where={o['where']} "
                                   f"with a column '{o['col']}'")


def cell_number(text, o):
    """The n-th number of a cell, or None for a cell without one ("—", "n/a")."""
    try:
        return first_number(text, int(o.get("n", 1)))
    except SourceError:
        return None


def numbers_found(found, o, none_msg):
    if not found:
        raise SourceError(none_msg)
    if "agg" in o:
        found = [v for v in found if v is not None]
        if not found:
            raise SourceError("no cell with a number among the selected rows")
    elif any(v is None for v in found):
        raise SourceError("a selected cell has no number")
    return found


def csv_values(root, e):
    o = e.opts
    if "col" not in o:
        raise SourceError("a CSV source needs col=")
    text = read_text(root, e.path)
    lines = text.splitlines()
    reader = csv.reader(io.StringIO(text))
    rows = list(reader)
    header = [h.strip() for h in rows[0]]
    if o["col"] not in header:
        raise SourceError(f"no column '{o['col']}' (header: {', '.join(header)})")
    ci = header.index(o["col"])
    found = []
    for ln, row in zip(lines[1:], rows[1:]):
        if "row" in o and not re.search(o["row"], ln):
            continue
        rec = dict(zip(header, row))
        if o["where"] and not all(where_ok(rec, w) for w in o["where"]):
            continue
        found.append(cell_number(row[ci], o))
    return numbers_found(found, o, "no CSV row matches")


def regex_values(root, e):
    text = read_text(root, e.path)
    try:
        rx = re.compile(e.opts["re"], re.M)
    except re.error as x:
        raise SourceError(f"bad regex: {x}")
    if "agg" in e.opts or "each" in e.opts:
        vals = []
        for m in rx.finditer(text):
            g = m.group(1) if rx.groups else m.group(0)
            vals.append(first_number(g))
        if not vals:
            raise SourceError("regex does not match")
        return vals, 1
    m = rx.search(text)
    if not m:
        raise SourceError("regex does not match")
    groups = m.groups() if rx.groups else (m.group(0),)
    return [first_number(g) for g in groups], len(groups)


def parse_scale(s):
    if "/" in s:
        a, b = s.split("/", 1)
        return float(a) / float(b)
    return float(s)


def aggregate(vals, agg, weights=None):
    if agg == "max":
        return max(vals)
    if agg == "min":
        return min(vals)
    if agg == "maxabs":
        return max(abs(v) for v in vals)
    if agg == "minabs":
        return min(abs(v) for v in vals)
    if agg == "sum":
        return sum(vals)
    if agg == "mean":
        return sum(vals) / len(vals)
    if agg == "count":
        return float(len(vals))
    if agg == "wmean":
        if weights is None or len(weights) != len(vals):
            raise SourceError("agg=wmean needs weight=POINTER with as many values")
        return sum(v * w for v, w in zip(vals, weights)) / sum(weights)
    raise SourceError(f"unknown agg '{agg}'")


def stored_values(root, e):
    """The values an entry gives, already reduced and scaled; a list (one per figure it consumes)."""
    if os.path.isabs(e.path) or e.path.startswith(".."):
        raise SourceError(f"{e.path}: paths are relative to the repository root")
    if git_ignored(root, e.path):
        raise SourceError(f"{e.path} is ignored by git (a build output?): cite a stored, committed result")
    o = e.opts
    ext = os.path.splitext(e.path)[1].lower()
    multi_ok = False
    if "re" in o:
        vals, ngroups = regex_values(root, e)
        multi_ok = ngroups > 1
        is_list = "agg" in o or "each" in o
    elif ext == ".json":
        vals, is_list = json_values(root, e, e.frag or "")
        for v in vals:
            if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool)):
                raise SourceError(f"value {json.dumps(v)[:60]} is not a number")
        vals = [None if v is None else float(v) for v in vals]
        for op, pointer in o.get("ops", []):
            other_path = e.path
            if "#" in pointer:   # div=OTHER.json#/pointer: a value stored in another JSON file
                other_path, pointer = pointer.split("#", 1)
            other, _ = json_values(root, Entry(e.raw, "stored", other_path, None, {"where": e.opts["where"]}), pointer)
            if len(other) not in (1, len(vals)):
                raise SourceError(f"{op}={pointer} gives {len(other)} values for {len(vals)}")
            other = other * (len(vals) if len(other) == 1 else 1)
            vals = [None if a is None or b is None else (a / float(b) if op == "div" else a * float(b))
                    for a, b in zip(vals, other)]
        if "weight" in o:
            weights, _ = json_values(root, Entry(e.raw, "stored", e.path, None, {"where": e.opts["where"]}),
                                     o["weight"])
            pairs = [(v, w) for v, w in zip(vals, weights) if v is not None and w is not None]
            vals, o = [v for v, _ in pairs], dict(o, _weights=[float(w) for _, w in pairs])
        vals = [v for v in vals if v is not None]
    elif ext == ".md":
        vals = md_values(root, e)
        is_list = len(vals) > 1
    elif ext == ".csv":
        vals = csv_values(root, e)
        is_list = len(vals) > 1
    else:
        raise SourceError(f"{e.path}: use re= for a {ext or 'plain'} file")
    if "agg" in o:
        vals = [aggregate(vals, o["agg"], o.get("_weights"))]
    elif len(vals) > 1 and not multi_ok and "each" not in o:
        raise SourceError(f"{len(vals)} values ({', '.join(f'{v:.4g}' for v in vals[:6])}): "
                          "narrow the selection, or add agg= or each")
    elif len(vals) == 0:
        raise SourceError("no value")
    if "add" in o:
        vals = [v + float(o["add"]) for v in vals]
    if "abs" in o:
        vals = [abs(v) for v in vals]
    if "scale" in o:
        s = parse_scale(o["scale"])
        vals = [v * s for v in vals]
    return vals


_test_index = {}


def test_index(root):
    if root in _test_index:
        return _test_index[root]
    gtests, ctests, patterns = set(), set(), []
    skip = re.compile(r"^(build|out)[^/]*$|^\.")
    for base in ("tests", "src", "validation", "benchmarks", "."):
        top = os.path.join(root, base)
        if not os.path.isdir(top):
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            rel = os.path.relpath(dirpath, root)
            dirnames[:] = [d for d in dirnames if not (rel == "." and skip.match(d)) and not d.startswith(".")]
            if base == ".":
                dirnames[:] = []
            for fn in filenames:
                p = os.path.join(dirpath, fn)
                if fn.endswith((".cpp", ".hpp", ".cc", ".h")):
                    with open(p, encoding="utf-8", errors="replace") as f:
                        for m in re.finditer(r"\bTEST(?:_F|_P)?\(\s*(\w+)\s*,\s*(\w+)\s*\)", f.read()):
                            gtests.add(f"{m.group(1)}.{m.group(2)}")
                elif fn == "CMakeLists.txt" or fn.endswith(".cmake"):
                    with open(p, encoding="utf-8", errors="replace") as f:
                        t = f.read()
                    for m in re.finditer(r"\badd_test\(\s*NAME\s+([\w${}.-]+)|\bdgrte_add_test\(\s*([\w${}.-]+)", t):
                        name = m.group(1) or m.group(2)
                        if "${" in name:
                            patterns.append(re.compile(re.sub(r"\\\$\\\{\w+\\\}", r"[\\w.-]+", re.escape(name))))
                        else:
                            ctests.add(name)
    _test_index[root] = (gtests, ctests, patterns)
    return _test_index[root]


def test_exists(root, name):
    gtests, ctests, patterns = test_index(root)
    if name in gtests or name in ctests:
        return True
    return any(p.fullmatch(name) for p in patterns)


def agrees(fig, stored, opts):
    p, s = fig.value, stored
    eps = 1e-9 * max(abs(p), abs(s), fig.half_ulp)
    if "tol" in opts:
        return abs(s - p) <= float(opts["tol"]) + eps, f"±{opts['tol']}"
    if "rtol" in opts:
        return abs(s - p) <= float(opts["rtol"]) * abs(p) + eps, f"±{float(opts['rtol']) * 100:g} %"
    h = fig.half_ulp
    cmp = opts.get("cmp", "eq")
    if cmp == "le":
        return s <= p + h + eps, f"≤ {p:g} + {h:g}"
    if cmp == "ge":
        return s >= p - h - eps, f"≥ {p:g} − {h:g}"
    return abs(s - p) <= h + eps, f"±{h:g}"


# ---------------------------------------------------------------- documents

def doc_lines(text):
    """(line number, raw line, is_code) with fenced and indented code blocks marked."""
    out = []
    fence = None
    prev_blank = True
    in_indented = False
    for no, ln in enumerate(text.splitlines(), 1):
        s = ln.lstrip()
        if fence:
            out.append((no, ln, True))
            if s.startswith(fence):
                fence = None
            prev_blank = False
            continue
        m = re.match(r"(`{3,}|~{3,})", s)
        if m:
            fence = m.group(1)
            out.append((no, ln, True))
            continue
        indent = len(ln) - len(s)
        if s and indent >= 4 and (prev_blank or in_indented) and not s.startswith(("-", "*", "|")):
            in_indented = True
            out.append((no, ln, True))
            prev_blank = False
            continue
        if s:
            in_indented = False
        prev_blank = not s
        out.append((no, ln, False))
    return out


class Failure:
    def __init__(self, where, msg):
        self.where, self.msg = where, msg

    def __str__(self):
        return f"{self.where}: {self.msg}"


def check_file(root, rel, listing=None, untagged_only=False):
    text = read_text(root, rel)
    doc_dir = os.path.dirname(rel)
    fails = []
    lines = doc_lines(text)
    table_header = None
    table_units = None
    generated = None   # (lineno, script output) for the table after a src-table tag
    gen_table_active = False
    prev_was_table = False
    for idx, (no, raw, code) in enumerate(lines):
        where = f"{rel}:{no}"
        if code:
            prev_was_table = False
            continue
        body, comments = split_line(raw)
        if None in comments:
            fails.append(Failure(where, "an HTML comment that does not close on its line"))
            comments = [c for c in comments if c is not None]
        if raw.lstrip().startswith("|"):
            # GFM splits a table row on every unescaped pipe, comments included: a pipe in a
            # row's tag is written \| (a literal pipe in a regex there: \x7c)
            comments = [c.replace("\\|", "|") for c in comments]
        entries, claim, tags_src = [], None, False
        prev_path = None
        for c in comments:
            c = c.strip()
            if c.startswith("src-table:"):
                cmd = c[len("src-table:"):].split()
                generated = (no, run_generator(root, cmd, where, fails))
                continue
            if c.startswith("src:"):
                tags_src = True
                try:
                    for r in split_entries(c[4:]):
                        e = parse_entry(r, prev_path, doc_dir)
                        if e.kind == "stored":
                            prev_path = e.path
                        entries.append(e)
                except ValueError as x:
                    fails.append(Failure(where, str(x)))
            elif c.startswith("claim:"):
                kind = c[6:].strip().split()[0] if c[6:].strip() else ""
                if kind not in ("input", "cited", "estimate"):
                    fails.append(Failure(where, f"claim: '{kind}' is none of input, cited, estimate"))
                claim = kind
        is_row = body.lstrip().startswith("|")
        if is_row:
            cells = split_row(strip_code(body))
            if not prev_was_table:
                table_header = cells
                table_units = [bool(HEADER_UNIT.search(clean_header(h))) for h in cells]
                gen_table_active = generated is not None and generated[0] in (no - 1, no)
                if gen_table_active:
                    gen_out = generated[1]
                generated = None
                prev_was_table = True
                figs = []
                for ci, cell in enumerate(cells):
                    figs.extend(find_figures(cell, False))
                if gen_table_active and gen_out is not None and not row_in_output(raw, gen_out):
                    fails.append(Failure(where, "header row not in the src-table generator's output"))
                if gen_table_active:
                    continue
            elif all(re.fullmatch(r"\s*:?-{2,}:?\s*", c) for c in cells if c.strip()):
                continue
            else:
                figs = []
                for ci, cell in enumerate(cells):
                    hu = table_units[ci] if table_units and ci < len(table_units) else False
                    figs.extend(find_figures(cell, hu))
                if gen_table_active:
                    if gen_out is not None and not row_in_output(raw, gen_out):
                        fails.append(Failure(where, "row not in the output of the src-table generator "
                                             "(the table is stale: regenerate it)"))
                    if listing is not None and not untagged_only:
                        listing.append(f"{where}: generated row ok" if gen_out else f"{where}: generated row")
                    continue
        else:
            prev_was_table = False
            gen_table_active = False
            figs = find_figures(strip_code(body))
            if generated is not None and generated[0] != no:
                generated = None
        if not figs and not entries and claim is None:
            continue
        if claim is not None:
            if tags_src:
                fails.append(Failure(where, "a line has either claim: or src:, not both"))
            if not figs:
                fails.append(Failure(where, f"claim: {claim} on a line without figures"))
            if listing is not None and not untagged_only:
                for f in figs:
                    listing.append(f"{where}: {f.text!s:>14}  [{claim}]")
            continue
        if not entries:
            for f in figs:
                fails.append(Failure(where, f"figure '{f.text}' names no source "
                                     "(add <!-- src: ... --> or <!-- claim: input -->)"))
                if listing is not None:
                    listing.append(f"{where}: {f.text!s:>14}  UNTAGGED   | {body.strip()[:110]}")
            continue
        # match entries to figures in order
        fi = 0
        for e in entries:
            if e.kind in ("input", "cited", "estimate"):
                if fi < len(figs):
                    if listing is not None and not untagged_only:
                        listing.append(f"{where}: {figs[fi].text!s:>14}  [{e.kind}]")
                fi += 1
                continue
            if e.kind == "test":
                if not test_exists(root, e.frag):
                    fails.append(Failure(where, f"test '{e.frag}' not found (no TEST(...) or add_test)"))
                if fi < len(figs) and listing is not None and not untagged_only:
                    listing.append(f"{where}: {figs[fi].text!s:>14}  test:{e.frag}")
                fi += 1
                continue
            try:
                vals = stored_values(root, e)
            except SourceError as x:
                fails.append(Failure(where, f"source {e.raw}: {x}"))
                fi += 1
                continue
            for v in vals:
                if fi >= len(figs):
                    fi += 1
                    continue
                f = figs[fi]
                ok, band = agrees(f, v, e.opts)
                if listing is not None and not untagged_only:
                    listing.append(f"{where}: {f.text!s:>14}  {'ok ' if ok else 'BAD'} stored {v:.6g}  <- {e.raw}")
                if not ok:
                    fails.append(Failure(where, f"figure '{f.text}' ({f.value:g}) disagrees with {e.raw}: "
                                         f"stored {v:.6g} (allowed {band})"))
                fi += 1
        if fi != len(figs):
            fails.append(Failure(where, f"{len(figs)} figure(s) [{', '.join(f.text for f in figs)}] but "
                                 f"{fi} source value(s) from {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"))
    return fails


_gen_cache = {}


def run_generator(root, cmd, where, fails):
    if not cmd:
        fails.append(Failure(where, "src-table: needs a script"))
        return None
    key = tuple(cmd)
    if key not in _gen_cache:
        script = cmd[0]
        if git_ignored(root, script) or not os.path.isfile(os.path.join(root, script)):
            fails.append(Failure(where, f"src-table: no script {script}"))
            _gen_cache[key] = None
        else:
            r = subprocess.run([sys.executable] + cmd, cwd=root, capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                fails.append(Failure(where, f"src-table: {' '.join(cmd)} failed: {r.stderr.strip()[-300:]}"))
                _gen_cache[key] = None
            else:
                _gen_cache[key] = r.stdout
    return _gen_cache[key]


def norm_row(s):
    return re.sub(r"\s+", " ", TAG_RE.sub("", s)).strip()


def row_in_output(row, out):
    r = norm_row(row)
    return any(norm_row(ln) == r for ln in out.splitlines())


def expand(root, patterns):
    import glob
    files = []
    for p in patterns:
        hits = sorted(glob.glob(os.path.join(root, p)))
        if not hits and not any(ch in p for ch in "*?["):
            hits = [os.path.join(root, p)]
        for h in hits:
            r = os.path.relpath(h, root)
            if r not in files:
                files.append(r)
    return files


def main(argv=None):
    ap = argparse.ArgumentParser(description="check that documented accuracy and speed figures match their "
                                             "stored sources (grammar: top of this file)")
    ap.add_argument("files", nargs="*", help="markdown files (default: the documented set)")
    ap.add_argument("--root", default=ROOT_DEFAULT, help="repository root")
    ap.add_argument("--list", action="store_true", help="print every figure with its source and value")
    ap.add_argument("--untagged", action="store_true", help="print the untagged figures only")
    a = ap.parse_args(argv)
    root = os.path.abspath(a.root)
    files = expand(root, a.files or DEFAULT_FILES)
    listing = [] if (a.list or a.untagged) else None
    fails = []
    nfig = 0
    for rel in files:
        try:
            fs = check_file(root, rel, listing, a.untagged)
        except SourceError as x:
            fs = [Failure(rel, str(x))]
        fails.extend(fs)
    if listing is not None:
        print("\n".join(listing))
    for f in fails:
        print(f"FAIL {f}", file=sys.stderr if listing is not None else sys.stdout)
    print(f"check_claims: {len(files)} files, {len(fails)} failure(s)",
          file=sys.stderr if listing is not None else sys.stdout)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
