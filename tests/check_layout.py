#!/usr/bin/env python3
"""The area include graph of libcore/src has no cycle.

An area is a folder of libcore/src holding sources (runtime, model, slurm/watch, ...).
Area A depends on area B when a file of A includes "B/<name>.h". The check fails (exit 1)
naming every cycle, each arrow with one #include that makes it.

The built-in plugins (plugins/) are built as a third party builds one: against the public
and SDK headers (libcore/include/trtllm_run/) only. The check also fails naming every
#include in plugins/, quoted or angled, of a libcore/src header that is not the plugin's
own (a header beside the including file). It prints how many private libcore/src headers
apps/ include (reported, not a failure).

  check_layout.py [SOURCE_DIR] [--graph]

SOURCE_DIR defaults to the repository holding this script; --graph prints every arrow.
Exit 0: no cycle; 1: a cycle; 2: bad usage or no libcore/src under SOURCE_DIR.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
SOURCE_SUFFIXES = (".h", ".cc")


def source_files(root):
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.join(folder, name)


def includes(path, pattern=INCLUDE):
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            match = pattern.match(line)
            if match:
                yield number, match.group(1)


def area_graph(src):
    """{area: {included area: 'file:line' of the first include that makes the arrow}}."""
    graph = {}
    for path in source_files(src):
        area = os.path.relpath(os.path.dirname(path), src)
        graph.setdefault(area, {})
        for number, target in includes(path):
            if not os.path.isfile(os.path.join(src, target)):
                continue  # a public header, a system or third-party one
            target_area = os.path.dirname(target)
            if target_area and target_area != area:
                where = "%s:%d" % (os.path.relpath(path, os.path.dirname(os.path.dirname(src))), number)
                graph[area].setdefault(target_area, where)
    return graph


def strongly_connected(graph):
    """Tarjan's algorithm: the components with more than one area, each sorted."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, {})):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def one_cycle(graph, component):
    """A shortest cycle through the component's first area, as a list of areas."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph.get(node, {})):
                if nxt == start:
                    return paths[node] + [start]
                if nxt in members and nxt not in paths:
                    paths[nxt] = paths[node] + [nxt]
                    following.append(nxt)
        frontier = following
    return [start]


def private_includes(root, src, folders):
    """The #include lines in folders ("..." or <...>) that name a header of libcore/src
    and not a file beside the including one."""
    hits = []
    for folder in folders:
        for path in source_files(os.path.join(root, folder)):
            for number, target in includes(path, ANY_INCLUDE):
                if os.path.isfile(os.path.join(os.path.dirname(path), target)):
                    continue  # the plugin's own header
                if os.path.isfile(os.path.normpath(os.path.join(src, target))):
                    hits.append("%s:%d %s" % (os.path.relpath(path, root), number, target))
    return hits


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    flags = [a for a in argv if a.startswith("--")]
    if len(args) > 1 or any(f != "--graph" for f in flags):
        print("usage: check_layout.py [SOURCE_DIR] [--graph]", file=sys.stderr)
        return 2
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    src = os.path.join(root, "libcore", "src")
    if not os.path.isdir(src):
        print("check_layout: no libcore/src under %s" % root, file=sys.stderr)
        return 2

    graph = area_graph(src)
    arrows = sum(len(targets) for targets in graph.values())
    mutual = sorted((a, b) for a in graph for b in graph[a] if a < b and a in graph.get(b, {}))
    components = strongly_connected(graph)
    print("areas: %d, arrows: %d, areas including each other: %d, cycles: %d" %
          (len(graph), arrows, len(mutual), len(components)))
    if "--graph" in flags:
        for area in sorted(graph):
            print("  %s -> %s" % (area, ", ".join(sorted(graph[area])) or "(nothing)"))
    plugin_hits = private_includes(root, src, ["plugins"])
    print("private libcore/src includes in plugins/: %d" % len(plugin_hits))
    print("private libcore/src includes in apps/: %d" % len(private_includes(root, src, ["apps"])))

    sys.stdout.flush()
    for hit in plugin_hits:
        print("FAIL: plugin includes a private libcore/src header: %s (plugins use the SDK, "
              "libcore/include/trtllm_run/sdk/, only)" % hit, file=sys.stderr)
    for a, b in mutual:
        print("FAIL: %s and %s include each other (%s; %s)" % (a, b, graph[a][b], graph[b][a]),
              file=sys.stderr)
    for component in components:
        cycle = one_cycle(graph, component)
        print("FAIL: area cycle %s among {%s}" % (" -> ".join(cycle), ", ".join(component)),
              file=sys.stderr)
        for a, b in zip(cycle, cycle[1:]):
            print("  %s -> %s: %s" % (a, b, graph[a][b]), file=sys.stderr)
    if components or plugin_hits:
        return 1
    print("PASS: no include cycle between the areas of libcore/src")
    print("PASS: plugins/ include no private libcore/src header")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
