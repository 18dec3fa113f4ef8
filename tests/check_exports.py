#!/usr/bin/env python3
"""libtrtllm_run_core.so exports its API and nothing else.

The API is what the headers under libcore/include/trtllm_run/ (public and SDK) declare,
plus the CLI's entry point trtllm_run_cli_main (trtllm_run/cli_main.h). Everything else
is compiled with hidden visibility (libcore/CMakeLists.txt). The check fails (exit 1),
naming each offender, when:

  - a header or source under libcore/src/ or apps/ marks anything exported
    (TRTLLM_RUN_API or a visibility("default") attribute);
  - the library exports a symbol that names a trtllm_run entity the API headers never
    mention (a function, class, variable or namespace of a private header), or anything
    in an anonymous namespace;
  - the library exports more symbols than the budget in
    tests/fixtures/exports/budget.txt (the count now, so that growth is a decision:
    raise the budget in the same commit and say why).

  check_exports.py LIBRARY [--source-dir DIR] [--budget-file FILE] [--nm-listing FILE]
                   [--no-budget]

LIBRARY is the built libtrtllm_run_core.so; its dynamic symbols are read with
`nm -D --defined-only -C` (or, for the check's own test, from --nm-listing, a file of
that command's output). --no-budget skips the count: sanitizer builds (clang's
-fsanitize=function and the instrumentation instantiate and export more templates)
check the names only; the budget is the product build's. Symbols that sanitizer or coverage instrumentation adds
(__asan*, __ubsan*, __sancov*, ...) are not counted. SOURCE_DIR defaults to the repository holding this script.
Exit 0: API only, within budget; 1: a violation; 2: bad usage or unreadable input.
"""
import argparse
import os
import re
import subprocess
import sys

ENTRY_POINTS = {"trtllm_run_cli_main"}
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A trtllm_run entity as c++filt prints it: trtllm_run::a::B::c (stops at '(' or '<').
QUALIFIED = re.compile(r"\btrtllm_run::(?:[A-Za-z_~][A-Za-z0-9_]*::)*[A-Za-z_~][A-Za-z0-9_]*")
# What sanitizer and coverage instrumentation adds (the CI's ASan + UBSan and fuzzing
# builds): not the library's own symbols, not counted.
INSTRUMENTATION = re.compile(r"^(__asan|__odr_asan|__ubsan|__lsan|__tsan|__sanitizer|__sancov)")
LINE_COMMENT = re.compile(r"//.*")
BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
EXPORT_MARK = re.compile(r'\bTRTLLM_RUN_API\b|visibility\s*\(\s*"default"\s*\)')
SOURCE_SUFFIXES = (".h", ".cc")


def fail_usage(message):
    print("check_exports.py: " + message, file=sys.stderr)
    sys.exit(2)


def files_under(root):
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.join(folder, name)


def api_words(include_dir):
    """Every identifier in the code of the API headers (comments stripped: a private
    name their prose mentions is still private)."""
    words = set()
    for path in files_under(include_dir):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = BLOCK_COMMENT.sub(" ", f.read())
        for line in text.splitlines():
            words.update(IDENTIFIER.findall(LINE_COMMENT.sub("", line)))
    return words


def export_marks(source_dir):
    """'file:line: text' of each export mark in private code."""
    marks = []
    for root in ("libcore/src", "apps"):
        for path in files_under(os.path.join(source_dir, root)):
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    if EXPORT_MARK.search(line):
                        marks.append("%s:%d: %s" % (os.path.relpath(path, source_dir), number,
                                                    line.strip()))
    return marks


def read_listing(library, listing):
    if listing:
        try:
            with open(listing, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as error:
            fail_usage("cannot read --nm-listing %s: %s" % (listing, error.strerror))
    else:
        if not os.path.isfile(library):
            fail_usage("no library at %s (build the trtllm_run_core target first)" % library)
        try:
            text = subprocess.run(["nm", "-D", "--defined-only", "-C", library], check=True,
                                  capture_output=True, text=True).stdout
        except (OSError, subprocess.CalledProcessError) as error:
            fail_usage("nm -D %s failed: %s" % (library, error))
    symbols = []
    for line in text.splitlines():
        # "<address> <type> <name>"; the name may hold spaces.
        parts = line.split(None, 2)
        if len(parts) == 3 and not INSTRUMENTATION.match(parts[2]):
            symbols.append(parts[2])
    return symbols


def read_budget(path):
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.split("#", 1)[0].split()
                if len(line) == 2 and line[0] == "max_exported_symbols" and line[1].isdigit():
                    return int(line[1])
    except OSError as error:
        fail_usage("cannot read the budget %s: %s" % (path, error.strerror))
    fail_usage("%s has no line 'max_exported_symbols <N>'" % path)


def private_names(symbol, words):
    """The components of the trtllm_run names in `symbol` that no API header mentions."""
    if symbol in ENTRY_POINTS:
        return []
    if "(anonymous namespace)" in symbol:
        return ["(anonymous namespace)"]
    missing = []
    for qualified in QUALIFIED.findall(symbol):
        for component in qualified.split("::")[1:]:
            name = component.lstrip("~")
            if name not in words and name not in missing:
                missing.append(name)
    return missing


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("library")
    default_source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--source-dir", default=default_source)
    parser.add_argument("--budget-file")
    parser.add_argument("--nm-listing")
    parser.add_argument("--no-budget", action="store_true",
                        help="skip the count (sanitizer builds: the instrumentation instantiates "
                        "and exports more templates; the budget is the product build's)")
    args = parser.parse_args()
    source_dir = args.source_dir
    include_dir = os.path.join(source_dir, "libcore", "include", "trtllm_run")
    if not os.path.isdir(include_dir):
        fail_usage("no libcore/include/trtllm_run under %s" % source_dir)
    budget_file = args.budget_file or os.path.join(source_dir, "tests", "fixtures", "exports",
                                                   "budget.txt")
    budget = None if args.no_budget else read_budget(budget_file)

    failed = False
    marks = export_marks(source_dir)
    if marks:
        failed = True
        print("FAIL: private code marks symbols exported (only headers under "
              "libcore/include/trtllm_run/ may use TRTLLM_RUN_API):")
        for mark in marks:
            print("  " + mark)

    symbols = read_listing(args.library, args.nm_listing)
    words = api_words(include_dir)
    offenders = []
    for symbol in symbols:
        missing = private_names(symbol, words)
        if missing:
            offenders.append("%s   (not in the API headers: %s)" % (symbol, ", ".join(missing)))
    if offenders:
        failed = True
        print("FAIL: %d exported symbols are not the API's (declare them under "
              "libcore/include/trtllm_run/ or hide them):" % len(offenders))
        for offender in offenders:
            print("  " + offender)

    count = len(symbols)
    if budget is not None and count > budget:
        failed = True
        print("FAIL: %d exported symbols, over the budget of %d (%s): hide what is not API, "
              "or raise the budget in the commit that says why" % (count, budget,
                                                                    os.path.relpath(
                                                                        budget_file,
                                                                        source_dir)))
    if failed:
        return 1
    if budget is None:
        print("PASS: %d exported symbols (no budget: --no-budget), all of the API" % count)
    else:
        print("PASS: %d exported symbols (budget %d), all of the API%s" %
              (count, budget, "" if count * 10 >= budget * 9 else
               "; the budget can come down to %d" % count))
    return 0


if __name__ == "__main__":
    sys.exit(main())
