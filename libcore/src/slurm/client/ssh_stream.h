// The output stream of a remote SlurmClient over an SSH master connection. Private to
// libcore: SshScenario is not part of the plugin SDK.
#ifndef TRTLLM_RUN_SLURM_CLIENT_SSH_STREAM_H_
#define TRTLLM_RUN_SLURM_CLIENT_SSH_STREAM_H_

#include "trtllm_run/export.h"
#include "trtllm_run/sdk/slurm/file_follow_stream.h"

namespace trtllm_run {

class SshScenario;

// A StreamStarter running the command over `ssh`'s master connection (started first when
// down), ssh's own stderr discarded so that only the command's stdout reaches the pipe.
TRTLLM_RUN_API StreamStarter StreamOverSsh(SshScenario* ssh);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SLURM_CLIENT_SSH_STREAM_H_
