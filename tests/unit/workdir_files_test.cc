// OpenBeneath, the one way a work dir's files are opened (model/workdir_files.h): both of
// its resolutions (openat2 where the kernel has it, the O_NOFOLLOW component walk) refuse
// a symlink in any component, "..", FIFOs and devices; reads are bounded; --tail's
// backwards scan finds lines without reading the file.
#include "model/workdir_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "model/dir_util.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

struct Scratch {
  std::string path;
  Scratch() {
    char pattern[] = "/tmp/trtllm_workdir_files_XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~Scratch() {
    std::error_code error;
    fs::remove_all(path, error);
  }
};

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string ReadFd(int fd) {
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, n);
  ::close(fd);
  return text;
}

// dir/sub/real.log (inside), outside/secret.log, and links: dir/link.log -> the secret,
// dir/out -> outside (absolute), dir/inner -> sub (relative, stays inside the dir),
// dir/zero.log -> /dev/zero, dir/fifo.log a FIFO.
struct Tree {
  Scratch scratch;
  std::string dir, outside;
  Tree() {
    dir = scratch.path + "/work";
    outside = scratch.path + "/outside";
    fs::create_directories(dir + "/sub");
    fs::create_directories(outside);
    Write(dir + "/sub/real.log", "inside\n");
    Write(outside + "/secret.log", "SECRET\n");
    Write(outside + "/real.log", "SECRET\n");
    fs::create_symlink(outside + "/secret.log", dir + "/link.log");
    fs::create_symlink(outside, dir + "/out");
    fs::create_symlink("sub", dir + "/inner");
    fs::create_symlink("/dev/zero", dir + "/zero.log");
    REQUIRE(::mkfifo((dir + "/fifo.log").c_str(), 0644) == 0);
  }
};

Result<int> Open(const Tree& tree, const std::string& relative, BeneathResolve how,
                 int flags = O_RDONLY) {
  int dir_fd = ::open(tree.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(dir_fd >= 0);
  Result<int> fd = OpenBeneath(dir_fd, relative, flags, 0644, tree.dir + "/" + relative, how);
  ::close(dir_fd);
  return fd;
}

}  // namespace

TEST_CASE("OpenBeneath: no symlink in any component, nothing out of the dir, regular files only",
          "[workdir_files]") {
  Tree tree;
  for (BeneathResolve how : {BeneathResolve::kAuto, BeneathResolve::kComponentWalk}) {
    INFO((how == BeneathResolve::kAuto ? "openat2 (or its fallback)" : "component walk"));
    Result<int> real = Open(tree, "sub/real.log", how);
    REQUIRE(real.ok());
    CHECK(ReadFd(real.value()) == "inside\n");
    Result<int> dotted = Open(tree, "./sub//real.log", how);
    REQUIRE(dotted.ok());
    ::close(dotted.value());

    struct Refused {
      const char* relative;
      const char* why;
    };
    for (const Refused& r : {
             Refused{"link.log", "the last component a symlink (O_NOFOLLOW)"},
             Refused{"out/secret.log", "a directory component a symlink out"},
             Refused{"inner/real.log", "a directory component a symlink that stays inside"},
             Refused{"../outside/secret.log", "a path up and out (RESOLVE_BENEATH)"},
             Refused{"sub/../../outside/secret.log", "up and out through a real directory"},
             Refused{"zero.log", "a symlink to /dev/zero"},
             Refused{"fifo.log", "a FIFO (must not block)"},
             Refused{"sub", "a directory"},
         }) {
      INFO(r.relative << ": " << r.why);
      auto began = std::chrono::steady_clock::now();
      Result<int> fd = Open(tree, r.relative, how);
      CHECK(std::chrono::steady_clock::now() - began < std::chrono::seconds(2));
      CHECK_FALSE(fd.ok());
      if (fd.ok()) {
        CHECK(ReadFd(fd.value()).find("SECRET") == std::string::npos);
      } else {
        CHECK(fd.status().code() == StatusCode::kInvalidInput);
        CHECK_THAT(fd.status().message(), Catch::Contains(r.relative));
      }
    }
    CHECK(Open(tree, "missing.log", how).status().code() == StatusCode::kNotFound);
  }
}

