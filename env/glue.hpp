// Generated C++ that ties a task's entry signature to the generic harness: leap_invoke() casts
// the harness's untyped buffers and sizes to the task's parameter list and calls solution().
// Also the declaration appended to every candidate so a wrong parameter list is a compile
// error instead of undefined behaviour at run time. Pure, thread-safe.
#pragma once

#include "env/task.hpp"

#include <string>

namespace leap::env {

std::string make_glue_source(const task_spec& task);
// Text appended after the candidate's last line (line numbers of the candidate are unchanged).
std::string signature_check_suffix(const task_spec& task);
// The job file the harness reads (see env/harness/protocol.hpp).
std::string make_job_text(const task_spec& task, unsigned long long seed, int trials, bool timing,
                          bool dump_inputs, int warmup, int timing_runs, long long l2_flush_mb,
                          bool repeat = false);

} // namespace leap::env
