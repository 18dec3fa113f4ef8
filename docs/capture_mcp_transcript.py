#!/usr/bin/env python3
"""Captures docs/mcp-transcript.md: a real session with `trtllm-run mcp`.

Makes the demo checkout (/tmp/demo-repo: one pytest file, two tests, the first sleeping
3 s), spawns `trtllm-run mcp` in it, sends initialize, notifications/initialized,
tools/list, plan_case, run_case and two wait_case calls over stdin, and writes every
message both ways, pretty-printed, as Markdown on stdout. Rerun it whenever the server's
tools or messages change:

    python3 docs/capture_mcp_transcript.py build/bin/trtllm-run > docs/mcp-transcript.md
"""
import json
import os
import shutil
import subprocess
import sys

DEMO = "/tmp/demo-repo"
TEST_FILE = '''# tests/test_demo.py
import time


def test_tokenizer_roundtrip():
    time.sleep(3)
    assert "hello".encode().decode() == "hello"


def test_sampling_config():
    assert sum([0.25, 0.75]) == 1.0
'''
NUMBER_WORDS = {9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}


def make_demo():
    shutil.rmtree(DEMO, ignore_errors=True)
    os.makedirs(os.path.join(DEMO, "tests"))
    with open(os.path.join(DEMO, "tests", "test_demo.py"), "w") as out:
        out.write(TEST_FILE.split("\n", 1)[1])
    subprocess.run(["git", "init", "-q", DEMO], check=True)


def pretty(message):
    return "```json\n" + json.dumps(message, indent=2, ensure_ascii=False) + "\n```\n"


class Session:
    def __init__(self, binary):
        self.server = subprocess.Popen([binary, "mcp"], cwd=DEMO, stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True)
        self.out = []
        self.step = 0

    def send(self, title, message):
        self.step += 1
        self.out.append(f"## {self.step}. client -> server: {title}\n\n" + pretty(message))
        self.server.stdin.write(json.dumps(message) + "\n")
        self.server.stdin.flush()
        if "id" not in message:
            return None
        while True:  # notifications first, then the response to this id
            line = self.server.stdout.readline()
            if not line:
                raise SystemExit("the server closed stdout before answering " + title)
            reply = json.loads(line)
            if reply.get("id") == message["id"]:
                return reply, len(line.rstrip("\n").encode())
            self.out.append(f"server -> client: notification `{reply.get('method')}`\n\n" +
                            pretty(reply))

    def response(self, reply, heading="server -> client: response", folded=False):
        text = heading + "\n\n"
        text += ("<details><summary>show</summary>\n\n" + pretty(reply) + "\n</details>\n"
                 if folded else pretty(reply))
        self.out.append(text)

    def close(self):
        self.server.stdin.close()
        err = self.server.stderr.read()
        self.server.wait(timeout=30)
        return err


def call(session, number, title, name, arguments, token=None):
    message = {"jsonrpc": "2.0", "id": number, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}}
    if token:
        message["params"]["_meta"] = {"progressToken": token}
    reply, _ = session.send(f"`tools/call {name}` ({title})", message)
    session.response(reply)
    return reply["result"]["structuredContent"]


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/bin/trtllm-run")
    make_demo()
    session = Session(binary)
    reply, _ = session.send("`initialize` (legacy handshake, as agent hosts speak today)", {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "example-agent", "version": "1.0"}}})
    session.response(reply)
    session.send("`notifications/initialized`",
                 {"jsonrpc": "2.0", "method": "notifications/initialized"})
    reply, size = session.send("`tools/list`",
                               {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    count = len(reply["result"]["tools"])
    names = ", ".join(tool["name"] for tool in reply["result"]["tools"])
    session.response(reply, f"server -> client: response (the {NUMBER_WORDS.get(count, count)} "
                     f"tools with their schemas, {size} bytes on one line: {names})",
                     folded=True)
    planned = call(session, 3, "plan first: nothing runs yet", "plan_case",
                   {"test_cmd": "pytest -v tests/test_demo.py", "scenario": "local_direct",
                    "monitor_timeout": "10m"})
    handle = planned["handle"]
    call(session, 4, "start the planned work dir; returns at once", "run_case",
         {"handle": handle})
    call(session, 5, "wait at most 2 s, with progress", "wait_case",
         {"handle": handle, "timeout_s": 2}, token="wait-1")
    state = call(session, 6, "wait again: the verdict arrives", "wait_case",
                 {"handle": handle, "timeout_s": 60}, token="wait-2")
    if not state.get("finished"):
        raise SystemExit("no verdict after the second wait_case: " + json.dumps(state))
    stderr = session.close()

    print("# An agent's session with `trtllm-run mcp`: plan -> run -> wait -> verdict\n")
    print("A real exchange with the server, captured on the test host by\n"
          "`docs/capture_mcp_transcript.py`: a client spawned `trtllm-run mcp` in a checkout\n"
          "(`/tmp/demo-repo`, one pytest file with two tests, the first sleeping 3 s) and sent\n"
          "these messages over stdin; the server's stdout lines follow each. On the wire every\n"
          "message is one line; here each is pretty-printed.\n")
    print("```python\n" + TEST_FILE + "```\n")
    print("\n".join(session.out))
    print("The client then closed stdin; the server logged on stderr\n")
    print("```\n" + stderr.rstrip("\n") + "\n```\n")
    print("The verdict is in the work dir too (`result.json`), where `case_status` or\n"
          "`trtllm-run status` finds it later, from any process.")


if __name__ == "__main__":
    main()
