// Slurm time limits in the one duration syntax of every time flag: 2h, 90m, 3600s,
// HH:MM:SS, plus what sbatch itself accepts (D-HH:MM:SS, MM:SS, a bare number of
// minutes, UNLIMITED).
#ifndef TRTLLM_RUN_MODEL_SLURM_TIME_H_
#define TRTLLM_RUN_MODEL_SLURM_TIME_H_

#include <optional>
#include <string>
#include <string_view>

#include "trtllm_run/status.h"

namespace trtllm_run {

// `text` as sbatch --time reads it: a duration with a unit (2h, 90m, 30s) becomes
// HH:MM:SS, or D-HH:MM:SS from a day on; Slurm's own forms are kept as written (a bare
// number stays Slurm's minutes). kInvalidInput naming `field` and the accepted forms for
// anything else, and for a zero limit (which Slurm reads as "no limit").
Result<std::string> NormalizeSlurmTime(std::string_view text, std::string_view field);

// A Slurm time ("1-02:03:04", "02:03:04", "03:04", "5" minutes, "UNLIMITED") in seconds;
// nullopt for UNLIMITED/INFINITE/invalid text.
std::optional<int> ParseSlurmDuration(std::string_view text);

// A duration in seconds as Slurm writes it: HH:MM:SS, or D-HH:MM:SS from a day on.
std::string FormatSlurmTime(int seconds);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_MODEL_SLURM_TIME_H_
