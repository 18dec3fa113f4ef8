#include <poll.h>
#include <signal.h>

#include <catch2/catch.hpp>

#include "trtllm_run/cancel.h"
#include "trtllm_run/sdk/scenario.h"

using namespace trtllm_run;

namespace {
bool Readable(int fd) {
  struct pollfd entry = {fd, POLLIN, 0};
  return ::poll(&entry, 1, 0) == 1;
}
}  // namespace

TEST_CASE("a cancellation token wakes poll() and keeps the first signal", "[cancel]") {
  CancellationToken token;
  CHECK_FALSE(token.cancelled());
  CHECK_FALSE(Readable(token.wait_fd()));
  token.Cancel(SIGTERM);
  token.Cancel(SIGINT);
  CHECK(token.cancelled());
  CHECK(token.signal() == SIGTERM);
  CHECK(Readable(token.wait_fd()));
}

TEST_CASE("signals cancel the token only while the guard lives", "[cancel]") {
  CancellationToken token;
  struct sigaction before {};
  ::sigaction(SIGUSR1, nullptr, &before);
  {
    ScopedSignalCancellation guard(&token, {SIGUSR1});
    ::raise(SIGUSR1);
    CHECK(token.cancelled());
    CHECK(token.signal() == SIGUSR1);
  }
  struct sigaction after {};
  ::sigaction(SIGUSR1, nullptr, &after);
  CHECK(after.sa_handler == before.sa_handler);
}

TEST_CASE("the local scenario runs commands and captures their output", "[scenario]") {
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  CHECK(local->Name() == "local");
  CHECK_FALSE(local->IsRemote());

  Result<CommandOutput> out =
      local->Run({"bash", "-c", "read line; echo \"got $line\"; echo oops >&2; exit 7"}, "hi\n");
  REQUIRE(out.ok());
  CHECK(out->stdout_text == "got hi\n");
  CHECK(out->stderr_text == "oops\n");
  CHECK(out->exit_code == 7);

  Result<CommandOutput> killed = local->Run({"bash", "-c", "kill -TERM $$"}, "");
  REQUIRE(killed.ok());
  CHECK(killed->signal == SIGTERM);

  // A child that never reads a large stdin must not take the caller down with SIGPIPE.
  Result<CommandOutput> ignores = local->Run({"true"}, std::string(4 << 20, 'x'));
  REQUIRE(ignores.ok());
  CHECK(ignores->exit_code == 0);

  // Output larger than a pipe buffer on both streams at once does not deadlock.
  Result<CommandOutput> big =
      local->Run({"bash", "-c", "head -c 300000 /dev/zero; head -c 300000 /dev/zero >&2"}, "");
  REQUIRE(big.ok());
  CHECK(big->stdout_text.size() == 300000);
  CHECK(big->stderr_text.size() == 300000);

  Result<CommandOutput> missing = local->Run({"no-such-command-trtllm"}, "");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("no-such-command-trtllm"));
}