TEST_CASE("OpenBeneath: appends neither through a symlink nor into a FIFO", "[workdir_files]") {
  Tree tree;
  for (BeneathResolve how : {BeneathResolve::kAuto, BeneathResolve::kComponentWalk}) {
    for (const char* relative : {"link.log", "out/secret.log", "inner/new.log", "fifo.log"}) {
      INFO(relative);
      Result<int> fd = Open(tree, relative, how, O_WRONLY | O_APPEND | O_CREAT);
      CHECK_FALSE(fd.ok());
      if (fd.ok()) ::close(fd.value());
    }
  }
  CHECK_FALSE(OpenForAppend(tree.dir + "/link.log").ok());
  CHECK(ReadFd(::open((tree.outside + "/secret.log").c_str(), O_RDONLY)) == "SECRET\n");
  Result<int> fresh = OpenForAppend(tree.dir + "/sub/new.log");
  REQUIRE(fresh.ok());
  CHECK(::write(fresh.value(), "x\n", 2) == 2);
  ::close(fresh.value());
  Result<int> again = OpenForAppend(tree.dir + "/sub/new.log");
  REQUIRE(again.ok());
  CHECK(::write(again.value(), "y\n", 2) == 2);
  ::close(again.value());
  CHECK(ReadFileInDir(tree.dir, "sub/new.log").value() == "x\ny\n");
}

TEST_CASE("ReadFileInDir and ReadWorkDirFile: bounded, naming the file and the cap",
          "[workdir_files]") {
  Tree tree;
  Write(tree.dir + "/big.json", std::string(5000, 'x'));
  Result<std::string> big = ReadFileInDir(tree.dir, "big.json", 4096);
  REQUIRE_FALSE(big.ok());
  CHECK_THAT(big.status().message(), Catch::Contains("big.json") && Catch::Contains("4096"));
  CHECK(ReadFileInDir(tree.dir, "big.json", 5000).value().size() == 5000);
  Result<std::string> zero = ReadWorkDirFile(tree.dir + "/zero.log");
  REQUIRE_FALSE(zero.ok());
  CHECK_THAT(zero.status().message(), Catch::Contains("symbolic link"));
  CHECK_FALSE(ReadWorkDirFile(tree.dir + "/link.log").ok());
  CHECK_FALSE(ReadWorkDirFile(tree.dir + "/fifo.log").ok());
  CHECK(ReadWorkDirFile(tree.dir + "/sub/real.log").value() == "inside\n");
  // OpenWorkDirFile: a log path inside the dir, but reached through a symlinked directory.
  CHECK_FALSE(OpenWorkDirFile(tree.dir, tree.dir + "/inner/real.log").ok());
  CHECK_FALSE(OpenWorkDirFile(tree.dir, "link.log").ok());
  Result<int> log = OpenWorkDirFile(tree.dir, "sub/real.log");
  REQUIRE(log.ok());
  CHECK(ReadFd(log.value()) == "inside\n");
}

TEST_CASE("TailStart: the last N lines found from the end, never more than the cap",
          "[workdir_files]") {
  Scratch scratch;
  const std::string path = scratch.path + "/log";
  auto start_of = [&](const std::string& text, std::size_t lines, std::uint64_t cap) {
    Write(path, text);
    int fd = ::open(path.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    std::uint64_t size = 0;
    std::uint64_t start = TailStart(fd, lines, cap, &size);
    ::close(fd);
    CHECK(size == text.size());
    return text.substr(static_cast<std::size_t>(start));
  };
  CHECK(start_of("a\nb\nc\n", 2, 1 << 20) == "b\nc\n");
  CHECK(start_of("a\nb\nc", 2, 1 << 20) == "b\nc");
  CHECK(start_of("a\nb\nc\n", 5, 1 << 20) == "a\nb\nc\n");
  CHECK(start_of("a\nb\nc\n", 0, 1 << 20) == "");
  CHECK(start_of("", 3, 1 << 20) == "");
  CHECK(start_of("\n\n\n", 2, 1 << 20) == "\n\n");
  // Lines across the 64 KiB chunks it reads backwards.
  std::string long_line(70000, 'x');
  CHECK(start_of("first\n" + long_line + "\nlast\n", 2, 1 << 20) == long_line + "\nlast\n");
  // No newline within the cap: the cap's worth before the end.
  CHECK(start_of(std::string(100000, 'z'), 3, 1000) == std::string(1000, 'z'));
}

}  // namespace trtllm_run
