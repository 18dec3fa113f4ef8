// The remote output follower's framing (FollowFrameParser): frames split anywhere across
// reads, binary bytes, malformed streams; and the real follower script (bash, run here)
// through FileFollowStream: a path with spaces and quotes, a growing file, a missing one
// that appears, a file truncated and one replaced by a shorter one.
#include "trtllm_run/sdk/slurm/file_follow_stream.h"

#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "trtllm_run/sdk/process.h"

namespace trtllm_run {
namespace {

using Kind = FollowFrame::Kind;

std::vector<FollowFrame> FeedInPieces(const std::string& stream, std::size_t piece,
                                      std::size_t files, bool* ok) {
  FollowFrameParser parser(files, 1 << 20);
  std::vector<FollowFrame> frames;
  *ok = true;
  for (std::size_t at = 0; at < stream.size() && *ok; at += piece) {
    std::string part = stream.substr(at, piece);
    *ok = parser.Feed(part.data(), part.size(), &frames);
  }
  return frames;
}

std::string Chunk(std::size_t index, std::uint64_t offset, std::uint64_t size,
                  const std::string& bytes) {
  return "F " + std::to_string(index) + " " + std::to_string(offset) + " " + std::to_string(size) +
         " " + std::to_string(bytes.size()) + "\n" + bytes;
}

TEST_CASE("follow frames: split anywhere across reads, the same frames", "[follow]") {
  std::string binary("a\0b\nF 0 0 1 1\nH\n\xff\xfe\r\n", 20);
  std::string stream =
      "S 2\n" + Chunk(0, 0, 6, "hello\n") + "H\n" + Chunk(1, 10, 30, binary) + Chunk(0, 6, 6, "");
  for (std::size_t piece : {1, 2, 3, 7, 64, 4096}) {
    INFO("piece " << piece);
    bool ok = false;
    std::vector<FollowFrame> frames = FeedInPieces(stream, piece, 2, &ok);
    REQUIRE(ok);
    REQUIRE(frames.size() == 5);
    CHECK(frames[0].kind == Kind::kStart);
    CHECK(frames[0].index == 2);
    CHECK(frames[1].kind == Kind::kChunk);
    CHECK(frames[1].bytes == "hello\n");
    CHECK(frames[2].kind == Kind::kBeat);
    CHECK(frames[3].index == 1);
    CHECK(frames[3].offset == 10);
    CHECK(frames[3].size == 30);
    CHECK(frames[3].bytes == binary);  // NULs, newlines, a frame header inside the bytes
    CHECK(frames[4].bytes.empty());
    CHECK(frames[4].offset == 6);
  }
}

TEST_CASE("follow frames: a partial frame waits for its bytes", "[follow]") {
  FollowFrameParser parser(1, 100);
  std::vector<FollowFrame> frames;
  std::string head = "S 1\nF 0 0 4 4\nab";
  REQUIRE(parser.Feed(head.data(), head.size(), &frames));
  CHECK(frames.size() == 1);  // only the start
  CHECK(parser.pending() == 12);
  REQUIRE(parser.Feed("cd", 2, &frames));
  REQUIRE(frames.size() == 2);
  CHECK(frames[1].bytes == "abcd");
  CHECK(parser.pending() == 0);
}

TEST_CASE("follow frames: a broken stream is refused, never read on", "[follow]") {
  struct Bad {
    std::string stream, error;
  };
  std::vector<Bad> bad = {
      {"F 0 0 1 1\nx", "did not start with \"S 1\""},
      {"S 2\n", "did not start with \"S 1\""},
      {"S 1\nmux_client_request_session: read from master failed\n", "unexpected frame header"},
      {"S 1\nF 1 0 1 1\nx", "index out of range"},
      {"S 1\nF 0 0 1 101\n", "over the chunk limit"},
      {"S 1\nF 0 -1 1 1\nx", "unexpected frame header"},
      {"S 1\nF 0 0 1\n", "unexpected frame header"},
      {"S 1\n" + std::string(200, 'x'), "without its newline"},
  };
  for (const Bad& b : bad) {
    INFO(b.stream.substr(0, 60));
    FollowFrameParser parser(1, 100);
    std::vector<FollowFrame> frames;
    CHECK_FALSE(parser.Feed(b.stream.data(), b.stream.size(), &frames));
    CHECK_THAT(parser.error(), Catch::Contains(b.error));
    std::string more = "H\n";
    CHECK_FALSE(parser.Feed(more.data(), more.size(), &frames));
  }
}

// Runs the follower script here, as ssh would run it on the login node.
Result<std::unique_ptr<ChildProcess>> StartHere(const std::vector<std::string>& argv) {
  ProcessOptions options;
  options.argv = argv;
  return ChildProcess::Spawn(options);
}

struct Followed {
  std::map<std::size_t, std::string> copies;  // what the frames rebuilt, per file
  std::vector<FollowFrame> chunks;
};

// Reads the stream until `done` holds for what arrived (or 10 s passed).
bool ReadUntil(FileFollowStream* stream, Followed* seen,
               const std::function<bool(const Followed&)>& done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    std::vector<FollowFrame> frames;
    if (!stream->Read(&frames)) return false;
    for (FollowFrame& frame : frames) {
      if (frame.kind != Kind::kChunk) continue;
      std::string& copy = seen->copies[frame.index];
      if (frame.offset == 0) copy.clear();
      REQUIRE(frame.offset == copy.size());
      copy += frame.bytes;
      seen->chunks.push_back(frame);
    }
    if (done(*seen)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

void Append(const std::string& path, const std::string& text, bool truncate = false) {
  std::ofstream out(path, truncate ? std::ios::trunc : std::ios::app);
  out << text;
}

TEST_CASE("follower script: spaces and quotes, growth, truncation, replacement", "[follow]") {
  char tmpl[] = "/tmp/trtllm_run_follow_XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  std::string dir = std::string(tmpl) + "/it's a \"dir\" $(x) `y`";
  REQUIRE(std::system(
              ("mkdir -p '" + std::string(tmpl) + "/it'\\''s a \"dir\" $(x) `y`'").c_str()) == 0);
  std::string a = dir + "/job 1.out", b = dir + "/job 1.err";
  Append(a, "first line\n");
  Append(a, std::string("bin\0ary\n", 8));
  Result<std::unique_ptr<FileFollowStream>> started =
      FileFollowStream::Start(StartHere, {{a, 0}, {b, 0}});
  REQUIRE(started.ok());
  FileFollowStream* stream = started.value().get();
  Followed seen;
  const std::string a_text = std::string("first line\nbin\0ary\n", 19);
  REQUIRE(ReadUntil(stream, &seen, [&](const Followed& f) {
    return f.copies.count(0) && f.copies.at(0) == a_text;
  }));
  CHECK(stream->started());
  CHECK(seen.copies.count(1) == 0);  // missing: nothing sent

  Append(b, "now it exists\n");
  Append(a, "grown\n");
  REQUIRE(ReadUntil(stream, &seen, [&](const Followed& f) {
    return f.copies.count(1) && f.copies.at(1) == "now it exists\n" &&
           f.copies.at(0) == a_text + "grown\n";
  }));

  // Truncated to nothing: an empty frame from 0; then it grows again.
  Append(a, "", true);
  REQUIRE(ReadUntil(stream, &seen, [&](const Followed& f) { return f.copies.at(0).empty(); }));
  Append(a, "after truncation\n");
  REQUIRE(ReadUntil(stream, &seen,
                    [&](const Followed& f) { return f.copies.at(0) == "after truncation\n"; }));

  // Replaced by a shorter file (a new inode): copied again from the start.
  std::string replacement = dir + "/replacement";
  Append(replacement, "short\n");
  REQUIRE(std::rename(replacement.c_str(), b.c_str()) == 0);
  REQUIRE(ReadUntil(stream, &seen, [&](const Followed& f) { return f.copies.at(1) == "short\n"; }));

  // Heartbeats keep coming while nothing changes.
  auto before = stream->last_frame();
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));
  std::vector<FollowFrame> frames;
  REQUIRE(stream->Read(&frames));
  CHECK(stream->last_frame() > before);
  started.value().reset();
  std::system(("rm -rf '" + std::string(tmpl) + "'").c_str());
}

TEST_CASE("follower script: started from offsets, it sends only what follows", "[follow]") {
  char tmpl[] = "/tmp/trtllm_run_follow_XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  std::string a = std::string(tmpl) + "/a.out";
  Append(a, "0123456789");
  Result<std::unique_ptr<FileFollowStream>> started = FileFollowStream::Start(StartHere, {{a, 4}});
  REQUIRE(started.ok());
  std::vector<FollowFrame> chunks;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (chunks.empty() && std::chrono::steady_clock::now() < deadline) {
    std::vector<FollowFrame> frames;
    REQUIRE(started.value()->Read(&frames));
    for (FollowFrame& frame : frames) {
      if (frame.kind == Kind::kChunk) chunks.push_back(frame);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(chunks.size() == 1);
  CHECK(chunks[0].offset == 4);
  CHECK(chunks[0].size == 10);
  CHECK(chunks[0].bytes == "456789");
  started.value().reset();
  std::system(("rm -rf '" + std::string(tmpl) + "'").c_str());
}

}  // namespace
}  // namespace trtllm_run
