#!/usr/bin/env python3
"""Opens an HTML file in headless Chromium and prints what a person would get, as JSON.

  browser_check.py PAGE.html OUT_DIR

Chromium runs without a network (`unshare -n` when this process may make a namespace)
and with a net log: `page_requests` lists every URL request the page itself started
(the net log's URL_REQUEST_START_JOB events with an initiator; the browser's own update
checks have none and are not the page's). The screenshot is decoded here (zlib, PNG
filters) into `distinct_colors` and `non_white_fraction`; `dom` is the file of the DOM
Chromium dumped after running the page's script. Exit 0 when Chromium ran, 2 when not.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--hide-scrollbars"]


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run(argv, out_dir, tag):
    prefix = []
    if shutil.which("unshare") and subprocess.run(
            ["unshare", "-n", "true"], capture_output=True).returncode == 0:
        prefix = ["unshare", "-n"]
    profile = os.path.join(out_dir, "profile_" + tag)
    with open(os.path.join(out_dir, tag + ".stderr"), "wb") as err:
        return subprocess.run(prefix + [chromium()] + FLAGS + ["--user-data-dir=" + profile] + argv,
                              stdout=subprocess.PIPE, stderr=err, timeout=120), bool(prefix)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def png_stats(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color = header[0], header[1], header[2], header[3]
    assert depth == 8 and color in (2, 6), "only 8-bit RGB/RGBA"
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    previous = bytearray(stride)
    colors, non_white = set(), 0
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:
            line = bytearray((x + p) & 0xFF for x, p in zip(line, previous))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                up_left = previous[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + paeth(left, previous[i], up_left)) & 0xFF
        for x in range(0, stride, bpp * 2):  # every other pixel: enough to see content
            pixel = bytes(line[x:x + 3])
            colors.add(pixel)
            if pixel != b"\xff\xff\xff":
                non_white += 1
        previous = line
    sampled = height * ((width + 1) // 2)
    return {"width": width, "height": height, "distinct_colors": len(colors),
            "non_white_fraction": non_white / sampled}


def page_requests(net_log):
    with open(net_log) as f:
        log = json.load(f)
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    urls = []
    for event in log["events"]:
        params = event.get("params") or {}
        if names.get(event["type"]) != "URL_REQUEST_START_JOB" or "url" not in params:
            continue
        if params.get("initiator", "not an origin") != "not an origin":
            urls.append(params["url"])
    return urls


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    page, out_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if chromium() is None:
        print("browser_check.py: no chromium on PATH (cmake/install_deps.sh installs it)",
              file=sys.stderr)
        return 2
    os.makedirs(out_dir, exist_ok=True)
    shot = os.path.join(out_dir, "screenshot.png")
    net_log = os.path.join(out_dir, "net.json")
    dom = os.path.join(out_dir, "dom.html")
    url = "file://" + page
    first, isolated = run(["--screenshot=" + shot, "--window-size=1200,1400",
                           "--log-net-log=" + net_log, url], out_dir, "screenshot")
    second, _ = run(["--dump-dom", "--virtual-time-budget=2000", url], out_dir, "dom")
    with open(dom, "wb") as f:
        f.write(second.stdout)
    result = {"screenshot_exit": first.returncode, "dom_exit": second.returncode,
              "network_namespace": isolated, "dom": dom, "screenshot": shot,
              "page_requests": page_requests(net_log) if os.path.exists(net_log) else None}
    result.update(png_stats(shot) if os.path.exists(shot) else {"distinct_colors": 0})
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
