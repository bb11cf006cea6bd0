#include "actors/verdicts.hpp"

#include "env/feedback.hpp"

namespace leap::actors {

std::optional<env::verdict> verdict_from_build(const msg::compile_reply& c, const env::task_spec& task,
                                               env::backend backend) {
  env::verdict v;
  v.task = task.name;
  v.backend = backend;
  v.compile_seconds = c.seconds;
  v.compile_stages = c.stages;
  v.cached = c.cached;
  v.diagnostics = c.diagnostics;
  v.reason = c.stage;
  using env::build_status;
  if (c.status == build_status::compile_error) {
    v.st = env::status::compile_error;
  } else if (c.status == build_status::rejected) {
    v.st = env::status::rejected;
  } else if (c.status == build_status::emulation_unsupported) {
    v.st = env::status::rejected;
    v.reason = "emulation_unsupported";
    v.emulation_unsupported = true;
    v.diagnostics = "not evaluated: " + c.diagnostics
                    + "\n(a limitation of leap's CPU backend, not an error in the code)";
  } else if (c.status == build_status::timeout) {
    v.st = env::status::timeout;
    v.reason = "compile_timeout";
  } else {
    return std::nullopt;
  }
  v.feedback = env::make_feedback(v, task);
  return v;
}

result<env::verdict> verdict_of(const msg::compile_reply& build, const env::verdict* run,
                                const env::task_spec& task, env::backend backend) {
  if (build.status != env::build_status::ok) {
    if (auto v = verdict_from_build(build, task, backend))
      return std::move(*v);
    return make_error("compiling '" + task.name + "' gave no verdict ("
                      + env::to_string(build.status) + "): " + build.diagnostics);
  }
  if (!run)
    return make_error("'" + task.name + "' built but was not run: no verdict");
  env::verdict v = *run;
  v.compile_seconds = build.seconds;
  v.compile_stages = build.stages;
  v.cached = build.cached;
  return v;
}

env::verdict no_code_verdict(const std::string& task, env::backend backend,
                             const std::string& reason) {
  env::verdict v;
  v.task = task;
  v.backend = backend;
  v.st = env::status::rejected;
  v.reason = "no_code";
  v.diagnostics = reason;
  v.feedback = "rejected: " + reason;
  return v;
}

algo::turn_judgement judgement_of(const env::verdict& v) {
  algo::turn_judgement j;
  j.verdict = v.emulation_unsupported ? algo::turn_verdict::unsupported
              : v.st == env::status::correct ? algo::turn_verdict::correct
                                             : algo::turn_verdict::failed;
  j.feedback = v.feedback;
  j.timed = v.timed;
  j.speedup = v.speedup;
  return j;
}

} // namespace leap::actors
