// PatternScanner and LogFollower: patterns split across chunks, case, lines, incremental
// reads of a growing real file, truncation and replacement, and the cost of following a
// 100 MB log.
#include "trtllm_run/sdk/supervise/log_follower.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace trtllm_run {
namespace {

class TempFile {
 public:
  TempFile() {
    char tmpl[] = "/tmp/trtllm_run_log_follower_XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/job.log";
  }
  ~TempFile() {
    ::unlink(path_.c_str());
    ::unlink((path_ + ".new").c_str());
    ::rmdir(dir_.c_str());
  }
  const std::string& path() const { return path_; }
  void Append(const std::string& text) const {
    std::ofstream out(path_, std::ios::binary | std::ios::app);
    out << text;
    REQUIRE(out.good());
  }
  void Replace(const std::string& text) const {
    {
      std::ofstream out(path_ + ".new", std::ios::binary | std::ios::trunc);
      out << text;
    }
    REQUIRE(::rename((path_ + ".new").c_str(), path_.c_str()) == 0);
  }
  void Truncate(off_t size) const { REQUIRE(::truncate(path_.c_str(), size) == 0); }

 private:
  std::string dir_;
  std::string path_;
};

LogPoll MustPoll(LogFollower* follower) {
  Result<LogPoll> poll = follower->Poll();
  INFO(poll.status().ToString());
  REQUIRE(poll.ok());
  return poll.value();
}

TEST_CASE("PatternScanner finds a pattern split at every possible chunk boundary", "[log]") {
  const std::string text = "step 41 ok\nrank 3: Hang Detected in allreduce\nstep 42\n";
  const std::size_t at = text.find("Hang Detected");
  for (std::size_t split = 0; split <= text.size(); ++split) {
    PatternScanner scanner({"hang detected"});
    scanner.Feed(std::string_view(text).substr(0, split));
    scanner.Feed(std::string_view(text).substr(split));
    INFO("split at " << split);
    REQUIRE(scanner.first_match() != nullptr);
    CHECK(scanner.first_match()->offset == at);
    CHECK(scanner.first_match()->line == "rank 3: Hang Detected in allreduce");
    CHECK(scanner.first_match()->line_complete);
  }
}

TEST_CASE("PatternScanner finds a pattern fed one byte at a time", "[log]") {
  const std::string text = "xxhAnG dEtEcTeDyy\n";
  PatternScanner scanner({"hang detected"});
  for (char c : text) scanner.Feed(std::string_view(&c, 1));
  REQUIRE(scanner.first_match() != nullptr);
  CHECK(scanner.first_match()->offset == 2u);
  CHECK(scanner.first_match()->line == "xxhAnG dEtEcTeDyy");
}

TEST_CASE("PatternScanner matches ASCII case-insensitively, patterns in any case", "[log]") {
  for (const char* line : {"HANG DETECTED", "hang detected", "Hang Detected", "hAnG dEtEcTeD"}) {
    PatternScanner scanner({"Hang detected"});
    scanner.Feed(std::string("prefix ") + line + " suffix\n");
    INFO(line);
    CHECK(scanner.first_match() != nullptr);
  }
  PatternScanner scanner({"hang detected"});
  scanner.Feed("hang  detected\nhang_detected\nhangdetected\n");
  CHECK(scanner.first_match() == nullptr);
}

TEST_CASE("PatternScanner does not miss a match after a false start", "[log]") {
  PatternScanner scanner({"aab"});
  scanner.Feed("aaaaAAB\n");
  REQUIRE(scanner.first_match() != nullptr);
  CHECK(scanner.first_match()->offset == 4u);
  PatternScanner upper_first({"out of memory"});
  upper_first.Feed("Out of time; OUT OF MEMORY\n");
  REQUIRE(upper_first.first_match() != nullptr);
  CHECK(upper_first.first_match()->offset == 13u);
}

TEST_CASE("PatternScanner keeps the first match of each pattern, in stream order", "[log]") {
  PatternScanner scanner({"Traceback", "Error", "never"});
  scanner.Feed("line 1\nValueError: bad\n");
  scanner.Feed("Traceback (most recent call last):\nError again\n");
  REQUIRE(scanner.matches().size() == 2);
  CHECK(scanner.matches()[0].pattern == "Error");
  CHECK(scanner.matches()[0].line == "ValueError: bad");
  CHECK(scanner.matches()[1].pattern == "Traceback");
  CHECK(scanner.FindMatch(0)->line == "Traceback (most recent call last):");
  CHECK(scanner.FindMatch(1)->offset == 12u);
  CHECK(scanner.FindMatch(2) == nullptr);
  CHECK(scanner.first_match()->pattern_index == 1u);
  CHECK_FALSE(scanner.all_found());
}

TEST_CASE("PatternScanner completes a match's line from later chunks", "[log]") {
  PatternScanner scanner({"hang detected"});
  scanner.Feed("earlier\nwatchdog: ");
  scanner.Feed("hang detected on ");
  REQUIRE(scanner.first_match() != nullptr);
  CHECK_FALSE(scanner.first_match()->line_complete);
  CHECK(scanner.first_match()->line == "watchdog: hang detected on ");
  scanner.Feed("rank 7\r\nnext line\n");
  CHECK(scanner.first_match()->line_complete);
  CHECK(scanner.first_match()->line == "watchdog: hang detected on rank 7");
}

TEST_CASE("PatternScanner bounds very long lines", "[log]") {
  PatternScanner scanner({"needle"});
  std::string huge(1 << 20, 'a');
  scanner.Feed(huge);
  scanner.Feed("needle");
  scanner.Feed(huge);
  scanner.Feed("\n");
  REQUIRE(scanner.first_match() != nullptr);
  CHECK(scanner.first_match()->offset == huge.size());
  CHECK(scanner.first_match()->line.size() <= 8192u);
  CHECK(scanner.first_match()->line.find("needle") != std::string::npos);
}

TEST_CASE("PatternScanner ignores empty patterns", "[log]") {
  PatternScanner scanner({"", "x"});
  scanner.Feed("abc\n");
  CHECK(scanner.matches().empty());
  scanner.Feed("x\n");
  CHECK(scanner.all_found());
}

TEST_CASE("LogFollower tolerates a missing file and reads only appended bytes", "[log]") {
  TempFile file;
  LogFollower follower(file.path(), {"hang detected"}, 3);
  LogPoll poll = MustPoll(&follower);
  CHECK_FALSE(poll.exists);
  CHECK(follower.bytes_read() == 0u);

  file.Append("one\ntwo\n");
  poll = MustPoll(&follower);
  CHECK(poll.exists);
  CHECK(poll.new_bytes == 8u);
  CHECK(follower.bytes_read() == 8u);
  CHECK(follower.bytes_seen() == 8u);

  poll = MustPoll(&follower);  // nothing new: nothing read
  CHECK(poll.new_bytes == 0u);
  CHECK(follower.bytes_read() == 8u);

  file.Append("three\nfour\nhang ");
  MustPoll(&follower);
  CHECK(follower.scanner().first_match() == nullptr);
  file.Append("DETECTED now\n");
  MustPoll(&follower);
  CHECK(follower.bytes_read() == 37u);
  CHECK(follower.offset() == 37u);
  REQUIRE(follower.scanner().first_match() != nullptr);
  CHECK(follower.scanner().first_match()->line == "hang DETECTED now");
  CHECK(follower.Tail() == std::vector<std::string>{"three", "four", "hang DETECTED now"});
}

TEST_CASE("LogFollower restarts from 0 when the file shrinks", "[log]") {
  TempFile file;
  LogFollower follower(file.path(), {"marker"});
  file.Append(std::string(1000, 'x') + "\n");
  MustPoll(&follower);
  CHECK(follower.offset() == 1001u);

  file.Truncate(0);
  file.Append("fresh marker line\n");
  LogPoll poll = MustPoll(&follower);
  CHECK(poll.restarted);
  CHECK_THAT(poll.note, Catch::Contains("shrank from 1001 to 18 bytes"));
  CHECK_THAT(poll.note, Catch::Contains(file.path()));
  CHECK(follower.restarts() == 1);
  CHECK(follower.offset() == 18u);
  CHECK(follower.bytes_read() == 1019u);
  REQUIRE(follower.scanner().first_match() != nullptr);
  CHECK(follower.scanner().first_match()->line == "fresh marker line");
  CHECK(follower.Tail() == std::vector<std::string>{"fresh marker line"});
}

TEST_CASE("LogFollower follows a file replaced under the same path", "[log]") {
  TempFile file;
  LogFollower follower(file.path(), {"second"});
  file.Append("first file, long enough to be longer than the next one\n");
  MustPoll(&follower);
  file.Replace("second file\nmore\n");
  LogPoll poll = MustPoll(&follower);
  CHECK(poll.restarted);
  CHECK_THAT(poll.note, Catch::Contains("replaced"));
  CHECK(follower.offset() == 17u);
  REQUIRE(follower.scanner().first_match() != nullptr);
  CHECK(follower.scanner().first_match()->line == "second file");
}

TEST_CASE("LogFollower keeps the last lines, also across reads and without a final newline",
          "[log]") {
  TempFile file;
  LogFollower follower(file.path(), {}, 4);
  std::string text;
  for (int i = 1; i <= 100; ++i) text += "line " + std::to_string(i) + "\r\n";
  file.Append(text);
  MustPoll(&follower);
  CHECK(follower.Tail() == std::vector<std::string>{"line 97", "line 98", "line 99", "line 100"});
  file.Append("line 101\nline 1");
  MustPoll(&follower);
  file.Append("02 partial");
  MustPoll(&follower);
  CHECK(follower.Tail() ==
        std::vector<std::string>{"line 99", "line 100", "line 101", "line 102 partial"});
}

TEST_CASE("LogFollower reports a path it cannot follow", "[log]") {
  char tmpl[] = "/tmp/trtllm_run_log_dir_XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  LogFollower on_dir(tmpl, {"x"});
  Result<LogPoll> poll = on_dir.Poll();
  ::rmdir(tmpl);
  REQUIRE_FALSE(poll.ok());
  CHECK(poll.status().code() == StatusCode::kIoError);
  CHECK_THAT(poll.status().message(), Catch::Contains(tmpl));
  CHECK_THAT(poll.status().message(), Catch::Contains("not a regular file"));

  // A path whose parent is a regular file: stat(2) fails (ENOTDIR), which is no "not
  // written yet". Fails for root too, unlike a file without read permission.
  TempFile file;
  file.Append("a file, not a directory\n");
  LogFollower under_file(file.path() + "/job.log", {"x"});
  Result<LogPoll> not_dir = under_file.Poll();
  REQUIRE_FALSE(not_dir.ok());
  CHECK(not_dir.status().code() == StatusCode::kIoError);
  CHECK_THAT(not_dir.status().message(),
             Catch::Contains("cannot stat log file " + file.path() + "/job.log"));
  CHECK_THAT(not_dir.status().message(), Catch::Contains("Not a directory"));

  // A path that exists but cannot be opened, for root too: a UNIX socket (open(2) fails
  // with ENXIO).
  std::string socket_path = tmpl + std::string("_sock");
  int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(sock >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  REQUIRE(socket_path.size() < sizeof(address.sun_path));
  std::copy(socket_path.begin(), socket_path.end(), address.sun_path);
  REQUIRE(::bind(sock, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  LogFollower on_socket(socket_path, {"x"});
  Result<LogPoll> unopenable = on_socket.Poll();
  ::close(sock);
  ::unlink(socket_path.c_str());
  REQUIRE_FALSE(unopenable.ok());
  CHECK(unopenable.status().code() == StatusCode::kIoError);
  CHECK_THAT(unopenable.status().message(), Catch::Contains("cannot open log file " + socket_path));

  if (::geteuid() != 0) {  // root may read any file
    TempFile secret;
    secret.Append("secret\n");
    REQUIRE(::chmod(secret.path().c_str(), 0) == 0);
    LogFollower follower(secret.path(), {"x"});
    Result<LogPoll> denied = follower.Poll();
    REQUIRE_FALSE(denied.ok());
    CHECK(denied.status().code() == StatusCode::kIoError);
    CHECK_THAT(denied.status().message(), Catch::Contains(secret.path()));
  }
}

// The acceptance test: a writer appends >= 100 MB while the follower polls. The follower
// must read each byte about once (no re-reading from the start) and find the pattern
// that only appears at the very end.
TEST_CASE("LogFollower follows a 100 MB log reading each byte once", "[log][slow]") {
  TempFile file;
  const std::size_t kTotal = 100u << 20;
  std::string block;
  int line_no = 0;
  while (block.size() < (1u << 20)) {
    block += "[rank 0] iteration " + std::to_string(line_no++) +
             " loss 1.2345 throughput 987.6 tokens/s hang-free detected=no\n";
  }
  const std::string final_line = "[watchdog] Hang Detected: rank 3 stuck in NCCL allreduce\n";

  std::atomic<bool> done{false};
  std::atomic<bool> write_failed{false};
  std::atomic<std::uint64_t> written{0};
  // Catch2 assertions are not thread-safe: the writer only sets flags.
  auto write_all = [&](int fd, const char* data, std::size_t n) {
    if (::write(fd, data, n) != static_cast<ssize_t>(n)) write_failed = true;
  };
  std::thread writer([&] {
    int fd = ::open(file.path().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) {
      write_failed = true;
      done = true;
      return;
    }
    std::size_t total = 0;
    std::size_t piece = 0;
    while (total < kTotal) {
      // Uneven chunk sizes so that lines and the pattern straddle poll boundaries.
      std::size_t n = std::min(block.size(), 65536 + (piece++ * 7919) % 200000);
      write_all(fd, block.data(), n);
      total += n;
      written = total;
    }
    write_all(fd, "\n", 1);  // the chunks above may end mid-line
    total += 1;
    // The pattern arrives in two writes.
    std::size_t half = final_line.size() / 2 + 3;
    write_all(fd, final_line.data(), half);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    write_all(fd, final_line.data() + half, final_line.size() - half);
    written = total + final_line.size();
    ::close(fd);
    done = true;
  });

  LogFollower follower(file.path(), {"hang detected", "out of memory"}, 20);
  auto start = std::chrono::steady_clock::now();
  int polls = 0;
  while (true) {
    bool finished = done.load();
    Result<LogPoll> poll = follower.Poll();
    REQUIRE(poll.ok());
    ++polls;
    if (finished && (write_failed || follower.offset() == written.load())) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(std::chrono::steady_clock::now() - start < std::chrono::seconds(60));
  }
  writer.join();
  REQUIRE_FALSE(write_failed);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  struct stat st;
  REQUIRE(::stat(file.path().c_str(), &st) == 0);
  const std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
  INFO("size " << size << " bytes_read " << follower.bytes_read() << " polls " << polls
               << " seconds " << seconds);
  CHECK(size >= kTotal);
  CHECK(follower.bytes_read() <= size + 64 * 1024);
  CHECK(follower.bytes_read() == size);  // exactly once, in fact
  CHECK(polls > 1);                      // it really ran concurrently with the writer
  const PatternMatch* hang = follower.scanner().FindMatch(0);
  REQUIRE(hang != nullptr);
  CHECK(hang->offset == size - final_line.size() + final_line.find("Hang Detected"));
  CHECK(hang->line == "[watchdog] Hang Detected: rank 3 stuck in NCCL allreduce");
  CHECK(follower.scanner().FindMatch(1) == nullptr);
  CHECK(follower.Tail().back() == hang->line);
  CHECK(follower.Tail().size() == 20u);
  CHECK(seconds < 20);
}

}  // namespace
}  // namespace trtllm_run
