// OutputPump: output to a sink that fails is reported, once per sink, and the other sink
// still gets it.
#include "trtllm_run/sdk/supervise/output_pump.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  return all;
}

TEST_CASE("OutputPump: a full log file is reported, the terminal still gets the output",
          "[output_pump]") {
  std::ostringstream terminal;
  OutputPump pump("/dev/full", &terminal);
  REQUIRE(pump.Open().ok());
  CHECK_FALSE(pump.Write("one\n"));
  CHECK_FALSE(pump.Write("two\n"));
  CHECK(terminal.str() == "one\ntwo\n");
  REQUIRE(pump.errors().size() == 1);  // once, not per write
  CHECK_THAT(pump.errors()[0], Catch::Contains("writing the log file /dev/full failed"));
  CHECK_THAT(pump.errors()[0], Catch::Contains("No space left on device"));
  CHECK(pump.log_bytes_written() == 0);
}

TEST_CASE("OutputPump: a terminal that fails is reported, the log still gets the output",
          "[output_pump]") {
  char path[] = "/tmp/output_pump_test_XXXXXX";
  int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  std::ofstream full("/dev/full");
  {
    OutputPump pump(path, &full);
    REQUIRE(pump.Open().ok());
    ProcessOptions options;
    options.argv = {"bash", "-c", "echo from the child; echo again"};
    Result<std::unique_ptr<ChildProcess>> child = ChildProcess::Spawn(options);
    REQUIRE(child.ok());
    (*child)->Wait();
    while (pump.Drain(child->get()) != ReadState::kEof) {
    }
    CHECK(pump.log_bytes_written() == 21);
    INFO(JoinLines(pump.errors()));
    REQUIRE(pump.errors().size() == 1);
    CHECK_THAT(pump.errors()[0],
               Catch::Contains("writing the job's output to the terminal failed"));
    CHECK_THAT(pump.errors()[0], Catch::Contains(std::string("only in the log file ") + path));
  }
  Result<std::string> log = ReadFile(path);
  ::unlink(path);
  REQUIRE(log.ok());
  CHECK(log.value() == "from the child\nagain\n");
}

TEST_CASE("OutputPump: an unopened log is an error, not a silent drop", "[output_pump]") {
  OutputPump pump("/nonexistent-dir/x.log", nullptr);
  Status opened = pump.Open();
  CHECK(opened.code() == StatusCode::kIoError);
  CHECK_THAT(opened.message(), Catch::Contains("/nonexistent-dir/x.log"));
  CHECK_FALSE(pump.Write("lost?\n"));
  REQUIRE(pump.errors().size() == 1);
  CHECK_THAT(pump.errors()[0], Catch::Contains("it is not open"));
}

}  // namespace
}  // namespace trtllm_run
