// LocalScenario: runs commands on this host with Boost.Process v2, feeding stdin and
// capturing stdout and stderr concurrently (asio), so no pipe can fill up and deadlock.
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/asio/write.hpp>
#include <boost/process/v2/environment.hpp>
#include <boost/process/v2/posix/default_launcher.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/stdio.hpp>

#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/scenario.h"

namespace trtllm_run {

namespace {

namespace asio = boost::asio;
namespace bp2 = boost::process::v2;

class LocalScenario : public Scenario {
 public:
  std::string Name() const override { return "local"; }
  bool IsRemote() const override { return false; }

  Result<CommandOutput> Run(const std::vector<std::string>& argv,
                            const std::string& stdin_data) override {
    if (argv.empty()) return Status::Internal("Scenario::Run called with an empty argv");
    bp2::filesystem::path executable(argv[0]);
    if (argv[0].find('/') == std::string::npos) {
      executable = bp2::environment::find_executable(argv[0]);
      if (executable.empty()) {
        return Status::NotFound("command not found: " + argv[0],
                                "install it or add its directory to PATH");
      }
    }
    std::vector<std::string> args(argv.begin() + 1, argv.end());

    asio::io_context context;
    asio::writable_pipe in(context);
    asio::readable_pipe out(context);
    asio::readable_pipe err(context);
    // The inherited environment without trtllm-run's secrets: sbatch exports its own
    // environment into the job by default, and docker or srun pass theirs on too.
    std::vector<std::string> env = ChildEnvironment({});
    std::vector<const char*> envp;
    for (const std::string& entry : env) envp.push_back(entry.c_str());
    envp.push_back(nullptr);
    bp2::posix::default_launcher launcher;
    launcher.env = envp.data();
    std::optional<bp2::process> process;
    try {
      process.emplace(launcher(context, executable, args, bp2::process_stdio{in, out, err}));
    } catch (const boost::system::system_error& e) {
      return Status::ExecutionError("cannot start '" + argv[0] + "': " + e.what());
    }

    // A child that exits without reading stdin makes our write fail with EPIPE; keep the
    // SIGPIPE that comes with it away from the process (the mask is set after the fork,
    // so the child does not inherit it) and discard it afterwards.
    sigset_t pipe_signal, previous_mask;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous_mask);

    CommandOutput output;
    asio::async_write(in, asio::buffer(stdin_data),
                      [&in](boost::system::error_code, std::size_t) { in.close(); });
    asio::async_read(out, asio::dynamic_buffer(output.stdout_text),
                     [](boost::system::error_code, std::size_t) {});
    asio::async_read(err, asio::dynamic_buffer(output.stderr_text),
                     [](boost::system::error_code, std::size_t) {});
    context.run();
    const struct timespec no_wait = {0, 0};
    while (sigtimedwait(&pipe_signal, nullptr, &no_wait) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);

    boost::system::error_code wait_error;
    process->wait(wait_error);
    if (wait_error) {
      return Status::ExecutionError("waiting for '" + argv[0] +
                                    "' failed: " + wait_error.message());
    }
    int native = process->native_exit_code();
    if (WIFSIGNALED(native)) {
      output.signal = WTERMSIG(native);
      output.exit_code = -1;
    } else {
      output.exit_code = WEXITSTATUS(native);
    }
    return output;
  }
};

}  // namespace

std::unique_ptr<Scenario> MakeLocalScenario() { return std::make_unique<LocalScenario>(); }

}  // namespace trtllm_run
