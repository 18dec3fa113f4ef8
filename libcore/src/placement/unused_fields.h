// Case fields that only some executors read: given to one that does not, they would be
// dropped without a word (an sbatch user's `-p batch -t 30m` on a run that routing sent
// to this host). UnusedFieldsError refuses them, naming the executors that read them.
#ifndef TRTLLM_RUN_PLACEMENT_UNUSED_FIELDS_H_
#define TRTLLM_RUN_PLACEMENT_UNUSED_FIELDS_H_

#include <string>
#include <vector>

#include "placement/routing.h"
#include "trtllm_run/request.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// kInvalidInput naming every field of `given` (flags and request file only: a config
// file's values are defaults for every scenario and never refused) that the executor
// `scenario` (traits `traits`) does not read, with the loaded `executors` that do;
// Ok when there is none. The fields: the Slurm ones (partition, account, time_limit,
// max_pending, alloc_time_limit, persistent_mode, release_allocation, slurm_env_file)
// need the slurm trait; the remote checkout's (remote_cwd, remote_repo_path, repo_url,
// repo_branch, extra_files) the remote trait; container_image and llm_models_root the
// container trait; docker_memory and docker_pull the executor local_docker.
Status UnusedFieldsError(const CaseRequest& given, const std::string& scenario,
                         const ExecutorTraits& traits,
                         const std::vector<RoutingCandidate>& executors);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_PLACEMENT_UNUSED_FIELDS_H_
