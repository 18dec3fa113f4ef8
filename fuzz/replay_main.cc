// main() for the fuzz_replay_<name> programs: runs LLVMFuzzerTestOneInput once on every
// file named on the command line, and on every regular file (sorted, recursively) in
// every directory named. Exits 1 when no input was found, so a lost corpus is noticed.
// A crash or a failed FUZZ_CHECK aborts with the input's path printed before it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

bool RunFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz replay: cannot read %s\n", path.c_str());
    return false;
  }
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::fprintf(stderr, "fuzz replay: %s (%zu bytes)\n", path.c_str(), data.size());
  // A copy of exactly `size` bytes, so that ASan catches reads past the input's end.
  std::vector<std::uint8_t> copy(data.begin(), data.end());
  LLVMFuzzerTestOneInput(copy.data(), copy.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::recursive_directory_iterator(arg, ec)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      if (ec) {
        std::fprintf(stderr, "fuzz replay: cannot list %s: %s\n", argv[i], ec.message().c_str());
        return 1;
      }
      std::sort(files.begin(), files.end());
      for (const fs::path& file : files) {
        if (!RunFile(file)) return 1;
        ++inputs;
      }
    } else {
      if (!RunFile(arg)) return 1;
      ++inputs;
    }
  }
  if (inputs == 0) {
    std::fprintf(stderr, "fuzz replay: no inputs; usage: %s FILE_OR_DIR...\n", argv[0]);
    return 1;
  }
  std::printf("fuzz replay: %zu inputs, no failure\n", inputs);
  return 0;
}
