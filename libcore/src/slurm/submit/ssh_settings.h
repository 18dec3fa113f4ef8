// The SSH connection a remote_slurm job spec records, and the check that a command the
// person did not start with it (status, cancel, describe) may use it. Private to libcore:
// SshOptions is not part of the plugin SDK (sdk/slurm/submit.h has the rest of the run
// library).
#ifndef TRTLLM_RUN_SLURM_SUBMIT_SSH_SETTINGS_H_
#define TRTLLM_RUN_SLURM_SUBMIT_SSH_SETTINGS_H_

#include <string>

#include "os/ssh.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// The SSH options of a remote_slurm job spec: destination ssh_host (slurm_user when the
// destination names no user), ssh_config_file from `extra`, the password from
// $TRTLLM_RUN_SLURM_PASSWORD or the file named by $TRTLLM_RUN_SLURM_PASSWORD_FILE.
Result<SshOptions> SshOptionsForSpec(const JobSpec& spec);

// OK when the SSH settings a work dir's job_spec.json records may be used by a command the
// person did not start with them (status, cancel): a work dir may come from someone else.
// The destination is no option, every ssh option passes the filter an agent's options
// pass (CheckUntrustedSshOption), and the ssh_config_file is a regular file owned by the
// caller or root and writable by nobody else. `hint` is the refusal's hint.
Status CheckRecordedSshSettings(const SshOptions& options, const JobSpec& spec,
                                const std::string& hint);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SLURM_SUBMIT_SSH_SETTINGS_H_
