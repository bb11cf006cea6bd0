#include "actors/env_service_state.hpp"

#include "actors/verdicts.hpp"

namespace leap::actors::env_service_detail {

void service_state::check(msg::check_call& call, check_promise rp) {
  auto t = tasks->find(call.task);
  if (t == tasks->end()) {
    rp.deliver(refusal<msg::check_answer>(msg::serve_status::not_found,
                                          "unknown task '" + call.task + "' (field task)"));
    return;
  }
  if (!call.s.has_code && !call.reference) {
    auto v = no_code_verdict(call.task, opts.backend, call.s.no_code_reason);
    record_verdict(v);
    msg::check_answer a;
    a.status = msg::serve_status::ok;
    a.v = std::move(v);
    rp.deliver(std::move(a));
    return;
  }
  if (busy()) {
    rp.deliver(refusal<msg::check_answer>(msg::serve_status::busy, busy_text()));
    return;
  }
  algo::rollout_config one;
  one.group_size = 1;
  one.max_turns = 1;
  driven_group_options go;
  go.dump_inputs = call.dump_inputs;
  go.candidate_is_reference = call.reference;
  auto id = next_id++;
  checks.emplace(id, rp);
  driver->open(id, one, t->second, go);
  auto& r = driver->rollout(id);
  (void)r.start(); // one generate action: the call's code is the sample
  auto code = call.reference ? t->second.reference_source : std::move(call.s.code);
  driver->perform(id, r.sampled(0, std::move(code), 0));
}

bool service_state::finish_check(std::uint64_t id, const env::verdict& v,
                                 const msg::exec_reply* run) {
  auto c = checks.find(id);
  if (c == checks.end())
    return false;
  msg::check_answer ans;
  ans.status = msg::serve_status::ok;
  ans.v = v;
  if (run) {
    ans.kept_dir = run->kept_dir;
    ans.seed = run->seed;
  }
  c->second.deliver(std::move(ans));
  checks.erase(c);
  driver->close(id);
  return true;
}

bool service_state::drop_check(std::uint64_t id, const std::string& why) {
  auto c = checks.find(id);
  if (c == checks.end())
    return false;
  c->second.deliver(refusal<msg::check_answer>(msg::serve_status::failed, why));
  checks.erase(c);
  driver->close(id);
  return true;
}

} // namespace leap::actors::env_service_detail
